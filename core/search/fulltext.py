"""Full-text search: an SQLite FTS5 index of every note, kept in step with the live index.

The index lives next to the entry cache (`search.sqlite` in the vault's cache folder), so a
warm start only re-indexes the notes that changed. Bodies are read from disk and handed to
SQLite; they never stay in Python memory. Ranking is BM25 over path, title, headings and
body (weighted), then OKF-aware on a bundle: deprecated notes x0.5, stale notes x0.75.

User text never reaches FTS5 syntax raw: `parse_query` reads words, "phrases", prefix*
and -exclusions, and `to_fts` quotes every term. Bad input raises QueryError.

Scoping (folder, pattern, frontmatter filters) is the listing's own `Query`, run by
`core.query.listing.run_query`: search adds no filter logic of its own.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import queue
import re
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.disk.safeio import fd_inside
from core.errors import QueryError
from core.events import IndexProblem, IndexProgress, IndexReady
from core.live.follower import ChangeFollower
from core.markdown import mdlex
from core.markdown.parse import decode, split_frontmatter
from core.memory import release_free_memory
from core.model import NOTE, Entry
from core.query.listing import Query, pairs, run_query
from core.search import ranking

if TYPE_CHECKING:  # vault.py imports this module
    from core.vault import Vault

SCHEMA_VERSION = 3
TOKENIZER = "porter unicode61 remove_diacritics 2"
COLUMNS = ("path", "name", "title", "aliases", "headings", "body")
FIELD_COLUMNS = ("name", "title", "aliases", "headings")  # also in `ftsf`, whose postings are the fields' only
WEIGHTS = ranking.WEIGHTS
CANDIDATES = 200  # notes re-ranked per query (FTS5's bm25 order picks them; field matches join them)
FALLBACK_BELOW = 3  # a strict AND of 3+ words with fewer hits than this (or none) falls back to ranked OR
NEAR_CHECKED = 60  # candidates checked for proximity
COMMON_FAST_ABOVE = 20_000  # notes above which a query of only common words skips FTS5's bm25 (see _all_common)
COMPRESS_LEVEL = 1
MAX_DUPLICATES = 20  # candidates of one file name compared for near-identical text
DEPRECATED_FACTOR = 0.5
STALE_FACTOR = 0.75
MAX_QUERY_CHARS = 500
MAX_TERMS = 32
MAX_LIMIT = 1000
MAX_BODY_CHARS = 2_000_000  # text beyond this (per note) is not searchable
SNIPPET_SCAN_BYTES = 256 * 1024  # hits in notes larger than this get a snippet from one scan, not FTS5's snippet()
BATCH = 400
_WEIGHTS_SQL = ", ".join(str(w) for w in WEIGHTS)
# the OKF factor of a docs row `d` on a bundle, with :today (ordinal) and :now (epoch seconds)
_FACTOR_SQL = (f"(CASE WHEN d.deprecated THEN {DEPRECATED_FACTOR} ELSE 1.0 END) * "
               f"(CASE WHEN d.stale_day <= :today OR d.stale_at <= :now THEN {STALE_FACTOR} ELSE 1.0 END)")
_OPEN, _CLOSE = "\x02", "\x03"  # snippet markers inside SQLite; replaced before they leave this module
_WORD = re.compile(r"[^\W_]", re.UNICODE)  # a token character for FTS5's unicode61 (letters, digits)
_SPACE = re.compile(r"\s+")
_LEAD_MARKS = re.compile(r"^#{1,6}[ \t]+", re.MULTILINE)


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


def _has(part: set[str], tokens: list[str], prefix: bool) -> bool:
    """Whether a field's token set holds every token of a term (a prefix term: starts one)."""
    if not tokens:
        return False
    if prefix:
        return all(tok in part for tok in tokens[:-1]) and any(p.startswith(tokens[-1]) for p in part)
    return all(tok in part for tok in tokens)


