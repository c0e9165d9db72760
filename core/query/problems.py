"""What is broken in a vault, one problem a row: the one query behind the TUI's Broken tab and
`vaultwatch links --broken`.

A problem is a link to a heading or block the linked note lacks, an embed of a file that is not
there, frontmatter that does not parse, undecodable bytes, a file the scan skipped, or a link to
a note not written yet. Obsidian treats the last as an ordinary unresolved link (it creates the
note when clicked), so it is its own kind, listed after the real breakage and not counted with
it. Notes in Obsidian's templates folders (the core Templates plugin's, Templater's) are not
judged at all: their `{{date}}` and `<% tp.… %>` placeholders are neither YAML nor links until a
template is applied.

Where a problem is in its note (`line`) is found on request (`locate`), by reading the notes
listed again with the parser's rules: the index keeps no line per link.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from vaultwatch.core.disk.fileopen import note_bytes
from vaultwatch.core.errors import VaultError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.links.graph import ResolvedLink, unresolved_by_note
from vaultwatch.core.model import Entry, Link

# the kinds, in the order they are listed; UNWRITTEN is not breakage (see the module's docstring)
HEADING, BLOCK, EMBED, FRONTMATTER, ENCODING, SKIPPED, UNWRITTEN = (
    "heading",
    "block",
    "embed",
    "frontmatter",
    "encoding",
    "skipped",
    "unwritten",
)
KINDS = (HEADING, BLOCK, EMBED, FRONTMATTER, ENCODING, SKIPPED, UNWRITTEN)
LABELS = {
    HEADING: "missing heading",
    BLOCK: "missing block",
    EMBED: "missing embed",
    FRONTMATTER: "bad frontmatter",
    ENCODING: "not UTF-8",
    SKIPPED: "skipped file",
    UNWRITTEN: "not yet written",
}
_ORDER = {k: i for i, k in enumerate(KINDS)}

TEMPLATES_CONFIG = ".obsidian/templates.json"  # the core Templates plugin: {"folder": "Templates"}
TEMPLATER_CONFIG = ".obsidian/plugins/templater-obsidian/data.json"  # {"templates_folder": "..."}


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong in one file. `line`: 1-based, in the file as it is on disk (None: not
    located yet, or nowhere in particular); `link`: the link at fault, for the link kinds."""

    path: str
    kind: str
    message: str
    link: Link | None = None
    line: int | None = None

    @property
    def broken(self) -> bool:
        """Real breakage (everything but a link to a note not yet written)."""
        return self.kind != UNWRITTEN

    def as_json(self) -> dict:
        """{path, kind, message, line, link: {target, kind, heading, alias} or null}."""
        link = self.link
        return {
            "path": self.path,
            "kind": self.kind,
            "message": self.message,
            "line": self.line,
            "link": None
            if link is None
            else {"target": link.target, "kind": link.kind, "heading": link.heading, "alias": link.alias},
        }


def template_folders(root: str) -> tuple[str, ...]:
    """The vault's templates folders (vault paths, no slashes at the ends), from Obsidian's
    settings: the core Templates plugin's and Templater's. A missing or unreadable setting names
    none; a folder that is the whole vault ("" or "/") is ignored (it would exempt everything)."""
    found: list[str] = []
    for rel, key in ((TEMPLATES_CONFIG, "folder"), (TEMPLATER_CONFIG, "templates_folder")):
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                value = json.load(f).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, str):
            folder = value.strip().strip("/")
            if folder and folder not in found:
                found.append(folder)
    return tuple(found)


def in_folders(path: str, folders: Sequence[str]) -> bool:
    """True when `path` is inside one of `folders` (case-sensitive, as the vault's paths are)."""
    return any(path.startswith(folder + "/") for folder in folders)


def broken_frontmatter(entry: Entry, folders: Sequence[str]) -> bool:
    """True when the note's frontmatter does not parse and the note is no template (`folders`: the
    vault's templates folders, `template_folders`): a template's `{{date}}` placeholders are not YAML
    until it is applied, so the lists, like the Broken tab and the counts, do not call it broken."""
    return entry.frontmatter_error is not None and not in_folders(entry.path, folders)


def shown_link(link: Link) -> str:
    """A link as the person wrote it, near enough: `[[Note#Heading]]`, `![[image.png]]`, `(path.md)`."""
    part = f"#{link.heading}" if link.heading else ""
    if link.kind == "markdown":
        return f"({link.target}{part})"
    return ("!" if link.kind == "embed" else "") + f"[[{link.target}{part}]]"


def link_problem(r: ResolvedLink) -> Problem:
    """The problem an unresolved link is (core.links.graph.unresolved_by_note's rows): a missing
    heading, block or embedded file, or a note not yet written."""
    link = r.link
    if r.missing == HEADING or r.missing == BLOCK:
        what = "heading" if r.missing == HEADING else "block"
        return Problem(r.source, r.missing, f"{shown_link(link)}: {r.target} has no such {what}", link)
    if link.kind == "embed":
        return Problem(r.source, EMBED, f"{shown_link(link)}: no such file", link)
    return Problem(r.source, UNWRITTEN, f"{shown_link(link)}: no note yet", link)


