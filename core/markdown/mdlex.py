"""The one Markdown lexer: what Obsidian reads in a note body, with exact source spans.

Every consumer reads a note through this module: the index (links, embeds, tags, block ids),
the link rewriter of rename, read's sections (headings), the full-text index and the TUI
preview. Hand-written rather than built on markdown-it-py: markdown-it-py's CommonMark
tokenizer alone took 186 us per vaultgen note against 29 us for our whole parse (6.4x;
3,000 notes, this machine), which puts a cold 100k index past its 6 s budget before any
Obsidian extension runs. The lexer here does one pass over the lines only when a body has
something a line pass can change (a fence, an indented line, a comment), and regular
expressions over the rest.

The rules, from Obsidian's help (obsidianmd/obsidian-help, en/) and CommonMark:

* Hidden text is never a link, a tag, a heading or a block id. Hidden means code and comments:
  fenced code (``` or ~~~, three or more, closed only by a fence of the same character at
  least as long, so a 4-backtick fence holds a 3-backtick one), also inside blockquotes,
  callouts and list items; indented code blocks (4+ columns past the container, not
  interrupting a paragraph); code spans of any number of backticks (a run closes only at a
  run of the same length); `%%comments%%` inline or over several lines ("Comments are only
  visible in Editing view": an unclosed `%%` hides the rest of the note, as in Obsidian) and
  HTML comments `<!-- -->` (hidden in Reading view; an unclosed one at a line start runs to
  the end, CommonMark's HTML block).
* HTML blocks hold no link, tag or heading either ("Obsidian does not render Markdown syntax
  inside HTML elements", help: HTML content): CommonMark's HTML blocks of types 1 (`<pre`,
  `<script`, `<style`, `<textarea`, to the line with the closing tag) and 6 (a block-level tag
  such as `<div>`, `<table>`, `<tr>`, `<td>`, `<details>`, to the next blank line: "Blank
  lines will break the HTML block"). Inline HTML in a paragraph (`red: #ff0000 <br>`) is no
  block: Markdown there is read. HTML blocks stay in the search text (people read them).
* Wiki links `[[Name]]`, `[[Name#Heading]]`, `[[Name#^block]]`, `[[Name|shown]]`, and in
  tables `[[Name\\|shown]]` (the `\\` escapes the pipe; a file name can never end with `\\`);
  embeds `![[...]]`.
* Markdown links `[text](dest)` and images `![alt](dest)`: `<dest with spaces>`, balanced
  parentheses in a bare destination (`a(b).md`), an optional title; percent-decoded. URLs
  with a scheme and same-note `#anchors` are not file links.
* Reference-style definitions `[ref]: dest "title"` (CommonMark; `[text][ref]` renders as
  a link to dest in Obsidian): each definition's destination is one Markdown link.
* Tags `#tag` after whitespace or a line start: letters, numbers, `_`, `-`, `/`, and other
  Unicode letters, symbols and emoji; at least one character that is not a digit (`#1984`
  is not a tag). ASCII punctuation other than `_ - /` ends a tag, as do Unicode spaces and
  punctuation (`,` `。` `“`).
* ATX headings `#`..`######` at a line start (up to three spaces), outside hidden text.
* Block ids `^id` (letters, digits, `-`) at the end of a line.

Offsets are into the text as given (LF, CRLF or mixed line breaks: a CR is part of its line).

Over the project's 500-line guideline on purpose (one lexer, so its readers cannot disagree): the
hidden-range scanners (blocks, then inline code and comments) and the token readers (links, tags,
headings, block ids) share the same regular expressions, the same hidden ranges and the same
offset conventions; split apart, each half would carry the other's rules again, which is how
the index and the rewriter came to disagree before this module existed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import NamedTuple
from urllib.parse import unquote

MAX_LINKS = 10_000
MAX_TAGS = 1_000

_WIKI = re.compile(r"\[\[([^\[\]\n]+?)\]\]")  # a literal first: the engine's fast search
_MDLINK = re.compile(
    r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\([ \t]*"
    r"(<[^<>\n]*>|[^\s()<>]+(?:\([^\s()<>]*\)[^\s()<>]*)*)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
)
_REFDEF_LINE = (
    r" {0,3}\[((?:[^\[\]\n\\]|\\.)+)\]:[ \t]*(<[^<>\n]*>|[^\s<>]+)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\r?(?=\n|$)"
)
_REFDEF = re.compile(r"\n" + _REFDEF_LINE)  # from a line break: a MULTILINE ^ tries every offset
_REFDEF_FIRST = re.compile(_REFDEF_LINE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# ASCII punctuation but _ - /, whitespace, and the general, CJK and full-width punctuation blocks
_TAG_STOP = "\\s!-,.:-@\\[-\\^`{-~\u00a1-\u00bf\u2000-\u206f\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40"
_TAG = re.compile(r"#([^" + _TAG_STOP + r"]+)")  # after whitespace or a line start: checked by hand
# a literal line break first: the engine jumps from one to the next (a MULTILINE `^` tries every offset)
_ATX = re.compile(r"\n {0,3}(#{1,6})(?:[ \t]+([^\n]*?))?[ \t]*\r?(?=\n|$)")
_ATX_FIRST = re.compile(r" {0,3}(#{1,6})(?:[ \t]+([^\n]*?))?[ \t]*\r?(?=\n|$)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT = re.compile(r"\n {0,3}(=+|-+)[ \t]*\r?(?=\n|$)")
_RULE = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*)\r?$")
# after a space (Obsidian's help: "add a blank space followed by the identifier"), or right
# after an embed or link: its own help vault writes `![[image.png]]^version-history-image`
_BLOCK_ID = re.compile(r"(?:^|[ \t]|(?<=\]\]))\^([A-Za-z0-9-]+)[ \t]*\r?$", re.MULTILINE)
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
_LIST = re.compile(r"(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|$)")
_QUOTE = re.compile(r"(?: {0,3}>[ \t]?)+")
# first characters of a line the block walk must look at: blank, indented, quote, fence, list
_NOT_PLAIN = frozenset(" \t\r>`~-*+0123456789<") | {""}
_BACKTICKS = re.compile(r"``*")  # not `+: the engine finds a literal first character fast, `+ it walks
_INDENTED = re.compile(r"\n(?:    |\t)")
_HTML_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|"
    "dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|"
    "header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|"
    "param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
# CommonMark HTML block starts: type 1 (group 1, to its closing tag) and type 6 (to a blank line)
_HTML_BLOCK = re.compile(
    r"<(?:(pre|script|style|textarea)(?=[\s>]|$)|/?(?:" + _HTML_TAGS + r")(?=[\s>]|/>|$))", re.IGNORECASE
)
_HTML_LINE = re.compile(r"(?:^|\n)[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?<[A-Za-z/]")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")


class LinkTok(NamedTuple):
    """One link as written. [start, end) is the span of its path part as written (the bytes a
    rename rewrites: percent-encoding included, `<>`, `#heading` and `|alias` excluded)."""

    kind: str  # "wiki", "embed" (![[ ]] or ![ ]( )) or "markdown" (inline or a reference definition)
    target: str  # the path part, decoded and stripped ("" for a same-note [[#Heading]])
    heading: str | None
    alias: str | None
    start: int
    end: int
    raw: str  # the path part as written
    markdown: bool  # Markdown syntax (resolves relative to the note's folder first)
    angle: bool = False  # a <destination>
    reference: bool = False  # a `[ref]: dest` definition


class Heading(NamedTuple):
    level: int
    text: str
    start: int  # offset of the heading line
    end: int  # offset just after the line (its line break included)


# --- hidden text -------------------------------------------------------------------------------


def _indent(s: str) -> int:
    """Columns of leading whitespace (a tab advances to the next multiple of 4)."""
    col = 0
    for ch in s:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def _needs_lines(body: str, html: bool = False) -> bool:
    """Whether a line pass could find a block of code (a fence or an indented line), or with
    `html` an HTML block (a line starting with a tag).

    Single characters first: `"x" in s` is a fast scan, a multi-character `in` on a non-ASCII
    note costs about a microsecond a KB each."""
    return (
        ("`" in body and "```" in body)
        or ("~" in body and "~~~" in body)
        or "\t" in body
        or _INDENTED.search(body) is not None
        or body.startswith("    ")
        or (html and "<" in body and _HTML_LINE.search(body) is not None)
    )


def _block_ranges(body: str, html: bool = False) -> list[tuple[int, int]]:
    """[start, end) of fenced and indented code blocks (and with `html`, HTML blocks), one pass
    over the lines."""
    ranges: list[tuple[int, int]] = []
    pos = 0
    fence_char = ""
    fence_len = 0
    fence_quote = 0
    fence_indent = 0
    fence_start = 0
    code_start = -1  # an open indented code block
    code_end = 0
    list_indent = 0  # content column of the innermost open list item (0: none)
    prev_blank = True
    prev_para = False
    quote_depth = 0
    html_start = -1  # an open HTML block
    html_close = ""  # its closing tag (type 1), or "" (type 6: a blank line ends it)
    for line in body.split("\n"):
        start = pos
        pos += len(line) + 1
        if html_start >= 0:
            if html_close:
                if html_close in line.lower():
                    ranges.append((html_start, min(pos, len(body))))
                    html_start = -1
                continue
            if line.strip() and line.strip(" \t\r>"):
                continue
            ranges.append((html_start, start))  # a blank line ends it (and is read below)
            html_start = -1
        if fence_char:
            if not fence_quote and fence_char not in line:
                continue  # no closing fence here (the fast path of a long code block)
        elif not line:
            if quote_depth:
                quote_depth = list_indent = 0
            prev_blank, prev_para = True, False
            continue
        elif line[:1] not in _NOT_PLAIN:
            # a paragraph (or ATX heading) line at the margin, the common line: what the full
            # walk below concludes for it
            if code_start >= 0:
                ranges.append((code_start, min(code_end, len(body))))
                code_start = -1
            if quote_depth:
                quote_depth = list_indent = 0
            elif list_indent and prev_blank:
                list_indent = 0
            prev_blank, prev_para = False, line[0] != "#"
            continue
        inner_at = 0
        depth = 0
        if ">" in line[:64]:
            m = _QUOTE.match(line)
            if m:
                inner_at = m.end()
                depth = line.count(">", 0, inner_at)
        inner = line[inner_at:]
        if inner.endswith("\r"):
            inner = inner[:-1]
        stripped = inner.strip()
        if fence_char:
            if depth < fence_quote:
                ranges.append((fence_start, start))  # the quote (callout) ended: so does its fence
                fence_char = ""
            else:
                ind = _indent(inner)
                if (
                    ind - fence_indent < 4
                    and stripped
                    and stripped[0] == fence_char
                    and len(stripped) >= fence_len
                    and stripped.count(fence_char) == len(stripped)
                ):
                    ranges.append((fence_start, min(pos, len(body))))
                    fence_char = ""
                    prev_blank, prev_para = False, False
                continue
        if depth != quote_depth:
            quote_depth = depth
            list_indent = 0
        if not stripped:
            prev_blank, prev_para = True, False
            continue
        ind = _indent(inner) if inner[:1] in (" ", "\t") else 0
        if code_start >= 0:
            if ind >= list_indent + 4:
                code_end = pos
                continue
            ranges.append((code_start, min(code_end, len(body))))
            code_start = -1
        if ind >= list_indent + 4 and not prev_para:
            code_start, code_end = start, pos
            prev_blank, prev_para = False, False
            continue
        if list_indent and ind < list_indent and prev_blank:
            list_indent = 0  # a paragraph back at the margin ends the list
        body_at = len(inner) - len(inner.lstrip(" \t"))
        content = inner[body_at:]
        lm = _LIST.match(content) if ind < list_indent + 4 else None
        if lm is not None and not (content[0] in "-*" and content.replace(" ", "").replace("\t", "") == content[0] * 3):
            list_indent = ind + lm.end() if lm.end() < len(content) else ind + 2
            content = content[lm.end() :]
            ind = list_indent
        if content[:1] in ("`", "~") and ind < list_indent + 4:
            fm = _FENCE.match(content)
            if fm and not (fm.group(1)[0] == "`" and "`" in fm.group(2)):
                fence_char, fence_len = fm.group(1)[0], len(fm.group(1))
                fence_quote, fence_indent, fence_start = depth, ind, start
                continue
        if html and content[:1] == "<" and ind < list_indent + 4:
            hm = _HTML_BLOCK.match(content)
            if hm:
                html_close = f"</{hm.group(1).lower()}>" if hm.group(1) else ""
                if html_close and html_close in content.lower():
                    ranges.append((start, min(pos, len(body))))  # opened and closed on one line
                else:
                    html_start = start
                prev_blank, prev_para = False, False
                continue
        prev_blank = False
        prev_para = not content.startswith("#")
    if fence_char:
        ranges.append((fence_start, len(body)))
    if code_start >= 0:
        ranges.append((code_start, min(code_end, len(body))))
    if html_start >= 0:
        ranges.append((html_start, len(body)))
    return ranges


def _inline_ranges(body: str, skip: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """[start, end) of code spans and comments outside the `skip` ranges, left to right.

    Linear in the body: backtick runs are indexed by length once (a run closes at the next run
    of its length within its paragraph), and a closer searched for once and not found is not
    searched for again."""
    out: list[tuple[int, int]] = []
    si = 0
    n = len(body)
    pos = 0
    runs: dict[int, list[int]] | None = None
    blanks: list[int] = []
    no_html_close = False
    # the next "`", "%%" and "<!--" at or after pos, each found by str.find (a regex alternation
    # of the three walks the text a character at a time: 5x slower)
    far = n + 1
    nb = np = nh = -1
    while True:
        if nb < pos:
            nb = body.find("`", pos)
            if nb < 0:
                nb = far
        if np < pos:
            np = body.find("%%", pos)
            if np < 0:
                np = far
        if nh < pos:
            nh = body.find("<!--", pos)
            if nh < 0:
                nh = far
        at = min(nb, np, nh)
        if at == far:
            return out
        while si < len(skip) and skip[si][1] <= at:
            si += 1
        if si < len(skip) and skip[si][0] <= at:
            pos = skip[si][1]
            continue
        tok = "`" if at == nb else "%%" if at == np else "<!--"
        if tok == "`":
            end = at
            while end < n and body[end] == "`":
                end += 1
            length = end - at
            if at > 0 and body[at - 1] == "\\":  # an escaped backtick is literal
                pos = at + 1
                continue
            if runs is None:  # built on the first backtick, once
                runs = {}
                for r in _BACKTICKS.finditer(body):
                    runs.setdefault(r.end() - r.start(), []).append(r.start())
                blanks = [b.start() for b in _BLANK_LINE.finditer(body)]
            same = runs.get(length, ())
            i = bisect_right(same, at)
            bi = bisect_right(blanks, at)
            stop = blanks[bi] if bi < len(blanks) else n
            close = same[i] if i < len(same) and same[i] < stop else -1
            if close < 0:
                pos = end
                continue
            out.append((at, close + length))
            pos = close + length
        elif tok == "%%":
            end = body.find("%%", at + 2)
            end = n if end < 0 else end + 2
            out.append((at, end))
            pos = end
        else:
            end = -1 if no_html_close else body.find("-->", at + 4)
            if end < 0:
                no_html_close = True
                if at == 0 or body[at - 1] == "\n":
                    out.append((at, n))
                    return out
                pos = at + 4
                continue
            out.append((at, end + 3))
            pos = end + 3


def hidden_ranges(body: str, html: bool = True) -> list[tuple[int, int]]:
    """[start, end) ranges of code, comments and (with `html`) HTML blocks in a note body,
    sorted and disjoint."""
    blocks = _block_ranges(body, html) if _needs_lines(body, html) else []
    if "`" in body or ("%" in body and "%%" in body) or ("<" in body and "<!--" in body):
        spans = _inline_ranges(body, blocks)
        if spans:
            return sorted(blocks + spans)
    return blocks


def masked(body: str, ranges: list[tuple[int, int]] | None = None) -> str:
    """The body with code and comments blanked (every character but line breaks becomes a
    space), so offsets and line numbers in the result are those of the body. `ranges`: the
    body's `hidden_ranges` when the caller has them."""
    if ranges is None:
        ranges = hidden_ranges(body)
    if not ranges:
        return body
    pieces: list[str] = []
    pos = 0
    for a, b in ranges:
        if b <= pos:
            continue
        a = max(a, pos)
        pieces.append(body[pos:a])
        seg = body[a:b]
        pieces.append("\n".join([" " * len(x) for x in seg.split("\n")]) if "\n" in seg else " " * len(seg))
        pos = b
    pieces.append(body[pos:])
    return "".join(pieces)


