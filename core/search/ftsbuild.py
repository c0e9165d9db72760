"""The full-text index's writer: its SQLite schema, the first build and the live updates.

`SearchBuilder` is the writing half of `core.search.fulltext.SearchIndex` (a mixin over its
state: the vault, the change queue, `_rowids`, `_writes`, progress). One background thread
owns the writer connection; a cold build reads, tokenises and compresses notes in a pool of
processes (core.search.ftsprep) while SQLite indexes on this thread (`_prepared`).
"""

from __future__ import annotations

import hashlib
import math
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultwatch.core import handoffs
from vaultwatch.core.disk.private import private_file
from vaultwatch.core.events import IndexProblem, IndexProgress
from vaultwatch.core.index.entrycache import MAX_FLUSH_WAIT
from vaultwatch.core.index.parsepool import START_FAILED
from vaultwatch.core.markdown import mdlex
from vaultwatch.core.memory import release_free_memory
from vaultwatch.core.model import NOTE
from vaultwatch.core.search import ftscounts, ftsfirst, ranking
from vaultwatch.core.search.ftsprep import (
    POOL_MIN_NOTES,
    FieldTokens,
    Job,
    PoolBroke,
    Prepared,
    jobs_for,
    prepare,
    prepare_pooled,
)
from vaultwatch.core.search.ftsrows import DOC_COLUMNS, DOC_MARKS, doc_of, insert_rows, merging, okf_cols
from vaultwatch.core.search.ftsstate import QUICK_BATCH, IndexState
from vaultwatch.core.search.notetext import COLUMNS, FIELD_COLUMNS, SCHEMA_VERSION, TOKENIZER, register_functions

if TYPE_CHECKING:
    from vaultwatch.core.index.snapshot import Snapshot

BATCH = 400
# A whole-vault build in this process that runs while a client's calls come (the client resumed after
# the pause that started it) prepares its notes a step at a time and rests after each step: run whole,
# its reading thread held the interpreter in turns with the thread answering, and every call waited out
# the interpreter's switch interval. Smaller syncs (an edit, a few files) go straight through.
PACE_NOTES = 32  # notes prepared in one step
PACE_REST_S = 0.004  # the rest after each step while calls come
PACE_MIN_NOTES = 1000  # a sync of fewer notes never rests
# A first build by a process of its own (core.search.ftsfirst) takes the cores the answering thread and
# the client need: while calls come its next batch waits, a step at a time, PROCESS_REST_BUDGET_S in all
# at most (a client that never pauses still gets its search index), unless a search waits for it.
PROCESS_REST_S = 0.05
PROCESS_REST_BUDGET_S = 30.0
COUNT_IDLE_S = 2.0  # the pause in the writes after which the common words are counted again
COUNT_SPACING = 20  # a recount at most every this many times the last count's time
# a first build of a big vault commits every this many notes, with FTS5's automatic merging off and
# one merge at the end (each commit writes a segment; merging them as they come rewrote the
# postings several times over). Every prepared note
# waits in the writer's memory (the first build's own process, core.search.ftsfirst) until its
# transaction commits: with the merge deferred, smaller transactions did not slow the build and
# keep that process smaller
FIRST_BUILD_TRANSACTION = 1000
# the modules whose code decides what the index holds or how it is read: a change to any rebuilds it
_MODULES = (
    "fulltext",
    "ftsstate",
    "ftsbuild",
    "ftscounts",
    "ftsfirst",
    "ftsprep",
    "ftsrows",
    "ftsquery",
    "notetext",
    "terms",
    "results",
    "snippets",
)


def _fingerprint() -> str:
    h = hashlib.sha256(repr((SCHEMA_VERSION, TOKENIZER)).encode())
    here = Path(__file__).parent
    for name in _MODULES:
        h.update((here / f"{name}.py").read_bytes())
    h.update(Path(ranking.__file__).read_bytes())
    h.update(Path(mdlex.__file__).read_bytes())  # what note_text reads
    return h.hexdigest()[:24]


FINGERPRINT = _fingerprint()


