"""The vault lock changing hands between real processes: a taker that asks while the holder lets
go always learns who held it (or gets the lock), and a holder killed with -9 is never named
again. Both with /proc/locks and on the fallback that knows the holder only by its record."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from vaultwatch.core import platform
from vaultwatch.core.disk.vaultlock import VaultBusy, VaultLock, holder

ROOT = Path(__file__).resolve().parents[3]

# Takes the lock each time it reads a line, holds it a moment (so the taker is asking when it
# lets go), lets go, and says so only after.
HOLDER = """
import random, sys, time
from vaultwatch.core.disk.vaultlock import VaultBusy, VaultLock
lock = VaultLock(sys.argv[1])
record = None if sys.argv[2] == "none" else {"kind": "headless", "socket": None}
for line in sys.stdin:
    while True:
        try:
            lock.acquire(record=record)
            break
        except VaultBusy:
            time.sleep(0.001)
    print("held", flush=True)
    if line.strip() == "keep":
        time.sleep(3600)
    time.sleep(random.uniform(0, 0.004))
    lock.release()
"""


def _spawn(root: str, record: str = "headless") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, root, record],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _take(proc: subprocess.Popen[str], line: str = "take") -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == "held\n"


@pytest.mark.parametrize("proc_locks", [True, False], ids=["proc-locks", "record-only"])
def test_a_taker_asking_while_the_holder_lets_go_is_told_who_held_it(tmp_path, proc_locks):
    """Hundreds of hand-overs, the taker asking in a tight loop: every refusal names the process
    that held the lock. (The holder once deleted its record before letting go of the lock, so
    a taker could be refused by a lock nobody was said to hold, and a TUI taking the vault over
    from a headless server gave up on it.)"""
    root = os.path.realpath(tmp_path)
    proc = _spawn(root)
    refusals, nameless = 0, []
    try:
        with platform.force(proc=proc_locks):
            for round_ in range(300):
                _take(proc)
                lock = VaultLock(root)
                while True:
                    try:
                        lock.acquire(record={"kind": "tui"})
                        break
                    except VaultBusy as busy:
                        refusals += 1
                        if busy.holder.pid != proc.pid:
                            nameless.append((round_, busy.holder))
                lock.release()
    finally:
        proc.kill()
        proc.wait()
    assert refusals > 0  # the taker did ask while the lock was held
    assert nameless == []


def test_a_holder_killed_with_minus_9_is_never_named_again(tmp_path):
    """A headless server killed with -9 leaves its record; the next holder (here still without
    its own record, as between taking the lock and publishing) is not mistaken for it, so
    nobody sends the dead server's pid (perhaps another program's by now) a SIGTERM."""
    root = os.path.realpath(tmp_path)
    dead = _spawn(root)
    _take(dead, "keep")
    os.kill(dead.pid, signal.SIGKILL)
    dead.wait()
    successor = _spawn(root, record="none")
    try:
        _take(successor, "keep")
        for proc_locks in (True, False):
            with platform.force(proc=proc_locks):
                found = holder(root)
                assert found is not None
                assert found.pid != dead.pid and found.info.get("kind") != "headless", found
    finally:
        successor.kill()
        successor.wait()
