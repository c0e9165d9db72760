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
from typing import Any, cast

from vaultwatch.core.clock import Clock
from vaultwatch.core.errors import QueryError
from vaultwatch.core.index.snapshot import Patch, Snapshot
from vaultwatch.core.markdown import mdlex, okf
from vaultwatch.core.model import NOTE, Entry

Positions = set[int] | frozenset[int]


MAX_PATCH = 2000  # changed entries beyond which a structure is rebuilt rather than patched
# notes added or removed beyond which a structure indexed by position is rebuilt: each one moves
# the positions after it, so the patch costs grow with them
MAX_MOVES = 200
_NOTE_ONLY = frozenset({NOTE})


def subset(snapshot: Snapshot, kinds: frozenset[str]) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    """(paths, entries) of the entries of these kinds, in path order."""

    def build() -> tuple[tuple[str, ...], tuple[Entry, ...]]:
        chosen = tuple(compress(snapshot.entries, map(kinds.__contains__, map(attrgetter("kind"), snapshot.entries))))
        return tuple(map(attrgetter("path"), chosen)), chosen

    def patch(
        old: tuple[tuple[str, ...], tuple[Entry, ...]], base: Snapshot, changed: frozenset[str]
    ) -> tuple[tuple[str, ...], tuple[Entry, ...]] | None:
        # A few entries added, removed or replaced: each goes in or out at its place found by
        # bisection, so the first listing after an outside create costs the change, not a pass
        # over the vault (the list's inserts move pointers in C).
        if len(changed) > MAX_PATCH:
            return None
        paths, entries = old
        work_paths: list[str] | None = None
        work = list(entries)
        moved = 0
        for p in sorted(changed):
            was, now = base.by_path.get(p), snapshot.by_path.get(p)
            had = was is not None and was.kind in kinds
            has = now is not None and now.kind in kinds
            if had and has:
                i = bisect_left(paths if work_paths is None else work_paths, p)
                work[i] = cast(Entry, now)
                continue
            if not (had or has):
                continue
            moved += 1
            if moved > MAX_MOVES:
                return None
            if work_paths is None:
                work_paths = list(paths)
            i = bisect_left(work_paths, p)
            if had:
                del work_paths[i], work[i]
            else:
                work_paths.insert(i, p)
                work.insert(i, cast(Entry, now))
        return (paths if work_paths is None else tuple(work_paths)), tuple(work)

    return snapshot.cached(("kinds", kinds), build, patch)


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


class Moves:
    """Where the note positions of an earlier generation went in a later one that added or
    removed a few notes: `position(i)` for one, `array(a)` for a sorted array of them (removed
    notes' positions left out). Between two neighbouring added or removed notes every position
    moves by the same amount, so an array is mapped a run at a time."""

    __slots__ = ("_added", "_bounds", "_removed", "identity")

    def __init__(self, removed: list[int], added: list[int], size: int) -> None:
        """`removed`: sorted old positions of notes gone; `added`: sorted new positions of notes
        that came; `size`: the old number of notes."""
        self._removed = removed
        self._added = [a - k for k, a in enumerate(added)]  # survivors before each added note
        self.identity = not removed and not added
        bounds = set(removed)
        bounds.update(r + 1 for r in removed)
        for j in self._added:
            bounds.add(self._old_of(j))
        self._bounds = sorted(b for b in bounds if 0 < b < size)

    def _old_of(self, j: int) -> int:
        """The old position of the j-th note that stayed."""
        i = j
        for r in self._removed:
            if r <= i:
                i += 1
        return i

    def position(self, i: int) -> int | None:
        """The new position of old position `i` (None: that note was removed)."""
        k = bisect_left(self._removed, i)
        if k < len(self._removed) and self._removed[k] == i:
            return None
        j = i - k
        return j + bisect_right(self._added, j)

    def array(self, a: array) -> array:
        """A sorted array of old positions as new positions (the same object when none moved)."""
        if self.identity or not a:
            return a
        out = _positions()
        at, end = 0, len(a)
        for stop in (*self._bounds, None):
            hi = end if stop is None else bisect_left(a, stop, at)
            if hi > at:
                first = a[at]
                new = self.position(first)
                if new is not None:  # else the run is the removed position alone (a bound on each side)
                    d = new - first
                    if d == 0 and at == 0 and hi == end:
                        return a
                    out.extend(a[at:hi] if d == 0 else _positions(map(d.__add__, a[at:hi])))
            at = hi
            if at >= end:
                break
        return out


