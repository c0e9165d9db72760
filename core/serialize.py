"""JSON shapes of index records, shared by the CLI and the MCP tools."""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring
from typing import Any

from vaultwatch.core.clock import Clock
from vaultwatch.core.markdown import okf
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE, Entry

# Rows kept, each with what a caller keeps beside it (rows_with: the MCP answers' table row and
# resource link), so the cache stays bounded however big the vault. A listing bigger than this
# uses what is cached and keeps nothing new.
ROW_CACHE_MAX = 25_000
# what RowCache.rows_with keeps beside a row: made of (entry, the row's keys, the row's JSON, its values as a
# JSON list, and the caller's own part of a row the entry cache kept (StoredRow), or None)
Extra = Callable[[Entry, tuple[str, ...], bytes, bytes, Any], Any]

# a row's keys, in order, per shape (`row_items`): one tuple each, which rows of that shape share
_FOLDER_KEYS = ("path", "kind", "title", "folder", "size_bytes", "modified_at")
_ATTACHMENT_KEYS = (*_FOLDER_KEYS, "mime_type")
_NOTE_HEAD = ("path", "kind", "title", "folder", "status", "stale", "trust_tier", "tags")
_NOTE_KEYS = (*_NOTE_HEAD, "size_bytes", "modified_at")
_NOTE_FRONTMATTER_KEYS = (*_NOTE_HEAD, "frontmatter", "size_bytes", "modified_at")
_ERROR_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}  # a note's keys with its error keys appended


def row_items(entry: Entry, bundle: bool, frontmatter: bool, stale: bool | None) -> tuple[tuple[str, ...], list[Any]]:
    """One listing row as its keys, in order, and their values: path, kind, title, OKF fields (on a bundle),
    size, modified time, frontmatter. `stale`: a bundle's note's `stale` (okf.is_stale as of the row's
    clock), ignored for any other row. The one definition of a row: `entry_json` and `row_json` are made of
    it."""
    kind = entry.kind
    if kind == FOLDER:
        return _FOLDER_KEYS, [entry.path, kind, entry.title, entry.folder, 0, entry.modified_at]
    if kind == ATTACHMENT:
        return _ATTACHMENT_KEYS, [
            entry.path,
            kind,
            entry.title,
            entry.folder,
            entry.size_bytes,
            entry.modified_at,
            entry.mime_type,
        ]
    values: list[Any]
    if bundle:
        values = [entry.path, kind, entry.title, entry.folder, entry.okf_status, stale, entry.okf_trust]
    else:
        values = [entry.path, kind, entry.title, entry.folder, None, None, None]  # OKF fields: null off a bundle
    values.append(list(entry.tags))
    keys: tuple[str, ...] = _NOTE_KEYS
    if frontmatter:
        keys = _NOTE_FRONTMATTER_KEYS
        values.append(entry.frontmatter)
    values.append(entry.size_bytes)
    values.append(entry.modified_at)
    if entry.frontmatter_error or entry.decode_error:
        if entry.frontmatter_error:
            values.append(entry.frontmatter_error)
        if entry.decode_error:
            values.append(True)
        keys = _error_keys(keys, entry)
    return keys, values


def _error_keys(keys: tuple[str, ...], entry: Entry) -> tuple[str, ...]:
    """A note's keys with the keys of its errors appended (`row_items`)."""
    extra: tuple[str, ...] = ()
    if entry.frontmatter_error:
        extra += ("frontmatter_error",)
    if entry.decode_error:
        extra += ("decode_error",)
    joined = keys + extra
    return _ERROR_KEYS.setdefault(joined, joined)  # six shapes at most


def row_keys(entry: Entry, frontmatter: bool) -> tuple[str, ...]:
    """The keys `row_items` gives `entry`'s row, without its values (a row kept as JSON needs only these)."""
    kind = entry.kind
    if kind == FOLDER:
        return _FOLDER_KEYS
    if kind == ATTACHMENT:
        return _ATTACHMENT_KEYS
    keys = _NOTE_FRONTMATTER_KEYS if frontmatter else _NOTE_KEYS
    return _error_keys(keys, entry) if entry.frontmatter_error or entry.decode_error else keys


def _row_stale(entry: Entry, bundle: bool, clock: Clock) -> bool | None:
    """The `stale` of `entry`'s row as of `clock` (`row_items`; RowCache has an inline copy)."""
    return okf.is_stale(entry.stale_date, entry.stale_instant, clock) if bundle and entry.kind == NOTE else None


def entry_json(entry: Entry, clock: Clock, bundle: bool, *, frontmatter: bool = True) -> dict[str, Any]:
    """One listing row as a dict (`row_items`)."""
    keys, values = row_items(entry, bundle, frontmatter, _row_stale(entry, bundle, clock))
    return dict(zip(keys, values, strict=True))


def row_shape(entry: Entry) -> tuple[str, bool, bool]:
    """What decides which keys `entry_json` writes, and in which order, for one `bundle` and `frontmatter`:
    rows of entries with equal shapes have the same keys in the same order (a listing's text says its
    columns once, answers.table, and finds them from one row of each shape)."""
    return entry.kind, bool(entry.frontmatter_error), bool(entry.decode_error)


