"""The native read tools: thin translations of arguments and results over core.

Every tool is a plain function (the SDK runs it in a worker thread, off the event loop the
TUI shares), returns structured content plus the same data as JSON text, reports core's
errors as `Error: ...` tool errors and tells the activity layer what it listed or read.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from core import okf
from core.clock import parse_as_of
from core.model import FOLDER
from core.query import Query, pairs, run_query, stats
from core.reader import DEFAULT_MAX_CHARS, MAX_CHARS_LIMIT, ReadError, read as read_file
from core.serialize import RowCache, entry_json
from core.tags import tag_counts
from core.vault import Vault

from . import descriptions as d
from . import schemas
from .activity import current_call
from .results import fail, listing, ok, read_only, vault_errors

PENDING_WRITES_TIMEOUT = 10.0
SEARCH_BUILD_WAIT = 5.0  # a first search waits this long for the full-text index before saying it is building
LOAD_WAIT = 10.0
FilterValue = str | bool | int | float


@dataclass(frozen=True)
class ToolEnv:
    """What tool registration functions get: the vault and the server's options."""

    vault: Vault
    read_only: bool = False
    compat: frozenset[str] = frozenset()


def index_freshness(vault: Vault, wait_for_pending_writes: bool = False) -> dict[str, Any]:
    """Wait (bounded) for the first index and, when asked, for pending writes; the `_meta` to report.

    Uses the live index's `wait_for_pending_writes(timeout)` / `index_stale` when the vault has them.
    """
    stale = False
    if not vault.snapshot.loaded:
        vault.wait_ready(LOAD_WAIT)
    waiter = getattr(vault, "wait_for_pending_writes", None)
    if wait_for_pending_writes and callable(waiter) and waiter(PENDING_WRITES_TIMEOUT) is False:
        stale = True
    flag = getattr(vault, "index_stale", False)
    if callable(flag):
        flag = flag()
    snap = vault.snapshot
    meta: dict[str, Any] = {"index_stale": bool(stale or flag or not snap.loaded), "generation": snap.generation}
    if not snap.loaded:
        meta["index_loading"] = True
    return meta


def _rows(vault: Vault, entries, bundle: bool, clock=None, *, frontmatter: bool = True) -> list[dict[str, Any]]:
    clock = clock or vault.clock
    return [entry_json(e, clock, bundle, frontmatter=frontmatter) for e in entries]


def _counts(snap, clock) -> dict[str, Any]:
    """core.query.stats, memoized per index generation and clock minute (overview calls are frequent)."""
    slot = snap.cached("mcp.triage.counts", dict)
    key = (clock.today(), clock.now().replace(second=0, microsecond=0))
    if slot.get("key") != key:
        slot.update(value=stats(snap, clock), key=key)  # a race computes twice, never wrongly
    return slot["value"]