def reshaped(
    snapshot: Snapshot, base: Snapshot, changed: frozenset[str]
) -> tuple[Moves, list[tuple[int | None, int | None]]]:
    """How the notes moved from `base` to `snapshot`, and (old position, new position) of each
    changed note (None where it is not a note in that generation). Raises _TooMany when a
    rebuild is cheaper than a patch."""
    if len(changed) > MAX_PATCH:
        raise _TooMany
    key = ("moves", base.generation)
    found = snapshot.derived(key)
    if found is not None:
        return cast("tuple[Moves, list[tuple[int | None, int | None]]]", found)
    old_paths = notes(base)[0]
    new_paths = notes(snapshot)[0]
    pairs: list[tuple[int | None, int | None]] = []
    removed: list[int] = []
    added: list[int] = []
    for p in sorted(changed):
        bi = bisect_left(old_paths, p)
        ni = bisect_left(new_paths, p)
        was = bi if bi < len(old_paths) and old_paths[bi] == p else None
        now = ni if ni < len(new_paths) and new_paths[ni] == p else None
        if was is None and now is None:
            continue
        if was is None:
            added.append(cast(int, now))
        elif now is None:
            removed.append(was)
        pairs.append((was, now))
    if len(added) + len(removed) > MAX_MOVES:
        raise _TooMany
    out = (Moves(removed, added, len(old_paths)), pairs)
    snapshot.cached(key, lambda: out)
    return out


def reshaping(snapshot: Snapshot) -> Callable[[Callable[..., Any]], Patch]:
    """Decorator for a patch of a structure indexed by note position that follows notes added and
    removed as well as replaced: the patch gets (old, base, moves, pairs) (see `reshaped`); too
    many changes mean a rebuild."""

    def wrap(fn: Callable[..., Any]) -> Patch:
        def run(old: Any, base: Snapshot, changed: frozenset[str]) -> Any:
            try:
                moves, pairs = reshaped(snapshot, base, changed)
                return fn(old, base, moves, pairs)
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


def _shown_tokens(value: Any) -> list[str]:
    """A value's tokens as the filter bar compares them: text casefolded, and a value that is one
    link also by its target (`[[Published|out]]` is `published` too), the words the Status column
    shows."""
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            if not isinstance(item, (list, dict)):
                out.extend(_shown_tokens(item))
        return out
    if isinstance(value, str):
        target = mdlex.property_link(value)
        found = ["s:" + value.casefold()]
        return found if not target else [*found, "s:" + target.casefold()]
    return [tok.casefold() for tok in _tokens(value)]


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

    @reshaping(snapshot)
    def patch(
        old: dict[str, array], base: Snapshot, moves: Moves, pairs: list[tuple[int | None, int | None]]
    ) -> dict[str, array]:
        entries = notes(snapshot)[1]
        before = notes(base)[1]
        # every list moved to the new positions (a list no position of which moved is kept as is);
        # then the changed notes' tokens: copy on write, `old` belongs to another generation
        inv = old if moves.identity else {tok: lst for tok, a in old.items() if (lst := moves.array(a))}
        copied: set[str] = set() if moves.identity else {tok for tok in inv if inv[tok] is not old[tok]}
        if inv is old:
            inv = dict(old)

        def own(tok: str) -> array:
            if tok not in copied:
                copied.add(tok)
                inv[tok] = _positions(inv.get(tok, ()))
            return inv[tok]

        for was_at, i in pairs:
            if i is None:  # removed: `moves` left its positions out
                continue
            was = set(tokens(before[was_at])) if was_at is not None else set()
            now = set(tokens(entries[i]))
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

    def moved(self, moves: Moves) -> _Due:
        """A copy with each position where `moves` puts it (removed notes left out)."""
        if moves.identity:
            return self.copy()
        out = _Due()
        kept = [(k, p) for k, i in zip(self.keys, self.positions, strict=True) if (p := moves.position(i)) is not None]
        out.keys = array("q", [k for k, _ in kept])
        out.positions = array("i", [p for _, p in kept])
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

    @reshaping(snapshot)
    def patch(
        old: tuple[_Due, _Due], base: Snapshot, moves: Moves, pairs: list[tuple[int | None, int | None]]
    ) -> tuple[_Due, _Due]:
        entries = notes(snapshot)[1]
        before = notes(base)[1]
        dated, timed = old[0].moved(moves), old[1].moved(moves)
        for was_at, i in pairs:
            for due, field, key in ((dated, "stale_date", _day), (timed, "stale_instant", _micros)):
                was = getattr(before[was_at], field) if was_at is not None else None
                now = getattr(entries[i], field) if i is not None else None
                if was is not None and i is not None:  # (a removed note's moment is gone already)
                    if was == now:
                        continue
                    due.remove(key(was), i)
                if now is not None:
                    due.add(key(now), cast(int, i))
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
    )  # in place: same positions (else a range's set, built in C)