def _wanted(terms: Iterable[Term]) -> list[Term]:
    """The terms a note must match: the positive ones without stop and question words (unless
    that leaves nothing), each once."""
    positive = [t for t in terms if not t.exclude]
    wanted = [t for t in positive if t.phrase or t.prefix or not ranking.is_stop(t.text)] or positive
    out, seen = [], set()
    for t in wanted:
        key = (t.text.casefold(), t.phrase, t.prefix)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def _group_duplicates(con, scored: list[tuple[int, str, float]]) -> list[tuple[int, str, float, tuple[str, ...]]]:
    """Fold near-duplicate hits (same file name, near-identical text, different folders) into one:
    the newest path (natural order) takes the best member's place and lists the others."""
    names: dict[str, list[int]] = {}
    for i, (_rowid, path, _s) in enumerate(scored):  # the same file name (so the same default title)
        names.setdefault(path.rpartition("/")[2].casefold(), []).append(i)
    groups = [idx[:MAX_DUPLICATES] for idx in names.values() if len(idx) > 1]
    if not groups:
        return [(r, p, s, ()) for r, p, s in scored]
    want = [scored[i][0] for idx in groups for i in idx]
    bodies = dict(con.execute(f"SELECT id, body FROM content WHERE id IN ({','.join(str(int(x)) for x in want)})"))
    replace_at: dict[int, tuple[int, str, float, tuple[str, ...]]] = {}
    dropped: set[int] = set()
    for idx in groups:
        clusters: list[list[int]] = []
        for i in idx:
            rowid, path = scored[i][0], scored[i][1]
            folder = path.rpartition("/")[0]
            for cl in clusters:
                head = scored[cl[0]]
                if head[1].rpartition("/")[0] != folder and ranking.similar_text(bodies.get(head[0]) or "",
                                                                                 bodies.get(rowid) or ""):
                    cl.append(i)
                    break
            else:
                clusters.append([i])
        for cl in clusters:
            if len(cl) < 2:
                continue
            paths = ranking.newest_first(scored[i][1] for i in cl)
            rep = next(i for i in cl if scored[i][1] == paths[0])
            first = min(cl)
            replace_at[first] = (scored[rep][0], paths[0], scored[first][2], tuple(paths[1:]))
            dropped.update(i for i in cl if i != first)
    out = []
    for i, (rowid, path, s) in enumerate(scored):
        if i in dropped:
            continue
        out.append(replace_at.get(i, (rowid, path, s, ())))
    return out


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
    duplicates: tuple[str, ...] = ()  # near-identical notes (same file name) in other folders, folded in

    def as_json(self) -> dict[str, Any]:
        """The hit as a JSON-safe dict (path, title, folder, score, snippet, highlights, modified_at,
        and duplicates when there are any)."""
        out = {"path": self.path, "title": self.title, "folder": self.entry.folder, "score": self.score,
               "snippet": self.snippet, "snippet_plain": self.snippet_plain,
               "highlights": [list(h) for h in self.highlights], "modified_at": self.entry.modified_at}
        if self.duplicates:
            out["duplicates"] = list(self.duplicates)
        return out


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
    match: str = "all"  # "all": every word matched; "any": too few did, so notes with any word, ranked
    mode: str = "keyword"  # "keyword", "semantic" or "hybrid" (core.search.hybrid)


@dataclass(frozen=True, slots=True)
class SearchStatus:
    """Progress of the full-text index: ready once every note has been indexed."""

    ready: bool
    done: int
    total: int
    pending: int  # changes waiting to be applied
    problem: str | None = None


