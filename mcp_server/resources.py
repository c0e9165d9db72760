"""Vault notes (and attachments) as MCP resources, so a person can attach one in a client's UI.

- `resources/templates/list`: one template, `vault://note/{+path}` (the vault-relative path,
  percent-encoded per segment);
- `resources/list`: every indexed note and attachment, in path order, a page of RESOURCE_PAGE
  at a time with `nextCursor` (the listing's own cursor, so each appears exactly once). Never an
  incomplete list as a complete one: a first listing waits for the index as list_documents does
  (readcalls.index_freshness, bounded); one still loading after that answers no resources but
  a cursor to come back with (LOADING_CURSOR) and `_meta.index_loading`, and the sessions that
  listed hear `list_changed` once the index is ready;
- `resources/read`: the file's bytes as they are on disk now (a note as text/markdown, an
  attachment as a base64 blob); at most budget.HARD_ANSWER_BYTES; opened as the read tool
  opens a file (core.disk.fileopen: beneath the vault's descriptor, a regular file that is not
  hard-linked); hidden or escaping paths are refused as the tools refuse them, an unknown one
  is -32002 (resource not found).

- `resources/subscribe` / `resources/unsubscribe`: a subscribed note's change (through vaultwatch
  or an outside edit the watcher sees, a delete, a rename away) sends
  `notifications/resources/updated`; a note or attachment appearing or disappearing sends
  `notifications/resources/list_changed` to every session that listed, read or subscribed to
  resources. Both go out on the session's standalone stream (stdio; the socket's GET stream,
  which `vaultwatch bridge` keeps open); 2026-07-28 clients get the same events on their
  `subscriptions/listen` streams. Changes are gathered for COALESCE_SECONDS, so a rename of
  many notes is one list_changed.
"""

from __future__ import annotations

import asyncio
import base64
import weakref
from typing import Any
from urllib.parse import quote, unquote

import anyio.to_thread
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    BlobResourceContents,
    EmptyResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    SubscribeRequestParams,
    TextResourceContents,
    UnsubscribeRequestParams,
)

from vaultwatch.core.disk.fileopen import note_bytes
from vaultwatch.core.errors import NotFoundError, VaultError
from vaultwatch.core.events import DocumentsChanged, IndexReady
from vaultwatch.core.model import ATTACHMENT, NOTE
from vaultwatch.core.query.listing import Query

from . import budget, sdk
from .readcalls import index_freshness

SCHEME = "vault://note/"
TEMPLATE = SCHEME + "{+path}"
RESOURCE_PAGE = 500
NOT_FOUND = -32002  # the spec's "resource not found"
NOTE_MIME = "text/markdown"
# the note-authored fields of an answer, as the tools name them (mcp_server/tools.py ROW_TEXT)
LIST_TEXT = {"untrusted": "resources[].title"}
NOTE_TEXT = {"untrusted": "contents[].text"}
COALESCE_SECONDS = 0.05
LOADING_CURSOR = "index-loading"  # resources/list's cursor while the first index loads: list from the start


def uri_of(path: str) -> str:
    """The resource URI of a vault-relative path."""
    return SCHEME + quote(path, safe="/")


def path_of(uri: str) -> str:
    """The vault-relative path a resource URI names; MCPError for another scheme."""
    if not uri.startswith(SCHEME) or len(uri) == len(SCHEME):
        raise MCPError(
            INVALID_PARAMS,
            f"not a vaultwatch resource: {uri!r}; use {TEMPLATE} with a vault-relative "
            "path, as resources/list gives them",
            {"uri": uri},  # as every refused resource names the one it refuses
        )
    return unquote(uri[len(SCHEME) :])


