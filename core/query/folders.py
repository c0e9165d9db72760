"""The folder hierarchy of one snapshot, with note counts, for tree views.

Built from the index (never the disk) once per generation and memoized on the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.model import FOLDER, NOTE


@dataclass(frozen=True, slots=True)
class FolderTree:
    """Child folders of each folder ("" is the vault root) and recursive note counts."""

    children: dict[str, tuple[str, ...]]
    notes: dict[str, int]

    def child_folders(self, folder: str) -> tuple[str, ...]:
        """Direct subfolders of `folder`, in code-point order of path."""
        return self.children.get(folder, ())

    def note_count(self, folder: str) -> int:
        """Notes at or below `folder` ("" = the whole vault)."""
        return self.notes.get(folder, 0)


def _parent(path: str) -> str:
    cut = path.rfind("/")
    return path[:cut] if cut >= 0 else ""


def folder_tree(snapshot: Snapshot) -> FolderTree:
    """The snapshot's folder tree (memoized per generation)."""

    def patch(old: FolderTree, base: Snapshot, changed: frozenset[str]) -> FolderTree | None:
        return old if snapshot.in_place(base) else None  # folders and note counts follow paths only

    return snapshot.cached("folders.tree", lambda: _build(snapshot), patch)


def _build(snapshot: Snapshot) -> FolderTree:
    children: dict[str, list[str]] = {}
    direct: dict[str, int] = {}
    for e in snapshot.entries:
        if e.kind == NOTE:
            parent = _parent(e.path)
            direct[parent] = direct.get(parent, 0) + 1
        elif e.kind == FOLDER:
            children.setdefault(_parent(e.path), []).append(e.path)
    notes = dict(direct)
    for folder, count in direct.items():
        while folder:
            folder = _parent(folder)
            notes[folder] = notes.get(folder, 0) + count
    return FolderTree({k: tuple(v) for k, v in children.items()}, notes)
