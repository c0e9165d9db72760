"""Where things are in a note's text: the frontmatter block, fenced code, headings and sections.

Everything here works on the note's text as stored (a UTF-8 BOM removed, line endings as
they are: LF, CRLF or mixed), so an edit that splices offsets from these functions leaves
every other byte of the note untouched.

Headings are ATX headings (`#` to `######` followed by a space, up to three spaces of
indentation), as Obsidian writes them, found by core.markdown.mdlex (the index's reader): lines in
code, comments and the frontmatter are never headings.

A heading's *own content* runs from the line after the heading to the next heading of any
level; its *section* runs to the next heading of the same or a higher level (so it includes
its child headings). Section edits (`edit_section`) work on the own content only: child
headings and everything under them are never touched, so appending to `## Tasks` lands
under `## Tasks` and not under its last child `### Done`. To edit a child, name the child.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from vaultwatch.core.errors import VaultError
from vaultwatch.core.markdown import mdlex

_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_LEVEL_PREFIX = re.compile(r"^(#{1,6})[ \t]+(.*)$")

MODES = ("replace", "append", "prepend")


class SectionError(VaultError):
    """A heading could not be found, or names several headings."""

    code = "heading_not_found"

    def __init__(self, message: str, code: str | None = None, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.candidates = candidates


@dataclass(frozen=True, slots=True)
class Heading:
    """One ATX heading and the extent of its section (offsets into the note text)."""

    level: int
    text: str
    line: int  # 1-based line number in the note
    start: int  # offset of the heading line
    body_start: int  # offset just after the heading line's line break
    own_end: int  # offset of the next heading of any level (or the end of the note)
    end: int  # offset of the next heading of the same or a higher level (or the end)
    parents: tuple[str, ...] = ()  # texts of the enclosing headings, outermost first

    @property
    def label(self) -> str:
        """The heading as written in Markdown, e.g. '## Tasks'."""
        return f"{'#' * self.level} {self.text}"

    def describe(self) -> str:
        """'line 12: ## Notes (under # Week 1)' for error messages."""
        under = f" (under {' > '.join(self.parents)})" if self.parents else ""
        return f"line {self.line}: {self.label}{under}"


def lines_with_offsets(text: str) -> list[tuple[int, str]]:
    """(offset, line including its line break) for every line; a final line may lack a break."""
    out: list[tuple[int, str]] = []
    pos = 0
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl + 1
        out.append((pos, text[pos:end]))
        pos = end
    return out


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """lines_with_offsets, one line at a time."""
    pos = 0
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl + 1
        yield pos, text[pos:end]
        pos = end


def strip_eol(line: str) -> str:
    """A line without its trailing LF or CRLF."""
    if line.endswith("\n"):
        line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
    return line


def newline_of(text: str) -> str:
    """The note's line-break style: the break of its first line ("\\r\\n" or "\\n"; "\\n" if none)."""
    nl = text.find("\n")
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


@dataclass(frozen=True, slots=True)
class FrontmatterSpan:
    """Offsets of a frontmatter block: the YAML lies in [yaml_start, yaml_end), the body starts at body_start."""

    yaml_start: int
    yaml_end: int
    body_start: int


def frontmatter_span(text: str) -> FrontmatterSpan | None:
    """Locate the frontmatter block exactly as core.markdown.parse.split_frontmatter does (on any line endings).

    The block opens with a `---` line on line 1 and closes with a `---` or `...` line.
    Returns None when there is no (closed) block.
    """
    if not text.startswith("---"):
        return None
    lines = iter_lines(text)  # lazily: the fence is near the top, the note may be 40 MB
    first_line = next(lines)[1]
    if strip_eol(first_line)[3:].strip() != "" or not first_line.endswith("\n"):
        return None
    for offset, line in lines:
        if strip_eol(line).rstrip() in ("---", "..."):
            return FrontmatterSpan(len(first_line), offset, offset + len(line))
    return None


def opens_unclosed_frontmatter(text: str) -> bool:
    """True when line 1 is a `---` fence but no closing fence follows (neither YAML nor plain body)."""
    if not text.startswith("---") or frontmatter_span(text) is not None:
        return False
    first = strip_eol(lines_with_offsets(text)[0][1])
    return first[3:].strip() == ""


def body_offset(text: str) -> int:
    """Offset where the body starts (after the frontmatter block, or 0)."""
    span = frontmatter_span(text)
    return span.body_start if span is not None else 0


def headings(text: str) -> tuple[Heading, ...]:
    """Every heading of the note body, with its section extents, in document order.

    Read by core.markdown.mdlex, the index's reader: a `#` line inside code (fenced, also in callouts
    and list items, or indented) or inside a comment is not a heading."""
    body = body_offset(text)
    part = text[body:] if body else text
    scan = mdlex.masked(part)
    found = [(h.level, h.text, h.start, h.end) for h in mdlex.headings(scan, body, part)]
    out: list[Heading] = []
    stack: list[tuple[int, str]] = []
    line_no, counted = 1, 0
    for i, (level, title, start, body_start) in enumerate(found):
        line_no += text.count("\n", counted, start)
        counted = start
        own_end = found[i + 1][2] if i + 1 < len(found) else len(text)
        end = len(text)
        for later in found[i + 1 :]:
            if later[0] <= level:
                end = later[2]
                break
        while stack and stack[-1][0] >= level:
            stack.pop()
        parents = tuple(f"{'#' * lv} {t}" for lv, t in stack)
        out.append(Heading(level, title, line_no, start, body_start, own_end, end, parents))
        stack.append((level, title))
    return tuple(out)