# --- links -------------------------------------------------------------------------------------


def wiki_parts(inner: str) -> tuple[int, int, str | None, str | None]:
    """(start, end) of the target within a wiki link's inner text, its heading and alias.

    `Name\\|alias` (a pipe escaped in a table) is `Name` with the alias."""
    cut = len(inner)
    for ch in "#|":
        i = inner.find(ch)
        if 0 <= i < cut:
            cut = i
    alias = None
    heading = None
    rest = inner[cut:]
    part_end = cut
    if cut > 0 and cut < len(inner) and inner[cut] == "|" and inner[cut - 1] == "\\":
        part_end = cut - 1
    bar = rest.find("|")
    if bar >= 0:
        alias = rest[bar + 1 :].strip() or None
        head_part = rest[:bar]
    else:
        head_part = rest
    if head_part.endswith("\\"):
        head_part = head_part[:-1]
    if head_part.startswith("#"):
        heading = head_part[1:].strip() or None
    part = inner[:part_end]
    lead = len(part) - len(part.lstrip())
    return lead, lead + len(part.strip()), heading, alias


def _wiki(m: re.Match[str], text: str, base: int) -> LinkTok | None:
    inner, at = m.group(1), m.start(1)
    if "#" not in inner and "|" not in inner and "\\" not in inner:
        raw = inner.strip()
        if not raw:
            return None
        s = inner.find(raw[0]) if inner[0].isspace() else 0
        e, heading, alias = s + len(raw), None, None
    else:
        s, e, heading, alias = wiki_parts(inner)
        raw = inner[s:e]
    if not raw and not heading:
        return None
    bang = at > 2 and text[at - 3] == "!"
    return LinkTok("embed" if bang else "wiki", raw, heading, alias, base + at + s, base + at + e, raw, False)


