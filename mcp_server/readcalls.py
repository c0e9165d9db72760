"""The read calls, on core alone: one implementation for the SDK's tools and the stdio front.

tools.py registers `list_documents`, `read` and `search` with the SDK over `list_documents`,
`read_document` and `search` here (and `similar` over `hits_answer`); the stdio front
(earlycalls.py) answers a client's listings, reads and searches with the same functions, before
the SDK is imported and once it runs. Nothing here imports the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from vaultwatch.core.query.listing import Query, pairs
from vaultwatch.core.serialize import ROW_CACHE_MAX, RowCache, StoredRow, entry_json, row_stale_instant, row_to_store
from vaultwatch.core.vault import Vault

from . import budget
from .activity import CallRecord, current_call, recorded
from .answers import (
    CHUNK,
    LINK_FORM,
    Answer,
    failure,
    link_bytes,
    note_link,
    note_link_json,
    ok_answer,
    page_rows,
    warm_rows,
)

if TYPE_CHECKING:
    from vaultwatch.core.model import Entry
    from vaultwatch.core.search.results import SearchResult

PENDING_WRITES_TIMEOUT = 10.0
LOAD_WAIT = 10.0
# The fields of a listing that carry text from the notes themselves (written by people and other agents):
# named in _meta.untrusted, so a client or model can treat them as data, never as instructions (tools.py
# names the other answers').
ROW_TEXT = "result[].title, status, tags, frontmatter"
READ_TEXT = "title, status, tags, frontmatter, content"
HIT_TEXT = "result[].title, snippet, status, tags"
SEARCH_BUILD_WAIT = 5.0  # a first search waits this long for the full-text index before saying it is building
SEARCH_PAGE = 20  # hits of a search page when the call gives no limit (fewer past the answer budget)
FilterValue = str | bool | int | float


def untrusted(meta: dict[str, Any], fields: str) -> dict[str, Any]:
    """`meta` with `untrusted` naming the note-text fields of the answer."""
    return {**meta, "untrusted": fields}


def root_folder(folder: str | None) -> str | None:
    """A folder argument as core takes it: "/" (how some vault servers name the root) means "", the root level."""
    return "" if isinstance(folder, str) and folder.strip() == "/" else folder


def index_freshness(vault: Vault, wait_for_pending_writes: bool = False) -> dict[str, Any]:
    """Wait (bounded) for the first index and, when asked, for pending writes; the `_meta` to report."""
    stale = False
    if not vault.snapshot.loaded:
        vault.wait_ready(LOAD_WAIT)
    if wait_for_pending_writes and vault.wait_for_pending_writes(PENDING_WRITES_TIMEOUT) is False:
        stale = True
    snap = vault.snapshot
    meta: dict[str, Any] = {
        "index_stale": bool(stale or vault.index_stale or not snap.loaded),
        "generation": snap.generation,
    }
    if not snap.loaded:
        meta["index_loading"] = True
    return meta


def row_cache(vault: Vault) -> RowCache:
    """The listing rows' cache of a server's tools (one per front), whose rows the vault's entry cache keeps
    with each row's resource_link block: a warm start's first listing takes them from there instead of making
    them again (Vault.keep_rows; the first cache asked for keeps them). A vault of more than ROW_CACHE_MAX
    entries keeps none: its listings keep no rows either, and the cache file and its load would grow by
    every row."""
    cache = RowCache(seed=vault.kept_rows)

    def row_of(entry: Entry) -> StoredRow | None:
        snap = vault.snapshot
        if len(snap.by_path) > ROW_CACHE_MAX:
            return None
        held = cache.held(entry)  # made by a listing already: kept as it is
        if held is None:
            return (*row_to_store(entry, snap.is_bundle, vault.clock), (LINK_FORM, note_link_json(entry)[0]))
        cell = held[4]
        link = note_link_json(entry)[0] if cell is None else cell.link_json
        return (*held[:4], (LINK_FORM, link))

    vault.keep_rows(row_of)
    return cache


def list_documents(
    vault: Vault,
    row_cache: RowCache,
    max_answer_bytes: int,
    shape: Callable[..., Any],
    *,
    folder: str | None = None,
    filters: dict[str, FilterValue] | None = None,
    pattern: str | None = None,
    include_attachments: bool = False,
    include_frontmatter: bool = False,
    wait_for_pending_writes: bool = False,
    limit: int | None = None,
    cursor: str | None = None,
) -> Any:
    """The list_documents answer, made by `shape` (results.listing for the SDK, answers.listing_answer
    for the stdio front) from the page; core's VaultError or ValueError for a call it refuses."""
    meta = index_freshness(vault, wait_for_pending_writes)
    q = _listing_query(max_answer_bytes, folder, filters, pattern, include_attachments, limit, cursor)
    res = vault.list(q)
    return shape(
        row_cache,
        res,
        q,
        vault.clock,
        {"total": res.total, "returned": len(res.entries), "next_cursor": res.next_cursor, "okf_bundle": res.is_bundle},
        budget_bytes=max_answer_bytes,
        explicit=limit is not None,
        frontmatter=include_frontmatter,
        meta=untrusted(meta, ROW_TEXT),
    )