def register(server: MCPServer, env: ToolEnv) -> None:
    """Register the native read tools on `server`."""
    vault = env.vault
    row_cache = RowCache()

    @vault_errors
    def list_documents(
        folder: Annotated[str | None, Field(description=d.P_FOLDER)] = None,
        filters: Annotated[dict[str, FilterValue] | None, Field(description=d.P_FILTERS)] = None,
        pattern: Annotated[str | None, Field(description=d.P_PATTERN)] = None,
        include_attachments: Annotated[bool, Field(description=d.P_ATTACHMENTS)] = False,
        include_frontmatter: Annotated[bool, Field(description=d.P_INCLUDE_FM)] = False,
        wait_for_pending_writes: Annotated[bool, Field(description=d.P_WAIT)] = False,
        limit: Annotated[int | None, Field(ge=1, le=100_000, description=d.P_LIMIT)] = None,
        cursor: Annotated[str | None, Field(max_length=4096, description=d.P_CURSOR)] = None,
    ) -> Annotated[CallToolResult, schemas.DocumentList]:
        meta = index_freshness(vault, wait_for_pending_writes)
        res = vault.list(Query(folder=folder, pattern=pattern, filters=pairs(filters),
                               include_attachments=include_attachments, limit=limit, cursor=cursor))
        entries = res.entries
        current_call().listed([e.path for e in entries])
        return listing(row_cache, entries, vault.clock, res.is_bundle,
                       {"total": res.total, "returned": len(entries), "next_cursor": res.next_cursor,
                        "okf_bundle": res.is_bundle}, frontmatter=include_frontmatter, meta=meta)

    server.add_tool(list_documents, name="list_documents", title="List Documents", description=d.LIST_DOCUMENTS,
                    annotations=read_only("List Documents"))

    @vault_errors
    def read(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_PATH)],
        section: Annotated[str | None, Field(max_length=1024, description=d.P_SECTION)] = None,
        lines: Annotated[list[int] | None, Field(min_length=2, max_length=2, description=d.P_LINES)] = None,
        frontmatter_only: Annotated[bool, Field(description=d.P_FM_ONLY)] = False,
        offset: Annotated[int, Field(ge=0, description=d.P_OFFSET)] = 0,
        max_chars: Annotated[int, Field(ge=1, le=MAX_CHARS_LIMIT, description=d.P_MAX_CHARS)] = DEFAULT_MAX_CHARS,
        include_attachment_content: Annotated[bool, Field(description=d.P_ATT_CONTENT)] = True,
    ) -> Annotated[CallToolResult, schemas.ReadOutput]:
        index_freshness(vault)
        result = read_file(vault, path, section=section, lines=tuple(lines) if lines else None,
                           frontmatter_only=frontmatter_only,
                           offset=offset, max_chars=max_chars, attachment_content=include_attachment_content)
        out = result.as_json()
        notice = result.marker()
        if notice:
            out["notice"] = notice
        current_call().listed([result.path], 1)
        return ok(out)

    server.add_tool(read, name="read", title="Read Note", description=d.READ, annotations=read_only("Read Note"))

    @vault_errors
    def triage(
        category: Annotated[Literal["overview", "deprecated", "stale", "unverified", "machine-confirmed",
                                    "human-reviewed", "broken"], Field(description=d.P_CATEGORY)] = "overview",
        as_of: Annotated[str | None, Field(max_length=64, description=d.P_AS_OF)] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description=d.P_TRIAGE_LIMIT)] = 50,
        cursor: Annotated[str | None, Field(max_length=4096, description=d.P_CURSOR)] = None,
    ) -> Annotated[CallToolResult, schemas.TriageOutput]:
        meta = index_freshness(vault)
        clock = parse_as_of(as_of) if as_of else vault.clock
        snap = vault.snapshot
        counts = _counts(snap, clock)
        tiers = counts["trust_tier"]
        out: dict[str, Any] = {
            "as_of": clock.today().isoformat(), "okf_bundle": snap.is_bundle,
            "counts": {
                "notes": counts["notes"], "deprecated": counts["status"].get("deprecated", 0),
                "stale": counts["stale"], "unverified": tiers.get("unverified", 0),
                "machine_confirmed": tiers.get("machine-confirmed", 0),
                "human_reviewed": tiers.get("human-reviewed", 0),
                "broken_frontmatter": counts["frontmatter_errors"], "undecodable": counts["decode_errors"],
                "skipped_files": counts["skipped"], "by_status": counts["status"],
            },
            "category": None if category == "overview" else category,
            "result": [], "total": 0, "returned": 0, "next_cursor": None,
        }
        if category == "overview":
            current_call().listed((), 0)
            return ok(out, meta=meta)
        if category == "broken":
            q = Query(problems_only=True, limit=limit, cursor=cursor)
            out["skipped"] = [{"path": s.path, "reason": s.reason} for s in snap.skipped]
        elif not snap.is_bundle:
            return fail(f"category {category!r} needs an OKF bundle, and this vault is not one (its root index.md "
                        "declares no okf_version): use list_documents with filters on your own frontmatter keys, "
                        "or triage category 'broken'")
        elif category == "deprecated":
            q = Query(filters=(("status", "deprecated"),), limit=limit, cursor=cursor)
        elif category == "stale":
            q = Query(filters=(("stale", "true"),), sort="overdue", limit=limit, cursor=cursor)
        else:
            q = Query(filters=(("trust_tier", category),), limit=limit, cursor=cursor)
        res = run_query(snap, q, clock)
        rows = _rows(vault, res.entries, res.is_bundle, clock)
        if category == "stale":
            for row, e in zip(rows, res.entries):
                row["overdue_days"] = okf.overdue_days(e.stale_date, e.stale_instant, clock)
        out.update(result=rows, total=res.total, returned=len(rows), next_cursor=res.next_cursor)
        current_call().listed((r["path"] for r in rows))
        return ok(out, meta=meta)

    server.add_tool(triage, name="triage", title="Triage Notes", description=d.TRIAGE,
                    annotations=read_only("Triage Notes"))

    @vault_errors
    def list_folders(
        folder: Annotated[str | None, Field(description=d.P_LF_FOLDER)] = None,
        recursive: Annotated[bool, Field(description=d.P_LF_RECURSIVE)] = True,
    ) -> Annotated[CallToolResult, schemas.FolderList]:
        from core.folders import folder_tree

        meta = index_freshness(vault)
        snap = vault.snapshot
        res = run_query(snap, Query(folder=folder, recursive=recursive, include_notes=False, include_folders=True),
                        vault.clock)
        tree = folder_tree(snap)
        rows = [{"path": e.path, "notes": tree.note_count(e.path), "subfolders": len(tree.child_folders(e.path)),
                 "modified_at": e.modified_at} for e in res.entries if e.kind == FOLDER]
        current_call().listed((r["path"] for r in rows))
        return ok({"result": rows, "total": len(rows)}, meta=meta)

    server.add_tool(list_folders, name="list_folders", title="List Folders", description=d.LIST_FOLDERS,
                    annotations=read_only("List Folders"))

    @vault_errors
    def list_tags(
        folder: Annotated[str | None, Field(description=d.P_LT_FOLDER)] = None,
        prefix: Annotated[str | None, Field(max_length=256, description=d.P_LT_PREFIX)] = None,
        limit: Annotated[int | None, Field(ge=1, le=100_000, description=d.P_LT_LIMIT)] = None,
    ) -> Annotated[CallToolResult, schemas.TagList]:
        meta = index_freshness(vault)
        counts = tag_counts(vault.snapshot, folder)
        if prefix:
            folded = prefix.lstrip("#").casefold()
            counts = [(t, n) for t, n in counts if t.casefold().startswith(folded)]
        total = len(counts)
        rows = [{"tag": t, "count": n} for t, n in (counts if limit is None else counts[:limit])]
        current_call().listed((), len(rows))
        return ok({"result": rows, "total": total}, meta=meta)

    server.add_tool(list_tags, name="list_tags", title="List Tags", description=d.LIST_TAGS,
                    annotations=read_only("List Tags"))

    if callable(getattr(vault, "links", None)):
        @vault_errors
        def get_links(
            path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_LINK_PATH)],
        ) -> Annotated[CallToolResult, schemas.Links]:
            index_freshness(vault)
            entry = vault.entry(path)
            if entry.kind == FOLDER:
                raise ReadError(f"{entry.path!r} is a folder: pass a note's path "
                                f"(list_documents(folder={entry.path!r}) lists them)")
            report = vault.links(entry.path)
            outgoing = [_link_json(r) for r in report.outgoing]
            out = {"path": report.path, "outgoing": outgoing,
                   "backlinks": list(dict.fromkeys(r.source for r in report.backlinks)),
                   "broken": [_link_json(r) for r in report.broken]}
            current_call().listed([report.path], len(outgoing) + len(out["backlinks"]))
            return ok(out)

        server.add_tool(get_links, name="get_links", title="Get Links", description=d.GET_LINKS,
                        annotations=read_only("Get Links"))

    if callable(getattr(vault, "search", None)):
        _register_search(server, vault)


