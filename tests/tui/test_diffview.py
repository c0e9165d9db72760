"""The diff view (tui/widgets/diffview.py) draws only what is on screen: a diff of thousands of hunks
costs one screenful, and scrolling draws the rest, line for line what rich renders whole."""

from __future__ import annotations

import os

from rich.console import Console
from textual.app import App

from vaultwatch.core.review.textdiff import text_diff
from vaultwatch.tui.widgets.diffview import DiffView, LazyLines, plain, render_diff, unified_hunk


def every_tenth(lines: int = 6000) -> tuple[bytes, bytes]:
    before = [f"line {i} of the note, with some words to diff" for i in range(lines)]
    after = [line + " x" if i % 10 == 0 else line for i, line in enumerate(before)]
    return ("\n".join(before) + "\n").encode(), ("\n".join(after) + "\n").encode()


def console(width: int) -> Console:
    return Console(width=width, file=open(os.devnull, "w"), color_system="truecolor")


def test_a_screenful_of_a_diff_with_hundreds_of_hunks_computes_only_the_hunks_it_shows():
    before, after = every_tenth()
    diff = text_diff(before, after)
    assert len(diff.hunks) == 600
    for width in (120, 200):  # unified, side by side
        doc = render_diff(before, after, width, diff=text_diff(before, after))
        view = LazyLines(doc, width, console(width))
        shown = view.lines(0, 50)
        hunks = [p.hunk for p in doc.pieces if p.hunk is not None]
        computed = [h for h in hunks if h._lines is not None]
        assert 1 <= len(computed) <= 10, len(computed)
        assert "@@ -1,4 +1,4 @@" in shown[1].text or "@@ -1,4 +1,4 @@" in shown[2].text
        assert any("line 0 of the note" in s.text for s in shown)
        last = view.lines(view.height - 10, 10)
        assert any("line 5990 of the note" in s.text for s in last)


def test_drawn_line_by_line_the_diff_reads_as_rich_renders_it_whole():
    before = b"# Note\nalpha beta gamma\nunchanged\n" + b"same\n" * 20 + b"tail one\n"
    after = b"# Note\nalpha BETA gamma\nunchanged\n" + b"same\n" * 20 + b"tail two\nadded\n"
    for width in (100, 180):
        doc = render_diff(before, after, width)
        view = LazyLines(doc, width, console(width))
        drawn = "\n".join(s.text.rstrip() for s in view.lines(0, view.height)).strip()
        assert drawn == "\n".join(line.rstrip() for line in plain(doc, width).splitlines()).strip()
        assert "BETA" in drawn and "tail two" in drawn and "+3 -2 lines in 2 hunks" in drawn


async def test_the_widget_scrolls_through_a_long_diff():
    before, after = every_tenth(3000)

    class One(App):
        def compose(self):
            yield DiffView()

    app = One()
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(DiffView)
        view.show(render_diff(before, after, 120))
        await pilot.pause()
        assert "line 0 of the note" in view.visible_text()
        assert view.virtual_size.height > 2000
        view.scroll_end(animate=False)
        await pilot.pause()
        await pilot.pause()
        assert "line 2990 of the note" in view.visible_text()


def test_changed_words_are_marked_inside_changed_lines_and_wide_views_are_side_by_side():
    """Issue 18's diff: word-level inside changed lines (only the changed word in the strong colour),
    unified at 120 columns, the old and new line on one row at 200."""
    from vaultwatch.tui.widgets.diffview import ADDED_WORD, REMOVED_WORD

    before, after = b"# Note\nalpha beta gamma\nsame\n", b"# Note\nalpha BETA gamma\nsame\n"
    [hunk] = text_diff(before, after).hunks
    removed = next(line for line in hunk.lines if line.op == "-")
    added = next(line for line in hunk.lines if line.op == "+")
    assert [part for changed, part in removed.words if changed] == ["beta"]
    assert [part for changed, part in added.words if changed] == ["BETA"]
    for width, paired in ((120, False), (200, True)):  # the README: side by side from 160 columns
        doc = render_diff(before, after, width)
        rows = [s.text for s in LazyLines(doc, width, console(width)).lines(0, 40)]
        both = [r for r in rows if "alpha beta gamma" in r and "alpha BETA gamma" in r]
        assert bool(both) == paired, (width, rows)
    styled = unified_hunk(hunk)  # the strong colours sit on the changed words only
    strong = {styled.plain[sp.start : sp.end] for sp in styled.spans if str(sp.style) in (REMOVED_WORD, ADDED_WORD)}
    assert strong == {"beta", "BETA"}, strong


def test_an_escaped_diff_shows_disguising_marks_as_escapes_in_both_layouts():
    from vaultwatch.tui.widgets.diffview import SIDE_BY_SIDE_MIN, plain, render_diff

    before = b"total: 100\ncafe\xcc\x81\n"
    after = "total: 1\u0336100\ncafe\u0301\n".encode()
    for width in (100, SIDE_BY_SIDE_MIN):
        shown = plain(render_diff(before, after, width, escaped=True), width)
        assert "1\\u0336100" in shown and "\u0336" not in shown, width
        assert "cafe\u0301" in shown, width  # real text as it is
    assert "\u0336" in plain(render_diff(before, after, 100), 100)  # (the Changes view draws as before)
