"""The link graph of one snapshot: outgoing links, backlinks, broken links and orphan notes.

Targets are resolved by `core.links.resolve.resolve`, the one resolver the preview and the MCP
tools use too (Obsidian's rules: exact vault path with or without `.md`, a path suffix,
else the file name case-insensitively, preferring the linking note's folder, then the
shortest path). The graph is built lazily, once per snapshot (`Snapshot.cached`); when only
note contents changed since the previous graph, the links of unchanged notes are reused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.links import resolve as linkmap
from vaultwatch.core.links.resolve import resolve
from vaultwatch.core.model import FOLDER, NOTE, Entry, Link

GRAPH_KEY = "links.graph"


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    """One link as written in `source`, and the vault path it resolves to (None: broken)."""

    source: str
    link: Link
    target: str | None
    # what the link names and is not there: "file" (target None), "heading" or "block"
    # (the note exists without that heading or block id), else None
    missing: str | None = None

    @property
    def broken(self) -> bool:
        return self.missing is not None

    def as_json(self) -> dict:
        """{source, target (as written), kind, heading, alias, resolved (vault path or null),
        missing (null, "file", "heading" or "block")}."""
        link = self.link
        return {
            "source": self.source,
            "target": link.target,
            "kind": link.kind,
            "heading": link.heading,
            "alias": link.alias,
            "resolved": self.target,
            "missing": self.missing,
        }


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
        return {
            "path": self.path,
            "outgoing": [r.as_json() for r in self.outgoing],
            "backlinks": [r.as_json() for r in self.backlinks],
            "broken": [r.as_json() for r in self.broken],
            "generation": self.generation,
        }


class LinkGraph:
    """Resolved links of every note in one snapshot, with their reverse index.

    Built from scratch when the set of paths changed (a new or removed note can change how
    any link resolves); patched from `previous` when only contents changed, which costs in
    proportion to the notes that changed, not to the vault.

    Held compactly: per note only the vault path each of its links resolves to
    (`None`: no file), aligned with `Entry.links`, and per linked file the notes linking to it;
    a `ResolvedLink` is made when asked for (`checked`, `report`). A ResolvedLink per link was 32.8 MB
    traced at 100k notes (16 MB now), kept for the TUI's broken-link count.
    Broken and anchored links (few) are kept as ResolvedLinks.
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

    def _links_of(self, path: str) -> tuple[ResolvedLink, ...]:
        """The outgoing links of the note at `path` as resolved (no #part checked)."""
        targets = self._targets.get(path)
        if targets is None:
            return ()
        return tuple(
            ResolvedLink(path, link, t, None if t is not None else "file")
            for link, t in zip(self.by_path[path].links, targets, strict=True)
        )

    def _backlinks(self, path: str) -> tuple[ResolvedLink, ...]:
        """Links in other notes that resolve to `path`, in source order (each source's in note order)."""
        out: list[ResolvedLink] = []
        for src in self._sources.get(path, ()):
            out.extend(
                ResolvedLink(src, link, t)
                for link, t in zip(self.by_path[src].links, self._targets[src], strict=True)
                if t == path
            )
        return tuple(out)

    @property
    def outgoing(self) -> dict[str, tuple[ResolvedLink, ...]]:
        """Every note with links: its resolved links (built whole on each call: for inspection)."""
        return {p: self._links_of(p) for p in self._targets}

    @property
    def incoming(self) -> dict[str, tuple[ResolvedLink, ...]]:
        """Every linked file: the links to it (built whole on each call: for inspection)."""
        return {p: self._backlinks(p) for p in self._sources}

    def checked(self, path: str) -> tuple[ResolvedLink, ...]:
        """The outgoing links of the note at `path`, a #heading or #^block one checked against
        the linked note as it is in this snapshot (`missing` "heading" or "block" when absent)."""
        out = self._links_of(path)
        if not any(_anchored(r) for r in out):
            return out
        return tuple(
            r if not _anchored(r) or (m := self._miss(r)) is None else ResolvedLink(r.source, r.link, r.target, m)
            for r in out
        )

    def _miss(self, r: ResolvedLink) -> str | None:
        return missing_part(self.snapshot, r.target, r.link)

    def anchor_sources(self) -> set[str]:
        """Notes with a link whose linked note lacks the heading or block id it names."""
        return {r.source for r in self.anchored if self._miss(r) is not None}

    def _resolve(self, e: Entry) -> tuple[str | None, ...]:
        snap, src = self.snapshot, e.path
        return tuple([resolve(snap, src, link) for link in e.links])

    def _build(self) -> None:
        targets: dict[str, tuple[str | None, ...]] = {}
        sources: dict[str, list[str]] = {}
        broken: list[ResolvedLink] = []
        anchored: list[ResolvedLink] = []
        for e in self.snapshot.entries:  # path order, so every list below is in source order
            if e.kind != NOTE or not e.links:
                continue
            src = e.path
            resolved = targets[src] = self._resolve(e)
            for link, t in zip(e.links, resolved, strict=True):
                if t is None:
                    broken.append(ResolvedLink(src, link, None, "file"))
                    continue
                if link.heading is not None:
                    anchored.append(ResolvedLink(src, link, t))
                if t != src:
                    had = sources.setdefault(t, [])
                    if not had or had[-1] != src:
                        had.append(src)
        self._targets = targets
        self._sources = {k: tuple(v) for k, v in sources.items()}
        self.broken = tuple(broken)
        self.anchored = tuple(anchored)

    def _patch(self, previous: LinkGraph, changed: list, removed: Sequence[str] = ()) -> None:
        targets = dict(previous._targets)
        sources = dict(previous._sources)
        touched: set[str] = set()
        new_by_target: dict[str, list[str]] = {}
        new_broken: list[ResolvedLink] = []
        new_anchored: list[ResolvedLink] = []
        changed_paths = set(removed)
        for path in removed:  # notes gone: their links go with them
            for t in targets.pop(path, ()):
                if t is not None and t != path:
                    touched.add(t)
            if path in sources:  # whoever linked here was resolved again (same link key)
                touched.add(path)
        for e in changed:
            src = e.path
            changed_paths.add(src)
            for t in targets.pop(src, ()):
                if t is not None and t != src:
                    touched.add(t)
            if not e.links:
                continue
            resolved = targets[src] = self._resolve(e)
            for link, t in zip(e.links, resolved, strict=True):
                if t is None:
                    new_broken.append(ResolvedLink(src, link, None, "file"))
                    continue
                if link.heading is not None:
                    new_anchored.append(ResolvedLink(src, link, t))
                if t != src:
                    touched.add(t)
                    had = new_by_target.setdefault(t, [])
                    if not had or had[-1] != src:
                        had.append(src)
        for target in touched:
            merged = [s for s in sources.get(target, ()) if s not in changed_paths]
            merged.extend(new_by_target.get(target, ()))
            merged.sort()
            if merged:
                sources[target] = tuple(merged)
            else:
                sources.pop(target, None)
        broken = [r for r in previous.broken if r.source not in changed_paths] + new_broken
        broken.sort(key=_source)
        anchored = [r for r in previous.anchored if r.source not in changed_paths] + new_anchored
        anchored.sort(key=_source)
        self._targets = targets
        self._sources = sources
        self.broken = tuple(broken)  # links to no file (see `checked` for missing headings)
        self.anchored = tuple(anchored)  # links with a #part that resolve to a file

    def report(self, path: str) -> LinkReport:
        """Outgoing links, backlinks and broken links of the note (or attachment) at `path`."""
        out = self.checked(path)
        return LinkReport(path, out, self._backlinks(path), tuple(r for r in out if r.broken), self.snapshot.generation)

    def orphans(self) -> tuple[str, ...]:
        """Notes no other note links to (no backlinks), in path order."""
        return tuple(e.path for e in self.snapshot.entries if e.kind == NOTE and e.path not in self._sources)


