"""Full-text search: an SQLite FTS5 index of every note, kept in step with the live index.

The index lives next to the entry cache (`search.sqlite` in the vault's cache folder), so a
warm start only re-indexes the notes that changed. Bodies are read from disk and handed to
SQLite; they never stay in Python memory. Ranking is BM25 over path, title, headings and
body (weighted), then OKF-aware on a bundle: deprecated notes x0.5, stale notes x0.75.

User text never reaches FTS5 syntax raw: `parse_query` reads words, "phrases", prefix*
and -exclusions, and `to_fts` quotes every term. Bad input raises QueryError.

Scoping (folder, pattern, frontmatter filters) is the listing's own `Query`, run by
`core.query.run_query`: search adds no filter logic of its own.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .memory import release_free_memory
from .errors import QueryError
from .events import DocumentsChanged, IndexProblem, IndexProgress, IndexReady
from .model import NOTE, Entry
from .parse import decode, split_frontmatter
from .query import Query, pairs, run_query

if TYPE_CHECKING:  # vault.py imports this module
    from .vault import Vault

SCHEMA_VERSION = 1
TOKENIZER = "unicode61 remove_diacritics 2"
# bm25 column weights: path, title, headings, body
WEIGHTS = (2.0, 10.0, 4.0, 1.0)
DEPRECATED_FACTOR = 0.5
STALE_FACTOR = 0.75
MAX_QUERY_CHARS = 500
MAX_TERMS = 32
MAX_LIMIT = 1000
MAX_BODY_CHARS = 2_000_000  # text beyond this (per note) is not searchable
BATCH = 400
_WEIGHTS_SQL = ", ".join(str(w) for w in WEIGHTS)
# the OKF factor of a docs row `d` on a bundle, with :today (ordinal) and :now (epoch seconds)
_FACTOR_SQL = (f"(CASE WHEN d.deprecated THEN {DEPRECATED_FACTOR} ELSE 1.0 END) * "
               f"(CASE WHEN d.stale_day <= :today OR d.stale_at <= :now THEN {STALE_FACTOR} ELSE 1.0 END)")
_OPEN, _CLOSE = "\x02", "\x03"  # snippet markers inside SQLite; replaced before they leave this module
_WORD = re.compile(r"[^\W_]", re.UNICODE)  # a token character for FTS5's unicode61 (letters, digits)
_HEADING = re.compile(r"#{1,6}[ \t]+(.+?)[ \t#]*")
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_SPACE = re.compile(r"\s+")


def _read_capped(f, expected: int, cap: int) -> bytes:
    """Up to `cap` bytes of an open file whose stat said `expected` bytes (read(cap) would
    allocate the whole cap up front for every note)."""
    data = f.read(min(cap, expected + 1))
    if len(data) > expected and len(data) < cap:
        data += f.read(cap - len(data))
    return data


class SearchNotReady(QueryError):
    """The full-text index is still being built; listing works meanwhile."""

    code = "search_not_ready"

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"search index is still building ({done} of {total} notes indexed); "
                         "try again in a few seconds (listing and filters work meanwhile)")
        self.done, self.total = done, total


# --- query syntax --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Term:
    """One search term: a word or a phrase, maybe a prefix, maybe excluded."""

    text: str
    phrase: bool = False
    prefix: bool = False
    exclude: bool = False


def parse_query(text: object) -> tuple[Term, ...]:
    """Read a user's search text: words, "quoted phrases", prefix* and -excluded terms.

    Any string is accepted or refused with a QueryError that says what to type instead;
    FTS5 operators (AND, OR, NOT, NEAR, column filters, parentheses) are plain words here.
    """
    if not isinstance(text, str):
        raise QueryError("search query must be a string of words, e.g. 'deploy runbook'")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"search query is longer than {MAX_QUERY_CHARS} characters; use a few distinctive words")
    if "\x00" in text:
        raise QueryError("search query contains a NUL character; remove it")
    terms: list[Term] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        exclude = False
        if ch == "-" and i + 1 < n and not text[i + 1].isspace():
            exclude, i = True, i + 1
            ch = text[i]
        if ch == '"':
            end = text.find('"', i + 1)
            body = text[i + 1:] if end < 0 else text[i + 1:end]  # an unclosed quote runs to the end
            i = n if end < 0 else end + 1
            prefix = False
            if i < n and text[i] == "*":
                prefix, i = True, i + 1
            term = Term(" ".join(body.split()), phrase=True, prefix=prefix, exclude=exclude)
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] != '"':
                j += 1
            word = text[i:j]
            i = j
            prefix = word.endswith("*")
            term = Term(word.rstrip("*"), prefix=prefix, exclude=exclude)
        if _WORD.search(term.text):  # a term of punctuation alone can match nothing: drop it
            terms.append(term)
    if len(terms) > MAX_TERMS:
        raise QueryError(f"search query has {len(terms)} terms; use at most {MAX_TERMS}")
    if not terms:
        raise QueryError("search query has no words to look for: give at least one word or \"phrase\" "
                         "(letters or digits), e.g. 'deploy' or '\"release checklist\"'")
    if all(t.exclude for t in terms):
        raise QueryError("search query only excludes (-word): add at least one word to look for, "
                         "e.g. 'deploy -staging'")
    return tuple(terms)


def _quote(term: Term) -> str:
    quoted = '"' + term.text.replace('"', '""') + '"'
    return quoted + " *" if term.prefix else quoted


def to_fts(terms: Iterable[Term]) -> str:
    """The FTS5 MATCH expression for parsed terms: every term quoted, exclusions as NOT."""
    terms = list(terms)
    positive = " ".join(_quote(t) for t in terms if not t.exclude)
    negative = "".join(" NOT " + _quote(t) for t in terms if t.exclude)
    return positive + negative


# --- results -------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SearchHit:
    """One matching note.

    `snippet` is a one-line excerpt with the matched terms wrapped in `**`; `snippet_plain`
    is the same text unmarked and `highlights` the (start, end) spans of the matched terms in
    it. `score` is BM25 relevance after the OKF factors (higher is better).
    """

    path: str
    title: str
    score: float
    snippet: str
    snippet_plain: str
    highlights: tuple[tuple[int, int], ...]
    entry: Entry

    def as_json(self) -> dict[str, Any]:
        """The hit as a JSON-safe dict (path, title, folder, score, snippet, highlights, modified_at)."""
        return {"path": self.path, "title": self.title, "folder": self.entry.folder, "score": self.score,
                "snippet": self.snippet, "snippet_plain": self.snippet_plain,
                "highlights": [list(h) for h in self.highlights], "modified_at": self.entry.modified_at}


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A page of hits, best first.

    `total` counts every matching note in scope (as the full-text index knows them: it can
    differ by notes still in flight, which `index_stale` tells);
    `next_cursor` continues the listing; `index_stale` is true while changes are still
    being applied to the full-text index (results may miss the newest edits).
    """

    query: str
    hits: tuple[SearchHit, ...]
    total: int
    next_cursor: str | None
    generation: int
    is_bundle: bool
    index_stale: bool


