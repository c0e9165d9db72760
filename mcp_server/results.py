"""Building tool results: structured content plus its JSON text, and errors an agent can act on."""
from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from mcp_types import CallToolResult, TextContent, ToolAnnotations

from core.clock import Clock
from core.errors import VaultError
from core.query.listing import Query, QueryResult, cursor_after
from core.serialize import RowCache, entry_json

from . import budget, splice
from .activity import current_call

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
    """A successful result: structured content, and the same data as compact JSON text (or `text`).

    An answer whose text would pass budget.HARD_ANSWER_BYTES is refused with an error saying so.
    """
    text = as_json(structured) if text is None else text
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > budget.HARD_ANSWER_BYTES:
        return fail(budget.over_cap(size, "ask for less (a smaller limit or max_chars, a narrower folder or "
                                          "pattern) and page with the cursor or offset"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured, _meta=meta)


def listing(cache: RowCache, res: QueryResult, q: Query, clock: Clock, rest: dict[str, Any], *,
            budget_bytes: int, explicit: bool, frontmatter: bool = False,
            meta: dict[str, Any] | None = None) -> CallToolResult:
    """A listing result, `{"result": [entry_json rows...], **rest}`, from rows `cache` keeps as JSON text.

    The page is cut to `budget_bytes` of text when the caller did not choose its size
    (`explicit` False): `returned` and `next_cursor` then say where the rest starts, so every
    row stays reachable, in order, exactly once. A page the caller sized (`limit`) may use up
    to the hard cap; past it the answer is an error naming a limit that fits.

    The text content is those rows joined (never dumped again). On the socket, the rows and the
    text go onto the wire as they are (splice.py); elsewhere the structured rows are built.
    """
    entries = res.entries
    spliced = splice.active()
    if spliced:
        rows, escaped = cache.rows_escaped(entries, clock, res.is_bundle, frontmatter=frontmatter)
    else:
        rows, escaped = cache.rows(entries, clock, res.is_bundle, frontmatter=frontmatter), []
    cap = budget.HARD_ANSWER_BYTES if explicit else budget_bytes
    sizes = [len(r) for r in rows]
    n = budget.fit(sizes, cap)
    if explicit and n < len(rows) or sizes and sizes[0] > budget.HARD_ANSWER_BYTES:
        size = sum(sizes) + len(sizes) + budget.TAIL_BYTES
        hint = (f"pass limit={n} or less and follow next_cursor" if n > 1 and sizes[0] <= cap else
                "its first row alone is too big: leave out include_frontmatter, or narrow the listing")
        return fail(budget.over_cap(size, hint))
    if n < len(rows):
        entries, rows, escaped = entries[:n], rows[:n], escaped[:n]
        rest = {**rest, "returned": n, "next_cursor": cursor_after(q, entries[-1], clock)}
    current_call().listed([e.path for e in entries])
    tail = as_json(rest)
    tail = "," + tail[1:] if len(tail) > 2 else "}"
    if spliced:
        # the text content as a JSON string: the same listing, quotes and backslashes escaped
        text = splice.put(b'"{\\"result\\":[', b",".join(escaped), b"]", as_json(tail)[1:-1].encode(), b'"')
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content={"result": splice.put(b"[", b",".join(rows), b"]"), **rest},
                              _meta=meta)
    text = b"".join((b'{"result":[', b",".join(rows), b"]", tail.encode())).decode()
    rows_out = [entry_json(e, clock, res.is_bundle, frontmatter=frontmatter) for e in entries]
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content={"result": rows_out, **rest}, _meta=meta)


def page_rows(rows: list[dict[str, Any]], *, budget_bytes: int, explicit: bool) -> tuple[int, str | None]:
    """How many of `rows` (plain dicts) one answer carries: (count, None), or (0, error text) when
    a page the caller sized would pass the hard cap. See `listing`."""
    sizes = [len(as_json(r).encode("utf-8", "surrogatepass")) for r in rows]
    cap = budget.HARD_ANSWER_BYTES if explicit else budget_bytes
    n = budget.fit(sizes, cap)
    if explicit and n < len(rows) or sizes and sizes[0] > budget.HARD_ANSWER_BYTES:
        return 0, budget.over_cap(sum(sizes) + len(sizes) + budget.TAIL_BYTES,
                                  f"pass limit={n} or less and follow next_cursor")
    return n, None


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
