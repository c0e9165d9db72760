"""Per-snapshot inverted lists for filters: which note positions hold a frontmatter value.

Built lazily, once per key and generation (`Snapshot.cached`), so a repeated filter over
100k notes costs set operations on the matching positions instead of a pass over every note.
Positions index the snapshot's notes-only order (code-point order of path).
"""
from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from . import okf
from .clock import Clock
from .errors import QueryError
from .index import Snapshot
from .model import NOTE, Entry

Positions = set[int] | frozenset[int]


def notes(snapshot: Snapshot) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    """(paths, entries) of the notes only, in path order."""
    def build() -> tuple[tuple[str, ...], tuple[Entry, ...]]:
        chosen = tuple(e for e in snapshot.entries if e.kind == NOTE)
        return tuple(e.path for e in chosen), chosen
    return snapshot.cached(("kinds", frozenset({NOTE})), build)


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


def _inverted(snapshot: Snapshot, name: str, tokens: Callable[[Entry], list[str]]) -> dict[str, list[int]]:
    def build() -> dict[str, list[int]]:
        inv: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(notes(snapshot)[1]):
            for tok in tokens(e):
                inv[tok].append(i)
        return dict(inv)
    return snapshot.cached(("inverted", name), build)


def _union(inv: dict[str, list[int]], keys: list[str]) -> set[int]:
    out: set[int] = set()
    for k in keys:
        out.update(inv.get(k, ()))
    return out


def _stale(snapshot: Snapshot, clock: Clock) -> set[int]:
    def build() -> tuple[list, list, list, list]:
        dated = sorted((e.stale_date, i) for i, e in enumerate(notes(snapshot)[1]) if e.stale_date is not None)
        timed = sorted((e.stale_instant, i) for i, e in enumerate(notes(snapshot)[1]) if e.stale_instant is not None)
        return [d for d, _ in dated], [i for _, i in dated], [t for t, _ in timed], [i for _, i in timed]
    dates, dpos, instants, ipos = snapshot.cached("stale", build)
    out = set(dpos[: bisect_right(dates, clock.today())])
    out.update(ipos[: bisect_right(instants, clock.now())])
    return out


def all_notes(snapshot: Snapshot) -> frozenset[int]:
    """Every note position."""
    return snapshot.cached("all_positions", lambda: frozenset(range(len(notes(snapshot)[1]))))


def problems(snapshot: Snapshot) -> Positions:
    """Positions of notes with a frontmatter error or undecodable bytes."""
    return snapshot.cached("problems", lambda: frozenset(
        i for i, e in enumerate(notes(snapshot)[1]) if e.frontmatter_error is not None or e.decode_error))


def positions(snapshot: Snapshot, key: str, want: str, clock: Clock) -> Positions:
    """Note positions matching one filter pair, with OKF semantics for status, stale and
    trust_tier on a bundle; list values match by membership, booleans case-insensitively,
    tags case-insensitively and without '#'. Raises QueryError for invalid OKF values."""
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
        stale = _stale(snapshot, clock)
        return stale if flag else set(all_notes(snapshot) - stale)
    if key in ("tags", "tag"):
        inv = _inverted(snapshot, "@tags", lambda e: [t.casefold() for t in e.tags])
        return set(inv.get(want.lstrip("#").casefold(), ()))
    inv = _inverted(snapshot, "fm:" + key, lambda e: _tokens(e.frontmatter[key]) if key in e.frontmatter else [])
    return _union(inv, _wanted(want))
