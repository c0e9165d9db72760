"""Completion of a partly typed path, folder or tag: what a picker offers (MCP's completion/complete
for the note template and the prompts' arguments; any view of the person's that wants a picker).

With tens of thousands of notes a client cannot list them all to let a person pick one; it sends what
was typed so far and shows the few best matches. Matches come in three groups: first what starts with the
text exactly as typed (paths are case-sensitive, so that is what the person most likely means), then
what starts with it ignoring case, then what has a last segment (a note's file name) that does. Within a group,
paths rank most recently modified first (the note being worked on), folders in path order, tags most
used first. `total` counts every match, so a client can say there are more.

Each generation of the index gets sorted tables (paths; casefolded paths; casefolded file names; paths
by recency) that a prefix bisects, so an answer reads only the matches it ranks, not the vault. A
generation made by a few changes patches the previous generation's tables (a copy, then one bisected
insert or delete per changed path) instead of sorting the whole vault again: an agent that writes a
note and then completes a path does not pay a rebuild per write.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE, Entry
from vaultwatch.core.query.postings import MAX_PATCH, subset
from vaultwatch.core.query.tags import tag_counts, tag_counts_ready

MAX_VALUES = 100  # the most values one MCP completion may carry
TOP = "\U0010ffff"  # sorts after any character a path holds: prefix + TOP bounds the prefix's span

K = TypeVar("K", str, int)


@dataclass(frozen=True, slots=True)
class Completions:
    """The best matches, best first (at most `limit`), and how many there are in all."""

    values: tuple[str, ...]
    total: int


class _Pairs(Generic[K]):
    """Paths sorted by a key, ties in path order: two parallel lists (plain strings and ints, nothing
    for the garbage collector to walk), bisected by key for a span and by (key, path) for one pair."""

    __slots__ = ("keys", "paths")

    def __init__(self, keys: list[K], paths: list[str]) -> None:
        self.keys: list[K] = keys
        self.paths: list[str] = paths

    @classmethod
    def of(cls, keys: list[K], paths: list[str]) -> _Pairs[K]:
        """`paths` (in path order) sorted by `keys`; the sort is stable, so ties stay in path order."""
        order = sorted(range(len(keys)), key=keys.__getitem__)
        return cls([keys[i] for i in order], [paths[i] for i in order])

    def copy(self) -> _Pairs[K]:
        return _Pairs(list(self.keys), list(self.paths))

    def _at(self, key: K, path: str) -> int:
        lo = bisect_left(self.keys, key)
        return bisect_left(self.paths, path, lo, bisect_right(self.keys, key, lo))

    def add(self, key: K, path: str) -> None:
        i = self._at(key, path)
        self.keys.insert(i, key)
        self.paths.insert(i, path)

    def remove(self, key: K, path: str) -> bool:
        i = self._at(key, path)
        if i == len(self.keys) or self.keys[i] != key or self.paths[i] != path:
            return False
        del self.keys[i], self.paths[i]
        return True


@dataclass(frozen=True, slots=True)
class _Table:
    """What a completion searches among the entries of some kinds, for one generation."""

    paths: list[str]  # sorted (the snapshot's order)
    folded: _Pairs[str]  # casefolded paths
    named: _Pairs[str]  # casefolded last segments
    recency: _Pairs[int]  # -mtime_ns: most recently modified first

    def copy(self) -> _Table:
        return _Table(list(self.paths), self.folded.copy(), self.named.copy(), self.recency.copy())

    def add(self, e: Entry) -> None:
        folded = e.path.casefold()
        self.paths.insert(bisect_left(self.paths, e.path), e.path)
        self.folded.add(folded, e.path)
        self.named.add(_last(folded), e.path)
        self.recency.add(-e.mtime_ns, e.path)

    def remove(self, e: Entry) -> bool:
        i = bisect_left(self.paths, e.path)
        if i == len(self.paths) or self.paths[i] != e.path:
            return False
        del self.paths[i]
        folded = e.path.casefold()
        return (
            self.folded.remove(folded, e.path)
            & self.named.remove(_last(folded), e.path)
            & self.recency.remove(-e.mtime_ns, e.path)
        )


def _last(folded: str) -> str:
    return folded[folded.rfind("/") + 1 :]


PATHS = frozenset((NOTE, ATTACHMENT))
FOLDERS = frozenset((FOLDER,))


def _table(snapshot: Snapshot, kinds: frozenset[str]) -> _Table:
    def build() -> _Table:
        paths, entries = subset(snapshot, kinds)
        folded = [p.casefold() for p in paths]
        return _Table(
            list(paths),
            _Pairs.of(folded, list(paths)),
            _Pairs.of([_last(f) for f in folded], list(paths)),
            _Pairs.of([-e.mtime_ns for e in entries], list(paths)),
        )

    return snapshot.cached(("complete.table", kinds), build, _patch(snapshot, kinds))


def _patch(snapshot: Snapshot, kinds: frozenset[str]) -> Callable[[_Table, Snapshot, frozenset[str]], _Table | None]:
    def patch(old: _Table, base: Snapshot, changed: frozenset[str]) -> _Table | None:
        if len(changed) > MAX_PATCH:
            return None  # sorting afresh is quicker than that many inserts
        table = old.copy()  # `old` belongs to the earlier generation, still read by whoever holds it
        for path in changed:
            was, now = base.by_path.get(path), snapshot.by_path.get(path)
            if was is not None and was.kind in kinds and not table.remove(was):
                return None  # the earlier table does not hold what its generation did: build afresh
            if now is not None and now.kind in kinds:
                table.add(now)
        return table

    return patch


def ready(snapshot: Snapshot, what: str) -> bool:
    """Whether completing `what` ("path", "folder" or "tag") on `snapshot` is quick: its table is at
    hand or was patched just now from the previous generation's, so no whole-vault build is due. An
    event loop answers at once when it is, and moves the build to a thread when it is not."""
    if what == "tag":
        return tag_counts_ready(snapshot)
    kinds = PATHS if what == "path" else FOLDERS
    return snapshot.derived(("complete.table", kinds), _patch(snapshot, kinds)) is not None


def _span(keys: list[str], prefix: str) -> tuple[int, int]:
    return bisect_left(keys, prefix), bisect_right(keys, prefix + TOP)


def _complete(snapshot: Snapshot, typed: str, kinds: frozenset[str], limit: int, by_recency: bool) -> Completions:
    t = _table(snapshot, kinds)
    typed = typed.lstrip("/")
    folded = typed.casefold()
    a, b = _span(t.paths, typed)  # exact prefix
    lo, hi = _span(t.folded.keys, folded)  # ignoring case (the exact matches among them)

    def exact(path: str) -> bool:
        return path.startswith(typed)

    def loose(path: str) -> bool:
        return not path.startswith(typed) and path.casefold().startswith(folded)

    if folded:
        nlo, nhi = _span(t.named.keys, folded)
        named = [p for p in t.named.paths[nlo:nhi] if not p.casefold().startswith(folded)]
    else:
        named = []  # nothing typed: every path matched exactly, so no file name adds one
    groups: tuple[tuple[int, Callable[[], Iterable[str]], Callable[[str], bool] | None], ...] = (
        (b - a, lambda: t.paths[a:b], exact),
        ((hi - lo) - (b - a), lambda: filter(loose, t.folded.paths[lo:hi]), loose),
        (len(named), lambda: named, None),  # already read whole: nothing to gain from a walk
    )
    chosen: list[str] = []
    total = 0
    for size, members, belongs in groups:
        total += size
        room = limit - len(chosen)
        if size == 0 or room <= 0:
            continue
        if not by_recency:
            chosen += heapq.nsmallest(room, members())
        elif belongs is not None and size * size > WALK * room * len(t.paths):
            chosen += _walk(t.recency.paths, belongs, room)
        else:
            by_path = snapshot.by_path
            ranked = heapq.nsmallest(room, [(-by_path[p].mtime_ns, p) for p in members()])
            chosen += [p for _, p in ranked]
    return Completions(tuple(chosen), total)


# A group is picked by walking the recency order when it is dense in it: the walk reads about
# room * all / size paths to find `room` members, a ranking reads all `size` of them at a few
# times the cost per path; so walk once size^2 > WALK * room * all.
WALK = 1


def _walk(recency: list[str], belongs: Callable[[str], bool], room: int) -> list[str]:
    out = []
    for path in recency:
        if belongs(path):
            out.append(path)
            if len(out) == room:
                break
    return out


def complete_path(snapshot: Snapshot, typed: str, *, limit: int = MAX_VALUES) -> Completions:
    """Notes and attachments whose path matches `typed` (module doc), most recently modified first."""
    return _complete(snapshot, typed, PATHS, limit, by_recency=True)


def complete_folder(snapshot: Snapshot, typed: str, *, limit: int = MAX_VALUES) -> Completions:
    """Folders whose path matches `typed` (module doc), in path order."""
    return _complete(snapshot, typed.rstrip("/") if typed.strip("/") else "", FOLDERS, limit, False)


def complete_tag(snapshot: Snapshot, typed: str, *, limit: int = MAX_VALUES) -> Completions:
    """Tags in use that start with `typed` (a leading '#' ignored, case-insensitively), most used first."""
    folded = typed.lstrip("#").casefold()
    found = [tag for tag, _ in tag_counts(snapshot) if tag.casefold().startswith(folded)]
    return Completions(tuple(found[:limit]), len(found))
