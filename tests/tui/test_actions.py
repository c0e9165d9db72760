"""Pilot tests of the triage actions (status, human review, snooze, undo, $EDITOR) on a real
copy of the demo vault: bytes on disk, the index and the tabs, and conflicts with outside edits."""

from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from tui_helpers import access

from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.triage import ConfirmScreen, SnoozeScreen, StatusScreen
from vaultwatch.tui.widgets.activity import ActivityList

USER = "tester"
PLANE = "Areas/Craft/Woodworking/Hand Plane Setup (2023).md"  # deprecated, unverified
FINISHES = "Areas/Craft/Woodworking/Finishes Compared.md"  # the first row, stable
INCIDENT = "Areas/Engineering/Incident Template.md"  # unverified


async def start(app, pilot) -> None:
    await settle(app)
    await pilot.pause()


async def finish(app, pilot) -> None:
    """Wait for the action's worker, then for the views to follow the index."""
    for _ in range(3):
        for worker in [w for w in app.workers if w.group == "write"]:
            await worker.wait()
        await pilot.pause()
    await settle(app)
    await pilot.pause()


async def select(app, pilot, path: str) -> None:
    assert app.main.active_list.select_key(path), f"{path} is not listed"
    await pilot.pause()


def notes(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


def only_key_line_changed(before: bytes, after: bytes, key: bytes) -> bytes:
    """Assert the two versions differ in exactly one line, the `key:` line; return the new line."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert len(changed) == 1 and old[changed[0]].startswith(key + b":"), changed
    return new[changed[0]]


async def set_status(app, pilot, key: str) -> None:
    await pilot.press("c")
    await pilot.pause()
    assert isinstance(app.screen, StatusScreen)
    await pilot.press(key)
    await pilot.pause()
    if isinstance(app.screen, ConfirmScreen):  # several notes: a confirm that counts them
        await pilot.press("y")
    await finish(app, pilot)


async def test_set_status_leaves_an_unsafe_note_alone_and_changes_only_a_status_line(tui_demo: Path, app_for) -> None:
    """A note whose frontmatter cannot be edited safely is reported and left alone; then a
    good note's status changes in its status line only (one app for both: the refused action
    writes nothing, which is what is checked first)."""
    broken = "Inbox/Broken frontmatter.md"
    app = app_for(tui_demo, user=USER)
    before = (tui_demo / PLANE).read_bytes()
    other = (tui_demo / FINISHES).read_bytes()
    broken_before = (tui_demo / broken).read_bytes()
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        await select(app, pilot, broken)
        await set_status(app, pilot, "3")
        assert (tui_demo / broken).read_bytes() == broken_before
        failed = [n for n in app._notifications if n.title.startswith("failed")]
        assert failed and broken in failed[0].message and "malformed" in failed[0].message
        assert failed[0].severity == "error"

        await select(app, pilot, PLANE)
        await set_status(app, pilot, "2")  # 2 = stable
        after = (tui_demo / PLANE).read_bytes()
        assert only_key_line_changed(before, after, b"status").rstrip() == b"status: stable"
        assert (tui_demo / FINISHES).read_bytes() == other
        assert (tui_demo / broken).read_bytes() == broken_before
        assert app.session.snapshot.get(PLANE).okf_status == "stable"
        row = next(e for e in app.main.active_list.rows if e.path == PLANE)
        assert row.okf_status == "stable"  # the list follows through DocumentsChanged
        assert app.main.preview.path == PLANE and app.main.preview.entry.okf_status == "stable"
        # the notification quotes the values as the file writes them (unquoted here), not as JSON
        assert any("status → stable" in n and "status: deprecated -> stable" in n for n in notes(app)), notes(app)
        # the Deprecated tab no longer lists it
        await pilot.press("2")
        await settle(app)
        assert PLANE not in {e.path for e in app.main.active_list.rows}


async def test_set_status_on_marked_notes(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    before = {p: (tui_demo / p).read_bytes() for p in (FINISHES, PLANE)}
    everything = {p.relative_to(tui_demo).as_posix(): p.read_bytes() for p in tui_demo.rglob("*.md")}
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        doclist = app.main.active_list
        assert doclist.current.path == FINISHES
        await pilot.press("space", "space")  # marks the first two rows, the cursor moves on
        assert doclist.picked == {FINISHES, PLANE}
        assert doclist.render_line(1).text.lstrip().startswith("✓ ") and doclist.render_line(
            2
        ).text.lstrip().startswith("✓ ")
        assert "✓" not in doclist.render_line(3).text
        assert "2 marked" in str(app.status.render())
        assert doclist.current.path not in doclist.picked  # marks win over the cursor row
        await set_status(app, pilot, "1")  # 1 = draft
        for path, old in before.items():
            new = (tui_demo / path).read_bytes()
            assert only_key_line_changed(old, new, b"status").rstrip() == b"status: draft"
            assert app.session.snapshot.get(path).okf_status == "draft"
        changed = {p for p, data in everything.items() if (tui_demo / p).read_bytes() != data}
        assert changed == set(before)
        assert doclist.picked == set() and "marked" not in str(app.status.render())
        # one undo restores both notes
        await pilot.press("u")
        await finish(app, pilot)
        assert {p: (tui_demo / p).read_bytes() for p in before} == before


async def test_mark_human_reviewed_moves_the_note_to_the_human_tier(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    before = (tui_demo / INCIDENT).read_bytes()
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        assert app.session.snapshot.get(INCIDENT).okf_trust == "unverified"
        await select(app, pilot, INCIDENT)
        await pilot.press("v", "y")  # y confirms the attestation
        await finish(app, pilot)
        entry = app.session.snapshot.get(INCIDENT)
        assert entry.okf_trust == "human-reviewed"
        verified = entry.frontmatter["verified"]
        assert verified[-1]["by"] == f"human:{USER}"
        assert str(verified[-1]["at"]).startswith("2026-11-29")  # the injected clock, not the wall
        after = (tui_demo / INCIDENT).read_bytes()
        assert after.startswith(before.split(b"\n---", 1)[0])  # the existing keys are untouched
        assert after.split(b"\n---", 1)[1] == before.split(b"\n---", 1)[1]  # and so is the body
        assert any("marked human-reviewed" in n for n in notes(app))
        await pilot.press("4", "right_square_bracket", "right_square_bracket")  # Trust tab, human tier
        await settle(app)
        assert INCIDENT in {e.path for e in app.main.active_list.rows}
        assert str(app.main.tabs.get_tab("trust").label).startswith("Trust ")


async def test_snooze_takes_the_note_off_the_stale_tab(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        await pilot.press("3")
        await settle(app)
        stale = [e.path for e in app.main.active_list.rows]
        path = app.main.active_list.current.path
        assert path in stale and len(stale) > 1
        before = (tui_demo / path).read_bytes()
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, SnoozeScreen)
        await pilot.press("enter")  # the default: 14 days
        await finish(app, pilot)
        assert app.session.snapshot.get(path).stale_date == dt.date(2026, 12, 13)
        assert path not in {e.path for e in app.main.active_list.rows}
        assert str(app.main.tabs.get_tab("stale").label) == f"Stale {len(stale) - 1}"
        new_line = only_key_line_changed(before, (tui_demo / path).read_bytes(), b"stale_after")
        assert new_line.rstrip() == b"stale_after: 2026-12-13"

        # a bad number is refused in the dialog, escape writes nothing
        other = app.main.active_list.current.path
        other_before = (tui_demo / other).read_bytes()
        await pilot.press("z")
        await pilot.pause()
        await pilot.press("ctrl+a", "x", "enter")
        await pilot.pause()
        assert isinstance(app.screen, SnoozeScreen)
        assert "whole number" in str(app.screen.query_one("#snooze-error").render())
        await pilot.press("escape")
        await finish(app, pilot)
        assert (tui_demo / other).read_bytes() == other_before


async def test_undo_restores_the_exact_bytes(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    before = (tui_demo / INCIDENT).read_bytes()
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        await select(app, pilot, INCIDENT)
        await pilot.press("v", "y")  # y confirms the attestation
        await finish(app, pilot)
        await set_status(app, pilot, "3")
        assert (tui_demo / INCIDENT).read_bytes() != before
        await pilot.press("u")  # undoes the status
        await finish(app, pilot)
        assert app.session.snapshot.get(INCIDENT).okf_status == "stable"
        assert app.session.snapshot.get(INCIDENT).okf_trust == "human-reviewed"
        await pilot.press("u")  # undoes the review
        await finish(app, pilot)
        assert (tui_demo / INCIDENT).read_bytes() == before
        assert app.session.snapshot.get(INCIDENT).okf_trust == "unverified"
        await pilot.press("u")
        await finish(app, pilot)
        assert any("nothing to undo" in n for n in notes(app))


async def test_outside_change_is_a_conflict_never_overwritten(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        await select(app, pilot, PLANE)
        await settle(app)
        assert app.main.preview.path == PLANE
        # an agent rewrites the note behind the app's back (no watcher in tests: the app still
        # shows the old version)
        outside = (tui_demo / PLANE).read_bytes().replace(
            b"status: deprecated", b"status: draft"
        ) + b"\nagent was here\n"
        (tui_demo / PLANE).write_bytes(outside)
        await set_status(app, pilot, "2")
        assert (tui_demo / PLANE).read_bytes() == outside
        conflict = [n for n in app._notifications if n.title.startswith("conflict")]
        assert conflict and PLANE in conflict[0].message and "ctrl+r" in conflict[0].message
        assert conflict[0].severity == "warning"
        await pilot.press("u")  # the refused action left nothing to undo
        await finish(app, pilot)
        assert (tui_demo / PLANE).read_bytes() == outside
        # reload, then the same action goes through on the new content
        await pilot.press("ctrl+r")
        await finish(app, pilot)
        assert app.session.snapshot.get(PLANE).okf_status == "draft"
        await set_status(app, pilot, "2")
        assert only_key_line_changed(outside, (tui_demo / PLANE).read_bytes(), b"status").rstrip() == b"status: stable"


async def test_undo_never_clobbers_a_later_outside_edit(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        await select(app, pilot, PLANE)
        await set_status(app, pilot, "2")
        later = (tui_demo / PLANE).read_bytes() + b"\nan agent appended this\n"
        (tui_demo / PLANE).write_bytes(later)
        await pilot.press("u")
        await finish(app, pilot)
        assert (tui_demo / PLANE).read_bytes() == later
        assert any(n.title.startswith("conflict") and PLANE in n.message for n in app._notifications)


async def test_editor_edit_is_indexed_and_undoable(tui_demo: Path, app_for, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", """sh -c 'printf "\\nedited\\n" >> "$1"' --""")
    app = app_for(tui_demo, user=USER)
    before = (tui_demo / INCIDENT).read_bytes()
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        await select(app, pilot, INCIDENT)
        await pilot.press("e")
        await finish(app, pilot)
        after = (tui_demo / INCIDENT).read_bytes()
        assert after == before + b"\nedited\n"
        entry = app.session.snapshot.get(INCIDENT)
        assert entry.size_bytes == len(after)
        assert any("edited in $EDITOR" in n and "+2 -0" in n for n in notes(app)), notes(app)
        await pilot.press("u")
        await finish(app, pilot)
        assert (tui_demo / INCIDENT).read_bytes() == before
        assert app.session.snapshot.get(INCIDENT).size_bytes == len(before)


async def test_broken_tab_lists_unwritten_links_and_e_opens_the_note(
    tui_demo: Path, app_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", """sh -c 'printf "\nfixed\n" >> "$1"' --""")
    app = app_for(tui_demo, user=USER)
    note = "Projects/Atlas Migration.md"
    before = (tui_demo / note).read_bytes()
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        await pilot.press("5")
        await settle(app)
        await pilot.pause()
        lst = app.main.active_list
        rows = {(r.path, r.kind): r for r in lst.rows}
        assert rows[(note, "unwritten")].message == "[[Vendor Contracts]]: no note yet"
        assert ("Inbox/Broken frontmatter.md", "frontmatter") in rows  # next to broken frontmatter
        assert lst.select_key(lst.row_key(rows[(note, "unwritten")]))
        await pilot.pause()
        await pilot.press("e")
        await finish(app, pilot)
        assert (tui_demo / note).read_bytes() == before + b"\nfixed\n"


async def test_agent_writes_show_their_diff_in_the_activity_panel(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user=USER)
    async with app.run_test(size=(160, 50)) as pilot:
        await start(app, pilot)
        event = replace(
            access("claude-code", "update_frontmatter", (PLANE,), summary="Hand Plane"),
            write=True,
            diff_summary="frontmatter: status: deprecated -> stable",
        )
        app.session.vault.bus.publish(event)
        await pilot.pause()
        activity = app.query_one(ActivityList)
        text = activity.render_line(1).text
        assert "update_frontmatter" in text and "status: deprecated -> stable" in text
        assert app.session.marks.get(PLANE).kind == "wrote"


@pytest.mark.slow
def test_editor_in_a_real_terminal_suspends_and_resumes(tmp_path: Path) -> None:
    """`vaultwatch` in a pseudo-terminal: `e` hands the terminal to $EDITOR (App.suspend), the
    app resumes, indexes the edit and says so; `u` restores the bytes; `q` still quits."""
    from test_tui_cli import Terminal  # the pty driver of the CLI tests
    from tui_helpers import copy_demo

    root = copy_demo(tmp_path / "demo")
    target = root / FINISHES  # the first row
    before = target.read_bytes()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME", "VISUAL")}
    env.update(
        TERM="xterm-256color",
        COLUMNS="120",
        LINES="36",
        XDG_STATE_HOME=str(tmp_path / "state"),
        EDITOR="""sh -c 'printf "\\nedited\\n" >> "$1"; echo EDITOR-RAN' --""",
    )
    term = Terminal([str(root), "--as-of", "2026-11-29", "--no-mcp", "--no-watch"], env)
    try:
        assert term.read_until(b"Finishes Compared"), term.output[-2000:]
        term.read_until(b"\x00", timeout=0.5)  # let the first frames out
        term.type("e")
        assert term.read_until(b"EDITOR-RAN", timeout=10), term.output[-2000:]
        assert term.read_until(b"edited in $EDITOR", timeout=10), term.output[-2000:]
        assert target.read_bytes() == before + b"\nedited\n"
        term.type("u")
        assert term.read_until(b"undid", timeout=10), term.output[-2000:]
        deadline = time.monotonic() + 5
        while target.read_bytes() != before and time.monotonic() < deadline:
            term.read_until(b"\x00", timeout=0.1)
        assert target.read_bytes() == before
        term.read_until(b"\x00", timeout=0.3)
        term.type("q")
        assert term.close() == 0
        assert b"Traceback" not in term.output
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
