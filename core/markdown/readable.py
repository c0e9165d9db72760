"""Markdown as the words a reader sees: a piece of a note (a search snippet) reduced to the text
Obsidian's reading view shows, with a map from source offsets to shown offsets.

The piece is read by the one lexer (`core.markdown.lines.styled_lines`): block markers
(`#`, `>`, `- [ ]`, `> [!type]`) and emphasis marks are dropped, a wiki link or embed shows
its alias or its name (› heading), a Markdown link or image its text, a block id nothing.
Links to URLs (which the lexer leaves to the renderer) are read here by the same pattern
the preview uses; so is a link cut short at the end of an excerpt (`![alt](http…`), which
shows its text. Nothing here knows about search: `core.search.snippets` maps its match
marks through `readable`.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from vaultwatch.core.markdown.lines import embed_alias, file_name, is_image, styled_lines, without_size

_MARKS = {"bold": 2, "strike": 2, "highlight": 2, "italic": 1}
_LINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\((<[^>\n]*>|[^)\s]*)(?:\s+\"[^\"\n]*\")?\)")
# a link around an image (a badge linking to its page): the image inside is read by _LINK
_LINKED_IMAGE = re.compile(r"\[(" + _LINK.pattern + r")\]\((?:<[^>\n]*>|[^)\s]*)(?:\s+\"[^\"\n]*\")?\)")
# an excerpt (ending with or without "…") cut inside a link, or starting inside one
_CUT_LINK = re.compile(r"(!?)\[([^\[\]\n]*)(?:\]\([^)\n]*)?(?=…?$)")
_CUT_WIKI = re.compile(r"!?\[\[([^\]\n|]*)(?:\|([^\]\n]*))?(?=…?$)")
_CUT_HEAD = re.compile(r"^…?[^\[\]\n]*(\]\((?:<[^>\n]*>|[^)\s]*)\)|\]\])")
# emphasis marks whose partner the excerpt cut off: an opening one before a word, a closing one after
_STRAY = re.compile(r"(?:(?<![^\s(\[])(?:\*\*|==|~~|__)(?=[^\s*=~_])|(?<=[^\s*=~_])(?:\*\*|==|~~|__)(?![^\s).,;:!?…]))")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>")
_MARKER_KINDS = frozenset({"heading", "list", "callout", "text", "blank", "table_head", "table_row"})
_MARKUP_LINES = frozenset({"fence", "comment", "rule", "setext_rule", "table_rule"})  # nothing to read


class Readable:
    """What a reader sees of a piece (`text`), and where a source span lands in it (`span`).

    Offsets are mapped from the markup's edits when asked (a snippet asks for a few match ends),
    not tabled per character. Text kept as written keeps its offsets, shifted by what the edits
    before it removed or added; an offset inside markup maps to where its replacement starts (a
    span's start) or ends (a span's end), so a match inside covers all of the replacement."""

    __slots__ = ("_after", "_from", "_sizes", "_to", "text")

    def __init__(self, text: str, edits: list[tuple[int, int, str]]) -> None:
        self.text = text
        self._from = [a for a, _z, _r in edits]
        self._to = [z for _a, z, _r in edits]  # sorted too: the edits do not overlap
        self._sizes = [len(r) for _a, _z, r in edits]
        self._after = [0]  # the shift of every offset after the first k edits
        for a, z, r in edits:
            self._after.append(self._after[-1] + len(r) - (z - a))

    def _at(self, offset: int, end: bool) -> int:
        k = bisect_right(self._to, offset)  # edits wholly before `offset` (an insertion at it too)
        if k < len(self._from) and self._from[k] < offset:  # inside markup
            return self._from[k] + self._after[k] + (self._sizes[k] if end else 0)
        return offset + self._after[k]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The shown [start, end) of a source span (empty when all of it is markup)."""
        a, z = self._at(start, False), self._at(end, True)
        return (a, z) if z > a else (a, a)


