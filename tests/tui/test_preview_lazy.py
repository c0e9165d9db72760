"""A preview that never blocks (issue 16, item 3): a 5,000-line note in one Static froze the
app for 9-11 s. The body is now rendered and wrapped in batches in the preview's worker and
drawn with the Line API: the first screen is shown before the rest of the note is rendered,
keys act meanwhile, and the whole note arrives in the end."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
from pathlib import Path

import pytest
from textual import events
from tui_helpers import pin_mtimes

from vaultwatch.tui.gcpolicy import BACKSTOP
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets import notebody
from vaultwatch.tui.widgets.notebody import NoteBody
from vaultwatch.tui.widgets.preview import FIRST_LINES


def long_note(lines: int) -> str:
    out = ["---", "title: Long note", "---", "# Long note"]
    for i in range(lines):
        if i % 40 == 0:
            out.append(f"## Part {i // 40}")
        elif i % 40 == 39:
            out.append(f"The end of part {i // 40} links to [[Short]] and #tag/part{i // 40}.")
        else:
            out.append(f"Line {i}: some words with `code`, **bold** text and a [[Missing note {i}]] link.")
    out.append("LAST LINE OF THE NOTE")
    return "\n".join(out) + "\n"


def vault_with_long_note(tmp_path: Path, lines: int = 5000) -> Path:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Long.md").write_text(long_note(lines))
    (root / "Short.md").write_text("A short note.\n")
    (root / "Zed.md").write_text("The last note.\n")
    return pin_mtimes(root)


def short_first(root: Path) -> Path:
    """`root` with a short note as the first row (rows go in path order), for a test that opens
    the long note itself: the app's first preview is then not the long note rendered whole (most
    of such a test's time, under load)."""
    (root / "Index.md").write_text("The first row.\n")
    return pin_mtimes(root)


def no_rests(monkeypatch) -> None:
    """The preview's worker renders without its rests (REST_S: the UI thread's turns between its
    slices), for a phase that only waits for a long note to be rendered whole: the rests were
    most of such a wait."""
    from vaultwatch.tui.widgets import preview as preview_module

    monkeypatch.setattr(preview_module, "REST_S", 0.0)


class HeldRests:
    """Between `hold()` and `release()` the preview's worker waits at its next rest: it cannot
    render further however long the checks meanwhile take. (A rest of 5 s did that too, but the
    worker then slept what was left of it after the check, before it could finish the note.)"""

    def __init__(self, monkeypatch) -> None:
        from vaultwatch.tui.widgets import preview as preview_module

        self.open = threading.Event()
        self.open.set()
        rested = preview_module._rested

        def held(worker) -> bool:
            # until released, or until the worker is cancelled (a test that failed while holding
            # it quit the app): then it goes on as it would
            while not (self.open.wait(0.05) or worker.is_cancelled):
                pass
            return rested(worker)

        monkeypatch.setattr(preview_module, "_rested", held)

    def hold(self) -> None:
        self.open.clear()

    def release(self) -> None:
        self.open.set()


