"""Link resolution and rewriting for renames and moves, the way Obsidian does it.

When notes, attachments or folders move, every link that pointed at a moved file is
rewritten to point at its new location, and every link whose meaning the move would change
(a bare `[[Name]]` that a same-named file would now make ambiguous) is rewritten to keep
pointing where it pointed. Links that were already ambiguous are left alone and reported.

Resolution (case-insensitive, like Obsidian; `.md` may be omitted for notes):
1. Markdown links, and wiki links starting with `./` or `../`, first resolve relative to
   the linking note's folder.
2. Then as a vault path (`[[Projects/Plan]]`, `[t](/Projects/Plan.md)`).
3. Then by file name (`[[Plan]]`), or, for a partial path (`[[Sub/Plan]]`), by path suffix.
   Of several matches, the one in the linking note's own folder wins; otherwise the link is
   ambiguous (core.links.resolve then guesses the shortest path for display; a rename does not
   guess: it leaves the link alone and reports it).

Rewriting keeps the link's style: a bare name stays a bare name while it is unambiguous
(else it becomes the full vault path, Obsidian's "shortest path when possible"), a path
stays a path, a relative Markdown link stays relative, `.md` is kept or omitted as it was,
percent-encoding and `<...>` are kept; headings (`#Heading`, `#^block`), aliases (`|alias`),
embeds (`![[...]]`) and link titles are preserved; only the path part of each link changes.
Links are found by core.markdown.mdlex, the index's own reader: links in code (fenced, indented, in
callouts and lists, code spans) and comments are not links and are never touched; reference
definitions (`[ref]: old.md`) are rewritten like inline Markdown links. Wiki links inside
frontmatter strings (`up: "[[Plan]]"`) are rewritten too, as Obsidian does for properties.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from vaultwatch.core.markdown import mdlex
from vaultwatch.core.markdown.sections import frontmatter_span
from vaultwatch.core.model import NOTE

_SAFE = "/-._~!$&'*+,;=:@"


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One link in a note's text; [start, end) is the span of its path part as written."""

    start: int
    end: int
    raw: str  # the path part as written (percent-encoding and <> included for Markdown)
    target: str  # the decoded path part
    markdown: bool
    in_frontmatter: bool = False


class LinkIndex:
    """The vault's files (notes and attachments) indexed for Obsidian-style link resolution."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = set(files)
        self._lower: dict[str, list[str]] = {}
        self._names: dict[str, list[str]] = {}
        for p in self.files:
            self._lower.setdefault(p.lower(), []).append(p)
            self._names.setdefault(p.rsplit("/", 1)[-1].lower(), []).append(p)

    def moved(self, moves: Mapping[str, str]) -> LinkIndex:
        """The index after the given moves (old path -> new path)."""
        return LinkIndex(moves.get(p, p) for p in self.files)

    def _exact(self, path: str) -> list[str]:
        if path in self.files:
            return [path]
        return sorted(self._lower.get(path.lower(), ()))

    @staticmethod
    def _forms(target: str) -> list[str]:
        return [target] if target.lower().endswith(".md") else [target, target + ".md"]

    def resolve(self, target: str, source: str, markdown: bool) -> tuple[list[str], str]:
        """(candidate paths, how) for a link written in note `source`; resolved when exactly one.

        `how` is "relative", "absolute", "name" or "suffix": how the link text found its
        target, which is also the style its rewrite keeps.
        """
        target = target.strip()
        if not target:
            return [], "name"
        absolute = target.startswith("/")
        clean = target.lstrip("/")
        if not absolute and (markdown or target.startswith(("./", "../"))):
            folder = posixpath.dirname(source)
            rel = posixpath.normpath(posixpath.join(folder, clean)) if folder else posixpath.normpath(clean)
            if not rel.startswith("../") and rel not in ("..", "."):
                for form in self._forms(rel):
                    hits = self._exact(form)
                    if hits:
                        return hits, ("relative" if folder else "absolute")
            if target.startswith(("./", "../")):
                return [], "relative"
        for form in self._forms(clean):
            hits = self._exact(form)
            if hits:
                return hits, "absolute"
        if absolute:
            return [], "absolute"
        found: dict[str, None] = {}
        if "/" not in clean:
            how = "name"
            for form in self._forms(clean):
                found.update(dict.fromkeys(self._names.get(form.lower(), ())))
        else:
            how = "suffix"
            for form in self._forms(clean):
                tail = "/" + form.lower()
                for p in self._names.get(form.rsplit("/", 1)[-1].lower(), ()):
                    if p.lower().endswith(tail):
                        found[p] = None
        if len(found) > 1:  # Obsidian prefers a match in the linking note's own folder
            home = posixpath.dirname(source)
            same = [p for p in found if posixpath.dirname(p) == home]
            if len(same) == 1:
                return same, how
        return sorted(found), how


def find_links(text: str, frontmatter: bool = True) -> list[Occurrence]:
    """Every wiki link, embed, local Markdown link and reference definition in a note, in text
    order, as core.markdown.mdlex reads them (the index's reader: code and comments excluded).

    With `frontmatter`, wiki links inside the frontmatter block's strings are included.
    """
    span = frontmatter_span(text)
    body = span.body_start if span is not None else 0
    out: list[Occurrence] = []
    if frontmatter and span is not None:
        for t in mdlex.wiki_links(text[span.yaml_start : span.yaml_end], span.yaml_start):
            if t.raw:
                out.append(Occurrence(t.start, t.end, t.raw, t.target, False, True))
    rest = text[body:] if body else text
    if "[" not in rest:
        return out
    for t in mdlex.links(mdlex.masked(rest), body):
        if t.raw:
            out.append(Occurrence(t.start, t.end, t.raw, t.target, t.markdown))
    return out


def _show(path: str, keep_md: bool) -> str:
    return path[:-3] if path.lower().endswith(".md") and not keep_md else path


def _encode_like(raw: str, path: str, angle: bool) -> str | None:
    if angle:
        return None if any(c in path for c in "<>\n") else path
    if "%" in raw or any(c in path for c in " ()<>#%?"):
        return quote(path, safe=_SAFE)
    return path


def _new_text(occ: Occurrence, how: str, new_path: str, new_source: str, after: LinkIndex, angle: bool) -> str | None:
    """Link text that makes `occ` resolve uniquely to `new_path` from `new_source`, in its old style;
    with the note's `.md` written out when the style without it cannot reach the note (`Budget.md.md`
    would be `[[Budget.md]]`, a note named Budget)."""
    keep_md = occ.target.lower().endswith(".md") or not new_path.lower().endswith(".md")
    found = _new_text_kept(occ, how, new_path, new_source, after, angle, keep_md)
    if found is None and not keep_md:
        found = _new_text_kept(occ, how, new_path, new_source, after, angle, True)
    return found


def _new_text_kept(
    occ: Occurrence, how: str, new_path: str, new_source: str, after: LinkIndex, angle: bool, keep_md: bool
) -> str | None:
    options: list[str] = []
    folder = posixpath.dirname(new_source)
    if how == "name":
        options.append(_show(new_path.rsplit("/", 1)[-1], keep_md))
    elif how == "relative":
        rel = posixpath.relpath(new_path, folder or ".")
        if occ.target.startswith("./") and not rel.startswith("../"):
            rel = "./" + rel
        options.append(_show(rel, keep_md))
    full = _show(new_path, keep_md)
    options.append("/" + full if occ.target.startswith("/") else full)
    if occ.markdown and folder and how != "absolute":
        options.append(_show(posixpath.relpath(new_path, folder), keep_md))
    for option in options:
        cands, _ = after.resolve(option, new_source, occ.markdown)
        if cands == [new_path]:
            return _encode_like(occ.raw, option, angle) if occ.markdown else option
    return None


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The outcome of rewriting one note's links."""

    text: str
    changed: int  # links rewritten
    warnings: tuple[str, ...]


