"""The in-process host: socket permissions, one instance per vault, stale sockets, shutdown
with agents connected, many agents at once, attribution of every call, loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import threading
import time

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_testing import in_own_task, serving, uds_client

from vaultwatch.core.events import AgentAccess, AgentConnected
from vaultwatch.mcp_server.host import HostError, McpHost, default_socket_path, find_socket, read_info
from vaultwatch.mcp_server.locations import parse_http, token_path


async def test_socket_is_0600_in_a_0700_directory(demo, sock_dir, monkeypatch):
    runtime = sock_dir / "run"
    runtime.mkdir(mode=0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = default_socket_path(demo.root_real)
    assert path.startswith(str(runtime / "vaultwatch") + "/") and path.endswith(".sock")
    assert stat.S_IMODE(os.stat(runtime / "vaultwatch").st_mode) == 0o700
    async with serving(demo, path) as host:
        st = os.stat(host.socket_path)
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        assert find_socket(demo.root_real) == path
        assert read_info(path)["pid"] == os.getpid()
    assert not os.path.exists(path) and not os.path.exists(path + ".json")


def test_default_socket_path_is_short_and_per_vault(demo, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/" + "x" * 120)  # too long for AF_UNIX: the /tmp fallback is used
    path = default_socket_path(demo.root_real)
    assert path.startswith(f"/tmp/vaultwatch-{os.getuid()}/") and len(path) < 100
    assert default_socket_path(str(tmp_path)) != path


def test_refuses_a_socket_path_too_long(demo):
    with pytest.raises(HostError, match="too long"):
        McpHost(demo, socket_path="/tmp/" + "d" * 120 + ".sock")


async def test_second_instance_is_refused_with_the_first_ones_pid(demo, sock_dir):
    path = sock_dir / "v.sock"
    async with serving(demo, path):
        second = McpHost(demo, socket_path=str(path))
        with pytest.raises(HostError, match=rf"another vaultwatch \(pid {os.getpid()}\) already serves"):
            await second.run()
        assert stat.S_ISSOCK(os.lstat(path).st_mode)  # the running one is untouched


async def test_stale_socket_from_a_crash_is_replaced(demo, sock_dir):
    path = str(sock_dir / "v.sock")
    crashed = socket.socket(socket.AF_UNIX)
    crashed.bind(path)
    crashed.close()  # a socket file nobody listens on, as a killed process leaves it
    with pytest.raises(ConnectionRefusedError):
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(path)
        finally:
            probe.close()
    async with serving(demo, path) as host:
        async with uds_client(host.socket_path) as client:
            assert (await client.call_tool("list_documents", {"limit": 1})).structured_content["total"] == 43


async def test_a_file_in_the_way_is_an_error(demo, sock_dir):
    path = sock_dir / "v.sock"
    path.write_text("not a socket")
    with pytest.raises(HostError, match="not a socket"):
        await McpHost(demo, socket_path=str(path)).run()
    assert path.read_text() == "not a socket"


@pytest.mark.timing
async def test_stop_with_agents_connected_takes_under_a_second(demo, sock_dir):
    host = McpHost(demo, socket_path=str(sock_dir / "v.sock"))
    ready = asyncio.Event()
    task = asyncio.create_task(host.run(ready))
    await ready.wait()
    legacy = uds_client(host.socket_path, name="legacy-agent")
    modern = uds_client(host.socket_path, name="modern-agent", mode="auto")
    holders = []
    for client in (legacy, modern):
        cm = in_own_task(client)
        c = await cm.__aenter__()
        holders.append(cm)
        await c.call_tool("list_documents", {"limit": 1})
    assert {a for a, _ in host.agents()} == {"legacy-agent/1.0", "modern-agent/1.0"}
    started = time.perf_counter()
    threading.Thread(target=host.stop).start()  # stop() is callable from any thread
    await asyncio.wait_for(task, 10)
    assert time.perf_counter() - started <= 5.0  # sessions held open do not hold the stop up
    assert not os.path.exists(host.socket_path)
    assert host.agents() == []
    for cm in holders:
        try:
            await asyncio.wait_for(cm.__aexit__(None, None, None), 5)
        except BaseException:  # noqa: BLE001 - the server is gone; the client may complain on its way out
            pass


async def test_stop_before_run_returns_at_once(demo, sock_dir):
    host = McpHost(demo, socket_path=str(sock_dir / "v.sock"))
    host.stop()
    host.stop()  # idempotent
    await asyncio.wait_for(host.run(), 2)
    assert not os.path.exists(host.socket_path)


async def test_ten_agents_at_once_each_call_attributed(demo, sock_dir, events):
    seen = events(demo)
    async with serving(demo, sock_dir / "v.sock") as host:

        async def agent(i: int) -> list[bool]:
            async with uds_client(host.socket_path, name=f"agent-{i}", version=f"{i}.0") as client:
                calls = [
                    client.call_tool("list_documents", {"folder": "Projects", "limit": 3}),
                    client.call_tool("read", {"path": "index.md", "frontmatter_only": True}),
                    client.call_tool("triage", {"category": "stale", "limit": 2}),
                    client.call_tool("read", {"path": "/etc/passwd"}),
                ]
                results = await asyncio.gather(*calls)
                assert len(host.agents()) >= 1
                return [r.is_error for r in results]

        outcomes = await asyncio.gather(*(agent(i) for i in range(10)))
    assert outcomes == [[False, False, False, True]] * 10
    access = [e for e in seen if isinstance(e, AgentAccess)]
    assert len(access) == 40
    by_agent: dict[str, set[str]] = {}
    for e in access:
        by_agent.setdefault(e.agent, set()).add(e.session)
    assert set(by_agent) == {f"agent-{i}/{i}.0" for i in range(10)}
    assert all(len(sessions) == 1 for sessions in by_agent.values())  # one session per agent
    assert len({s for sessions in by_agent.values() for s in sessions}) == 10
    connected = [e for e in seen if isinstance(e, AgentConnected)]
    assert sum(e.connected for e in connected) == 10 and sum(not e.connected for e in connected) == 10


@pytest.mark.timing
async def test_access_events_carry_what_the_human_needs(demo, sock_dir, events, tmp_path):
    seen = events(demo)
    audit = tmp_path / "audit" / "calls.jsonl"
    async with serving(demo, sock_dir / "v.sock", audit_log=str(audit)) as host:
        async with uds_client(host.socket_path, name="claude-code", version="2.1.0") as client:
            await client.call_tool("list_documents", {"folder": "Projects", "filters": {"status": "deprecated"}})
            await client.call_tool("read", {"path": "index.md", "section": "Work"})
            await client.call_tool("read", {"path": "../secrets.md"})
    listing, reading, refused = [e for e in seen if isinstance(e, AgentAccess)]
    assert listing.agent == "claude-code/2.1.0" and listing.tool == "list_documents" and listing.session
    assert listing.summary == "folder='Projects' filters={status: deprecated}"
    assert listing.arguments == {"folder": "Projects", "filters": {"status": "deprecated"}}
    assert listing.result_count == 3 and set(listing.paths) == {
        "Projects/Archive/Billing Rewrite 2024.md",
        "Projects/Archive/Legacy Deploy Script.md",
        "Projects/Archive/Retired/Q3 2024 Roadmap.md",
    }
    assert listing.error is None and 0 < listing.duration_ms < 5000 and listing.at > 0
    assert reading.paths == ("index.md",) and reading.result_count == 1
    assert refused.error.startswith("Error: path traversal blocked") and refused.result_count is None
    assert stat.S_IMODE(os.stat(audit).st_mode) == 0o600
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [line["tool"] for line in lines] == ["list_documents", "read", "read"]
    assert lines[0]["agent"] == "claude-code/2.1.0" and lines[0]["result_count"] == 3
    assert lines[2]["error"].startswith("Error: path traversal blocked")


async def test_modern_era_clients_are_attributed_too(demo, sock_dir, events):
    seen = events(demo)
    async with serving(demo, sock_dir / "v.sock") as host:
        async with uds_client(host.socket_path, name="new-agent", mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            await client.call_tool("list_tags", {"limit": 1})
            [(agent, session)] = host.agents()
            assert agent == "new-agent/1.0" and session.startswith("new-agent@stateless-")
    (access,) = [e for e in seen if isinstance(e, AgentAccess)]
    assert access.agent == "new-agent/1.0" and access.tool == "list_tags" and access.result_count == 1


async def test_read_only_and_compat_options_shape_the_tool_list(demo, sock_dir):
    async with serving(demo, sock_dir / "v.sock", compat=frozenset(), read_only=True) as host:
        async with uds_client(host.socket_path) as client:
            names = {t.name for t in (await client.list_tools()).tools}
    assert "list_documents" in names and not names & {"vault_list_notes", "obsidian_list_notes"}
    assert not names & {"write", "edit", "update_frontmatter", "rename", "delete"}  # --read-only


# -- loopback HTTP -------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["0.0.0.0:8000", "192.168.1.2:80", "example.com:80", "127.0.0.1:0x", "[::]:9"])
def test_http_refuses_anything_but_loopback(spec):
    with pytest.raises(HostError):
        parse_http(spec)


def test_http_accepts_loopback_spellings():
    assert parse_http("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_http("localhost:9") == ("127.0.0.1", 9)
    assert parse_http("[::1]:9") == ("::1", 9)


async def test_http_needs_the_token_and_the_right_host(demo, sock_dir):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with serving(demo, sock_dir / "v.sock", http=f"127.0.0.1:{port}") as host:
        assert host.http_url == f"http://127.0.0.1:{port}/mcp"
        tfile = token_path(demo.root_real)
        assert stat.S_IMODE(os.stat(tfile).st_mode) == 0o600
        token = open(tfile).read().strip()
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        async with httpx2.AsyncClient(timeout=5) as http:
            nothing = await http.post(host.http_url, json=body, headers=headers)
            wrong = await http.post(host.http_url, json=body, headers={**headers, "authorization": "Bearer nope"})
            rebind = await http.post(
                host.http_url,
                json=body,
                headers={**headers, "authorization": f"Bearer {token}", "host": f"evil.example:{port}"},
            )
            cross = await http.post(
                host.http_url,
                json=body,
                headers={**headers, "authorization": f"Bearer {token}", "origin": "http://evil.example"},
            )
        assert (nothing.status_code, wrong.status_code, rebind.status_code, cross.status_code) == (401, 401, 421, 403)
        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=10)
        async with Client(streamable_http_client(host.http_url, http_client=http), mode="legacy") as client:
            result = await client.call_tool("list_documents", {"limit": 2})
            assert result.structured_content["total"] == 43


async def test_http_port_in_use_is_a_clear_error(demo, sock_dir):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(HostError, match="pick another port"):
            async with serving(demo, sock_dir / "v.sock", http=f"127.0.0.1:{port}"):
                pass
    assert not os.path.exists(sock_dir / "v.sock")


async def test_outside_edits_reach_agents_through_the_live_index(make_vault, sock_dir, clock):
    from vaultwatch.core.vault import Vault

    root = make_vault({"a.md": "# A\n"}, okf=True)
    vault = Vault(root, clock=clock)
    vault.start_live(search=False)
    try:
        assert vault.wait_ready(10)
        async with serving(vault, sock_dir / "v.sock") as host:
            async with uds_client(host.socket_path) as client:
                (root / "Inbox").mkdir()
                (root / "Inbox" / "new note.md").write_text("---\nstatus: deprecated\n---\n# New\n")
                for _ in range(100):  # the watcher applies it within a fraction of a second
                    result = await client.call_tool(
                        "list_documents", {"filters": {"status": "deprecated"}, "wait_for_pending_writes": True}
                    )
                    if result.structured_content["total"]:
                        break
                    await asyncio.sleep(0.05)
                assert [r["path"] for r in result.structured_content["result"]] == ["Inbox/new note.md"]
                assert result.meta["index_stale"] is False
    finally:
        vault.stop()


async def test_the_vault_knows_while_agents_call_so_its_background_work_rests(demo, sock_dir):
    """The entry cache's write and a first search build rest while `Vault.answering()` says agents call."""
    async with serving(demo, sock_dir / "v.sock") as host:
        assert demo.answering == host.answering
        host.answering_quiet_s = 0.0
        assert not demo.answering()  # nothing in flight, and no quiet window
        async with uds_client(host.socket_path, name="agent") as client:
            host.answering_quiet_s = 3600.0
            assert not (await client.call_tool("list_documents", {"limit": 1})).is_error
            assert demo.answering()  # a request within the window
            host.answering_quiet_s = 0.0
            deadline = time.monotonic() + 5  # the request's end reaches the host just after its answer
            while demo.answering() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert not demo.answering()
