"""What an agent is told when it connects is true: whether the person watches live, and its own
rules (a read-only agent is told its write tools will be refused). Through the real bridge and the
headless server it starts (no TUI: nobody watches live), with the real `mcp` client in both
protocol eras, and through the real server on its socket with a TUI's attending gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp_testing import serving, uds_client
from test_agent_rules import configured, place  # noqa: F401  (the fixture: a vault, rules, a bridge's env)

from vaultwatch.core.review import approval
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.core.vault import Vault


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_through_the_bridge_with_no_tui_an_agent_is_told_nobody_watches_and_its_rule(place, mode) -> None:  # noqa: F811
    root, env = place
    async with Client(configured(root, env, "reader"), mode=mode) as client:
        said = client.instructions or ""
        tools = {t.name for t in (await client.list_tools()).tools}
    assert "watches every call live" not in said
    assert "No one watches live now" in said and "pending change" in said, said
    assert '[agents."reader"] makes you read-only' in said and "write, edit" in said and "will be refused" in said
    assert {"write", "edit", "delete"} <= tools  # one tool list for every session; the refusal names the rule
    async with Client(configured(root, env, "scribe"), mode=mode) as client:
        said = client.instructions or ""
    assert '[agents."scribe"] for you: writes Inbox/**; never Inbox/Private/**' in said, said
    assert 'Approval mode "none"' in said


async def test_with_the_tui_open_an_agent_is_told_the_person_watches(tmp_path: Path, sock_dir, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n")
    vault = Vault(root)
    vault.load()
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    leave = gate.attend()  # as the TUI does while it runs
    async with serving(vault, sock_dir / "s.sock") as host:
        async with uds_client(host.socket_path, name="helper") as client:
            said = client.instructions or ""
        assert "TUI open now" in said and 'Approval mode "writes": every change waits' in said, said
        leave()
        async with uds_client(host.socket_path, name="helper") as client:  # the TUI quit: a new connection hears it
            assert "No one watches live now" in (client.instructions or "")
