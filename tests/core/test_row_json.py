"""A listing row written from its values (core.serialize.row_json) is byte for byte what the JSON encoder
writes for the row as a dict and for its values as a list, for every kind and shape of row and every kind
of value a row holds; entry_json is that row as a dict."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math

import pytest

from vaultwatch.core.clock import FixedClock
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE, make_entry
from vaultwatch.core.serialize import entry_json, json_bytes, row_items, row_json, row_keys

PLAIN = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
TODAY = dt.date(2026, 11, 29)

ODD = [
    'quote " back \\ slash, tab\t, newline\n, bell \x07, del \x7f, café ✓ 🦊',
    "lone \udcff surrogate",
    "100% %s %d %(x)s",
    "",
]
FRONTMATTER = {
    "title": ODD[0],
    "n": 2**80,
    "f": 1.5,
    "nan": math.nan,
    "when": dt.date(2026, 11, 29),
    "at": dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC),
    "nested": {"size_bytes": 3, ',"modified_at":': "x", "kind": ["a", {"b": None}]},
    "surrogate": "\udc80",
    1: "int key",
}


def plain_row(entry, bundle: bool, frontmatter: bool, stale: bool | None) -> dict:
    """The row as the listing documents it, spelled out key by key."""
    head = {"path": entry.path, "kind": entry.kind, "title": entry.title, "folder": entry.folder}
    if entry.kind == FOLDER:
        return {**head, "size_bytes": 0, "modified_at": entry.modified_at}
    if entry.kind == ATTACHMENT:
        return {**head, "size_bytes": entry.size_bytes, "modified_at": entry.modified_at, "mime_type": entry.mime_type}
    row = {
        **head,
        "status": entry.okf_status if bundle else None,
        "stale": stale if bundle else None,
        "trust_tier": entry.okf_trust if bundle else None,
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


def entries():
    made = [
        make_entry("Área 2/Sub", FOLDER, 0, 1_700_000_000_000_000_000, "Sub"),
        make_entry("a/pic %d.png", ATTACHMENT, 12, 0, "pic %d", mime_type="image/png"),
        make_entry("odd.bin", ATTACHMENT, 3, 0, "odd", mime_type=None),
    ]
    for i, (title, error, undecodable) in enumerate(
        itertools.product(ODD, [None, "invalid YAML at line 3: did not find expected ','"], [False, True])
    ):
        made.append(
            make_entry(
                f"Folder {i}/{title[:12]} {i}.md" if i % 2 else f"root {i}.md",
                NOTE,
                1000 + i,
                1_764_000_000_000_000_000 + i,
                title,
                frontmatter=FRONTMATTER if i % 3 else {},
                tags=("x", 'q"t', "✓") if i % 2 else (),
                frontmatter_error=error,
                decode_error=undecodable,
                okf_status="deprecated" if i % 2 else "stable",
                okf_trust="verified",
                stale_date=TODAY if i % 4 == 0 else None,
            )
        )
    return made


@pytest.mark.parametrize("bundle", [False, True])
@pytest.mark.parametrize("frontmatter", [False, True])
def test_a_row_and_its_values_are_what_the_encoder_writes(bundle, frontmatter):
    clock = FixedClock.at_date(TODAY)
    shapes = set()
    for entry in entries():
        for stale in (None, False, True) if bundle and entry.kind == NOTE else (None,):
            want = plain_row(entry, bundle, frontmatter, stale)
            keys, values = row_items(entry, bundle, frontmatter, stale)
            assert keys == tuple(want) and values == list(want.values())
            data, listed = row_json(keys, values)
            assert data == json_bytes(want) == PLAIN(want).encode("utf-8", "backslashreplace")
            assert listed == json_bytes(list(want.values()))
            data.decode("utf-8")  # strict: a lone surrogate is written as its escape
            shapes.add(keys)
        on_the_clock = entry.stale_date is not None and entry.stale_date <= TODAY
        assert entry_json(entry, clock, bundle, frontmatter=frontmatter) == plain_row(
            entry, bundle, frontmatter, on_the_clock if bundle and entry.kind == NOTE else None
        )
    assert len(shapes) == 6  # a folder, an attachment, a clean note and its three shapes with errors
    # rows of one shape share one tuple of keys
    assert len({id(keys) for keys in shapes}) == len(shapes)
    made = entries()
    for a, b in ((3, 7), (4, 8), (6, 10)):  # two clean notes; two undecodable; two with both errors
        assert row_items(made[a], bundle, frontmatter, None)[0] is row_items(made[b], bundle, frontmatter, None)[0]


@pytest.mark.parametrize("frontmatter", [False, True])
def test_a_rows_keys_alone_are_the_keys_of_its_row(frontmatter):
    """row_keys (for a row kept as JSON, whose values are not made again) says what row_items says."""
    for entry in entries():
        for bundle in (False, True):
            assert row_keys(entry, frontmatter) is row_items(entry, bundle, frontmatter, None)[0]