def wiki_links(text: str, base: int = 0) -> list[LinkTok]:
    """Wiki links and embeds anywhere in `text` (no code or comment rules: for frontmatter strings)."""
    if "[[" not in text:
        return []
    return [t for m in _WIKI.finditer(text) if (t := _wiki(m, text, base)) is not None]


def property_link(value: str) -> str | None:
    """The target of a property value that is one wiki link and nothing else (`[[Published]]`,
    `[[Published|out]]` -> `Published`), as Obsidian's properties hold links (kepano's template
    writes `status: ["[[Active]]"]`); None for any other text."""
    word = value.strip()
    if not (word.startswith("[[") and word.endswith("]]")):
        return None
    found = wiki_links(word)
    if len(found) == 1 and found[0].kind == "wiki":
        return found[0].target.strip()
    return None


def _dest(href: str, at: int, base: int, embed: bool, reference: bool) -> LinkTok | None:
    angle = href.startswith("<")
    if angle:
        href, at = href[1:-1], at + 1
    if not href or href.startswith("#") or _SCHEME.match(href):
        return None
    path, _, fragment = href.partition("#")
    if not path:
        return None
    target = unquote(path) if "%" in path else path
    heading = (unquote(fragment) if "%" in fragment else fragment) or None
    return LinkTok(
        "embed" if embed else "markdown",
        target.strip(),
        heading,
        None,
        base + at,
        base + at + len(path),
        path,
        True,
        angle,
        reference,
    )