class SearchBuilder(IndexState):
    """The writer thread of a SearchIndex: schema, first build, live updates."""

    # the writer -------------------------------------------------------------------------------
    def _report(self, message: str, severity: str = "warning") -> None:
        self.vault.bus.publish(IndexProblem(message, severity))

    def _discard(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.db_path) + suffix)
            except FileNotFoundError:
                pass
        self._epoch += 1
        self._readers.close_idle()  # they hold the old file open

    def _open_writer(self) -> sqlite3.Connection:
        for attempt in (1, 2):
            private_file(self.db_path)  # its WAL and SHM files take its mode
            con = sqlite3.connect(self.db_path, timeout=10.0, isolation_level=None, check_same_thread=False)
            register_functions(con)
            try:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA synchronous=NORMAL")
                con.execute("PRAGMA journal_size_limit = 67108864")  # truncate the WAL back to 64 MiB
                con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                got = dict(con.execute("SELECT key, value FROM meta").fetchall())
                if got.get("fingerprint") != FINGERPRINT or got.get("root") != self.vault.root_real:
                    if got:
                        self._report("search index was written by another vaultwatch version; rebuilding it", "info")
                    con.execute("BEGIN IMMEDIATE")
                    con.execute("DROP TABLE IF EXISTS fts")
                    con.execute("DROP TABLE IF EXISTS ftsf")
                    con.execute("DROP TABLE IF EXISTS docs")
                    con.execute("DELETE FROM meta")
                    con.execute("DROP VIEW IF EXISTS content")
                    # the note text lives once, zlib-compressed, in docs; FTS5 reads it through the
                    # view (external content) for snippets and for removing a note's old postings
                    con.execute(
                        "CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
                        "size INTEGER, mtime_ns INTEGER, inode INTEGER, "
                        "deprecated INTEGER, stale_day INTEGER, stale_at REAL, "
                        "name TEXT, title TEXT, aliases TEXT, headings TEXT, props TEXT, body BLOB, fterms TEXT)"
                    )
                    con.execute(
                        "CREATE VIEW content AS SELECT id, path, name, title, aliases, headings, props, "
                        "vw_inflate(body) AS body FROM docs"
                    )
                    con.execute(
                        f"CREATE VIRTUAL TABLE fts USING fts5({', '.join(COLUMNS)}, content='content', "
                        f"content_rowid='id', tokenize='{TOKENIZER}')"
                    )
                    # the fields again, alone: "which notes have this word in the title" reads only
                    # their postings (in `fts` it walks every note with the word anywhere)
                    con.execute(
                        f"CREATE VIRTUAL TABLE ftsf USING fts5({', '.join(FIELD_COLUMNS)}, content='content', "
                        f"content_rowid='id', tokenize='{TOKENIZER}')"
                    )
                    con.executemany(
                        "INSERT INTO meta VALUES (?, ?)", [("fingerprint", FINGERPRINT), ("root", self.vault.root_real)]
                    )
                    con.execute("COMMIT")
                con.execute("SELECT count(*) FROM docs").fetchone()
                if con.execute("SELECT 1 FROM fts_config WHERE k = 'automerge' AND v = 0").fetchone():
                    merging(con, building=False)  # a first build was cut short: merge as usual again
                return con
            except sqlite3.DatabaseError as exc:
                con.close()
                if attempt == 2:
                    raise
                self._report(f"search index file {self.db_path} was corrupt ({exc}); rebuilding it")
                self._discard()
        raise AssertionError("unreachable")

    def _run(self) -> None:
        try:
            while not self.vault.wait_ready(0.2):
                if self._stop.is_set():
                    return
            con = self._open_writer()
        except (sqlite3.Error, OSError) as exc:
            self.problem = f"full-text search is unavailable: {exc}"
            self._report(self.problem, "error")
            return
        try:
            self._loop(con)
        except Exception as exc:  # reported, never fatal to the app
            self.problem = f"full-text indexing stopped: {exc!r}"
            self._report(self.problem, "error")
        finally:
            with self._cond:  # the batches no one will index now
                self._end_quick()
            con.close()
            if self._tokens is not None:
                self._tokens.close()
                self._tokens = None

    def _loop(self, con: sqlite3.Connection) -> None:
        with self._cond:
            seq = self._enqueued
            self._queue.clear()
            self._resync = False
        self._sync_all(con)
        self._finish(seq)
        release_free_memory()  # the comparison's tables (~10 MB at 100k notes) are garbage now
        while not self._stop.is_set():
            with self._cond:
                while not self._queue and not self._resync and not self._stop.is_set():
                    wait = self._count_wait()
                    if wait <= 0:
                        break
                    self._cond.wait(min(wait, 1.0))
                if self._stop.is_set():
                    return
                idle = not self._queue and not self._resync
            if idle:  # the writes have paused: the common words' counts again
                self._count_common(con)
                continue
            with self._cond:
                seq = self._enqueued
                batch = list(self._queue)
                self._queue.clear()
                resync, self._resync = self._resync, False
                quick, self._quick = self._quick, 0
            try:
                if resync:
                    self._sync_all(con)
                elif len(batch) <= QUICK_BATCH:
                    # a few notes an agent or an editor just changed: quick hand-offs while they go in,
                    # else each read and SQLite call waits out the switch interval whenever another
                    # thread runs Python (an agent polling search for this very note)
                    with handoffs.quick_handoffs():
                        self._apply(con, batch, self.vault.snapshot)
                else:
                    snap = self.vault.snapshot
                    for i in range(0, len(batch), BATCH):  # bounded memory; readers see progress
                        self._apply(con, batch[i : i + BATCH], snap)
            except sqlite3.DatabaseError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    with self._cond:  # try again with the next batch
                        self._queue.update(dict.fromkeys(batch))
                        self._resync = self._resync or resync
                    time.sleep(0.2)
                    continue
                self._report(f"search index was damaged ({exc}); rebuilding it")
                con.close()
                self._discard()
                self.ready = False
                con = self._open_writer()
                self._sync_all(con)
            finally:
                for _ in range(quick):  # begun when these outside edits were queued (IndexState._queued)
                    handoffs.end_quick()
            self._finish(seq)

    def _count_wait(self) -> float:
        """Seconds until the common words are due to be counted again (inf: they are counted)."""
        if not self.ready or (self._counts is not None and not self._counts_moved):
            return math.inf
        return self._count_at - time.monotonic()

    def _count_common(self, con: sqlite3.Connection) -> None:
        """Take the counts of the common words for the readers (`core.search.ftscounts`), unless a change
        comes to be indexed meanwhile; then (or when the file is busy) once the writes pause again."""
        started = time.monotonic()
        try:
            counts = ftscounts.kept_or_counted(con, self._change_waits)
        except sqlite3.DatabaseError:  # busy (or damaged: the next write finds out): searches count their own
            counts = None
        now = time.monotonic()
        # a vault written to every few seconds is counted at most every COUNT_SPACING times a count's time
        self._count_at = max(now + COUNT_IDLE_S, now + COUNT_SPACING * (now - started))
        self._counts = None if counts is None else (self._writes, counts)
        self._counts_moved = False

    def _change_waits(self) -> bool:
        return bool(self._queue) or self._resync or self._stop.is_set()

    def _finish(self, seq: int) -> None:
        with self._cond:
            self._done_seq = max(self._done_seq, seq)
            self._cond.notify_all()

    def _compare_docs(self, con: sqlite3.Connection, snap: Snapshot) -> tuple[list[str], bool]:
        """Match the indexed notes against `snap`, keeping each one's row id (`_rowids`): the
        notes to index (new or changed, in path order) then the indexed paths that are no note
        now, and whether the index was empty. One row at a time: a dict of every row, each a
        tuple of four ints, left the interpreter's arenas fragmented around the row ids kept
        (memory the process never gave back in a big vault)."""
        by_path = snap.by_path
        rowids: dict[str, int] = {}
        current: set[str] = set()  # notes whose indexed row matches the snapshot
        gone: list[str] = []
        for i, path, size, mtime_ns, inode in con.execute("SELECT id, path, size, mtime_ns, inode FROM docs"):
            e = by_path.get(path)
            if e is None:
                rowids[path] = i
                gone.append(path)
                continue
            rowids[e.path] = i
            if e.kind != NOTE:
                gone.append(e.path)
            elif size == e.size_bytes and mtime_ns == e.mtime_ns and inode == e.inode:
                current.add(e.path)
        self._rowids = rowids
        work = [e.path for e in snap.entries if e.kind == NOTE and e.path not in current]
        return work + gone, not rowids

    def _sync_all(self, con: sqlite3.Connection) -> None:
        """Bring the whole index in line with the current snapshot (first build or resync)."""
        started = time.perf_counter()
        self._pool_cpu[0] = 0.0
        snap = self.vault.snapshot
        self._synced_generation = snap.generation
        work, fresh = self._compare_docs(con, snap)  # fresh: a first build, no row to look up or replace
        prior = 0  # notes a build process indexed
        if fresh and len(work) >= ftsfirst.PROCESS_MIN_NOTES and self._build_elsewhere(work, snap):
            if self._stop.is_set():
                return
            prior = self.done
            work, fresh = self._compare_docs(con, snap)  # the row ids it wrote; what it left, if anything
        bus = self.vault.bus
        self.total = prior + len(work)
        self.done = prior
        bus.publish(IndexProgress("search", self.done, self.total))
        batches = [work[i : i + BATCH] for i in range(0, len(work), BATCH)]
        big = fresh and len(work) >= POOL_MIN_NOTES
        if big:
            merging(con, building=True)
        self._pacing = len(work) >= PACE_MIN_NOTES
        try:
            held: list[Prepared] = []
            written = 0
            for prepared in self._prepared(batches, snap):
                if self._stop.is_set():
                    return
                held += prepared
                if big and len(held) < FIRST_BUILD_TRANSACTION and written + len(held) < len(work):
                    # read and tokenised, waiting for the next big transaction: most of a note's
                    # build, so it counts (a first search's progress moved only once per 4,000 notes)
                    self.done = prior + written + len(held)
                    bus.publish(IndexProgress("search", self.done, self.total))
                    continue
                self._write(con, held, snap, fresh)
                written = min(len(work), written + len(held))
                self.done = prior + written
                held = []
                bus.publish(IndexProgress("search", self.done, self.total))
                time.sleep(0)  # let listing threads in between batches
        finally:
            self._pacing = False
            self._rests.end()
            if big:
                merging(con, building=False, merge=not self._stop.is_set())
        if self._stop.is_set():
            return
        if self.total and not self.ready:
            con.execute("PRAGMA optimize")
            try:  # a cold build leaves a WAL the size of the index: fold it in and truncate it
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError:
                pass
        self._count_common(con)
        self.build_seconds = time.perf_counter() - started
        self.build_pool_cpu_seconds = self._pool_cpu[0]
        self.ready = True
        bus.publish(IndexProgress("search", self.total, self.total))

    def _build_elsewhere(self, paths: list[str], snap: Snapshot) -> bool:
        """A first build of `paths` (notes of `snap`) by a process of its own (core.search.ftsfirst);
        False when none could be started. However it ended, the caller compares the file again."""
        bus = self.vault.bus
        total = len(paths)
        self.total, self.done = total, 0
        bus.publish(IndexProgress("search", 0, total))
        by_path = snap.by_path
        cache = self.vault.entry_cache
        if cache is not None:
            # the entry cache's first write (a cold start's, due at the same pause of the client)
            # ends before the build's process begins: it holds every distinct link and a bucket's
            # rows at a time, and beside the build's process and the app's index it made the peak. It
            # keeps its rests while calls come: the build is of no use to a client that is not searching
            cache.wait_flushed(MAX_FLUSH_WAIT, hurry=False)
            if self._stop.is_set():
                return True  # the caller sees the stop; nothing was started

        def batches() -> Iterator[list[tuple[Job, tuple]]]:
            self._rests.start()
            for i in range(0, total, BATCH):
                self._rests.wait_pause(self.vault.answering, PROCESS_REST_S, PROCESS_REST_BUDGET_S, self._stop.is_set)
                jobs = jobs_for(paths[i : i + BATCH], by_path)
                yield [(job, doc_of(by_path[job.path])) for job in jobs if not isinstance(job, str)]

        def progress(done: int) -> None:
            self.done = done
            bus.publish(IndexProgress("search", done, total))

        try:
            cpu = ftsfirst.build(
                str(self.db_path),
                self.vault.root_real,
                batches(),
                self._stop.is_set,
                progress,
                transaction=FIRST_BUILD_TRANSACTION,
            )
        except ftsfirst.BuildFailed as exc:
            self._report(f"{exc}; indexing the rest in this process", "info")
            cpu = None
        except START_FAILED:
            return False
        self.build_elsewhere = True
        self.build_pooled = True
        if cpu is not None:
            self._pool_cpu[0] += cpu
        return True

    def _apply(self, con: sqlite3.Connection, paths: list[str], snap: Snapshot) -> None:
        """Index, re-index or drop `paths` to match `snap`, in one transaction."""
        self._write(con, self._prepare(paths, snap), snap)

    def _prepare(self, paths: list[str], snap: Snapshot) -> list[Prepared]:
        """`ftsprep.prepare` of `paths` as `snap` has them, in this thread."""
        if self._tokens is None:
            self._tokens = FieldTokens()
        return self._prepare_paced(jobs_for(paths, snap.by_path), self._tokens)

    def _prepare_paced(self, jobs: list[Job | str], tokens: FieldTokens) -> list[Prepared]:
        """`ftsprep.prepare` of `jobs`; while a big sync runs (`_pacing`), PACE_NOTES at a time with a
        rest (`_pace`) before each: the same rows."""
        root = self.vault.root_real
        if not self._pacing:
            return prepare(root, jobs, tokens)
        out: list[Prepared] = []
        for at in range(0, len(jobs), PACE_NOTES):
            self._pace()
            out += prepare(root, jobs[at : at + PACE_NOTES], tokens)
        return out

    def _pace(self) -> None:
        """Rest PACE_REST_S when the process is answering a client's calls (`Vault.answering`), unless a
        search waits for this build (`hurry`)."""
        self._rests.rest(self.vault.answering, PACE_REST_S)

    def _prepared(self, batches: list[list[str]], snap: Snapshot) -> Iterator[list[Prepared]]:
        """`_prepare` of each batch, in order: for a big build by a pool of processes
        (`ftsprep.prepare_pooled`), else by a second thread one or two batches ahead (also the
        rest of the batches when no process can be started or one goes away)."""
        done = 0
        self.build_pooled = False
        if sum(map(len, batches)) >= POOL_MIN_NOTES:
            try:
                for rows in prepare_pooled(
                    self.vault.root_real,
                    [jobs_for(b, snap.by_path) for b in batches],
                    self._stop.is_set,
                    self._pool_cpu,
                ):
                    self.build_pooled = True
                    yield rows
                    done += 1
            except PoolBroke as exc:
                self._report(f"{exc}; indexing the rest in this process", "info")
            except START_FAILED:
                pass  # no processes to be had, or a start that failed (once it stopped the index for good)
            else:
                return
        yield from self._threaded(batches[done:], snap)

    def _threaded(self, batches: list[list[str]], snap: Snapshot) -> Iterator[list[Prepared]]:
        """`_prepare` of each batch, in order, one or two batches ahead by a second thread."""
        if len(batches) < 2:
            for batch in batches:
                yield self._prepare(batch, snap)
            return
        out: queue.Queue = queue.Queue(maxsize=2)
        quit_ = threading.Event()

        def hand(item: Any) -> None:
            while not quit_.is_set():
                try:
                    out.put(item, timeout=0.2)
                    return
                except queue.Full:
                    continue

        def produce() -> None:
            tokens = FieldTokens()
            try:
                for batch in batches:
                    hand(self._prepare_paced(jobs_for(batch, snap.by_path), tokens))
                    if quit_.is_set() or self._stop.is_set():
                        return
            except BaseException as exc:  # handed to the writer, which raises it
                hand(exc)
            finally:
                tokens.close()

        reader = threading.Thread(target=produce, name="vaultwatch-search-read", daemon=True)
        reader.start()
        try:
            for _ in batches:
                while True:
                    try:
                        item = out.get(timeout=0.2)
                        break
                    except queue.Empty:
                        if not reader.is_alive() and out.empty():
                            return  # stopped
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            quit_.set()
            reader.join()

    def _write(self, con: sqlite3.Connection, rows: list[Prepared], snap: Snapshot, fresh: bool = False) -> None:
        """Write prepared rows (`_prepare`) to the index as `snap` has them, in one transaction.
        `fresh`: none of them is in the index yet (a first build), so nothing is looked up. The common
        words' counts move with a write of a few notes (ftscounts.Tally); a bigger one drops them."""
        taken = self._counts
        self._counts = None  # before the write: no reader takes them for what it changes
        tally = None
        if taken is not None and taken[0] == self._writes and not fresh and len(rows) <= QUICK_BATCH:
            tally = ftscounts.Tally(con, taken[1])
        con.execute("BEGIN IMMEDIATE")
        try:
            if fresh:
                self._insert_new(con, rows, snap)
            else:
                for row in rows:
                    self._write_one(con, row, snap, tally)
            con.execute("COMMIT")
            self._writes += 1
            self._count_at = max(self._count_at, time.monotonic() + COUNT_IDLE_S)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        if tally is not None:
            self._counts = (self._writes, tally.counts())
            self._counts_moved = True  # counted again (and kept) once the writes pause

    def _write_one(self, con: sqlite3.Connection, row: Prepared, snap: Snapshot, tally: ftscounts.Tally | None) -> None:
        path, cols, fterms, body, blob = row
        e = snap.by_path.get(path) if cols is not None else None
        old = con.execute("SELECT id, size, mtime_ns, inode FROM docs WHERE path = ?", (path,)).fetchone()
        if old is not None and e is not None and old[1:] == (e.size_bytes, e.mtime_ns, e.inode):
            return
        if old is not None:  # external content: FTS5 needs the old text to drop its postings
            was = con.execute(f"SELECT {', '.join(COLUMNS)} FROM content WHERE id = ?", (old[0],)).fetchone()
            con.execute(
                f"INSERT INTO fts (fts, rowid, {', '.join(COLUMNS)}) VALUES ('delete', ?, {', '.join('?' * len(COLUMNS))})",
                (old[0], *was),
            )
            con.execute(
                f"INSERT INTO ftsf (ftsf, rowid, {', '.join(FIELD_COLUMNS)}) "
                f"VALUES ('delete', ?, {', '.join('?' * len(FIELD_COLUMNS))})",
                (old[0], *(was[COLUMNS.index(c)] for c in FIELD_COLUMNS)),
            )
            if tally is not None:
                tally.taken_out(was)
        if e is None or cols is None:
            if old is not None:
                con.execute("DELETE FROM docs WHERE id = ?", (old[0],))
                self._rowids.pop(path, None)
            return
        if old is not None:
            rowid = old[0]
            con.execute(
                "UPDATE docs SET size = ?, mtime_ns = ?, inode = ?, deprecated = ?, stale_day = ?, "
                "stale_at = ?, name = ?, title = ?, aliases = ?, headings = ?, props = ?, body = ?, fterms = ? "
                "WHERE id = ?",
                (e.size_bytes, e.mtime_ns, e.inode, *okf_cols(e), *cols, blob, fterms, rowid),
            )
        else:
            rowid = con.execute(
                f"INSERT INTO docs ({DOC_COLUMNS}) VALUES ({DOC_MARKS})",
                (path, e.size_bytes, e.mtime_ns, e.inode, *okf_cols(e), *cols, blob, fterms),
            ).lastrowid
        con.execute(
            f"INSERT INTO fts (rowid, {', '.join(COLUMNS)}) VALUES ({', '.join('?' * (1 + len(COLUMNS)))})",
            (rowid, path, *cols, body),
        )
        con.execute(
            f"INSERT INTO ftsf (rowid, {', '.join(FIELD_COLUMNS)}) VALUES ({', '.join('?' * (1 + len(FIELD_COLUMNS)))})",
            (rowid, *cols[: len(FIELD_COLUMNS)]),
        )
        if tally is not None:
            tally.put_in((path, *cols, body))
        self._rowids[e.path] = rowid

    def _insert_new(self, con: sqlite3.Connection, rows: list[Prepared], snap: Snapshot) -> None:
        """Insert notes the index does not hold: each table in one statement, rowids chosen here."""
        next_id = (con.execute("SELECT max(id) FROM docs").fetchone()[0] or 0) + 1
        new = []
        for row in rows:
            e = snap.by_path.get(row.path) if row.fields is not None else None
            if e is not None:
                new.append((next_id, doc_of(e), row))
                self._rowids[e.path] = next_id
                next_id += 1
        insert_rows(con, new)
