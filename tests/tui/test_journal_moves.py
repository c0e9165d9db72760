"""The journal follows the person's moves, and a `vaultwatch revert` run while the TUI is open is
told from an outside edit: the real TUI (Pilot) with its real watcher on a real folder, the real CLI."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from tui_helpers import open_loaded
from waiting import TIMEOUT, await_until

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import journal_for
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ChangesScreen
from vaultwatch.tui.idle import settle

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
        await asyncio.sleep(1.5)  # past the journal's second look at disk events (RECHECK_S)
        kinds = [c.kind for c in journal.changes()]
        assert kinds == ["revert", "change"], [(c.kind, c.path, c.summary) for c in journal.changes()]
        assert [c.kind for c in screen.rows] == ["revert", "change"]
