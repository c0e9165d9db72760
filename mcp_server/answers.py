"""Tool answers as plain data, without the MCP SDK: what a listing says, and its wire form.

results.py turns an `Answer` into the SDK's CallToolResult; the stdio front (earlycalls.py)
puts the same Answer on the wire itself (plain reads and listings, before the SDK is imported
and once it runs), shaped by `wire_result` exactly as the server's fast path shapes it
(server.VaultMCPServer._wire), so both ways give the client the same bytes
(tests/mcp_server/test_early_calls.py and test_front_calls.py compare them through spawned servers).

The text content carries the same data once more for clients that read only text, rendered
cheaper than a second copy of the JSON: compact JSON in which every list of rows (objects) is
a table, `{"columns": [keys...], "rows": [[values...], ...]}` (a key a row lacks is null).
Keys are said once per list instead of once per row: a listing row's text drops from ~240 to
~140 bytes (bench/bench_answer_sizes.py). The server's instructions say so once.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import encode_basestring
from operator import attrgetter
from typing import Any
from urllib.parse import quote

from vaultwatch.core.clock import Clock
from vaultwatch.core.model import NOTE
from vaultwatch.core.query.listing import Query, QueryResult, cursor_after
from vaultwatch.core.serialize import RowCache, entry_json, json_bytes, row_shape

from . import budget, splice
from .activity import current_call
from .handshake import SERVER_INFO_META as MODERN_SERVER_INFO


@dataclass(frozen=True)
class Answer:
    """One tool answer: its text content, structured content and `_meta`, or an error (text only)."""

    text: str
    structured: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    is_error: bool = False
    # resource_link content blocks after the text (`note_link`); a spliced listing's are one placeholder
    # (splice.put) for all of them, filled with their JSON on the way out
    links: tuple[dict[str, Any] | str, ...] = ()


NOTE_SCHEME = "vault://note/"  # resources.py serves it (resources.uri_of makes the same URIs)
# a path of only the characters quote(path, safe="/") keeps, and spaces: its URI is the path, spaces as %20
# (most paths: quote walks a path a byte at a time, once per row of every page)
_URI_PLAIN = re.compile(r"[A-Za-z0-9_.~/ -]*")


def note_link(entry: Any) -> dict[str, Any]:
    """A resource_link content block for a listed or found note or attachment, so a host can open or attach
    it (resources/read serves its URI). Keys in the order the SDK writes a ResourceLink (the early answers
    must be byte-identical); no title: titles are note text, and the text content carries them."""
    path = entry.path
    return {"name": path, "uri": _note_uri(path), "mimeType": _note_mime(entry), "type": "resource_link"}


def _note_uri(path: str) -> str:
    return NOTE_SCHEME + (path.replace(" ", "%20") if _URI_PLAIN.fullmatch(path) else quote(path, safe="/"))


def _note_mime(entry: Any) -> str:
    return "text/markdown" if entry.kind == NOTE else (entry.mime_type or "application/octet-stream")


# The form of `note_link_json`'s bytes, kept beside a row in the entry cache (readcalls.row_cache) and
# served again only while it is this one: a change to what note_link_json writes must change it
# (tests/mcp_server/test_kept_rows.py pins the bytes to it).
LINK_FORM = 1


def note_link_json(entry: Any) -> tuple[bytes, int]:
    """`note_link(entry)`'s block as the answer writes it (compact JSON) and `link_bytes` of it, written
    from its strings with no dict made and dumped: a listing makes one for every row it makes. (A name
    with a lone surrogate is never listed: core.disk.paths.)"""
    name, mime = encode_basestring(entry.path), encode_basestring(_note_mime(entry))
    uri = _note_uri(entry.path)  # ASCII, nothing JSON escapes: quote leaves no quote, backslash or control
    data = ('{"name":' + name + ',"uri":"' + uri + '","mimeType":' + mime + ',"type":"resource_link"}').encode()
    return data, len(data) + 1


def link_bytes(link: dict[str, Any]) -> int:
    """What one resource_link block adds to a message (its JSON and a comma)."""
    return len(budget.encoded(link)) + 1


def failure(message: str) -> Answer:
    """A tool error whose text is `Error: <message>`."""
    return Answer(message if message.startswith("Error: ") else f"Error: {message}", is_error=True)


ASK_FOR_LESS = (
    "ask for less (a smaller limit or max_chars, a narrower folder or pattern) and page with the cursor or offset"
)


def ok_answer(
    structured: dict[str, Any],
    *,
    text: str | None = None,
    meta: dict[str, Any] | None = None,
    too_big: str = ASK_FOR_LESS,
    links: Any = (),
) -> Answer:
    """A successful answer: structured content, and the same data as its text (`text_of`, or `text`).

    An answer whose text or structured content would pass budget.HARD_ANSWER_BYTES is refused
    with an error saying so and what to do instead (`too_big`).
    """
    text = text_of(structured) if text is None else text
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > budget.HARD_ANSWER_BYTES // 8:  # the structured copy may be the bigger one: the cap is on both
        size = max(size, len(budget.encoded(structured)))
    if size > budget.HARD_ANSWER_BYTES:
        return failure(budget.over_cap(size, too_big))
    return Answer(text, structured, meta, links=tuple(links))


def page_rows(
    rows: list[dict[str, Any]], *, budget_bytes: int, explicit: bool, extra: list[int] | None = None
) -> tuple[int, str | None]:
    """How many of `rows` (plain dicts) one answer carries: (count, None), or (0, error text) when
    a page the caller sized would pass the hard cap. `extra`: more bytes each row brings to the message
    (its resource_link block). See results.listing."""
    raws = [budget.encoded(r) for r in rows]  # each row encoded once: both measures are taken from it
    sizes = [len(raw) for raw in raws]
    n = budget.fit(sizes, budget.HARD_ANSWER_BYTES)
    if explicit and n < len(rows) or sizes and sizes[0] > budget.HARD_ANSWER_BYTES:
        return 0, budget.over_cap(
            sum(sizes) + len(sizes) + budget.TAIL_BYTES, f"pass limit={n} or less and follow next_cursor"
        )
    if not explicit:
        whole = [budget.row_share(raw, r) for raw, r in zip(raws, rows, strict=True)]
        if extra is not None:
            whole = [w + x for w, x in zip(whole, extra, strict=True)]
        n = min(n, budget.fit_message(whole, budget_bytes))
    return n, None


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


class _Cell:
    """What a listing page needs of one row beyond its JSON: its keys, its resource_link block and that
    block's size, its table row (the row's values as JSON, answers.table) and the row's whole share of a
    message (budget.row_bytes with the link). Made once per row from what RowCache made the row of
    (`RowCache.rows_with`), and kept beside it: a page's cost is then its own rows', cached or not,
    never a parse of each row back.

    A page's columns are nearly always the row's own keys (`own`), or those followed by other rows' keys
    (a note with broken YAML among others): that table row is the own one with nulls appended, made when
    asked. Only a table row of columns in another order is kept (`others`, made from the row's JSON).
    What is cheap to make again per page (the escaped form, the appended nulls) is not kept: the cache
    holds a cell for each of thousands of rows."""

    __slots__ = ("keys", "link_json", "link_size", "others", "own", "size")

    def __init__(self, entry: Any, keys: tuple[str, ...], data: bytes, values: bytes, kept: Any = None) -> None:
        self.size = len(data)
        self.keys = keys  # core's tuple for the row's shape: rows of one shape share it
        # the block as the answer writes it: a spliced page joins these, never dumping a dict per row (`kept`:
        # (LINK_FORM, the block) as the entry cache kept it beside the row, readcalls.row_cache)
        if type(kept) is tuple and len(kept) == 2 and kept[0] == LINK_FORM and type(kept[1]) is bytes:
            self.link_json, self.link_size = kept[1], len(kept[1]) + 1
        else:
            self.link_json, self.link_size = note_link_json(entry)
        self.own: tuple[bytes, int] = (values, self.size + budget.escaped_len(values) + 1 + self.link_size)
        self.others: dict[tuple[str, ...], tuple[bytes, int]] | None = None

    def table_row(self, row: bytes, columns: tuple[str, ...]) -> tuple[bytes, int]:
        """(values JSON, the whole share) of this row (its JSON: `row`) in a table of `columns`."""
        if columns == self.keys:
            return self.own
        n = len(self.keys)
        if columns[:n] == self.keys:  # the usual mix: other rows' keys come after this row's own
            values, share = self.own
            extra = len(columns) - n
            # each ",null" is 5 bytes, escaped or not
            return values[:-1] + b",null" * extra + b"]", share + 5 * extra
        others = self.others
        if others is None:
            others = self.others = {}
        hit = others.get(columns)
        if hit is None:
            doc = json.loads(row)  # once per row and column list: a page's columns rarely change
            values = json_bytes([doc.get(k) for k in columns])
            hit = others[columns] = (values, self.size + budget.escaped_len(values) + 1 + self.link_size)
        return hit


CHUNK = 128  # rows made at a time while a default page is cut to its budget (~110 rows at 64 KiB)
_SHAPE_FIELDS = attrgetter("kind", "frontmatter_error", "decode_error")  # what row_shape reads of an entry


def _escaped(values: bytes) -> bytes:
    """A table row escaped for the inside of a JSON string: compact JSON holds no control characters,
    so only backslashes and quotes need it."""
    return values.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


def _shape_firsts(entries: Any) -> list[Any]:
    """The first entry of each row shape (`row_shape`) among `entries`, in order of first appearance.

    A default page asks core for up to 1,000 entries and nearly every run of 1,000 holds a note with
    broken YAML, so this runs over 1,000 entries a page: in one C pass, never a Python step per entry.
    The fields a shape is made of, as they are (`_SHAPE_FIELDS`), take few distinct values in a run, and
    the first entry of each shape is the first entry of one of those values."""
    fields = list(map(_SHAPE_FIELDS, entries))
    # each distinct value's first position: walked from the end, an earlier position overwrites a later one
    # (a broken note's error text is its own, so a run holds tens of values: `fields.index` per value
    # would walk the run once each)
    first = dict(zip(reversed(fields), range(len(fields) - 1, -1, -1), strict=True))
    if len(first) == 1:  # one shape (the usual page of notes)
        return [entries[0]]
    firsts: dict[Any, Any] = {}
    for at in sorted(first.values()):
        firsts.setdefault(row_shape(entries[at]), entries[at])
    return list(firsts.values())


def _columns(cache: RowCache, entries: Any, clock: Clock, bundle: bool, frontmatter: bool) -> tuple[str, ...]:
    """The table's columns for `entries`: every key of their rows, in first-seen order (`table`), found
    from the first row of each row shape (rows of one shape have the same keys in the same order)."""
    if not entries:
        return ()
    _rows, cells = cache.rows_with(_shape_firsts(entries), clock, bundle, _Cell, frontmatter=frontmatter)
    if len(cells) == 1:
        keys: tuple[str, ...] = cells[0].keys
        return keys
    columns: dict[str, None] = {}
    for cell in cells:
        for key in cell.keys:
            columns.setdefault(key)
    return tuple(columns)


def warm_rows(
    cache: RowCache,
    res: QueryResult,
    clock: Clock,
    *,
    budget_bytes: int,
    explicit: bool,
    frontmatter: bool,
    stop: Callable[[], bool],
) -> int:
    """Make and keep in `cache` the rows `listing_page` would make for `res`, without a page: a listing walked
    through its cursor asks for this page next, and its rows are made while the client reads the page before.
    Made a chunk at a time, and no more once `stop()` says a call is waiting. Returns the rows looked at.
    (The few rows the page's columns are found from, `_columns`, are left to the page: nearly always a
    page before made them.)"""
    entries = res.entries
    bundle = res.is_bundle
    done = size = 0
    for at in range(0, len(entries), CHUNK):
        if stop():
            break
        rows, _cells = cache.rows_with(entries[at : at + CHUNK], clock, bundle, _Cell, frontmatter=frontmatter)
        done += len(rows)
        size += sum(map(len, rows))
        if not explicit and size >= budget_bytes:  # a default page holds fewer rows than these (each row's
            break  # share of the message is more than its JSON)
    return done


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
    links: tuple[dict[str, Any], ...]  # a resource_link block for each row (only when not escaped)
    link_json: list[bytes]  # each block's JSON (only when escaped: the page is spliced)


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
    when a page the caller sized would pass the hard cap. Tells the activity layer what it listed.

    The text's columns are those of every entry core returned (`q.limit` of them), but rows are made
    and measured only as far as the page goes: a default page asks core for more rows than its budget
    holds, and the budget cuts it."""
    entries = res.entries
    bundle = res.is_bundle
    columns = _columns(cache, entries, clock, bundle, frontmatter)
    rows: list[bytes]
    cells: list[_Cell]
    if explicit or not entries:
        rows, cells = cache.rows_with(entries, clock, bundle, _Cell, frontmatter=frontmatter)
    else:
        rows, cells = cache.rows_with(entries[:CHUNK], clock, bundle, _Cell, frontmatter=frontmatter)
        if len(rows[0]) > budget.HARD_ANSWER_BYTES:  # refused below, sized by every row
            rows, cells = cache.rows_with(entries, clock, bundle, _Cell, frontmatter=frontmatter)
    sizes = [len(r) for r in rows]
    if explicit or sizes and sizes[0] > budget.HARD_ANSWER_BYTES:
        n = budget.fit(sizes, budget.HARD_ANSWER_BYTES)
        if n < len(rows) or sizes and sizes[0] > budget.HARD_ANSWER_BYTES:
            size = sum(sizes) + len(sizes) + budget.TAIL_BYTES
            hint = (
                f"pass limit={n} or less and follow next_cursor"
                if n > 1
                else "its first row alone is too big: leave out include_frontmatter, or narrow the listing"
            )
            return budget.over_cap(size, hint)
        hits = [c.table_row(r, columns) for c, r in zip(cells, rows, strict=True)]
    else:
        # the rows' whole shares, made a chunk at a time until the budget is full: no default page passes
        # the hard cap before its budget (each share is more than the row's JSON, the budget less than the cap)
        measured: list[tuple[bytes, int]] = []  # the table rows sized so far, kept for the page

        def shares() -> Any:
            made, made_cells = rows, cells
            for at in range(0, len(entries), CHUNK):
                if at:
                    chunk = entries[at : at + CHUNK]
                    made, made_cells = cache.rows_with(chunk, clock, bundle, _Cell, frontmatter=frontmatter)
                    rows.extend(made)
                    cells.extend(made_cells)
                for row, cell in zip(made, made_cells, strict=True):
                    hit = cell.table_row(row, columns)
                    measured.append(hit)
                    yield hit[1]

        n = budget.fit_message(shares(), budget_bytes)
        rows = rows[:n]
        hits = measured[:n]
    values = [h[0] for h in hits]
    escaped = list(map(_escaped, values)) if escape else []
    if escape:
        links: tuple[dict[str, Any], ...] = ()
        link_json = [c.link_json for c in cells[: len(rows)]]
    else:
        links, link_json = tuple(note_link(e) for e in entries[: len(rows)]), []
    if len(rows) < len(entries):
        entries = entries[: len(rows)]
        rest = {**rest, "returned": len(rows), "next_cursor": cursor_after(q, entries[-1], clock)}
    current_call().listed([e.path for e in entries])
    tail = as_json(rest)
    tail = "," + tail[1:] if len(tail) > 2 else "}"
    head, close = (
        ('{"result":{"columns":' + as_json(list(columns)) + ',"rows":[', b"]}") if rows else ('{"result":[', b"]")
    )
    return Page(entries, rows, values, escaped, head, close, tail, rest, links, link_json)


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
    """A listing answer, `{"result": [entry_json rows...], **rest}`, its text a table (module doc).

    Where the answer's JSON is spliced on its way out (splice.active(): the socket, stdio), its text and
    rows are placeholders for the cached JSON (splice.put), never built as objects and dumped again."""
    spliced = splice.active()
    page = listing_page(
        cache,
        res,
        q,
        clock,
        rest,
        budget_bytes=budget_bytes,
        explicit=explicit,
        frontmatter=frontmatter,
        escape=spliced,
    )
    if isinstance(page, str):
        return failure(page)
    if spliced:
        # the text content as a JSON string: the same listing, quotes and backslashes escaped
        text_json = splice.put(
            b'"',
            as_json(page.head)[1:-1].encode(),
            b",".join(page.escaped),
            page.close,
            as_json(page.tail)[1:-1].encode(),
            b'"',
        )
        rows_json = splice.put(b"[", b",".join(page.rows), b"]")
        # the resource_link blocks as one placeholder in the content list: it is filled with the blocks,
        # commas between them, so the list holds each block as if it had been dumped there
        links = (splice.put(b",".join(page.link_json)),) if page.link_json else ()
        return Answer(text_json, {"result": rows_json, **page.rest}, meta, links=links)
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
    to_json, infinities and NaN as null). Before pydantic-core is imported (a first answer, before the SDK's
    import) by json.dumps where the two agree (`_dumps_wire`), which spares that answer pydantic-core's
    import (~0.1 s); once it is loaded, by pydantic-core itself, which writes a read's answer several times
    faster than json.dumps and the walk that checks the two agree."""
    if "pydantic_core" not in sys.modules:
        text = _dumps_wire(result)
        if text is not None:
            return text
    import pydantic_core

    return pydantic_core.to_json(result, inf_nan_mode="null").decode("utf-8")


def _dumps_wire(result: dict[str, Any]) -> str | None:
    """`wire_json(result)` by json.dumps, when it writes what pydantic-core writes (`_plain_json`: a value
    without floats), else None."""
    if _plain_json(result):
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    return None


def modern_result(wire: dict[str, Any], server_info: Any) -> dict[str, Any]:
    """A wire result as a 2026-07-28-era request gets it: `resultType` and the server's name under
    `_meta` (`server_info`: handshake.SERVER_INFO_META's value), in the SDK's key order."""
    out = {k: v for k, v in wire.items() if k != "_meta"}
    out["resultType"] = "complete"
    out["_meta"] = {**(wire.get("_meta") or {}), MODERN_SERVER_INFO: server_info}
    return out


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
