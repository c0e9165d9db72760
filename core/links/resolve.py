"""Link targets resolved the way Obsidian resolves them, and the backlinks of one note.

A wiki target names a note (`Note`, `Folder/Note`, `Note.md`) or an attachment
(`diagram.png`), case-insensitively. A bare name is the shortest unique match, preferring
the linking note's own folder; a target with a folder part matches a vault path or a path
suffix; one written `./x` or `../x` is relative to the linking note's folder, as Markdown
links are (`/` = vault root). A name may hold dots (`[[Release v1.2]]`): the name as written
is tried first, then with `.md`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.model import FOLDER, NOTE, Entry, Link

MAX_PATCH = 5000  # changed paths beyond which a table is rebuilt rather than patched


_NAMES_KEY = "linkmap.names"  # the memo of the name table on a snapshot


def names(snapshot: Snapshot) -> dict[str, str | tuple[str, ...]]:
    """Files (notes and attachments) by casefolded name: a bare path for a unique name (most
    are), else a tuple of paths in path order. Exact paths are found through their name too
    (`_exact`): a second table keyed by folded path cost ~15 MB at 100k notes."""

    def build() -> dict[str, str | tuple[str, ...]]:
        by_name: dict[str, str | tuple[str, ...]] = {}
        for e in snapshot.entries:
            if e.kind == FOLDER:
                continue
            name = e.path.rsplit("/", 1)[-1].casefold()
            had = by_name.get(name)
            # most names are unique: a bare path string, not a one-element list (100k lists
            # cost 26 MB and a long walk for every garbage collection)
            by_name[name] = e.path if had is None else (had + (e.path,) if isinstance(had, tuple) else (had, e.path))
        return by_name

    def patch(
        old: dict[str, str | tuple[str, ...]], base: Snapshot, changed: frozenset[str]
    ) -> dict[str, str | tuple[str, ...]] | None:
        if len(changed) > MAX_PATCH:
            return None
        by_name = dict(old)
        for path in changed:
            was, now = base.by_path.get(path), snapshot.by_path.get(path)
            had, has = was is not None and was.kind != FOLDER, now is not None and now.kind != FOLDER
            if had == has:
                continue  # replaced in place (or a folder either way): the names are the same
            name = path.rsplit("/", 1)[-1].casefold()
            paths = [p for p in _candidates(by_name, name) if p != path]
            if has:
                paths = sorted((*paths, path))
            if paths:
                by_name[name] = paths[0] if len(paths) == 1 else tuple(paths)
            else:
                by_name.pop(name, None)
        return by_name

    return snapshot.cached(_NAMES_KEY, build, patch)


def reuse_names(snapshot: Snapshot, previous: Snapshot) -> None:
    """Give `snapshot` the name table of `previous`, for a generation with the same files of the
    same kinds (edits only): the table would be the same."""
    snapshot.cached(_NAMES_KEY, lambda: names(previous))


def _exact(by_name: dict, folded: str) -> str | None:
    """The file whose casefolded path is `folded` (of two that differ only in case, the later
    in path order)."""
    hit = None
    for p in _candidates(by_name, folded.rsplit("/", 1)[-1]):
        if p.casefold() == folded:
            hit = p
    return hit


def warm(snapshot: Snapshot) -> None:
    """Build the name table link resolution reads (~0.1 s at 100k notes, then kept and
    patched), so that the first preview or backlink lookup does not wait for it."""
    names(snapshot)


def _candidates(by_name: dict, name: str) -> tuple[str, ...]:
    """The paths of the files named `name` (casefolded) in a `names` table."""
    found = by_name.get(name, ())
    return (found,) if type(found) is str else found


def _forms(target: str) -> tuple[str, ...]:
    """A target as written, then with `.md` (names may hold dots: `[[Release v1.2]]` is the note
    `Release v1.2.md`, while `[[Books.base]]` is the file `Books.base`)."""
    return (target,) if target.endswith(".md") else (target, target + ".md")


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
    by_name = names(snapshot)
    if link.kind == "markdown" or target.startswith(("./", "../")):
        rel = target[1:] if target.startswith("/") else posixpath.join(posixpath.dirname(source), target)
        rel = posixpath.normpath(rel)
        if not rel.startswith(".."):
            for form in _forms(rel.casefold()):
                hit = _exact(by_name, form)
                if hit:
                    return hit
    forms = _forms(target.lstrip("/").casefold())
    for want in forms:
        hit = _exact(by_name, want)
        if hit:
            return hit
    for want in forms:
        name = want.rsplit("/", 1)[-1]
        candidates = _candidates(by_name, name)
        if "/" in want:
            candidates = tuple(p for p in candidates if p.casefold().endswith("/" + want))
        hit = _pick(candidates, source)
        if hit:
            return hit
    return None


def outgoing(snapshot: Snapshot, path: str) -> list[tuple[Link, str | None]]:
    """Every link in the note at `path` with its resolved target (None = broken)."""
    entry = snapshot.get(path)
    if entry is None:
        return []
    return [(link, resolve(snapshot, path, link)) for link in entry.links]


def link_key(link: Link) -> str:
    """The last segment of a link's target, casefolded, without `.md`: the name a link can
    only resolve through (adding or removing a file of that name may change where it points)."""
    last = link.target.rsplit("/", 1)[-1].casefold()
    return last[:-3] if last.endswith(".md") else last


def file_key(path: str) -> str:
    """The link key of a file: its name, casefolded, without `.md`."""
    name = path.rsplit("/", 1)[-1].casefold()
    return name[:-3] if name.endswith(".md") else name


def by_target_name(snapshot: Snapshot) -> dict[str, str | tuple[str, ...]]:
    """Notes by the link key of each link target they write (sources in path order; a single
    source is a bare path string, as in `names`). Read it through `link_sources`."""

    def build() -> dict[str, str | tuple[str, ...]]:
        names: dict[str, list[str]] = {}
        for e in snapshot.entries:
            if e.kind != NOTE or not e.links:
                continue
            for link in e.links:
                sources = names.setdefault(link_key(link), [])
                if not sources or sources[-1] != e.path:
                    sources.append(e.path)
        return {k: v[0] if len(v) == 1 else tuple(v) for k, v in names.items()}

    def keys(e: Entry | None) -> set[str]:
        return {link_key(link) for link in e.links} if e is not None and e.kind == NOTE else set()

    def patch(
        old: dict[str, str | tuple[str, ...]], base: Snapshot, changed: frozenset[str]
    ) -> dict[str, str | tuple[str, ...]] | None:
        if len(changed) > MAX_PATCH:
            return None
        names = dict(old)
        for path in changed:
            was, now = keys(base.by_path.get(path)), keys(snapshot.by_path.get(path))
            for key in was | now:
                rest = [p for p in _candidates(names, key) if p != path]
                if key in now:
                    rest = sorted((*rest, path))
                if rest:
                    names[key] = rest[0] if len(rest) == 1 else tuple(rest)
                else:
                    names.pop(key, None)
        return names

    return snapshot.cached("linkmap.by_target_name", build, patch)


def link_sources(snapshot: Snapshot, key: str) -> tuple[str, ...]:
    """Paths of the notes with a link whose link key is `key` (path order)."""
    return _candidates(by_target_name(snapshot), key)


def backlinks(snapshot: Snapshot, path: str) -> tuple[str, ...]:
    """Paths of the notes that link to `path` (in path order, each once).

    Only notes that name the target's file in some link are resolved (an index of link
    names, built once per snapshot), so a preview at 100k notes costs milliseconds.
    """
    if snapshot.get(path) is None:
        return ()
    name = path.rsplit("/", 1)[-1].casefold()
    stem = file_key(path)
    candidates = set(link_sources(snapshot, stem))
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
