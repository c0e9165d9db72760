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


def _folded(snapshot: Snapshot, kinds: frozenset[str]) -> list[tuple[int, str, str]]:
    """(position, casefolded path, casefolded last segment) of the entries of these kinds, per generation."""

    def build() -> list[tuple[int, str, str]]:
        out = []
        for i, e in enumerate(snapshot.entries):
            if e.kind in kinds:
                folded = e.path.casefold()
                out.append((i, folded, folded[folded.rfind("/") + 1 :]))
        return out

    return snapshot.cached(("complete.folded", kinds), build)


def _complete(snapshot: Snapshot, typed: str, kinds: frozenset[str], limit: int, by_recency: bool) -> Completions:
    typed = typed.lstrip("/")
    entries = snapshot.entries
    lo = bisect_left(snapshot.paths, typed)
    hi = bisect_right(snapshot.paths, typed + "\U0010ffff")
    exact = [i for i in range(lo, hi) if entries[i].kind in kinds]
    folded = typed.casefold()
    loose: list[int] = []
    named: list[int] = []
    for i, path, name in _folded(snapshot, kinds):
        if lo <= i < hi:
            continue
        if path.startswith(folded):
            loose.append(i)
        elif name.startswith(folded):
            named.append(i)
    chosen: list[int] = []
    for group in (exact, loose, named):
        room = limit - len(chosen)
        if room <= 0:
            break
        if by_recency:
            chosen += heapq.nlargest(room, group, key=lambda i: (entries[i].mtime_ns, -i))
        else:
            chosen += group[:room]  # positions are in path order
    return Completions(tuple(entries[i].path for i in chosen), len(exact) + len(loose) + len(named))


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