def rewrite_links(
    text: str,
    old_source: str,
    new_source: str,
    moves: Mapping[str, str],
    before: LinkIndex,
    after: LinkIndex,
    frontmatter: bool = True,
) -> Rewrite:
    """Rewrite the links of one note (which lived at `old_source` and now lives at `new_source`)
    so each keeps pointing at the same file after `moves`. With `frontmatter` False, links in
    the frontmatter block are left as they are."""
    replacements: list[tuple[int, int, str]] = []
    warnings: list[str] = []
    for occ in find_links(text, frontmatter):
        cands, how = before.resolve(occ.target, old_source, occ.markdown)
        if len(cands) != 1:
            if len(cands) > 1 and any(c in moves for c in cands):
                line = text.count("\n", 0, occ.start) + 1
                warnings.append(
                    f"{new_source}: line {line}: link {occ.raw!r} is ambiguous ({len(cands)} files match: "
                    f"{', '.join(cands[:4])}); left alone"
                )
            continue
        target = moves.get(cands[0], cands[0])
        now, how_now = after.resolve(occ.target, new_source, occ.markdown)
        if now == [target] and (not occ.markdown or how_now == how):
            continue  # still points there (a Markdown link also the same way: relative stays relative)
        angle = occ.markdown and occ.start > 0 and text[occ.start - 1] == "<"
        new = _new_text(occ, how, target, new_source, after, angle)
        if new is None:
            line = text.count("\n", 0, occ.start) + 1
            warnings.append(
                f"{new_source}: line {line}: link {occ.raw!r} could not be rewritten to point at "
                f"{target!r} unambiguously; left alone"
            )
            continue
        if occ.in_frontmatter and any(c in new for c in "\"'\\"):
            warnings.append(f"{new_source}: frontmatter link {occ.raw!r} left alone (the new name needs YAML quoting)")
            continue
        replacements.append((occ.start, occ.end, new))
    if not replacements:
        return Rewrite(text, 0, tuple(warnings))
    pieces: list[str] = []
    pos = 0
    for start, end, new in replacements:
        pieces.append(text[pos:start])
        pieces.append(new)
        pos = end
    pieces.append(text[pos:])
    return Rewrite("".join(pieces), len(replacements), tuple(warnings))


