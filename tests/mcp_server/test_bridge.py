"""`vaultwatch bridge` as a real subprocess: driven by the SDK's stdio client and by raw
JSON-RPC lines, including the app going away (with a request in flight, and idle) and EOF."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH, serving
from mcp_types import Implementation

from tests.waiting import await_until
from vaultwatch.core.events import AgentConnected
from vaultwatch.mcp_server.bridge import MAYBE_APPLIED

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-client", "version": "0.1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def bridge_params(socket_path) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0],
        args=[*VAULTWATCH[1:], "bridge", "--socket", str(socket_path)],
        cwd=str(ROOT),
        env=dict(os.environ),  # the session's cache and state folders (the SDK passes only a few names on)
    )


def hold_tool(started: asyncio.Event):
    """An extra tool that stays in flight until cancelled (to catch the app going away mid-call)."""

    def register(server, env) -> None:
        async def hold(seconds: float = 30.0) -> str:
            started.set()
            await asyncio.sleep(seconds)
            return "done"

        server.add_tool(hold, name="hold", description="Test tool: wait `seconds`.")

    return register


class RawBridge:
    """A bridge subprocess spoken to in raw JSON-RPC lines."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, *args: str, env: dict[str, str] | None = None) -> RawBridge:
        proc = await asyncio.create_subprocess_exec(
            *VAULTWATCH,
            "bridge",
            *args,
            cwd=str(ROOT),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        return cls(proc)

    async def send(self, message) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        await self.proc.stdin.drain()

    async def receive(self, timeout: float = 10) -> dict:
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        assert line, "the bridge closed stdout"
        return json.loads(line)

    async def handshake(self) -> dict:
        await self.send(INIT)
        reply = await self.receive()
        await self.send(INITIALIZED)
        return reply

    async def exit_code(self, timeout: float = 10) -> int:
        return await asyncio.wait_for(self.proc.wait(), timeout)

    async def stderr(self) -> str:
        return (await self.proc.stderr.read()).decode()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sdk_stdio_client_through_the_bridge(demo, sock_dir, mode):
    async with serving(demo, sock_dir / "v.sock") as host:
        client = Client(
            bridge_params(host.socket_path), mode=mode, client_info=Implementation(name="stdio-agent", version="3")
        )
        async with client:
            assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"list_documents", "read", "vault_list_notes", "obsidian_list_notes"} <= names
            listing = await client.call_tool("list_documents", {"folder": "Projects", "limit": 2})
            assert listing.structured_content["total"] == 7 and listing.meta["index_stale"] is False
            note = await client.call_tool("read", {"path": "Getting Started.md"})
            assert note.structured_content["title"] and not note.is_error
            refused = await client.call_tool("vault_list_notes", {"folder": "../.."})
            assert refused.is_error and "path traversal blocked" in refused.content[0].text
            agents = dict(host.agents())
            assert "stdio-agent/3" in agents
        # the client closed the bridge's stdin: it ends the session on its way out
        await await_until(lambda: not host.agents(), what="the bridge's session ended")


async def test_a_bare_socket_nothing_listens_on_is_said_to_the_client_and_a_server_there_later_is_used(demo, sock_dir):
    """`bridge --socket S` alone has no vault to start a server for: the client hears why (not only a log
    it never shows) and what to configure instead, and the bridge uses a server that comes to S later."""
    path = sock_dir / "none.sock"
    bridge = await RawBridge.start("--socket", str(path))
    await bridge.send(INIT)
    refused = await bridge.receive(timeout=30)
    assert refused["id"] == 1 and refused["error"]["code"] == -32603
    assert "no vaultwatch is running" in refused["error"]["message"]
    assert "vaultwatch bridge --vault VAULT" in refused["error"]["message"]
    async with serving(demo, path):
        await bridge.send({**INIT, "id": 2})
        assert (await bridge.receive(timeout=30))["result"]["serverInfo"]["name"] == "vaultwatch"
        await bridge.send(INITIALIZED)
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "list_tags", "arguments": {"limit": 1}},
            }
        )
        assert (await bridge.receive(timeout=30))["result"]["structuredContent"]["result"]
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0


