"""A row's share of a message is measured from its one encoding: `budget.row_share(encoded(row), row)` is
exactly `budget.row_bytes(row, encoded(list(row.values())))`, the size of the row's JSON plus its values'
table row escaped into the text, for any row: quotes, backslashes, control characters, lone surrogates,
non-ASCII, nested values, numbers and nulls, in the keys as in the values. The search page and every
other page `results.page_rows` cuts to the budget are measured this way, so where they cut must not move."""

from __future__ import annotations

import random

from vaultwatch.mcp_server import budget

PIECES = [
    '"',
    "\\",
    "\\\\",
    '\\"',
    "\n",
    "\t",
    "\x00",
    "\x1f",
    "\u2028",
    "\ud800",
    "é",
    "東京",
    "😀",
    "a",
    " ",
    "/",
    "**",
]
KEYS = ["path", "title", "snippet", 'we"ird', "back\\slash", "ключ", "emoji😀", "", "ctl\x01"]


def text(rnd: random.Random) -> str:
    return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 12)))


def value(rnd: random.Random, depth: int = 0):
    roll = rnd.random()
    if depth < 2 and roll < 0.15:
        return [value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    if depth < 2 and roll < 0.25:
        return {text(rnd): value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}
    return rnd.choice([text(rnd), text(rnd), rnd.randint(-(10**6), 10**6), rnd.random() * 1e3, None, True, False])


def test_a_rows_share_from_its_one_encoding_is_its_share_encoded_twice():
    rnd = random.Random(34)
    for _ in range(3000):
        row = {rnd.choice(KEYS) + text(rnd) * (rnd.random() < 0.2): value(rnd) for _ in range(rnd.randint(0, 9))}
        raw = budget.encoded(row)
        assert budget.row_share(raw, row) == budget.row_bytes(row, budget.encoded(list(row.values()))), row


def test_a_row_with_keys_json_spells_its_own_way_is_measured_all_the_same():
    for row in ({1: "a", "b": 2}, {None: 'q"', True: "\\"}, {1.5: [1, {"x": None}]}):
        assert budget.row_share(budget.encoded(row), row) == budget.row_bytes(row, budget.encoded(list(row.values())))
