"""Agents that bring no session (the 2026-07-28 protocol over HTTP, no bridge) are grouped into
working sessions by idle time, on the injected clock (core.clock.SteppingClock, no sleeps): the
real server on a real socket, the real `mcp` client, and `vaultwatch revert --session` as a
process reverting one working batch, not the agent's whole history."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from killed_cli import cli, tree
from mcp_testing import serving, uds_client

from vaultwatch.core.clock import SteppingClock
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault

MINUTE = 60.0


async def test_a_stateless_agents_calls_start_a_new_session_after_the_idle_gap(tmp_path, sock_dir, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("VAULTWATCH_STATELESS_SESSION_MINUTES", "20")
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n- one\n")
    clock = SteppingClock(dt.datetime(2026, 12, 5, 9, 0, tzinfo=dt.UTC))
    vault = Vault(root, clock=clock)
    vault.load()
    async with (
        serving(vault, sock_dir / "s.sock") as host,
        uds_client(host.socket_path, name="nightly", mode="auto") as agent,
    ):
        assert agent.protocol_version == "2026-07-28"  # no MCP session, and no bridge naming one

        async def call(tool: str, arguments: dict) -> None:
            r = await agent.call_tool(tool, arguments)
            assert not r.is_error, r.content[0].text

        # the morning's batch: idle at most 19 minutes between calls (the gap is 20)
        for i, idle in enumerate([0, 5, 19]):
            clock.advance(idle * MINUTE)
            await call("write", {"path": f"morning/m{i}.md", "content": f"# m{i}\n"})
        morning = tree(root)
        # 21 idle minutes: the next call starts the evening's batch
        clock.advance(21 * MINUTE)
        await call("write", {"path": "evening/e0.md", "content": "# e0\n"})
        clock.advance(2 * MINUTE)
        await call("edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- uno"})

    journal = journal_for(vault)
    rows = journal.changes(kinds=("change",))  # newest first
    sessions = [c.session for c in reversed(rows)]
    assert all(s and s.startswith("nightly@stateless-") for s in sessions), sessions
    assert sessions[0] == sessions[1] == sessions[2] != sessions[3] == sessions[4], sessions

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = cli("revert", "--session", sessions[3], str(root), "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert "reverted 2 changes" in done.stdout, done.stdout
    assert tree(root) == morning  # the evening's batch undone, the morning's kept
    vault.stop()