def links(scan: str, base: int = 0, limit: int = MAX_LINKS) -> list[LinkTok]:
    """Links in a masked body (see `masked`), in text order; offsets plus `base`."""
    out: list[LinkTok] = []
    if "[" not in scan:
        return out
    for m in _WIKI.finditer(scan):  # a literal first: as fast as a `"[[" in scan` check
        t = _wiki(m, scan, base)
        if t is not None:
            out.append(t)
            if len(out) >= limit:
                return out
    if "(" in scan and "](" in scan:
        for m in _MDLINK.finditer(scan):
            at = m.start()
            t = _dest(m.group(2), m.start(2), base, at > 0 and scan[at - 1] == "!", False)
            if t is not None:
                out.append(t)
                if len(out) >= limit:
                    break
    if ":" in scan:
        for m in _refdefs(scan):
            t = _dest(m.group(2), m.start(2), base, False, True)
            if t is not None:
                out.append(t)
                if len(out) >= limit:
                    break
    if len(out) > 1:
        out.sort(key=_start)
    return out


def _refdefs(scan: str) -> Iterator[re.Match[str]]:
    """Reference definition matches, each at the start of its line (group 2 the destination)."""
    if scan[:4].lstrip(" ")[:1] == "[":
        m = _REFDEF_FIRST.match(scan)
        if m is not None:
            yield m
    yield from _REFDEF.finditer(scan)