async def test_a_long_note_shows_its_first_screen_before_the_rest_is_rendered(
    tmp_path: Path, app_for, monkeypatch
) -> None:
    from vaultwatch.tui.widgets import preview as preview_module

    no_rests(monkeypatch)  # until the keys' phase below the test only waits for the whole note
    app = app_for(vault_with_long_note(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        preview = app.main.preview
        body = app.query_one(NoteBody)
        assert preview.path == "Long.md"  # the first row
        assert body.complete and "LAST LINE OF THE NOTE" in body.plain  # in the end, all of it
        assert len(body.lines) > 5000
        assert app.main.preview.virtual_size.height > 5000

        app.main.open_note("Short.md")
        await settle(app)
        seen: list[tuple[int, bool]] = []  # (lines, complete) when the preview said it shows the note
        original = preview._apply

        def apply(r, keep_scroll, seq):
            original(r, keep_scroll, seq)
            if r.path == "Long.md":
                seen.append((len(body.lines), body.complete))

        preview._apply = apply
        # until the keys below have acted the worker rests 0.2 s between its 2 ms steps: on an idle
        # CI machine it rendered the whole note before the third key (scrolled_while_rendering False)
        monkeypatch.setattr(preview_module, "REST_S", 0.2)
        app.main.open_note("Long.md")
        await pilot.pause()
        while not seen:
            await pilot.pause(0.01)
        lines, complete = seen[0]
        assert not complete and FIRST_LINES <= lines < 1000  # a first screenful, not the whole note
        # ... but the scrollbar spans the whole note at once (the rest's height estimated)
        assert preview.virtual_size.height > 5000
        # while the rest renders, keys act: the preview scrolls (keys posted as a terminal sends
        # them; Pilot.press would wait for the app to be idle, i.e. for the whole note)
        app.set_focus(preview)  # at once (Widget.focus waits behind queued messages)
        for y in range(1, 4):
            app.post_message(events.Key("down", None))
            while preview.scroll_y < y and not body.complete:
                await asyncio.sleep(0.005)
        scrolled_while_rendering = preview.scroll_y == 3 and not body.complete
        no_rests(monkeypatch)  # the rest of the note, without waiting
        await settle(app, timeout=60)
        assert scrolled_while_rendering
        assert body.complete and "LAST LINE OF THE NOTE" in body.plain
        assert preview.links and preview.backlinks == ()


async def test_a_note_opened_during_a_long_render_replaces_it(tmp_path: Path, app_for) -> None:
    app = app_for(short_first(vault_with_long_note(tmp_path)))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        preview = app.main.preview
        app.main.open_note("Short.md")
        await settle(app)
        app.main.open_note("Long.md")
        while preview.path != "Long.md":
            await pilot.pause(0.01)
        app.main.open_note("Zed.md")  # the long note's later batches must not land on this one
        await settle(app)
        body = app.query_one(NoteBody)
        assert preview.path == "Zed.md" and body.plain.strip() == "The last note." and body.complete


async def test_a_huge_note_shows_at_once_and_says_what_is_left_out(tmp_path: Path, app_for, monkeypatch) -> None:
    root = tmp_path / "v"
    root.mkdir()
    line = "word " * 30 + "[[Link]]\n"
    # ~6 MB: past what the preview reads of a note (4 MB) and, in those, past the lines it renders
    # (10,000); the index takes the note whole (up to 64 MB), as it took the 50 MB this once was
    (root / "Huge.md").write_text("# Huge\n" + line * (6 * 1024 * 1024 // len(line)))
    (root / "Long line.md").write_text("x" * 3_000_000 + " END\n")  # one 3 MB line
    pin_mtimes(root)
    no_rests(monkeypatch)  # what is checked is what the preview ends with
    app = app_for(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, timeout=120)
        body = app.query_one(NoteBody)
        assert app.main.preview.path == "Huge.md"
        assert "more lines not shown: open the note in your editor" in "".join(body.plain.splitlines()[-2:])
        app.main.open_note("Long line.md")
        await settle(app, timeout=120)
        assert body.lines and "characters of this line are not shown" in body.plain
        await pilot.press("q")


@pytest.mark.long
async def test_lines_scrolled_to_ahead_of_the_worker_are_drawn(tmp_path: Path, app_for, monkeypatch) -> None:
    """A page the person scrolls to before the worker rendered it is rendered when drawn."""
    rests = HeldRests(monkeypatch)
    no_rests(monkeypatch)  # the worker is held where it matters; elsewhere it only has to get on
    app = app_for(short_first(vault_with_long_note(tmp_path, 20_000)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, timeout=120)
        preview = app.main.preview
        body = app.query_one(NoteBody)
        assert preview.path != "Long.md"
        app.main.open_note("Short.md")
        await settle(app, timeout=60)
        app.main.open_note("Long.md")
        # the first screen comes from a prefix of the note; the worker lexes the whole note
        # next (in slices) and the body takes it: only then are the later lines known
        while not (preview.path == "Long.md" and body.lines and body.doc.final):
            await pilot.pause(0.01)
        # from here until the check is done the worker is held at its next rest, so it cannot
        # have rendered that far however long the pauses below take (on an idle CI machine it
        # once had rendered the whole note before the check)
        rests.hold()
        await pilot.pause()  # the body's new height laid out
        rendered = len(body.lines)
        preview.scroll_to(y=rendered + 600, animate=False, immediate=True)  # well past what was rendered
        await pilot.pause()
        assert preview.scroll_y >= rendered + 600  # not held at the end of what was rendered

        def on_screen() -> str:
            return "\n".join(
                strip.text
                for strip in body.render_lines(
                    body.region.__class__(0, int(preview.scroll_y) - body.virtual_region.y, body.size.width, 10)
                )
            )

        # each frame renders what it draws within a budget (12 ms): under load the page fills in
        # over a few frames, so wait for it (bounded), as a person would see it appear
        for _ in range(300):
            if "Line" in on_screen():
                break
            await pilot.pause(0.05)
        assert not body.complete  # the worker did not get there: the drawing did
        assert "Line" in on_screen()  # drawn, not blank
        rests.release()
        await settle(app, timeout=120)
        assert body.complete


async def test_the_young_objects_of_a_long_render_never_pile_up_while_keys_come(tmp_path: Path, app_for) -> None:
    """The app collects garbage itself (tui.gcpolicy): while keys come, only once 100,000 young
    objects piled up, in one pass over all of them on the UI thread (30-45 ms: the slow keys of
    bench_tui's long-note step). Rendering a 5,000-line note makes most of them (its lexed lines
    and rich Texts); the preview's worker lexes and renders in slices and collects them between
    its slices, a few thousand at a time, so the pile never forms."""
    app = app_for(
        short_first(vault_with_long_note(tmp_path)), idle_gc=True
    )  # automatic collection off, as the app runs
    async with app.run_test(size=(160, 50)):
        preview, body = await from_short_note(app)
        assert app.collector.active
        app.main.open_note("Long.md")
        app.set_focus(preview)
        peak = 0
        while not (preview.path == "Long.md" and body.complete):
            app.post_message(events.Key("down", None))  # input keeps coming: no quiet collection
            for _ in range(5):
                peak = max(peak, gc.get_count()[0])
                await asyncio.sleep(0.004)
        peak = max(peak, gc.get_count()[0])
        assert peak < BACKSTOP // 2, peak  # (without the worker's collections: past 100,000)


async def test_opening_notes_rebuilds_the_footer_only_when_back_comes_or_goes(tmp_path: Path, app_for) -> None:
    """Every binding refresh rebuilds the footer (10-30 ms, and its garbage): a key pressed just
    after a long note opened waited for it. The preview refreshes the bindings only when `back`
    becomes available or stops being so."""
    app = app_for(vault_with_long_note(tmp_path, 50))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        preview = app.main.preview
        published: list[object] = []
        app.screen.bindings_updated_signal.subscribe(preview, published.append)
        for path in ("Short.md", "Zed.md", "Long.md", "Short.md"):  # each remembered for `back`
            app.main.open_note(path)
            await settle(app)
        assert len(preview.history) == 4
        assert len(published) == 1  # the first: `back` came
        app.set_focus(preview)
        await pilot.pause()
        assert app.screen.active_bindings["backspace"].enabled
        published.clear()
        for _ in range(3):
            await pilot.press("backspace")
            await settle(app)
        assert len(preview.history) == 1 and published == []
        await pilot.press("backspace")
        await settle(app)
        assert preview.history == [] and len(published) == 1  # the last: `back` went
        active = app.screen.active_bindings
        assert "backspace" not in active or not active["backspace"].enabled


def vault_with_wrapping_note(tmp_path: Path, lines: int = 3000) -> Path:
    """A long note whose lines wrap at 160 columns (the height estimate of the lines not
    rendered yet is off until they are), and two short notes."""
    root = tmp_path / "v"
    root.mkdir()
    words = " ".join(f"word{i % 13}-{'x' * (i % 9)}" for i in range(40))
    body = "\n".join(f"Line {i}: {words[: 150 + (i * 37) % 200]}" for i in range(lines))
    (root / "Long.md").write_text("# Long note\n" + body + "\nLAST LINE OF THE NOTE\n")
    (root / "Short.md").write_text("A short note.\n")
    (root / "Zed.md").write_text("The last note.\n")
    return pin_mtimes(root)


async def from_short_note(app) -> tuple:
    """The app settled with the short note previewed (a long note opened next is timed from
    there): the preview and its body."""
    await settle(app)
    app.main.open_note("Short.md")
    await settle(app)
    return app.main.preview, app.query_one(NoteBody)


def count_layouts(body: NoteBody) -> list[tuple[bool, str]]:
    """Record, for each layout the body's own code asks for (not Textual's, which follows a
    layout with one more when a size changed), whether its doc was complete then, and which of
    the body's methods asked."""
    asked: list[tuple[bool, str]] = []
    refresh = body.refresh

    def counted(*regions, layout: bool = False, **kwargs):
        caller = sys._getframe(1).f_code
        if layout and caller.co_filename == notebody.__file__:
            asked.append((body.doc.complete, caller.co_name))
        return refresh(*regions, layout=layout, **kwargs)

    body.refresh = counted  # type: ignore[method-assign]
    return asked


async def test_lines_rendered_below_the_screen_do_not_lay_the_screen_out_again(tmp_path: Path, app_for) -> None:
    """A layout redoes the whole screen's (15-30 ms at 160x50 while the worker renders): asked
    for with every batch of rendered lines, it fell on one key in five while a long note
    rendered (bench_tui: keys p95 51 ms). While the person reads the top of the note, the
    batches below only settle the height estimate: the body is laid out again when the note is
    complete."""
    app = app_for(short_first(vault_with_wrapping_note(tmp_path)))
    async with app.run_test(size=(160, 50)) as pilot:
        preview, body = await from_short_note(app)
        asked = count_layouts(body)
        app.main.open_note("Long.md")
        while not (preview.path == "Long.md" and body.lines):
            await pilot.pause(0.01)
        asked.clear()  # (the new note's first screen is laid out, as it must be)
        await settle(app, timeout=60)
        assert body.complete
        assert [why for complete, why in asked if not complete] == []  # none while rendering
        assert len(asked) <= 2  # the final height (asked by the last batch and the finish)
        assert body.virtual_size.height == len(body.lines)


async def test_a_person_near_the_laid_out_end_gets_the_rendered_lines_laid_out(
    tmp_path: Path, app_for, monkeypatch
) -> None:
    """... but when the screen comes near the end of what is laid out, the batches lay the body
    out again, so the person can scroll on into the lines rendered since."""
    from vaultwatch.tui.widgets import preview as preview_module

    app = app_for(short_first(vault_with_wrapping_note(tmp_path)))
    async with app.run_test(size=(160, 50)) as pilot:
        preview, body = await from_short_note(app)
        monkeypatch.setattr(preview_module, "REST_S", 0.05)  # rendering lasts (4 s or more)
        asked = count_layouts(body)
        app.main.open_note("Long.md")
        while not (preview.path == "Long.md" and body.lines and body.doc.final):
            await pilot.pause(0.01)
        await pilot.pause()
        asked.clear()
        preview.scroll_end(animate=False, immediate=True)
        for _ in range(200):
            if asked or body.complete:
                break
            await pilot.pause(0.02)
        complete = body.complete
        no_rests(monkeypatch)
        await settle(app, timeout=60)
        assert not complete and asked


@pytest.mark.long
async def test_a_long_note_opened_lays_the_screen_out_once(tmp_path: Path, app_for, monkeypatch) -> None:
    """Opening a note changes the preview's header, frontmatter and body sizes. Each widget
    whose size changed in a layout asked for one more through Textual's virtual-size reactive
    (the preview too, for its content's): the screen was laid out a second time (15-30 ms at
    160x50) in front of the first key. The new sizes are set ahead of the layout
    (tui.widgets.sizing): one layout shows the first screen."""
    from textual.screen import Screen

    rests = HeldRests(monkeypatch)
    no_rests(monkeypatch)  # the worker is held where it matters; elsewhere it only has to finish
    # long enough for a first screen lexed from a prefix (FIRST_CHARS) and a rest held back: each
    # note is rendered whole twice here, so no longer
    root = vault_with_long_note(tmp_path, 1200)
    (root / "Other long.md").write_text(long_note(800).replace("Long note", "Other long note"))
    app = app_for(short_first(root))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        body = app.query_one(NoteBody)
        layouts: list[int] = []
        drawn: list[int] = []
        refresh_layout = Screen._refresh_layout
        render_line = body.render_line

        def counted(screen, size=None, scroll=False):
            if not scroll:
                layouts.append(len(drawn))
            return refresh_layout(screen, size, scroll)

        def drawing(y: int):
            if app.main.preview.path == "Long.md":
                drawn.append(y)
            return render_line(y)

        body.render_line = drawing  # type: ignore[method-assign]
        found = []
        try:
            Screen._refresh_layout = counted  # type: ignore[method-assign]
            for _ in range(2):
                app.main.open_note("Other long.md")
                await settle(app, timeout=60)
                layouts.clear()
                drawn.clear()
                # the rest of the note waits (the worker is held at its first rest): only the
                # first screen's layouts are counted, however slow the machine
                rests.hold()
                app.main.open_note("Long.md")
                while not drawn:
                    await pilot.pause(0.005)
                await pilot.pause(0.3)  # time for a second layout, had one been asked for
                found.append(list(layouts))
                rests.release()
                await settle(app, timeout=60)
        finally:
            Screen._refresh_layout = refresh_layout  # type: ignore[method-assign]
        assert found == [[0], [0]]  # one layout, before the first line was drawn; before: [0, 32]