_AT_LINE = re.compile(r"at line (\d+)")


def _note_problems(snapshot: Snapshot, path: str, links: Iterable[ResolvedLink]) -> list[Problem]:
    out = [link_problem(r) for r in links]
    entry = snapshot.get(path)
    if entry is not None and entry.frontmatter_error:
        m = _AT_LINE.search(entry.frontmatter_error)
        out.append(Problem(path, FRONTMATTER, entry.frontmatter_error, line=int(m.group(1)) if m else 1))
    if entry is not None and entry.decode_error:
        out.append(Problem(path, ENCODING, "not valid UTF-8: undecodable bytes were replaced"))
    return out


def vault_problems(snapshot: Snapshot, root: str) -> tuple[Problem, ...]:
    """Every problem of the vault at `root` as indexed in `snapshot`: by kind (KINDS' order),
    then path, each note's links in note order. Notes in the templates folders are left out.
    Memoized per snapshot (and templates folders)."""
    folders = template_folders(root)

    def build() -> tuple[Problem, ...]:
        unresolved = unresolved_by_note(snapshot)
        paths = set(unresolved)
        paths.update(e.path for e in snapshot.entries if e.frontmatter_error or e.decode_error)
        rows: list[Problem] = []
        for path in sorted(paths):
            if not in_folders(path, folders):
                rows.extend(_note_problems(snapshot, path, unresolved.get(path, ())))
        rows.extend(Problem(s.path, SKIPPED, s.reason) for s in snapshot.skipped if not in_folders(s.path, folders))
        # stable: within a kind, path order and each note's own order stay
        rows.sort(key=lambda p: (_ORDER[p.kind], p.path))
        return tuple(rows)

    return snapshot.cached(("problems.vault", folders), build)


@dataclass(frozen=True, slots=True)
class Tally:
    """How much is broken, as the Broken tab counts it: `broken` is the tab's number (real
    problems: every kind but UNWRITTEN), `by_kind` splits it, `files` is how many files hold one;
    `unwritten` counts the links to notes not written yet, listed after and never in `broken`."""

    broken: int
    by_kind: dict[str, int]
    files: int
    unwritten: int

    def as_json(self) -> dict:
        return {"broken": self.broken, "by_kind": self.by_kind, "files": self.files, "unwritten": self.unwritten}


def tally(problems: Iterable[Problem]) -> Tally:
    """The Broken tab's count of `problems` (`Tally`): what the tab, the status line, `vaultwatch
    stats` and `links --broken` and the agents' `triage` overview all say."""
    rows = tuple(problems)
    real = [p for p in rows if p.broken]
    return Tally(len(real), counts(real), len({p.path for p in real}), len(rows) - len(real))


def vault_tally(snapshot: Snapshot, root: str) -> Tally:
    """`tally` of every problem of the vault (`vault_problems`), memoized with them."""
    return snapshot.cached(("problems.tally", template_folders(root)), lambda: tally(vault_problems(snapshot, root)))


def counts(problems: Iterable[Problem]) -> dict[str, int]:
    """How many problems of each kind, in KINDS' order (kinds with none left out)."""
    found: dict[str, int] = {}
    for p in problems:
        found[p.kind] = found.get(p.kind, 0) + 1
    return {k: found[k] for k in KINDS if k in found}


def locate(root_real: str, problems: Sequence[Problem]) -> tuple[Problem, ...]:
    """`problems` with the line of each link found in its note: the note is read again with the
    parser's rules (core.markdown.parse.link_lines), and each problem claims the first occurrence
    of its very link (target, kind, heading and alias as written) that no earlier problem of
    the same note claimed, so repeated links get their own lines in note order and a link is
    never found in code, in a comment or inside a longer link. A note that cannot be read, or
    a link no longer in it (the note changed since it was indexed), keeps line None."""
    where: dict[str, dict[Link, deque[int]] | None] = {}
    out: list[Problem] = []
    for p in problems:
        if p.link is None or p.line is not None:
            out.append(p)
            continue
        if p.path not in where:
            where[p.path] = _link_lines(root_real, p.path)
        lines = where[p.path]
        queue = None if lines is None else lines.get(p.link)
        out.append(replace(p, line=queue.popleft()) if queue else p)
    return tuple(out)


def _link_lines(root_real: str, path: str) -> dict[Link, deque[int]] | None:
    """Each link of the note at `path` with the lines it is written on, in note order (None: the
    note cannot be read)."""
    # the parser (and YAML) only when lines are asked for: a warm start loads this module with the
    # vault's counts and must not load them
    from vaultwatch.core.markdown.parse import link_lines  # noqa: PLC0415

    try:
        data, _ = note_bytes(root_real, path)
    except (OSError, ValueError, VaultError):
        return None
    found: dict[Link, deque[int]] = {}
    for link, line in link_lines(data):
        found.setdefault(link, deque()).append(line)
    return found