def _listing_query(
    max_answer_bytes: int,
    folder: str | None,
    filters: dict[str, FilterValue] | None,
    pattern: str | None,
    include_attachments: bool,
    limit: int | None,
    cursor: str | None,
) -> Query:
    return Query(
        folder=root_folder(folder),
        pattern=pattern,
        filters=pairs(filters),
        include_attachments=include_attachments,
        limit=budget.default_rows(max_answer_bytes) if limit is None else limit,
        cursor=cursor,
    )


def warm_next_page(
    vault: Vault,
    row_cache: RowCache,
    max_answer_bytes: int,
    cursor: str,
    stop: Callable[[], bool],
    *,
    folder: str | None = None,
    filters: dict[str, FilterValue] | None = None,
    pattern: str | None = None,
    include_attachments: bool = False,
    include_frontmatter: bool = False,
    limit: int | None = None,
    **_ignored: Any,
) -> int:
    """Make the rows of the list_documents page at `cursor` (the next_cursor of the page just answered, with
    that call's arguments) before the client asks for it, in `row_cache` (answers.warm_rows). Nothing is
    answered or published: the rows are kept as the page would keep them, each checked again when served
    (core.serialize.RowCache). `stop()`: a call is waiting; the rows made so far are kept."""
    if not vault.snapshot.loaded:
        return 0
    # a default page's rows are made a chunk at a time until its budget is full: its first chunk is
    # nearly always all of it (answers.listing_page), and a query for one chunk costs less than for the
    # rows the page may ask core for
    q = _listing_query(
        max_answer_bytes, folder, filters, pattern, include_attachments, CHUNK if limit is None else limit, cursor
    )
    return warm_rows(
        row_cache,
        vault.list(q),
        vault.clock,
        budget_bytes=max_answer_bytes,
        explicit=limit is not None,
        frontmatter=include_frontmatter,
        stop=stop,
    )


def listing_ahead(
    vault: Vault, arguments: Mapping[str, Any], make: Callable[[], Any]
) -> tuple[Any, CallRecord, Callable[[], bool]] | None:
    """`make()`, the list_documents answer for `arguments`, made now for a call expected later (the next
    page of a listing walked through its cursor); with what it recorded for the activity layer and a
    check that says whether it is still the answer that call would get: the same snapshot, the same
    index freshness (`_meta`), the same day, and, in an OKF bundle, no note of the page passing the
    instant it goes stale at (its row says `stale`). None when it may not be made ahead: filters (a
    filter may read the clock), a wait for pending writes, an index not loaded, or the snapshot changed,
    or a note of the page went stale, while it was made."""
    if arguments.get("filters") or arguments.get("wait_for_pending_writes"):
        return None
    snap, clock = vault.snapshot, vault.clock
    if not snap.loaded:
        return None
    meta, today, began = index_freshness(vault), clock.today(), clock.now()
    answer, record = recorded(make)
    made = clock.now()
    if vault.snapshot is not snap or index_freshness(vault) != meta or clock.today() != today:
        return None
    rows = [snap.get(path) for path in record.paths]
    instants = [at for e in rows if e is not None and (at := row_stale_instant(e, snap.is_bundle)) and at > began]
    if any(at <= made for at in instants):  # a row may have been made either side of it
        return None
    flips = min(instants, default=None)  # the first instant a row of the page would change at

    def still() -> bool:
        if vault.snapshot is not snap or clock.today() != today or index_freshness(vault) != meta:
            return False
        now = clock.now()
        return now >= made and (flips is None or now < flips)

    return answer, record, still


