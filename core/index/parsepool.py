"""Parse a whole walked vault into index entries: in a pool of processes for a large vault.

`scan` is the cold load (no entry cache); `parse_pool` and `parse_chunk` are the process pool
and its unit of work, shared with the entry cache's warm scan (core.index.warmscan).
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util  # its exit handler is registered before ours (see _kill_at_exit)
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from vaultwatch.core.index.freshproc import CONTEXT as FRESH
from vaultwatch.core.index.freshproc import FreshContext, FreshPool
from vaultwatch.core.index.scan import FileFact, ScanConfig, entry_for, walk
from vaultwatch.core.index.sharing import Sharing
from vaultwatch.core.markdown import parse  # noqa: F401  (scan imports it per note; the forkserver preloads it here)
from vaultwatch.core.memory import collector_paused
from vaultwatch.core.model import Entry, Skipped

if TYPE_CHECKING:  # multiprocessing.pool is imported when a pool is first made
    import multiprocessing.context
    import multiprocessing.pool

ProgressFn = Callable[[int, int], None]
PARALLEL_MIN_FILES = 3000
CHUNK = 1000


def parse_chunk(chunk: list[FileFact]) -> list[Entry | Skipped]:
    """Entries (or skips) for a chunk of files: the unit of work of a parse_pool worker."""
    return [entry_for(f) for f in chunk]


# What a worker process's start raises when no process can be had (sandbox, fd limits) or the
# start itself failed (in the TUI under many agents one raised ValueError('bad value(s) in
# fds_to_keep')): every caller of process_context catches these and does the work in-process.
START_FAILED = (OSError, RuntimeError, ValueError, multiprocessing.ProcessError)


def parse_pool(workers: int) -> multiprocessing.pool.Pool | FreshPool:
    """The process pool that parses chunks of files (the scanner's and the entry cache's). Raises
    one of START_FAILED when its processes cannot be started: every caller then parses in its
    own thread."""
    return process_context("vaultwatch.core.index.parsepool").Pool(workers)


class WorkerProcess(Protocol):
    """What a started worker process offers (multiprocessing's or a FreshProcess)."""

    @property
    def exitcode(self) -> int | None: ...

    def is_alive(self) -> bool: ...

    def join(self, timeout: float | None = None) -> None: ...

    def kill(self) -> None: ...


_killed_at_exit: set = set()  # started non-daemon processes to kill should the interpreter exit now


def _kill_at_exit() -> None:
    for proc in list(_killed_at_exit):
        if proc.is_alive():
            proc.kill()


atexit.register(_kill_at_exit)  # registered after multiprocessing's own exit handler, so it runs first


@contextmanager
def killed_at_exit(proc: WorkerProcess) -> Iterator[None]:
    """While the block runs, `proc` (a started process that is not a daemon, so that it can start
    processes of its own) is killed if the interpreter exits: multiprocessing's exit handler
    would otherwise wait for it to end (a person quitting the app mid-build would wait too)."""
    _killed_at_exit.add(proc)
    try:
        yield
    finally:
        _killed_at_exit.discard(proc)


def process_context(module: str, *, fork: bool = True) -> multiprocessing.context.ForkContext | FreshContext:
    """The context for CPU-bound worker processes running code of `module` that end with their
    work (a pool's `imap_unordered`, processes talking over pipes). `fork=False`: fresh
    interpreters always (for a parent that may be big by the time it starts them: a forked
    child's resident pages count again in the process tree's memory)."""
    # fork is cheapest, but forking a multi-threaded process (the server, the TUI) can deadlock
    # the child: there, each worker is a fresh interpreter. A forkserver would be a clean parent
    # too, but it and its resource tracker stay for the process's life once started.
    if fork and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return FRESH


def pool_context(module: str) -> multiprocessing.context.ForkContext | multiprocessing.context.ForkServerContext:
    """The multiprocessing context for a full `multiprocessing.Pool` (initializer, apply_async,
    terminate) running code of `module`: the embedding worker's."""
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["vaultwatch.core.index.parsepool", module])
    return ctx


def scan(
    root_real: str, config: ScanConfig, progress: ProgressFn | None = None, workers: int | None = None
) -> tuple[list[Entry], list[Skipped]]:
    """Walk and parse the whole vault. Returns (entries incl. folders, skipped).

    Parsing is CPU-bound Python, so large vaults are parsed by a pool of processes (one
    per core by default) fed with chunks while the walk is still going; small vaults, or
    a machine where no process can be started, are parsed in this process.
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    with collector_paused():  # 100k long-lived records: generational GC passes would cost seconds here
        if workers >= 2:
            try:
                return _scan_parallel(root_real, config, progress, workers)
            except _Sequential:
                pass
            except START_FAILED:
                pass  # no processes to be had, or a start that failed: parse here instead
        return _scan_here(root_real, config, progress)


class _Sequential(Exception):
    """The vault is too small for a process pool to pay off."""


def _split(root_real: str, config: ScanConfig) -> tuple[list[FileFact], list[Entry], list[Skipped]]:
    facts: list[FileFact] = []
    folders: list[Entry] = []
    skipped: list[Skipped] = []
    for found in walk(root_real, config):
        if isinstance(found, FileFact):
            facts.append(found)
        elif isinstance(found, Skipped):
            skipped.append(found)
        else:
            folders.append(found)
    return facts, folders, skipped


def _scan_here(root_real: str, config: ScanConfig, progress: ProgressFn | None) -> tuple[list[Entry], list[Skipped]]:
    facts, entries, skipped = _split(root_real, config)
    total = len(facts)
    sharing = Sharing()
    for done, fact in enumerate(facts, 1):
        out = entry_for(fact)
        sharing.share_all((out,))
        if isinstance(out, Skipped):
            skipped.append(out)
        else:
            entries.append(out)
        if progress is not None and done % 2000 == 0:
            progress(done, total)
    if progress is not None:
        progress(total, total)
    return entries, skipped


def _scan_parallel(
    root_real: str, config: ScanConfig, progress: ProgressFn | None, workers: int
) -> tuple[list[Entry], list[Skipped]]:
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    walked = iter(walk(root_real, config))
    first: list[FileFact] = []
    for found in walked:  # look ahead: a small vault never pays for a pool
        if isinstance(found, FileFact):
            first.append(found)
            if len(first) >= PARALLEL_MIN_FILES:
                break
        elif isinstance(found, Skipped):
            skipped.append(found)
        else:
            entries.append(found)
    else:
        raise _Sequential
    seen = [0]

    def chunks() -> Iterator[list[FileFact]]:
        batch = first
        for found in walked:  # runs in the pool's feeder thread, overlapping the parse
            if isinstance(found, FileFact):
                batch.append(found)
                if len(batch) >= CHUNK:
                    seen[0] += len(batch)
                    yield batch
                    batch = []
            elif isinstance(found, Skipped):
                skipped.append(found)
            else:
                entries.append(found)
        if batch:
            seen[0] += len(batch)
            yield batch

    done = 0
    sharing = Sharing()  # each chunk arrives with its own copies of the vault's repeated values
    with parse_pool(workers) as pool:
        for batch in pool.imap_unordered(parse_chunk, chunks()):
            sharing.share_all(batch)
            for out in batch:
                if isinstance(out, Skipped):
                    skipped.append(out)
                else:
                    entries.append(out)
            done += len(batch)
            if progress is not None:
                progress(done, max(done, seen[0]))
    if progress is not None:
        progress(done, done)
    return entries, skipped
