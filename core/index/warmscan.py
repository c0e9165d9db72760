"""The cache-aware load: walk the vault, reuse every cached entry whose stat still matches, parse the rest.

The walk runs in a forked child while this process decodes the entry cache
(core.index.entrycache); files the cache does not know, or knows at another size, mtime or
inode, are parsed by the scanner's process pool (core.index.parsepool).

The walk starts before the vault's watcher has its OS watches in place (placing them walks the
vault too, and holds the interpreter meanwhile), so the child checks what it walked before they
were in place against the disk once they are, and walks again if anything changed (`walk_watched`):
a note changed while vaultwatch starts is never left at its old row.

A first start (no cache file yet) has nothing to decode: the child sends its rows as it walks, and
once they hold enough files for the worker processes, the workers parse them while the rest are
walked (`_walk_and_parse`); the cache file is made on a thread meanwhile, as its first writes wait
on the disk.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator

from vaultwatch.core import settings
from vaultwatch.core.index.entrycache import EMPTY_GUARD, EntryCache, WarmStats
from vaultwatch.core.index.scan import FileFact, ScanConfig, entry_for, walk
from vaultwatch.core.index.sharing import Sharing
from vaultwatch.core.memory import collector_paused
from vaultwatch.core.model import FOLDER, Entry, Skipped

_FILE, _DIR, _SKIP = 0, 1, 2
WORD_EVERY = 256  # rows the forked walk makes between two looks for the word that the vault is watched
STREAM_ROWS = 4096  # rows a streamed walk sends at a time (walk_watched)


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


def walk_watched(root_real: str, config: ScanConfig, out: int, watched_fd: int, stream: bool = False) -> None:
    """The forked walk, made true of the disk from the moment the parent's watcher has its OS watches in
    place (the word on `watched_fd`): the part of the walk made before the word is checked against the
    disk after it, and the vault walked again if anything changed. A change after the word reaches the
    watcher; one before the check shows in it. Two messages: the rows, then None or the rows of that
    second walk. When the word came during the walk, the check is made first (the parent is still
    decoding its cache) and the second message is None; else the rows go first, and the parent merges
    them while the child waits for the word.

    `stream` (a first start: no cache to decode): the rows go as they are walked, STREAM_ROWS at a time,
    then an empty list, then the check's message; the parent parses the first rows while the rest are
    walked."""
    st = os.stat(root_real)
    root_stat = (st.st_mtime_ns, st.st_ino)
    prefix = root_real + os.sep
    os.set_blocking(watched_fd, False)
    rows: list[tuple] = []
    unwatched = -1  # rows made before the watches were in place (-1: all so far)
    sent = 0
    for found in walk(root_real, config):
        if unwatched < 0 and not len(rows) % WORD_EVERY and _said(watched_fd):
            unwatched = len(rows)
        rows.append(_row(found, prefix))
        if stream and len(rows) - sent >= STREAM_ROWS:
            send_message(out, rows[sent:])
            sent = len(rows)
    if stream:
        if len(rows) > sent:
            send_message(out, rows[sent:])
        send_message(out, [])  # the end of the rows
        if unwatched < 0:
            os.set_blocking(watched_fd, True)
            os.read(watched_fd, 1)
            unwatched = len(rows)
        send_message(out, None if _still_so(root_real, root_stat, rows[:unwatched]) else _walk_rows(root_real, config))
        return
    if unwatched >= 0:  # the word came during the walk: checked before the parent wants the rows
        if _still_so(root_real, root_stat, rows[:unwatched]):
            rows.sort(key=_second)
        else:
            rows = _walk_rows(root_real, config)
        send_message(out, rows)
        send_message(out, None)
        return
    rows.sort(key=_second)
    send_message(out, rows)  # the rows first: the parent merges them while the word is awaited
    os.set_blocking(watched_fd, True)
    os.read(watched_fd, 1)
    send_message(out, None if _still_so(root_real, root_stat, rows) else _walk_rows(root_real, config))


class _WalkBroke(Exception):
    """A streamed walk's child failed midway: the rows that came are to be dropped (`_Walker.walk_here`)."""


class _Walker:
    """Walks the vault in a forked child while this process decodes the cache (2 cores, 2x faster).

    The child only walks (and checks its walk: `walk_watched`), marshals plain tuples into a pipe
    and `_exit`s: it touches no lock, file object or connection it inherited. Anything unusual (no
    fork, a failed child) falls back to walking here, once the vault is watched.
    """

    def __init__(self, root_real: str, config: ScanConfig, watched: Callable[[], None], stream: bool = False) -> None:
        self.root_real, self.config, self.watched = root_real, config, watched
        self.stream = stream  # the child sends its rows as it walks: read them with `batches`, not `rows`
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
                walk_watched(root_real, config, w, go_r, stream)
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
        return self.walk_here()

    def batches(self) -> Iterator[list[tuple]]:
        """A streamed walk's rows, a batch at a time as the child walks them (all at once when walked
        here). _WalkBroke when the child failed midway: the batches that came are to be dropped."""
        if self.pid is None:
            yield self.walk_here()
            return
        while True:
            try:
                got = receive_message(self.fd)
            except (OSError, ValueError, EOFError, TypeError):
                got = None
            if not isinstance(got, list):
                self._end()
                raise _WalkBroke
            if not got:
                return
            yield got

    def walk_here(self) -> list[tuple]:
        """The walk made in this process, once the vault is watched (nothing to check afterwards)."""
        self.watched()
        return _walk_rows(self.root_real, self.config)

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
        return self.walk_here()  # the check did not come: walked again here


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


