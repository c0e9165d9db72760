"""The cache-aware load: walk the vault, reuse every cached entry whose stat still matches, parse the rest.

The walk runs in a forked child while this process decodes the entry cache
(core.index.entrycache); files the cache does not know, or knows at another size, mtime or
inode, are parsed by the scanner's process pool (core.index.parsepool).

The walk starts before the vault's watcher has its OS watches in place (placing them walks the
vault too, and holds the interpreter meanwhile), so the child checks what it walked before they
were in place against the disk once they are, and walks again if anything changed (`walk_watched`):
a note changed while vaultwatch starts is never left at its old row.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
import time
from collections.abc import Callable

from vaultwatch.core import settings
from vaultwatch.core.index.entrycache import EMPTY_GUARD, EntryCache, WarmStats
from vaultwatch.core.index.scan import FileFact, ScanConfig, entry_for, walk
from vaultwatch.core.index.sharing import Sharing
from vaultwatch.core.memory import collector_paused
from vaultwatch.core.model import FOLDER, Entry, Skipped

_FILE, _DIR, _SKIP = 0, 1, 2
WORD_EVERY = 256  # rows the forked walk makes between two looks for the word that the vault is watched


def _walk_rows(root_real: str, config: ScanConfig) -> list[tuple]:
    """The walk as plain tuples (marshal-able): files, folders and skipped records, in path order.

    Path order lets the index build its sorted path list in one linear pass.
    """
    prefix = root_real + os.sep
    rows = [_row(found, prefix) for found in walk(root_real, config)]
    rows.sort(key=_second)
    return rows


def _row(found: FileFact | Skipped | Entry, prefix: str) -> tuple:
    if isinstance(found, FileFact):
        real = None if found.real == prefix + found.rel.replace("/", os.sep) else found.real
        return (_FILE, found.rel, real, found.kind, found.size, found.mtime_ns, found.inode)
    if isinstance(found, Skipped):
        return (_SKIP, found.path, found.reason)
    return (_DIR, found.path, found.mtime_ns, found.inode, found.title)


def _second(row: tuple) -> str:
    return row[1]


def _still_so(root_real: str, root_stat: tuple[int, int], rows: list[tuple]) -> bool:
    """Whether the disk still looks as the walk found it: the root, every folder and every file at the
    same mtime (and inode, size). A name added, removed or renamed changes its folder's mtime; a file
    written in place changes its own. Anything that cannot be told counts as changed."""
    prefix = root_real + os.sep
    try:
        st = os.stat(root_real)
        if (st.st_mtime_ns, st.st_ino) != root_stat:
            return False
        lstat, stat = os.lstat, os.stat
        for row in rows:
            tag = row[0]
            if tag == _FILE:
                _, rel, real, _kind, size, mtime_ns, inode = row
                st = stat(real) if real else lstat(prefix + rel.replace("/", os.sep))
                if st.st_mtime_ns != mtime_ns or st.st_size != size or st.st_ino != inode:
                    return False
            elif tag == _DIR:
                st = stat(prefix + row[1].replace("/", os.sep))
                if st.st_mtime_ns != row[2] or st.st_ino != row[3]:
                    return False
    except OSError:
        return False
    return True


def _said(fd: int) -> bool:
    """Whether the word came through the non-blocking pipe `fd` (a byte, or the pipe's end)."""
    try:
        os.read(fd, 1)
    except BlockingIOError:
        return False
    return True


def send_message(fd: int, value: list[tuple] | None) -> None:
    """One message to the parent: its length, then the value marshalled."""
    data = marshal.dumps(value, 4)
    view = memoryview(len(data).to_bytes(8, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def receive_message(fd: int) -> object:
    """The next message of `send_message` on `fd`; EOFError when the sender ended before it was whole."""
    head = _exactly(fd, 8)
    return marshal.loads(_exactly(fd, int.from_bytes(head, "big")))


def _exactly(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def walk_watched(root_real: str, config: ScanConfig, out: int, watched_fd: int) -> None:
    """The forked walk, made true of the disk from the moment the parent's watcher has its OS watches in
    place (the word on `watched_fd`): the part of the walk made before the word is checked against the
    disk after it, and the vault walked again if anything changed. A change after the word reaches the
    watcher; one before the check shows in it. Two messages: the rows, then None or the rows of that
    second walk. The rows go first, so the parent merges them (and may serve them) while the child
    checks, or waits for the word when the walk ended before it."""
    st = os.stat(root_real)
    root_stat = (st.st_mtime_ns, st.st_ino)
    prefix = root_real + os.sep
    os.set_blocking(watched_fd, False)
    rows: list[tuple] = []
    unwatched = -1  # rows made before the watches were in place (-1: all so far)
    for found in walk(root_real, config):
        if unwatched < 0 and not len(rows) % WORD_EVERY and _said(watched_fd):
            unwatched = len(rows)
        rows.append(_row(found, prefix))
    before = rows[:unwatched] if unwatched >= 0 else rows  # (in walk order: sorted below)
    rows.sort(key=_second)
    send_message(out, rows)  # the rows first: the parent merges them while the check is made
    if unwatched < 0:  # the walk ended before the word
        os.set_blocking(watched_fd, True)
        os.read(watched_fd, 1)
    send_message(out, None if _still_so(root_real, root_stat, before) else _walk_rows(root_real, config))


class _Walker:
    """Walks the vault in a forked child while this process decodes the cache (2 cores, 2x faster).

    The child only walks (and checks its walk: `walk_watched`), marshals plain tuples into a pipe
    and `_exit`s: it touches no lock, file object or connection it inherited. Anything unusual (no
    fork, a failed child) falls back to walking here, once the vault is watched.
    """

    def __init__(self, root_real: str, config: ScanConfig, watched: Callable[[], None]) -> None:
        self.root_real, self.config, self.watched = root_real, config, watched
        self.pid = None
        if not sys.platform.startswith("linux") or settings.env("VAULTWATCH_NO_FORK"):
            return
        try:
            r, w = os.pipe()
        except OSError:
            return
        try:
            go_r, go_w = os.pipe()
        except OSError:
            os.close(r)
            os.close(w)
            return
        try:
            pid = os.fork()
        except OSError:
            for fd in (r, w, go_r, go_w):
                os.close(fd)
            return
        if pid == 0:  # the child
            code = 1
            try:
                os.close(r)
                os.close(go_w)
                walk_watched(root_real, config, w, go_r)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        os.close(go_r)
        self.pid, self.fd = pid, r
        # the walk runs now, beside the watches being placed (which walk the vault too, holding the
        # interpreter): the child is told when they are in place, from a thread of its own, so the
        # cache's decode here does not hold the word back
        threading.Thread(target=self._say_watched, args=(go_w,), name="vaultwatch-walk-watched", daemon=True).start()

    def _say_watched(self, go_w: int) -> None:
        try:
            self.watched()
        finally:
            # a byte, not only the end: a process forked meanwhile (a parse pool's) holds this end too
            try:
                os.write(go_w, b"w")
            finally:
                os.close(go_w)

    def _end(self) -> None:
        os.close(self.fd)
        if self.pid is not None:
            os.waitpid(self.pid, 0)
        self.pid = None

    def rows(self) -> list[tuple]:
        """The walk's rows (from the child when there is one)."""
        if self.pid is not None:
            try:
                rows = receive_message(self.fd)
                if isinstance(rows, list):
                    return rows
            except (OSError, ValueError, EOFError, TypeError):
                pass
            self._end()  # the child failed: walked here instead
        self.watched()  # walked here: once the watches are in place
        return _walk_rows(self.root_real, self.config)

    def forked(self) -> bool:
        """Whether the rows came from the child: its check (`still_so`) may then still be under way."""
        return self.pid is not None

    def still_so(self) -> bool:
        """`again()` as a verdict: True when the rows are still what the disk holds."""
        return self.again() is None

    def again(self) -> list[tuple] | None:
        """None when the rows `rows()` gave are still what the disk holds from the moment the vault is
        watched on, else rows walked after that moment (a note changed while the watches were being
        placed). Waits for the child's check; the child's end."""
        if self.pid is None:
            return None  # walked here, after the watches were in place
        try:
            again = receive_message(self.fd)
            if again is None or isinstance(again, list):
                return again
        except (OSError, ValueError, EOFError, TypeError):
            pass
        finally:
            self._end()
        self.watched()  # the check did not come: walked again here, once the watches are in place
        return _walk_rows(self.root_real, self.config)


def _report_all(report: Callable[..., None] | None, problems: list[str]) -> None:
    if report:
        for problem in problems:  # a cache from another version is routine: say so quietly
            report(problem, "info" if problem == EntryCache.VERSION_RESET else "warning")


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
            here = len(facts) < parsepool.HERE_MAX_FILES
            size = parsepool.chunk_size(here)
            chunks = [facts[i : i + size] for i in range(0, len(facts), size)]
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


def _merge(
    walked: list[tuple], cached: dict[str, Entry], prefix: str
) -> tuple[list[Entry], list[Skipped], list[FileFact], int]:
    """The walk's rows against the cache: the entries reused (taken out of `cached`, which keeps the
    entries of files gone) and made for folders, the skipped, the files to parse, and the files walked."""
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    to_parse: list[FileFact] = []
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
                to_parse.append(FileFact(rel, real or prefix + rel.replace("/", os.sep), kind, size, mtime_ns, inode))
        elif tag == _DIR:
            _, rel, mtime_ns, inode, title = row
            entries.append(Entry(path=rel, kind=FOLDER, size_bytes=0, mtime_ns=mtime_ns, title=title, inode=inode))
        else:
            skipped.append(Skipped(row[1], row[2]))
    return entries, skipped, to_parse, n_files


def warm_scan(
    cache: EntryCache,
    root_real: str,
    config: ScanConfig,
    progress: Callable[[int, int], None] | None = None,
    report: Callable[..., None] | None = None,
    watched: Callable[[], None] = lambda: None,
    later: list[Callable[[], bool]] | None = None,
) -> tuple[list[Entry], list[Skipped]]:
    """Walk the vault and build its entries, reusing cached ones whose stat still matches.

    Changed buckets are marked dirty on `cache` (the caller flushes them). When the vault
    looks empty or unreadable but the cache knows more than EMPTY_GUARD entries, the cached
    entries are returned, `cache.hold` is set (so nothing overwrites the cache) and the
    condition is reported.

    `later`: when given, the forked walk's check that its rows are still what the disk holds from the
    moment the vault is watched is not waited for here (when the walk ended before that moment, the
    check waits for it): the verdict is appended to `later` (True: still so), for the caller to ask
    once it has published the entries, and to apply a change it reports as an outside change.
    """
    started = time.perf_counter()
    with collector_paused():  # 100k long-lived records: collections mid-load cost more than the load
        walker = _Walker(root_real, config, watched)
        opening = None
        if not cache.disabled and not cache.db_path.exists():
            # a first start: nothing to decode, and making the cache file waits on the disk (its first
            # writes are synced), so it is made on a thread while the walk's files are parsed
            opened: list[tuple[dict[str, Entry], list[str]]] = []
            opening = threading.Thread(
                target=lambda: opened.append(cache.load_entries()), name="vaultwatch-cache-open", daemon=True
            )
            opening.start()
            # entries another process cached meanwhile are no newer than this walk, which parses every file
            cached: dict[str, Entry] = {}
            problems: list[str] = []
        else:
            # decode while the child walks: in the common case (nothing changed) every entry is used
            cached, problems = cache.load_entries()
            _report_all(report, problems)
        n_cached = len(cached)
        prefix = root_real + os.sep
        entries, skipped, to_parse, n_files = _merge(walker.rows(), cached, prefix)
        again = None
        if later is not None and walker.forked():
            later.append(walker.still_so)
        else:
            again = walker.again()
        if again is not None:  # a note changed while the watches were being placed: as walked after that
            cached.update((e.path, e) for e in entries if e.kind != FOLDER)
            entries, skipped, to_parse, n_files = _merge(again, cached, prefix)
        if not entries and not to_parse and n_cached > EMPTY_GUARD:
            cache.hold = True
            if report:
                report(
                    f"vault {root_real} looks empty or unreadable (unmounted drive?) but the cache knows "
                    f"{n_cached} entries; serving those and keeping the cache until the vault is back",
                    "error",
                )
            entries = list(cached.values())
            cache.last_stats = WarmStats(n_cached, 0, 0, 0, time.perf_counter() - started, "; ".join(problems) or None)
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
        if opening is not None:  # the cache file, made meanwhile
            opening.join()
            problems = opened[0][1] if opened else []
            _report_all(report, problems)
        if progress is not None:
            progress(n_files, n_files)
        cache.last_stats = WarmStats(
            n_cached, reused, len(to_parse), removed, time.perf_counter() - started, "; ".join(problems) or None
        )
        return entries, skipped
