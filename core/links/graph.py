"""The link graph of one snapshot: outgoing links, backlinks, broken links and orphan notes.

Targets are resolved by `core.links.resolve.resolve`, the one resolver the preview and the MCP
tools use too (Obsidian's rules: exact vault path with or without `.md`, a path suffix,
else the file name case-insensitively, preferring the linking note's folder, then the
shortest path). The graph is built lazily, once per snapshot (`Snapshot.cached`); when only
note contents changed since the previous graph, the links of unchanged notes are reused.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.index.snapshot import Snapshot
from core.links import resolve as linkmap
from core.links.resolve import resolve
from core.model import FOLDER, NOTE, Link

GRAPH_KEY = "links.graph"


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    """One link as written in `source`, and the vault path it resolves to (None: broken)."""

    source: str
    link: Link
    target: str | None

    @property
    def broken(self) -> bool:
        return self.target is None

    def as_json(self) -> dict:
        """{source, target (as written), kind, heading, alias, resolved (vault path or null)}."""
        link = self.link
        return {"source": self.source, "target": link.target, "kind": link.kind, "heading": link.heading,
                "alias": link.alias, "resolved": self.target}


@dataclass(frozen=True, slots=True)
class LinkReport:
    """Everything about one note's links.

    outgoing: its links in note order (embeds and Markdown links included), each resolved;
    backlinks: links in other notes that resolve to it, by source path;
    broken: the outgoing links that resolve to nothing.
    """

    path: str
    outgoing: tuple[ResolvedLink, ...]
    backlinks: tuple[ResolvedLink, ...]
    broken: tuple[ResolvedLink, ...]
    generation: int

    def as_json(self) -> dict:
        """{path, outgoing: [...], backlinks: [...], broken: [...], generation} with ResolvedLink.as_json rows."""
        return {"path": self.path, "outgoing": [r.as_json() for r in self.outgoing],
                "backlinks": [r.as_json() for r in self.backlinks], "broken": [r.as_json() for r in self.broken],
                "generation": self.generation}


class LinkGraph:
    """Resolved links of every note in one snapshot, with their reverse index.

    Built from scratch when the set of paths changed (a new or removed note can change how
    any link resolves); patched from `previous` when only contents changed, which costs in
    proportion to the notes that changed, not to the vault.
    """

    def __init__(self, snapshot: Snapshot, previous: LinkGraph | None = None) -> None:
        self.snapshot = snapshot
        self.paths = snapshot.paths
        self.by_path = snapshot.by_path
        delta = _delta(previous, snapshot) if previous is not None else None
        if previous is None or delta is None:
            self._build()
            return
        changed, removed, keys = delta
        linkmap.by_target_name(snapshot)  # kept current each generation: patched, not rebuilt
        if not keys:
            # same files, same kinds: the resolver's name tables are the previous snapshot's
            linkmap.reuse_names(snapshot, previous.snapshot)
        else:
            # a file of these link keys came or went: every link through such a name may now
            # point elsewhere, so those notes are resolved again along with the edited ones
            again = {p for k in keys for p in linkmap.link_sources(snapshot, k)}
            again.difference_update(e.path for e in changed)
            changed = changed + [self.by_path[p] for p in sorted(again)]
        self._patch(previous, changed, removed)

    def _resolve(self, e) -> tuple[ResolvedLink, ...]:
        return tuple(ResolvedLink(e.path, link, resolve(self.snapshot, e.path, link)) for link in e.links)

    def _build(self) -> None:
        outgoing: dict[str, tuple[ResolvedLink, ...]] = {}
        for e in self.snapshot.entries:
            if e.kind == NOTE and e.links:
                outgoing[e.path] = self._resolve(e)
        self.outgoing = outgoing
        incoming: dict[str, list[ResolvedLink]] = {}
        broken: list[ResolvedLink] = []
        for links in outgoing.values():  # path order, so every list below is in source order
            for r in links:
                if r.target is None:
                    broken.append(r)
                elif r.target != r.source:
                    incoming.setdefault(r.target, []).append(r)
        self.incoming = {k: tuple(v) for k, v in incoming.items()}
        self.broken = tuple(broken)

    def _patch(self, previous: LinkGraph, changed: list, removed: Sequence[str] = ()) -> None:
        outgoing = dict(previous.outgoing)
        incoming = dict(previous.incoming)
        touched: set[str] = set()
        new_by_target: dict[str, list[ResolvedLink]] = {}
        new_broken: list[ResolvedLink] = []
        changed_paths = set(removed)
        for path in removed:  # notes gone: their links go with them
            for r in outgoing.pop(path, ()):
                if r.target is not None and r.target != r.source:
                    touched.add(r.target)
            if path in incoming:  # whoever linked here was resolved again (same link key)
                touched.add(path)
        for e in changed:
            changed_paths.add(e.path)
            for r in outgoing.pop(e.path, ()):
                if r.target is not None and r.target != r.source:
                    touched.add(r.target)
            if not e.links:
                continue
            links = outgoing[e.path] = self._resolve(e)
            for r in links:
                if r.target is None:
                    new_broken.append(r)
                elif r.target != r.source:
                    touched.add(r.target)
                    new_by_target.setdefault(r.target, []).append(r)
        for target in touched:
            merged = [r for r in incoming.get(target, ()) if r.source not in changed_paths]
            merged.extend(new_by_target.get(target, ()))
            merged.sort(key=_source)  # stable: one source's links stay in note order
            if merged:
                incoming[target] = tuple(merged)
            else:
                incoming.pop(target, None)
        broken = [r for r in previous.broken if r.source not in changed_paths] + new_broken
        broken.sort(key=_source)
        self.outgoing = outgoing
        self.incoming = incoming
        self.broken = tuple(broken)

    def report(self, path: str) -> LinkReport:
        """Outgoing links, backlinks and broken links of the note (or attachment) at `path`."""
        out = self.outgoing.get(path, ())
        return LinkReport(path, out, self.incoming.get(path, ()), tuple(r for r in out if r.target is None),
                          self.snapshot.generation)

    def orphans(self) -> tuple[str, ...]:
        """Notes no other note links to (no backlinks), in path order."""
        return tuple(e.path for e in self.snapshot.entries if e.kind == NOTE and e.path not in self.incoming)


def _source(r: ResolvedLink) -> str:
    return r.source


MAX_DELTA = 5000  # changed notes beyond which the graph is rebuilt rather than patched


def _delta(previous: LinkGraph, snapshot: Snapshot) -> tuple[list, list[str], set[str]] | None:
    """What changed since `previous`'s snapshot: (notes added or edited, note paths removed,
    link keys of files added or removed), or None when rebuilding is simpler (a path changed
    kind, or too much changed)."""
    before = previous.by_path
    if previous.paths is snapshot.paths:  # same paths: only contents can differ
        changed = [e for e in snapshot.entries if before.get(e.path) is not e]
        if any(e.kind != before[e.path].kind for e in changed):
            return None  # a file became a folder (or back): names resolve differently
        if len(changed) > MAX_DELTA:
            return None
        return [e for e in changed if e.kind == NOTE], [], set()
    now = snapshot.by_path
    changed, keys = [], set()
    for e in snapshot.entries:
        was = before.get(e.path)
        if was is e:
            continue
        if was is not None and was.kind != e.kind:
            return None
        if was is None and e.kind != FOLDER:
            keys.add(linkmap.file_key(e.path))
        if e.kind == NOTE:
            changed.append(e)
    removed = []
    for p in previous.paths:
        if p not in now:
            was = before[p]
            if was.kind != FOLDER:
                keys.add(linkmap.file_key(p))
            if was.kind == NOTE:
                removed.append(p)
    if len(changed) + len(removed) > MAX_DELTA:
        return None
    return changed, removed, keys


def graph(snapshot: Snapshot, previous: LinkGraph | None = None) -> LinkGraph:
    """The link graph of `snapshot`, built on first use and memoized on the snapshot; patched
    from `previous`, or else from the graph of the snapshot this one was derived from."""
    return snapshot.cached(GRAPH_KEY, lambda: LinkGraph(snapshot, previous),
                           None if previous is not None else lambda old, base, changed: LinkGraph(snapshot, old))


def unresolved_by_note(snapshot: Snapshot) -> dict[str, tuple[ResolvedLink, ...]]:
    """Notes with unresolved links (Obsidian's "unresolved links": the linked file does not
    exist), each with those links in note order; in path order. Memoized per snapshot."""
    def build() -> dict[str, tuple[ResolvedLink, ...]]:
        out: dict[str, list[ResolvedLink]] = {}
        for r in graph(snapshot).broken:
            out.setdefault(r.source, []).append(r)
        return {k: tuple(v) for k, v in out.items()}

    return snapshot.cached("links.unresolved_by_note", build)