def _start(t: LinkTok) -> int:
    return t.start


# --- tags, headings, block ids -----------------------------------------------------------------


def tags(scan: str, limit: int = MAX_TAGS) -> list[str]:
    """Inline tags of a masked body, in first-seen order (without '#', a trailing '/' dropped)."""
    if "#" not in scan:
        return []
    seen: dict[str, None] = {}
    for m in _TAG.finditer(scan):
        at = m.start()
        if at and not scan[at - 1].isspace():
            continue
        tag = m.group(1).rstrip("/")
        if tag and not tag.isdigit() and tag.strip("0123456789/-"):
            seen[tag] = None
            if len(seen) >= limit:
                break
    return list(seen)


def headings(scan: str, base: int = 0, body: str | None = None) -> list[Heading]:
    """ATX and setext headings of a masked body, in order. With the `body` it masks, a heading's
    text is read from the body (a heading "The `x()` call" keeps its code span)."""
    out = []
    src = scan if body is None else body
    if "#" in scan:
        for m in _atx(scan):
            text = (m.group(2) or "") if src is scan else src[m.end(1) : m.end()].strip()
            if text.endswith("#"):
                text = _CLOSING_HASHES.sub("", text).strip()
            at = m.start() + 1 if scan[m.start()] == "\n" else m.start()
            end = m.end() + 1 if m.end() < len(scan) else m.end()
            out.append(Heading(len(m.group(1)), text, base + at, base + min(end, len(scan))))
    setext = _setext(scan, base, src)  # no substring pre-checks: each costs as much as the search
    if setext:
        out = sorted(out + setext, key=_heading_start) if out else setext
    return out


