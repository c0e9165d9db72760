"""The native read tools: thin translations of arguments and results over core.

Every tool is a plain function (the SDK runs it in a worker thread, off the event loop the
TUI shares), returns structured content plus the same data as JSON text, reports core's
errors as `Error: ...` tool errors and tells the activity layer what it listed or read.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from vaultwatch.core.clock import Clock, parse_as_of
from vaultwatch.core.disk.reader import MAX_CHARS_LIMIT, ReadError
from vaultwatch.core.errors import QueryError
from vaultwatch.core.links.graph import unresolved_by_note
from vaultwatch.core.model import FOLDER
from vaultwatch.core.query import problems
from vaultwatch.core.query.listing import Query, cursor_after, encode_cursor, run_query, stats
from vaultwatch.core.query.tags import tag_counts
from vaultwatch.core.review import triageviews
from vaultwatch.core.search.semantic import offered as semantic_offered
from vaultwatch.core.serialize import entry_json
from vaultwatch.core.vault import Vault

from . import budget, progress, readcalls, schemas
from . import descriptions as d
from .activity import current_call
from .readcalls import READ_TEXT, ROW_TEXT, FilterValue, index_freshness, root_folder, untrusted
from .results import fail, listing, ok, page_rows, read_only, result_of, vault_errors

if TYPE_CHECKING:
    from vaultwatch.core.index.snapshot import Snapshot
    from vaultwatch.core.links.graph import ResolvedLink
    from vaultwatch.core.model import Entry

__all__ = ["ToolEnv", "index_freshness", "register", "root_folder", "untrusted"]

# what the search tool's mode offers, as installed (the annotation is read from module globals)
P_MODE = d.P_MODE if semantic_offered() else d.P_MODE_OFF
SEARCH = d.SEARCH if semantic_offered() else d.without_semantic(d.SEARCH)
SEARCH_BUILD_WAIT = readcalls.SEARCH_BUILD_WAIT
TRIAGE_PAGE = 50  # rows of a triage page when the call gives no limit (fewer past the answer budget)
SKIPPED_SHOWN = 100  # skipped files listed on the broken page (counts.skipped_files has them all)


@dataclass(frozen=True)
class ToolEnv:
    """What tool registration functions get: the vault and the server's options."""

    vault: Vault
    read_only: bool = False
    compat: frozenset[str] = frozenset()
    max_answer_bytes: int = budget.DEFAULT_ANSWER_BYTES


# Which fields of an answer carry text from the notes themselves (written by people and other agents):
# named in _meta.untrusted, so a client or model can treat them as data, never as instructions.
# "a[].b, c; d": a[].b, a[].c and d (each names the field and everything in it). Paths are not
# named: every answer carries them as the handles an agent passes back (the instructions say
# names are note text too). A listing's: readcalls.ROW_TEXT.
LINK_TEXT = "outgoing[].target, heading, alias; broken[].target, heading, alias"
STATUS_TEXT = "counts.by_status"  # its keys are the notes' own status values
BROKEN_LINK_TEXT = "result[].title, status, tags, frontmatter, broken_links; " + STATUS_TEXT
TAG_TEXT = "result[].tag"


def _rows(
    vault: Vault, entries: Iterable[Entry], bundle: bool, clock: Clock | None = None, *, frontmatter: bool = True
) -> list[dict[str, Any]]:
    clock = clock or vault.clock
    return [entry_json(e, clock, bundle, frontmatter=frontmatter) for e in entries]


def _counts(snap: Snapshot, clock: Clock, root: str) -> dict[str, Any]:
    """core.query.listing.stats, memoized per index generation, clock minute and templates folders
    (overview calls are frequent)."""
    slot = snap.cached("mcp.triage.counts", dict)
    exempt = problems.template_folders(root)
    key = (clock.today(), clock.now().replace(second=0, microsecond=0), exempt)
    if slot.get("key") != key:
        slot.update(value=stats(snap, clock, exempt), key=key)  # a race computes twice, never wrongly
    return slot["value"]


