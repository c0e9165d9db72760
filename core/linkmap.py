"""Link targets resolved the way Obsidian resolves them, and the backlinks of one note.

A wiki target names a note (`Note`, `Folder/Note`, `Note.md`) or an attachment
(`diagram.png`), case-insensitively. A bare name is the shortest unique match, preferring
the linking note's own folder; a target with a folder part matches a vault path or a path
suffix. Markdown links are relative to the linking note's folder (`/` = vault root).
"""
from __future__ import annotations

import posixpath
from collections.abc import Iterable

from .index import Snapshot
from .model import FOLDER, NOTE, Entry, Link


def _names(snapshot: Snapshot) -> tuple[dict[str, list[str]], dict[str, str]]:
    def build() -> tuple[dict[str, list[str]], dict[str, str]]:
        by_name: dict[str, list[str]] = {}
        by_path: dict[str, str] = {}
        for e in snapshot.entries:
            if e.kind == FOLDER:
                continue
            folded = e.path.casefold()
            by_path[folded] = e.path
            by_name.setdefault(folded.rsplit("/", 1)[-1], []).append(e.path)
        return by_name, by_path

    return snapshot.cached("linkmap.names", build)


def _with_ext(target: str) -> str:
    last = target.rsplit("/", 1)[-1]
    return target if "." in last and not last.endswith(".") else target + ".md"


def _pick(candidates: Iterable[str], source: str) -> str | None:
    found = list(candidates)
    if not found:
        return None
    home = posixpath.dirname(source)
    same = [p for p in found if posixpath.dirname(p) == home]
    return min(same or found, key=lambda p: (p.count("/"), len(p), p))


def resolve(snapshot: Snapshot, source: str, link: Link) -> str | None:
    """The vault path a link in note `source` points to, or None when it is broken."""
    target = link.target.strip()
    if not target:
        return source if link.heading else None  # [[#Heading]] points into the note itself
    by_name, by_path = _names(snapshot)
    if link.kind == "markdown" or (link.kind == "embed" and "/" in target and target.startswith(".")):
        rel = target[1:] if target.startswith("/") else posixpath.join(posixpath.dirname(source), target)
        rel = posixpath.normpath(rel)
        if not rel.startswith(".."):
            hit = by_path.get(rel.casefold()) or by_path.get(_with_ext(rel).casefold())
            if hit:
                return hit
    want = _with_ext(target.lstrip("/")).casefold()
    hit = by_path.get(want)
    if hit:
        return hit
    name = want.rsplit("/", 1)[-1]
    candidates = by_name.get(name, ())
    if "/" in want:
        candidates = [p for p in candidates if p.casefold().endswith("/" + want)]
    return _pick(candidates, source)


def outgoing(snapshot: Snapshot, path: str) -> list[tuple[Link, str | None]]:
    """Every link in the note at `path` with its resolved target (None = broken)."""
    entry = snapshot.get(path)
    if entry is None:
        return []
    return [(link, resolve(snapshot, path, link)) for link in entry.links]


def _by_target_name(snapshot: Snapshot) -> dict[str, tuple[str, ...]]:
    """Notes by the last segment (casefolded, without .md) of each link target they write."""
    def build() -> dict[str, tuple[str, ...]]:
        names: dict[str, list[str]] = {}
        for e in snapshot.entries:
            if e.kind != NOTE or not e.links:
                continue
            for link in e.links:
                last = link.target.rsplit("/", 1)[-1].casefold()
                if last.endswith(".md"):
                    last = last[:-3]
                sources = names.setdefault(last, [])
                if not sources or sources[-1] != e.path:
                    sources.append(e.path)
        return {k: tuple(v) for k, v in names.items()}

    return snapshot.cached("linkmap.by_target_name", build)


def backlinks(snapshot: Snapshot, path: str) -> tuple[str, ...]:
    """Paths of the notes that link to `path` (in path order, each once).

    Only notes that name the target's file in some link are resolved (an index of link
    names, built once per snapshot), so a preview at 100k notes costs milliseconds.
    """
    if snapshot.get(path) is None:
        return ()
    name = path.rsplit("/", 1)[-1].casefold()
    stem = name[:-3] if name.endswith(".md") else name
    index = _by_target_name(snapshot)
    candidates = set(index.get(stem, ()))
    if stem != name:
        candidates.update(index.get(name, ()))
    found = []
    for source in sorted(candidates):
        entry = snapshot.get(source)
        if entry is not None and source != path and _links_to(snapshot, entry, path, name, stem):
            found.append(source)
    return tuple(found)


def _links_to(snapshot: Snapshot, e: Entry, path: str, name: str, stem: str) -> bool:
    for link in e.links:
        last = link.target.rsplit("/", 1)[-1].casefold()
        if last not in (name, stem):
            continue
        if resolve(snapshot, e.path, link) == path:
            return True
    return False