def heading_texts(scan: str, body: str | None = None) -> list[str]:
    """The texts of `headings(scan, 0, body)`, cheaper (the index keeps only these)."""
    out = []
    src = scan if body is None else body
    if "#" in scan:
        for m in _atx(scan):
            text = (m.group(2) or "") if src is scan else src[m.end(1) : m.end()].strip()
            if text:
                if text.endswith("#"):
                    text = _CLOSING_HASHES.sub("", text).strip()
                out.append(text)
    setext = _setext(scan, 0, src)
    if setext:
        if not out:
            return [h.text for h in setext]
        return [h.text for h in headings(scan, 0, body) if h.text]
    return out


def _atx(scan: str) -> Iterator[re.Match[str]]:
    """ATX heading matches: each starts at the line break before its line (or at offset 0)."""
    if scan[:4].lstrip(" ")[:1] == "#":
        m = _ATX_FIRST.match(scan)
        if m is not None:
            yield m
    yield from _ATX.finditer(scan)


def _heading_start(h: Heading) -> int:
    return h.start


def _setext(scan: str, base: int, src: str) -> list[Heading]:
    """Setext headings: paragraph lines underlined by a line of `=` (level 1) or `-` (level 2).

    CommonMark: the underline ends a paragraph, and the heading is the whole paragraph; under a
    blank line, a list item, a quote or a table row (a lazy continuation) `---` is a rule."""
    out: list[Heading] = []
    floor = 0  # the previous setext heading ends here
    for m in _SETEXT.finditer(scan):
        pos = m.start()  # the line break before the underline
        texts: list[str] = []
        start = pos
        lazy = False
        while pos > floor:
            ls = max(scan.rfind("\n", 0, pos) + 1, floor)
            line = scan[ls:pos].rstrip("\r")
            if not line.strip():
                break
            kind = _para_line(line)
            if kind:
                lazy = kind == "lazy"
                break
            texts.append(src[ls:pos].strip() if src is not scan else line.strip())
            start = ls
            pos = ls - 1
        if not texts or lazy:
            continue
        end = min(m.end() + 1, len(scan))
        out.append(Heading(1 if m.group(1)[0] == "=" else 2, " ".join(reversed(texts)), base + start, base + end))
        floor = end
    return out


