"""`serve --stdio` answers the handshake before the SDK is imported (mcp_server/stdiofront.py), with
the SDK's own bytes: real processes, raw JSON-RPC lines, answers compared byte for byte with the SDK
serving stdio on its own."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp_testing import ROOT, VAULTWATCH

from tests.waiting import wait_until

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": "tools-é", "method": "tools/list"}
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}  # only the SDK answers it (a listing after it is the SDK's)
LISTING = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "list_documents", "arguments": {"limit": 2}},
}


def sdk_answers(vault_path: Path, built: dict, *messages: dict) -> dict:
    """The SDK alone: what MCPServer.run_stdio_async writes for the same server (built with `built`), its
    answers by id. Its own stdio transport (mcp.server.stdio.stdio_server), in this process on in-memory
    lines instead of a child's pipes (a process per reference was most of these tests' time): the client's
    messages, then the end of input once every request has its answer, as `exchange` does."""
    import anyio
    from mcp.server.stdio import stdio_server

    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server.server import build_server

    want = {json.dumps(m["id"]) for m in messages if "id" in m}
    lines: list[bytes] = []

    class Input:
        def __init__(self) -> None:
            self.answered = anyio.Event()

        async def __aiter__(self):
            for message in messages:
                yield json.dumps(message, ensure_ascii=False) + "\n"
            await self.answered.wait()

    class Output:
        async def write(self, text: str) -> None:
            lines.append(text.removesuffix("\n").encode())
            if want <= {json.dumps(json.loads(line).get("id")) for line in lines}:
                stdin.answered.set()

        async def flush(self) -> None:
            pass

    stdin = Input()
    vault = Vault(vault_path)
    vault.load()
    try:
        server, _ = build_server(vault, **built)
        lowlevel = server._lowlevel_server  # as run_stdio_async runs it

        async def run() -> None:
            async with stdio_server(stdin=stdin, stdout=Output()) as (read, write):  # type: ignore[arg-type]
                await lowlevel.run(read, write, lowlevel.create_initialization_options())

        anyio.run(run)
    finally:
        vault.stop()
    return by_id(lines)


# the front started as tui/entry.py starts it; at the end it reports how many answers it sent itself, and how
# many of them before the SDK was imported
EARLY = """
import sys
from vaultwatch.mcp_server import stdiofront
front = stdiofront.start(sys.argv[1:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[1:])
print(f"early={front.answered_early} before_sdk={front.before_sdk}", file=sys.stderr, flush=True)
sys.exit(code)
"""


def exchange(
    cmd: list[str], env: dict, *messages: dict, stderr_says: str = "", expect: int = 0
) -> tuple[list[bytes], str]:
    """Send `messages`, wait for an answer to each request (and for `stderr_says` on stderr), close stdin;
    every stdout line and stderr (the process must exit `expect`). (stdin's end stops a stdio server: answers
    still due are dropped.)"""
    want = {m["id"] for m in messages if "id" in m}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    err: list[bytes] = []

    def read_stderr() -> None:
        while chunk := os.read(proc.stderr.fileno(), 1 << 16):
            err.append(chunk)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        proc.stdin.write(b"".join(json.dumps(m, ensure_ascii=False).encode() + b"\n" for m in messages))
        proc.stdin.flush()
        lines, seen, buf = [], set(), b""
        deadline = time.monotonic() + 120
        while not want <= seen and time.monotonic() < deadline:
            if select.select([proc.stdout], [], [], 0.5)[0]:
                chunk = os.read(proc.stdout.fileno(), 1 << 20)
                assert chunk, f"stdout closed early: {b''.join(err).decode()[-2000:]}"
                *done, buf = (buf + chunk).split(b"\n")
                lines += done
                seen |= {json.loads(line).get("id") for line in done}
        assert want <= seen, f"no answer to {want - seen}"
        if stderr_says:
            wait_until(
                lambda: stderr_says.encode() in b"".join(err),
                timeout=max(0.0, deadline - time.monotonic()),
                what=f"{stderr_says!r} on stderr",
            )
        proc.stdin.close()
        lines += [ln for ln in (buf + proc.stdout.read()).splitlines() if ln.strip()]
        assert proc.wait(60) == expect, b"".join(err).decode()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    return lines, b"".join(err).decode()


def by_id(lines: list[bytes]) -> dict:
    out: dict = {}
    for raw in lines:
        key = json.loads(raw).get("id")
        assert key not in out, f"two answers to {key!r}"
        out[key] = raw
    return out


def serve(vault: Path, *extra: str) -> list[str]:
    return [*VAULTWATCH, "serve", str(vault), "--stdio", *extra]


# `vaultwatch` (tui/entry.py) with the tools/list shipped with the package (toollist.py) taken as made for
# another SDK: the front answers a tools/list only from its cache, which the SDK's answers fill
UNSHIPPED = """
import sys
from vaultwatch.mcp_server import toollist
toollist.installed = lambda: {"mcp": "another"}
from vaultwatch.tui.entry import main
sys.exit(main(sys.argv[1:]))
"""


def serve_unshipped(vault: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", UNSHIPPED, "serve", str(vault), "--stdio", *extra]


@dataclass(frozen=True)
class Warm:
    """A first start's answers on `vault`, and the cache and state folders it left under `base`."""

    vault: Path
    base: Path
    first: dict

    def into(self, env: dict) -> Path:
        """Give `env` (a test's own folders) what the first start left; the vault it was on."""
        for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME"):
            shutil.copytree(self.base / name, env[name], symlinks=True, dirs_exist_ok=True)
        return self.vault


WARM = "stdio_front_warm"  # the xdist group of the tests that start from `warm`: one first start for them


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Warm:
    """One first start of `serve --stdio` (no cache yet) on a vault of this module's, for the tests that
    go on from where it left off: each takes a copy of its cache and state folders, the state its own
    first start would leave (a process per test for that was a good part of these tests' time)."""
    from vaultwatch.core.vault import demo_vault_path

    base = tmp_path_factory.mktemp("warm")
    vault = base / "demo"
    shutil.copytree(demo_vault_path(), vault, symlinks=True)
    env = {**os.environ, **{name: str(base / name) for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME")}}
    first = by_id(exchange(serve_unshipped(vault), env, INIT, INITIALIZED, TOOLS)[0])
    return Warm(vault, base, first)


@pytest.mark.xdist_group(WARM)
def test_the_handshake_from_the_cache_is_the_sdks_answer_byte_for_byte_and_comes_before_the_sdk(warm, env):
    reference = sdk_answers(warm.vault, {}, INIT, INITIALIZED, TOOLS)
    assert set(reference) == {1, "tools-é"}
    assert warm.first == reference  # no cache yet: the SDK answered
    vault = warm.into(env)
    cached = list((Path(env["XDG_CACHE_HOME"]) / "vaultwatch" / "handshake").glob("*.json"))
    assert len(cached) == 1
    lines, err = exchange(
        [sys.executable, "-c", EARLY, "serve", str(vault), "--stdio"], env, INIT, INITIALIZED, TOOLS, PING, LISTING
    )
    assert "early=2 before_sdk=2" in err  # both answered before the SDK was imported
    answers = by_id(lines)  # the SDK's answers to the replayed initialize and tools/list were not sent again
    assert set(answers) == {1, "tools-é", "ping", 3}
    assert answers[1] == reference[1] and answers["tools-é"] == reference["tools-é"]
    listing = json.loads(answers[3])["result"]  # the SDK took the session over: initialized by the replay
    assert not listing["isError"] and listing["structuredContent"]["returned"] == 2


@pytest.mark.xdist_group(WARM)
def test_a_cached_answer_that_differs_from_the_sdks_is_corrected(warm, env):
    demo_vault = warm.into(env)
    [path] = (Path(env["XDG_CACHE_HOME"]) / "vaultwatch" / "handshake").glob("*.json")
    good = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**good, "tools/list": {"2025-06-18": '{"tools":[]}'}}), encoding="utf-8")
    # the SDK checks the front's answers when it runs: a ping (only the SDK answers it) has it run
    stale, err = exchange(serve(demo_vault), env, INIT, INITIALIZED, TOOLS, PING, stderr_says="differs from the cached")
    assert json.loads(by_id(stale)["tools-é"])["result"] == {"tools": []}  # sent before the SDK could say otherwise
    assert "differs from the cached one" in err
    assert json.loads(path.read_text(encoding="utf-8")) == good
    again = by_id(exchange(serve(demo_vault), env, INIT, INITIALIZED, TOOLS)[0])
    assert json.loads(again["tools-é"])["result"]["tools"]


