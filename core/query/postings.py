"""Per-snapshot inverted lists for filters: which note positions hold a frontmatter value.

Built lazily, once per key and generation (`Snapshot.cached`), so a repeated filter over
100k notes costs set operations on the matching positions instead of a pass over every note.
Positions index the snapshot's notes-only order (code-point order of path).
"""

from __future__ import annotations

import datetime as dt
from array import array
from bisect import bisect_left, bisect_right, insort
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import compress
from operator import attrgetter
from typing import Any

from vaultwatch.core.clock import Clock
from vaultwatch.core.errors import QueryError
from vaultwatch.core.index.snapshot import Patch, Snapshot
from vaultwatch.core.markdown import okf
from vaultwatch.core.model import NOTE, Entry

Positions = set[int] | frozenset[int]


MAX_PATCH = 2000  # changed entries beyond which a structure is rebuilt rather than patched
_NOTE_ONLY = frozenset({NOTE})


def subset(snapshot: Snapshot, kinds: frozenset[str]) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    """(paths, entries) of the entries of these kinds, in path order."""

    def build() -> tuple[tuple[str, ...], tuple[Entry, ...]]:
        chosen = tuple(compress(snapshot.entries, map(kinds.__contains__, map(attrgetter("kind"), snapshot.entries))))
        return tuple(map(attrgetter("path"), chosen)), chosen

    def patch(
        old: tuple[tuple[str, ...], tuple[Entry, ...]], base: Snapshot, changed: frozenset[str]
    ) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
        paths, entries = old
        work = list(entries)
        for i in changed_positions(paths, changed):
            work[i] = snapshot.by_path[paths[i]]
        return paths, tuple(work)

    return snapshot.cached(("kinds", kinds), build, patching(snapshot)(patch))


def notes(snapshot: Snapshot) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    """(paths, entries) of the notes only, in path order."""
    return subset(snapshot, _NOTE_ONLY)


def changed_positions(paths: tuple[str, ...], changed: frozenset[str]) -> list[int]:
    """Positions in `paths` of the changed paths that are in it (raises _TooMany past MAX_PATCH)."""
    if len(changed) > MAX_PATCH:
        raise _TooMany
    out = []
    for p in changed:
        i = bisect_left(paths, p)
        if i < len(paths) and paths[i] == p:
            out.append(i)
    return out


class _TooMany(Exception):
    pass


def patching(snapshot: Snapshot) -> Callable[[Patch], Patch]:
    """Decorator for a patch of a structure indexed by position: it runs only when `snapshot`
    changed in place since the base (else None: rebuild), and too many changes mean a rebuild
    too, not a slow patch."""

    def wrap(fn: Patch) -> Patch:
        def run(old: Any, base: Snapshot, changed: frozenset[str]) -> Any:
            if not snapshot.in_place(base):
                return None
            try:
                return fn(old, base, changed)
            except _TooMany:
                return None

        return run

    return wrap


def _tokens(value: Any) -> list[str]:
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            if not isinstance(item, (list, dict)):
                out.extend(_tokens(item))
        return out
    if isinstance(value, bool):
        return ["b:true" if value else "b:false"]
    if isinstance(value, str):
        return ["s:" + value]
    if value is None:
        return ["n:"]
    if isinstance(value, (int, float)):
        return ["s:" + str(value)]
    return []


def _wanted(want: str) -> list[str]:
    keys = ["s:" + want]
    if want.lower() in ("true", "false"):
        keys.append("b:" + want.lower())
    if want == "" or want.lower() in ("null", "~"):
        keys.append("n:")
    return keys


def _inverted(snapshot: Snapshot, name: str, tokens: Callable[[Entry], list[str]]) -> dict[str, array]:
    # arrays of positions, not lists of ints: a third of the memory, and nothing the garbage
    # collector walks (lists of 10k+ ints made full collections, and their frames, slow)
    def build() -> dict[str, array]:
        inv: dict[str, array] = defaultdict(_positions)
        for i, e in enumerate(notes(snapshot)[1]):
            for tok in dict.fromkeys(tokens(e)):  # once per note, even for a repeated tag
                inv[tok].append(i)
        return dict(inv)

    @patching(snapshot)
    def patch(old: dict[str, array], base: Snapshot, changed: frozenset[str]) -> dict[str, array]:
        paths, entries = notes(snapshot)
        before = notes(base)[1]
        inv = dict(old)
        copied: set[str] = set()

        def own(tok: str) -> array:  # copy on write: `old` belongs to another generation
            if tok not in copied:
                copied.add(tok)
                inv[tok] = _positions(inv.get(tok, ()))
            return inv[tok]

        for i in changed_positions(paths, changed):
            was, now = set(tokens(before[i])), set(tokens(entries[i]))
            for tok in was - now:
                lst = own(tok)
                lst.pop(bisect_left(lst, i))
                if not lst:
                    del inv[tok]
                    copied.discard(tok)
            for tok in now - was:
                insort(own(tok), i)
        return inv

    return snapshot.cached(("inverted", name), build, patch)