def register(server: MCPServer, env: ToolEnv) -> None:
    """Register the native read tools on `server`."""
    vault = env.vault
    row_cache = readcalls.row_cache(vault)

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
        return readcalls.list_documents(  # the stdio front answers a first listing with it too (earlycalls.py)
            vault,
            row_cache,
            env.max_answer_bytes,
            listing,
            folder=folder,
            filters=filters,
            pattern=pattern,
            include_attachments=include_attachments,
            include_frontmatter=include_frontmatter,
            wait_for_pending_writes=wait_for_pending_writes,
            limit=limit,
            cursor=cursor,
        )

    server.add_tool(
        list_documents,
        name="list_documents",
        title="List Documents",
        description=d.LIST_DOCUMENTS,
        annotations=read_only("List Documents"),
    )

    @vault_errors
    def read(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_PATH)],
        section: Annotated[str | None, Field(max_length=1024, description=d.P_SECTION)] = None,
        lines: Annotated[list[int] | None, Field(min_length=2, max_length=2, description=d.P_LINES)] = None,
        frontmatter_only: Annotated[bool, Field(description=d.P_FM_ONLY)] = False,
        offset: Annotated[int, Field(ge=0, description=d.P_OFFSET)] = 0,
        max_chars: Annotated[int | None, Field(ge=1, le=MAX_CHARS_LIMIT, description=d.P_MAX_CHARS)] = None,
        include_attachment_content: Annotated[bool | None, Field(description=d.P_ATT_CONTENT)] = None,
    ) -> Annotated[CallToolResult, schemas.ReadOutput]:
        out = readcalls.read_document(  # the stdio front answers reads with it too (earlycalls.py)
            vault,
            env.max_answer_bytes,
            path=path,
            section=section,
            lines=lines,
            frontmatter_only=frontmatter_only,
            offset=offset,
            max_chars=max_chars,
            include_attachment_content=include_attachment_content,
        )
        return ok(out, meta=untrusted({}, READ_TEXT))

    server.add_tool(read, name="read", title="Read Note", description=d.READ, annotations=read_only("Read Note"))

    @vault_errors
    def triage(
        category: Annotated[
            Literal[
                "overview",
                "deprecated",
                "stale",
                "unverified",
                "machine-confirmed",
                "human-reviewed",
                "broken",
                "broken_links",
            ],
            Field(description=d.P_CATEGORY),
        ] = "overview",
        as_of: Annotated[str | None, Field(max_length=64, description=d.P_AS_OF)] = None,
        limit: Annotated[int | None, Field(ge=1, le=1000, description=d.P_TRIAGE_LIMIT)] = None,
        cursor: Annotated[str | None, Field(max_length=4096, description=d.P_CURSOR)] = None,
    ) -> Annotated[CallToolResult, schemas.TriageOutput]:
        meta = index_freshness(vault)
        explicit, limit = limit is not None, TRIAGE_PAGE if limit is None else limit
        clock = parse_as_of(as_of) if as_of else vault.clock
        snap = vault.snapshot
        counts = _counts(snap, clock, vault.root)
        vault.broken_links()  # the link graph, patched from the previous generation's
        tally = problems.vault_tally(snap, vault.root)  # the person's Broken tab's number
        person = triageviews.rules_for(vault)
        journaled = triageviews.reviews(vault)
        if snap.is_bundle:  # OKF's own semantics, but for the journal's notes (core.review.triageviews)
            views = {"deprecated": counts["status"].get("deprecated", 0), "stale": counts["stale"]}
            views.update(triageviews.bundle_tier_counts(snap, counts["trust_tier"], journaled))
        else:  # the person's rules and the journal: the counts the TUI's tabs show (core.review.triageviews)
            views = triageviews.counts(snap, person.rules, journaled, clock)
        out: dict[str, Any] = {
            "as_of": clock.today().isoformat(),
            "okf_bundle": snap.is_bundle,
            "counts": {
                "notes": counts["notes"],
                "deprecated": views["deprecated"],
                "stale": views["stale"],
                "unverified": views.get("unverified", 0),
                "machine_confirmed": views.get("machine-confirmed", 0),
                "human_reviewed": views.get("human-reviewed", 0),
                "broken_frontmatter": counts["frontmatter_errors"],
                "undecodable": counts["decode_errors"],
                "skipped_files": counts["skipped"],
                "broken": tally.broken,
                "broken_by_kind": tally.by_kind,
                "unwritten_links": tally.unwritten,
                "by_status": counts["status"],
            },
            "category": None if category == "overview" else category,
            "result": [],
            "total": 0,
            "returned": 0,
            "next_cursor": None,
        }
        # each view's rule, in the words of the TUI's tabs (on a bundle they say why a note a person
        # attested can be unverified)
        out["rules"] = {
            key.replace("-", "_"): triageviews.rule(snap, key, person, journaled)
            for key in ("deprecated", "stale", *triageviews.tiers(snap))
        }
        if category == "overview":
            # counts, not rows: no Results count (a 0 in the activity panel read as "found nothing")
            return ok(out, meta=untrusted(meta, STATUS_TEXT))
        if category == "broken":
            q = Query(problems_only=True, limit=limit, cursor=cursor)
            out["skipped"] = [{"path": s.path, "reason": s.reason} for s in snap.skipped[:SKIPPED_SHOWN]]
        elif category == "broken_links":
            q = Query(unresolved_links=True, limit=limit, cursor=cursor)
        else:  # the view the person's tab lists (OKF's on a bundle)
            base = triageviews.query(snap, category, person.rules, journaled)
            q = replace(base, sort="overdue" if category == "stale" else "path", limit=limit, cursor=cursor)
        res = run_query(snap, q, clock)
        rows = _rows(vault, res.entries, res.is_bundle, clock)
        if res.is_bundle:  # each row's tier as this view lists it, not verified:'s alone
            for row, e in zip(rows, res.entries, strict=True):
                if triageviews.changed_since_review(e, snap, journaled):
                    row["trust_tier"] = triageviews.tier_of(e, snap, journaled)
        if category == "stale":
            for row, e in zip(rows, res.entries, strict=True):
                row["overdue_days"] = triageviews.overdue_days(e, snap, person.rules, clock)
        if category == "broken_links":
            unresolved = unresolved_by_note(snap)
            for row, e in zip(rows, res.entries, strict=True):
                links = unresolved.get(e.path, ())
                # the TUI's Broken tab's kinds and lines (core.query.problems), read for this page only
                found = problems.locate(vault.root_real, [problems.link_problem(r) for r in links])
                row["broken_links"] = [
                    {
                        "target": r.link.target,
                        "kind": r.link.kind,
                        "heading": r.link.heading,
                        "alias": r.link.alias,
                        "missing": r.missing,
                        "problem": p.kind,
                        "line": p.line,
                    }
                    for r, p in zip(links, found, strict=True)
                ]
        # the rule lines ride in both copies of the answer: less room for rows
        room = env.max_answer_bytes - (budget.message_bytes({"rules": out["rules"]}) - budget.MESSAGE_TAIL_BYTES)
        n, error = page_rows(rows, budget_bytes=room, explicit=explicit)
        if error:
            return fail(error)
        next_cursor = res.next_cursor if n == len(rows) else cursor_after(q, res.entries[n - 1], clock)
        out.update(result=rows[:n], total=res.total, returned=n, next_cursor=next_cursor)
        current_call().listed(r["path"] for r in rows[:n])
        text = BROKEN_LINK_TEXT if category == "broken_links" else f"{ROW_TEXT}; {STATUS_TEXT}"
        return ok(out, meta=untrusted(meta, text))

    server.add_tool(
        triage, name="triage", title="Triage Notes", description=d.TRIAGE, annotations=read_only("Triage Notes")
    )

    @vault_errors
    def list_folders(
        folder: Annotated[str | None, Field(description=d.P_LF_FOLDER)] = None,
        recursive: Annotated[bool, Field(description=d.P_LF_RECURSIVE)] = True,
        limit: Annotated[int | None, Field(ge=1, le=100_000, description=d.P_PAGE_LIMIT)] = None,
        cursor: Annotated[str | None, Field(max_length=4096, description=d.P_CURSOR)] = None,
    ) -> Annotated[CallToolResult, schemas.FolderList]:
        from vaultwatch.core.query.folders import folder_tree

        meta = index_freshness(vault)
        snap = vault.snapshot
        q = Query(
            folder=root_folder(folder),
            recursive=recursive,
            include_notes=False,
            include_folders=True,
            limit=budget.default_rows(env.max_answer_bytes) if limit is None else limit,
            cursor=cursor,
        )
        res = run_query(snap, q, vault.clock)
        tree = folder_tree(snap)
        rows = [
            {
                "path": e.path,
                "notes": tree.note_count(e.path),
                "subfolders": len(tree.child_folders(e.path)),
                "modified_at": e.modified_at,
            }
            for e in res.entries
        ]
        n, error = page_rows(rows, budget_bytes=env.max_answer_bytes, explicit=limit is not None)
        if error:
            return fail(error)
        next_cursor = res.next_cursor if n == len(rows) else cursor_after(q, res.entries[n - 1], vault.clock)
        current_call().listed(e.path for e in res.entries[:n])
        return ok({"result": rows[:n], "total": res.total, "returned": n, "next_cursor": next_cursor}, meta=meta)

    server.add_tool(
        list_folders,
        name="list_folders",
        title="List Folders",
        description=d.LIST_FOLDERS,
        annotations=read_only("List Folders"),
    )

    @vault_errors
    def list_tags(
        folder: Annotated[str | None, Field(description=d.P_LT_FOLDER)] = None,
        prefix: Annotated[str | None, Field(max_length=256, description=d.P_LT_PREFIX)] = None,
        limit: Annotated[int | None, Field(ge=1, le=100_000, description=d.P_PAGE_LIMIT)] = None,
        cursor: Annotated[str | None, Field(max_length=4096, description=d.P_CURSOR)] = None,
    ) -> Annotated[CallToolResult, schemas.TagList]:
        meta = index_freshness(vault)
        folder = root_folder(folder)
        counts = tag_counts(vault.snapshot, folder)
        if prefix:
            folded = prefix.lstrip("#").casefold()
            counts = [(t, n) for t, n in counts if t.casefold().startswith(folded)]
        total = len(counts)
        fp = ["tags", folder, prefix or ""]
        start = tag_cursor_start(counts, cursor, fp)
        size = budget.default_rows(env.max_answer_bytes) if limit is None else limit
        rows = [{"tag": t, "count": c} for t, c in counts[start : start + size]]
        n, error = page_rows(rows, budget_bytes=env.max_answer_bytes, explicit=limit is not None)
        if error:
            return fail(error)
        rows = rows[:n]
        more = start + n < total and rows
        last_tag, last_count = counts[start + n - 1] if more else ("", 0)
        next_cursor = encode_cursor(json.dumps(fp), last_count, last_tag) if more else None
        current_call().listed((), len(rows))
        return ok(
            {"result": rows, "total": total, "returned": n, "next_cursor": next_cursor}, meta=untrusted(meta, TAG_TEXT)
        )

    server.add_tool(
        list_tags, name="list_tags", title="List Tags", description=d.LIST_TAGS, annotations=read_only("List Tags")
    )

    @vault_errors
    def get_links(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_LINK_PATH)],
    ) -> Annotated[CallToolResult, schemas.Links]:
        index_freshness(vault)
        entry = vault.entry(path)
        if entry.kind == FOLDER:
            raise ReadError(
                f"{entry.path!r} is a folder: pass a note's path (list_documents(folder={entry.path!r}) lists them)"
            )
        report = vault.links(entry.path)
        outgoing = [_link_json(r) for r in report.outgoing]
        out = {
            "path": report.path,
            "outgoing": outgoing,
            "backlinks": list(dict.fromkeys(r.source for r in report.backlinks)),
            "broken": [_broken_json(r) for r in report.broken],
        }
        _fit_links(out, env.max_answer_bytes)
        current_call().listed([report.path], len(out["outgoing"]) + len(out["backlinks"]))
        return ok(out, meta=untrusted({}, LINK_TEXT))

    server.add_tool(
        get_links, name="get_links", title="Get Links", description=d.GET_LINKS, annotations=read_only("Get Links")
    )

    _register_search(server, vault, env.max_answer_bytes)


