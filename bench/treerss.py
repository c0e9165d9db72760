"""The peak resident memory of a process tree, sampled by a process of its own.

`python -m bench.treerss ROOT [SKIP,...]` samples every 10 ms the summed RSS of every process below
ROOT (ROOT itself left out, and the processes in SKIP with everything below them, and this sampler),
until its standard input closes; then it prints the peak in MiB. A process whose command line is
still ROOT's is left out too: it is ROOT forked to start a program that has not yet replaced it
(the client spawning a server), and its resident pages are ROOT's own, counted again. The tree is followed through each
thread's `children` file (Linux), so a sample reads a few files per process of the tree, not all of
/proc.

Why a process: sampling in a thread of the benchmark's own process held that process's interpreter for
~1 ms every 10 ms, and the client's calls timed there waited for it (a 10k whole listing through the
Python client measured 30-40 % slower with the sampler's thread running).
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Iterator

PERIOD_S = 0.01


def below(root: int, skip: set[int] | frozenset[int] = frozenset()) -> Iterator[int]:
    """Every process below `root` (children, theirs, ...), found through each thread's `children` file,
    leaving out those in `skip` with everything below them."""
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:  # gone since its parent named it
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children", "rb") as fh:
                    kids = fh.read().split()
            except OSError:
                continue
            for kid in map(int, kids):
                if kid not in skip:
                    todo.append(kid)
                    yield kid


def cmdline(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return None


def tree_pages(root: int, skip: set[int], unstarted: bytes | None = None) -> int:
    """Resident pages of every process below `root`, leaving out those in `skip` and their trees, and
    those whose command line is `unstarted` (forks of the root that have not yet run their program)."""
    total = 0
    for pid in below(root, skip):
        if unstarted is not None and cmdline(pid) == unstarted:
            continue
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                total += int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):  # gone since its parent named it
            continue
    return total


def main(argv: list[str]) -> int:
    root = int(argv[0])
    skip = {int(p) for p in argv[1].split(",") if p} if len(argv) > 1 else set()
    skip.add(os.getpid())
    unstarted = cmdline(root)
    peak = 0
    while not select.select([sys.stdin], [], [], PERIOD_S)[0]:
        peak = max(peak, tree_pages(root, skip, unstarted))
    peak = max(peak, tree_pages(root, skip, unstarted))
    print(round(peak * os.sysconf("SC_PAGE_SIZE") / 2**20, 2), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
