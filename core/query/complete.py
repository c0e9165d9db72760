"""Completion of a partly typed path, folder or tag: what a picker offers (MCP's completion/complete
for the note template and the prompts' arguments; any view of the person's that wants a picker).

With tens of thousands of notes a client cannot list them all to let a person pick one; it sends what
was typed so far and shows the few best matches. Matches come in two groups: first what starts with the
text exactly as typed (paths are case-sensitive, so that is what the person most likely means), then
what starts with it ignoring case, then what has a last segment (a note's file name) that does. Within a group,
paths rank most recently modified first (the note being worked on), folders in path order, tags most
used first. `total` counts every match, so a client can say there are more.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE
from vaultwatch.core.query.tags import tag_counts

MAX_VALUES = 100  # the most values one MCP completion may carry


@dataclass(frozen=True, slots=True)
class Completions:
    """The best matches, best first (at most `limit`), and how many there are in all."""

    values: tuple[str, ...]
    total: int


@dataclass(frozen=True, slots=True)
class _Table:
    """The entries of some kinds, by slot (their path order), with what a completion searches, per generation."""

    paths: list[str]  # slot -> path (sorted: the snapshot's order)
    folded: list[str]  # slot -> casefolded path
    by_folded: list[str]  # casefolded paths, sorted; by_folded_slot says whose
    by_folded_slot: list[int]
    by_name: list[str]  # casefolded last segments, sorted; by_name_slot says whose
    by_name_slot: list[int]
    recency: list[int]  # slots, most recently modified first (ties in path order)
    rank: list[int]  # slot -> its place in recency


def _table(snapshot: Snapshot, kinds: frozenset[str]) -> _Table:
    def build() -> _Table:
        chosen = [e for e in snapshot.entries if e.kind in kinds]
        paths = [e.path for e in chosen]
        folded = [p.casefold() for p in paths]
        order = sorted(range(len(folded)), key=folded.__getitem__)
        names = [f[f.rfind("/") + 1 :] for f in folded]
        name_order = sorted(range(len(names)), key=names.__getitem__)
        recency = sorted(range(len(chosen)), key=lambda i: (-chosen[i].mtime_ns, i))
        rank = [0] * len(recency)
        for place, slot in enumerate(recency):
            rank[slot] = place
        return _Table(
            paths,
            folded,
            [folded[i] for i in order],
            order,
            [names[i] for i in name_order],
            name_order,
            recency,
            rank,
        )

    return snapshot.cached(("complete.table", kinds), build)


def _span(sorted_texts: list[str], prefix: str) -> tuple[int, int]:
    return bisect_left(sorted_texts, prefix), bisect_right(sorted_texts, prefix + "\U0010ffff")


WALK_AT = 2000  # a group bigger than this is picked by walking the recency order, not by sorting it


def _complete(snapshot: Snapshot, typed: str, kinds: frozenset[str], limit: int, by_recency: bool) -> Completions:
    t = _table(snapshot, kinds)
    typed = typed.lstrip("/")
    folded = typed.casefold()
    a, b = _span(t.paths, typed)  # exact prefix: a slot range
    lo, hi = _span(t.by_folded, folded)
    nlo, nhi = _span(t.by_name, folded)

    def exact(slot: int) -> bool:
        return a <= slot < b

    def loose(slot: int) -> bool:
        return not a <= slot < b and t.folded[slot].startswith(folded)

    def named(slot: int) -> bool:
        return not t.folded[slot].startswith(folded) and t.folded[slot][t.folded[slot].rfind("/") + 1 :].startswith(
            folded
        )

    groups = (
        (b - a, exact, range(a, b)),
        ((hi - lo) - (b - a), loose, (s for s in t.by_folded_slot[lo:hi] if not a <= s < b)),
        # nothing typed: every path matched exactly, so no file name adds one
        (None if folded else 0, named, (s for s in t.by_name_slot[nlo:nhi] if not t.folded[s].startswith(folded))),
    )
    chosen: list[int] = []
    total = 0
    for size, belongs, members in groups:
        room = limit - len(chosen)
        if size == 0:
            continue
        if size is not None and size > WALK_AT and room > 0 and by_recency:
            total += size
            chosen += [s for s in _walk(t.recency, belongs, room)]
            continue
        found = list(members)
        total += len(found)
        if room > 0:
            chosen += heapq.nsmallest(room, found, key=t.rank.__getitem__ if by_recency else None)
    return Completions(tuple(t.paths[s] for s in chosen), total)


def _walk(recency: list[int], belongs: Callable[[int], object], room: int) -> list[int]:
    out = []
    for slot in recency:
        if belongs(slot):
            out.append(slot)
            if len(out) == room:
                break
    return out


def complete_path(snapshot: Snapshot, typed: str, *, limit: int = MAX_VALUES) -> Completions:
    """Notes and attachments whose path matches `typed` (module doc), most recently modified first."""
    return _complete(snapshot, typed, frozenset((NOTE, ATTACHMENT)), limit, by_recency=True)


def complete_folder(snapshot: Snapshot, typed: str, *, limit: int = MAX_VALUES) -> Completions:
    """Folders whose path matches `typed` (module doc), in path order."""
    return _complete(snapshot, typed.rstrip("/") if typed.strip("/") else "", frozenset((FOLDER,)), limit, False)


def complete_tag(snapshot: Snapshot, typed: str, *, limit: int = MAX_VALUES) -> Completions:
    """Tags in use that start with `typed` (a leading '#' ignored, case-insensitively), most used first."""
    folded = typed.lstrip("#").casefold()
    found = [tag for tag, _ in tag_counts(snapshot) if tag.casefold().startswith(folded)]
    return Completions(tuple(found[:limit]), len(found))