def _is_problem(e: Entry) -> bool:
    return e.frontmatter_error is not None or e.decode_error


def problems(snapshot: Snapshot) -> Positions:
    """Positions of notes with a frontmatter error or undecodable bytes."""

    @reshaping(snapshot)
    def patch(
        old: frozenset[int], base: Snapshot, moves: Moves, pairs: list[tuple[int | None, int | None]]
    ) -> frozenset[int]:
        entries = notes(snapshot)[1]
        if moves.identity:
            work = set(old)
        else:
            work = {p for i in old if (p := moves.position(i)) is not None}
        for _, i in pairs:
            if i is not None:
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


def positions(snapshot: Snapshot, key: str, want: str, clock: Clock, *, shown: bool = False) -> Positions:
    """Note positions matching one filter pair, with OKF semantics for status, stale and
    trust_tier on a bundle; list values match by membership, booleans case-insensitively,
    tags case-insensitively, without '#' and with their nested tags (`inbox` matches
    `inbox/to-read`, as in Obsidian). Raises QueryError for invalid OKF values.

    `shown` (the filter bar's pairs) matches a value as the person sees it: regardless of case, and
    a property that is one link by its target (`status:published` finds `["[[Published]]"]`);
    without it a value is frontmatter equality, as list_documents' seeds say."""
    if shown and key not in ("tags", "tag"):
        want = want.casefold()
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
    if shown:
        return _union(_shown_index(snapshot, key), _wanted(want))
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


def _shown_index(snapshot: Snapshot, key: str) -> dict[str, array]:
    return _inverted(
        snapshot, "shown:" + key, lambda e: _shown_tokens(e.frontmatter[key]) if key in e.frontmatter else []
    )


def tag_names(snapshot: Snapshot) -> list[str]:
    """Every tag a `tag:` term can match (casefolded, parents of nested tags included)."""
    return list(_tag_index(snapshot))


def field_values(snapshot: Snapshot, key: str, *, shown: bool = False) -> list[str]:
    """The text of every value of frontmatter `key` (list members one by one; booleans as
    true/false; no null), as `key:value` terms compare them. With `shown`, as the filter bar
    offers them: a value that is one link by its target (`Published`, not `[[Published]]`)."""
    out = [tok[2:] for tok in _field_index(snapshot, key) if tok[:2] in ("s:", "b:")]
    if shown:
        return list(dict.fromkeys(target if (target := mdlex.property_link(v)) else v for v in out))
    return out


def warm(snapshot: Snapshot, keys: Iterable[str]) -> None:
    """Build the inverted lists that `key:value` terms for these keys read (tags and plain
    frontmatter fields), so that the first such term does not wait for them."""
    for key in keys:
        if key in ("tags", "tag"):
            _tag_index(snapshot)
        else:
            _field_index(snapshot, key)
            _shown_index(snapshot, key)
