"""What a search answers: hits, a page of them, the index's status, cursors and the search's scope."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from vaultwatch.core.errors import QueryError
from vaultwatch.core.model import Entry
from vaultwatch.core.query.listing import Query, pairs

MAX_LIMIT = 1000


class SearchNotReady(QueryError):
    """The full-text index is still being built; listing works meanwhile."""

    code = "search_not_ready"

    def __init__(self, done: int, total: int) -> None:
        super().__init__(
            f"search index is still building ({done} of {total} notes indexed); "
            "try again in a few seconds (listing and filters work meanwhile)"
        )
        self.done, self.total = done, total


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
        out = {
            "path": self.path,
            "title": self.title,
            "folder": self.entry.folder,
            "score": self.score,
            "snippet": self.snippet,
            "snippet_plain": self.snippet_plain,
            "highlights": [list(h) for h in self.highlights],
            "modified_at": self.entry.modified_at,
        }
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
    fingerprint: str = ""  # the query and scope a cursor belongs to
    ends: tuple[int, ...] = ()  # per hit, the ranked position just after it (where a page cut there resumes)
    note: str | None = None  # why `mode` is not the mode asked for (hybrid while the vectors are computed)

    def cursor_after(self, n: int) -> str | None:
        """The cursor that continues after the first `n` hits (a page cut short, e.g. to an answer
        budget): `next_cursor` when `n` covers the page, else one that resumes at the next hit."""
        if n >= len(self.hits) or len(self.ends) != len(self.hits):
            return self.next_cursor
        return encode_cursor(self.fingerprint, self.ends[max(n, 1) - 1])


@dataclass(frozen=True, slots=True)
class SearchStatus:
    """Progress of the full-text index: ready once every note has been indexed."""

    ready: bool
    done: int
    total: int
    pending: int  # changes waiting to be applied
    problem: str | None = None


def encode_cursor(fp: str, offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([fp, offset]).encode()).decode().rstrip("=")


def decode_cursor(cursor: object, fp: str) -> int:
    try:
        if not isinstance(cursor, str):
            raise ValueError
        got_fp, offset = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(offset, int) or offset < 0:
            raise ValueError
    except (ValueError, TypeError, UnicodeDecodeError):
        raise QueryError("cursor is not valid: pass back the next_cursor of a previous search, unchanged") from None
    if got_fp != fp:
        raise QueryError(
            "cursor belongs to a different search: repeat the same query and scope with it, or drop the cursor"
        )
    return offset


def scope_query(
    scope: Query | None = None,
    *,
    folder: str | None = None,
    recursive: bool | None = None,
    pattern: str | None = None,
    filters: Mapping[str, Any] | Iterable[tuple[str, str]] | None = None,
    exclude: Mapping[str, Any] | Iterable[tuple[str, str]] | None = None,
) -> Query:
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
    return replace(
        q,
        **changes,
        include_notes=True,
        include_attachments=False,
        include_folders=False,
        sort="path",
        descending=False,
        limit=None,
        cursor=None,
    )


def unscoped(q: Query) -> bool:
    return (
        q.folder is None
        and q.pattern is None
        and not q.exclude_patterns
        and not q.filters
        and not q.exclude
        and not q.text
        and not q.words
        and not q.problems_only
    )
