"""Search modes: keyword (the full-text index), semantic (note vectors) and hybrid (both, fused).

Hybrid fuses the two rankings by reciprocal rank fusion: a note's score is the sum over the
rankings it is in of 1 / (RRF_K + rank). A hit found by meaning only has the start of its
body as its snippet (no highlights). `-excluded` words drop notes from every mode.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

from vaultwatch.core.errors import QueryError
from vaultwatch.core.model import NOTE
from vaultwatch.core.query.listing import Query, run_query
from vaultwatch.core.search.results import MAX_LIMIT, SearchHit, SearchResult, decode_cursor, encode_cursor, unscoped
from vaultwatch.core.search.reuse import LastAnswer
from vaultwatch.core.search.snippets import snippet_parts
from vaultwatch.core.search.terms import parse_query

if TYPE_CHECKING:  # vault.py imports this module
    from vaultwatch.core.index.snapshot import Snapshot
    from vaultwatch.core.search.fulltext import SearchIndex
    from vaultwatch.core.search.semantic import VectorIndex
    from vaultwatch.core.vault import Vault

MODES = ("hybrid", "keyword", "semantic")
RRF_K = 60
DEPTH = 100  # hits taken from each ranking before fusing
_last: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # note vectors -> LastAnswer of (keyword hits, answer)


def resolve_mode(mode: str | None, vectors: VectorIndex | None) -> str:
    """The mode a search runs in: the one asked for, else hybrid when note vectors are ready."""
    if mode is None:
        return "hybrid" if vectors is not None and vectors.ready else "keyword"
    if mode not in MODES:
        raise QueryError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
    if mode != "keyword" and vectors is None:
        raise QueryError("semantic search is not installed: use mode 'keyword', or install vaultwatch[semantic]")
    return mode


def building_note(vectors: VectorIndex) -> str:
    """What a hybrid search answered with keyword hits alone says: the vectors are being computed."""
    counted = f" ({vectors.done} of {vectors.total})" if vectors.total else ""
    return f"note vectors are being computed{counted}: these are keyword results; hybrid once they are ready"


def _allowed(vault: Vault, snap: Snapshot, scope: Query) -> set[str] | None:
    if unscoped(scope):
        return None
    clock = vault.clock
    return set(
        snap.cached(
            ("search.scope", scope, clock.today()), lambda: tuple(e.path for e in run_query(snap, scope, clock).entries)
        )
    )


def search(
    vault: Vault,
    index: SearchIndex,
    vectors: VectorIndex,
    text: object,
    scope: Query,
    mode: str,
    *,
    limit: int = 20,
    cursor: str | None = None,
) -> SearchResult:
    """A semantic or hybrid search, paged like the keyword one."""
    terms = parse_query(text)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    if not vectors.ready:
        if vectors.problem:
            raise QueryError(vectors.problem)
        raise QueryError(
            f"note vectors are still being computed ({vectors.done} of {vectors.total}); "
            "use mode 'keyword' meanwhile or try again shortly"
        )
    fp = hashlib.sha256(json.dumps([str(text), mode, asdict(scope)], sort_keys=True, default=str).encode()).hexdigest()[
        :12
    ]
    offset = decode_cursor(cursor, fp) if cursor else 0
    snap = vault.snapshot
    allowed = _allowed(vault, snap, scope)
    depth = max(DEPTH, offset + limit + 1)
    words = " ".join(t.text for t in terms if not t.exclude)
    excluded = [t for t in terms if t.exclude]
    if excluded:
        gone = index.matching(excluded)
        allowed = (allowed if allowed is not None else {e.path for e in snap.entries if e.kind == NOTE}) - gone
    keyword: SearchResult | None = None
    if mode == "hybrid":
        try:
            keyword = index.search(text, scope, limit=min(depth, MAX_LIMIT))
        except QueryError:
            keyword = None
    # the same terms again (a space typed, as in the TUI's search as you type): the last answer
    # under the new text, while the snapshot, the note vectors and the keyword answer are the same
    # (the index gives its own last answer's hits again only while nothing it ranked from changed)
    key = (
        json.dumps(
            [[(t.text, t.phrase, t.prefix, t.exclude) for t in terms], mode, asdict(scope)], sort_keys=True, default=str
        ),
        offset,
        limit,
        snap.generation,
        vectors.version,
    )
    kw_same = keyword.hits if keyword is not None else None
    memo = _last.get(vectors)
    if memo is None:
        memo = _last[vectors] = LastAnswer()
    last = memo.get(key)
    if kw_same is not None and last is not None and last[0] is kw_same:
        more = last[1].next_cursor is not None
        return replace(
            last[1],
            query=str(text),
            fingerprint=fp,
            index_stale=index.pending > 0 or vault.index_stale,
            next_cursor=encode_cursor(fp, offset + limit) if more else None,
        )
    by_meaning = vectors.query(words, allowed, depth)
    fused: dict[str, float] = {}
    kw_hits: dict[str, SearchHit] = {}
    if keyword is not None:
        for rank, hit in enumerate(keyword.hits, 1):
            fused[hit.path] = fused.get(hit.path, 0.0) + 1.0 / (RRF_K + rank)
            kw_hits[hit.path] = hit
    for rank, (path, _sim) in enumerate(by_meaning, 1):
        fused[path] = fused.get(path, 0.0) + 1.0 / (RRF_K + rank)
    if keyword is not None:  # a folded duplicate stays folded
        for hit in keyword.hits:
            for dup in hit.duplicates:
                fused.pop(dup, None)
    order = sorted(fused, key=lambda p: (-fused[p], p))
    page = order[offset : offset + limit]
    leads = index.lead([p for p in page if p not in kw_hits])
    hits, ends = [], []
    for at, path in enumerate(page, offset + 1):
        if path in kw_hits:
            hits.append(replace(kw_hits[path], score=round(fused[path], 6)))
            ends.append(at)
            continue
        e = snap.by_path.get(path)
        if e is None or e.kind != NOTE:
            continue
        plain = leads.get(path) or e.title
        marked, plain, spans = snippet_parts(plain)
        hits.append(SearchHit(path, e.title, round(fused[path], 6), marked, plain, (), e))
        ends.append(at)
    more = len(order) > offset + limit
    total = len(order) if keyword is None else max(keyword.total, len(order))
    stale = index.pending > 0 or vault.index_stale
    result = SearchResult(
        str(text),
        tuple(hits),
        total,
        encode_cursor(fp, offset + limit) if more else None,
        snap.generation,
        snap.is_bundle,
        stale,
        keyword.match if keyword is not None else "any",
        mode,
        fingerprint=fp,
        ends=tuple(ends),
    )
    memo.keep(key, (kw_same, result))
    return result


def similar(
    vault: Vault, index: SearchIndex, vectors: VectorIndex, path: str, scope: Query, *, limit: int = 10
) -> SearchResult:
    """Notes like the note at `path` (nearest by meaning), the note itself left out."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    entry = vault.entry(path)
    if entry.kind != NOTE:
        raise QueryError(f"{entry.path} is an attachment: similar takes a note")
    if not vectors.ready:
        raise QueryError(
            vectors.problem
            or f"note vectors are still being computed ({vectors.done} of {vectors.total}); try again shortly"
        )
    vec = vectors.vector_of(entry.path)
    if vec is None:
        raise QueryError(f"{entry.path} has no vector yet (just changed?); try again shortly")
    snap = vault.snapshot
    allowed = _allowed(vault, snap, scope)
    ranked = [(p, s) for p, s in vectors.rank(vec, allowed, limit + 1) if p != entry.path][:limit]
    leads = index.lead([p for p, _ in ranked])
    hits = []
    for p, sim in ranked:
        e = snap.by_path.get(p)
        if e is None:
            continue
        marked, plain, spans = snippet_parts(leads.get(p) or e.title)
        hits.append(SearchHit(p, e.title, round(sim, 4), marked, plain, (), e))
    return SearchResult(
        entry.path,
        tuple(hits),
        len(hits),
        None,
        snap.generation,
        snap.is_bundle,
        index.pending > 0 or vault.index_stale,
        "any",
        "semantic",
    )