def _scanned_snippet(body: str, wanted: Iterable[Term], before: int = 80, after: int = 120) -> str:
    """A snippet (FTS5's markers around the first hit) from one regex scan of `body`: the first
    occurrence of any wanted term as a whole word (a prefix term: a word start), case-folded."""
    alts = []
    for t in wanted:
        words = [re.escape(w) for w in t.text.split()]
        if not words:
            continue
        alts.append(r"(?<![^\W_])" + r"\s+".join(words) + ("" if t.prefix else r"(?![^\W_])"))
    m = re.search("|".join(alts), body, re.IGNORECASE) if alts else None
    if m is None:
        return body[:before + after] + ("…" if len(body) > before + after else "")
    start, end = max(0, m.start() - before), min(len(body), m.end() + after)
    return ("…" if start else "") + body[start:m.start()] + _OPEN + m.group(0) + _CLOSE + body[m.end():end] + (
        "…" if end < len(body) else "")


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
    return (q.folder is None and q.pattern is None and not q.exclude_patterns and not q.filters and not q.exclude
            and not q.text and not q.words and not q.problems_only)


# --- the index -----------------------------------------------------------------------------------

def _fingerprint() -> str:
    h = hashlib.sha256(repr((SCHEMA_VERSION, TOKENIZER)).encode())
    h.update(Path(__file__).read_bytes())
    h.update(Path(ranking.__file__).read_bytes())
    h.update(Path(mdlex.__file__).read_bytes())  # what note_text reads
    return h.hexdigest()[:24]


FINGERPRINT = _fingerprint()


def note_text(data: bytes) -> tuple[str, str]:
    """(headings, body) of a note's bytes, for the full-text index, read by core.markdown.mdlex as the
    link index reads them: ATX and setext headings outside code, one a line; the body without
    its code (fenced, indented, code spans) and comments (`%% %%`, `<!-- -->`)."""
    text, _ = decode(data)
    _, body = split_frontmatter(text)
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS]
    hidden = mdlex.hidden_ranges(body)
    scan = mdlex.masked(body, hidden)
    found = mdlex.headings(scan, 0, body)
    return "\n".join(h.text for h in found if h.text), mdlex.visible(body, hidden)


def _inflate(blob: bytes | None) -> str | None:
    if blob is None:
        return None
    try:
        return zlib.decompress(blob).decode("utf-8")
    except (zlib.error, UnicodeDecodeError):
        return ""


def _register(con: sqlite3.Connection) -> None:
    con.create_function("vw_inflate", 1, _inflate, deterministic=True)


_SEP = "\x1f"
MAX_FIELD_TERMS = 400


def tokens_of(con: sqlite3.Connection, texts: list[str]) -> list[list[str]]:
    """FTS5's own tokens of each text (stemmed, folded), in order, through a temp FTS5 table on `con`.

    The ranking compares these with a note's stored field tokens, so "creates" in a title and
    "create" in a query agree exactly as they do inside the index. Touches only `temp`.
    """
    if not texts:
        return []
    con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_tok USING fts5(x, tokenize='{TOKENIZER}')")
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_tok_v USING fts5vocab(temp, vw_tok, instance)")
    own = not con.in_transaction
    if own:
        con.execute("BEGIN")
    try:
        con.executemany("INSERT INTO temp.vw_tok (rowid, x) VALUES (?, ?)", enumerate(texts))
        out: list[list[str]] = [[] for _ in texts]
        for doc, term in con.execute("SELECT doc, term FROM temp.vw_tok_v ORDER BY doc, offset"):
            out[doc].append(term)
        con.execute("DELETE FROM temp.vw_tok")
    except BaseException:
        if own:
            con.execute("ROLLBACK")
        raise
    if own:
        con.execute("COMMIT")
    return out


def field_terms(con: sqlite3.Connection, rows: list[tuple[str, str, str, str]]) -> list[str]:
    """For each (name, title, aliases, headings): the distinct tokens of name+title, aliases and
    headings, stored with the note (`fterms`) so a query can see which fields hold its words."""
    texts = []
    for name, title, aliases, headings in rows:
        texts += [name + " " + title, aliases, headings]
    toks = tokens_of(con, texts)
    out = []
    for i in range(len(rows)):
        parts = []
        for k in range(3):
            seen = list(dict.fromkeys(toks[3 * i + k]))[:MAX_FIELD_TERMS]
            parts.append(" ".join(seen))
        out.append(_SEP.join(parts))
    return out