def _edits(text: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of the markup in `text`, not overlapping, sorted."""
    lead = 1 if text.startswith("---") else 0  # a rule, never a frontmatter block, in a piece
    edits: list[tuple[int, int, str]] = []
    for line in styled_lines("\n" + text if lead else text):
        base = line.start - lead
        if line.kind == "code":  # shown as written
            continue
        if line.kind in _MARKUP_LINES:
            edits.append((max(0, base), base + len(line.text), ""))
            continue
        if line.marker and line.kind in _MARKER_KINDS:
            if line.kind == "callout":
                rest = line.text[line.marker :]
                title_at = line.marker + len(rest) - len(rest.lstrip())
                edits.append((base, base + title_at, "" if rest.strip() else line.info.capitalize()))
            else:
                edits.append((base, base + line.marker, ""))
        for sp in line.spans:
            a, z = base + sp.start, base + sp.end
            seg = line.text[sp.start : sp.end]
            if sp.kind in _MARKS and sp.value != "html":  # `<b>…</b>`: its tags are read below
                mark = _MARKS[sp.kind]
                edits.append((a, a + mark, ""))
                edits.append((z - mark, z, ""))
            elif sp.kind in ("wiki", "embed") and sp.link is not None and "[[" in seg[:3]:
                # markup removed around the words kept, so a match inside keeps its place
                opening = 3 if seg.startswith("!") else 2
                close = z - 2 if seg.endswith("]]") else z
                image = sp.kind == "embed" and is_image(sp.link.target)
                if image and sp.link.alias and embed_alias(sp.link) != sp.link.alias:
                    # `|100` is the image's size: the alias before it, or the file's name
                    edits.append((a, z, embed_alias(sp.link) or sp.link.target))
                    continue
                if sp.link.alias:
                    edits.append((a, a + seg.rfind("|", 0, close - a) + 1, ""))
                else:
                    hash_at = seg.find("#", opening, close - a)
                    if hash_at == opening:
                        opening += 1
                    edits.append((a, a + opening, ""))
                    if hash_at > opening and image:  # an image's `#outline` names no part of it
                        close = a + hash_at
                    elif hash_at > opening:
                        edits.append((a + hash_at, a + hash_at + 1, " › "))
                edits.append((close, z, ""))
            elif sp.kind in ("markdown", "embed") and "](" in seg:
                open_at = seg.index("[") + 1
                close_at = seg.rfind("](")
                alt = seg[open_at:close_at]
                if seg.startswith("!") and without_size(alt) != alt:  # alt text that is the image's size
                    edits.append((a, z, without_size(alt) or (sp.link.target if sp.link else alt)))
                    continue
                edits.append((a, a + open_at, ""))
                edits.append((a + close_at, z, ""))
            elif sp.kind == "escape":  # `\\-` shows "-"
                edits.append((a, z, ""))
            elif sp.kind == "autolink":
                edits.append((a, a + 1, ""))
                edits.append((z - 1, z, ""))
            elif sp.kind in ("block_id", "comment"):
                while a > base and text[a - 1] in " \t":
                    a -= 1
                edits.append((a, z, ""))
            elif sp.kind == "code":
                ticks = len(seg) - len(seg.lstrip("`"))
                edits.append((a, a + ticks, ""))
                edits.append((max(a + ticks, z - ticks), z, ""))
    for m in _LINK.finditer(text):  # links to URLs and same-note anchors: the lexer leaves them
        if m.group(1) and without_size(m.group(2)) != m.group(2):  # an image's size, not its text
            edits.append((m.start(), m.end(), without_size(m.group(2)) or file_name(m.group(3).strip("<>"))))
            continue
        edits.append((m.start(), m.start(2), ""))
        edits.append((m.end(2), m.end(), ""))
    if "[![" in text:
        for m in _LINKED_IMAGE.finditer(text):
            edits.append((m.start(), m.start() + 1, ""))
            edits.append((m.end(1), m.end(), ""))
    wiki = _CUT_WIKI.search(text)
    if wiki:
        edits.append((wiki.start(), wiki.end(), wiki.group(2) or wiki.group(1)))
    cut = _CUT_LINK.search(text)
    if cut and not wiki:
        edits.append((cut.start(), cut.start(2), ""))
        edits.append((cut.end(2), cut.end(), ""))
    head = _CUT_HEAD.match(text)
    if head:
        edits.append((head.start(1), head.end(1), ""))
    if "**" in text or "==" in text or "~~" in text or "__" in text:
        edits.extend((m.start(), m.end(), "") for m in _STRAY.finditer(text))
    if "<" in text:
        edits.extend((m.start(), m.end(), "") for m in _HTML_TAG.finditer(text))
    edits.sort(key=lambda e: (e[0], -e[1]))
    kept: list[tuple[int, int, str]] = []
    end = 0
    for a, z, r in edits:
        if a >= end and (z > a or r):
            kept.append((a, z, r))
            end = z
    return kept


def readable(text: str) -> Readable:
    """`text` as a reader sees it, with the offset map (see the module doc)."""
    edits = _edits(text)
    if not edits:
        return Readable(text, edits)
    out: list[str] = []
    pos = 0
    for a, z, r in edits:
        out += (text[pos:a], r)
        pos = z
    out.append(text[pos:])
    return Readable("".join(out), edits)


def spans_after(shown: Readable, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Source spans mapped to the shown text, empty ones dropped, and touching ones (or ones
    apart by spaces only) joined: one mark per run of matched words, never nested."""
    out: list[tuple[int, int]] = []
    for a, z in sorted(shown.span(a, z) for a, z in spans):
        if z <= a:
            continue
        if out and (a <= out[-1][1] or not shown.text[out[-1][1] : a].strip()):
            out[-1] = (out[-1][0], max(out[-1][1], z))
        else:
            out.append((a, z))
    return out
