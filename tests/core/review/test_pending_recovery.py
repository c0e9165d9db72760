"""An approval of a pending change that dies at a chosen point (the process exits hard, as under
kill -9) is settled by approving it again: finished when the agent's change was journaled whole,
rolled back and applied anew when the note was written but not journaled. The process really
dies (os._exit in a child process); the points are chosen by replacing one function there."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vaultwatch.core.edit.hooks import Caller, calling
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault

ROOT = Path(__file__).resolve().parents[3]
BEFORE = b"# Plan\nkeep\n"
AFTER = b"# Plan\nwritten by the agent\n"

DIES = textwrap.dedent(
    """
    import os, sys
    from vaultwatch.core.review import approval, pending
    from vaultwatch.core.review import journal as jm
    from vaultwatch.core.vault import Vault
    root, pid, where = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if where == "journaled":  # the agent's change is written and journaled; the proposal not yet settled
        settle = pending.PendingStore.settle
        def dying(self, p, state, **kw):
            if state == pending.APPROVED:
                os._exit(9)
            return settle(self, p, state, **kw)
        pending.PendingStore.settle = dying
    else:  # the note is written; the journal has not recorded it
        def dying(self, scope, result):
            os._exit(9)
        jm.Journal.record_result = dying
    vault = Vault(root)
    vault.load()
    approval.configure(vault, always=True)
    pending.approve(vault, pid, by="human:test")
    """
)


def propose(root: Path) -> int:
    """An agent's write, kept as a pending change (the gate is on and nobody attends)."""
    vault = Vault(str(root))
    vault.load()
    approval.attach(vault, approval.ApprovalGate("writes"))
    with calling(Caller("bot/1.0", "s-1", "write", {"path": "Plan.md"})), pytest.raises(pending.AwaitingPerson) as got:
        Writer(vault).write("Plan.md", AFTER, overwrite=True, actor="agent:bot")
    vault.stop()
    return got.value.proposal.id


@pytest.mark.parametrize("where", ["journaled", "written"])
def test_an_approval_that_died_is_settled_by_approving_it_again(tmp_path, monkeypatch, where):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / f"v-{where}"
    root.mkdir()
    (root / "Plan.md").write_bytes(BEFORE)
    pid = propose(root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    died = subprocess.run([sys.executable, "-c", DIES, str(root), str(pid), where], env=env, cwd=ROOT, timeout=120)
    assert died.returncode == 9
    store = pending.store_for(os.path.realpath(root))
    assert store.get(pid).state == pending.APPLYING
    assert (root / "Plan.md").read_bytes() == AFTER  # it had been written when the process died

    vault = Vault(str(root))
    vault.load()
    approval.configure(vault, always=True)
    done = pending.approve(vault, pid, by="human:test")
    assert done.state == pending.APPROVED and (root / "Plan.md").read_bytes() == AFTER
    journal = journal_for(vault)
    agents = [c for c in journal.changes(kinds=("change",)) if c.agent and c.agent.startswith("bot")]
    assert [c.id for c in agents] == list(done.change_ids)  # the agent's change once, never twice
    assert [(c.session, c.tool) for c in agents] == [("s-1", "write")]
    if where == "written":  # the unjournaled write was put back (journaled as the recovery's), then applied anew
        assert any(c.actor == "vaultwatch" for c in journal.changes(kinds=("change",)))
    assert journal.open_intents() == []
    vault.stop()