def _report_all(report: Callable[..., None] | None, problems: list[str]) -> None:
    if report:
        for problem in problems:  # a cache from another version is routine: say so quietly
            report(problem, "info" if problem == EntryCache.VERSION_RESET else "warning")


def _walk_and_parse(
    batches: Iterator[list[tuple]], prefix: str, progress: Callable[[int, int], None] | None
) -> tuple[list[Entry], list[Skipped], list[FileFact], int, list[Entry | Skipped]]:
    """A first start's merge of a streamed walk (`_Walker.batches`; nothing cached), as `_merge`, plus the
    files parsed. Once the files to parse are many enough for worker processes alone
    (parsepool.HERE_MAX_FILES), the workers start, and the rest of the walk feeds them as it comes: the
    walk no longer ends before the parse begins. Nothing parsed (an empty list) when the walk ended
    first or no worker could be had: the caller parses the files as any load's."""
    from vaultwatch.core.index import parsepool

    entries: list[Entry] = []
    skipped: list[Skipped] = []
    to_parse: list[FileFact] = []
    n_files = 0
    ended = False

    def take() -> bool:
        """Merge the walk's next batch; False once the walk ended."""
        nonlocal n_files, ended
        batch = next(batches, None)
        if batch is None:
            ended = True
            return False
        more = _merge(batch, {}, prefix)
        entries.extend(more[0])
        skipped.extend(more[1])
        to_parse.extend(more[2])
        n_files += more[3]
        return True

    while len(to_parse) < parsepool.HERE_MAX_FILES and take():
        pass
    hands = os.cpu_count() or 1
    if ended or hands < 2:
        while take():
            pass
        return entries, skipped, to_parse, n_files, []
    fed = 0

    def chunks() -> Iterator[list[FileFact]]:
        nonlocal fed
        while True:
            while len(to_parse) - fed >= parsepool.CHUNK or (ended and fed < len(to_parse)):
                chunk = to_parse[fed : fed + parsepool.CHUNK]
                fed += len(chunk)
                yield chunk
            if ended:
                return
            take()

    out: list[Entry | Skipped] = []
    sharing = Sharing()
    if progress is not None:  # the parse's size so far (it grows with the walk), before its first batch
        progress(0, len(to_parse))
    try:
        for batch in parsepool.parse_all(chunks(), hands, here=False):
            sharing.share_all(batch)
            out.extend(batch)
            if progress is not None:
                progress(len(out), len(to_parse))
    except parsepool.START_FAILED:  # no processes, or one failed: the caller parses everything here
        while take():
            pass
        return entries, skipped, to_parse, n_files, []
    return entries, skipped, to_parse, n_files, out


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
) -> tuple[list[Entry], list[Skipped]]:
    """Walk the vault and build its entries, reusing cached ones whose stat still matches.

    Changed buckets are marked dirty on `cache` (the caller flushes them). When the vault
    looks empty or unreadable but the cache knows more than EMPTY_GUARD entries, the cached
    entries are returned, `cache.hold` is set (so nothing overwrites the cache) and the
    condition is reported.
    """
    started = time.perf_counter()
    with collector_paused():  # 100k long-lived records: collections mid-load cost more than the load
        first = not cache.disabled and not cache.db_path.exists()
        walker = _Walker(root_real, config, watched, stream=first)
        prefix = root_real + os.sep
        parsed: list[Entry | Skipped] = []  # the files of `streamed`, parsed while the walk went on
        streamed: list[FileFact] = []
        if first:
            # a first start: no cache to decode, so the walk's rows are merged, and parsed, as they come.
            # The cache file is made meanwhile on a thread: its first writes wait on the disk
            opened: list[tuple[dict[str, Entry], list[str]]] = []
            opening = threading.Thread(
                target=lambda: opened.append(cache.load_entries()), name="vaultwatch-cache-open", daemon=True
            )
            opening.start()
            try:
                entries, skipped, to_parse, n_files, parsed = _walk_and_parse(walker.batches(), prefix, progress)
            except _WalkBroke:
                entries, skipped, to_parse, n_files = _merge(walker.walk_here(), {}, prefix)
            if parsed:
                streamed, to_parse = to_parse, []
            # entries another process cached meanwhile are no newer than this walk, which parses every file
            cached: dict[str, Entry] = {}
            problems: list[str] = []  # the cache file's, once it is made (below)
            n_cached = 0
        else:
            opening = None
            # decode while the child walks: in the common case (nothing changed) every entry is used
            cached, problems = cache.load_entries()
            _report_all(report, problems)
            n_cached = len(cached)
            entries, skipped, to_parse, n_files = _merge(walker.rows(), cached, prefix)
        again = walker.again()
        if again is not None:  # a note changed while the watches were being placed: as walked after that
            cached.update((e.path, e) for e in entries if e.kind != FOLDER)
            cached.update((e.path, e) for e in parsed if isinstance(e, Entry))
            parsed = []
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
        reused = max(0, n_files - len(to_parse) - len(streamed))
        removed = len(cached) if n_cached else 0
        cache.mark_dirty([f.rel for f in to_parse])
        cache.mark_dirty([f.rel for f in streamed])
        cache.mark_dirty(cached.keys())  # files gone since the cache was written
        for out in (*parsed, *_parse_many(to_parse, progress)):
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
            n_cached,
            reused,
            len(to_parse) + len(streamed),
            removed,
            time.perf_counter() - started,
            "; ".join(problems) or None,
        )
        return entries, skipped
