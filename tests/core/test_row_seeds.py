"""A listing row the entry cache kept (core.serialize.StoredRow, handed to RowCache as its seed) is served
only for the very Entry it was made of, made for the same bundle and `stale`, and of its shape; anything
else makes the row again. `make` gets the caller's own part of a kept row; `held` gives back what was made."""

from __future__ import annotations

import datetime as dt

from tests.core.test_row_json import entries
from vaultwatch.core.clock import FixedClock
from vaultwatch.core.model import NOTE, make_entry
from vaultwatch.core.serialize import RowCache, row_items, row_json, row_to_store

TODAY = dt.date(2026, 11, 29)
CLOCK = FixedClock.at_date(TODAY)
SEEDED = b'{"seeded":true}'  # no row is this: a row served from the seed says so


def note(path: str = "n.md", stale_date: dt.date | None = None):
    return make_entry(path, NOTE, 10, 0, "n", okf_status="stable", stale_date=stale_date)


class _Taken(dict):
    """Kept rows that note which paths were taken."""

    def __init__(self, table: dict, asked: list[str]) -> None:
        super().__init__(table)
        self.asked = asked

    def pop(self, path, default=None):
        self.asked.append(path)
        return super().pop(path, default)


def seeding(table: dict):
    asked: list[str] = []
    kept = _Taken(table, asked)
    return (lambda: kept), asked


def made(entry, bundle: bool, stale: bool | None) -> bytes:
    return row_json(*row_items(entry, bundle, False, stale))[0]


def test_a_kept_row_is_served_for_its_own_entry_made_for_the_same_bundle_and_stale():
    e = note()
    seed, asked = seeding({e.path: (e, (False, None, SEEDED, b"[1]", "own"))})
    cache = RowCache(seed=seed)
    assert cache.rows([e], CLOCK, False) == [SEEDED]
    assert cache.rows([e], CLOCK, False) == [SEEDED]  # kept: not asked again
    assert asked == [e.path]


def test_a_kept_row_of_anything_else_is_made_again():
    e = note(stale_date=TODAY)  # stale today on a bundle
    twin = note(stale_date=TODAY)  # equal, not the same object: another load's entry
    assert twin == e and twin is not e
    good = (True, True, SEEDED, b"[1]", None)
    wrong = {
        "another entry object": (twin, good),
        "another bundle": (e, (False, None, SEEDED, b"[1]", None)),
        "another stale": (e, (True, False, SEEDED, b"[1]", None)),
        "stale as 1": (e, (True, 1, SEEDED, b"[1]", None)),
        "a row of another shape": (e, (True, True, SEEDED, b"[1]")),
        "values not bytes": (e, (True, True, SEEDED, "[1]", None)),
        "no tuple": (e, [True, True, SEEDED, b"[1]", None]),
    }
    for why, got in wrong.items():
        cache = RowCache(seed=lambda got=got: {e.path: got})
        assert cache.rows([e], CLOCK, True) == [made(e, True, True)], why
    assert RowCache(seed=lambda: {e.path: (e, good)}).rows([e], CLOCK, True) == [SEEDED]


def test_a_listing_with_frontmatter_never_takes_a_kept_row():
    e = note()
    seed, asked = seeding({e.path: (e, (False, None, SEEDED, b"[1]", None))})
    cache = RowCache(seed=seed)
    assert cache.rows([e], CLOCK, False, frontmatter=True) == [row_json(*row_items(e, False, True, None))[0]]
    assert asked == []


def test_make_gets_the_kept_rows_values_and_own_part_and_held_gives_them_back():
    calls = []

    def make(entry, keys, data, values, own):
        calls.append((entry, keys, data, values, own))
        return ("cell", entry.path)

    kept, fresh = note("kept.md"), note("fresh.md")
    seed, _ = seeding({kept.path: (kept, (False, None, SEEDED, b'["v"]', ("own", 1)))})
    cache = RowCache(seed=seed)
    rows, extras = cache.rows_with([kept, fresh], CLOCK, False, make)
    keys = row_items(fresh, False, False, None)[0]
    fresh_data, fresh_values = row_json(*row_items(fresh, False, False, None))
    assert rows == [SEEDED, fresh_data]
    assert calls == [(kept, keys, SEEDED, b'["v"]', ("own", 1)), (fresh, keys, fresh_data, fresh_values, None)]
    assert extras == [("cell", "kept.md"), ("cell", "fresh.md")]
    assert cache.held(kept) == (False, None, SEEDED, b'["v"]', ("cell", "kept.md"))
    assert cache.held(note("kept.md")) is None  # another object of the same path: not its row
    assert cache.held(note("other.md")) is None


def test_a_row_made_without_make_gets_its_extra_from_what_was_kept_beside_it():
    calls = []
    e = note()
    cache = RowCache()
    cache.rows([e], CLOCK, False)
    cache.rows_with([e], CLOCK, False, lambda *args: calls.append(args))
    data, values = row_json(*row_items(e, False, False, None))
    assert calls == [(e, row_items(e, False, False, None)[0], data, values, None)]


def test_a_stored_row_is_the_row_the_cache_would_make():
    for entry in entries():
        for bundle in (False, True):
            got = row_to_store(entry, bundle, CLOCK)
            stale = got[1]
            assert got[0] is bundle
            assert (stale is None) == (not bundle or entry.kind != NOTE)
            assert got[2:] == row_json(*row_items(entry, bundle, False, stale))
            assert RowCache().rows([entry], CLOCK, bundle) == [got[2]]


def test_a_listing_too_big_to_keep_never_asks_for_kept_rows():
    """Only a vault of at most ROW_CACHE_MAX entries has its rows kept, and a bigger listing than that is of a
    bigger vault: asking for each of its rows, every walk, would only cost time."""
    a, b = note("a.md"), note("b.md")
    seed, asked = seeding({a.path: (a, (False, None, SEEDED, b"[1]", None))})
    assert RowCache(max_rows=1, seed=seed).rows([a, b], CLOCK, False) == [made(a, False, None), made(b, False, None)]
    assert asked == []
    assert RowCache(max_rows=2, seed=seed).rows([a, b], CLOCK, False) == [SEEDED, made(b, False, None)]