@pytest.mark.xdist_group(WARM)
def test_other_options_have_answers_of_their_own(warm, env):
    demo_vault = warm.into(env)  # the cache a start without options left
    everything = warm.first
    read_only = by_id(exchange(serve_unshipped(demo_vault, "--read-only"), env, INIT, INITIALIZED, TOOLS)[0])
    names = {t["name"] for t in json.loads(read_only["tools-é"])["result"]["tools"]}
    assert "list_documents" in names and "write" not in names
    assert "write" in {t["name"] for t in json.loads(everything["tools-é"])["result"]["tools"]}
    assert len(list((Path(env["XDG_CACHE_HOME"]) / "vaultwatch" / "handshake").glob("*.json"))) == 2


@pytest.mark.long
@pytest.mark.xdist_group(WARM)
def test_an_initialize_the_front_does_not_know_goes_to_the_sdk(warm, env):
    demo_vault = warm.into(env)
    odd = {**INIT, "id": 5, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}}  # negotiated down
    lines, _ = exchange(serve(demo_vault), env, odd, INITIALIZED, TOOLS)
    answers = by_id(lines)
    assert json.loads(answers[5])["result"]["protocolVersion"] != "1999-01-01"
    assert json.loads(answers["tools-é"])["result"]["tools"]
    broken = {**INIT, "id": 6, "params": {"protocolVersion": "2025-06-18"}}  # no clientInfo: the SDK refuses it
    answers = by_id(exchange(serve(demo_vault), env, broken)[0])
    assert "error" in json.loads(answers[6])


