"""A note as styled lines, read by core.markdown.mdlex: what the TUI preview draws, without Textual.

`styled_lines(text)` classifies each line of a note (LF text, as core.markdown.parse.decode gives it)
and marks the spans inside it, with the same reading as the index: a wiki link inside code
is code here too, a `#` line in a fence is no heading, a `%%comment%%` is a comment. The
renderer (tui/) turns kinds into styles and draws the lines lazily; nothing here knows about
widgets, styles or terminal cells.

Line kinds: "frontmatter_fence" and "frontmatter" (the YAML block), "blank", "text",
"heading" (level 1-6; a setext heading's paragraph lines too), "setext_rule" (its underline),
"fence" (an opening or closing code fence; `info` is the language), "code" (inside a fenced
or indented code block), "comment" (a line wholly inside a comment), "rule", "list" (`marker`
ends the marker, `level` is its indent column, `info` a task's box: "[ ]", "[x]", "[/]", any
character), "table_head", "table_rule", "table_row", "callout" (a `> [!type]` line; `info` is the
type, `callout_fold` its fold mark). `quote` counts a line's `>` markers, on any kind (a fence
inside a callout has quote 1).

Span kinds, offsets into the line's text: "wiki", "embed", "markdown" (with `link`, the
index's Link, to resolve with core.links.resolve.resolve), "code" (a code span), "comment", "tag",
"block_id", "bold", "italic", "strike", "highlight"; CommonMark's inline raw HTML and escapes:
"html" (a tag, hidden: its text is the line's), "br", "anchor" (`<a href>…</a>`, `value` the
href; `<b>`, `<i>` elements are "bold" and "italic" with `value` "html"), "autolink" (`<https://…>`)
"escape" (the backslash of `\\-`) and "entity" (`&mdash;`, `&#8212;`: one that decodes to a
character, drawn as that character). Math (`$…$`, and `$$…$$` over lines too) is shown as
written: no escape, entity or emphasis inside it. Spans are sorted by start; emphasis may enclose other
spans; a span never crosses its line (a comment over three lines is three; a tag written over
two lines is no tag here).

`max_chars` reads only a prefix (cut at a line end): a preview's first screen of a 50 MB note
without lexing all of it. Lines of the prefix read as in the whole note, except where a
construct opened in the prefix closes after it (an unclosed code span there stays text).
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import NamedTuple
from urllib.parse import unquote

from vaultwatch.core.markdown import mdlex
from vaultwatch.core.model import Link

# One level of nesting, as Obsidian's help ("Basic formatting syntax") writes it: `***x***` is
# bold and italic, and a bold run may hold an italic one of the same mark (`**a *b* c**`) and
# the other way round; other marks nest freely (`**a _b_ c**`) and are found by a second pass
# over the run's text (`_emphasis`).
_STAR_I = r"\*[^*\s](?:[^*\n]*[^*\s])?\*"
_STAR_B = r"\*\*[^*\s](?:[^*\n]*[^*\s])?\*\*"
_LINE_I = r"(?<![_\w])_[^_\s](?:[^_\n]*[^_\s])?_(?![_\w])"
_LINE_B = r"__[^_\s](?:[^_\n]*[^_\s])?__"
_EMPHASIS = re.compile(
    r"(?P<bolditalic>\*\*\*[^*\s](?:[^*\n]*[^*\s])?\*\*\*(?!\*)|(?<![_\w])___[^_\s](?:[^_\n]*[^_\s])?___(?![_\w]))"
    r"|(?P<bold>\*\*(?=[^*\s])(?:[^*\n]|" + _STAR_I + r")+?(?<=[^*\s])\*\*"
    r"|__(?=[^_\s])(?:[^_\n]|" + _LINE_I + r")+?(?<=[^_\s])__)"
    r"|(?P<strike>~~[^~\s](?:[^~\n]*[^~\s])?~~)"
    r"|(?P<highlight>==[^=\s](?:[^=\n]*[^=\s])?==)"
    r"|(?P<italic>(?<![*\w])\*(?=[^*\s])(?:[^*\n]|" + _STAR_B + r")+?(?<=[^*\s])\*(?![*\w])"
    r"|(?<![_\w])_(?=[^_\s])(?:[^_\n]|" + _LINE_B + r")+?(?<=[^_\s])_(?![_\w]))"
)
_EMPHASIS_MARKS = {"bold": 2, "strike": 2, "highlight": 2, "italic": 1}
_TABLE_RULE = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_QUOTES = re.compile(r"(?: {0,3}>[ \t]?)+")
_ONE_QUOTE = re.compile(r" {0,3}>[ \t]?")
_CALLOUT = re.compile(r"\[!([^\]\s]+)\][+-]?")
_TASK = re.compile(r"\[.\]")
_PIPE = re.compile(r"(?<!\\)\|")
_LIST = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]+(?:\[.\][ \t]+)?|$)")
_SIZE = re.compile(r"[0-9]+(?:x[0-9]+)?")
# A Markdown link or image as written (the lexer keeps only those to files: the renderer draws
# the ones to URLs and `#anchors` from this). CommonMark lets a destination hold balanced
# parentheses (`https://www.wikiwand.com/en/Lint_(software)`): two levels are read.
_DESTINATION = r"(?:[^()\s]|\((?:[^()\s]|\([^()\s]*\))*\))+"
MD_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\((<[^>\n]*>|" + _DESTINATION + r")(?:\s+\"[^\"]*\")?\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# CommonMark inline raw HTML (open tag, closing tag, processing instruction, declaration, CDATA;
# comments are the lexer's), autolinks, backslash escapes and entity references, on one line,
# leftmost first: `\<b>` is an escaped `<`, no tag, and a tag's attribute value holds no escape
# or entity (the tag is hidden whole)
_ATTRIBUTE = r"""(?:[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]*(?:[ \t]*=[ \t]*(?:[^\s"'=<>`]+|'[^'\n]*'|"[^"\n]*"))?)"""
_INLINE_HTML = re.compile(
    r"(?P<escape>\\[!-/:-@\[-`{-~])"
    r"|(?P<autolink><[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>"
    r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>)"
    r"|(?P<open><(?P<name>[A-Za-z][A-Za-z0-9-]*)" + _ATTRIBUTE + r"*[ \t]*/?>)"
    r"|(?P<close></(?P<cname>[A-Za-z][A-Za-z0-9-]*)[ \t]*>)"
    r"|(?P<other><\?.*?\?>|<![A-Za-z][^>]*>|<!\[CDATA\[.*?\]\]>)"
    r"|(?P<entity>&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
)
# Math as Obsidian reads it: `$$…$$` (display, over lines too, but, lest a stray `$$` swallow
# the rest of the note, not across a blank line) and `$…$` on one line, whose opening `$` is
# not followed by a space and whose closing `$` is not preceded by one (`$5 and $10` is no
# math). A `$` after a backslash is an escaped dollar.
_DISPLAY_MATH = re.compile(r"(?<![\\$])\$\$(?:[^$\n]|\n(?![ \t]*\n)|\$(?!\$))+?\$\$")
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?![\s$])[^$\n]*?(?<![\s\\])\$(?!\$)")
_HREF = re.compile(r"""[ \t]href[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)
# tags whose text the preview styles (anything else: its text, plain)
_HTML_STYLES = {"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "a": "anchor"}
# Obsidian's "Accepted file formats" for images: the embeds whose alias may be a display size
IMAGE_EXTENSIONS = frozenset({"avif", "bmp", "gif", "jpeg", "jpg", "png", "svg", "webp"})


class Span(NamedTuple):
    kind: str
    start: int  # offsets into Line.text
    end: int
    link: Link | None = None  # for "wiki", "embed" and "markdown"
    value: str = ""  # the tag (no '#') or block id (no '^')


class Line(NamedTuple):
    kind: str
    text: str  # the line, without its line break
    start: int  # offset of the line in the note text
    level: int = 0  # heading level, or a list item's indent column
    quote: int = 0  # `>` markers in front of the line
    marker: int = 0  # characters of block markup at the start (quote markers, list marker, `#`s)
    info: str = ""  # a fence's language, a callout's type
    spans: tuple[Span, ...] = ()


def _body_start(text: str) -> int:
    """Offset of the body (after a closed frontmatter block), as core.markdown.parse.split_frontmatter."""
    if not text.startswith("---"):
        return 0
    nl = text.find("\n")
    if nl < 0 or text[3:nl].strip():
        return 0
    pos = nl + 1
    while pos <= len(text):
        end = text.find("\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        if line.rstrip(" \t") in ("---", "..."):
            return len(text) if end < 0 else end + 1
        if end < 0:
            return 0
        pos = end + 1
    return 0


def styled_lines(text: str, max_chars: int | None = None) -> list[Line]:
    """The note's lines with their kinds and spans (see the module doc)."""
    return [line for line in iter_styled_lines(text, max_chars) if line is not None]


def iter_styled_lines(text: str, max_chars: int | None = None) -> Iterator[Line | None]:
    """`styled_lines` one line at a time, for a caller that must stay responsive (the preview's
    worker takes them in time-bounded slices and hands the interpreter back between them).

    The passes over the whole text (code blocks, links, tags, headings: about a third of the
    work) come first; None is yielded between them (each is short), where such a caller can rest
    too. Then each line is read when it is asked for."""
    if max_chars is not None and len(text) > max_chars:
        cut = text.rfind("\n", 0, max_chars)
        text = text[:cut] if cut > 0 else text[:max_chars]
    b = _body_start(text)
    pos = 0
    if b:
        fm = text[:b].split("\n")
        if fm and fm[-1] == "":
            fm.pop()
        for i, line in enumerate(fm):
            yield Line("frontmatter_fence" if i == 0 or i == len(fm) - 1 else "frontmatter", line, pos)
            pos += len(line) + 1
    body = text[b:]
    blocks = mdlex.code_blocks(body)
    inline = mdlex.inline_hidden(body, blocks)
    scan = mdlex.masked(body, sorted(blocks + inline))  # offsets of the body
    yield None
    spans: list[tuple[int, int, Span]] = []  # (body start, body end, span with body offsets)
    for a, z in inline:
        spans.append((a, z, Span("code" if body[a] == "`" else "comment", a, z)))
    for t in mdlex.links(scan):
        if t.target or t.heading:
            spans.append(
                (
                    _link_start(scan, t),
                    _link_end(scan, t),
                    Span(t.kind, 0, 0, Link(t.target, t.kind, t.heading, t.alias)),
                )
            )
    yield None
    for a, z, tag in mdlex.tag_spans(scan):
        spans.append((a, z, Span("tag", a, z, None, tag)))
    for a, z, bid in mdlex.block_id_spans(scan):
        spans.append((a, z, Span("block_id", a, z, None, bid)))
    spans.sort(key=_first)
    heads = {h.start: h for h in mdlex.headings(scan, 0, body)}
    math = _math(scan) if "$" in scan else []
    yield None
    lines = body.split("\n")
    if lines and lines[-1] == "" and body:
        lines.pop()
    starts: list[int] = []
    p = 0
    for line in lines:
        starts.append(p)
        p += len(line) + 1
    kinds: list[str | None] = [None] * len(lines)
    info: list[str] = [""] * len(lines)
    level = [0] * len(lines)
    # a code block's lines are quoted only as deep as its first line: inside a fence, a `>`
    # past that depth is code (a Markdown sample of a callout), not a quote
    quote_cap = [-1] * len(lines)
    for a, z in blocks:
        i = bisect_right(starts, a) - 1
        j = bisect_right(starts, max(a, z - 1)) - 1
        first = lines[i]
        first_quotes = _QUOTES.match(first) if ">" in first[:64] else None
        depth = first.count(">", 0, first_quotes.end()) if first_quotes else 0
        for k in range(i, j + 1):
            quote_cap[k] = depth
        inner = _QUOTES.sub("", first, count=1) if ">" in first[:64] else first
        lm = _LIST.match(inner)
        inner = inner[lm.end() :] if lm else inner
        stripped = inner.strip()
        if stripped[:3] in ("```", "~~~"):
            ch = stripped[0]
            kinds[i] = "fence"
            info[i] = stripped.lstrip(ch).strip()
            for k in range(i + 1, j + 1):
                kinds[k] = "code"
            close = _QUOTES.sub("", lines[j], count=1).strip() if j > i else ""
            if close and close.count(ch) == len(close) and len(close) >= len(stripped) - len(stripped.lstrip(ch)):
                kinds[j] = "fence"
        else:
            for k in range(i, j + 1):
                kinds[k] = "code"
    for a, z in inline:  # lines wholly inside a comment or a multi-line code span
        i = bisect_right(starts, a) - 1
        j = bisect_right(starts, max(a, z - 1)) - 1
        for k in range(i + 1, j):
            kinds[k] = "comment" if body[a] != "`" else "text"
        if j > i and z >= starts[j] + len(lines[j]) and body[a] != "`":
            kinds[j] = "comment"
        if a == starts[i] and (j > i or z >= starts[i] + len(lines[i])) and body[a] != "`":
            kinds[i] = "comment"
    for h in heads.values():
        i = bisect_right(starts, h.start) - 1
        j = bisect_right(starts, max(h.start, h.end - 1)) - 1
        if kinds[i] is None:
            for k in range(i, j + 1):  # a setext heading's paragraph lines, then its underline
                kinds[k], level[k] = "heading", h.level
            if j > i:
                kinds[j] = "setext_rule"
    si = 0
    mi = 0
    for n, line in enumerate(lines):
        ls = starts[n]
        le = ls + len(line)
        kind = kinds[n]
        quote = 0
        marker = 0
        inf = info[n]
        lev = level[n]
        content = line
        if ">" in line[:64]:
            qm = _QUOTES.match(line)
            if qm:
                quote = line.count(">", 0, qm.end())
                marker = qm.end()
                if 0 <= quote_cap[n] < quote:
                    quote, marker = quote_cap[n], _quote_end(line, quote_cap[n])
                content = line[marker:]
        if kind is None:
            if not line.strip():
                kind = "blank"
            elif (
                "|" in content
                and n + 1 < len(lines)
                and kinds[n + 1] is None
                and _TABLE_RULE.match(_unquoted(lines[n + 1], quote))
                and "|" in lines[n + 1] + content.strip("|")
                and _cell_count(content) == _cell_count(lines[n + 1])
            ):
                # a table inside a quote or callout is a table too (its rows are quoted alike)
                kind = "table_head"
                kinds[n + 1] = "table_rule"
                k = n + 2
                while (
                    k < len(lines)
                    and kinds[k] is None
                    and "|" in lines[k]
                    and _unquoted(lines[k], quote).strip()
                    and _depth(lines[k]) == quote
                ):
                    kinds[k] = "table_row"
                    k += 1
            elif _THEMATIC.match(content):
                kind = "rule"
            else:
                cm = _CALLOUT.match(content) if quote else None
                lm = _LIST.match(content) if not cm else None
                if cm:
                    kind, inf = "callout", cm.group(1).lower()
                    marker += cm.end()
                elif lm and lm.end() > len(content) - len(content.lstrip()):
                    kind, lev = "list", len(content) - len(content.lstrip(" \t"))
                    marker += lm.end()
                    box = _TASK.search(lm.group())
                    inf = box.group() if box else ""
                else:
                    kind = "text"
        elif kind == "heading" and line.lstrip(" >").startswith("#"):
            marker = len(line) - len(line.lstrip(" >#")) if quote else len(line) - len(line.lstrip(" #"))
        line_spans: list[Span] = []
        while si < len(spans) and spans[si][1] <= ls:
            si += 1
        k = si
        while k < len(spans) and spans[k][0] < le + 1:
            a, z, sp = spans[k]
            k += 1
            if z <= ls or a >= le and not (a == le == z):
                continue
            if kind in ("code", "fence") and sp.kind not in ("comment",):
                continue
            line_spans.append(sp._replace(start=max(a, ls) - ls, end=min(z, le) - ls))
        masked_line = scan[ls:le]
        while mi < len(math) and math[mi][1] <= ls:
            mi += 1
        if mi < len(math) and math[mi][0] < le:
            masked_line = _mask_math(masked_line, ls, le, math, mi)
        if kind not in ("code", "fence", "comment") and ("<" in line or "\\" in line or "&" in line):
            masked_line = _inline_html(masked_line, line_spans)
        if kind not in ("code", "fence", "comment", "frontmatter") and (
            "*" in line or "_" in line or "~~" in line or "==" in line
        ):
            _emphasis(masked_line, line_spans)
        if len(line_spans) > 1:
            line_spans.sort(key=_span_order)
        yield Line(kind, line, b + ls, lev, quote, marker, inf, tuple(line_spans))


def _math(scan: str) -> list[tuple[int, int]]:
    """The math of the body (code and comments masked), as sorted (start, end) offsets."""
    found = [m.span() for m in _DISPLAY_MATH.finditer(scan)]
    if not found:
        return [m.span() for m in _INLINE_MATH.finditer(scan)]
    out: list[tuple[int, int]] = []
    pos = 0
    for a, z in [*found, (len(scan), len(scan))]:
        out += [m.span() for m in _INLINE_MATH.finditer(scan, pos, a)]
        if a < z:
            out.append((a, z))
        pos = z
    return out


def _mask_math(masked_line: str, ls: int, le: int, math: list[tuple[int, int]], mi: int) -> str:
    """The line with its math blanked, so that no escape, entity or emphasis is read inside it.
    The mask is no space and no word character: `*see $x$*` stays italic around the math."""
    chars = list(masked_line)
    while mi < len(math) and math[mi][0] < le:
        a, z = math[mi]
        for k in range(max(a, ls), min(z, le)):
            chars[k - ls] = "\x00"
        mi += 1
    return "".join(chars)


def _emphasis(masked_line: str, out: list[Span]) -> None:
    """Append the line's emphasis spans to `out`: each run, and the runs one level inside it."""
    for m in _EMPHASIS.finditer(masked_line):
        kind, a, z = m.lastgroup or "bold", m.start(), m.end()
        if kind == "bolditalic":  # `***x***`: bold around an italic (the renderer strips 2, then 1)
            out.append(Span("bold", a, z))
            out.append(Span("italic", a + 2, z - 2))
            continue
        out.append(Span(kind, a, z))
        mark = _EMPHASIS_MARKS[kind]
        for inner in _EMPHASIS.finditer(masked_line, a + mark, z - mark):
            inner_kind = inner.lastgroup or "bold"
            if inner_kind != "bolditalic":
                out.append(Span(inner_kind, inner.start(), inner.end()))


def _inline_html(masked_line: str, out: list[Span]) -> str:
    """Append the line's inline HTML tags ("html"; "br" for a line break; "bold", "italic" and
    "anchor" enclosing a `<b>`, `<i>`, `<a>` element's tags and text, `value` "html" or the
    anchor's href), autolinks, backslash escapes ("escape": the backslash alone) and entities
    ("entity", only those that decode to something else than their text) to `out`, from the line with code
    and comments masked. Returns the line with escaped characters masked too, so that `\\*`
    opens no emphasis. Not inside a Markdown link to a URL: the renderer draws its label whole."""
    if "<" not in masked_line and "\\" not in masked_line and "&" not in masked_line:
        return masked_line
    taken = [(s.start, s.end) for s in out if s.kind in ("wiki", "embed", "markdown")]
    if "](" in masked_line:
        taken += [
            m.span()
            for m in MD_LINK.finditer(masked_line)
            if _SCHEME.match(m.group(3).strip("<>")) or m.group(3)[:1] == "#"
        ]
    taken.sort()
    ti = 0
    opened: dict[str, list[tuple[int, str]]] = {}
    escaped: list[int] = []
    for m in _INLINE_HTML.finditer(masked_line):
        a, z = m.span()
        while ti < len(taken) and taken[ti][1] <= a:  # matches come left to right: one walk
            ti += 1
        if ti < len(taken) and taken[ti][0] <= a:
            continue
        group = m.lastgroup
        if group == "escape":
            out.append(Span("escape", a, a + 1))
            escaped.append(a)
        elif group == "autolink":
            out.append(Span("autolink", a, z))
        elif group == "entity":
            if html.unescape(m.group()) != m.group():
                out.append(Span("entity", a, z))
        elif group == "open":
            name = m.group("name").lower()
            out.append(Span("br" if name == "br" else "html", a, z))
            if name in _HTML_STYLES and not m.group().endswith("/>"):
                opened.setdefault(name, []).append((a, _href(m.group()) if name == "a" else ""))
        elif group == "close":
            name = m.group("cname").lower()
            out.append(Span("html", a, z))
            if opened.get(name):
                start, href = opened[name].pop()
                out.append(Span(_HTML_STYLES[name], start, z, None, href if name == "a" else "html"))
        else:
            out.append(Span("html", a, z))
    if not escaped:
        return masked_line
    chars = list(masked_line)
    for a in escaped:
        chars[a] = chars[a + 1] = " "
    return "".join(chars)


def _href(tag: str) -> str:
    m = _HREF.search(tag)
    return next((g for g in m.groups() if g is not None), "") if m else ""


def without_html(text: str) -> str:
    """`text` (a link's label) as reading view shows it: inline HTML tags and escaping
    backslashes dropped, a `<br>` a space, an autolink its address, an entity its character."""
    if "<" not in text and "\\" not in text and "&" not in text:
        return text
    return _INLINE_HTML.sub(_shown, text)


def _shown(m: re.Match[str]) -> str:
    group = m.lastgroup
    if group == "escape":
        return m.group()[1]
    if group == "autolink":
        return m.group()[1:-1]
    if group == "entity":
        return html.unescape(m.group())
    return " " if group == "open" and m.group("name").lower() == "br" else ""


def callout_fold(line: Line) -> str:
    """A callout's fold mark (Obsidian's "Callouts" help): "-" folded (`> [!note]- Title`
    shows its title alone), "+" foldable and open (`> [!note]+ Title`), "" not foldable."""
    if line.kind != "callout" or not line.marker:
        return ""
    mark = line.text[line.marker - 1]
    return mark if mark in "+-" else ""


def is_image(target: str) -> bool:
    """Whether a link's target names an image file (by its extension)."""
    dot = target.rfind(".")
    return dot >= 0 and target[dot + 1 :].lower() in IMAGE_EXTENSIONS


def without_size(text: str) -> str:
    """An image's alias or alt text without its display size: Obsidian's "Embed files" reads
    `|640x480` or `|100` ending an image embed (`![[Engelbart.jpg|100]]`) and a Markdown image's
    alt text `250` or `Engelbart|100` as the size it is drawn at, never shown as text. "" when
    the whole text is a size."""
    head, bar, tail = text.rpartition("|")
    if not _SIZE.fullmatch(tail.strip()):
        return text
    return head.removesuffix("\\").strip() if bar else ""


def embed_alias(link: Link) -> str | None:
    """What of a link's alias a reader sees: an image embed's alias without its size."""
    if link.alias and link.kind == "embed" and is_image(link.target):
        return without_size(link.alias) or None
    return link.alias


def file_name(dest: str) -> str:
    """The file name a link's destination ends with (a URL's last path segment): what a Markdown
    image whose alt text is only a size shows."""
    path = dest.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    name = path[path.rfind("/") + 1 :]
    return (unquote(name) if "%" in name else name) or dest


def _depth(line: str) -> int:
    """The `>` markers in front of a line."""
    if ">" not in line[:64]:
        return 0
    m = _QUOTES.match(line)
    return line.count(">", 0, m.end()) if m else 0


def _unquoted(line: str, depth: int) -> str:
    """`line` without its `depth` quote markers; "" when it is quoted otherwise (a line out of
    the quote ends it, and the quote's table with it)."""
    if not depth:
        return line
    if _depth(line) != depth:
        return ""
    return line[_quote_end(line, depth) :]


def _quote_end(line: str, depth: int) -> int:
    """Where the first `depth` quote markers of `line` end."""
    pos = 0
    for _ in range(depth):
        m = _ONE_QUOTE.match(line, pos)
        if m is None:
            break
        pos = m.end()
    return pos


def _cell_count(row: str) -> int:
    """Cells of a table row (GFM: a header row with another number of cells than the
    delimiter row is no table): unescaped pipes, outer pipes optional."""
    quotes = _QUOTES.match(row)
    row = row[quotes.end() :].strip() if quotes else row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return len(_PIPE.split(row))


def _first(t: tuple[int, int, Span]) -> int:
    return t[0]


def _span_order(s: Span) -> tuple[int, int]:
    return (s.start, -s.end)


def _link_start(scan: str, t: mdlex.LinkTok) -> int:
    """Where a link's whole syntax starts (`![[`, `[[`, `[text](` or `[ref]:`), found back from its path."""
    if t.markdown:
        if t.reference:
            return scan.rfind("[", 0, t.start)
        open_paren = scan.rfind("](", 0, t.start)
        depth, i = 0, open_paren
        while i > 0:
            i -= 1
            c = scan[i]
            if c == "]":
                depth += 1
            elif c == "[":
                if depth == 0:
                    break
                depth -= 1
        return i - 1 if t.kind == "embed" and i > 0 and scan[i - 1] == "!" else i
    at = scan.rfind("[[", 0, t.start + 1)
    return at - 1 if t.kind == "embed" else at


def _link_end(scan: str, t: mdlex.LinkTok) -> int:
    if t.markdown:
        if t.reference:
            nl = scan.find("\n", t.end)
            return len(scan) if nl < 0 else nl
        close = scan.find(")", t.end + (1 if t.angle else 0))
        return len(scan) if close < 0 else close + 1
    close = scan.find("]]", t.end)
    return len(scan) if close < 0 else close + 2
