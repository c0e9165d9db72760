"""An agent session's id as the person sees it: unique among the journal's sessions and pasteable
back into `--session`; and one agent run through `vaultwatch bridge` keeps one session when the
server behind the bridge changes (the TUI opening or quitting).

Through the real server on its socket, real `mcp` clients (naming their session as the bridge
does, with the header it sends), the real `vaultwatch` CLI processes and the real bridge process."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx2
import pytest
from killed_cli import cli
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_testing import ROOT, VAULTWATCH, serving
from mcp_types import Implementation

from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server.wire import SESSION_HEADER

# two bridges' sessions whose first eight characters are the same (seen in a user's journal)
LONG_LIVED = "bridge-722146057f53"
ONE_SHOT = "bridge-7c1428f570f8"


@pytest.fixture
def vault(tmp_path: Path, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n- one\n")
    (root / "Log.md").write_text("# Log\n")
    v = Vault(root)
    v.load()
    return v


def agent(socket_path: str, name: str, session: str) -> Client:
    """A real `mcp` client on the socket whose session is named as `vaultwatch bridge` names its client's."""
    http = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(uds=socket_path),
        timeout=httpx2.Timeout(30, read=60),
        headers={SESSION_HEADER: session},
    )
    return Client(
        streamable_http_client("http://localhost/mcp", http_client=http),
        mode="auto",
        client_info=Implementation(name=name, version="0.1"),
    )


def bridge_params(socket_path: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0],
        args=[*VAULTWATCH[1:], "bridge", "--socket", str(socket_path)],
        cwd=str(ROOT),
        env=dict(os.environ),  # the test's cache and state folders (the SDK passes only a few names on)
    )


async def test_a_shown_session_id_is_unique_and_pastes_back_into_session(vault, sock_dir):
    root = Path(vault.root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with serving(vault, sock_dir / "s.sock") as host:
        async with agent(host.socket_path, "scribe", LONG_LIVED) as scribe:
            for i in range(3):
                r = await scribe.call_tool(
                    "edit", {"path": "Log.md", "heading": "Log", "mode": "append", "text": f"{i}"}
                )
                assert not r.is_error, r.content[0].text
        async with agent(host.socket_path, "scribe", ONE_SHOT) as once:
            r = await once.call_tool("edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- two"})
            assert not r.is_error, r.content[0].text
    assert {c.session for c in journal_for(vault).changes()} == {LONG_LIVED, ONE_SHOT}

    listed = cli("changes", str(root), env=env)
    assert listed.returncode == 0, listed.stderr
    shown = re.findall(r"\[(bridge-[0-9a-f]+)\]", listed.stdout)
    assert len(shown) == 4 and len(set(shown)) == 2, listed.stdout  # two sessions, told apart
    for form in set(shown):
        assert LONG_LIVED.startswith(form) != ONE_SHOT.startswith(form)  # each names one session only
        again = cli("changes", str(root), "--session", form, env=env)
        assert again.returncode == 0, again.stderr
        rows = again.stdout.splitlines()
        assert len(rows) == shown.count(form) and all(f"[{form}]" in row for row in rows), again.stdout

    # a prefix of both is refused, as `revert --session` refuses it, naming both as shown
    both = cli("changes", str(root), "--session", "bridge-7", env=env)
    assert both.returncode != 0 and both.stdout == ""
    assert "'bridge-7' names 2 sessions" in both.stderr and all(f in both.stderr for f in set(shown)), both.stderr
    refused = cli("revert", "--session", "bridge-7", str(root), "--yes", env=env)
    assert refused.returncode != 0 and "names 2 sessions" in refused.stderr


async def test_a_legacy_client_keeps_one_session_through_the_bridge_when_the_server_changes(vault, sock_dir, tmp_path):
    """The real bridge process with the real `mcp` client speaking the 2025-11-25 protocol, as the
    TypeScript SDK does: a write, then the server behind the socket goes and another one comes (as
    when the TUI opens or quits), then another write: one session in the journal, the bridge's."""
    sock = sock_dir / "s.sock"
    client = Client(bridge_params(sock), mode="legacy", client_info=Implementation(name="ts-like", version="1.0.0"))
    async with serving(vault, sock) as host:
        await client.__aenter__()
        try:
            assert client.protocol_version == "2025-11-25"
            first = await client.call_tool("edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- two"})
            assert not first.is_error, first.content[0].text
        except BaseException:
            await client.__aexit__(None, None, None)
            raise
        del host
    try:
        again = Vault(vault.root)  # the next server: a process of its own would open the vault anew
        again.load()
        async with serving(again, sock):
            second = await client.call_tool("edit", {"path": "Plan.md", "old_text": "- two", "new_text": "- three"})
            assert not second.is_error, second.content[0].text
            journal = journal_for(again)
            sessions = [c.session for c in journal.changes(kinds=("change",))]
            assert len(sessions) == 2 and sessions[0] == sessions[1], sessions
            assert sessions[0].startswith("bridge-")
    finally:
        await client.__aexit__(None, None, None)