async def test_a_headless_start_that_raises_is_said_to_the_client_and_the_bridge_does_not_crash(
    demo_vault, sock_dir, tmp_path
):
    """A start of the headless server that raises (here the state folder, where its log goes, lies
    under a file) is a failed start: the real bridge tells the client why and how to go on, call
    after call, instead of dying with a traceback (it did before)."""
    (tmp_path / "a-file").write_text("not a folder")
    runtime = sock_dir / "rt"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "a-file" / "state"), XDG_RUNTIME_DIR=str(runtime))
    bridge = await RawBridge.start("--vault", str(demo_vault), env=env)
    for i in (1, 2):
        await bridge.send({**INIT, "id": i})
        refused = await bridge.receive(timeout=30)
        assert refused["id"] == i and refused["error"]["code"] == -32603, refused
        message = refused["error"]["message"]
        assert "could not be started: NotADirectoryError" in message and "vaultwatch serve" in message, message
    bridge.proc.stdin.close()
    assert await bridge.exit_code() == 0
    assert "Traceback" not in await bridge.stderr()


@pytest.mark.parametrize(
    "error",
    [
        OSError(11, "Resource temporarily unavailable"),
        # what a process start raised inside the TUI under 20 agents
        ValueError("bad value(s) in fds_to_keep"),
    ],
)
def test_a_headless_start_that_raises_is_tried_three_times_then_refused_saying_why(
    tmp_path, sock_dir, monkeypatch, error
):
    from vaultwatch.mcp_server import launch

    tries = []

    def popen(*args, **kwargs):
        tries.append(args)
        raise error

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(launch.subprocess, "Popen", popen)
    vault = tmp_path / "v"
    vault.mkdir()
    with pytest.raises(launch.BridgeError, match=f"could not be started: {type(error).__name__}"):
        launch.locate(str(vault), str(sock_dir / "s.sock"), timeout=10)
    assert len(tries) == 3


@pytest.mark.timing
async def test_a_write_in_flight_when_the_app_goes_away_is_answered_maybe_applied_and_the_bridge_goes_on(
    demo, sock_dir
):
    started = asyncio.Event()
    path = sock_dir / "v.sock"
    async with serving(demo, path, extra_tools=[hold_tool(started)]) as host:
        bridge = await RawBridge.start("--socket", host.socket_path)
        assert (await bridge.handshake())["result"]["serverInfo"]["name"] == "vaultwatch"
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "hold", "arguments": {"seconds": 30}},
            }
        )
        await asyncio.wait_for(started.wait(), 10)
        stop_at = time.perf_counter()
        host.stop()
    # the host stopped with the call in flight, not after it (30 s): a bound a loaded machine never reaches
    assert time.perf_counter() - stop_at < 10.0
    reply = await bridge.receive()
    # not a read the bridge knows: never sent twice, and the client is told it may have been applied
    assert reply["id"] == 7 and reply["error"]["code"] == -32603 and reply["error"]["message"] == MAYBE_APPLIED
    async with serving(demo, path):  # the app is back on the same socket: the same client session goes on
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "tools/call",
                "params": {"name": "list_tags", "arguments": {"limit": 1}},
            }
        )
        assert (await bridge.receive())["result"]["structuredContent"]["result"]
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0


async def test_bridge_follows_a_killed_server_to_the_next_one_on_its_socket(sock_dir, demo_vault):
    sock = sock_dir / "v.sock"

    async def serve():
        proc = await asyncio.create_subprocess_exec(
            *VAULTWATCH,
            "serve",
            str(demo_vault),
            "--socket",
            str(sock),
            cwd=str(ROOT),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert str(sock) in (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        return proc

    first = await serve()
    try:
        bridge = await RawBridge.start("--socket", str(sock))
        await bridge.handshake()
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "list_tags", "arguments": {"limit": 1}},
            }
        )
        assert (await bridge.receive())["result"]["structuredContent"]["result"]
        first.send_signal(signal.SIGKILL)  # a crash: the socket file stays behind
        await first.wait()
        assert os.path.exists(sock)
        second = await serve()  # cleans the leftover up and serves again
    finally:
        if first.returncode is None:
            first.kill()
            await first.wait()
    try:
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "list_documents", "arguments": {"limit": 1}},
            }
        )
        reply = await bridge.receive()
        assert reply["id"] == 3 and reply["result"]["structuredContent"]["total"] == 43
        assert bridge.proc.returncode is None
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0
    finally:
        second.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(second.wait(), 10) == 0
    assert not os.path.exists(sock)


