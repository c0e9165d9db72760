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
MAX_PER_SESSION = 1000  # notes one session (or one listen stream) may follow
# a file path is at most 4096 bytes (PATH_MAX) and percent-encoding triples a byte at most
MAX_URI_CHARS = len(SCHEME) + 3 * 4096


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
    any thread, and the notifications go out on the server's event loop. The followers are indexed
    by vault path, so subscribing, unsubscribing, opening a listen stream and a change costs work in
    what that one request or change names, never in every subscription held (one agent's thousands
    cannot slow another's calls); each session follows at most MAX_PER_SESSION notes by URIs of at
    most MAX_URI_CHARS characters. `on_event` looks up only the paths a change names, so a burst of
    thousands of changes nobody subscribed to costs a dict lookup each.
    """

    def __init__(self, server: Any) -> None:
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self.notes: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self.listeners: weakref.WeakSet[Any] = weakref.WeakSet()
        self.listening: dict[int, tuple[bool, frozenset[str]]] = {}  # open subscriptions/listen streams
        # vault path -> the sessions following it, each with the URIs it used (as it spelled them)
        self._followers: dict[str, weakref.WeakKeyDictionary[Any, set[str]]] = {}
        self._streamed: dict[str, int] = {}  # vault path -> how many open listen streams follow it
        self._listing_streams = 0  # open listen streams that want list_changed
        self._updated: set[str] = set()
        self._list_changed = False
        self._flush: asyncio.TimerHandle | None = None
        self.sent: list[tuple[str, str | None]] = []  # the last notifications sent (diagnostics and tests)

    @property
    def _lists(self) -> bool:
        """Someone hears list_changed."""
        return bool(len(self.listeners)) or self._listing_streams > 0

    def followed(self, path: str) -> bool:
        """Whether a session or a listen stream follows the vault path `path`."""
        return path in self._followers or path in self._streamed

    async def middleware(self, ctx: Any, call_next: Any) -> Any:
        """Server middleware: learn the server's event loop, and what 2026-07-28 listen streams follow."""
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        if ctx.method != "subscriptions/listen":
            return await call_next(ctx)
        params: dict[str, Any] = ctx.params if isinstance(ctx.params, dict) else {}
        found = params.get("notifications")
        wanted: dict[str, Any] = found if isinstance(found, dict) else {}
        uris = [u for u in (wanted.get("resourceSubscriptions") or ()) if isinstance(u, str)]
        if len(uris) > MAX_PER_SESSION:
            raise MCPError(INVALID_PARAMS, _too_many(len(uris), "a listen stream names"))
        # every URI is measured; other servers' URIs are not ours to follow
        paths = {
            _checked_path(u) for u in uris if len(u) > MAX_URI_CHARS or len(u) > len(SCHEME) and u.startswith(SCHEME)
        }
        lists = bool(wanted.get("resourcesListChanged"))
        key = id(ctx)
        self.listening[key] = (lists, frozenset(uris))
        for p in paths:
            self._streamed[p] = self._streamed.get(p, 0) + 1
        self._listing_streams += lists
        try:
            return await call_next(ctx)
        finally:
            self.listening.pop(key, None)
            self._listing_streams -= lists
            for p in paths:
                left = self._streamed.get(p, 1) - 1
                if left > 0:
                    self._streamed[p] = left
                else:
                    self._streamed.pop(p, None)

    def seen(self, ctx: Any) -> Any:
        """Note the session of a resources request (it hears list_changed from now on); its connection."""
        self.loop = asyncio.get_running_loop()
        conn = sdk.connection(ctx.session)
        if conn is not None and conn not in self.listeners:
            self.listeners.add(conn)
        return conn

    def subscribe(self, ctx: Any, uri: str, on: bool) -> None:
        path = _checked_path(uri)  # refuses what is not a vault resource, and an oversized URI
        conn = self.seen(ctx)
        if conn is None:
            return
        uris = self.notes.get(conn)
        if uris is None:
            uris = self.notes[conn] = set()
            # the session's end forgets what it followed (work in its own subscriptions only)
            weakref.finalize(conn, self._session_gone, uris)
        if on:
            if uri in uris:
                return
            if len(uris) >= MAX_PER_SESSION:
                raise MCPError(INVALID_PARAMS, _too_many(len(uris) + 1, "this session would follow"))
            uris.add(uri)
            self._followers.setdefault(path, weakref.WeakKeyDictionary()).setdefault(conn, set()).add(uri)
        elif uri in uris:
            uris.discard(uri)
            by_conn = self._followers.get(path)
            if by_conn is not None:
                mine = by_conn.get(conn)
                if mine is not None:
                    mine.discard(uri)
                    if not mine:
                        del by_conn[conn]
                if not by_conn:
                    del self._followers[path]

    def _session_gone(self, uris: set[str]) -> None:
        """A session ended (called by its finalizer, from any thread): drop the paths only it followed."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._prune, frozenset(uris))
                return
            except RuntimeError:  # the loop closed meanwhile
                pass
        self._prune(frozenset(uris))

    def _prune(self, uris: frozenset[str]) -> None:
        for uri in uris:
            path = path_of(uri)
            by_conn = self._followers.get(path)
            if by_conn is not None and not by_conn:
                del self._followers[path]

    def on_event(self, event: Any) -> None:
        """From the vault's bus (any thread): gather a change someone follows, flush it shortly on the loop."""
        loop = self.loop
        if loop is None or not isinstance(event, DocumentsChanged) or loop.is_closed():
            return
        touched = {p for p in (*event.changed, *event.removed, *event.added) if self.followed(p)}
        listed = bool(event.added or event.removed) and self._lists
        if not touched and not listed:
            return
        try:
            loop.call_soon_threadsafe(self._gather, touched, listed)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _gather(self, touched: set[str], listed: bool) -> None:
        self._updated |= touched
        self._list_changed |= listed
        if self._flush is None and self.loop is not None:
            self._flush = self.loop.call_later(COALESCE_SECONDS, lambda: asyncio.ensure_future(self.flush()))

    async def flush(self) -> None:
        """Send what was gathered: updated to the notes' subscribers, list_changed to listing sessions."""
        self._flush = None
        updated, self._updated = self._updated, set()
        listed, self._list_changed = self._list_changed, False
        sent: list[tuple[str, str | None]] = []
        for path in sorted(updated):
            by_conn = self._followers.get(path)
            for conn, uris in list(by_conn.items()) if by_conn is not None else ():
                for uri in sorted(uris):
                    await conn.send_resource_updated(uri)
                    sent.append(("updated", uri))
        if listed:
            for conn in list(self.listeners):
                await conn.send_resource_list_changed()
                sent.append(("list_changed", None))
        from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated

        bus = sdk.subscription_bus(self.server)
        if bus is not None:
            for path in sorted(updated):
                await bus.publish(ResourceUpdated(uri=uri_of(path)))
            if listed:
                await bus.publish(ResourcesListChanged())
        self.sent = (self.sent + sent)[-200:]


def _too_many(count: int, what: str) -> str:
    return (
        f"{what} {count} resources; one session may follow at most {MAX_PER_SESSION}: "
        "unsubscribe (resources/unsubscribe) from notes you no longer need first"
    )


def _checked_path(uri: str) -> str:
    """The vault path of a URI to follow: MCPError for an oversized URI (before any work on it) or
    one that is not a vault resource."""
    if len(uri) > MAX_URI_CHARS:
        raise MCPError(
            INVALID_PARAMS,
            f"resource URI of {len(uri)} characters; at most {MAX_URI_CHARS} (any vault path fits): "
            "use the URI resources/list gives for the note",
        )
    return path_of(uri)


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