def initialize(version: str, request_id: int = 1) -> dict:
    return {**INIT, "id": request_id, "params": {**INIT["params"], "protocolVersion": version}}


# (options on the command line, the same for build_server, the protocol version the client asks for):
# every version the SDK knows, one that it does not, and each option that changes the answer or might
FIRST_STARTS = [
    ((), {}, "2024-11-05"),
    (("--read-only",), {"read_only": True}, "2025-03-26"),
    (("--tool-prefix", "vw_"), {"tool_prefix": "vw_"}, "2025-11-25"),
    (
        ("--compat", "vault-cortex,obsidian-mcp", "--max-answer-bytes", "20000"),
        {"compat": ["vault-cortex", "obsidian-mcp"], "max_answer_bytes": 20000},
        "2026-07-28",
    ),
    (("--tool-prefix=vault_", "--read-only"), {"tool_prefix": "vault_", "read_only": True}, "1999-01-01"),
]


@pytest.mark.parametrize(("options", "built", "version"), FIRST_STARTS, ids=[v for *_, v in FIRST_STARTS])
def test_the_first_start_answers_initialize_before_the_sdk_with_the_sdks_bytes(
    demo_vault_ro, env, options, built, version
):
    """No cache yet (a fresh cache folder): the answer comes from mcp_server/handshake.py, before the SDK
    is imported, and is what the SDK writes byte for byte; the SDK's own answer is not sent again."""
    reference = sdk_answers(demo_vault_ro, built, initialize(version))
    lines, err = exchange(
        [sys.executable, "-c", EARLY, "serve", str(demo_vault_ro), "--stdio", *options],
        env,
        initialize(version),
        INITIALIZED,
        PING,
        {**LISTING, "params": {**LISTING["params"], "name": built.get("tool_prefix", "") + "list_documents"}},
    )
    assert "early=1 before_sdk=1" in err
    answers = by_id(lines)
    assert set(answers) == {1, "ping", 3}
    assert answers[1] == reference[1]
    assert not json.loads(answers[3])["result"]["isError"]  # the SDK took the session over