def _names(paths: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for p in paths:
        name = p.rsplit("/", 1)[-1].lower()
        out.add(name)
        if name.endswith(".md"):
            out.add(name[:-3])
    return out


def _link_name(target: str) -> str:
    if "%" in target:
        target = unquote(target)
    return target.rstrip("/").rpartition("/")[2].strip().lower()


def _frontmatter_mentions(value: object, names: set[str]) -> bool:
    if isinstance(value, str):
        if "[[" not in value:
            return False
        return any(_link_name(t.target) in names for t in mdlex.wiki_links(value))
    if isinstance(value, dict):
        return any(_frontmatter_mentions(v, names) for v in value.values())
    if isinstance(value, list):
        return any(_frontmatter_mentions(v, names) for v in value)
    return False


def candidate_notes(entries: Iterable, moves: Mapping[str, str]) -> Iterator[str]:
    """Paths of the notes whose links a move could affect (a cheap filter over index entries).

    A note qualifies when it moved itself (its relative links change meaning), or when one
    of its links (body or frontmatter) names a file whose name is an old or new name.
    """
    names = _names([*moves.keys(), *moves.values()])
    for e in entries:
        if e.kind == NOTE and (e.path in moves or _names_one(e, names)):
            yield e.path


def naming_notes(entries: Iterable, moves: Mapping[str, str]) -> Iterator[str]:
    """Paths of the notes, moved or not, with a link (body or frontmatter) that names a file by an
    old or new name of `moves` (a cheap filter: a note it yields may link elsewhere by that name)."""
    names = _names([*moves.keys(), *moves.values()])
    for e in entries:
        if e.kind == NOTE and _names_one(e, names):
            yield e.path


def _names_one(e: Any, names: set[str]) -> bool:
    return any(_link_name(link.target) in names for link in e.links) or bool(
        e.frontmatter and _frontmatter_mentions(e.frontmatter, names)
    )


def stranded_notes(entries: Iterable, moves: Mapping[str, str], before: LinkIndex, after: LinkIndex) -> list[str]:
    """Paths of the notes (by index entries) that a rename of `moves` made without rewriting links
    leaves with a link that no longer reaches its file: a link (body or frontmatter) that resolves
    now (`before`) and, read from where its note will be, not to where that file will be (`after`).
    That is a link to a moved file, and a moved note's own link that depends on where the note
    stands (a relative Markdown link, `../Other.md`); a wiki link by name or by path and a link
    from the vault's root still reach their file, as the resolution says. The notes the rewrite
    would change, found as it finds them (candidate_notes' notes, LinkIndex's resolution)."""
    names = _names(moves.keys())
    out: list[str] = []
    for e in entries:
        if e.kind != NOTE:
            continue
        source = moves.get(e.path, e.path)
        moving = e.path in moves
        for target, markdown in _targets(e):
            if not moving and _link_name(target) not in names:
                continue
            found, _ = before.resolve(target, e.path, markdown)
            if len(found) != 1 or not (moving or found[0] in moves):
                continue
            if after.resolve(target, source, markdown)[0] != [moves.get(found[0], found[0])]:
                out.append(e.path)
                break
    return out


def _targets(e: Any) -> Iterator[tuple[str, bool]]:
    """Each link of a note's index entry (its target, and whether it is a Markdown link), its
    frontmatter's wiki links too."""
    for link in e.links:
        yield link.target, link.kind == "markdown"
    if e.frontmatter:
        for value in _strings(e.frontmatter):
            if "[[" in value:
                for t in mdlex.wiki_links(value):
                    yield t.target, False


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def linking_notes(entries: Iterable, path: str, make_index: Callable[[], LinkIndex]) -> list[str]:
    """Notes (by index entries) with a link that resolves to `path` (used to warn on delete).

    `make_index` builds the resolver; it is called only when some link names the file.
    """
    names = _names([path])
    maybe = [
        e
        for e in entries
        if e.kind == NOTE and e.path != path and any(_link_name(link.target) in names for link in e.links)
    ]
    if not maybe:
        return []
    index = make_index()
    out: list[str] = []
    for e in maybe:
        for link in e.links:
            if _link_name(link.target) in names:
                cands, _ = index.resolve(link.target, e.path, link.kind == "markdown")
                if cands == [path]:
                    out.append(e.path)
                    break
    return out


# --- bounds on one rename's work ------------------------------------------------------------

MAX_REWRITE_LINKS = 10_000  # link markers in one note a rename rewrites (as many as core.markdown.parse keeps)
COUNT_ABOVE_BYTES = 40_000  # a smaller note cannot hold that many links ("[[a]]" is 5 bytes)


def link_markers(data: bytes) -> int:
    """An upper bound on a note's links, counted in C: its `[[` and `](` pairs."""
    return data.count(b"[[") + data.count(b"](")


def too_many_links(path: str, n: int) -> str:
    """The refusal of a rename that would rewrite a note with `n` link markers."""
    return (
        f"{path} holds about {n:,} links, over the {MAX_REWRITE_LINKS:,} that one rename rewrites in a "
        "note; nothing was moved: rename with update_links=false (links are then left as they are), or "
        "split the note first"
    )