class Subscriptions:
    """Which session follows which note, and the notifications when the vault changes (see module doc).

    Sessions are held weakly (a session that ends drops out); the vault's bus calls `on_event` from
    any thread, and the notifications go out on the server's event loop. `on_event` looks only at
    the paths someone follows (a frozen set made on the loop), so a burst of thousands of changes
    nobody subscribed to costs a set lookup each.
    """

    def __init__(self, server: Any) -> None:
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self.notes: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self.listeners: weakref.WeakSet[Any] = weakref.WeakSet()
        self.listening: dict[int, tuple[bool, frozenset[str]]] = {}  # open subscriptions/listen streams
        self._wanted: frozenset[str] = frozenset()  # vault paths someone follows
        self._lists = False  # someone hears list_changed
        self._updated: set[str] = set()
        self._list_changed = False
        self._flush: asyncio.TimerHandle | None = None
        self.sent: list[tuple[str, str | None]] = []  # the last notifications sent (diagnostics and tests)

    def _recompute(self) -> None:
        paths = {path_of(u) for uris in list(self.notes.values()) for u in uris}
        for _, uris in self.listening.values():
            paths |= {path_of(u) for u in uris if u.startswith(SCHEME) and len(u) > len(SCHEME)}
        self._wanted = frozenset(paths)
        self._lists = bool(len(self.listeners)) or any(lists for lists, _ in self.listening.values())

    async def middleware(self, ctx: Any, call_next: Any) -> Any:
        """Server middleware: learn the server's event loop, and what 2026-07-28 listen streams follow."""
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        if ctx.method != "subscriptions/listen":
            return await call_next(ctx)
        params: dict[str, Any] = ctx.params if isinstance(ctx.params, dict) else {}
        found = params.get("notifications")
        wanted: dict[str, Any] = found if isinstance(found, dict) else {}
        uris = wanted.get("resourceSubscriptions") or ()
        key = id(ctx)
        self.listening[key] = (
            bool(wanted.get("resourcesListChanged")),
            frozenset(u for u in uris if isinstance(u, str)),
        )
        self._recompute()
        try:
            return await call_next(ctx)
        finally:
            self.listening.pop(key, None)
            self._recompute()

    def seen(self, ctx: Any) -> Any:
        """Note the session of a resources request (it hears list_changed from now on); its connection."""
        self.loop = asyncio.get_running_loop()
        conn = sdk.connection(ctx.session)
        if conn is not None and conn not in self.listeners:
            self.listeners.add(conn)
            self._recompute()
        return conn

    def subscribe(self, ctx: Any, uri: str, on: bool) -> None:
        path_of(uri)  # refuses what is not a vault resource
        conn = self.seen(ctx)
        if conn is None:
            return
        uris = self.notes.setdefault(conn, set())
        if on:
            uris.add(uri)
        else:
            uris.discard(uri)
        self._recompute()

    def on_event(self, event: Any) -> None:
        """From the vault's bus (any thread): gather a change someone follows, flush it shortly on the loop."""
        loop = self.loop
        if loop is None or not isinstance(event, DocumentsChanged) or loop.is_closed():
            return
        wanted = self._wanted
        touched = {p for p in (*event.changed, *event.removed, *event.added) if p in wanted} if wanted else set()
        listed = bool(event.added or event.removed) and self._lists
        if not touched and not listed:
            return
        try:
            loop.call_soon_threadsafe(self._gather, touched, listed)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _gather(self, touched: set[str], listed: bool) -> None:
        self._updated |= {uri_of(p) for p in touched}
        self._list_changed |= listed
        if self._flush is None and self.loop is not None:
            self._flush = self.loop.call_later(COALESCE_SECONDS, lambda: asyncio.ensure_future(self.flush()))

    async def flush(self) -> None:
        """Send what was gathered: updated to the notes' subscribers, list_changed to listing sessions."""
        self._flush = None
        updated, self._updated = self._updated, set()
        listed, self._list_changed = self._list_changed, False
        sent: list[tuple[str, str | None]] = []
        for conn, uris in list(self.notes.items()):
            for uri in sorted(uris & updated):
                await conn.send_resource_updated(uri)
                sent.append(("updated", uri))
        if listed:
            for conn in list(self.listeners):
                await conn.send_resource_list_changed()
                sent.append(("list_changed", None))
        from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated

        bus = sdk.subscription_bus(self.server)
        if bus is not None:
            for uri in sorted(updated):
                await bus.publish(ResourceUpdated(uri=uri))
            if listed:
                await bus.publish(ResourcesListChanged())
        self.sent = (self.sent + sent)[-200:]