def test_handshake_answers_are_the_sdks_for_every_version_and_option(demo_vault_ro):
    """In-process, every protocol version x the options: handshake.py's initialize result is the SDK's."""
    from mcp.server.runner import ServerRunner
    from mcp_types import InitializeResult
    from mcp_types.methods import serialize_server_result
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server import handshake
    from vaultwatch.mcp_server.server import build_server

    vault = Vault(demo_vault_ro)
    try:
        for _, built, _ in FIRST_STARTS:
            server, _ = build_server(vault, **built)
            for version in (*KNOWN_PROTOCOL_VERSIONS, "1999-01-01", ""):
                params = initialize(version)["params"]
                sdk = ServerRunner._handle_initialize(_Runner(server), params)
                assert isinstance(sdk, InitializeResult)
                want = serialize_server_result(
                    "initialize",
                    sdk.protocol_version,  # the SDK's wire sieve
                    sdk.model_dump(by_alias=True, mode="json", exclude_none=True),
                )
                got = handshake.initialize_result(version, tool_prefix=built.get("tool_prefix", ""))
                assert json.loads(got) == want, (built, version)
    finally:
        vault.stop()


class _Runner:
    """What ServerRunner._handle_initialize reads of its runner."""

    def __init__(self, server) -> None:
        self.server = server._lowlevel_server
        self.init_options = None
        self._negotiate_initialize = __import__("mcp.server.runner").server.runner.ServerRunner._negotiate_initialize


@pytest.mark.long
@pytest.mark.xdist_group(WARM)
def test_a_second_stdio_server_refuses_every_call_naming_the_running_one(warm, env):
    """Another server holds the vault: the client's initialize (and every later request) is answered with
    an error naming that server and the bridge that reaches it; nothing is answered from the cache."""
    demo_vault = warm.into(env)  # a warm cache: it must not be used
    holder = subprocess.Popen(
        [*VAULTWATCH, "serve", str(demo_vault)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert b"serving" in holder.stdout.readline()
        lines, err = exchange(serve(demo_vault), env, INIT, INITIALIZED, TOOLS, LISTING, expect=2)
        answers = by_id(lines)
        assert set(answers) == {1, "tools-é", 3}
        for answer in answers.values():
            error = json.loads(answer)["error"]
            assert f"pid {holder.pid}" in error["message"] and "vaultwatch bridge --socket" in error["message"]
        assert f"pid {holder.pid}" in err
    finally:
        holder.terminate()
        holder.wait(30)


# as EARLY, and it records which of the modules a first answer does not need were loaded when the front
# sent its first answer to a tools/call (the listing)
LEAN = """
import sys
from vaultwatch.mcp_server import stdiofront
loaded = []
send = stdiofront.StdioFront._send_result
def recorded(self, id_text, result):
    if id_text == "3" and not loaded:
        later = ("asyncio", "mcp", "numpy", "vaultwatch.core.index.parsepool", "vaultwatch.core.search.embedprocess")
        loaded.append(sorted(m for m in later if m in sys.modules))
    send(self, id_text, result)
stdiofront.StdioFront._send_result = recorded
front = stdiofront.start(sys.argv[1:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[1:])
print(f"early={front.answered_early} loaded={loaded}", file=sys.stderr, flush=True)
sys.exit(code)
"""


def test_a_warm_first_listing_is_answered_before_asyncio_or_the_parse_pool_load(demo_vault, env):
    """What a warm start does before its first listing answer: the index from the entry cache and the
    listing. asyncio (the SDK's event loop), the parse pool (a parse of changed notes) and the embedding
    worker's module load afterwards, when something needs them."""
    an_hour_ago = time.time() - 3600  # notes edited seconds before the cache was written are parsed again
    for path in demo_vault.rglob("*"):
        if not path.is_symlink():
            os.utime(path, (an_hour_ago, an_hour_ago))
    script = [sys.executable, "-c", LEAN, "serve", str(demo_vault), "--stdio"]
    exchange(script, env, INIT, INITIALIZED, LISTING)  # a first start: it writes the entry cache
    lines, err = exchange(script, env, INIT, INITIALIZED, LISTING)
    assert "early=2 loaded=[[]]" in err, err[-2000:]  # the listing answered early, nothing of these loaded
    assert json.loads(by_id(lines)[3])["result"]["structuredContent"]["returned"] == 2