def _link_json(resolved) -> dict[str, Any]:
    link = resolved.link
    return {"target": link.target, "kind": link.kind, "heading": link.heading, "alias": link.alias,
            "resolved": resolved.target}


def _register_search(server: MCPServer, vault: Vault) -> None:
    """Full-text search over the live index's FTS5 index (`vault.search`)."""

    @vault_errors
    def search(
        query: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_QUERY)],
        folder: Annotated[str | None, Field(description=d.P_FOLDER)] = None,
        pattern: Annotated[str | None, Field(description=d.P_PATTERN)] = None,
        filters: Annotated[dict[str, FilterValue] | None, Field(description=d.P_FILTERS)] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description=d.P_SEARCH_LIMIT)] = 20,
        cursor: Annotated[str | None, Field(max_length=4096, description=d.P_CURSOR)] = None,
    ) -> Annotated[CallToolResult, schemas.SearchResults]:
        meta = index_freshness(vault)
        res = vault.search(query, folder=folder, pattern=pattern, filters=pairs(filters), limit=limit,
                           cursor=cursor, wait=SEARCH_BUILD_WAIT)
        hits = []
        for hit in res.hits:
            row = hit.as_json()
            facts = entry_json(hit.entry, vault.clock, res.is_bundle, frontmatter=False)
            row.update(status=facts.get("status"), stale=facts.get("stale"), trust_tier=facts.get("trust_tier"),
                       tags=facts.get("tags", []))
            hits.append(row)
        meta["index_stale"] = bool(meta["index_stale"] or res.index_stale)
        current_call().listed((h["path"] for h in hits))
        return ok({"result": hits, "total": res.total, "returned": len(hits), "next_cursor": res.next_cursor,
                   "okf_bundle": res.is_bundle}, meta=meta)

    server.add_tool(search, name="search", title="Search Notes", description=d.SEARCH,
                    annotations=read_only("Search Notes"))