def read_document(
    vault: Vault,
    max_answer_bytes: int,
    *,
    path: str,
    section: str | None = None,
    lines: list[int] | None = None,
    frontmatter_only: bool = False,
    offset: int = 0,
    max_chars: int | None = None,
    include_attachment_content: bool | None = None,
) -> dict[str, Any]:
    """The read tool's structured answer (its `_meta`: untrusted READ_TEXT); core's VaultError for a
    read it refuses (a missing note, a path outside the vault)."""
    # the reader brings the note parser and YAML: a warm first listing, which imports this module,
    # needs neither (tests/mcp_server/test_warm_start.py)
    from vaultwatch.core.disk.reader import DEFAULT_MAX_CHARS
    from vaultwatch.core.disk.reader import read as read_file

    index_freshness(vault)
    room = max_answer_bytes
    chars = DEFAULT_MAX_CHARS if max_chars is None else max_chars
    for _ in range(4):  # a default read shrinks until its answer fits the budget (a few tries at most)
        result = read_file(
            vault,
            path,
            section=section,
            lines=(lines[0], lines[1]) if lines else None,
            frontmatter_only=frontmatter_only,
            offset=offset,
            max_chars=chars,
            attachment_content=include_attachment_content is not False,
        )
        out = result.as_json()
        stale_after = out.get("stale_after")
        if stale_after is not None and not isinstance(stale_after, str):  # the schema promises text or null
            out["stale_after"] = json.dumps(stale_after, ensure_ascii=False, default=str)
        notice = result.marker()
        if notice:
            out["notice"] = notice
        size = budget.message_bytes(out)  # the whole message: the content once as text, once structured
        if size <= room or max_chars is not None or not out.get("content"):
            break
        chars = max(1, min(chars - 1, int(chars * (room - budget.MESSAGE_TAIL_BYTES) / size * 0.95)))
    if include_attachment_content is None and size > room and "content_base64" in out:
        del out["content_base64"]
        out["content_omitted"] = (
            f"the bytes would pass this server's answer budget ({room:,} bytes of text): "
            "pass include_attachment_content=true to get them (files up to 1 MiB)"
        )
    current_call().listed([result.path], 1)
    return out


def search(
    vault: Vault,
    max_answer_bytes: int,
    *,
    query: str,
    folder: str | None = None,
    pattern: str | None = None,
    filters: dict[str, FilterValue] | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    mode: str | None = None,
    wait: Callable[[], float] | None = None,
) -> Answer:
    """The search answer (`hits_answer`); core's VaultError or ValueError for a search it refuses. `wait()`:
    the seconds the search may wait for a full-text index still being built, asked once the snapshot's
    freshness is known (tools.py reports the build's progress meanwhile and gives what is left of
    SEARCH_BUILD_WAIT); None: SEARCH_BUILD_WAIT."""
    meta = index_freshness(vault)
    res = vault.search(
        query,
        folder=root_folder(folder),
        pattern=pattern,
        filters=pairs(filters),
        limit=SEARCH_PAGE if limit is None else limit,
        cursor=cursor,
        wait=SEARCH_BUILD_WAIT if wait is None else wait(),
        mode=mode,
    )
    return hits_answer(vault, res, meta, max_answer_bytes, explicit=limit is not None)


def hits_answer(vault: Vault, res: SearchResult, meta: dict[str, Any], budget_bytes: int, *, explicit: bool) -> Answer:
    """The answer of a search (or similar) result: its hits with the notes' triage facts, cut to the budget
    when the caller did not size the page (`explicit` False)."""
    hits = []
    for hit in res.hits:
        row = hit.as_json()
        # the snippet's ** marks carry the matches once; its plain copy and offsets are the TUI's
        del row["snippet_plain"], row["highlights"]
        facts = entry_json(hit.entry, vault.clock, res.is_bundle, frontmatter=False)
        row.update(
            status=facts.get("status"),
            stale=facts.get("stale"),
            trust_tier=facts.get("trust_tier"),
            tags=facts.get("tags", []),
        )
        hits.append(row)
    meta["index_stale"] = bool(meta["index_stale"] or res.index_stale)
    if res.note:
        meta["note"] = res.note
    # a page the caller did not size is cut to the answer budget, resuming at the next hit; any page
    # the caller sized stops at the hard cap (page_rows)
    links = [note_link(hit.entry) for hit in res.hits]  # a host can open or attach each hit
    n, error = page_rows(hits, budget_bytes=budget_bytes, explicit=explicit, extra=[link_bytes(k) for k in links])
    if error:
        return failure(error)
    hits = hits[:n]
    current_call().listed(h["path"] for h in hits)
    return ok_answer(
        {
            "result": hits,
            "total": res.total,
            "returned": n,
            "next_cursor": res.cursor_after(n),
            "okf_bundle": res.is_bundle,
            "match": res.match,
            "mode": res.mode,
        },
        meta=untrusted(meta, HIT_TEXT),
        links=links[:n],
    )
