"""The row cache's bound (core.serialize.RowCache): a full cache keeps the rows it has and serves them, makes
the rest per call without keeping them, and drops dead rows (of an Entry the vault no longer has) to make room,
once per index generation."""

from __future__ import annotations

import datetime as dt

from vaultwatch.core.clock import FixedClock
from vaultwatch.core.model import NOTE, make_entry
from vaultwatch.core.serialize import RowCache, row_items, row_json

CLOCK = FixedClock.at_date(dt.date(2026, 11, 29))


def note(path: str, title: str = "n"):
    return make_entry(path, NOTE, 10, 0, title)


def made(entry) -> bytes:
    return row_json(*row_items(entry, False, False, None))[0]


class Live:
    """The vault as the cache sees it: a generation and each path's Entry, moved by the test."""

    def __init__(self, *entries) -> None:
        self.generation = 1
        self.by_path = {e.path: e for e in entries}
        self.asked = 0

    def __call__(self):
        self.asked += 1
        return self.generation, self.by_path

    def change(self, *, gone=(), new=()) -> None:
        self.generation += 1
        for e in gone:
            del self.by_path[e.path]
        for e in new:
            self.by_path[e.path] = e


def walk(cache: RowCache, notes: list) -> list[bytes]:
    """A listing's rows as its pages ask for them, two at a time."""
    return [row for at in range(0, len(notes), 2) for row in cache.rows(notes[at : at + 2], CLOCK, False)]


def test_a_full_cache_keeps_its_rows_and_makes_the_rest_every_call():
    notes = [note(f"{i:02}.md") for i in range(10)]
    cache = RowCache(max_rows=4, live=Live(*notes))
    first = walk(cache, notes)
    assert first == [made(e) for e in notes]
    assert len(cache) == 4
    for _ in range(3):  # a vault bigger than the cache, walked again and again
        again = walk(cache, notes)
        assert again == first
        assert all(a is b for a, b in zip(again[:4], first[:4], strict=True))  # the kept rows, served
        assert not any(a is b for a, b in zip(again[4:], first[4:], strict=True))  # the rest made again
        assert len(cache) == 4


def test_a_full_cache_still_replaces_a_row_whose_entry_changed():
    a, b = note("a.md"), note("b.md")
    cache = RowCache(max_rows=2)
    cache.rows([a, b], CLOCK, False)
    edited = note("a.md", "edited")
    assert cache.rows([edited], CLOCK, False) == [made(edited)]
    row = cache.rows([edited], CLOCK, False)[0]
    assert cache.rows([edited], CLOCK, False)[0] is row  # kept in the old row's place
    assert len(cache) == 2


def test_dead_rows_make_room_once_per_generation():
    a, b, c, d = note("a.md"), note("b.md"), note("c.md"), note("d.md")
    live = Live(a, b)
    cache = RowCache(max_rows=2, live=live)
    cache.rows([a, b], CLOCK, False)
    live.change(gone=[a], new=[c])  # a deleted, c created
    row_c = cache.rows([c], CLOCK, False)[0]
    assert cache.rows([c], CLOCK, False)[0] is row_c  # a's dead row made room
    assert cache.held(a) is None and len(cache) == 2
    # the same generation is looked at once: b's entry gone from the view without a new generation drops
    # nothing, and d, with no room, is made every call
    del live.by_path[b.path]
    live.by_path[d.path] = d
    assert cache.rows([d], CLOCK, False)[0] is not cache.rows([d], CLOCK, False)[0]
    assert cache.held(b) is not None and len(cache) == 2
    live.by_path[b.path] = b
    # an edit makes the old entry's row dead: the next generation's look drops it
    live.change(new=[note("b.md", "edited")], gone=[c])
    row_d = cache.rows([d], CLOCK, False)[0]
    assert cache.rows([d], CLOCK, False)[0] is row_d
    assert cache.held(b) is None


def test_a_cache_without_a_view_of_the_vault_keeps_what_it_has():
    a, b, c = note("a.md"), note("b.md"), note("c.md")
    cache = RowCache(max_rows=2)
    kept = cache.rows([a, b], CLOCK, False)
    assert cache.rows([c], CLOCK, False) == [made(c)]
    assert len(cache) == 2 and cache.held(c) is None
    assert all(x is y for x, y in zip(cache.rows([a, b], CLOCK, False), kept, strict=True))


def test_a_look_for_dead_rows_waits_for_a_tenth_of_the_cache_to_be_turned_away():
    """A look walks every kept row: a vault whose live rows fill the cache must not pay for one on each
    write, only once the rows it could not keep would have cost as much."""
    notes = [note(f"{i:02}.md") for i in range(20)]
    live = Live(*notes)
    cache = RowCache(max_rows=20, live=live)  # a look is due after 2 rows turned away
    walk(cache, notes)
    new = note("new.md")
    live.change(gone=[notes[0]], new=[new])
    row = cache.rows([new], CLOCK, False)[0]
    assert cache.rows([new], CLOCK, False)[0] is not row  # turned away once: no look yet; twice: looked
    row = cache.rows([new], CLOCK, False)[0]
    assert cache.rows([new], CLOCK, False)[0] is row and cache.held(notes[0]) is None
