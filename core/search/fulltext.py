"""Full-text search: an SQLite FTS5 index of every note, kept in step with the live index.

The index lives next to the entry cache (`search.sqlite` in the vault's cache folder), so a
warm start only re-indexes the notes that changed. Bodies are read from disk and handed to
SQLite; they never stay in Python memory.

`SearchIndex` is the one object the vault holds; its jobs live in their own modules:
`core.search.ftsstate` (the state both halves share), `core.search.ftsbuild` (schema, first
build, live updates: the writer thread), `core.search.ftsquery` (candidates and ranking: the
readers), `core.search.terms` (query syntax), `core.search.snippets`, `core.search.results`
(hits, pages, cursors, scope) and `core.search.notetext` (a note's text as the index stores it). The names other modules use
are re-exported here.
"""

from __future__ import annotations

from vaultwatch.core.search.ftsbuild import FINGERPRINT, SearchBuilder
from vaultwatch.core.search.ftsquery import SearchQueries
from vaultwatch.core.search.notetext import note_aliases, note_name, note_text, tokens_of
from vaultwatch.core.search.results import (
    MAX_LIMIT,
    SearchHit,
    SearchNotReady,
    SearchResult,
    SearchStatus,
    scope_query,
)
from vaultwatch.core.search.terms import Term, parse_query, to_fts

__all__ = [
    "FINGERPRINT",
    "MAX_LIMIT",
    "SearchHit",
    "SearchIndex",
    "SearchNotReady",
    "SearchResult",
    "SearchStatus",
    "Term",
    "note_aliases",
    "note_name",
    "note_text",
    "parse_query",
    "scope_query",
    "to_fts",
    "tokens_of",
]


class SearchIndex(SearchBuilder, SearchQueries):
    """The FTS5 index of one vault, built and updated by one background thread.

    Readers (any thread) get their own read-only connection. `wait_synced` and `pending`
    make the index's lag visible to `Vault.wait_for_pending_writes` and `index_stale`.
    """
