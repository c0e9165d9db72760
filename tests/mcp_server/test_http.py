"""Loopback HTTP that behaves like a good local server: TCP_NODELAY on accepted connections,
header and connection limits against a local process that never finishes its requests, a bearer
token that survives restarts, and the TS SDK's Streamable HTTP client going on after a restart."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess

import pytest
from mcp_testing import CLIENT_DIR, ROOT, VAULTWATCH, serving, uds_client
from test_lifecycle import client_env, short_dir

import vaultwatch.mcp_server.host as host_mod
from vaultwatch.mcp_server.locations import token_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_connections(host) -> list:
    return list(host._servers[1].server_state.connections)


async def test_accepted_loopback_connections_have_tcp_nodelay(demo, sock_dir):
    port = free_port()
    async with serving(demo, sock_dir / "v.sock", http=f"127.0.0.1:{port}") as host:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n\r\n" % port)
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        conns = http_connections(host)
        assert conns
        for conn in conns:
            sock = conn.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        writer.close()


async def test_half_open_requests_are_cut_and_capped_while_socket_agents_go_on(demo, sock_dir, monkeypatch):
    monkeypatch.setattr(host_mod, "HEADER_TIMEOUT", 0.5)
    monkeypatch.setattr(host_mod, "MAX_HTTP_CONNECTIONS", 3)
    port = free_port()
    async with serving(demo, sock_dir / "v.sock", http=f"127.0.0.1:{port}") as host:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        for _, w in held:
            w.write(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1")  # a request head that never ends
            await w.drain()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)  # one too many
        refused = await asyncio.wait_for(reader.read(), 5)
        assert refused.startswith(b"HTTP/1.1 503")
        writer.close()
        async with uds_client(host.socket_path) as agent:  # the socket agent is not stalled by any of it
            assert (await agent.call_tool("list_documents", {"limit": 1})).structured_content["total"] == 43
        for r, _ in held:  # each half-open request is closed by the server after HEADER_TIMEOUT
            assert await asyncio.wait_for(r.read(), 5) == b""
        for _, w in held:
            w.close()


def start_serve(vault, env, port) -> subprocess.Popen:
    proc = subprocess.Popen(
        [*VAULTWATCH, "serve", str(vault), "--http", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().startswith("vaultwatch: serving"), proc.stderr.read()
    assert "loopback HTTP" in proc.stdout.readline()
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


async def test_ts_sdk_http_client_goes_on_after_a_restart_with_the_same_token(
    ts_sdk,
    demo_vault,  # noqa: F811
    tmp_path,
):
    state = tmp_path / "state"
    port = free_port()
    env = client_env(short_dir("vwh"), state)
    first = start_serve(demo_vault, env, port)
    client = None
    try:
        with_state = dict(os.environ, XDG_STATE_HOME=str(state))
        token_file = subprocess.run(
            [
                *VAULTWATCH[:1],
                "-c",
                "import sys; from vaultwatch.mcp_server.locations import token_path; print(token_path(sys.argv[1]))",
                str(demo_vault.resolve()),
            ],
            cwd=ROOT,
            env=with_state,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert token_file.startswith(str(state))  # the state folder, not the runtime folder logout clears
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        token = open(token_file).read().strip()
        client = await asyncio.create_subprocess_exec(
            str(ts_sdk),
            "http_client.mjs",
            f"http://127.0.0.1:{port}/mcp",
            token,
            cwd=str(CLIENT_DIR),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        phase = json.loads(await asyncio.wait_for(client.stdout.readline(), 60))
        assert phase == {"phase": "first", "total": 43, "session": phase["session"]} and phase["session"]
        stop(first)
        first = start_serve(demo_vault, env, port)  # restarted: the old session is gone, the token is not
        client.stdin.write(b"restarted\n")
        await client.stdin.drain()
        after = json.loads(await asyncio.wait_for(client.stdout.readline(), 60))
        assert after["phase"] == "after", after
        assert after["failed"] and "404" in after["failed"] or "Session not found" in (after["failed"] or "")
        assert after["total"] == 43 and after["session"] and after["session"] != phase["session"]
        assert await asyncio.wait_for(client.wait(), 20) == 0
    finally:
        if client is not None and client.returncode is None:
            client.kill()
        stop(first)


def test_the_token_file_lives_in_the_state_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "st"))
    vault = tmp_path / "v"
    vault.mkdir()
    path = token_path(str(vault))
    assert path.startswith(str(tmp_path / "st" / "vaultwatch" / "tokens"))
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700


if not hasattr(socket, "TCP_NODELAY"):  # pragma: no cover
    pytestmark = pytest.mark.skip("no TCP_NODELAY on this platform")
