"""The pending-changes store's bounds hold for a store kept before they existed: its waiting
proposals, which recorded no size, count by what they store once it is opened again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vaultwatch.core.edit.hooks import Caller, calling
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import approval, pending
from vaultwatch.core.vault import Vault


def test_an_older_stores_waiting_proposals_count_against_the_agents_share(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("VAULTWATCH_PENDING_MAX_MB", "1")  # one agent may have 0.5 MiB waiting
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n")
    vault = Vault(str(root))
    vault.load()
    path = pending.pending_path(vault.root_real)
    Path(path).parent.mkdir(parents=True)
    old = sqlite3.connect(path)  # the store as the release before the bounds wrote it
    old.executescript(pending._SCHEMA)
    old.execute(
        "INSERT INTO proposals (at, actor, agent, session, tool, caller_arguments, method, call, operation, path,"
        " effects, fingerprints, after, why, state) VALUES (0, 'agent:bot', 'bot/1.0', 's-1', 'write', '{}',"
        " 'write', ?, 'write', 'Old.md', '[]', '{}', ?, 'rule', 'pending')",
        ('{"$map": []}', b"x" * 600_000),
    )
    old.commit()
    old.close()
    approval.attach(vault, approval.ApprovalGate("writes"))
    try:
        with calling(Caller("bot/1.0", "s-2", "write", {"path": "Plan.md"})), pytest.raises(VaultError) as got:
            Writer(vault).write("Plan.md", "# Plan\nby the agent\n", overwrite=True, actor="agent:bot")
    finally:
        vault.stop()
    assert "too many of bot's changes" in got.value.message and "1 pending change holding 0.6 MB" in got.value.message
    assert [(p.path, p.state) for p in pending.store_for(vault.root_real).proposals()] == [("Old.md", "pending")]
    assert (root / "Plan.md").read_text() == "# Plan\n"
