"""Tool answers as plain data, without the MCP SDK: what a listing says, and its wire form.

results.py turns an `Answer` into the SDK's CallToolResult; the stdio front (earlycalls.py)
puts the same Answer on the wire itself while the SDK is still importing (~0.9 s), shaped
by `wire_result` exactly as the server's fast path shapes it (server.VaultMCPServer._wire),
so both ways give the client the same bytes (tests/mcp_server/test_early_calls.py compares
them through a spawned server).

The text content carries the same data once more for clients that read only text, rendered
cheaper than a second copy of the JSON: compact JSON in which every list of rows (objects) is
a table, `{"columns": [keys...], "rows": [[values...], ...]}` (a key a row lacks is null).
Keys are said once per list instead of once per row: a listing row's text drops from ~240 to
~140 bytes (bench/bench_answer_sizes.py). The server's instructions say so once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from vaultwatch.core.clock import Clock
from vaultwatch.core.model import NOTE
from vaultwatch.core.query.listing import Query, QueryResult, cursor_after
from vaultwatch.core.serialize import RowCache, entry_json

from . import budget
from .activity import current_call


@dataclass(frozen=True)
class Answer:
    """One tool answer: its text content, structured content and `_meta`, or an error (text only)."""

    text: str
    structured: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    is_error: bool = False
    links: tuple[dict[str, Any], ...] = ()  # resource_link content blocks after the text (`note_link`)


NOTE_SCHEME = "vault://note/"  # resources.py serves it (resources.uri_of makes the same URIs)


def note_link(entry: Any) -> dict[str, Any]:
    """A resource_link content block for a listed or found note or attachment, so a host can open or attach
    it (resources/read serves its URI). Keys in the order the SDK writes a ResourceLink (the early answers
    must be byte-identical); no title: titles are note text, and the text content carries them."""
    mime = "text/markdown" if entry.kind == NOTE else (entry.mime_type or "application/octet-stream")
    return {
        "name": entry.path,
        "uri": NOTE_SCHEME + quote(entry.path, safe="/"),
        "mimeType": mime,
        "type": "resource_link",
    }


def link_bytes(link: dict[str, Any]) -> int:
    """What one resource_link block adds to a message (its JSON and a comma)."""
    return len(budget.encoded(link)) + 1


def failure(message: str) -> Answer:
    """A tool error whose text is `Error: <message>`."""
    return Answer(message if message.startswith("Error: ") else f"Error: {message}", is_error=True)


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


@dataclass
class Page:
    """One listing page cut to its budget (`listing_page`), ready to be written either way."""

    entries: Any  # the page's Entry records (a slice of QueryResult.entries)
    rows: list[bytes]  # each row's JSON (RowCache)
    values: list[bytes]  # each row's values as JSON (the text's table rows)
    escaped: list[bytes]  # those escaped for a JSON string (only when asked for)
    head: str  # the text up to the first row
    close: bytes  # the text's close after the rows
    tail: str  # the text's fields after the rows, closing brace included
    rest: dict[str, Any]  # the structured fields beside "result"
    links: tuple[dict[str, Any], ...]  # a resource_link block for each row


def listing_page(
    cache: RowCache,
    res: QueryResult,
    q: Query,
    clock: Clock,
    rest: dict[str, Any],
    *,
    budget_bytes: int,
    explicit: bool,
    frontmatter: bool = False,
    escape: bool = False,
) -> Page | str:
    """The page a listing answer carries (results.listing says how it is cut), or the error text
    when a page the caller sized would pass the hard cap. Tells the activity layer what it listed."""
    entries = res.entries
    rows = cache.rows(entries, clock, res.is_bundle, frontmatter=frontmatter)
    columns, values, escaped = _table_rows(rows, escape)
    links = tuple(note_link(e) for e in entries)
    sizes = [len(r) for r in rows]
    n = budget.fit(sizes, budget.HARD_ANSWER_BYTES)
    if explicit and n < len(rows) or sizes and sizes[0] > budget.HARD_ANSWER_BYTES:
        size = sum(sizes) + len(sizes) + budget.TAIL_BYTES
        hint = (
            f"pass limit={n} or less and follow next_cursor"
            if n > 1
            else "its first row alone is too big: leave out include_frontmatter, or narrow the listing"
        )
        return budget.over_cap(size, hint)
    if not explicit:
        whole = [
            len(r) + budget.escaped_len(v) + 1 + link_bytes(k) for r, v, k in zip(rows, values, links, strict=True)
        ]
        n = min(n, budget.fit_message(whole, budget_bytes))
    if n < len(rows):
        entries, rows, values, escaped, links = entries[:n], rows[:n], values[:n], escaped[:n], links[:n]
        rest = {**rest, "returned": n, "next_cursor": cursor_after(q, entries[-1], clock)}
    current_call().listed([e.path for e in entries])
    tail = as_json(rest)
    tail = "," + tail[1:] if len(tail) > 2 else "}"
    head, close = ('{"result":{"columns":' + as_json(columns) + ',"rows":[', b"]}") if rows else ('{"result":[', b"]")
    return Page(entries, rows, values, escaped, head, close, tail, rest, links)


def listing_answer(
    cache: RowCache,
    res: QueryResult,
    q: Query,
    clock: Clock,
    rest: dict[str, Any],
    *,
    budget_bytes: int,
    explicit: bool,
    frontmatter: bool = False,
    meta: dict[str, Any] | None = None,
) -> Answer:
    """A listing answer, `{"result": [entry_json rows...], **rest}`, its text a table (module doc)."""
    page = listing_page(
        cache, res, q, clock, rest, budget_bytes=budget_bytes, explicit=explicit, frontmatter=frontmatter
    )
    if isinstance(page, str):
        return failure(page)
    text = b"".join((page.head.encode(), b",".join(page.values), page.close, page.tail.encode()))
    rows_out = [entry_json(e, clock, res.is_bundle, frontmatter=frontmatter) for e in page.entries]
    return Answer(text.decode("utf-8", "surrogatepass"), {"result": rows_out, **page.rest}, meta, links=page.links)


def _plain_json(value: Any) -> bool:
    """Whether `value` holds only str, int, bool, None, lists and str-keyed dicts: the values json.dumps and
    pydantic-core write alike (they differ on floats, and only pydantic-core writes other types)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is list:
        return all(_plain_json(v) for v in value)
    if kind is dict:
        return all(type(k) is str and _plain_json(v) for k, v in value.items())
    return False


def wire_json(result: dict[str, Any]) -> str:
    """A wire result as JSON text, exactly as the SDK writes a JSON-RPC `result` (pydantic-core's
    to_json, infinities and NaN as null): by json.dumps when the two agree (`_plain_json`: a listing
    without floats), which spares the stdio front pydantic-core's import (~0.1 s) before a first answer."""
    if _plain_json(result):
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    import pydantic_core

    return pydantic_core.to_json(result, inf_nan_mode="null").decode("utf-8")


def wire_result(answer: Answer) -> dict[str, Any]:
    """The wire form of `answer` in a handshake-era session, as the server's fast path shapes a
    CallToolResult (server.VaultMCPServer._wire: content blocks, isError, structuredContent, _meta)."""
    out: dict[str, Any] = {
        "content": [{"type": "text", "text": answer.text}, *answer.links],
        "isError": answer.is_error,
    }
    if answer.structured is not None:
        out["structuredContent"] = answer.structured
    if answer.meta:
        out["_meta"] = dict(answer.meta)
    return out