def _deflate(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8", "surrogatepass"), COMPRESS_LEVEL)


def note_aliases(e: Entry) -> str:
    """A note's frontmatter aliases (`aliases` or `alias`, a list or one string), one per line."""
    fm = e.frontmatter or {}
    out: list[str] = []
    for key in ("aliases", "alias"):
        value = fm.get(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out.extend(str(v) for v in value if isinstance(v, (str, int, float)) and not isinstance(v, bool))
    return "\n".join(out)


def note_name(path: str) -> str:
    """The words of a note's file name (see `ranking.name_words`)."""
    stem = path.rsplit("/", 1)[-1]
    if stem.lower().endswith(".md"):
        stem = stem[:-3]
    return ranking.name_words(stem)


class SearchIndex(ChangeFollower):
    """The FTS5 index of one vault, built and updated by one background thread.

    Readers (any thread) get their own read-only connection. `wait_synced` and `pending`
    make the index's lag visible to `Vault.wait_for_pending_writes` and `index_stale`.
    """

    def __init__(self, vault: Vault, db_path: Path) -> None:
        super().__init__(vault)
        self.db_path = db_path
        self._enqueued = 0
        self._done_seq = 0
        self._resync = False
        self._local = threading.local()
        self._epoch = 0  # bumped when the database file is replaced
        self._rowids: dict[str, int] = {}  # path -> FTS rowid (for scoped searches)
        self._writes = 0  # committed write transactions (invalidates readers' scope tables)
        self._synced_generation = -1
        self._stats: tuple | None = None  # (writes, note count, {term: (document frequency, tokens)})
        self.ready = False
        self.done = 0
        self.total = 0
        self.problem: str | None = None
        self.build_seconds: float | None = None

    thread_name = "vaultwatch-search"

    def _queued(self) -> None:
        self._enqueued += 1

    def _on_event(self, event) -> None:
        super()._on_event(event)
        if isinstance(event, IndexReady) and event.generation > self._synced_generation:
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
                with open(os.path.join(root, *path.split("/")), "rb") as f:
                    if not fd_inside(f.fileno(), root):  # a folder on the way swapped for an outside link
                        raise PermissionError("no longer inside the vault")
                    data = _read_capped(f, e.size_bytes, MAX_BODY_CHARS * 4 + 4096)
            except OSError:
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
        _register(con)
        local.con, local.epoch = con, self._epoch
        return con

    def close_reader(self) -> None:
        """Close this thread's read connection (and free its page cache), e.g. after a bulk read."""
        local = self._local
        con = getattr(local, "con", None)
        if con is not None:
            local.con = None
            local.scope_key = None  # the scope table went with the connection
            con.close()

    def search(self, text: object, scope: Query, *, limit: int = 20, cursor: str | None = None,
               count: bool | None = None) -> SearchResult:
        """Rank the notes in `scope` that match `text`. See `Vault.search`.

        Every word must match (stop and question words need not); when that finds fewer than
        FALLBACK_BELOW notes, any word may match, ranked by how much of the query a note
        covers (`SearchResult.match` says which). FTS5 picks the candidates (its bm25 order
        plus every note whose name, title, aliases or headings match); `ranking.score`
        orders them; near-duplicates (same file name, near-identical text) are grouped under the
        newest path. `count` is accepted for compatibility: the total is always counted.
        """
        terms = parse_query(text)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise QueryError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
        if self.problem and not self.ready:
            raise QueryError(self.problem)
        if not self.ready:
            raise SearchNotReady(self.done, self.total)
        wanted = _wanted(terms)
        neg = "".join(" NOT " + _quote(t) for t in terms if t.exclude)
        strict = " ".join(_quote(t) for t in wanted) + neg
        loose = "(" + " OR ".join(_quote(t) for t in wanted) + ")" + neg
        vault = self.vault
        snap = vault.snapshot
        clock = vault.clock
        fp = hashlib.sha256(json.dumps([strict, asdict(scope)], sort_keys=True, default=str).encode()).hexdigest()[:12]
        offset = _decode_cursor(cursor, fp) if cursor else 0
        bundle = snap.is_bundle
        con = self._reader()
        scoped = not _unscoped(scope)
        try:
            if scoped:
                self._fill_scope(con, snap, scope)
            join = " CROSS JOIN temp.scope s ON s.id = {t}.rowid" if scoped else ""
            window = max(CANDIDATES, offset + limit + 1)
            excluding = bool(neg)
            mode, match = "all", strict
            cands, total, unsure = self._candidates(con, join, strict, wanted, window, "all", excluding)
            if (total == 0 or total < FALLBACK_BELOW and len(wanted) > 2) and len(wanted) > 1:
                any_cands, any_total, any_unsure = self._candidates(con, join, loose, wanted, window, "any", excluding)
                if any_total > total:
                    mode, match, total, cands, unsure = "any", loose, any_total, any_cands, any_unsure
            okf = (clock.today().toordinal(), clock.now().timestamp()) if bundle else None
            ranked = self._ranked(con, cands, unsure, match, wanted, okf, mode, offset + limit + 1)
            more = len(ranked) > offset + limit
            page = []
            for rowid, path, score_, dups in ranked[offset:offset + limit]:
                e = snap.by_path.get(path)
                if e is not None and e.kind == NOTE:  # else: gone since the full-text index saw it
                    page.append((rowid, e, score_, dups))
            snippets = self._snippets(con, match, {rowid: e.path for rowid, e, _, _ in page},
                                      {e.path for _, e, _, _ in page if e.size_bytes > SNIPPET_SCAN_BYTES}, wanted)
        except sqlite3.OperationalError as exc:
            raise QueryError(f"search could not run this query ({exc}); use plain words, \"phrases\", "
                             "prefix* and -exclusions") from None
        except sqlite3.DatabaseError as exc:
            raise QueryError(f"search index is damaged ({exc}); it is being rebuilt, try again shortly") from None
        hits = []
        for _rowid, e, score_, dups in page:
            marked, plain, spans = snippets.get(e.path) or _snippet_parts(e.title)
            hits.append(SearchHit(e.path, e.title, round(score_, 4), marked, plain, spans, e, dups))
        next_cursor = _encode_cursor(fp, offset + limit) if more else None
        stale = self.pending > 0 or vault.index_stale
        return SearchResult(str(text), tuple(hits), total, next_cursor, snap.generation, bundle, stale, mode)

    def _candidates(self, con, join: str, match: str, wanted: list[Term], window: int, mode: str,
                    excluding: bool) -> tuple[dict[int, float], int, set[int]]:
        """({rowid: FTS5's -bm25}, how many notes match, candidates not yet known to match): the best
        `window` by bm25, counted in the same statement, plus notes whose name, title, aliases or
        headings hold the words."""
        w = ", ".join(str(x) for x in WEIGHTS)
        fts_join = join.format(t="fts")
        if self._all_common(con, wanted):
            # every word is in most notes: FTS5's bm25 is ~0 for all of them (or, for a phrase of such
            # words, costs two passes over their every match), and sorting the many matches by it
            # would cost O(matches); the field matches carry the signal instead
            total = con.execute(f"SELECT count(*) FROM fts{fts_join} WHERE fts MATCH ?", (match,)).fetchone()[0]
            fields = self._field_matches(con, join, match, wanted, window, mode, excluding)
            cands = {r: 0.0 for r, _ in fields}
            unsure: set[int] = {r for r, check in fields if check}
            for (r,) in con.execute(f"SELECT fts.rowid FROM fts{fts_join} WHERE fts MATCH ? LIMIT ?", (match, window)):
                cands.setdefault(r, 0.0)
                unsure.discard(r)
            return cands, total, unsure
        rows = con.execute(f"SELECT r, s, count(*) OVER () FROM (SELECT fts.rowid AS r, -bm25(fts, {w}) AS s "
                           f"FROM fts{fts_join} WHERE fts MATCH ?) ORDER BY s DESC LIMIT ?", (match, window)).fetchall()
        total = rows[0][2] if rows else 0
        cands = {r: b for r, b, _ in rows}
        unsure = set()
        if total > len(cands):
            # notes whose fields hold the words join in; below the window, their bm25 is at most the
            # window's lowest, taken as theirs (a second bm25() would rescan every term's matches)
            floor = min(cands.values(), default=0.0)
            for rowid, check in self._field_matches(con, join, match, wanted, CANDIDATES, mode, excluding):
                if rowid not in cands:
                    cands[rowid] = floor
                    if check:
                        unsure.add(rowid)
        return cands, total, unsure

    def _field_matches(self, con, join: str, match: str, wanted: list[Term], limit: int, mode: str,
                       excluding: bool) -> list[tuple[int, bool]]:
        """Up to `limit` notes whose name, title or aliases hold every word, then those whose name,
        title, aliases or headings hold any, found in the fields' own index (`ftsf`), each with
        whether it may still not match `match` (a word only elsewhere, or an excluded one)."""
        quoted = [_quote(t) for t in wanted]
        every = "{name title aliases} : (" + " ".join(quoted) + ")"
        some = "{name title aliases headings} : (" + " OR ".join(quoted) + ")"
        f_join = join.format(t="ftsf")
        found: dict[int, bool] = {}  # rowid -> whether it still has to be checked against `match`
        for expr, check in ((every, excluding), (some, excluding or (mode == "all" and len(wanted) > 1))):
            if len(found) >= limit:
                break
            if check and mode == "all" and expr is some and any(t.prefix for t in wanted):
                break  # checking a prefix query note by note rebuilds its prefix's postings each time
            for (r,) in con.execute(f"SELECT ftsf.rowid FROM ftsf{f_join} WHERE ftsf MATCH ? LIMIT ?", (expr, limit)):
                found.setdefault(r, check)
        return list(found.items())[:limit]

    def _ranked(self, con, cands: dict[int, float], unsure: set[int], match: str, wanted: list[Term],
                okf: tuple[int, float] | None, mode: str, need: int) -> list[tuple[int, str, float, tuple[str, ...]]]:
        """(rowid, path, score, duplicate paths) of the candidates, best first. Candidates not known
        to match are checked only when they reach the first `need` (a lookup per note)."""
        scored = self._score(con, cands, wanted, okf, mode)
        scored.sort(key=lambda r: (-r[2], r[1]))
        while unsure:
            top = [r for r, _p, _s in scored[:need] if r in unsure]
            if not top:
                break
            ok = {r for (r,) in con.execute(f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN "
                                            f"({','.join(str(int(x)) for x in top)})", (match,))}
            unsure.difference_update(top)
            if len(ok) < len(top):
                failed = set(top) - ok
                scored = [row for row in scored if row[0] not in failed]
        return _group_duplicates(con, scored)

    def _term_stats(self, con, wanted: list[Term]) -> tuple[int, list[float], list[float], list[list[str]]]:
        """(note count, our IDFs, FTS5's IDFs, each term's tokens) for the query's terms."""
        cache = self._stats
        if cache is None or cache[0] != self._writes:
            cache = (self._writes, con.execute("SELECT count(*) FROM docs").fetchone()[0], {})
            self._stats = cache
        n_docs, known = cache[1], cache[2]
        missing = [t for t in wanted if (t.text, t.phrase, t.prefix) not in known]
        if missing:
            con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_rows USING fts5vocab(main, fts, row)")
            for t, toks in zip(missing, tokens_of(con, [t.text for t in missing]), strict=False):
                word_dfs = []
                for tok in toks[:-1] if t.prefix else toks:
                    row = con.execute("SELECT doc FROM temp.vw_rows WHERE term = ?", (tok,)).fetchone()
                    word_dfs.append(row[0] if row else 0)
                if len(toks) == 1 and not t.prefix:
                    df = word_dfs[0]
                else:
                    df = con.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (_quote(t),)).fetchone()[0]
                # common: each of its words (or the term itself) is in more than half the notes
                common = ranking.fts_idf(df, n_docs) <= 1e-6 or (
                    bool(word_dfs) and all(ranking.fts_idf(x, n_docs) <= 1e-6 for x in word_dfs))
                if len(known) > 4096:
                    known.clear()
                known[(t.text, t.phrase, t.prefix)] = (df, toks, common)
        stats = [known[(t.text, t.phrase, t.prefix)] for t in wanted]
        return (n_docs, [ranking.idf(df, n_docs) for df, _, _ in stats],
                [ranking.fts_idf(df, n_docs) for df, _, _ in stats], [toks for _, toks, _ in stats])

    def _all_common(self, con, wanted: list[Term]) -> bool:
        """Whether every word of the query is in more than half the notes of a big vault (then FTS5's
        bm25 carries almost no signal and costs a pass over all their matches: it is left out)."""
        n_docs = self._term_stats(con, wanted)[0]
        known = self._stats[2] if self._stats else {}
        return n_docs > COMMON_FAST_ABOVE and all(known[(t.text, t.phrase, t.prefix)][2] for t in wanted)

    def _score(self, con, cands: dict[int, float], wanted: list[Term], okf, mode: str) -> list[tuple[int, str, float]]:
        """Score candidate notes (rowid -> FTS5's -bm25) with `ranking.score`."""
        if not cands:
            return []
        _n, idfs, fidfs, toks = self._term_stats(con, wanted)
        fidf_sum = sum(fidfs)
        inlist = ",".join(str(int(i)) for i in cands)
        rows = con.execute(f"SELECT id, path, deprecated, stale_day, stale_at, fterms FROM docs "
                           f"WHERE id IN ({inlist})").fetchall()
        present: list[set[int] | None] = [None] * len(wanted)
        if mode == "any":  # which words each candidate has (in "all" mode: every one)
            for j, t in enumerate(wanted):
                present[j] = {r for (r,) in con.execute(f"SELECT rowid FROM fts WHERE fts MATCH ? "
                                                        f"AND rowid IN ({inlist})", (_quote(t),))}
        prelim = []
        for rowid, path, deprecated, stale_day, stale_at, fterms in rows:
            parts = [set(p.split()) for p in (fterms or _SEP * 2).split(_SEP)]
            sigs = []
            for j, (t, tk) in enumerate(zip(wanted, toks, strict=False)):
                where = [_has(part, tk, t.prefix) for part in parts]
                has = present[j]
                sigs.append(ranking.TermSignal(has is None or rowid in has, *where))
            factor = 1.0
            if okf is not None:
                if deprecated:
                    factor *= DEPRECATED_FACTOR
                if (stale_day is not None and stale_day <= okf[0]) or (stale_at is not None and stale_at <= okf[1]):
                    factor *= STALE_FACTOR
            prelim.append((rowid, path, sigs, factor))
        near: set[int] = set()
        if len(wanted) > 1:  # proximity: checked for the best candidates only (a seek per note)
            best = sorted(prelim, key=lambda r: -ranking.score(r[2], idfs, cands[r[0]], fidf_sum, False, r[3]))
            ids = ",".join(str(r[0]) for r in best[:NEAR_CHECKED])
            expr = f"NEAR({' '.join(_quote(t) for t in wanted)}, {ranking.NEAR_DISTANCE})"
            near = {r for (r,) in con.execute(f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({ids})", (expr,))}
        return [(rowid, path, ranking.score(sigs, idfs, cands[rowid], fidf_sum, rowid in near, factor))
                for rowid, path, sigs, factor in prelim]

    def matching(self, terms: list[Term]) -> set[str]:
        """Paths of the notes that match any of `terms` (for -exclusions outside keyword mode)."""
        if not terms:
            return set()
        expr = " OR ".join(_quote(replace(t, exclude=False)) for t in terms)
        return {p for (p,) in self._reader().execute(
            "SELECT d.path FROM fts CROSS JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?", (expr,))}

    def passages(self, paths: list[str], make) -> list[str]:
        """`make(name, title, aliases, headings, body)` for each path, from the stored text ("" if unknown)."""
        if not paths:
            return []
        con = self._reader()
        got: dict[str, str] = {}
        for i in range(0, len(paths), 500):
            chunk = paths[i:i + 500]
            for path, name, title, aliases, headings, body in con.execute(
                    f"SELECT path, name, title, aliases, headings, body FROM content "
                    f"WHERE path IN ({','.join('?' * len(chunk))})", chunk):
                got[path] = make(name or "", title or "", aliases or "", headings or "", body or "")
        return [got.get(p, "") for p in paths]

    def lead(self, paths: list[str], chars: int = 160) -> dict[str, str]:
        """The first words of each note's body, whitespace collapsed (a snippet for a hit by meaning)."""
        out = {}
        for path, text in zip(paths, self.passages(paths, lambda n, t, a, h, body: body), strict=False):
            lines = text.split("\n")
            while lines and (not lines[0].strip() or lines[0].startswith("# ")):
                lines.pop(0)  # the title heading says nothing the title does not
            text = _SPACE.sub(" ", _LEAD_MARKS.sub("", "\n".join(lines))).strip()
            out[path] = text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + "…"
        return out

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

    def _snippets(self, con, match: str, ids: dict[int, str], big: set[str] = frozenset(),  # type: ignore[assignment]
                  wanted: list[Term] = ()) -> dict[str, tuple[str, str, tuple]]:  # type: ignore[assignment]
        """Snippets for a page of hits: from the body when it matches, else from the best column.

        The page's notes are copied into a small temp FTS5 table and the snippets taken there: in
        the big index a prefix or phrase would be looked up across every note again for each hit.
        Notes over SNIPPET_SCAN_BYTES (`big`) get theirs from one scan of the body instead: FTS5's
        snippet() scores every hit of a note, and a 2 MB body of one repeated word took minutes."""
        if not ids:
            return {}
        rows = con.execute(f"SELECT id, {', '.join(COLUMNS)} FROM content "
                           f"WHERE id IN ({','.join(str(int(i)) for i in ids)})").fetchall()
        out = {}
        body_at = 1 + COLUMNS.index("body")
        small = []
        for row in rows:
            if ids[row[0]] in big:
                out[ids[row[0]]] = _snippet_parts(_scanned_snippet(row[body_at] or "", wanted))
            else:
                small.append(row)
        if not small:
            return out
        con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_snip USING fts5({', '.join(COLUMNS)}, "
                    f"tokenize='{TOKENIZER}')")
        con.execute("BEGIN")  # touches only the temp database
        try:
            con.executemany(f"INSERT INTO temp.vw_snip (rowid, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            small)
            for rowid, body, best in con.execute(
                    f"SELECT rowid, snippet(vw_snip, 5, '{_OPEN}', '{_CLOSE}', '…', 24), "
                    f"snippet(vw_snip, -1, '{_OPEN}', '{_CLOSE}', '…', 24) FROM temp.vw_snip "
                    f"WHERE vw_snip MATCH ?", (match,)).fetchall():
                out[ids[rowid]] = _snippet_parts(body if body and _OPEN in body else (best or ""))
            con.execute("DELETE FROM temp.vw_snip")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return out