def _positions(items: Iterable[int] = ()) -> array[int]:
    return array("i", items)


def _union(inv: dict[str, array], keys: list[str]) -> set[int]:
    out: set[int] = set()
    for k in keys:
        out.update(inv.get(k, ()))
    return out


class _Due:
    """Notes' due moments in (moment, position) order, as two arrays: `keys` (a date's ordinal,
    or an instant in microseconds since the epoch) and `positions`: a tuple of (date, position)
    pairs per note cost far more memory than these two arrays."""

    __slots__ = ("keys", "positions")

    def __init__(self, pairs: Iterable[tuple[int, int]] = ()) -> None:
        ordered = sorted(pairs)
        self.keys = array("q", [k for k, _ in ordered])
        self.positions = array("i", [i for _, i in ordered])

    def copy(self) -> _Due:
        out = _Due()
        out.keys, out.positions = array("q", self.keys), array("i", self.positions)
        return out

    def _at(self, key: int, position: int) -> int:
        lo = bisect_left(self.keys, key)
        return bisect_left(self.positions, position, lo, bisect_right(self.keys, key, lo))

    def add(self, key: int, position: int) -> None:
        j = self._at(key, position)
        self.keys.insert(j, key)
        self.positions.insert(j, position)

    def remove(self, key: int, position: int) -> None:
        j = self._at(key, position)
        self.keys.pop(j)
        self.positions.pop(j)

    def upto(self, key: int) -> array:
        """Positions whose moment is at or before `key`."""
        return self.positions[: bisect_right(self.keys, key)]


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROSECOND = dt.timedelta(microseconds=1)


def _day(d: dt.date) -> int:
    return d.toordinal()


def _micros(instant: dt.datetime) -> int:
    """An aware instant as whole microseconds since the epoch (exact: no float)."""
    return (instant - _EPOCH) // _MICROSECOND


def stale_positions(snapshot: Snapshot, clock: Clock) -> set[int]:
    """Positions of the notes whose stale_after has been reached as of `clock`."""

    def build() -> tuple[_Due, _Due]:
        entries = notes(snapshot)[1]
        return (
            _Due((_day(e.stale_date), i) for i, e in enumerate(entries) if e.stale_date is not None),
            _Due((_micros(e.stale_instant), i) for i, e in enumerate(entries) if e.stale_instant is not None),
        )

    @patching(snapshot)
    def patch(old: tuple[_Due, _Due], base: Snapshot, changed: frozenset[str]) -> tuple[_Due, _Due]:
        paths, entries = notes(snapshot)
        before = notes(base)[1]
        dated, timed = old[0].copy(), old[1].copy()
        for i in changed_positions(paths, changed):
            for due, field, key in ((dated, "stale_date", _day), (timed, "stale_instant", _micros)):
                was, now = getattr(before[i], field), getattr(entries[i], field)
                if was == now:
                    continue
                if was is not None:
                    due.remove(key(was), i)
                if now is not None:
                    due.add(key(now), i)
        return dated, timed

    dated, timed = snapshot.cached("stale", build, patch)
    out = set(dated.upto(_day(clock.today())))
    out.update(timed.upto(_micros(clock.now())))
    return out


def all_notes(snapshot: Snapshot) -> frozenset[int]:
    """Every note position."""
    return snapshot.cached(
        "all_positions",
        lambda: frozenset(range(len(notes(snapshot)[1]))),
        patching(snapshot)(lambda old, base, changed: old),
    )  # in place: same positions


def _is_problem(e: Entry) -> bool:
    return e.frontmatter_error is not None or e.decode_error


