"""The cache-aware load: walk the vault, reuse every cached entry whose stat still matches, parse the rest.

The walk runs in a forked child while this process decodes the entry cache
(core.index.entrycache); files the cache does not know, or knows at another size, mtime or
inode, are parsed by the scanner's process pool (core.index.parsepool).
"""

from __future__ import annotations

import marshal
import os
import sys
import time
from collections.abc import Callable

from vaultwatch.core import settings
from vaultwatch.core.index.entrycache import EMPTY_GUARD, EntryCache, WarmStats
from vaultwatch.core.index.scan import FileFact, ScanConfig, entry_for, walk
from vaultwatch.core.index.sharing import Sharing
from vaultwatch.core.memory import collector_paused
from vaultwatch.core.model import FOLDER, Entry, Skipped

_FILE, _DIR, _SKIP = 0, 1, 2


def _walk_rows(root_real: str, config: ScanConfig) -> list[tuple]:
    """The walk as plain tuples (marshal-able): files, folders and skipped records, in path order.

    Path order lets the index build its sorted path list in one linear pass.
    """
    rows: list[tuple] = []
    prefix = root_real + os.sep
    for found in walk(root_real, config):
        if isinstance(found, FileFact):
            real = None if found.real == prefix + found.rel.replace("/", os.sep) else found.real
            rows.append((_FILE, found.rel, real, found.kind, found.size, found.mtime_ns, found.inode))
        elif isinstance(found, Skipped):
            rows.append((_SKIP, found.path, found.reason))
        else:
            rows.append((_DIR, found.path, found.mtime_ns, found.inode, found.title))
    rows.sort(key=_second)
    return rows


def _second(row: tuple) -> str:
    return row[1]


class _Walker:
    """Walks the vault in a forked child while this process decodes the cache (2 cores, 2x faster).

    The child only walks, marshals plain tuples into a pipe and `_exit`s: it touches no lock,
    file object or connection it inherited. Anything unusual (no fork, a failed child) falls
    back to walking here.
    """

    def __init__(self, root_real: str, config: ScanConfig) -> None:
        self.root_real, self.config = root_real, config
        self.pid = None
        if not sys.platform.startswith("linux") or settings.env("VAULTWATCH_NO_FORK"):
            return
        try:
            r, w = os.pipe()
        except OSError:
            return
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return
        if pid == 0:  # the child
            code = 1
            try:
                os.close(r)
                data = marshal.dumps(_walk_rows(root_real, config), 4)
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view) :]
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        self.pid, self.fd = pid, r

    def rows(self) -> list[tuple]:
        """The walk's rows (from the child when there is one)."""
        if self.pid is not None:
            chunks = []
            try:
                while True:
                    chunk = os.read(self.fd, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
            finally:
                os.close(self.fd)
                _, status = os.waitpid(self.pid, 0)
            if status == 0:
                try:
                    rows = marshal.loads(b"".join(chunks))
                    if isinstance(rows, list):
                        return rows
                except (ValueError, EOFError, TypeError):
                    pass
        return _walk_rows(self.root_real, self.config)


def _parse_many(facts: list[FileFact], progress: Callable[[int, int], None] | None) -> list[Entry | Skipped]:
    if not facts:  # the usual warm start: nothing changed, so nothing loads multiprocessing
        return []
    if progress is not None:  # the parse's size, before its first batch (a listener may start work beside it)
        progress(0, len(facts))
    from vaultwatch.core.index import parsepool

    if len(facts) >= parsepool.PARALLEL_MIN_FILES and (os.cpu_count() or 1) >= 2:
        try:
            out: list[Entry | Skipped] = []
            sharing = Sharing()
            chunks = [facts[i : i + parsepool.CHUNK] for i in range(0, len(facts), parsepool.CHUNK)]
            here = len(facts) < parsepool.HERE_MAX_FILES
            for batch in parsepool.parse_all(chunks, os.cpu_count() or 2, here):  # the scanner's own policy
                sharing.share_all(batch)
                out.extend(batch)
                if progress is not None:
                    progress(len(out), len(facts))
            return out
        except parsepool.START_FAILED:
            pass  # no processes, or a start that failed (see parsepool.parse_all): parse here instead
    out = []
    sharing = Sharing()
    for i, f in enumerate(facts, 1):
        out.append(entry_for(f))
        sharing.share_all(out[-1:])
        if progress is not None and i % 2000 == 0:
            progress(i, len(facts))
    return out


def warm_scan(
    cache: EntryCache,
    root_real: str,
    config: ScanConfig,
    progress: Callable[[int, int], None] | None = None,
    report: Callable[..., None] | None = None,
) -> tuple[list[Entry], list[Skipped]]:
    """Walk the vault and build its entries, reusing cached ones whose stat still matches.

    Changed buckets are marked dirty on `cache` (the caller flushes them). When the vault
    looks empty or unreadable but the cache knows more than EMPTY_GUARD entries, the cached
    entries are returned, `cache.hold` is set (so nothing overwrites the cache) and the
    condition is reported.
    """
    started = time.perf_counter()
    with collector_paused():  # 100k long-lived records: collections mid-load cost more than the load
        walker = _Walker(root_real, config)
        # decode while the child walks: in the common case (nothing changed) every entry is used
        cached, problems = cache.load_entries()
        if report:
            for problem in problems:  # a cache from another version is routine: say so quietly
                report(problem, "info" if problem == cache.VERSION_RESET else "warning")
        reason = "; ".join(problems) or None
        n_cached = len(cached)
        walked = walker.rows()
        entries: list[Entry] = []
        skipped: list[Skipped] = []
        to_parse: list[FileFact] = []
        prefix = root_real + os.sep
        pop = cached.pop
        n_files = 0
        for row in walked:
            tag = row[0]
            if tag == _FILE:
                n_files += 1
                _, rel, real, kind, size, mtime_ns, inode = row
                e = pop(rel, None)
                if (
                    e is not None
                    and e.mtime_ns == mtime_ns
                    and e.size_bytes == size
                    and e.inode == inode
                    and e.kind == kind
                ):
                    entries.append(e)
                else:
                    to_parse.append(
                        FileFact(rel, real or prefix + rel.replace("/", os.sep), kind, size, mtime_ns, inode)
                    )
            elif tag == _DIR:
                _, rel, mtime_ns, inode, title = row
                entries.append(Entry(path=rel, kind=FOLDER, size_bytes=0, mtime_ns=mtime_ns, title=title, inode=inode))
            else:
                skipped.append(Skipped(row[1], row[2]))
        if not entries and not to_parse and n_cached > EMPTY_GUARD:
            cache.hold = True
            if report:
                report(
                    f"vault {root_real} looks empty or unreadable (unmounted drive?) but the cache knows "
                    f"{n_cached} entries; serving those and keeping the cache until the vault is back",
                    "error",
                )
            entries = list(cached.values())
            cache.last_stats = WarmStats(n_cached, 0, 0, 0, time.perf_counter() - started, reason)
            return entries, skipped
        cache.hold = False
        reused = n_files - len(to_parse)
        removed = len(cached)
        cache.mark_dirty([f.rel for f in to_parse])
        cache.mark_dirty(cached.keys())  # files gone since the cache was written
        for out in _parse_many(to_parse, progress):
            if isinstance(out, Skipped):
                skipped.append(out)
            else:
                entries.append(out)
        if progress is not None:
            progress(n_files, n_files)
        cache.last_stats = WarmStats(n_cached, reused, len(to_parse), removed, time.perf_counter() - started, reason)
        return entries, skipped