def _para_line(line: str) -> str:
    """ "" for a (masked, non-blank) line that can be paragraph text, else why not: "lazy" for a
    list item, quote or table row (whose paragraph the next lines continue), "block" otherwise."""
    if _indent(line) >= 4:
        return "block"
    s = line.lstrip()
    if s[0] in ">|" or _LIST.match(s):
        return "lazy"
    if s[0] == "#" or _RULE.match(s):
        return "block"
    return ""


def block_ids(scan: str) -> list[str]:
    """Block ids (`^id` ending a line) of a masked body, in order."""
    if "^" not in scan:
        return []
    return [m.group(1) for m in _BLOCK_ID.finditer(scan)]


def tag_spans(scan: str) -> list[tuple[int, int, str]]:
    """(start, end, tag) of each inline tag of a masked body, `#` included in the span; the rules
    of `tags`, every occurrence."""
    out: list[tuple[int, int, str]] = []
    if "#" not in scan:
        return out
    for m in _TAG.finditer(scan):
        at = m.start()
        if at and not scan[at - 1].isspace():
            continue
        tag = m.group(1).rstrip("/")
        if tag and not tag.isdigit() and tag.strip("0123456789/-"):
            out.append((at, at + 1 + len(tag), tag))
    return out


def block_id_spans(scan: str) -> list[tuple[int, int, str]]:
    """(start, end, id) of each block id of a masked body, the `^` included in the span."""
    if "^" not in scan:
        return []
    return [(m.start(1) - 1, m.end(1), m.group(1)) for m in _BLOCK_ID.finditer(scan)]


def code_blocks(body: str) -> list[tuple[int, int]]:
    """[start, end) of the fenced and indented code blocks of a body (line starts to line ends)."""
    return _block_ranges(body) if _needs_lines(body) else []


def inline_hidden(body: str, blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """[start, end) of the code spans and comments of a body outside its `code_blocks`."""
    if "`" in body or "%%" in body or "<!--" in body:
        return _inline_ranges(body, blocks)
    return []


def visible(body: str, ranges: list[tuple[int, int]] | None = None) -> str:
    """The body without its code and comments (each hidden range becomes one space, or one line
    break when it spanned lines): the text a search index reads."""
    if ranges is None:
        ranges = hidden_ranges(body)
    if not ranges:
        return body
    pieces: list[str] = []
    pos = 0
    for a, b in ranges:
        if b <= pos:
            continue
        a = max(a, pos)
        pieces.append(body[pos:a])
        pieces.append("\n" if "\n" in body[a:b] else " ")
        pos = b
    pieces.append(body[pos:])
    return "".join(pieces)
