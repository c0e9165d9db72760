"""Writes are deliberate and aimed at the note the person sees: text typed into the filter
never becomes a triage action, `v` and bulk actions confirm naming their notes, and triage acts
on the previewed note (a palette jump, a followed link), not on a list cursor elsewhere."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input

from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.help import HelpScreen
from vaultwatch.tui.screens.triage import ConfirmScreen, StatusScreen

USER = "tester"
PLANE = "Areas/Craft/Woodworking/Hand Plane Setup (2023).md"
MAP = "index.md"  # "Vault map"


@pytest.fixture(autouse=True)
def _harmless_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A leaked `e` must not start a real editor."""
    monkeypatch.setenv("EDITOR", "true")
    monkeypatch.delenv("VISUAL", raising=False)


async def finish(app, pilot) -> None:
    for _ in range(3):
        for worker in [w for w in app.workers if w.group == "write"]:
            await worker.wait()
        await pilot.pause()
    await settle(app)


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def burst(app, *keys: str) -> None:
    """Keys as a terminal delivers fast typing: all queued before the app handles the first."""
    for key in keys:
        name = {" ": "space"}.get(key, key)
        app.post_message(events.Key(name, key if len(key) == 1 else None))


async def drain(app, pilot) -> None:
    while app.message_queue_size:
        await asyncio.sleep(0.005)
    await settle(app)


@pytest.mark.parametrize("leave", ["enter", "escape"])
async def test_a_key_right_after_leaving_the_filter_acts_on_the_list(tui_demo: Path, app_for, leave: str) -> None:
    """`/plane` Enter `?` in one burst: the filter reads `plane` and the help opens, as it would
    once the screen had caught up (before: the filter read `plane?`; keys within 0.6 s of
    leaving it were filter text, and the help opened only after a pause)."""
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        burst(app, "slash", *"plane", leave, "question_mark")
        await drain(app, pilot)
        assert app.query_one("#filter-input", Input).value == "plane"
        assert isinstance(app.screen, HelpScreen)


async def test_a_triage_key_after_enter_asks_about_the_listed_note(tui_demo: Path, app_for) -> None:
    """`/plane` Enter `v` in one burst: `v` is the verify key, not filter text; it asks about the
    note the filter lists (not the one previewed before the filter's list came), and nothing is
    written without `y`."""
    app = app_for(tui_demo, user=USER)
    before = files(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        burst(app, "slash", *"plane", "enter", "v")
        await drain(app, pilot)
        assert app.query_one("#filter-input", Input).value == "plane"
        assert isinstance(app.screen, ConfirmScreen)
        assert "Hand Plane Setup (2023)" in app.screen.question
        await pilot.press("escape")
        await finish(app, pilot)
        assert files(tui_demo) == before


async def test_keys_pressed_without_pauses_in_pilot_land_where_meant(tui_demo: Path, app_for) -> None:
    """Pilot's press of the whole sequence in one call: `/`, `J`, `a`, enter, `?` opens the help."""
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("slash", "J", "a", "enter", "question_mark")
        await drain(app, pilot)
        assert app.query_one("#filter-input", Input).value == "Ja"
        assert isinstance(app.screen, HelpScreen)


async def test_keys_typed_right_after_slash_reach_the_filter(tui_demo: Path, app_for) -> None:
    """`/` moves the focus at once: the letters queued behind it are filter text (before, the
    list got `p`, `l`, `a` (activity), `n`, `e` ($EDITOR) while the focus move waited)."""
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        shown = app.main.activity.display
        burst(app, "slash", *"plane")
        await drain(app, pilot)
        assert app.query_one("#filter-input", Input).value == "plane"
        assert app.main.activity.display == shown


async def test_after_enter_the_list_keys_act(tui_demo: Path, app_for) -> None:
    """Once the filter is left, `s` sorts the list."""
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("slash", *"plane", "enter")
        await pilot.press("s")
        await settle(app)
        assert app.query_one("#filter-input", Input).value == "plane"
        assert app.main.active_list.sort != "path"


async def test_verify_confirms_naming_the_note_and_escape_writes_nothing(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    before = files(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert app.main.active_list.select_key(PLANE)
        await settle(app)
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Hand Plane Setup (2023)" in app.screen.question
        await pilot.press("e")  # any key but y / enter cancels
        await finish(app, pilot)
        assert files(tui_demo) == before
        await pilot.press("v")
        await pilot.pause()
        await pilot.press("y")
        await finish(app, pilot)
        assert app.session.snapshot.get(PLANE).okf_trust == "human-reviewed"


async def test_triage_acts_on_the_previewed_note_not_the_list_cursor(tui_demo: Path, app_for) -> None:
    """Filter `plane`, open "Vault map" from the palette (the preview shows it), press `v`: the
    confirmation names it and it is the note written (before: Hand Plane Setup)."""
    app = app_for(tui_demo, user=USER)
    plane_before = (tui_demo / PLANE).read_bytes()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("slash", *"plane", "enter")
        await settle(app)
        assert app.main.active_list.current.path == PLANE
        app.main.open_note(MAP)
        await settle(app)
        assert app.main.preview.path == MAP
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and "Vault map" in app.screen.question
        await pilot.press("enter")
        await finish(app, pilot)
        assert (tui_demo / PLANE).read_bytes() == plane_before
        assert app.session.snapshot.get(MAP).okf_trust == "human-reviewed"


async def test_bulk_actions_name_their_notes_and_count(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("space", "down", "space", "down", "space")
        await pilot.pause()
        picked = app.main.active_list.picked
        marked = [app.session.snapshot.get(p).title for p in sorted(picked)]
        assert len(marked) == 3
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, StatusScreen)
        assert "3 notes" in app.screen.question and all(t in app.screen.question for t in marked)
        await pilot.press("escape")
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "3 notes" in app.screen.question and all(t in app.screen.question for t in marked)
        await pilot.press("escape")
        await finish(app, pilot)