def _fold(s: str) -> str:
    return " ".join(s.split()).casefold()


def find_heading(text: str, spec: str) -> Heading:
    """The one heading named by `spec`, or SectionError.

    `spec` is the heading text ("Tasks"), optionally with its level ("## Tasks"), or an
    Obsidian-style path through parent headings ("Week 1#Notes"). Exact text is tried first,
    then a case- and whitespace-insensitive match. Several matches are an error listing
    every candidate with its line number.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise SectionError("empty heading: give the heading text, e.g. 'Tasks' or '## Tasks'", "invalid_heading")
    all_h = headings(text)
    want = spec.strip()
    level = None
    m = _LEVEL_PREFIX.match(want)
    if m:
        level, want = len(m.group(1)), _CLOSING_HASHES.sub("", m.group(2)).strip()
    pool = [h for h in all_h if level is None or h.level == level]

    def pick(matches: list[Heading]) -> Heading | None:
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            listed = "; ".join(h.describe() for h in matches)
            raise SectionError(
                f"ambiguous heading: {spec!r} matches {len(matches)} headings ({listed}); name one by its "
                "parent as 'Parent#Heading' or with its level as '### Heading'",
                "ambiguous_heading",
                tuple(h.describe() for h in matches),
            )
        return None

    for same in (lambda a, b: a == b, lambda a, b: _fold(a) == _fold(b)):
        hit = pick([h for h in pool if same(h.text, want)])
        if hit is not None:
            return hit
        if "#" in want:  # Obsidian path: Parent#Child (any depth of parents, in order)
            parts = [p.strip() for p in want.split("#") if p.strip()]
            hit = pick([h for h in pool if same(h.text, parts[-1]) and _has_chain(h, parts[:-1], same)])
            if hit is not None:
                return hit
    if all_h:
        listed = "; ".join(h.describe() for h in all_h[:30])
        what = f"({listed}); use one of these, or edit the note with old_text/new_text instead"
    else:
        what = "(the note has no headings); edit it with old_text/new_text instead, or add the heading first"
    raise SectionError(
        f"heading not found: {spec!r} is not a heading of this note {what}",
        "heading_not_found",
        tuple(h.describe() for h in all_h[:30]),
    )


def _has_chain(h: Heading, parts: list[str], same: Callable[[str, str], bool]) -> bool:
    names = [p.split(" ", 1)[1] if " " in p else "" for p in h.parents]
    i = 0
    for name in names:
        if i < len(parts) and same(name, parts[i]):
            i += 1
    return i == len(parts)


def _as_lines(block: str, nl: str) -> str:
    """Caller text as whole lines in the note's line-break style (a final break added when missing)."""
    if block == "":
        return ""
    block = block.replace("\r\n", "\n").replace("\r", "\n")
    if not block.endswith("\n"):
        block += "\n"
    return block.replace("\n", nl) if nl != "\n" else block


def edit_section(text: str, spec: str, mode: str, new_text: str) -> tuple[str, Heading]:
    """Replace, append to or prepend to a heading's own content; returns (new note text, heading).

    The caller's text is inserted as whole lines in the note's line-break style: a final line
    break is added when missing, nothing else is added or removed. `replace` keeps the blank
    lines that separated the old content from the heading above and the heading below.
    """
    if mode not in MODES:
        raise SectionError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}", "invalid_mode")
    h = find_heading(text, spec)
    heading_line = text[h.start : h.body_start]
    nl = "\r\n" if heading_line.endswith("\r\n") else ("\n" if heading_line.endswith("\n") else newline_of(text))
    block = _as_lines(new_text, nl)
    head = text[: h.body_start]
    if not heading_line.endswith("\n"):  # heading is the last line and has no break
        head += nl
    content = text[h.body_start : h.own_end]
    rows = [line for _, line in lines_with_offsets(content)]
    lead = 0
    while lead < len(rows) and rows[lead].strip() == "":
        lead += 1
    trail = len(rows)
    while trail > lead and rows[trail - 1].strip() == "":
        trail -= 1
    leading, core, trailing = "".join(rows[:lead]), "".join(rows[lead:trail]), "".join(rows[trail:])
    if not core:  # only blank lines: they separate the heading from what follows
        leading, trailing = "", leading
    if core and not core.endswith("\n") and (mode == "append" and block):
        core += nl
    if mode == "replace":
        middle = leading + block + trailing
    elif mode == "append":
        middle = leading + core + block + trailing
    else:
        middle = leading + block + core + trailing
    if middle and not middle.endswith("\n") and h.own_end < len(text):
        middle += nl
    return head + middle + text[h.own_end :], h
