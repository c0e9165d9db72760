"""core.serialize.compact_json writes exactly what json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
default=str).encode writes (the rows' JSON, byte for byte, as before it kept one C encoder), for every kind of
value a row holds, and is safe to call from several threads at once."""

from __future__ import annotations

import datetime as dt
import json
import math
import threading

import pytest

from vaultwatch.core.serialize import compact_json

PLAIN = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode

VALUES = [
    "plain",
    'quote " back \\ slash, tab\t, newline\n, bell \x07, del \x7f, café ✓ 🦊',
    "lone \udcff surrogate",
    "",
    0,
    -17,
    2**80,
    True,
    False,
    None,
    1.5,
    1e16,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
    [],
    {},
    ["a", 1, None, [True, {"k": "v"}]],
    {"path": "a.md", "tags": ["x", "y"], "nested": {"size_bytes": 3, ',"modified_at":': "x"}},
    {1: "int key", 2.5: "float key", False: "bool key", None: "none key"},
    dt.date(2026, 11, 29),
    {"when": dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC)},
    ("a", "tuple"),
    object.__new__(type("Odd", (), {"__str__": lambda self: "odd value"})),
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_compact_json_writes_what_the_json_encoder_writes(value):
    assert compact_json(value) == PLAIN(value)


def test_compact_json_refuses_what_the_json_encoder_refuses():
    with pytest.raises(TypeError):
        PLAIN({("tuple", "key"): 1})
    with pytest.raises(TypeError):
        compact_json({("tuple", "key"): 1})


def test_compact_json_from_threads_at_once():
    rows = [{"path": f"n{i}.md", "title": f"Title {i} ✓", "tags": [str(j) for j in range(i % 7)]} for i in range(2000)]
    want = [PLAIN(r) for r in rows]
    problems: list[str] = []

    def work() -> None:
        for _ in range(5):
            if [compact_json(r) for r in rows] != want:
                problems.append("differs")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