def _wait_for_search_index(vault: Vault) -> float:
    """Before a search: while the full-text index is still being built, report its progress to a client
    that asked for progress (up to SEARCH_BUILD_WAIT); the seconds left for search's own wait."""
    channel = progress.current()
    if channel is None:
        return SEARCH_BUILD_WAIT
    deadline = time.monotonic() + SEARCH_BUILD_WAIT
    status = vault.search_status()
    waited = False
    while not status.ready and not status.problem and time.monotonic() < deadline:
        waited = True
        if status.total:  # the notes to index are counted (a build just started has not yet)
            channel.report(
                status.done, status.total, f"building the full-text index: {status.done} of {status.total} notes"
            )
        # waits as a search does: the build and the cache's write it waits for rest while calls come,
        # but not while a search waits for them
        vault.wait_search_ready(0.1)
        status = vault.search_status()
    if waited and status.ready and status.total:  # built while the call waited (a small vault: between two looks)
        channel.report(status.total, status.total, f"built the full-text index: {status.total} notes")
    return max(0.0, deadline - time.monotonic())


def _fit_links(out: dict[str, Any], room: int) -> None:
    """Cut a get_links answer's lists to the answer budget, the same share of each, saying so in `truncated`.

    Each list's items are measured only until they pass the room (a note of 10,000 links whose
    answer keeps ~400 measured all 10,000 twice: ~100 ms of the interpreter per call)."""
    keys = ("outgoing", "backlinks", "broken")
    totals = {key: len(out[key]) for key in keys}
    # the answer without its lists' items (an item's measure counts its comma; a list's last has none)
    fixed = budget.message_bytes({**out, **{key: [] for key in keys}})
    sums = {}
    for key in keys:
        acc, run = [0], 0
        for item in out[key]:
            if fixed + run > room:  # no share reaching past here fits: stop measuring
                break
            run += budget.row_bytes(item) + 1
            acc.append(run)
        sums[key] = acc
    if all(len(sums[key]) - 1 == totals[key] for key in keys) and budget.message_bytes(out) <= room:
        return
    lo, hi = 0.0, 1.0
    for _ in range(30):  # the largest common share of every list that fits
        mid = (lo + hi) / 2
        at = {key: int(mid * totals[key]) for key in keys}
        used = fixed + sum(sums[key][at[key]] if at[key] < len(sums[key]) else room + 1 for key in keys)
        lo, hi = (mid, hi) if used <= room else (lo, mid)
    for key in keys:
        out[key] = out[key][: int(lo * totals[key])]
    out["truncated"] = {key: n for key, n in totals.items() if len(out[key]) < n}