def register(server: Any, vault: Any) -> Subscriptions:
    """Serve the vault's notes as resources on `server` (see module doc); the subscriptions."""
    subs = Subscriptions(server)
    vault.bus.subscribe(subs.on_event)

    loading_answered: list[bool] = []  # a listing answered "still loading" (its session hears list_changed)

    def index_ready(event: Any) -> None:
        """The first index is ready: whoever listed while it loaded (and got no resources) hears list_changed."""
        loop = subs.loop
        if isinstance(event, IndexReady) and loading_answered and loop is not None and not loop.is_closed():
            loading_answered.clear()
            try:
                loop.call_soon_threadsafe(subs._gather, set(), True)
            except RuntimeError:  # the loop closed meanwhile
                pass

    vault.bus.subscribe(index_ready)
    server.middleware.insert(0, subs.middleware)
    sdk.announce_resource_list_changes(server)

    def page(cursor: str | None) -> ListResourcesResult:
        if cursor == LOADING_CURSOR:
            cursor = None
        if index_freshness(vault).get("index_loading"):  # waited its bound: come back, and hear list_changed
            loading_answered.append(True)
            return ListResourcesResult(
                resources=[], next_cursor=LOADING_CURSOR, _meta={**LIST_TEXT, "index_loading": True}
            )
        res = vault.list(Query(include_attachments=True, limit=RESOURCE_PAGE, cursor=cursor))
        rows = [
            Resource(
                uri=uri_of(e.path),
                name=e.path,
                title=e.title,
                size=e.size_bytes,
                mime_type=NOTE_MIME if e.kind == NOTE else (e.mime_type or "application/octet-stream"),
            )
            for e in res.entries
        ]
        return ListResourcesResult(resources=rows, next_cursor=res.next_cursor, _meta=LIST_TEXT)

    async def list_resources(ctx: Any, params: PaginatedRequestParams) -> ListResourcesResult:
        subs.seen(ctx)
        try:
            return await anyio.to_thread.run_sync(page, params.cursor)
        except VaultError as exc:
            raise MCPError(INVALID_PARAMS, exc.message) from None

    async def list_templates(ctx: Any, params: PaginatedRequestParams) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(
            resource_templates=[
                ResourceTemplate(
                    uri_template=TEMPLATE,
                    name="note",
                    title="Vault note",
                    description="A note or attachment by its vault-relative path, e.g. vault://note/Projects/Plan.md",
                    mime_type=NOTE_MIME,
                )
            ]
        )

    def read(uri: str) -> ReadResourceResult:
        path = path_of(uri)
        try:
            entry = vault.entry(path)
            if entry.kind not in (NOTE, ATTACHMENT):
                raise NotFoundError(f"{entry.path!r} is a folder: resources are notes and attachments")
            # opened as the read tool opens it: beneath the vault's descriptor, a regular file, not hard-linked
            data, _st = note_bytes(vault.root_real, entry.path, limit=budget.HARD_ANSWER_BYTES + 1)
        except NotFoundError as exc:
            raise MCPError(NOT_FOUND, exc.message, {"uri": uri}) from None
        except VaultError as exc:
            raise MCPError(INVALID_PARAMS, exc.message, {"uri": uri}) from None
        except OSError as exc:
            raise MCPError(NOT_FOUND, f"cannot read {path!r}: {exc.strerror or exc}", {"uri": uri}) from None
        if len(data) > budget.HARD_ANSWER_BYTES:
            raise MCPError(
                INVALID_PARAMS,
                budget.over_cap(len(data), "read it in parts with the read tool (offset, lines or section)"),
                {"uri": uri},
            )
        if entry.kind == NOTE:
            text = data.decode("utf-8", "replace")
            return ReadResourceResult(
                contents=[TextResourceContents(uri=uri, text=text, mime_type=NOTE_MIME)], _meta=NOTE_TEXT
            )
        return ReadResourceResult(
            contents=[
                BlobResourceContents(
                    uri=uri,
                    blob=base64.b64encode(data).decode(),
                    mime_type=entry.mime_type or "application/octet-stream",
                )
            ]
        )

    async def read_resource(ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        subs.seen(ctx)
        return await anyio.to_thread.run_sync(read, str(params.uri))

    sdk.set_request_handler(server, "resources/list", PaginatedRequestParams, list_resources)
    sdk.set_request_handler(server, "resources/templates/list", PaginatedRequestParams, list_templates)
    sdk.set_request_handler(server, "resources/read", ReadResourceRequestParams, read_resource)

    async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        subs.subscribe(ctx, str(params.uri), True)
        return EmptyResult()

    async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        subs.subscribe(ctx, str(params.uri), False)
        return EmptyResult()

    sdk.set_request_handler(server, "resources/subscribe", SubscribeRequestParams, subscribe)
    sdk.set_request_handler(server, "resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
    return subs
