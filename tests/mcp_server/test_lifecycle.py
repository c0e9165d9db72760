"""Server lifecycle with real processes: one server per vault whatever the environment.

Every server here is a real `vaultwatch serve` process with its own environment (as MCP
clients spawn them: a trimmed environment, different XDG_RUNTIME_DIR); the vault's own lock
(core/vaultlock.py) decides who serves it.
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from mcp_testing import ROOT, VAULTWATCH


def client_env(runtime: Path | None, state: Path, **extra: str) -> dict[str, str]:
    """A trimmed environment like the one MCP clients give the commands they spawn."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"),
           "XDG_STATE_HOME": str(state), "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(state))}
    if runtime is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime)
    env.update(extra)
    return env


def short_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


class Serve:
    """A `vaultwatch serve` process, started and waited for until it prints its socket."""

    def __init__(self, vault: Path, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen([*VAULTWATCH, "serve", str(vault), *args], cwd=ROOT, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
    return subprocess.run([*VAULTWATCH, "serve", str(vault), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_a_second_server_in_another_environment_is_refused_naming_the_first(demo_vault, tmp_path):
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
    again.stop()
    assert again.proc.returncode == 0


def test_serve_stdio_holds_the_vault_too(demo_vault, tmp_path):
    state = tmp_path / "state"
    env = client_env(short_dir("vwa"), state)
    stdio = subprocess.Popen([*VAULTWATCH, "serve", str(demo_vault), "--stdio"], cwd=ROOT, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        init = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')
        stdio.stdin.write(init)
        stdio.stdin.flush()
        assert b'"result"' in stdio.stdout.readline()  # serving
        second = run(demo_vault, client_env(short_dir("vwb"), state))
        assert second.returncode == 2
        assert f"(pid {stdio.pid}) already serves {demo_vault.resolve()} on stdio" in second.stderr
    finally:
        stdio.stdin.close()
        stdio.wait(10)


def test_a_killed_server_leaves_no_lock_behind(demo_vault, tmp_path):
    state = tmp_path / "state"
    first = Serve(demo_vault, client_env(short_dir("vwa"), state))
    first.proc.kill()
    first.proc.wait(5)
    second = Serve(demo_vault, client_env(short_dir("vwb"), state))
    second.stop()
    assert second.proc.returncode == 0


if not hasattr(os, "O_DIRECTORY"):  # pragma: no cover
    pytestmark = pytest.mark.skip("the vault lock needs O_DIRECTORY (POSIX)")
