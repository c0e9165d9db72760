"""What an embed of a note shows: the note, one of its sections or one of its blocks.

Obsidian's "Embed files" help: `![[Note]]` shows the note's body in place, `![[Note#Heading]]`
the heading's section (the heading and everything under it up to the next heading of the same
or a higher level), `![[Note#^id]]` the block that id names (a paragraph ending in it, a list
item with its children, or, for an id on a line of its own, the list, quote, callout or table
just before it). The embedded note is read through the same safe open as the preview's own note
(`core.disk.fileopen.note_bytes`, then `core.markdown.parse.decode`) and lexed by the same lexer
(`core.markdown.lines`), so an embed reads exactly as the note itself would.

`EmbedReader` reads, for one snapshot, each embedded note once (thread-safe), and answers from
what it read without touching the disk when asked to (`part(..., read=False)`): a caller on a UI
thread can tell that a read is due and leave it to its worker.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from vaultwatch.core.disk.fileopen import note_bytes
from vaultwatch.core.errors import VaultError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.links.graph import anchor_key, missing_part
from vaultwatch.core.links.resolve import resolve
from vaultwatch.core.markdown.lines import Line, styled_lines
from vaultwatch.core.markdown.parse import decode
from vaultwatch.core.model import NOTE, Entry, Link

MAX_EMBED_BYTES = 1024 * 1024  # an embedded note is read this far (its part beyond: not shown)
MAX_EMBED_LINES = 40  # source lines of an embed shown; the rest is counted, not drawn

_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


@dataclass(frozen=True, slots=True)
class Part:
    """What one embed of a note shows.

    `lines` are the lexer's lines shown (at most MAX_EMBED_LINES), `left_out` the source lines of
    the part not shown; `problem` says why nothing is shown: "heading" or "block" (the note lacks
    that part), "unreadable" (the note could not be read), else ""."""

    path: str
    title: str
    lines: tuple[Line, ...] = ()
    left_out: int = 0
    problem: str = ""


def heading_text(lines: Sequence[Line], n: int) -> str:
    """The text of the heading whose first line is `lines[n]` (a setext heading's paragraph
    lines joined), without its `#` marks."""
    line = lines[n]
    if line.text.lstrip(" >").startswith("#"):
        return _CLOSING_HASHES.sub("", line.text[line.marker :]).strip()
    words = []
    while n < len(lines) and lines[n].kind == "heading":
        words.append(lines[n].text[lines[n].marker :].strip())
        n += 1
    return " ".join(words)


def _heading_starts(lines: Sequence[Line]) -> list[int]:
    """Indices of the lines that start a heading (a setext heading's paragraph is one heading)."""
    out = []
    for n, line in enumerate(lines):
        if line.kind != "heading":
            continue
        if n and lines[n - 1].kind == "heading" and not line.text.lstrip(" >").startswith("#"):
            continue  # the next line of a setext heading's paragraph
        out.append(n)
    return out


def section(lines: Sequence[Line], spec: str) -> tuple[int, int] | None:
    """The (start, end) line indices of the section `spec` names (`Heading`, or `Parent#Heading`
    through enclosing headings), matched as links are (core.links.graph.anchor_key); None when
    the note has no such heading. The first match wins, one under the named parents first."""
    parts = [anchor_key(p) for p in spec.split("#") if p.strip()]
    if not parts:
        return None
    starts = _heading_starts(lines)
    stack: list[tuple[int, str]] = []  # enclosing headings: (level, key)
    first: int | None = None
    chosen: int | None = None
    for n in starts:
        level = lines[n].level
        while stack and stack[-1][0] >= level:
            stack.pop()
        key = anchor_key(heading_text(lines, n))
        if key == parts[-1]:
            if first is None:
                first = n
            if _in_order(parts[:-1], [k for _, k in stack]):
                chosen = n
                break
        stack.append((level, key))
    at = chosen if chosen is not None else first
    if at is None:
        return None
    level = lines[at].level
    end = next((n for n in starts if n > at and lines[n].level <= level), len(lines))
    return at, end


def _in_order(wanted: list[str], have: list[str]) -> bool:
    i = 0
    for key in have:
        if i < len(wanted) and key == wanted[i]:
            i += 1
    return i == len(wanted)


def block(lines: Sequence[Line], block_id: str) -> tuple[int, int] | None:
    """The (start, end) line indices of the block `^block_id` names (see the module doc); None
    when no line ends in that id."""
    want = block_id.lstrip("^").strip().casefold()
    at = next(
        (
            n
            for n, line in enumerate(lines)
            if any(sp.kind == "block_id" and sp.value.casefold() == want for sp in line.spans)
        ),
        None,
    )
    if at is None:
        return None
    line = lines[at]
    written = line.text[line.marker if line.quote else 0 :].strip()
    if line.kind != "list" and written[:1] == "^" and written[1:].casefold() == want:
        # an id on a line of its own: the block just before it (a blank line may part them)
        end = at
        while end > 0 and lines[end - 1].kind == "blank":
            end -= 1
        start = end
        while start > 0 and lines[start - 1].kind not in ("blank", "heading", "setext_rule"):
            start -= 1
        return (start, end) if start < end else (at, at + 1)
    if line.kind == "list":  # the item and the lines under it (its children)
        end = at + 1
        while end < len(lines) and lines[end].kind != "blank" and _under(lines[end], line):
            end += 1
        return at, end
    if line.kind in ("heading", "table_row", "table_head", "callout") and not line.quote:
        return at, at + 1
    if line.quote:  # a quote or callout is one block: Obsidian names no part of it
        start, end = at, at + 1
        while start > 0 and lines[start - 1].quote:
            start -= 1
        while end < len(lines) and lines[end].quote:
            end += 1
        return start, end
    start = at  # a paragraph: back to the line after a blank line or another block
    while start > 0 and lines[start - 1].kind == "text" and not lines[start - 1].quote:
        start -= 1
    return start, at + 1


def _under(line: Line, item: Line) -> bool:
    """Whether `line` belongs to list item `item` (indented past its marker's column)."""
    if line.kind == "list":
        return line.level > item.level
    indent = len(line.text) - len(line.text.lstrip(" \t"))
    return indent > item.level


def part_lines(lines: Sequence[Line], link: Link) -> tuple[int, int] | None:
    """The (start, end) line indices of what `link` embeds of a note whose body has `lines`: all
    of it, the section of its #heading or the block of its #^id (None: the note lacks it)."""
    spec = link.heading
    if not spec:
        return 0, len(lines)
    if spec.startswith("^"):
        return block(lines, spec)
    return section(lines, spec)


def body_of(text: str) -> list[Line]:
    """The lexer's lines of a note's text after its frontmatter (an embed shows no properties)."""
    lines = styled_lines(text)
    n = 0
    while n < len(lines) and lines[n].kind in ("frontmatter_fence", "frontmatter"):
        n += 1
    return lines[n:]


class EmbedReader:
    """The notes embedded in what one preview shows, read once each, for one snapshot."""

    def __init__(self, snapshot: Snapshot, root_real: str) -> None:
        self.snapshot = snapshot
        self.root_real = root_real
        self._read: dict[str, list[Line] | None] = {}  # path -> its body's lines (None: unreadable)
        self._lock = threading.Lock()

    def resolve(self, source: str, link: Link) -> str | None:
        """Where `link`, written in note `source`, points (core.links.resolve.resolve)."""
        return resolve(self.snapshot, source, link)

    def note(self, path: str | None) -> Entry | None:
        """The note at `path` in the snapshot (None: no note there, an attachment)."""
        entry = self.snapshot.get(path) if path is not None else None
        return entry if entry is not None and entry.kind == NOTE else None

    @property
    def entries(self) -> dict[str, Entry | None]:
        """The snapshot's entries of the notes read so far: a later snapshot whose entry for one
        differs changed what an embed shows."""
        with self._lock:
            paths = list(self._read)
        return {path: self.snapshot.get(path) for path in paths}

    def part(self, link: Link, target: str, *, read: bool = True) -> Part | None:
        """What `link` (resolved to the note `target`) shows; None when that needs a read and
        `read` is False."""
        entry = self.note(target)
        title = (entry.title if entry is not None else "") or target.rsplit("/", 1)[-1].removesuffix(".md")
        missing = missing_part(self.snapshot, target, link)
        if missing:  # as the index (and so the Broken tab) judges it
            return Part(target, title, problem=missing)
        with self._lock:
            known = target in self._read
            lines = self._read.get(target)
        if not known:
            if not read:
                return None
            lines = self._load(target)
        if lines is None:
            return Part(target, title, problem="unreadable")
        found = part_lines(lines, link)
        if found is None:  # the index has the part, the text read did not (read only this far)
            return Part(target, title, problem="heading" if not (link.heading or "").startswith("^") else "block")
        start, end = found
        while end > start and lines[end - 1].kind == "blank":  # the blank lines before the next part
            end -= 1
        shown = min(end, start + MAX_EMBED_LINES)
        return Part(target, title, tuple(lines[start:shown]), end - shown)

    def _load(self, path: str) -> list[Line] | None:
        try:
            data, _st = note_bytes(self.root_real, path, limit=MAX_EMBED_BYTES)
        except (OSError, VaultError):
            lines = None
        else:
            text, _bad = decode(data)
            if len(data) >= MAX_EMBED_BYTES:  # cut at a line end: no half line
                text = text[: max(0, text.rfind("\n"))]
            lines = body_of(text)
        with self._lock:
            self._read[path] = lines
        return lines