async def test_bridge_exits_cleanly_on_stdin_eof_and_closes_the_session(demo, sock_dir, events):
    seen = events(demo)
    async with serving(demo, sock_dir / "v.sock") as host:
        bridge = await RawBridge.start("--socket", host.socket_path)
        await bridge.handshake()
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "read", "arguments": {"path": "index.md", "frontmatter_only": True}},
            }
        )
        bridge.proc.stdin.close()  # EOF right behind the request: its answer still comes
        reply = await bridge.receive()
        assert reply["id"] == 3 and reply["result"]["structuredContent"]["title"] == "Vault map"
        assert await bridge.exit_code() == 0
        await await_until(lambda: not host.agents(), what="the bridge's session ended")
    gone = [e for e in seen if isinstance(e, AgentConnected) and not e.connected]
    assert [e.agent for e in gone] == ["raw-client/0.1"]


async def test_bridge_answers_garbage_with_a_parse_error(demo, sock_dir):
    async with serving(demo, sock_dir / "v.sock") as host:
        bridge = await RawBridge.start("--socket", host.socket_path)
        await bridge.send(b"this is not json")
        reply = await bridge.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        assert (await bridge.handshake())["id"] == 1  # and keeps working
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0


async def test_a_cancelled_call_is_cancelled_upstream_and_its_reply_dropped(demo, sock_dir):
    started = asyncio.Event()
    cancelled = asyncio.Event()

    def register(server, env) -> None:
        async def hold(seconds: float = 30.0) -> str:
            started.set()
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "done"

        server.add_tool(hold, name="hold", description="Test tool: wait `seconds`.")

    async with serving(demo, sock_dir / "v.sock", extra_tools=[register]) as host:
        bridge = await RawBridge.start("--socket", host.socket_path)
        await bridge.handshake()
        await bridge.send(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "hold", "arguments": {"seconds": 2}}}
        )
        await asyncio.wait_for(started.wait(), 10)
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 9, "reason": "the user pressed Esc"},
            }
        )
        await asyncio.wait_for(cancelled.wait(), 10)  # the server stopped working on it
        await asyncio.sleep(2.5)  # past the time the call would have finished
        await bridge.send({"jsonrpc": "2.0", "id": 10, "method": "ping"})
        reply = await bridge.receive()
        assert reply["id"] == 10  # nothing for id 9 came before it: its reply, if any, was dropped
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0
        rest = await bridge.proc.stdout.read()
        assert b'"id":9' not in rest