def tag_cursor_start(counts: list[tuple[str, int]], cursor: str | None, fp: list) -> int:
    """Where a list_tags page starts: after the (count, tag) its cursor names, in the most-used-first order."""
    if not cursor:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        got, count, tag = json.loads(raw)
        if not isinstance(count, int) or not isinstance(tag, str):
            raise ValueError
    except (ValueError, TypeError):
        raise QueryError("cursor is not valid: pass back the next_cursor of a previous result, unchanged") from None
    if got != json.dumps(fp):
        raise QueryError("cursor belongs to a different query: repeat the same arguments with it, or drop the cursor")
    mark = (-count, tag)
    return next((i for i, (t, c) in enumerate(counts) if (-c, t) > mark), len(counts))


def _link_json(resolved: ResolvedLink) -> dict[str, Any]:
    link = resolved.link
    return {
        "target": link.target,
        "kind": link.kind,
        "heading": link.heading,
        "alias": link.alias,
        "resolved": resolved.target,
    }


def _broken_json(resolved: ResolvedLink) -> dict[str, Any]:
    # what is missing, and the problem that is in core.query.problems' words (triage's and the
    # TUI's Broken tab's): a link to a note not yet written is listed, and is no breakage
    return {**_link_json(resolved), "missing": resolved.missing, "problem": problems.link_problem(resolved).kind}


