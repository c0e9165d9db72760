"""JSON shapes of index records, shared by the CLI and the MCP tools."""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from vaultwatch.core.clock import Clock
from vaultwatch.core.markdown import okf
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE, Entry

# Rows kept, each with what a caller keeps beside it (rows_with: the MCP answers' table row and
# resource link), so the cache stays bounded however big the vault. A listing bigger than this
# uses what is cached and keeps nothing new.
ROW_CACHE_MAX = 25_000
# what RowCache.rows_with keeps beside a row: made of (entry, the row as a dict, the row's JSON)
Extra = Callable[[Entry, dict[str, Any], bytes], Any]


def entry_json(entry: Entry, clock: Clock, bundle: bool, *, frontmatter: bool = True) -> dict[str, Any]:
    """One listing row: path, kind, title, OKF fields (on a bundle), size, modified time, frontmatter."""
    kind = entry.kind
    if kind == FOLDER:
        return {
            "path": entry.path,
            "kind": kind,
            "title": entry.title,
            "folder": entry.folder,
            "size_bytes": 0,
            "modified_at": entry.modified_at,
        }
    if kind == ATTACHMENT:
        return {
            "path": entry.path,
            "kind": kind,
            "title": entry.title,
            "folder": entry.folder,
            "size_bytes": entry.size_bytes,
            "modified_at": entry.modified_at,
            "mime_type": entry.mime_type,
        }
    if bundle:
        row: dict[str, Any] = {
            "path": entry.path,
            "kind": kind,
            "title": entry.title,
            "folder": entry.folder,
            "status": entry.okf_status,
            "stale": okf.is_stale(entry.stale_date, entry.stale_instant, clock),
            "trust_tier": entry.okf_trust,
            "tags": list(entry.tags),
        }
    else:
        row = {
            "path": entry.path,
            "kind": kind,
            "title": entry.title,
            "folder": entry.folder,
            "status": None,
            "stale": None,
            "trust_tier": None,  # OKF fields: null off a bundle
            "tags": list(entry.tags),
        }
    if frontmatter:
        row["frontmatter"] = entry.frontmatter
    row["size_bytes"] = entry.size_bytes
    row["modified_at"] = entry.modified_at
    if entry.frontmatter_error:
        row["frontmatter_error"] = entry.frontmatter_error
    if entry.decode_error:
        row["decode_error"] = True
    return row


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

    def __init__(self, max_rows: int = ROW_CACHE_MAX) -> None:
        self.max_rows = max_rows
        self._lock = threading.Lock()
        # per frontmatter flag: path -> [entry, bundle, stale, JSON, the JSON escaped or None, extra or None]
        self._rows: tuple[dict[str, list], dict[str, list]] = ({}, {})

    def __len__(self) -> int:
        return sum(map(len, self._rows))

    def clear(self) -> None:
        """Forget every cached row."""
        with self._lock:
            self._rows = ({}, {})

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
        """`rows(...)`, and beside each row what `make(entry, row_dict, row_json)` made of it, kept with the
        row: made once per row, from the row's dict while it is at hand (a caller that derives more from a
        row, such as the MCP answers' text table, then never parses the JSON back). One cache, one `make`."""
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
                row = entry_json(e, clock, bundle, frontmatter=frontmatter)
                if stale is not None:
                    row["stale"] = stale  # the value the cache key holds, even if the clock moved meanwhile
                data = row_bytes(row)
                hit = [e, bundle, stale, data, None, None if make is None else make(e, row, data)]
                if keep:
                    cache[e.path] = hit
                    made += 1
            elif make is not None and hit[5] is None:  # made by `rows`, without the extra
                hit[5] = make(e, json.loads(hit[3]), hit[3])
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
