"""The full-text index's writer: its SQLite schema, the first build and the live updates.

`SearchBuilder` is the writing half of `core.search.fulltext.SearchIndex` (a mixin over its
state: the vault, the change queue, `_rowids`, `_writes`, progress). One background thread
owns the writer connection; a cold build reads, tokenises and compresses notes on a second
thread while SQLite indexes on the first (`_prepared`).
"""
from __future__ import annotations

import hashlib
import os
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from core.disk.fileopen import open_file
from core.errors import VaultError
from core.events import IndexProblem, IndexProgress
from core.markdown import mdlex
from core.memory import release_free_memory
from core.model import NOTE, Entry
from core.search import ranking
from core.search.ftsstate import IndexState
from core.search.notetext import (
    COLUMNS,
    FIELD_COLUMNS,
    MAX_BODY_CHARS,
    SCHEMA_VERSION,
    TOKENIZER,
    _deflate,
    _read_capped,
    _register,
    field_terms,
    note_aliases,
    note_name,
    note_text,
)

BATCH = 400
# the modules whose code decides what the index holds or how it is read: a change to any rebuilds it
_MODULES = ("fulltext", "ftsstate", "ftsbuild", "ftsquery", "notetext", "terms", "results", "snippets")


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

    def _open_writer(self) -> sqlite3.Connection:
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in (1, 2):
            con = sqlite3.connect(self.db_path, timeout=10.0, isolation_level=None, check_same_thread=False)
            _register(con)
            try:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA synchronous=NORMAL")
                con.execute("PRAGMA journal_size_limit = 67108864")  # truncate the WAL back to 64 MiB
                con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                got = dict(con.execute("SELECT key, value FROM meta").fetchall())
                if got.get("fingerprint") != FINGERPRINT or got.get("root") != self.vault.root_real:
                    if got:
                        self._report("search index was written by another vaultwatch version; rebuilding it",
                                     "info")
                    con.execute("BEGIN IMMEDIATE")
                    con.execute("DROP TABLE IF EXISTS fts")
                    con.execute("DROP TABLE IF EXISTS ftsf")
                    con.execute("DROP TABLE IF EXISTS docs")
                    con.execute("DELETE FROM meta")
                    con.execute("DROP VIEW IF EXISTS content")
                    # the note text lives once, zlib-compressed, in docs; FTS5 reads it through the
                    # view (external content) for snippets and for removing a note's old postings
                    con.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
                                "size INTEGER, mtime_ns INTEGER, inode INTEGER, "
                                "deprecated INTEGER, stale_day INTEGER, stale_at REAL, "
                                "name TEXT, title TEXT, aliases TEXT, headings TEXT, body BLOB, fterms TEXT)")
                    con.execute("CREATE VIEW content AS SELECT id, path, name, title, aliases, headings, "
                                "vw_inflate(body) AS body FROM docs")
                    con.execute(f"CREATE VIRTUAL TABLE fts USING fts5({', '.join(COLUMNS)}, content='content', "
                                f"content_rowid='id', tokenize='{TOKENIZER}')")
                    # the fields again, alone: "which notes have this word in the title" reads only
                    # their postings (in `fts` it walks every note with the word anywhere)
                    con.execute(f"CREATE VIRTUAL TABLE ftsf USING fts5({', '.join(FIELD_COLUMNS)}, content='content', "
                                f"content_rowid='id', tokenize='{TOKENIZER}')")
                    con.executemany("INSERT INTO meta VALUES (?, ?)", [
                        ("fingerprint", FINGERPRINT), ("root", self.vault.root_real)])
                    con.execute("COMMIT")
                con.execute("SELECT count(*) FROM docs").fetchone()
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
            con.close()

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
                    self._cond.wait(1.0)
                if self._stop.is_set():
                    return
                seq = self._enqueued
                batch = list(self._queue)
                self._queue.clear()
                resync, self._resync = self._resync, False
            try:
                if resync:
                    self._sync_all(con)
                else:
                    snap = self.vault.snapshot
                    for i in range(0, len(batch), BATCH):  # bounded memory; readers see progress
                        self._apply(con, batch[i:i + BATCH], snap)
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
            self._finish(seq)

    def _finish(self, seq: int) -> None:
        with self._cond:
            self._done_seq = max(self._done_seq, seq)
            self._cond.notify_all()

    def _load_docs(self, con: sqlite3.Connection) -> dict[str, tuple[int, int, int, int]]:
        return {path: (i, s, m, n) for i, path, s, m, n in con.execute(
            "SELECT id, path, size, mtime_ns, inode FROM docs")}

    def _sync_all(self, con: sqlite3.Connection) -> None:
        """Bring the whole index in line with the current snapshot (first build or resync)."""
        started = time.perf_counter()
        snap = self.vault.snapshot
        self._synced_generation = snap.generation
        docs = self._load_docs(con)
        self._rowids = {(snap.by_path[p].path if p in snap.by_path else p): i for p, (i, *_) in docs.items()}
        work: list[str] = []
        for e in snap.entries:
            if e.kind != NOTE:
                continue
            d = docs.pop(e.path, None)
            if d is None or d[1:] != (e.size_bytes, e.mtime_ns, e.inode):
                work.append(e.path)
        work.extend(docs)  # indexed notes that are gone
        self.total = len(work)
        self.done = 0
        bus = self.vault.bus
        bus.publish(IndexProgress("search", 0, self.total))
        batches = [work[i:i + BATCH] for i in range(0, len(work), BATCH)]
        for prepared in self._prepared(batches, snap):
            if self._stop.is_set():
                return
            self._write(con, prepared)
            self.done = min(len(work), self.done + len(prepared))
            bus.publish(IndexProgress("search", self.done, self.total))
            time.sleep(0)  # let listing threads in between batches
        if self._stop.is_set():
            return
        if self.total and not self.ready:
            con.execute("PRAGMA optimize")
            try:  # a cold build leaves a WAL the size of the index: fold it in and truncate it
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError:
                pass
        self.build_seconds = time.perf_counter() - started
        self.ready = True
        bus.publish(IndexProgress("search", self.total, self.total))

    def _apply(self, con: sqlite3.Connection, paths: list[str], snap) -> None:
        """Index, re-index or drop `paths` to match `snap`, in one transaction."""
        self._write(con, self._prepare(paths, snap, con))

    def _prepared(self, batches: list[list[str]], snap):
        """`_prepare` of each batch, in order, read and tokenised one or two batches ahead by a
        second thread (file reads, decoding and zlib run there while SQLite indexes here: the
        two halves of a cold build take about as long as each other)."""
        if len(batches) < 2:
            con = sqlite3.connect(":memory:")
            try:
                for batch in batches:
                    yield self._prepare(batch, snap, con)
            finally:
                con.close()
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
            con = sqlite3.connect(":memory:", check_same_thread=False)
            try:
                for batch in batches:
                    hand(self._prepare(batch, snap, con))
                    if quit_.is_set() or self._stop.is_set():
                        return
            except BaseException as exc:  # handed to the writer, which raises it
                hand(exc)
            finally:
                con.close()

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

    def _prepare(self, paths: list[str], snap, tok_con: sqlite3.Connection) -> list[tuple]:
        """(path, entry or None, (name, title, aliases, headings), field terms, body, zlib'd body) for
        each path: the note's text read from disk (entry None: gone, unreadable or not a note)."""
        root = self.vault.root_real
        rows: list[tuple[str, Entry | None, Any]] = []
        for path in paths:
            e = snap.by_path.get(path)
            if e is None or e.kind != NOTE:
                rows.append((path, None, None))
                continue
            try:
                # opened as read opens it: beneath the vault's descriptor (never through a folder swapped
                # for an outside link), a regular file (a FIFO would stop the indexer), not hard-linked
                fd, _st = open_file(root, path)
                with os.fdopen(fd, "rb") as f:
                    data = _read_capped(f, e.size_bytes, MAX_BODY_CHARS * 4 + 4096)
            except (OSError, VaultError):
                rows.append((path, None, None))  # gone or unreadable: the next event re-indexes it
                continue
            rows.append((path, e, note_text(data)))
        live = [(path, e, text) for path, e, text in rows if e is not None]
        fields = [(note_name(e.path), e.title, note_aliases(e), text[0]) for _p, e, text in live]
        terms = iter(field_terms(tok_con, fields) if live else ())
        fields_it = iter(fields)
        out: list[tuple] = []
        for path, e, text in rows:
            if e is None:
                out.append((path, None, None, None, None, None))
            else:
                body = text[1]
                out.append((path, e, next(fields_it), next(terms), body, _deflate(body)))
        return out

    def _write(self, con: sqlite3.Connection, rows: list[tuple]) -> None:
        """Write prepared rows (`_prepare`) to the index, in one transaction."""
        con.execute("BEGIN IMMEDIATE")
        try:
            for path, e, cols, fterms, body, blob in rows:
                old = con.execute("SELECT id, size, mtime_ns, inode FROM docs WHERE path = ?", (path,)).fetchone()
                if old is not None and e is not None and old[1:] == (e.size_bytes, e.mtime_ns, e.inode):
                    continue
                if old is not None:  # external content: FTS5 needs the old text to drop its postings
                    con.execute(f"INSERT INTO fts (fts, rowid, {', '.join(COLUMNS)}) "
                                f"SELECT 'delete', id, {', '.join(COLUMNS)} FROM content WHERE id = ?", (old[0],))
                    con.execute(f"INSERT INTO ftsf (ftsf, rowid, {', '.join(FIELD_COLUMNS)}) "
                                f"SELECT 'delete', id, {', '.join(FIELD_COLUMNS)} FROM content WHERE id = ?", (old[0],))
                if e is None:
                    if old is not None:
                        con.execute("DELETE FROM docs WHERE id = ?", (old[0],))
                        self._rowids.pop(path, None)
                    continue
                okf_cols = (e.okf_status == "deprecated",
                            e.stale_date.toordinal() if e.stale_date is not None else None,
                            e.stale_instant.timestamp() if e.stale_instant is not None else None)
                if old is not None:
                    rowid = old[0]
                    con.execute("UPDATE docs SET size = ?, mtime_ns = ?, inode = ?, deprecated = ?, stale_day = ?, "
                                "stale_at = ?, name = ?, title = ?, aliases = ?, headings = ?, body = ?, fterms = ? "
                                "WHERE id = ?",
                                (e.size_bytes, e.mtime_ns, e.inode, *okf_cols, *cols, blob, fterms, rowid))
                else:
                    rowid = con.execute("INSERT INTO docs (path, size, mtime_ns, inode, deprecated, stale_day, "
                                        "stale_at, name, title, aliases, headings, body, fterms) "
                                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                        (path, e.size_bytes, e.mtime_ns, e.inode, *okf_cols, *cols,
                                         blob, fterms)).lastrowid
                con.execute(f"INSERT INTO fts (rowid, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (rowid, path, *cols, body))
                con.execute(f"INSERT INTO ftsf (rowid, {', '.join(FIELD_COLUMNS)}) VALUES (?, ?, ?, ?, ?)",
                            (rowid, *cols))
                self._rowids[e.path] = rowid
            con.execute("COMMIT")
            self._writes += 1
        except BaseException:
            con.execute("ROLLBACK")
            raise
