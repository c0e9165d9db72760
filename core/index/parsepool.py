"""Parse a whole walked vault into index entries: in a pool of processes for a large vault.

`scan` is the cold load (no entry cache); `parse_all` parses chunks of files
(`core.index.scan.parse_chunk`) with a pool of processes, for it and for the entry cache's warm
scan (core.index.warmscan).
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util  # its exit handler is registered before ours (see _kill_at_exit)
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol, TypeGuard

from vaultwatch.core.index.freshproc import CONTEXT as FRESH
from vaultwatch.core.index.freshproc import FreshContext
from vaultwatch.core.index.scan import FileFact, ScanConfig, entry_for, parse_chunk, walk
from vaultwatch.core.index.sharing import Sharing
from vaultwatch.core.markdown import parse  # noqa: F401  (scan imports it per note; the forkserver preloads it here)
from vaultwatch.core.memory import collector_paused
from vaultwatch.core.model import Entry, Skipped

if TYPE_CHECKING:
    import multiprocessing.context

ProgressFn = Callable[[int, int], None]
PARALLEL_MIN_FILES = 3000
# files a worker parses per message: small enough that the hands (workers and, in a threaded
# process, the loading thread) end within a short chunk of each other, big enough that a message's
# own cost is nothing beside its parse
CHUNK = 100
# The loading thread parses beside the workers (parse_all's `here`) for a parse of fewer files.
# There the parse is the process tree's peak, and a worker less is that much less. A bigger
# parse is all the workers': the notes a thread parses leave their passing objects scattered
# among the long-lived entries in its process's heap, which then stays bigger, while a big
# vault's peak comes later (its first full-text build), long after the workers are gone.
HERE_MAX_FILES = 20_000
# A parse of the workers alone (a big one, or any in a single-threaded process, which forks its
# workers) hands them chunks ten times bigger: no hand in the collecting process has to end close
# to theirs, and each chunk is a message the loading thread wakes to collect, unpickle and report as
# progress beside the app's own work. With the small chunks a first launch of the TUI on a big vault
# kept a bigger heap for good, and loads of every kind took longer.
WORKERS_CHUNK = 1000
_MODULE = "vaultwatch.core.index.parsepool"


def _thread_is_a_hand(ctx: object, here: bool) -> TypeGuard[FreshContext]:
    """Whether `parse_all(..., here)` in `ctx` has the loading thread parse beside fresh workers: a
    threaded process (whose workers are fresh interpreters), and `here`. The one rule for its hands and
    its chunks' size."""
    return here and isinstance(ctx, FreshContext)


def chunk_size(here: bool) -> int:
    """Files a chunk of `parse_all(..., here)` holds: small only where the loading thread is one of the
    hands."""
    return CHUNK if _thread_is_a_hand(process_context(_MODULE), here) else WORKERS_CHUNK


# What a worker process's start raises when no process can be had (sandbox, fd limits) or the
# start itself failed (in the TUI under many agents one raised ValueError('bad value(s) in
# fds_to_keep')): every caller of process_context catches these and does the work in-process.
START_FAILED = (OSError, RuntimeError, ValueError, multiprocessing.ProcessError)


def parse_all(chunks: Iterable[list[FileFact]], hands: int, here: bool = True) -> Iterator[list[Entry | Skipped]]:
    """`parse_chunk` of every chunk, in the order they finish, by `hands` parsers in all. In a
    multi-threaded process (the server, the TUI), with `here`, the calling thread is one of them,
    beside `hands - 1` fresh worker processes: on two cores one worker, not two, so one
    interpreter's start-up and memory fewer, and the chunks this thread parses never travel
    through a pipe. Without `here` (see HERE_MAX_FILES), or in a single-threaded process (which
    forks its workers), `hands` workers parse and this thread collects. `chunks` is drawn lazily,
    as hands are free. Raises one of START_FAILED when the workers cannot be started or one
    fails: callers then parse everything in-process."""
    ctx = process_context(_MODULE)
    if _thread_is_a_hand(ctx, here):
        with ctx.Pool(hands - 1) as fresh:
            yield from fresh.imap_shared(parse_chunk, chunks)
        return
    with ctx.Pool(hands) as pool:
        yield from pool.imap_unordered(parse_chunk, chunks)


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

    Parsing is CPU-bound Python, so large vaults are parsed by `workers` hands (one per core
    by default: see parse_all) fed with chunks while the walk is still going; small vaults, or
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
    size = chunk_size(True)

    def chunks() -> Iterator[list[FileFact]]:
        for i in range(0, len(first) - size + 1, size):  # the look-ahead in whole chunks too
            seen[0] += size
            yield first[i : i + size]
        batch = first[len(first) - len(first) % size :]
        for found in walked:  # runs in the pool's feeder thread, overlapping the parse
            if isinstance(found, FileFact):
                batch.append(found)
                if len(batch) >= size:
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
    for batch in parse_all(chunks(), workers):
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
