"""bench/treerss.py, the process that samples a benchmark's server tree: it sees a grandchild's memory,
leaves out what it was told to skip (with everything below it) and itself, and ends with the peak when its
input closes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MIB = 2**20
# a child that starts a grandchild holding 64 MiB of touched pages, says so, and waits for its input to close
HOLDER = (
    "import subprocess, sys\n"
    "g = subprocess.Popen([sys.executable, '-c', "
    "'import sys; b = bytearray(64 * 2**20); b[::4096] = b\"x\" * len(b[::4096]); print(1, flush=True); sys.stdin.read()'], "
    "stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n"
    "g.stdout.readline(); print(g.pid, flush=True); sys.stdin.read(); g.stdin.close(); g.wait()\n"
)

# a process that touches 64 MiB, then forks a child that never starts a program of its own (as a
# client's spawn looks before its exec), says the child's pid and waits for its input to close
FORKER = (
    "import os, sys\n"
    "b = bytearray(64 * 2**20); b[::4096] = b'x' * len(b[::4096])\n"
    "r, w = os.pipe()\n"
    "kid = os.fork()\n"
    "if kid == 0:\n"
    "    os.close(w); os.read(r, 1); os._exit(0)\n"
    "print(kid, flush=True); sys.stdin.read(); os.close(w); os.waitpid(kid, 0)\n"
)

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")


def sample(root: int, skip: list[int], seconds: float) -> float:
    sampler = subprocess.Popen(
        [sys.executable, "-m", "bench.treerss", str(root), ",".join(map(str, skip))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    time.sleep(seconds)
    out, _ = sampler.communicate("", timeout=30)
    assert sampler.returncode == 0
    return float(out.split()[-1])


def test_the_peak_counts_a_grandchild_and_leaves_out_what_it_skips_and_itself() -> None:
    from bench.common import descendants_rss

    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        grandchild = int(holder.stdout.readline())  # its pages are touched
        seen = sample(holder.pid, [], 0.3)  # below the holder: the grandchild alone
        assert 64 <= seen < 64 + 40, seen
        assert sample(holder.pid, [grandchild], 0.3) < 5  # skipped: nothing else is below the holder
        # from this process, every child it had before the sampler skipped: only the sampler is left,
        # and it counts not itself
        assert sample(os.getpid(), list(descendants_rss(os.getpid())), 0.3) < 5
    finally:
        holder.communicate("", timeout=30)


def test_a_fork_of_the_root_not_yet_started_is_not_counted() -> None:
    """Its pages are the root's own: counted, a client's spawn of a server would add the benchmark's
    whole memory to the server's peak."""
    forker = subprocess.Popen([sys.executable, "-c", FORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert forker.stdout is not None
        kid = int(forker.stdout.readline())
        assert Path(f"/proc/{kid}/statm").read_text().split()[1] != "0"  # resident: it would count
        assert sample(forker.pid, [], 0.3) < 5
    finally:
        forker.communicate("", timeout=30)