def problems(snapshot: Snapshot) -> Positions:
    """Positions of notes with a frontmatter error or undecodable bytes."""

    @patching(snapshot)
    def patch(old: frozenset[int], base: Snapshot, changed: frozenset[str]) -> frozenset[int]:
        paths, entries = notes(snapshot)
        work = set(old)
        for i in changed_positions(paths, changed):
            (work.add if _is_problem(entries[i]) else work.discard)(i)
        return frozenset(work)

    return snapshot.cached(
        "problems", lambda: frozenset(i for i, e in enumerate(notes(snapshot)[1]) if _is_problem(e)), patch
    )


def broken(snapshot: Snapshot) -> Positions:
    """Positions of notes with broken frontmatter, undecodable bytes or unresolved links."""
    return snapshot.cached("broken_notes", lambda: frozenset(problems(snapshot) | unresolved_links(snapshot)))


def unresolved_links(snapshot: Snapshot) -> Positions:
    """Positions of notes with at least one link that resolves to no file (core.links.graph)."""
    from vaultwatch.core.links.graph import unresolved_by_note  # links builds on the index, as postings does

    def build() -> frozenset[int]:
        by_note = unresolved_by_note(snapshot)
        return frozenset(i for i, p in enumerate(notes(snapshot)[0]) if p in by_note)

    return snapshot.cached("unresolved_links", build)


def positions(snapshot: Snapshot, key: str, want: str, clock: Clock) -> Positions:
    """Note positions matching one filter pair, with OKF semantics for status, stale and
    trust_tier on a bundle; list values match by membership, booleans case-insensitively,
    tags case-insensitively, without '#' and with their nested tags (`inbox` matches
    `inbox/to-read`, as in Obsidian). Raises QueryError for invalid OKF values."""
    if snapshot.is_bundle and key == "status":
        return set(_inverted(snapshot, "@status", lambda e: [e.okf_status]).get(want, ()))
    if snapshot.is_bundle and key == "trust_tier":
        if want not in okf.TRUST_TIERS:
            raise QueryError(f"trust_tier {want!r} is not a tier: use one of {', '.join(okf.TRUST_TIERS)}")
        return set(_inverted(snapshot, "@trust", lambda e: [e.okf_trust]).get(want, ()))
    if snapshot.is_bundle and key == "stale":
        flag = okf.parse_bool_word(want)
        if flag is None:
            raise QueryError(f"stale filter {want!r} is not a boolean: use true or false (also yes/no/1/0)")
        stale = stale_positions(snapshot, clock)
        return stale if flag else set(all_notes(snapshot) - stale)
    if key in ("tags", "tag"):
        return set(_tag_index(snapshot).get(want.lstrip("#").casefold(), ()))
    return _union(_field_index(snapshot, key), _wanted(want))


def _tag_tokens(e: Entry) -> list[str]:
    """A note's tags, casefolded, each with its parents: Obsidian's tag search for `inbox` also
    finds `#inbox/to-read`."""
    out = [t.casefold() for t in e.tags]
    for t in out[:]:
        while "/" in t:
            t = t.rsplit("/", 1)[0]
            out.append(t)
    return out


def _tag_index(snapshot: Snapshot) -> dict[str, array]:
    return _inverted(snapshot, "@tags", _tag_tokens)


def _field_index(snapshot: Snapshot, key: str) -> dict[str, array]:
    return _inverted(snapshot, "fm:" + key, lambda e: _tokens(e.frontmatter[key]) if key in e.frontmatter else [])


def tag_names(snapshot: Snapshot) -> list[str]:
    """Every tag a `tag:` term can match (casefolded, parents of nested tags included)."""
    return list(_tag_index(snapshot))


def field_values(snapshot: Snapshot, key: str) -> list[str]:
    """The text of every value of frontmatter `key` (list members one by one; booleans as
    true/false; no null), as `key:value` terms compare them."""
    return [tok[2:] for tok in _field_index(snapshot, key) if tok[:2] in ("s:", "b:")]


def warm(snapshot: Snapshot, keys: Iterable[str]) -> None:
    """Build the inverted lists that `key:value` terms for these keys read (tags and plain
    frontmatter fields), so that the first such term does not wait for them."""
    for key in keys:
        if key in ("tags", "tag"):
            _tag_index(snapshot)
        else:
            _field_index(snapshot, key)
