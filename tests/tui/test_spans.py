"""Styled runs start with their text (session 1's screenshots: "Archive0", glued folder hints,
list columns out of line, because SVG renderers drop a run's leading spaces)."""

from __future__ import annotations

from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.folders import FolderView
from vaultwatch.tui.widgets.spans import separate, tidy


def runs(text: Text) -> list[tuple[str, Style | None]]:
    """(text, style) runs as a renderer sees them."""
    out: list[tuple[str, Style | None]] = []
    for seg in text.render(_console()):
        if seg.text == "\n":
            continue
        if out and out[-1][1] == seg.style:
            out[-1] = (out[-1][0] + seg.text, seg.style)
        else:
            out.append((seg.text, seg.style))
    return out


def _console():
    from rich.console import Console

    return Console(width=200, color_system=None)


def visible_runs_start_with_text(pieces: list[tuple[str, Style | None]]) -> bool:
    return all(not (piece.startswith(" ") and piece.strip()) for piece, _style in pieces)


def test_tidy_moves_spaces_out_of_styled_runs_and_keeps_the_text() -> None:
    text = Text("Archive")
    text.append(" 0", "dim")
    text.append("\n  • item ", "dim")
    text.append("more", Style(bold=True, meta={"@click": "follow(0)"}))
    before = runs(text)
    assert not visible_runs_start_with_text(before)  # the bug: " 0" and "  • item" runs
    after = tidy(text)
    assert after.plain == text.plain
    assert visible_runs_start_with_text(runs(after))
    dims = [piece for piece, style in runs(after) if style and style.dim and piece.strip()]
    assert dims == ["0", "• item"]
    assert any(style and style.meta.get("@click") == "follow(0)" for _p, style in runs(after))


def test_separate_splits_spaces_off_segments() -> None:
    base, dim = Style(color="white"), Style(color="white", dim=True)
    out = separate([Segment(" ", base), Segment(" Title  ", base), Segment("  Areas/Craft", dim)])
    assert "".join(s.text for s in out) == "  Title    Areas/Craft"
    texts = [s for s in out if s.text.strip()]
    assert [s.text for s in texts] == ["Title", "Areas/Craft"]
    assert [s.style for s in texts] == [base, dim]
    for seg in out:  # spaces never share a style with the text after them
        if not seg.text.strip():
            assert seg.style not in (base, dim)


async def test_list_rows_and_tree_labels_keep_their_spacing(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:  # narrow: folder hints follow the titles
        await settle(app)
        doclist = app.main.active_list
        hinted = 0
        for y in range(1, 12):
            strip = doclist.render_line(y)
            pieces = [(s.text, s.style) for s in strip]
            assert visible_runs_start_with_text(pieces), pieces
            row = doclist.rows[doclist.scroll_offset.y + y - 1]
            line = strip.text
            if row.folder and f"{row.title}  {row.folder[:6]}" in line:
                hinted += 1
        assert hinted >= 3
        tree = app.query_one(FolderView)
        labels = [str(node.label) for node in tree.root.children]
        assert "Inbox (4)" in labels and "Areas (14)" in labels  # (Archive holds no notes: not shown)
        assert all(visible_runs_start_with_text(runs(node.label)) for node in tree.root.children)
        await pilot.press("q")
