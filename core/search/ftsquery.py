"""The full-text index's readers: candidates from FTS5, ranked by `core.search.ranking`.

`SearchQueries` is the reading half of `core.search.fulltext.SearchIndex` (a mixin over its
state). Ranking is BM25 over path, title, headings and body (weighted), then OKF-aware on a
bundle: deprecated notes x0.5, stale notes x0.75. Scoping (folder, pattern, frontmatter
filters) is the listing's own `Query`, run by `core.query.listing.run_query`: search adds no
filter logic of its own.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

from vaultwatch.core.errors import QueryError
from vaultwatch.core.memo import BoundedMemo
from vaultwatch.core.model import NOTE
from vaultwatch.core.query.listing import Query, run_query
from vaultwatch.core.search import ranking
from vaultwatch.core.search.ftsstate import IndexState
from vaultwatch.core.search.notetext import COLUMNS, FIELD_SEP, tokens_of
from vaultwatch.core.search.results import (
    MAX_LIMIT,
    SearchHit,
    SearchNotReady,
    SearchResult,
    decode_cursor,
    encode_cursor,
    unscoped,
)
from vaultwatch.core.search.snippets import SNIPPET_SCAN_BYTES, page_snippets, snippet_parts
from vaultwatch.core.search.terms import Term, field_needles, field_tester, parse_query, quote_term, wanted_terms

if TYPE_CHECKING:
    from vaultwatch.core.index.snapshot import Snapshot
    from vaultwatch.core.search.readers import Reader

WEIGHTS = ranking.WEIGHTS
CANDIDATES = 200  # notes re-ranked per query (FTS5's bm25 order picks them; field matches join them)
FALLBACK_BELOW = 3  # a strict AND of 3+ words with fewer hits than this (or none) falls back to ranked OR
NEAR_CHECKED = 60  # candidates checked for proximity
LEAD_SCAN = 400  # body characters a hit's lead is worked out from first (see lead_of)
LEAD_MARGIN = 16  # more than a cut can change at the end of what they give
COMMON_FAST_ABOVE = 20_000  # notes above which a query of only common words skips FTS5's bm25 (see _all_common)
MAX_DUPLICATES = 20  # candidates of one file name compared for near-identical text
FEW_MATCHES = 32  # a query matching at most this many notes may have their bm25 worked out here (_few_matches)
IDF_PASS_TOKENS = 8  # ... when its words' notes outnumber this many times the tokens those few notes hold
_HIGHLIGHT = "\x02"  # marks each instance of a word in FTS5's highlight(), to count them
_INTEGRAL_WEIGHTS = all(float(w).is_integer() for w in WEIGHTS)  # a row's weighted counts add up exactly
DEPRECATED_FACTOR = 0.5
STALE_FACTOR = 0.75
_LEAD_MARKS = re.compile(r"^#{1,6}[ \t]+", re.MULTILINE)
_SPACE = re.compile(r"\s+")


def _lead_text(text: str) -> str:
    lines = text.split("\n")
    first = 0
    while first < len(lines) and (not lines[first].strip() or lines[first].startswith("# ")):
        first += 1  # the title heading says nothing the title does not
    return _SPACE.sub(" ", _LEAD_MARKS.sub("", "\n".join(lines[first:]))).strip()


def lead_of(body: str, chars: int = 160) -> str:
    """The first words of a body, heading marks dropped and whitespace collapsed, cut to `chars`
    at a word. Worked out from the first LEAD_SCAN characters, which decide it unless what they
    give is short: a cut body differs from the whole only in its last few characters (a heading's
    marks cut before their space, a whitespace run), LEAD_MARGIN at most (running the whole of
    each hit's body through the regexes was a sizeable share of a search's time)."""
    text = _lead_text(body[:LEAD_SCAN])
    if len(body) > LEAD_SCAN and len(text) <= chars + LEAD_MARGIN:
        text = _lead_text(body)
    return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + "…"


def _digest(strict: str, scope: Query) -> str:
    return hashlib.sha256(json.dumps([strict, asdict(scope)], sort_keys=True, default=str).encode()).hexdigest()[:12]


def _fingerprint(strict: str, scope: Query) -> str:
    """What a search's cursor (and its last answer's key) holds of its words and scope: `_digest`, memoized
    by the words and the scope's repr, which shows every field's value as its type writes it (1 and True,
    equal as keys, repr apart): `asdict`'s deep copy of the Query was a sizeable share of a quick search."""
    return _FINGERPRINTS.get((strict, repr(scope)), lambda: _digest(strict, scope))


