"""Building tool results: structured content plus its text, and errors an agent can act on.

The text content carries the same data once more for clients that read only text, rendered
cheaper than a second copy of the JSON: compact JSON in which every list of rows (objects) is
a table, `{"columns": [keys...], "rows": [[values...], ...]}` (a key a row lacks is null).
Keys are said once per list instead of once per row: a listing row's text drops from ~240 to
~140 bytes (bench/bench_answer_sizes.py). The server's instructions say so once.
"""
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

# destructiveHint and idempotentHint are "meaningful only when readOnlyHint == false" (MCP spec,
# ToolAnnotations): a read tool leaves them out (12 x ~46 bytes of the tool list)
READ_ONLY = dict(read_only_hint=True, open_world_hint=False)


def read_only(title: str) -> ToolAnnotations:
    """Annotations of a read tool: read-only, closed world."""
    return ToolAnnotations(title=title, **READ_ONLY)


def as_json(data: Any) -> str:
    """Compact JSON text for a text content block."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows (objects) as one table: the keys once, in first-seen order, then each row's values."""
    columns: dict[str, None] = {}
    for row in rows:
        for key in row:
            columns.setdefault(key)
    keys = list(columns)
    return {"columns": keys, "rows": [[row.get(k) for k in keys] for row in rows]}


def tabled(structured: dict[str, Any]) -> dict[str, Any]:
    """`structured` with every list of rows, at its top level, as a `table`: what the text says."""
    return {k: table(v) if _is_rows(v) else v for k, v in structured.items()}


def text_of(structured: dict[str, Any]) -> str:
    """The text content of a result (see module doc)."""
    return as_json(tabled(structured))


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def _json_bytes(value: Any) -> bytes:
    """Compact UTF-8 JSON as core.serialize.row_bytes writes it (a lone surrogate as its escape)."""
    return _encode(value).encode("utf-8", "backslashreplace")


_ROW_VALUES: dict[bytes, list[Any]] = {}  # a cached row's JSON -> [its keys, its values as JSON, escaped]
_ROW_VALUES_MAX = 50_000


def _values_of(row: bytes, escape: bool) -> list[Any]:
    """[keys, values JSON, values JSON escaped or None] of one listing row (RowCache's JSON), kept."""
    hit = _ROW_VALUES.get(row)
    if hit is None:
        doc = json.loads(row)
        hit = [tuple(doc), _json_bytes(list(doc.values())), None]
        if len(_ROW_VALUES) >= _ROW_VALUES_MAX:
            _ROW_VALUES.clear()
        _ROW_VALUES[row] = hit
    if escape and hit[2] is None:
        hit[2] = hit[1].replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    return hit


def _table_rows(rows: list[bytes], escape: bool) -> tuple[list[str], list[bytes], list[bytes]]:
    """Listing rows (JSON) as a table: its columns, each row's values (JSON), and those escaped."""
    hits = [_values_of(r, escape) for r in rows]
    keys = hits[0][0] if hits else ()
    if all(h[0] == keys for h in hits):
        return list(keys), [h[1] for h in hits], [h[2] for h in hits] if escape else []
    columns = table([dict.fromkeys(h[0]) for h in hits])["columns"]  # notes and attachments: the union
    values = [_json_bytes([doc.get(k) for k in columns]) for doc in map(json.loads, rows)]
    return columns, values, [v.replace(b"\\", b"\\\\").replace(b'"', b'\\"') for v in values] if escape else []


ASK_FOR_LESS = ("ask for less (a smaller limit or max_chars, a narrower folder or pattern) and page with the cursor "
                "or offset")


def ok(structured: dict[str, Any], *, text: str | None = None, meta: dict[str, Any] | None = None,
       too_big: str = ASK_FOR_LESS) -> CallToolResult:
    """A successful result: structured content, and the same data as its text (`text_of`, or `text`).

    An answer whose text or structured content would pass budget.HARD_ANSWER_BYTES is refused
    with an error saying so and what to do instead (`too_big`).
    """
    text = text_of(structured) if text is None else text
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > budget.HARD_ANSWER_BYTES // 8:  # the structured copy may be the bigger one: the cap is on both
        size = max(size, len(budget.encoded(structured)))
    if size > budget.HARD_ANSWER_BYTES:
        return fail(budget.over_cap(size, too_big))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured, _meta=meta)


