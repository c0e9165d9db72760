"""Vault notes (and attachments) as MCP resources, so a person can attach one in a client's UI.

- `resources/templates/list`: one template, `vault://note/{+path}` (the vault-relative path,
  percent-encoded per segment);
- `resources/list`: every indexed note and attachment, in path order, a page of RESOURCE_PAGE
  at a time with `nextCursor` (the listing's own cursor, so each appears exactly once);
- `resources/read`: the file's bytes as they are on disk now (a note as text/markdown, an
  attachment as a base64 blob); at most budget.HARD_ANSWER_BYTES; hidden or escaping paths
  are refused as the tools refuse them, an unknown one is -32002 (resource not found).

Subscriptions and list_changed are not offered (not advertised): the socket answers plain JSON,
with no stream for server-initiated notifications; clients read again instead.
"""
from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote, unquote

import anyio.to_thread
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    BlobResourceContents,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextResourceContents,
)

from core.errors import NotFoundError, VaultError
from core.model import ATTACHMENT, NOTE
from core.query.listing import Query

from . import budget, sdk

SCHEME = "vault://note/"
TEMPLATE = SCHEME + "{+path}"
RESOURCE_PAGE = 500
NOT_FOUND = -32002  # the spec's "resource not found"
NOTE_MIME = "text/markdown"


def uri_of(path: str) -> str:
    """The resource URI of a vault-relative path."""
    return SCHEME + quote(path, safe="/")


def path_of(uri: str) -> str:
    """The vault-relative path a resource URI names; MCPError for another scheme."""
    if not uri.startswith(SCHEME) or len(uri) == len(SCHEME):
        raise MCPError(INVALID_PARAMS, f"not a vaultwatch resource: {uri!r}; use {TEMPLATE} with a vault-relative "
                                       "path, as resources/list gives them")
    return unquote(uri[len(SCHEME):])


def register(server: Any, vault: Any) -> None:
    """Serve the vault's notes as resources on `server` (see module doc)."""

    def page(cursor: str | None) -> ListResourcesResult:
        res = vault.list(Query(include_attachments=True, limit=RESOURCE_PAGE, cursor=cursor))
        rows = [Resource(uri=uri_of(e.path), name=e.path, title=e.title, size=e.size_bytes,
                         mime_type=NOTE_MIME if e.kind == NOTE else (e.mime_type or "application/octet-stream"))
                for e in res.entries]
        return ListResourcesResult(resources=rows, next_cursor=res.next_cursor)

    async def list_resources(ctx: Any, params: PaginatedRequestParams) -> ListResourcesResult:
        try:
            return await anyio.to_thread.run_sync(page, params.cursor)
        except VaultError as exc:
            raise MCPError(INVALID_PARAMS, exc.message) from None

    async def list_templates(ctx: Any, params: PaginatedRequestParams) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(resource_templates=[ResourceTemplate(
            uri_template=TEMPLATE, name="note", title="Vault note",
            description="A note or attachment by its vault-relative path, e.g. vault://note/Projects/Plan.md",
            mime_type=NOTE_MIME)])

    def read(uri: str) -> ReadResourceResult:
        path = path_of(uri)
        try:
            entry = vault.entry(path)
            if entry.kind not in (NOTE, ATTACHMENT):
                raise NotFoundError(f"{entry.path!r} is a folder: resources are notes and attachments")
            real = vault.disk_path(entry.path)
            with open(real, "rb") as fh:
                data = fh.read(budget.HARD_ANSWER_BYTES + 1)
        except NotFoundError as exc:
            raise MCPError(NOT_FOUND, exc.message, {"uri": uri}) from None
        except VaultError as exc:
            raise MCPError(INVALID_PARAMS, exc.message, {"uri": uri}) from None
        except OSError as exc:
            raise MCPError(NOT_FOUND, f"cannot read {path!r}: {exc.strerror or exc}", {"uri": uri}) from None
        if len(data) > budget.HARD_ANSWER_BYTES:
            raise MCPError(INVALID_PARAMS, budget.over_cap(len(data), "read it in parts with the read tool "
                                                                      "(offset, lines or section)"), {"uri": uri})
        if entry.kind == NOTE:
            text = data.decode("utf-8", "replace")
            return ReadResourceResult(contents=[TextResourceContents(uri=uri, text=text, mime_type=NOTE_MIME)])
        return ReadResourceResult(contents=[BlobResourceContents(
            uri=uri, blob=base64.b64encode(data).decode(), mime_type=entry.mime_type or "application/octet-stream")])

    async def read_resource(ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        return await anyio.to_thread.run_sync(read, str(params.uri))

    sdk.set_request_handler(server, "resources/list", PaginatedRequestParams, list_resources)
    sdk.set_request_handler(server, "resources/templates/list", PaginatedRequestParams, list_templates)
    sdk.set_request_handler(server, "resources/read", ReadResourceRequestParams, read_resource)
