"""Building tool results: structured content plus its JSON text, and errors an agent can act on."""
from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mcp_types import CallToolResult, TextContent, ToolAnnotations

from core.clock import Clock
from core.errors import VaultError
from core.model import Entry
from core.serialize import RowCache, entry_json

from . import splice

log = logging.getLogger("vaultwatch.mcp")
F = TypeVar("F", bound=Callable[..., Any])

READ_ONLY = dict(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def read_only(title: str) -> ToolAnnotations:
    """Annotations of a read tool: read-only, idempotent, not destructive, closed world."""
    return ToolAnnotations(title=title, **READ_ONLY)


def as_json(data: Any) -> str:
    """Compact JSON text for a text content block."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def ok(structured: dict[str, Any], *, text: str | None = None, meta: dict[str, Any] | None = None) -> CallToolResult:
    """A successful result: structured content, and the same data as JSON text (or `text`)."""
    return CallToolResult(content=[TextContent(type="text", text=as_json(structured) if text is None else text)],
                          structured_content=structured, _meta=meta)


def listing(cache: RowCache, entries: Sequence[Entry], clock: Clock, bundle: bool, rest: dict[str, Any], *,
            frontmatter: bool = False, meta: dict[str, Any] | None = None) -> CallToolResult:
    """A listing result, `{"result": [entry_json rows...], **rest}`, from rows `cache` keeps as JSON text.

    The text content is those rows joined (never dumped again). On the socket, the rows and the
    text go onto the wire as they are (splice.py); elsewhere the structured rows are built.
    """
    tail = as_json(rest)
    tail = "," + tail[1:] if len(tail) > 2 else "}"
    if splice.active():
        rows, escaped = cache.rows_escaped(entries, clock, bundle, frontmatter=frontmatter)
        # the text content as a JSON string: the same listing, quotes and backslashes escaped
        text = splice.put(b'"{\\"result\\":[', b",".join(escaped), b"]", as_json(tail)[1:-1].encode(), b'"')
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content={"result": splice.put(b"[", b",".join(rows), b"]"), **rest},
                              _meta=meta)
    text = b"".join((b'{"result":[', b",".join(cache.rows(entries, clock, bundle, frontmatter=frontmatter)), b"]",
                     tail.encode())).decode()
    rows_out = [entry_json(e, clock, bundle, frontmatter=frontmatter) for e in entries]
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content={"result": rows_out, **rest}, _meta=meta)


def fail(message: str) -> CallToolResult:
    """A tool error (is_error) whose text is `Error: <message>`."""
    text = message if message.startswith("Error: ") else f"Error: {message}"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def vault_errors(fn: F) -> F:
    """Turn core's VaultError (and ValueError from argument parsing) into `fail(...)` results."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except VaultError as exc:
            return fail(exc.message)
        except ValueError as exc:
            return fail(str(exc))
    return wrapper  # type: ignore[return-value]