_FINGERPRINTS: BoundedMemo[str] = BoundedMemo(512)


def _varints(blob: bytes) -> list[int]:
    """The SQLite varints an FTS5 record is made of (its averages and its docsize records)."""
    out = []
    i, n = 0, len(blob)
    while i < n:
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def _among(terms: list[Term]) -> str:
    """How a MATCH of `terms` is narrowed to a list of notes ("... {_among(terms)} (1, 2, 3)").

    SQLite hands FTS5 `rowid IN (list)` one rowid at a time: a seek per note, cheap for words,
    but a prefix term rebuilds its whole merged doclist for each note of the list (seconds, far
    more for a short prefix, in a big vault). `+rowid` keeps the list from FTS5, so it reads the
    term's matches once and SQLite filters them."""
    return "+rowid IN" if any(t.prefix for t in terms) else "rowid IN"


def _group_duplicates(
    con: sqlite3.Connection, scored: list[tuple[int, str, float]]
) -> list[tuple[int, str, float, tuple[str, ...]]]:
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
                if head[1].rpartition("/")[0] != folder and ranking.similar_text(
                    bodies.get(head[0]) or "", bodies.get(rowid) or ""
                ):
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


class SearchQueries(IndexState):
    """The read side of a SearchIndex: search and its helpers, on connections borrowed from a small pool."""

    def _reader(self) -> AbstractContextManager[Reader]:
        """A read connection borrowed from the pool for a `with` block (`core.search.readers`)."""
        return self._readers.borrow(self._epoch)

    def close_reader(self) -> None:
        """Close the idle read connections (and free their page caches), e.g. after a bulk read."""
        self._readers.close_idle()

    def search(
        self, text: object, scope: Query, *, limit: int = 20, cursor: str | None = None, count: bool | None = None
    ) -> SearchResult:
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
        wanted = wanted_terms(terms)
        neg = "".join(" NOT " + quote_term(t) for t in terms if t.exclude)
        strict = " ".join(quote_term(t) for t in wanted) + neg
        loose = "(" + " OR ".join(quote_term(t) for t in wanted) + ")" + neg
        vault = self.vault
        snap = vault.snapshot
        clock = vault.clock
        # the name, title or alias that is the query (`ranking.named_key`): every word typed, stop
        # words too ("the art of war"); a prefix term names no note
        positive = [t for t in terms if not t.exclude]
        named = None if any(t.prefix for t in positive) else ranking.named_key(" ".join(t.text for t in positive))
        # `named` is left out of the key: typing a stop word ("deploy the") gives the last answer again
        # (search as you type), though a note named by the longer text would rank first on a new search
        fp = _fingerprint(strict, scope)
        offset = decode_cursor(cursor, fp) if cursor else 0
        bundle = snap.is_bundle
        # the same words again (a space or a stop word typed, as in the TUI's search as you type):
        # the last answer, while nothing it was ranked from changed (core.search.reuse)
        key = (fp, offset, limit, snap.generation, self._writes, self._epoch, clock.today())
        last = self._last.get(key)
        if last is not None:
            return replace(last, query=str(text), index_stale=self.pending > 0 or vault.index_stale)
        with self._reader() as reader:
            con = reader.con
            scoped = not unscoped(scope)
            try:
                if scoped:
                    self._fill_scope(reader, snap, scope)
                join = " CROSS JOIN temp.scope s ON s.id = {t}.rowid" if scoped else ""
                window = max(CANDIDATES, offset + limit + 1)
                excluding = bool(neg)
                mode, match = "all", strict
                cands, total, unsure = self._candidates(con, join, strict, wanted, window, "all", excluding)
                if (total == 0 or total < FALLBACK_BELOW and len(wanted) > 2) and len(wanted) > 1:
                    any_cands, any_total, any_unsure = self._candidates(
                        con, join, loose, wanted, window, "any", excluding, neg
                    )
                    if any_total > total:
                        mode, match, total, cands, unsure = "any", loose, any_total, any_cands, any_unsure
                if named and total > len(cands):
                    self._add_named(con, join, named, cands, unsure)
                okf = (clock.today().toordinal(), clock.now().timestamp()) if bundle else None
                ranked = self._ranked(con, cands, unsure, match, wanted, okf, mode, offset + limit + 1, named)
                more = len(ranked) > offset + limit
                page = []
                ends = []
                for at, (rowid, path, score_, dups) in enumerate(ranked[offset : offset + limit], offset + 1):
                    e = snap.by_path.get(path)
                    if e is not None and e.kind == NOTE:  # else: gone since the full-text index saw it
                        page.append((rowid, e, score_, dups))
                        ends.append(at)
                snippets = page_snippets(
                    con,
                    match,
                    {rowid: e.path for rowid, e, _, _ in page},
                    {e.path for _, e, _, _ in page if e.size_bytes > SNIPPET_SCAN_BYTES},
                    wanted,
                    index=None if any(t.prefix for t in terms) else "fts",
                )
            except sqlite3.OperationalError as exc:
                raise QueryError(
                    f'search could not run this query ({exc}); use plain words, "phrases", prefix* and -exclusions'
                ) from None
            except sqlite3.DatabaseError as exc:
                raise QueryError(f"search index is damaged ({exc}); it is being rebuilt, try again shortly") from None
        hits = []
        for _rowid, e, score_, dups in page:
            marked, plain, spans = snippets.get(e.path) or snippet_parts(e.title)
            hits.append(SearchHit(e.path, e.title, round(score_, 4), marked, plain, spans, e, dups))
        next_cursor = encode_cursor(fp, offset + limit) if more else None
        stale = self.pending > 0 or vault.index_stale
        result = SearchResult(
            str(text),
            tuple(hits),
            total,
            next_cursor,
            snap.generation,
            bundle,
            stale,
            mode,
            fingerprint=fp,
            ends=tuple(ends),
        )
        self._last.keep(key, result)
        return result

    def _candidates(
        self,
        con: sqlite3.Connection,
        join: str,
        match: str,
        wanted: list[Term],
        window: int,
        mode: str,
        excluding: bool,
        neg: str = "",
    ) -> tuple[dict[int, float], int, set[int]]:
        """({rowid: FTS5's -bm25}, how many notes match, candidates not yet known to match): the best
        `window` by bm25, counted in the same statement, plus notes whose name, title, aliases or
        headings hold the words."""
        w = ", ".join(str(x) for x in WEIGHTS)
        fts_join = join.format(t="fts")
        if mode == "all" and not excluding:
            few = self._few_matches(con, fts_join, match, wanted)
            if few is not None:
                return few, len(few), set()
        if mode == "any":
            ranked_by = self._rare_terms(con, wanted)
            if len(ranked_by) < len(wanted):
                return self._any_by_rare(con, join, match, wanted, ranked_by, window, excluding, neg)
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
        rows = con.execute(
            f"SELECT r, s, count(*) OVER () FROM (SELECT fts.rowid AS r, -bm25(fts, {w}) AS s "
            f"FROM fts{fts_join} WHERE fts MATCH ?) ORDER BY s DESC LIMIT ?",
            (match, window),
        ).fetchall()
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

    def _few_matches(
        self, con: sqlite3.Connection, fts_join: str, match: str, wanted: list[Term]
    ) -> dict[int, float] | None:
        """{rowid: FTS5's -bm25} of every note matching `match` (every word of `wanted`, nothing excluded),
        worked out here when that is cheaper than FTS5's; None when it is not, or when it might not give
        FTS5's very numbers.

        FTS5's bm25() first counts the notes each word is in, over all of them: a word in most notes of a
        big vault costs a pass over its whole list, whatever the query matches (a title's common word
        beside a rare one: a few matches). A note's bm25 is made of that count (kept per index state in
        `_term_stats`, as the ranking keeps it), the table's row count and tokens (its averages record),
        the note's tokens (its docsize record) and each word's instances in each column: counted in FTS5's
        highlight() of each column, which marks every instance bm25 counts, a word at a time. That is
        exact for words of one token each, all different (instances of one such word never overlap, and
        none is shared), with whole-number column weights; `ranking.fts_bm25` does the arithmetic as FTS5
        does. Highlighting tokenizes each matching note once per word, so it is taken only for a few
        matches whose tokens are far fewer than the notes the pass would walk."""
        if not _INTEGRAL_WEIGHTS or any(t.prefix for t in wanted):
            return None
        toks = self._term_stats(con, wanted)[3]
        known = self._stats[2] if self._stats else {}
        if any(len(tk) != 1 for tk in toks) or len({tk[0] for tk in toks}) < len(toks):
            return None
        stats = [known.get((t.text, t.phrase, t.prefix)) for t in wanted]
        if any(st is None for st in stats):
            return None  # another search replaced the kept figures meanwhile (a write came)
        dfs = [st[0] for st in stats if st is not None]
        notes = sum(dfs)
        if notes < FEW_MATCHES * IDF_PASS_TOKENS:
            return None
        rowids = [
            r
            for (r,) in con.execute(
                f"SELECT fts.rowid FROM fts{fts_join} WHERE fts MATCH ? LIMIT ?", (match, FEW_MATCHES + 1)
            )
        ]
        if len(rowids) > FEW_MATCHES:
            return None
        if not rowids:
            return {}
        inlist = ",".join(str(int(r)) for r in rowids)
        sizes = {
            r: sum(_varints(sz)) for r, sz in con.execute(f"SELECT id, sz FROM fts_docsize WHERE id IN ({inlist})")
        }
        if len(sizes) < len(rowids) or len(wanted) * sum(sizes.values()) * IDF_PASS_TOKENS > notes:
            return None
        averages = con.execute("SELECT block FROM fts_data WHERE id = 1").fetchone()
        totals = _varints(averages[0]) if averages else []
        if len(totals) != 1 + len(WEIGHTS) or not totals[0]:
            return None
        n_rows, avgdl = totals[0], float(sum(totals[1:])) / float(totals[0])
        idfs = [ranking.fts_idf(df, n_rows) for df in dfs]
        marks = ", ".join(f"highlight(fts, {c}, '{_HIGHLIGHT}', '')" for c in range(len(WEIGHTS)))
        raw_marks: dict[int, list[int]] = {}
        freqs: dict[int, list[float]] = {r: [] for r in rowids}
        for i, t in enumerate(wanted):
            columns = ", ".join(f"fts.{c}" for c in COLUMNS) + ", " if i == 0 else ""
            for row in con.execute(
                f"SELECT fts.rowid, {columns}{marks} FROM fts WHERE fts MATCH ? AND rowid IN ({inlist})",
                (quote_term(t),),
            ):
                rowid, texts = row[0], row[1:]
                if i == 0:  # a marker character the note holds itself is no instance
                    raw_marks[rowid] = [(x or "").count(_HIGHLIGHT) for x in texts[: len(COLUMNS)]]
                    texts = texts[len(COLUMNS) :]
                freqs[rowid].append(
                    float(
                        sum(
                            w * ((x or "").count(_HIGHLIGHT) - own)
                            for w, x, own in zip(WEIGHTS, texts, raw_marks[rowid], strict=True)
                        )
                    )
                )
        if any(len(f) != len(wanted) for f in freqs.values()):
            return None  # a note left the index between two statements: FTS5 works it out
        return {r: ranking.fts_bm25(freqs[r], idfs, sizes[r], avgdl) for r in rowids}

    def _rare_terms(self, con: sqlite3.Connection, wanted: list[Term]) -> list[Term]:
        """The terms that carry FTS5's bm25: neither in more than half the notes (FTS5 clamps their
        IDF to 1e-6, so their part of bm25 is ~0) nor in none."""
        self._term_stats(con, wanted)
        known = self._stats[2] if self._stats else {}
        return [
            t
            for t in wanted
            if known[(t.text, t.phrase, t.prefix)][0] > 0 and not known[(t.text, t.phrase, t.prefix)][2]
        ]

    def _any_by_rare(
        self,
        con: sqlite3.Connection,
        join: str,
        match: str,
        wanted: list[Term],
        rare: list[Term],
        window: int,
        excluding: bool,
        neg: str,
    ) -> tuple[dict[int, float], int, set[int]]:
        """`_candidates` of a ranked OR holding a common word (or one no note has), at any vault size:
        bm25 over the other words alone (the same values to ~1e-6: a common word's part of FTS5's
        bm25 is its clamped IDF times its frequency), so FTS5 scores the rare words' few matches
        instead of the common word's every match (an OR of one common word and a half-typed one
        was far too slow for search-as-you-type in a big vault); the field matches and the first
        `window` matches of the whole OR (in rowid order) join with bm25 0, the count is of the
        whole OR."""
        w = ", ".join(str(x) for x in WEIGHTS)
        fts_join = join.format(t="fts")
        total = con.execute(f"SELECT count(*) FROM fts{fts_join} WHERE fts MATCH ?", (match,)).fetchone()[0]
        cands: dict[int, float] = {}
        if rare and total:
            expr = "(" + " OR ".join(quote_term(t) for t in rare) + ")" + neg
            cands = dict(
                con.execute(
                    f"SELECT fts.rowid, -bm25(fts, {w}) AS s FROM fts{fts_join} WHERE fts MATCH ? "
                    f"ORDER BY s DESC LIMIT ?",
                    (expr, window),
                )
            )
        unsure: set[int] = set()
        full = len(cands) >= window  # the rare words alone fill the window
        if total > len(cands):
            floor = min(cands.values(), default=0.0) if full else 0.0
            for rowid, check in self._field_matches(con, join, match, wanted, CANDIDATES, "any", excluding):
                if rowid not in cands:
                    cands[rowid] = floor
                    if check:
                        unsure.add(rowid)
            if not full:  # notes with only the common words: the first of them
                for (r,) in con.execute(
                    f"SELECT fts.rowid FROM fts{fts_join} WHERE fts MATCH ? LIMIT ?", (match, window)
                ):
                    cands.setdefault(r, 0.0)
                    unsure.discard(r)
        return cands, total, unsure

    def _field_matches(
        self, con: sqlite3.Connection, join: str, match: str, wanted: list[Term], limit: int, mode: str, excluding: bool
    ) -> list[tuple[int, bool]]:
        """Up to `limit` notes whose name, title or aliases hold every word, then those whose name,
        title, aliases or headings hold any, found in the fields' own index (`ftsf`), each with
        whether it may still not match `match` (a word only elsewhere, or an excluded one)."""
        quoted = [quote_term(t) for t in wanted]
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

    def _add_named(
        self, con: sqlite3.Connection, join: str, named: tuple[str, ...], cands: dict[int, float], unsure: set[int]
    ) -> None:
        """Make candidates of the notes whose name, title or an alias may be the query (`named`): the
        CANDIDATES notes where it starts one of them with the shortest fields by FTS5's bm25 (the note
        whose name is the query itself has nothing after it). The field matches that join the candidates
        stop at as many in no useful order, so the note named by a word that many names hold may not be
        among them. They join with the lowest bm25 of the candidates, still to be checked against the query."""
        expr = "{name title aliases} : ^" + quote_term(Term(" ".join(named), phrase=True))
        floor = min(cands.values(), default=0.0)
        f_join = join.format(t="ftsf")
        for (r,) in con.execute(
            f"SELECT ftsf.rowid FROM ftsf{f_join} WHERE ftsf MATCH ? ORDER BY bm25(ftsf) LIMIT ?", (expr, CANDIDATES)
        ):
            if r not in cands:
                cands[r] = floor
                unsure.add(r)

    def _ranked(
        self,
        con: sqlite3.Connection,
        cands: dict[int, float],
        unsure: set[int],
        match: str,
        wanted: list[Term],
        okf: tuple[int, float] | None,
        mode: str,
        need: int,
        named: tuple[str, ...] | None = None,
    ) -> list[tuple[int, str, float, tuple[str, ...]]]:
        """(rowid, path, score, duplicate paths) of the candidates, best first. Candidates not known
        to match are checked only when they reach the first `need` (a lookup per note)."""
        scored = self._score(con, cands, wanted, okf, mode, named)
        scored.sort(key=lambda r: (-r[2], r[1]))
        while unsure:
            top = [r for r, _p, _s in scored[:need] if r in unsure]
            if not top:
                break
            ok = {
                r
                for (r,) in con.execute(
                    f"SELECT rowid FROM fts WHERE fts MATCH ? AND {_among(wanted)} "
                    f"({','.join(str(int(x)) for x in top)})",
                    (match,),
                )
            }
            unsure.difference_update(top)
            if len(ok) < len(top):
                failed = set(top) - ok
                scored = [row for row in scored if row[0] not in failed]
        return _group_duplicates(con, scored)

    def _term_stats(
        self, con: sqlite3.Connection, wanted: list[Term]
    ) -> tuple[int, list[float], list[float], list[list[str]]]:
        """(note count, our IDFs, FTS5's IDFs, each term's tokens) for the query's terms."""
        cache = self._stats
        writes = self._writes
        taken = self._counts
        counts = taken[1] if taken is not None and taken[0] == writes else None
        if cache is None or cache[0] != writes:
            notes = counts.notes if counts is not None else con.execute("SELECT count(*) FROM docs").fetchone()[0]
            cache = (writes, notes, {})
            self._stats = cache
        n_docs, known = cache[1], cache[2]
        missing = [t for t in wanted if (t.text, t.phrase, t.prefix) not in known]
        if missing:
            known_dfs = counts.words if counts is not None else {}
            con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_rows USING fts5vocab(main, fts, row)")
            for t, toks in zip(missing, tokens_of(con, [t.text for t in missing]), strict=False):
                word_dfs = []
                for tok in toks[:-1] if t.prefix else toks:
                    df = known_dfs.get(tok)
                    if df is None:  # not a common word: a short walk of its doclist
                        row = con.execute("SELECT doc FROM temp.vw_rows WHERE term = ?", (tok,)).fetchone()
                        df = row[0] if row else 0
                    word_dfs.append(df)
                if len(toks) == 1 and not t.prefix:
                    df = word_dfs[0]
                else:
                    df = con.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (quote_term(t),)).fetchone()[0]
                # common: each of its words (or the term itself) is in more than half the notes
                common = ranking.fts_idf(df, n_docs) <= 1e-6 or (
                    bool(word_dfs) and all(ranking.fts_idf(x, n_docs) <= 1e-6 for x in word_dfs)
                )
                if len(known) > 4096:
                    known.clear()
                known[(t.text, t.phrase, t.prefix)] = (df, toks, common)
        stats = [known[(t.text, t.phrase, t.prefix)] for t in wanted]
        return (
            n_docs,
            [ranking.idf(df, n_docs) for df, _, _ in stats],
            [ranking.fts_idf(df, n_docs) for df, _, _ in stats],
            [toks for _, toks, _ in stats],
        )

    def _all_common(self, con: sqlite3.Connection, wanted: list[Term]) -> bool:
        """Whether every word of the query is in more than half the notes of a big vault (then FTS5's
        bm25 carries almost no signal and costs a pass over all their matches: it is left out)."""
        n_docs = self._term_stats(con, wanted)[0]
        known = self._stats[2] if self._stats else {}
        return n_docs > COMMON_FAST_ABOVE and all(known[(t.text, t.phrase, t.prefix)][2] for t in wanted)

    def _score(
        self,
        con: sqlite3.Connection,
        cands: dict[int, float],
        wanted: list[Term],
        okf: tuple[int, float] | None,
        mode: str,
        named: tuple[str, ...] | None = None,
    ) -> list[tuple[int, str, float]]:
        """Score candidate notes (rowid -> FTS5's -bm25) with `ranking.score`: whether each term is in
        the name/title, aliases or headings is read from the note's stored tokens; where it is in the
        name/title or aliases, their words as written say whether it is there as typed or only by its
        stem, and whether the note is `named` by the query (`ranking.named_key`)."""
        if not cands:
            return []
        _n, idfs, fidfs, toks = self._term_stats(con, wanted)
        fidf_sum = sum(fidfs)
        inlist = ",".join(str(int(i)) for i in cands)
        rows = con.execute(
            f"SELECT id, path, deprecated, stale_day, stale_at, fterms, name, title, aliases FROM docs WHERE id IN ({inlist})"
        ).fetchall()
        present: list[set[int] | None] = [None] * len(wanted)
        if mode == "any":  # which words each candidate has (in "all" mode: every one)
            for j, t in enumerate(wanted):
                present[j] = {
                    r
                    for (r,) in con.execute(
                        f"SELECT rowid FROM fts WHERE fts MATCH ? AND {_among([t])} ({inlist})", (quote_term(t),)
                    )
                }
        prelim = []
        # a few hundred candidates times each term times three fields: one predicate per term, not a
        # general call per field (field_tester says which is the same test)
        tests = [field_tester(field_needles(tk, t.prefix)) for t, tk in zip(wanted, toks, strict=False)]
        typed = [ranking.folded_words(t.text) for t in wanted]
        for rowid, path, deprecated, stale_day, stale_at, fterms, name, title, aliases in rows:
            name_title, alias, heading = [f" {p} " for p in (fterms or FIELD_SEP * 2).split(FIELD_SEP)]
            sigs = [
                ranking.TermSignal(has is None or rowid in has, test(name_title), test(alias), test(heading))
                for test, has in zip(tests, present, strict=True)
            ]
            is_named = False
            if any(sig.in_title or sig.in_alias for sig in sigs):  # the few with a name match: their words
                words = set(ranking.folded_words(f"{name or ''} {title or ''} {aliases or ''}"))
                for sig, t, tw in zip(sigs, wanted, typed, strict=True):
                    if sig.in_title or sig.in_alias:
                        sig.stem_only = not ranking.as_typed(tw, t.prefix, words)
                if named and all(sig.in_title or sig.in_alias for sig in sigs if sig.present):
                    stem = path.rpartition("/")[2]
                    stem = stem[:-3] if stem.lower().endswith(".md") else stem
                    is_named = any(
                        ranking.named_key(x) == named for x in (stem, title or "", *(aliases or "").split("\n"))
                    )
            factor = 1.0
            if okf is not None:
                if deprecated:
                    factor *= DEPRECATED_FACTOR
                if (stale_day is not None and stale_day <= okf[0]) or (stale_at is not None and stale_at <= okf[1]):
                    factor *= STALE_FACTOR
            # the score without the proximity bonus: the final one of every note not found near
            prelim.append(
                (
                    rowid,
                    path,
                    sigs,
                    factor,
                    is_named,
                    ranking.score(sigs, idfs, cands[rowid], fidf_sum, False, factor, is_named),
                )
            )
        near: set[int] = set()
        if len(wanted) > 1:  # proximity: checked for the best candidates only (a seek per note)
            best = sorted(prelim, key=lambda r: -r[5])
            ids = ",".join(str(r[0]) for r in best[:NEAR_CHECKED])
            expr = f"NEAR({' '.join(quote_term(t) for t in wanted)}, {ranking.NEAR_DISTANCE})"
            near = {
                r
                for (r,) in con.execute(
                    f"SELECT rowid FROM fts WHERE fts MATCH ? AND {_among(wanted)} ({ids})", (expr,)
                )
            }
        return [
            (
                rowid,
                path,
                ranking.score(sigs, idfs, cands[rowid], fidf_sum, True, factor, is_named) if rowid in near else plain,
            )
            for rowid, path, sigs, factor, is_named, plain in prelim
        ]

    def matching(self, terms: list[Term]) -> set[str]:
        """Paths of the notes that match any of `terms` (for -exclusions outside keyword mode)."""
        if not terms:
            return set()
        expr = " OR ".join(quote_term(replace(t, exclude=False)) for t in terms)
        with self._reader() as reader:
            return {
                p
                for (p,) in reader.con.execute(
                    "SELECT d.path FROM fts CROSS JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?", (expr,)
                )
            }

    def passages(self, paths: list[str], make: Callable[[str, str, str, str, str], str]) -> list[str]:
        """`make(name, title, aliases, headings, body)` for each path, from the stored text ("" if unknown)."""
        if not paths:
            return []
        got: dict[str, str] = {}
        with self._reader() as reader:
            for i in range(0, len(paths), 500):
                chunk = paths[i : i + 500]
                for path, name, title, aliases, headings, body in reader.con.execute(
                    f"SELECT path, name, title, aliases, headings, body FROM content "
                    f"WHERE path IN ({','.join('?' * len(chunk))})",
                    chunk,
                ):
                    got[path] = make(name or "", title or "", aliases or "", headings or "", body or "")
        return [got.get(p, "") for p in paths]

    def lead(self, paths: list[str], chars: int = 160) -> dict[str, str]:
        """The first words of each note's body, whitespace collapsed (a snippet for a hit by meaning)."""
        return {
            path: lead_of(body, chars)
            for path, body in zip(paths, self.passages(paths, lambda n, t, a, h, body: body), strict=False)
        }

    def _fill_scope(self, reader: Reader, snap: Snapshot, scope: Query) -> None:
        """Load the scope's note ids into this connection's temp table (reused while nothing changed)."""
        clock = self.vault.clock
        key = (snap.generation, scope, clock.today(), self._writes)
        if reader.scope_key == key:
            return
        con = reader.con
        allowed = snap.cached(
            ("search.scope", scope, clock.today()), lambda: tuple(e.path for e in run_query(snap, scope, clock).entries)
        )
        ids = self._rowids
        con.execute("CREATE TEMP TABLE IF NOT EXISTS scope (id INTEGER PRIMARY KEY)")
        con.execute("BEGIN")  # touches only the temp database: no snapshot of the index is held
        try:
            con.execute("DELETE FROM temp.scope")
            con.executemany(
                "INSERT OR IGNORE INTO temp.scope (id) VALUES (?)",
                ((i,) for i in map(ids.get, allowed) if i is not None),
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        reader.scope_key = key
