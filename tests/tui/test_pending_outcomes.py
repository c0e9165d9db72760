"""A pending change that did not happen is in the record of changes that did not happen
(core.review.refusals), as a live dialog's decline is: declined on the pending screen or with
`vaultwatch decline` (a real process), or approved when it could no longer apply. `vaultwatch
refusals` and the TUI's refusals view (`x` in the Changes view) list it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_agents import wait_for
from tui_helpers import armed, open_loaded

from vaultwatch.core.edit.hooks import Caller, calling
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review import approval, pending, refusals
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ChangesScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.pending import PendingScreen
from vaultwatch.tui.screens.refusals import RefusalsScreen

pytestmark = pytest.mark.usefixtures("own_state")

ROOT = Path(__file__).resolve().parents[2]
NOTE = "Projects/Atlas Migration.md"


def propose(root: Path, text: str) -> int:
    """An agent's write while nobody attends the gate (a headless server's situation): it waits."""
    vault = open_loaded(root)
    approval.attach(vault, ApprovalGate("writes"))
    with calling(Caller("bot/1.0", "s-1", "write", {"path": NOTE})), pytest.raises(pending.AwaitingPerson) as said:
        Writer(vault).write(NOTE, text, overwrite=True, actor="agent:bot/1.0")
    vault.stop()
    return said.value.proposal.id


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_vaultwatch_decline_is_listed_by_vaultwatch_refusals(tui_demo: Path) -> None:
    pid = propose(tui_demo, "# Atlas\nrewritten by the bot\n")
    done = cli("decline", str(pid), str(tui_demo), "--reason", "keep my test note")
    assert done.returncode == 0, done.stderr
    listed = cli("refusals", str(tui_demo))
    assert listed.returncode == 0, listed.stderr
    [row] = [line for line in listed.stdout.splitlines() if f"pending change {pid}" in line]
    assert "declined" in row and "keep my test note" in row and NOTE in row, listed.stdout


async def test_declined_and_stale_pending_changes_show_in_the_refusals_view(tui_demo: Path) -> None:
    declined = propose(tui_demo, "# Atlas\nno\n")
    stale = propose(tui_demo, "# Atlas\nlater\n")
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app)
        await wait_for(lambda: isinstance(app.screen, PendingScreen), 10)
        screen = app.screen
        await armed(screen)
        await pilot.press("n")
        await wait_for(lambda: [p.id for p in screen.queue] == [stale], 10)
        (tui_demo / NOTE).write_text("# Atlas\nedited by the person meanwhile\n")
        await armed(screen)
        await pilot.press("y")
        await wait_for(lambda: screen.queue == [], 10)
        assert pending.store_for(str(tui_demo.resolve())).get(stale).state == pending.REFUSED
        await pilot.press("escape")
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        await pilot.press("x")
        await wait_for(lambda: isinstance(app.screen, RefusalsScreen) and app.screen.rows is not None)
        await settle(app)
        table = app.screen.query_one(DataTable)
        rows = [[str(c) for c in table.get_row_at(n)] for n in range(table.row_count)]
    assert [r[3] for r in rows] == ["refused", "declined"], rows
    kept = refusals.kept(str(tui_demo.resolve()))
    assert kept[0].reason.startswith(f"pending change {stale}: approved, but could not apply: {NOTE} changed"), kept
    assert kept[1].reason == f"pending change {declined}: declined in the TUI", kept


def test_a_pending_change_a_rule_refuses_as_it_is_approved_is_one_record(tui_demo: Path) -> None:
    """Approving a pending change runs the gate again: a rule added since refuses it there, and the
    approval then settles it as refused. The record of changes that did not happen holds it once,
    with that final outcome, not also as the gate's refusal of the same change."""
    pid = propose(tui_demo, "# Atlas\nrewritten by the bot\n")
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes", folders=[("Projects/**", "never")]))
    try:
        with pytest.raises(pending.ApprovalRefused):
            pending.approve(vault, pid, by="human:test")
    finally:
        vault.stop()
    kept = refusals.kept(str(tui_demo.resolve()))
    assert [r.kind for r in kept] == [refusals.REFUSED], kept
    assert kept[0].pending == pid, kept
    assert kept[0].reason.startswith(f"pending change {pid}: approved, but could not apply: the person's rule"), kept
    listed = cli("refusals", str(tui_demo))
    assert listed.returncode == 0, listed.stderr
    assert len([line for line in listed.stdout.splitlines() if NOTE in line]) == 1, listed.stdout