def _register_search(server: MCPServer, vault: Vault, budget_bytes: int) -> None:
    """Full-text search over the live index's FTS5 index (`vault.search`); with the semantic
    extra also by meaning (`mode`) and the `similar` tool."""
    semantic = semantic_offered()

    @vault_errors
    def search(
        query: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_QUERY)],
        folder: Annotated[str | None, Field(description=d.P_FOLDER)] = None,
        pattern: Annotated[str | None, Field(description=d.P_PATTERN)] = None,
        filters: Annotated[dict[str, FilterValue] | None, Field(description=d.P_FILTERS)] = None,
        limit: Annotated[int | None, Field(ge=1, le=1000, description=d.P_SEARCH_LIMIT)] = None,
        cursor: Annotated[str | None, Field(max_length=4096, description=d.P_CURSOR)] = None,
        mode: Annotated[Literal["hybrid", "keyword", "semantic"] | None, Field(description=P_MODE)] = None,
    ) -> Annotated[CallToolResult, schemas.SearchResults]:
        return result_of(  # the stdio front answers plain searches with it too (earlycalls.py)
            readcalls.search(
                vault,
                budget_bytes,
                query=query,
                folder=folder,
                pattern=pattern,
                filters=filters,
                limit=limit,
                cursor=cursor,
                mode=mode,
                wait=lambda: _wait_for_search_index(vault),
            )
        )

    server.add_tool(
        search, name="search", title="Search Notes", description=SEARCH, annotations=read_only("Search Notes")
    )
    if not semantic:
        return

    @vault_errors
    def similar(
        path: Annotated[str, Field(min_length=1, max_length=4096, description=d.P_SIMILAR_PATH)],
        folder: Annotated[str | None, Field(description=d.P_FOLDER)] = None,
        limit: Annotated[int, Field(ge=1, le=100, description=d.P_SIMILAR_LIMIT)] = 10,
    ) -> Annotated[CallToolResult, schemas.SearchResults]:
        meta = index_freshness(vault)
        res = vault.similar(path, folder=root_folder(folder), limit=limit, wait=SEARCH_BUILD_WAIT)
        # at most 100 hits and no cursor: the hard cap only
        return result_of(readcalls.hits_answer(vault, res, meta, budget_bytes, explicit=True))

    server.add_tool(
        similar, name="similar", title="Similar Notes", description=d.SIMILAR, annotations=read_only("Similar Notes")
    )
