"""Tag counts of one snapshot (frontmatter and inline tags), for tag listings and completion.

The whole vault's counts are kept per generation as a tally (casefolded tag -> count, the first note
carrying it in path order, that note's spelling) which the next generation patches from the changed
notes alone, so a listing or a completion of tags after a write does not read every note again.
"""

from __future__ import annotations

from collections.abc import Callable

from vaultwatch.core.disk.paths import normalize_folder
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.model import NOTE, Entry
from vaultwatch.core.query.postings import MAX_PATCH

Tally = dict[str, tuple[int, str, str]]  # casefolded tag -> (notes, first note in path order, its spelling)


def tag_counts(snapshot: Snapshot, folder: str | None = None) -> list[tuple[str, int]]:
    """(tag, number of notes carrying it), most used first, then by tag.

    Tags compare case-insensitively, as the `tags` filter does; each is reported with the
    spelling of its first note in path order. `folder` scopes the count like a listing's
    folder (None = the whole vault, "" = root-level notes, else that folder and below).
    Memoized per generation for the whole-vault count. Raises PathError for a bad folder.
    """
    folder = normalize_folder(folder)
    if folder is None:
        return snapshot.cached("tags.counts", lambda: _ranked(_tally(snapshot)))
    return _count(snapshot, folder)


def tag_counts_ready(snapshot: Snapshot) -> bool:
    """Whether the whole vault's tag counts are at hand for `snapshot`, or were patched just now from
    the previous generation's (no count of every note due)."""
    return snapshot.derived("tags.counts") is not None or snapshot.derived("tags.tally", _patch(snapshot)) is not None


def _ranked(tally: Tally) -> list[tuple[str, int]]:
    return sorted(((shown, n) for n, _, shown in tally.values()), key=lambda kv: (-kv[1], kv[0]))


def _tags(e: Entry | None) -> dict[str, str]:
    """A note's tags, casefolded -> its spelling (the last of a repeated tag's, as the count reads it)."""
    if e is None or e.kind != NOTE or not e.tags:
        return {}
    return {t.casefold(): t for t in e.tags}


def _tally(snapshot: Snapshot) -> Tally:
    def build() -> Tally:
        tally: Tally = {}
        for e in snapshot.entries:
            for key, shown in _tags(e).items():
                n, first, spelling = tally.get(key, (0, e.path, shown))
                tally[key] = (n + 1, first, spelling)
        return tally

    return snapshot.cached("tags.tally", build, _patch(snapshot))


def _patch(snapshot: Snapshot) -> Callable[[Tally, Snapshot, frozenset[str]], Tally | None]:
    def patch(old: Tally, base: Snapshot, changed: frozenset[str]) -> Tally | None:
        if len(changed) > MAX_PATCH:
            return None
        tally = dict(old)  # `old` belongs to the earlier generation
        for path in changed:
            was, now = _tags(base.by_path.get(path)), _tags(snapshot.by_path.get(path))
            for key in was.keys() - now.keys():
                n, first, shown = tally[key]
                if n == 1:
                    del tally[key]
                elif first == path:
                    return None  # the spelling shown came from this note: the next one's needs a count
                else:
                    tally[key] = (n - 1, first, shown)
            for key, shown in now.items():
                n, first, spelling = tally.get(key, (0, path, shown))
                if key in was:
                    n -= 1  # counted already
                if path <= first:  # the first note carrying it now (or still, maybe spelled anew)
                    first, spelling = path, shown
                tally[key] = (n + 1, first, spelling)
        return tally

    return patch


def _count(snapshot: Snapshot, folder: str | None) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    spelling: dict[str, str] = {}
    lo, hi = snapshot.span(folder)
    for e in snapshot.entries[lo:hi]:
        if e.kind != NOTE or not e.tags:
            continue
        if folder == "" and "/" in e.path:
            continue
        for tag in {t.casefold(): t for t in e.tags}.items():
            key, shown = tag
            counts[key] = counts.get(key, 0) + 1
            spelling.setdefault(key, shown)
    return sorted(((spelling[k], n) for k, n in counts.items()), key=lambda kv: (-kv[1], kv[0]))