@dataclass(frozen=True, slots=True)
class SearchStatus:
    """Progress of the full-text index: ready once every note has been indexed."""

    ready: bool
    done: int
    total: int
    pending: int  # changes waiting to be applied
    problem: str | None = None


def _snippet_parts(raw: str) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """(marked, plain, spans) from an FTS5 snippet with internal markers; whitespace collapsed."""
    raw = _SPACE.sub(" ", raw).strip()
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    start = None
    for ch in raw:
        if ch == _OPEN:
            start = pos
        elif ch == _CLOSE:
            if start is not None and pos > start:
                spans.append((start, pos))
            start = None
        else:
            plain.append(ch)
            pos += 1
    marked = raw.replace(_OPEN, "**").replace(_CLOSE, "**")
    return marked, "".join(plain), tuple(spans)


def _encode_cursor(fp: str, offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([fp, offset]).encode()).decode().rstrip("=")


def _decode_cursor(cursor: object, fp: str) -> int:
    try:
        if not isinstance(cursor, str):
            raise ValueError
        got_fp, offset = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(offset, int) or offset < 0:
            raise ValueError
    except (ValueError, TypeError, UnicodeDecodeError):
        raise QueryError("cursor is not valid: pass back the next_cursor of a previous search, unchanged") from None
    if got_fp != fp:
        raise QueryError("cursor belongs to a different search: repeat the same query and scope with it, "
                         "or drop the cursor")
    return offset


