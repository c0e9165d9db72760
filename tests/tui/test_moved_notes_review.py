"""The journal follows the person's moves, and a `vaultwatch revert` run while the TUI is open is
told from an outside edit: the real TUI (Pilot) with its real watcher on a real folder, the real CLI."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_helpers import open_loaded
from waiting import TIMEOUT, await_until

from tests.triage_vault import make_triage_vault
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import Caller, calling, journal_for
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ChangesScreen, ConfirmScreen, ConflictScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.changes import COLUMNS
from vaultwatch.tui.widgets.diffview import DiffView, plain

pytestmark = pytest.mark.usefixtures("own_state")

NOTE = "Projects/Atlas Migration.md"
REPO = Path(__file__).resolve().parents[2]


async def cli(*args: str) -> tuple[int | None, str, str]:
    """`vaultwatch ARGS` as the person runs it from another shell: its exit code and output."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vaultwatch.tui.commands.cli",
        *args,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("deleted", [NOTE, "Projects"])
async def test_a_cli_revert_of_an_agents_delete_while_the_tui_runs_is_no_outside_edit(tui_demo: Path, deleted: str):
    vault = open_loaded(tui_demo)
    before = (tui_demo / NOTE).read_bytes()
    Writer(vault).delete(deleted, actor="agent:bot")  # into the trash: the note, or its whole folder
    assert not (tui_demo / NOTE).exists()
    journal = journal_for(vault)
    cid = journal.changes()[0].id
    app = make_app(vault, config=fixed_config(watch=True))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert await asyncio.to_thread(vault.wait_watching, TIMEOUT)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        # the watcher's applier waits on the index's lock (a loaded machine): the revert's file event
        # is handled after the revert's row is committed and its intent closed
        with vault.refresh_lock:
            code, _, err = await cli("revert", str(cid), str(tui_demo))
        assert code == 0, err
        assert (tui_demo / NOTE).read_bytes() == before
        await await_until(lambda: any(c.kind == "revert" for c in screen.rows))
        # every disk event of the revert applied, then the journal's second look at any outside row
        # they made, at once rather than after its timer (as a process about to stop has it done)
        assert await asyncio.to_thread(vault.wait_for_pending_writes, TIMEOUT)
        journal.recheck_now()
        await settle(app)
        kinds = [c.kind for c in journal.changes()]
        assert kinds == ["revert", "change"], [(c.kind, c.path, c.summary) for c in journal.changes()]
        assert [c.kind for c in screen.rows] == ["revert", "change"]


def session_edit(writer: Writer, rel: str, key: str) -> int:
    """An agent's change in session s-move (as its MCP call would journal it)."""
    with calling(Caller("scribe/0.1", "s-move", "update_frontmatter", {"path": rel})) as caller:
        writer.update_frontmatter(rel, set={key: "agent"}, actor="agent:scribe")
    return caller.change_ids[-1]


async def test_a_folder_moved_outside_keeps_its_notes_in_trust_and_the_conflict_view_says_what_happened(
    tmp_path: Path,
):
    root = make_triage_vault(tmp_path / "vault")  # no OKF bundle: Trust lists the journal's notes
    vault = open_loaded(root)
    writer = Writer(vault)
    first = session_edit(writer, "Projects/Launch.md", "summary")
    second = session_edit(writer, "Projects/Roadmap.md", "summary")
    journal = journal_for(vault)
    app = make_app(vault, config=fixed_config(watch=True))
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(app)
        assert await asyncio.to_thread(vault.wait_watching, TIMEOUT)
        await pilot.press("4")  # the Trust tab
        trust = app.main.tabs.get_tab("trust")
        await await_until(lambda: str(trust.label).startswith("Trust ✗2"))
        os.rename(root / "Projects", root / "Work projects")  # the person's `mv`, outside vaultwatch
        await await_until(lambda: any(c.kind == "outside" for c in journal.changes()))
        moved = journal.changes()[0]
        assert moved.summary == "moved Projects to Work projects (4 files) outside vaultwatch"
        # both notes stay flagged, at their new paths
        await await_until(
            lambda: (
                {e.path for e in app.main.active_list.rows} == {"Work projects/Launch.md", "Work projects/Roadmap.md"}
            )
        )
        assert str(trust.label).startswith("Trust ✗2")
        # the person edits one of them since: the session's revert is refused for it
        with (root / "Work projects/Roadmap.md").open("a") as f:
            f.write("my own line\n")
        await await_until(lambda: journal.changes()[0].id > moved.id)
        edited = journal.changes()[0]
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        table = screen.query_one(DataTable)
        path_cell = COLUMNS.index("path")
        assert str(table.get_row(str(first))[path_cell]) == ("Projects/Launch.md (now at Work projects/Launch.md)")
        # the move's row lists each moved note once, at its new place
        table.move_cursor(row=next(i for i, c in enumerate(screen.rows) if c.id == moved.id))
        diff = screen.query_one(DiffView)
        await await_until(lambda: plain(diff.renderable or "").startswith(f"change {moved.id} "))
        lines = plain(diff.renderable).splitlines()
        assert "  Work projects/Launch.md" in lines and "  Projects/Launch.md" not in lines, lines
        table.move_cursor(row=next(i for i, c in enumerate(screen.rows) if c.id == second))
        await pilot.pause()
        await pilot.press("R")  # the session's changes, as one unit
        await await_until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await await_until(lambda: isinstance(app.screen, ConflictScreen))
        shown = " ".join(" ".join(plain(s.content).split()) for s in app.screen.query("Static"))
        assert (
            "Work projects/Roadmap.md (moved since from Projects/Roadmap.md) was changed by you "
            "outside vaultwatch (in Obsidian or another editor)"
        ) in shown, shown
        assert f"(change {edited.id}), after agent scribe/0.1's change (change {second}," in shown, shown
        assert "no record" not in shown and "the change's change" not in shown
    assert b"my own line" in (root / "Work projects/Roadmap.md").read_bytes()


async def test_a_rename_moved_on_since_does_not_offer_r_to_revert_it_there(tmp_path: Path):
    """A rename's revert is a move back, refused once the note moved on (it would undo that move
    too): the detail says to move it back, not that r reverts it where it is now."""
    root = make_triage_vault(tmp_path / "vault")
    vault = open_loaded(root)
    writer = Writer(vault)
    with calling(Caller("scribe/0.1", "s-move", "rename", {"path": "Projects/Launch.md"})) as caller:
        writer.rename("Projects/Launch.md", "Projects/Launch plan.md", actor="agent:scribe")
    renamed = caller.change_ids[-1]
    writer.rename("Projects/Launch plan.md", "Launch (kept).md", actor="human")  # the person moves it on
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(app)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        table = screen.query_one(DataTable)
        table.move_cursor(row=next(i for i, c in enumerate(screen.rows) if c.id == renamed))
        diff = screen.query_one(DiffView)
        await await_until(lambda: plain(diff.renderable or "").startswith(f"change {renamed} "))
        text = plain(diff.renderable)
        assert "now at Launch (kept).md: the note moved since (move it back to revert it)" in text, text
