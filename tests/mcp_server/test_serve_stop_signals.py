"""A socket `vaultwatch serve` stops in order on SIGTERM, SIGINT or SIGHUP, and a second such signal,
while that orderly stop waits for a write under way, ends the process at once (as the person pressing
Ctrl+C twice expects; `serve --stdio` does the same: test_stdio_stop_signals.py).

Real parts: `vaultwatch serve` and `vaultwatch bridge` processes, raw JSON-RPC lines through the
bridge, a folder rename rewriting the links of many notes, real signals."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from mcp_testing import ROOT, VAULTWATCH
from test_early_calls import call
from test_front_calls import Lines
from test_stdio_front import INIT, INITIALIZED

WAIT_S = 120.0  # bound on a condition the tests wait for (each is met within a second or two here)
LINKING = 1500  # notes whose links the rename rewrites: enough to keep it under way for a while


def make_vault(root: Path) -> None:
    (root / "Proj").mkdir(parents=True)
    (root / "Links").mkdir()
    (root / "Proj" / "target.md").write_text("# target\n")
    for i in range(LINKING):
        (root / "Links" / f"l{i:04}.md").write_text(f"# l{i:04}\nsee [[Proj/target]]\n" + "filler\n" * 20)


def rewritten(root: Path) -> int:
    """How many linking notes link to the folder's new place now."""
    n = 0
    for i in range(LINKING):
        try:
            n += "[[Moved/target]]" in (root / "Links" / f"l{i:04}.md").read_text()
        except OSError:  # being replaced this moment
            pass
    return n


def serve(root: Path, sock: Path, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen(
        [*VAULTWATCH, "serve", str(root), "--socket", str(sock)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    line = proc.stdout.readline().decode()
    assert line.startswith("vaultwatch: serving "), (line, proc.stderr.read1().decode() if proc.poll() else "")
    return proc


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_second_signal_ends_a_stopping_server_at_once(tmp_path: Path, sock_dir: Path, env: dict, name: str) -> None:
    sig = getattr(signal, name)
    root = tmp_path / "v"
    make_vault(root)
    sock = sock_dir / "s.sock"
    proc = serve(root, sock, env)
    bridge = subprocess.Popen(
        [*VAULTWATCH, "bridge", "--socket", str(sock)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        lines = Lines(bridge)
        lines.send(INIT, INITIALIZED, call(2, {"limit": 1, "wait_for_pending_writes": True}))
        lines.until(2)
        lines.send(call(3, {"path": "Proj", "new_path": "Moved"}, name="rename"))
        deadline = time.monotonic() + WAIT_S
        while rewritten(root) < 10:
            assert proc.poll() is None and time.monotonic() < deadline, "the rename never got under way"
            time.sleep(0.002)
        proc.send_signal(sig)
        while sock.exists():  # the socket goes first: the orderly stop is under way
            assert proc.poll() is None and time.monotonic() < deadline, "the stop never began"
            time.sleep(0.002)
        under_way = rewritten(root) < LINKING
        proc.send_signal(sig)
        assert proc.wait(WAIT_S) == -sig
        assert under_way, "the rename ended before the second signal: nothing held the stop"
    finally:
        for p in (proc, bridge):
            p.kill()
            p.wait()
            for pipe in (p.stdin, p.stdout, p.stderr):
                if pipe is not None:
                    pipe.close()


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_one_signal_stops_it_in_order(tmp_path: Path, sock_dir: Path, env: dict, name: str) -> None:
    """A terminal closing (SIGHUP) stops it as SIGTERM and Ctrl+C do: the socket removed, status 0."""
    root = tmp_path / "v"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "a.md").write_text("# a\n")
    sock = sock_dir / "s.sock"
    proc = serve(root, sock, env)
    try:
        proc.send_signal(getattr(signal, name))
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0 and "vaultwatch: stopped" in err.decode(), (proc.returncode, err)
    assert not sock.exists()