def scope_query(scope: Query | None = None, *, folder: str | None = None, recursive: bool | None = None,
                pattern: str | None = None, filters: Mapping[str, Any] | Iterable[tuple[str, str]] | None = None,
                exclude: Mapping[str, Any] | Iterable[tuple[str, str]] | None = None) -> Query:
    """The listing Query that scopes a search (notes only; paging is the search's own)."""
    q = scope or Query()
    changes: dict[str, Any] = {}
    if folder is not None:
        changes["folder"] = folder
    if recursive is not None:
        changes["recursive"] = recursive
    if pattern is not None:
        changes["pattern"] = pattern
    if filters is not None:
        changes["filters"] = q.filters + (pairs(filters) if isinstance(filters, Mapping) else tuple(filters))
    if exclude is not None:
        changes["exclude"] = q.exclude + (pairs(exclude) if isinstance(exclude, Mapping) else tuple(exclude))
    return replace(q, **changes, include_notes=True, include_attachments=False, include_folders=False,
                   sort="path", descending=False, limit=None, cursor=None)


def _unscoped(q: Query) -> bool:
    return (q.folder is None and q.pattern is None and not q.filters and not q.exclude and not q.text
            and not q.problems_only)


# --- the index -----------------------------------------------------------------------------------

def _fingerprint() -> str:
    h = hashlib.sha256(repr((SCHEMA_VERSION, TOKENIZER)).encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:24]


FINGERPRINT = _fingerprint()


def note_text(data: bytes) -> tuple[str, str]:
    """(headings, body) of a note's bytes, for the full-text index."""
    text, _ = decode(data)
    _, body = split_frontmatter(text)
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS]
    scan = _FENCE.sub(" ", body) if "```" in body or "~~~" in body else body
    headings = ""
    if "#" in scan:  # ATX heading lines (a line-by-line check: a MULTILINE regex is 10x slower here)
        found = [m.group(1) for line in scan.split("\n") if line.startswith("#")
                 and (m := _HEADING.fullmatch(line.rstrip())) is not None]
        headings = "\n".join(found)
    return headings, body