async def test_a_client_that_pipelines_the_handshake_gets_no_missing_session_error(demo, sock_dir):
    """initialize, initialized and tools/list written at once (as the benchmark and some clients do): the
    notification waits for initialize's session id too (it was sent without one: 'Missing session ID')."""
    async with serving(demo, sock_dir / "v.sock") as host:
        bridge = await RawBridge.start("--socket", host.socket_path)
        await bridge.send(
            b"\n".join(
                json.dumps(m).encode() for m in (INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            )
        )
        replies = [await bridge.receive(), await bridge.receive()]
        assert [r.get("id") for r in replies] == [1, 2], replies
        assert replies[1]["result"]["tools"]
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0
        assert await bridge.proc.stdout.read() == b""


HEAVY = (
    "mcp",
    "mcp_types",
    "pydantic",
    "textual",
    "yaml",
    "frontmatter",
    "starlette",
    "uvicorn",
    "httpx2",
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "sniffio",
    "certifi",
    "idna",
    "vaultwatch.core.vault",
    "vaultwatch.core.index",
    "vaultwatch.core.markdown",
    "vaultwatch.core.query",
    "vaultwatch.core.search",
    "vaultwatch.core.edit",
    "vaultwatch.core.review",
    "vaultwatch.tui.commands.cli",
    "vaultwatch.tui.app",
    "vaultwatch.mcp_server.server",
    "vaultwatch.mcp_server.host",
)


def test_the_bridge_command_imports_nothing_heavy(sock_dir):
    """MCP clients wait for the bridge's first answer: `vaultwatch bridge` runs on the standard library,
    the relay and the vault lock's reader (tui/entry.py), never the SDK, an HTTP library, the index or the TUI."""
    done = subprocess.run(
        [*VAULTWATCH, "bridge", "--socket", str(sock_dir / "none.sock")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
        input=b"",
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0 and b"no vaultwatch is running" in done.stderr
    modules = {
        ln.rsplit("|", 1)[1].strip() for ln in done.stderr.decode().splitlines() if ln.startswith("import time:")
    }
    assert {"vaultwatch.mcp_server.bridge", "vaultwatch.mcp_server.launch"} <= modules  # the relay itself was imported
    light = {"vaultwatch.core.review", "vaultwatch.core.review.guardenv"}  # the rules' paths: standard library
    heavy = sorted(m for m in modules - light if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == []


MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw-client", "version": "0.1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}  # what the SDK's client sends in mode="auto"


@pytest.mark.timing
async def test_client_shutdown_does_not_wait_on_an_open_subscription_stream(demo, sock_dir):
    """2026-07-28: a client leaves with its subscriptions/listen stream open (it stays open until the
    client goes): stdin's end does not wait for that stream's answer, only for answers still due."""
    async with serving(demo, sock_dir / "v.sock") as host:
        drain = 120.0  # a bridge that waited on the stream would sit out the whole drain
        bridge = await RawBridge.start(
            "--socket", host.socket_path, env={**os.environ, "VAULTWATCH_BRIDGE_DRAIN": str(drain)}
        )
        await bridge.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN}})
        assert "tools" in (await bridge.receive())["result"]["capabilities"]
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "id": "listen-1",
                "method": "subscriptions/listen",
                "params": {"notifications": {"toolsListChanged": True}, "_meta": MODERN},
            }
        )
        ack = await bridge.receive()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        await bridge.send({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": MODERN}})
        assert (await bridge.receive())["id"] == 2
        started = time.monotonic()
        bridge.proc.stdin.close()
        assert await bridge.exit_code(timeout=drain) == 0
        assert time.monotonic() - started < drain / 2


async def test_a_real_write_cut_off_by_a_switch_is_said_maybe_applied_never_resent_and_a_retry_applies_once(
    tmp_path, sock_dir, monkeypatch
):
    """A `write` in flight (held at the approval gate) when its server stops: the client hears that it may or
    may not have been applied, the bridge does not send it to the next server (which never applies it), and
    the agent's retry is applied once."""
    from vaultwatch.core.review import approval
    from vaultwatch.core.review.approval import ApprovalGate
    from vaultwatch.core.review.journal import journal_for
    from vaultwatch.core.vault import Vault

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n")
    vault = Vault(root)
    vault.load()
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    leave = gate.attend()  # nobody decides: the write waits at the gate
    path = sock_dir / "v.sock"
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "write", "arguments": {"path": "New.md", "content": "once\n"}},
    }
    async with serving(vault, path) as host:
        bridge = await RawBridge.start("--socket", host.socket_path)
        await bridge.handshake()
        await bridge.send(call)
        await await_until(gate.pending, what="the write reached the gate")
        host.stop()
    reply = await bridge.receive(timeout=30)
    assert reply["id"] == 7 and reply["error"]["message"] == MAYBE_APPLIED
    leave()
    approval.attach(vault, None)
    assert not (root / "New.md").exists()
    async with serving(vault, path):  # the next server: the cut-off write is not sent to it again
        await bridge.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        assert (await bridge.receive(timeout=30))["id"] == 8
        assert not (root / "New.md").exists()
        await bridge.send({**call, "id": 9})  # the agent checks, then retries: applied once
        answer = await bridge.receive(timeout=30)
        assert answer["id"] == 9 and not answer["result"]["isError"]
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0
    assert (root / "New.md").read_text() == "once\n"
    assert len(journal_for(vault).changes()) == 1  # one change: the retry


async def test_a_line_break_in_what_becomes_a_header_is_refused_and_never_sent(demo, sock_dir):
    """The bridge writes the 2026-07-28 envelope's protocol version and the method as HTTP headers:
    with CRLF in them an agent could add headers, or smuggle a request of its own (the person's
    desk lives on the same socket). The client hears an invalid request; the bridge goes on."""
    smuggled = "2026-07-28\r\ncontent-length: 0\r\n\r\nPOST /vaultwatch/person HTTP/1.1\r\nx: "
    async with serving(demo, sock_dir / "v.sock") as host:
        bridge = await RawBridge.start("--socket", host.socket_path)
        await bridge.handshake()
        meta = {"io.modelcontextprotocol/protocolVersion": smuggled}
        call = {"name": "list_documents", "arguments": {}, "_meta": meta}
        await bridge.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call})
        reply = await bridge.receive()
        assert reply["id"] == 7 and reply["error"]["code"] == -32600, reply
        assert "not sent to vaultwatch" in reply["error"]["message"]
        modern = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
        await bridge.send({"jsonrpc": "2.0", "id": 8, "method": "tools/list\r\nx-injected: 1", "params": modern})
        reply = await bridge.receive()
        assert reply["id"] == 8 and reply["error"]["code"] == -32600, reply
        await bridge.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "list_documents"}})
        assert "result" in await bridge.receive()  # and keeps working
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0