def listing(cache: RowCache, res: QueryResult, q: Query, clock: Clock, rest: dict[str, Any], *,
            budget_bytes: int, explicit: bool, frontmatter: bool = False,
            meta: dict[str, Any] | None = None) -> CallToolResult:
    """A listing result, `{"result": [entry_json rows...], **rest}`, from rows `cache` keeps as JSON text.

    The page is cut to `budget_bytes` of text when the caller did not choose its size
    (`explicit` False): `returned` and `next_cursor` then say where the rest starts, so every
    row stays reachable, in order, exactly once. No page passes the hard cap in either copy
    (the structured rows are the bigger one); a page the caller sized past it is an error
    naming a limit that fits.

    The text content is the rows as a table (see module doc), its values joined from cached
    JSON, never dumped again. On the socket, the rows and the text go onto the wire as they are
    (splice.py); elsewhere the structured rows are built.
    """
    entries = res.entries
    spliced = splice.active()
    rows = cache.rows(entries, clock, res.is_bundle, frontmatter=frontmatter)
    columns, values, escaped = _table_rows(rows, spliced)
    sizes = [len(r) for r in rows]
    n = budget.fit(sizes, budget.HARD_ANSWER_BYTES)
    if explicit and n < len(rows) or sizes and sizes[0] > budget.HARD_ANSWER_BYTES:
        size = sum(sizes) + len(sizes) + budget.TAIL_BYTES
        hint = (f"pass limit={n} or less and follow next_cursor" if n > 1 else
                "its first row alone is too big: leave out include_frontmatter, or narrow the listing")
        return fail(budget.over_cap(size, hint))
    if not explicit:
        n = min(n, budget.fit([len(v) for v in values], budget_bytes))
    if n < len(rows):
        entries, rows, values, escaped = entries[:n], rows[:n], values[:n], escaped[:n]
        rest = {**rest, "returned": n, "next_cursor": cursor_after(q, entries[-1], clock)}
    current_call().listed([e.path for e in entries])
    tail = as_json(rest)
    tail = "," + tail[1:] if len(tail) > 2 else "}"
    head, close = ('{"result":{"columns":' + as_json(columns) + ',"rows":[', b"]}") if rows else ('{"result":[', b"]")
    if spliced:
        # the text content as a JSON string: the same listing, quotes and backslashes escaped
        text = splice.put(b'"', as_json(head)[1:-1].encode(), b",".join(escaped), close, as_json(tail)[1:-1].encode(),
                          b'"')
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content={"result": splice.put(b"[", b",".join(rows), b"]"), **rest},
                              _meta=meta)
    text = b"".join((head.encode(), b",".join(values), close, tail.encode())).decode("utf-8", "surrogatepass")
    rows_out = [entry_json(e, clock, res.is_bundle, frontmatter=frontmatter) for e in entries]
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content={"result": rows_out, **rest}, _meta=meta)


def page_rows(rows: list[dict[str, Any]], *, budget_bytes: int, explicit: bool) -> tuple[int, str | None]:
    """How many of `rows` (plain dicts) one answer carries: (count, None), or (0, error text) when
    a page the caller sized would pass the hard cap. See `listing`."""
    sizes = [len(budget.encoded(r)) for r in rows]
    n = budget.fit(sizes, budget.HARD_ANSWER_BYTES)
    if explicit and n < len(rows) or sizes and sizes[0] > budget.HARD_ANSWER_BYTES:
        return 0, budget.over_cap(sum(sizes) + len(sizes) + budget.TAIL_BYTES,
                                  f"pass limit={n} or less and follow next_cursor")
    if not explicit:
        n = min(n, budget.fit([len(budget.encoded(list(r.values()))) for r in rows], budget_bytes))
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