class SearchIndex:
    """The FTS5 index of one vault, built and updated by one background thread.

    Readers (any thread) get their own read-only connection. `wait_synced` and `pending`
    make the index's lag visible to `Vault.wait_for_pending_writes` and `index_stale`.
    """

    def __init__(self, vault: Vault, db_path: Path) -> None:
        self.vault = vault
        self.db_path = db_path
        self._cond = threading.Condition()
        self._queue: dict[str, None] = {}
        self._enqueued = 0
        self._done_seq = 0
        self._resync = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._local = threading.local()
        self._epoch = 0  # bumped when the database file is replaced
        self._rowids: dict[str, int] = {}  # path -> FTS rowid (for scoped searches)
        self._writes = 0  # committed write transactions (invalidates readers' scope tables)
        self._synced_generation = -1
        self.ready = False
        self.done = 0
        self.total = 0
        self.problem: str | None = None
        self.build_seconds: float | None = None
        self._unsub = None

    # lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """Subscribe to index changes and start the builder thread (idempotent)."""
        if self._thread is not None:
            return
        self._unsub = self.vault.bus.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._run, name="vaultwatch-search", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the builder thread (work in progress is committed or rolled back, never half-applied)."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._unsub:
            self._unsub()
        if self._thread is not None:
            self._thread.join(timeout)

    def _on_event(self, event) -> None:
        if isinstance(event, DocumentsChanged):
            paths = (*event.added, *event.changed, *event.removed)
            if paths:
                with self._cond:
                    self._queue.update(dict.fromkeys(paths))
                    self._enqueued += 1
                    self._cond.notify_all()
        elif isinstance(event, IndexReady) and event.generation > self._synced_generation:
            with self._cond:  # a reload: compare everything again
                self._resync = True
                self._enqueued += 1
                self._cond.notify_all()

    @property
    def pending(self) -> int:
        """Change batches received but not yet in the full-text index."""
        return self._enqueued - self._done_seq

    def wait_synced(self, deadline: float) -> bool:
        """Wait until every change batch received so far is indexed; False at the deadline."""
        if not self.ready:
            return True  # not built yet: searches say so themselves
        with self._cond:
            target = self._enqueued
            while self._done_seq < target:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(left)
        return True

    def status(self) -> SearchStatus:
        """How far the full-text index has got."""
        return SearchStatus(self.ready, self.done, self.total, self.pending, self.problem)

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
                    con.execute("DROP TABLE IF EXISTS docs")
                    con.execute("DELETE FROM meta")
                    con.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
                                "size INTEGER, mtime_ns INTEGER, inode INTEGER, "
                                "deprecated INTEGER, stale_day INTEGER, stale_at REAL)")
                    con.execute(f"CREATE VIRTUAL TABLE fts USING fts5(path, title, headings, body, "
                                f"tokenize='{TOKENIZER}')")
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
        for i in range(0, len(work), BATCH):
            if self._stop.is_set():
                return
            self._apply(con, work[i:i + BATCH], snap)
            self.done = min(len(work), i + BATCH)
            bus.publish(IndexProgress("search", self.done, self.total))
            time.sleep(0)  # let listing threads in between batches
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
        root = self.vault.root_real
        rows = []
        for path in paths:
            e = snap.by_path.get(path)
            if e is None or e.kind != NOTE:
                rows.append((path, None, None))
                continue
            try:
                with open(os.path.join(root, *path.split("/")), "rb") as f:
                    data = _read_capped(f, e.size_bytes, MAX_BODY_CHARS * 4 + 4096)
            except OSError:
                rows.append((path, None, None))  # gone or unreadable: the next event re-indexes it
                continue
            rows.append((path, e, note_text(data)))
        con.execute("BEGIN IMMEDIATE")
        try:
            for path, e, text in rows:
                old = con.execute("SELECT id, size, mtime_ns, inode FROM docs WHERE path = ?", (path,)).fetchone()
                if e is None:
                    if old is not None:
                        con.execute("DELETE FROM fts WHERE rowid = ?", (old[0],))
                        con.execute("DELETE FROM docs WHERE id = ?", (old[0],))
                        self._rowids.pop(path, None)
                    continue
                okf_cols = (e.okf_status == "deprecated",
                            e.stale_date.toordinal() if e.stale_date is not None else None,
                            e.stale_instant.timestamp() if e.stale_instant is not None else None)
                if old is not None:
                    if old[1:] == (e.size_bytes, e.mtime_ns, e.inode):
                        continue
                    rowid = old[0]
                    con.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
                    con.execute("UPDATE docs SET size = ?, mtime_ns = ?, inode = ?, deprecated = ?, stale_day = ?, "
                                "stale_at = ? WHERE id = ?", (e.size_bytes, e.mtime_ns, e.inode, *okf_cols, rowid))
                else:
                    rowid = con.execute("INSERT INTO docs (path, size, mtime_ns, inode, deprecated, stale_day, "
                                        "stale_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                        (path, e.size_bytes, e.mtime_ns, e.inode, *okf_cols)).lastrowid
                headings, body = text
                con.execute("INSERT INTO fts (rowid, path, title, headings, body) VALUES (?, ?, ?, ?, ?)",
                            (rowid, path, e.title, headings, body))
                self._rowids[e.path] = rowid
            con.execute("COMMIT")
            self._writes += 1
        except BaseException:
            con.execute("ROLLBACK")
            raise

    # the readers ------------------------------------------------------------------------------
    def _reader(self) -> sqlite3.Connection:
        local = self._local
        con = getattr(local, "con", None)
        if con is not None and local.epoch == self._epoch:
            return con
        if con is not None:
            con.close()
        # autocommit: the scope temp table's writes must not open a transaction that would pin
        # this reader to an old snapshot of the index
        con = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=5.0, check_same_thread=False,
                              isolation_level=None)
        con.execute("PRAGMA cache_size = -8000")
        local.con, local.epoch = con, self._epoch
        return con

    def search(self, text: object, scope: Query, *, limit: int = 20, cursor: str | None = None,
               count: bool | None = None) -> SearchResult:
        """Rank the notes in `scope` that match `text`. See `Vault.search`.

        Ranking, OKF factors, scoping and paging all run inside SQLite (one pass over the
        matches, FTS5 as the outer loop); Python only sees the page. `count` is accepted for
        compatibility: the total is always counted (also inside SQLite).
        """
        terms = parse_query(text)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise QueryError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
        if self.problem and not self.ready:
            raise QueryError(self.problem)
        if not self.ready:
            raise SearchNotReady(self.done, self.total)
        match = to_fts(terms)
        vault = self.vault
        snap = vault.snapshot
        clock = vault.clock
        fp = hashlib.sha256(json.dumps([match, asdict(scope)], sort_keys=True, default=str).encode()).hexdigest()[:12]
        offset = _decode_cursor(cursor, fp) if cursor else 0
        bundle = snap.is_bundle
        con = self._reader()
        scoped = not _unscoped(scope)
        try:
            if scoped:
                self._fill_scope(con, snap, scope)
            join = " CROSS JOIN temp.scope s ON s.id = fts.rowid" if scoped else ""
            factor = _FACTOR_SQL if bundle else "1.0"
            now = clock.now()
            params = {"m": match, "today": clock.today().toordinal(), "now": now.timestamp(),
                      "lim": limit + 1, "off": offset}
            rows = con.execute(
                f"SELECT fts.rowid, d.path, -bm25(fts, {_WEIGHTS_SQL}) * {factor} AS score "
                f"FROM fts{join} CROSS JOIN docs d ON d.id = fts.rowid WHERE fts MATCH :m "
                f"ORDER BY score DESC, d.path LIMIT :lim OFFSET :off", params).fetchall()
            total = con.execute(f"SELECT count(*) FROM fts{join} WHERE fts MATCH :m", {"m": match}).fetchone()[0]
            more = len(rows) > limit
            page = []
            for rowid, path, score in rows[:limit]:
                e = snap.by_path.get(path)
                if e is not None and e.kind == NOTE:  # else: gone since the full-text index saw it
                    page.append((rowid, e, score))
            snippets = self._snippets(con, match, {rowid: e.path for rowid, e, _ in page})
        except sqlite3.OperationalError as exc:
            raise QueryError(f"search could not run this query ({exc}); use plain words, \"phrases\", "
                             "prefix* and -exclusions") from None
        except sqlite3.DatabaseError as exc:
            raise QueryError(f"search index is damaged ({exc}); it is being rebuilt, try again shortly") from None
        hits = []
        for _rowid, e, score in page:
            marked, plain, spans = snippets.get(e.path) or _snippet_parts(e.title)
            hits.append(SearchHit(e.path, e.title, score, marked, plain, spans, e))
        next_cursor = _encode_cursor(fp, offset + limit) if more else None
        stale = self.pending > 0 or vault.index_stale
        return SearchResult(str(text), tuple(hits), total, next_cursor, snap.generation, bundle, stale)

    def _fill_scope(self, con: sqlite3.Connection, snap, scope: Query) -> None:
        """Load the scope's note ids into this connection's temp table (reused while nothing changed)."""
        clock = self.vault.clock
        key = (snap.generation, scope, clock.today(), self._writes)
        local = self._local
        if getattr(local, "scope_key", None) == key:
            return
        allowed = snap.cached(("search.scope", scope, clock.today()),
                              lambda: tuple(e.path for e in run_query(snap, scope, clock).entries))
        ids = self._rowids
        con.execute("CREATE TEMP TABLE IF NOT EXISTS scope (id INTEGER PRIMARY KEY)")
        con.execute("BEGIN")  # touches only the temp database: no snapshot of the index is held
        try:
            con.execute("DELETE FROM temp.scope")
            con.executemany("INSERT OR IGNORE INTO temp.scope (id) VALUES (?)",
                            ((i,) for i in map(ids.get, allowed) if i is not None))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        local.scope_key = key

    def _snippets(self, con, match: str, ids: dict[int, str]) -> dict[str, tuple[str, str, tuple]]:
        """Snippets for a page of hits: from the body when it matches, else from the best column."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        out = {}
        for rowid, body, best in con.execute(
                f"SELECT rowid, snippet(fts, 3, '{_OPEN}', '{_CLOSE}', '…', 24), "
                f"snippet(fts, -1, '{_OPEN}', '{_CLOSE}', '…', 24) FROM fts "
                f"WHERE fts MATCH ? AND rowid IN ({marks})", (match, *ids)):
            out[ids[rowid]] = _snippet_parts(body if body and _OPEN in body else (best or ""))
        return out
