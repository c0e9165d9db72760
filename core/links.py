"""The link graph of one snapshot: outgoing links, backlinks, broken links and orphan notes.

Targets are resolved by `core.linkmap.resolve`, the one resolver the preview and the MCP
tools use too (Obsidian's rules: exact vault path with or without `.md`, a path suffix,
else the file name case-insensitively, preferring the linking note's folder, then the
shortest path). The graph is built lazily, once per snapshot (`Snapshot.cached`); when only
note contents changed since the previous graph, the links of unchanged notes are reused.
"""
from __future__ import annotations

from dataclasses import dataclass

from .index import Snapshot
from .linkmap import resolve
from .model import NOTE, Link

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
    """Resolved links of every note in one snapshot, with their reverse index."""

    def __init__(self, snapshot: Snapshot, previous: LinkGraph | None = None) -> None:
        self.snapshot = snapshot
        self.paths = snapshot.paths
        self.by_path = snapshot.by_path
        reuse = previous is not None and previous.paths is snapshot.paths
        prev_by_path = previous.by_path if reuse else {}
        prev_out = previous.outgoing if reuse else {}
        outgoing: dict[str, tuple[ResolvedLink, ...]] = {}
        for e in snapshot.entries:
            if e.kind != NOTE or not e.links:
                continue
            if reuse and prev_by_path.get(e.path) is e:
                outgoing[e.path] = prev_out[e.path]
                continue
            outgoing[e.path] = tuple(ResolvedLink(e.path, link, resolve(snapshot, e.path, link))
                                     for link in e.links)
        self.outgoing = outgoing
        incoming: dict[str, list[ResolvedLink]] = {}
        broken: list[ResolvedLink] = []
        for links in outgoing.values():
            for r in links:
                if r.target is None:
                    broken.append(r)
                elif r.target != r.source:
                    incoming.setdefault(r.target, []).append(r)
        self.incoming = {k: tuple(sorted(v, key=lambda r: r.source)) for k, v in incoming.items()}
        self.broken = tuple(sorted(broken, key=lambda r: r.source))

    def report(self, path: str) -> LinkReport:
        """Outgoing links, backlinks and broken links of the note (or attachment) at `path`."""
        out = self.outgoing.get(path, ())
        return LinkReport(path, out, self.incoming.get(path, ()), tuple(r for r in out if r.target is None),
                          self.snapshot.generation)

    def orphans(self) -> tuple[str, ...]:
        """Notes no other note links to (no backlinks), in path order."""
        return tuple(e.path for e in self.snapshot.entries if e.kind == NOTE and e.path not in self.incoming)


def graph(snapshot: Snapshot, previous: LinkGraph | None = None) -> LinkGraph:
    """The link graph of `snapshot`, built on first use and memoized on the snapshot."""
    return snapshot.cached(GRAPH_KEY, lambda: LinkGraph(snapshot, previous))
