"""Building tool results: structured content plus its JSON text, and errors an agent can act on."""
from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from mcp_types import CallToolResult, TextContent, ToolAnnotations

from core.errors import VaultError

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