def _source(r: ResolvedLink) -> str:
    return r.source


def _anchored(r: ResolvedLink) -> bool:
    return r.target is not None and r.link.heading is not None


_PUNCTUATION = re.compile(r"[^\w\s]+|_+")


def anchor_key(text: str) -> str:
    """A heading (or a link's #part) as they are matched: punctuation (anything but letters,
    digits and spaces) read as a space, runs of spaces as one, case folded. Obsidian's
    stripHeading "normalizes headings for link matching by stripping out special characters
    and shrinking consecutive spaces"; its own help vault links "#How large can each remote
    vault be" to the heading "How large can each remote vault be?" and "#hasTag" to
    "`hasTag()`"."""
    return " ".join(_PUNCTUATION.sub(" ", text).split()).casefold()


_SLUG_DROP = re.compile(r"[^\w\- ]")


def _slug(text: str) -> str:
    """GitHub's anchor of a heading (lower case, spaces as '-', punctuation dropped): Markdown
    links written for other tools (`[x](Note.md#my-heading)`) use it."""
    return _SLUG_DROP.sub("", text.strip().casefold()).replace(" ", "-")


def missing_part(snapshot: Snapshot, target: str | None, link: Link) -> str | None:
    """ "heading" or "block" when `link`, resolved to `target`, names a #part the note there
    lacks: the judgement of `LinkGraph.checked` and so of the Broken tab, which the preview
    draws links by. None with no #part, no target or a target that is no note."""
    entry = snapshot.by_path.get(target) if target is not None else None
    if entry is None or entry.kind != NOTE:
        return None  # an attachment's #part (a PDF's #page=3) is not checked
    return anchor_missing(entry.anchors, link)


def anchor_missing(anchors: str, link: Link) -> str | None:
    """ "heading" or "block" when `link`'s #part names no heading or block id among a note's
    `anchors` (Entry.anchors), else None. `[[N#A#B]]` names heading B (under A); `#^id` a block."""
    part = link.heading
    if not part:
        return None
    lines = anchors.split("\n") if anchors else []
    if part.startswith("^"):
        want = part[1:].strip().casefold()
        return None if any(a[:1] == "^" and a[1:].casefold() == want for a in lines) else "block"
    last = part.rsplit("#", 1)[-1]
    want = anchor_key(last)
    if not want:
        return None
    if any(anchor_key(a) == want for a in lines if a[:1] != "^"):
        return None
    if link.kind != "wiki" and any(_slug(a) == last.strip().casefold() for a in lines if a[:1] != "^"):
        return None
    return "heading"


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
    return snapshot.cached(
        GRAPH_KEY,
        lambda: LinkGraph(snapshot, previous),
        None if previous is not None else lambda old, base, changed: LinkGraph(snapshot, old),
    )


def unresolved_by_note(snapshot: Snapshot) -> dict[str, tuple[ResolvedLink, ...]]:
    """Notes with unresolved links, each with those links in note order; in path order.
    Unresolved: the linked file does not exist (Obsidian's "unresolved links", `missing`
    "file"), or the linked note has no such heading or block id ("heading", "block").
    Memoized per snapshot."""

    def build() -> dict[str, tuple[ResolvedLink, ...]]:
        g = graph(snapshot)
        sources = {r.source for r in g.broken} | g.anchor_sources()
        out = {}
        for p in sorted(sources):
            rows = tuple(r for r in g.checked(p) if r.broken)
            if rows:
                out[p] = rows
        return out

    return snapshot.cached("links.unresolved_by_note", build)