def _compact_encoder() -> Callable[[Any], str]:
    """`json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode`, the same text:
    its C encoder made once rather than on every call (a listing encodes every row it makes, and the
    encoder's making was a share of a row's cost). No check for circular values: rows are trees."""
    plain = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        return plain.encode
    chunks = make(None, str, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    join = "".join

    def encode(value: Any) -> str:
        return join(chunks(value, 0))

    return encode


compact_json = _compact_encoder()


def json_bytes(value: Any) -> bytes:
    """`value` as compact JSON, UTF-8 encoded (a lone surrogate, which UTF-8 cannot hold, is written
    as its JSON escape `\\udXXX`: it only ever occurs inside a JSON string)."""
    return compact_json(value).encode("utf-8", "backslashreplace")


def row_bytes(row: dict[str, Any]) -> bytes:
    """A row as compact JSON, UTF-8 encoded (`json_bytes`)."""
    return json_bytes(row)


_TEMPLATES: dict[tuple[str, ...], str] = {}  # per key tuple of `row_items`: its row's JSON with a %s per value


def _value_json(value: Any) -> str:
    """`value` as `compact_json` writes it, inside a list or an object as well as alone (its C encoder writes
    a value the same wherever it stands)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    return compact_json(value)


def row_json(keys: tuple[str, ...], values: list[Any]) -> tuple[bytes, bytes]:
    """A row of `row_items` as `row_bytes` writes its dict, and its values as `json_bytes` writes them as a
    list, both from one encoding of each value: a listing makes both for every row it makes, and encoding
    the dict and then its values again cost twice as much (the encoder walks each value's type once per
    call, and the dict itself had to be built)."""
    pieces = tuple([encode_basestring(v) if type(v) is str else _value_json(v) for v in values])
    template = _TEMPLATES.get(keys)
    if template is None:
        template = "{" + ",".join(encode_basestring(k).replace("%", "%%") + ":%s" for k in keys) + "}"
        _TEMPLATES[keys] = template  # (the key tuples are row_items' few)
    return (
        (template % pieces).encode("utf-8", "backslashreplace"),
        ("[" + ",".join(pieces) + "]").encode("utf-8", "backslashreplace"),
    )


# What the entry cache keeps of a note's or attachment's listing row (include_frontmatter off), so that a
# warm start's first listing need not make it again: the bundle and `stale` it was made for, its JSON, its
# values' JSON (`row_json`) and the caller's own part (what its `make` derives from the row and would
# otherwise make again: marshal-able, or None). Opaque to the cache; RowCache serves one only for the same
# Entry object (the cache's own, reused because its file's size, mtime and inode still match) with the same
# bundle and stale, so a kept row says what a new one would.
StoredRow = tuple[bool, bool | None, bytes, bytes, Any]
# where a RowCache finds the rows it lacks: by path, the Entry a kept row was made of and the row; the cache
# pops each one it takes (it is handed over, not shared)
Seed = Callable[[], dict[str, tuple[Entry, Any]]]


def row_to_store(entry: Entry, bundle: bool, clock: Clock) -> tuple[bool, bool | None, bytes, bytes]:
    """`entry`'s listing row (include_frontmatter off) as StoredRow begins: bundle, stale, JSON, values' JSON."""
    stale = _row_stale(entry, bundle, clock)
    keys, values = row_items(entry, bundle, False, stale)
    data, listed = row_json(keys, values)
    return bundle, stale, data, listed


def _kept(got: tuple[Entry, Any] | None, entry: Entry, bundle: bool, stale: bool | None) -> StoredRow | None:
    """A seed's row when it is `entry`'s, made for `bundle` and `stale`, and of StoredRow's shape."""
    if got is None or got[0] is not entry:
        return None
    row = got[1]
    if (
        type(row) is tuple
        and len(row) == 5
        and row[0] is bundle
        and row[1] is stale
        and type(row[2]) is bytes
        and type(row[3]) is bytes
    ):
        return row
    return None


def row_stale_instant(entry: Entry, bundle: bool) -> dt.datetime | None:
    """The instant at which the clock's now decides the `stale` of `entry`'s row (`entry_json`, and
    RowCache's inline copy of it): an OKF bundle's note whose stale_after is a datetime. None when no
    instant does (not a bundle, not a note, a date's stale_after: the day decides that one)."""
    return entry.stale_instant if bundle and entry.kind == NOTE else None


class RowCache:
    """Listing rows as compact UTF-8 JSON, kept across calls (and index generations) per Entry.

    A row depends on its Entry (immutable: an edit makes a new one), on whether the vault is
    an OKF bundle and, for a note in a bundle, on `stale` as of the clock. A cached row is
    served only when all three are what they were when it was made; anything else makes it
    again. Thread-safe (a race makes a row twice, never a wrong one); at most `max_rows`
    rows are kept, so notes deleted from the vault cannot accumulate.

    Bytes rather than str: joining 10,000 of them is a plain copy, with no re-encoding.
    """

    def __init__(self, max_rows: int = ROW_CACHE_MAX, seed: Seed | None = None) -> None:
        self.max_rows = max_rows
        # where a row this cache lacks may be kept already (include_frontmatter off): the entry cache's rows
        # (StoredRow), through the vault (`Vault.kept_rows`)
        self.seed = seed
        self._lock = threading.Lock()
        # per frontmatter flag: path -> [entry, bundle, stale, JSON, the JSON escaped or None, extra or None,
        # the values' JSON]
        self._rows: tuple[dict[str, list], dict[str, list]] = ({}, {})

    def __len__(self) -> int:
        return sum(map(len, self._rows))

    def clear(self) -> None:
        """Forget every cached row."""
        with self._lock:
            self._rows = ({}, {})

    def held(self, entry: Entry) -> tuple[bool, bool | None, bytes, bytes, Any] | None:
        """`entry`'s row (include_frontmatter off) when this cache holds it: `row_to_store`'s four and what
        `make` made of it (None if nothing asked)."""
        hit = self._rows[False].get(entry.path)
        return None if hit is None or hit[0] is not entry else (hit[1], hit[2], hit[3], hit[6], hit[5])

    def rows(self, entries: Sequence[Entry], clock: Clock, bundle: bool, *, frontmatter: bool = False) -> list[bytes]:
        """`row_bytes(entry_json(entry, clock, bundle, frontmatter=...))` for each entry, in order."""
        return self._rows_of(entries, clock, bundle, frontmatter, None)

    def rows_escaped(
        self, entries: Sequence[Entry], clock: Clock, bundle: bool, *, frontmatter: bool = False
    ) -> tuple[list[bytes], list[bytes]]:
        """`rows(...)`, and the same rows escaped for the inside of a JSON string (quotes and
        backslashes escaped: joined and quoted, they are a JSON string holding the listing)."""
        escaped: list[bytes] = []
        return self._rows_of(entries, clock, bundle, frontmatter, escaped), escaped

    def rows_with(
        self,
        entries: Sequence[Entry],
        clock: Clock,
        bundle: bool,
        make: Extra,
        *,
        frontmatter: bool = False,
    ) -> tuple[list[bytes], list[Any]]:
        """`rows(...)`, and beside each row what `make(entry, keys, row_json, values_json, own)` made of it (the
        row's keys, `row_items`; its JSON and its values' as a list, `row_json`; `own`: the caller's part of a
        row the entry cache kept, StoredRow, else None), kept with the row: made once per row, from what
        making the row made (a caller that derives more from a row, such as the MCP answers' text table, then
        never parses the JSON back). One cache, one `make`."""
        extras: list[Any] = []
        return self._rows_of(entries, clock, bundle, frontmatter, None, make, extras), extras

    def _rows_of(
        self,
        entries: Sequence[Entry],
        clock: Clock,
        bundle: bool,
        frontmatter: bool,
        escaped: list[bytes] | None,
        make: Extra | None = None,
        extras: list[Any] | None = None,
    ) -> list[bytes]:
        rows = self._rows
        cache = rows[frontmatter]
        keep = len(entries) <= self.max_rows
        # (a listing too big to keep is of a vault too big to have had its rows kept: readcalls.row_cache)
        kept_rows = self.seed() if self.seed is not None and keep and not frontmatter else None
        take = kept_rows.pop if kept_rows else None  # once every kept row is taken, no look per row
        today = clock.today()
        now = None
        out: list[bytes] = []
        append = out.append
        made = 0
        for e in entries:
            stale: bool | None = None
            if bundle and e.kind == NOTE:
                # okf.is_stale, inline: this loop runs once per row of every listing
                if e.stale_date is not None:
                    stale = e.stale_date <= today
                elif e.stale_instant is not None:
                    if now is None:
                        now = clock.now()
                    stale = e.stale_instant <= now
                else:
                    stale = False
            hit = cache.get(e.path)
            if hit is None or hit[0] is not e or hit[1] != bundle or hit[2] != stale:
                # `stale` as the cache key holds it, even if the clock moved meanwhile
                kept = None if take is None else _kept(take(e.path, None), e, bundle, stale)
                if kept is not None:
                    keys, data, listed, own = row_keys(e, False), kept[2], kept[3], kept[4]
                else:
                    keys, values = row_items(e, bundle, frontmatter, stale)
                    (data, listed), own = row_json(keys, values), None
                hit = [e, bundle, stale, data, None, None if make is None else make(e, keys, data, listed, own), listed]
                if keep:
                    cache[e.path] = hit
                    made += 1
            elif make is not None and hit[5] is None:  # made by `rows`, without the extra
                hit[5] = make(e, row_keys(e, frontmatter), hit[3], hit[6], None)
            append(hit[3])
            if extras is not None:
                extras.append(hit[5])
            if escaped is not None:
                if hit[4] is None:  # compact JSON holds no control characters: only these two need escaping
                    hit[4] = hit[3].replace(b"\\", b"\\\\").replace(b'"', b'\\"')
                escaped.append(hit[4])
        if made and sum(map(len, rows)) > self.max_rows:
            with self._lock:
                if self._rows is rows:
                    self._rows = ({}, {})
        return out
