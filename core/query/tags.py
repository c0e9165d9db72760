"""Tag counts of one snapshot (frontmatter and inline tags), for tag listings and completion."""

from __future__ import annotations

from vaultwatch.core.disk.paths import normalize_folder
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.model import NOTE


def tag_counts(snapshot: Snapshot, folder: str | None = None) -> list[tuple[str, int]]:
    """(tag, number of notes carrying it), most used first, then by tag.

    Tags compare case-insensitively, as the `tags` filter does; each is reported with the
    spelling of its first note in path order. `folder` scopes the count like a listing's
    folder (None = the whole vault, "" = root-level notes, else that folder and below).
    Memoized per generation for the whole-vault count. Raises PathError for a bad folder.
    """
    folder = normalize_folder(folder)
    if folder is None:
        return snapshot.cached("tags.counts", lambda: _count(snapshot, None))
    return _count(snapshot, folder)


def tag_counts_ready(snapshot: Snapshot) -> bool:
    """Whether the whole vault's tag counts are at hand for `snapshot` (no count of every note due)."""
    return snapshot.derived("tags.counts") is not None


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
