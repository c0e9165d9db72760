"""Server lifecycle with real processes: one server per vault whatever the environment.

Every server here is a real `vaultwatch serve` process with its own environment (as MCP
clients spawn them: a trimmed environment, different XDG_RUNTIME_DIR); the vault's own lock
(core/disk/vaultlock.py) decides who serves it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from mcp_testing import ROOT, VAULTWATCH, end_server

from tests.waiting import wait_until


def client_env(runtime: Path | None, state: Path, **extra: str) -> dict[str, str]:
    """A trimmed environment like the one MCP clients give the commands they spawn."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "XDG_STATE_HOME": str(state),
        "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(state)),
    }
    if runtime is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime)
    env.update(extra)
    return env


def short_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


class Serve:
    """A `vaultwatch serve` process, started and waited for until it prints its socket."""

    def __init__(self, vault: Path, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [*VAULTWATCH, "serve", str(vault), *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        assert line.startswith("vaultwatch: serving "), (line, self.proc.stderr.read() if not line else "")
        self.socket = line.split(" on ", 1)[1].split(" (Ctrl+C", 1)[0]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def run(vault: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*VAULTWATCH, "serve", str(vault), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_a_second_server_in_another_environment_is_refused_naming_the_first_and_no_lock_outlives_one(
    demo_vault, tmp_path
):
    state = tmp_path / "state"
    first = Serve(demo_vault, client_env(short_dir("vwa"), state))
    try:
        assert first.socket.startswith("/tmp/vwa")
        other = client_env(short_dir("vwb"), state)  # another runtime folder: another socket path
        second = run(demo_vault, other)
        assert second.returncode == 2, second.stdout
        assert f"(pid {first.proc.pid}) already serves {demo_vault.resolve()}" in second.stderr
        assert first.socket in second.stderr  # how to reach the running one
        trimmed = client_env(None, state)  # no XDG_RUNTIME_DIR at all (the /tmp fallback)
        assert run(demo_vault, trimmed).returncode == 2
        stdio = run(demo_vault, other, "--stdio")
        assert stdio.returncode == 2 and f"(pid {first.proc.pid}) already serves" in stdio.stderr
        assert f"vaultwatch bridge --socket {first.socket}" in stdio.stderr
        # even with a state folder of its own (no record to read) the pid is named, from the lock
        alone = run(demo_vault, client_env(short_dir("vwc"), tmp_path / "elsewhere"))
        assert alone.returncode == 2 and f"(pid {first.proc.pid}) already serves" in alone.stderr
        assert first.proc.poll() is None  # the refused ones never disturbed the first
    finally:
        first.stop()
    again = Serve(demo_vault, client_env(short_dir("vwb"), state))  # the lock left with the first
    # nor does a killed server leave its lock behind
    again.proc.kill()
    again.proc.wait(5)
    third = Serve(demo_vault, client_env(short_dir("vwa"), state))
    third.stop()
    assert third.proc.returncode == 0


def test_serve_stdio_holds_the_vault_too(demo_vault, tmp_path):
    state = tmp_path / "state"
    env = client_env(short_dir("vwa"), state)
    stdio = subprocess.Popen(
        [*VAULTWATCH, "serve", str(demo_vault), "--stdio"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        init = (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
        )
        stdio.stdin.write(init)
        stdio.stdin.flush()
        assert b'"result"' in stdio.stdout.readline()  # answered (by the stdio front, once the lock is held)
        deadline = time.monotonic() + 60
        while (h := holder(str(demo_vault.resolve()))) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert h is not None and h.pid == stdio.pid  # serving
        second = run(demo_vault, client_env(short_dir("vwb"), state))
        assert second.returncode == 2
        assert f"(pid {stdio.pid}) already serves {demo_vault.resolve()} on stdio" in second.stderr
    finally:
        stdio.stdin.close()
        stdio.wait(10)


if not hasattr(os, "O_DIRECTORY"):  # pragma: no cover
    pytestmark = pytest.mark.skip("the vault lock needs O_DIRECTORY (POSIX)")


# -- the bridge starts a headless server when none runs -----------------------------------------

import asyncio  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

from vaultwatch.core.disk.vaultlock import holder  # noqa: E402

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "life-agent", "version": "1"},
    },
}


class Bridge:
    """`vaultwatch bridge --vault V` as a client spawns it, spoken to in raw JSON-RPC lines."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 100

    @classmethod
    async def start(cls, vault: Path, env: dict[str, str], *args: str) -> Bridge:
        args = args if "--idle-exit" in args else (*args, "--idle-exit", "30")  # a leftover stops by itself
        proc = await asyncio.create_subprocess_exec(
            *VAULTWATCH,
            "bridge",
            "--vault",
            str(vault),
            *args,
            cwd=str(ROOT),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return cls(proc)

    async def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def receive(self, timeout: float = 30) -> dict:
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        assert line, "the bridge closed stdout: " + (await self.proc.stderr.read()).decode()
        return json.loads(line)

    async def handshake(self) -> dict:
        await self.send(INIT)
        reply = await self.receive()
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def call(self, name: str, arguments: dict, timeout: float = 30) -> dict:
        self.next_id += 1
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )
        reply = await self.receive(timeout)
        assert reply["id"] == self.next_id
        return reply

    async def close(self) -> int:
        if self.proc.returncode is None:
            self.proc.stdin.close()
            try:
                return await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                return await self.proc.wait()
        return self.proc.returncode


def stop_holder(vault: Path) -> None:
    """End the headless server a test's bridge started (it is detached: nobody else would)."""
    h = None
    for _ in range(30):  # one may still be starting (a bridge's last restart)
        h = holder(os.path.realpath(vault))
        # a server still starting is already in /proc (a bridge's Popen returns once its child has
        # exec'd), and once the test's bridges are closed no new one comes: with neither, none is left
        if h is not None or not headless_for(vault):
            break
        time.sleep(0.1)
    pids = {h.pid} if h is not None and h.pid else set()
    pids |= headless_for(vault)  # and any other this test's bridges started (the vault path is this test's own)
    for pid in pids:
        end_server(pid)
    wait_until(
        lambda: holder(os.path.realpath(vault)) is None and not headless_for(vault),
        timeout=10,
        what=f"the servers {pids} of {vault} gone",
    )


def headless_for(vault: Path) -> set[int]:
    """Pids of headless servers of exactly this vault (a test's own tmp path), from /proc."""
    want = os.fsencode(os.path.realpath(vault))
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    argv = fh.read().split(b"\0")
                if b"--headless" in argv and want in argv:
                    found.add(int(entry))
    return found


import contextlib  # noqa: E402


@pytest.fixture
def headless_cleanup(demo_vault):
    yield
    stop_holder(demo_vault)


async def test_client_first_the_bridge_starts_one_shared_headless_server_that_exits_once_idle(
    demo_vault, tmp_path, headless_cleanup
):
    state = tmp_path / "state"
    env = client_env(short_dir("vwa"), state)
    # idle for 1 s: the server the first bridge starts stops by itself once both bridges are gone
    first = await Bridge.start(demo_vault, env, "--idle-exit", "1")
    reply = await first.handshake()
    assert reply["result"]["serverInfo"]["name"] == "vaultwatch"
    listing = await first.call("list_documents", {"limit": 1})
    assert listing["result"]["structuredContent"]["total"] == 43
    served_by = holder(str(demo_vault.resolve()))
    assert served_by is not None and served_by.pid != first.proc.pid
    assert (state / "vaultwatch" / "logs").is_dir()  # the headless server logs to the state folder
    # a second bridge, in an environment without XDG_RUNTIME_DIR, attaches to the same server
    second = await Bridge.start(demo_vault, client_env(None, state))
    await second.handshake()
    assert (await second.call("list_tags", {"limit": 1}))["result"]["structuredContent"]["result"]
    assert holder(str(demo_vault.resolve())).pid == served_by.pid
    assert await first.close() == 0 and await second.close() == 0
    await _exits_by_itself(demo_vault, served_by.pid)


async def test_kill_9_of_the_headless_server_the_next_call_starts_a_new_one(demo_vault, tmp_path, headless_cleanup):
    env = client_env(short_dir("vwa"), tmp_path / "state")
    bridge = await Bridge.start(demo_vault, env)
    await bridge.handshake()
    assert (await bridge.call("list_documents", {"limit": 1}))["result"]["structuredContent"]["total"] == 43
    old = holder(str(demo_vault.resolve())).pid
    os.kill(old, signal.SIGKILL)
    reply = await bridge.call("list_documents", {"limit": 1})  # no new handshake from the client
    assert "result" in reply, reply
    assert reply["result"]["structuredContent"]["total"] == 43
    new = holder(str(demo_vault.resolve())).pid
    assert new != old
    assert await bridge.close() == 0


async def _exits_by_itself(demo_vault: Path, pid: int) -> None:
    for _ in range(200):  # 1 s idle after the session ended, then a clean stop
        if holder(str(demo_vault.resolve())) is None:
            break
        await asyncio.sleep(0.05)
    assert holder(str(demo_vault.resolve())) is None
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            os.kill(pid, 0)
            await asyncio.sleep(0.05)


async def test_a_bare_socket_a_crashed_server_left_starts_a_server_for_its_vault(
    demo_vault, tmp_path, headless_cleanup
):
    """`bridge --socket S` without --vault: the `.json` a killed server left beside S (in a private folder)
    names the vault, so the bridge starts a headless server for it on S."""
    env = client_env(short_dir("vwa"), tmp_path / "state")
    folder = short_dir("vws")
    sock = folder / "v.sock"
    (folder / "v.sock.json").write_text(
        json.dumps({"pid": 999999, "vault": str(demo_vault.resolve()), "socket": str(sock)})
    )
    proc = await asyncio.create_subprocess_exec(
        *VAULTWATCH,
        "bridge",
        "--socket",
        str(sock),
        "--idle-exit",
        "30",
        cwd=str(ROOT),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    bridge = Bridge(proc)
    assert (await bridge.handshake())["result"]["serverInfo"]["name"] == "vaultwatch"
    assert (await bridge.call("list_documents", {"limit": 1}))["result"]["structuredContent"]["total"] == 43
    served_by = holder(str(demo_vault.resolve()))
    assert served_by is not None and served_by.pid in headless_for(demo_vault) and sock.is_socket()
    assert await bridge.close() == 0
