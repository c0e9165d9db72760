"""The preview's renderer: a note's lines as read by core's lexer, drawn as rich Text.

`core.markdown.lines.styled_lines` reads the note (the one lexer of the index: what is code,
a comment, a link or a tag is decided there, so the preview and the index never disagree);
this module only turns line kinds and spans into styles: headings, lists and tasks (each
state its mark), quotes and callouts (a custom title alone, else the type's name; a folded one
its title line alone), fences and code, rules, inline
code, emphasis, tags, wiki links, embeds and Markdown links. What Obsidian's reading view
hides is hidden here too: comments (`%% %%` and `<!-- -->`, inline or whole lines), block
ids (`^id` ending a line), inline HTML tags (their text shows; `<br>` breaks the line) and
the backslash of an escape; an entity (`&mdash;`) is drawn as its character. Links carry an `@click` action with their index in
the caller's link table. Cost is linear in the lines rendered: `render_at` draws one source
line (or one table) at a time, so that `tui.widgets.notedoc` renders on demand.

Tables (GitHub style: a header row, a `| --- | :-: |` delimiter row, body rows) are drawn as
aligned columns; given the `width` they will be shown at, wide cells wrap inside their
column instead of the whole row wrapping across the screen.

An embed of a note, given the context's `EmbedReader` (core.links.embeds), draws the
note's part in a frame, its lines rendered and wrapped here as the note's own; drawing one
that is not read yet when the context may not read (the UI thread) raises `EmbedNotRead`, and
the doc leaves that line to its worker.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.cells import cell_len
from rich.console import Console
from rich.style import Style
from rich.text import Text

from vaultwatch.core.markdown.lines import (
    MD_LINK,
    Line,
    Span,
    callout_fold,
    embed_alias,
    file_name,
    is_image,
    styled_lines,
    without_html,
    without_size,
)
from vaultwatch.core.model import Link
from vaultwatch.tui.widgets import spans

if TYPE_CHECKING:
    from vaultwatch.core.links.embeds import EmbedReader, Part

MAX_LINES = 3000
MAX_LINE_CHARS = 20_000  # a longer line is cut (one 3 MB line would be 30,000 screen lines)

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
COLUMN_GAP = " │ "
MIN_COLUMN = 4
_console: Console | None = None
_MARKS = {"bold": 2, "strike": 2, "highlight": 2, "italic": 1}
_TABLE = frozenset({"table_head", "table_rule", "table_row"})


@dataclass(frozen=True, slots=True)
class Styles:
    """The styles the renderer uses (taken from the app's theme by the caller)."""

    heading: Style = Style(bold=True, color="#7fb4ff")
    table_head: Style = Style(bold=True)
    table_rule: Style = Style(dim=True)
    heading1: Style = Style(bold=True, underline=True, color="#7fb4ff")
    link: Style = Style(underline=True, color="#5fd7ff")
    broken: Style = Style(color="#ff6b6b", strike=True)
    # a link to a note not written yet: no breakage (Obsidian draws it faded), and clear of the broken look
    unwritten: Style = Style(underline=True, dim=True, color="#5fd7ff")
    embed: Style = Style(italic=True, color="#d7af5f")
    code: Style = Style(color="#d7875f")
    quote: Style = Style(italic=True, dim=True)
    tag: Style = Style(color="#af87ff")
    dim: Style = Style(dim=True)
    bold: Style = Style(bold=True)
    italic: Style = Style(italic=True)
    strike: Style = Style(strike=True)
    highlight: Style = Style(reverse=True)
    comment: Style = Style(dim=True, italic=True)
    callout: Style = Style(bold=True)


THEME_COLOURS = {  # Styles field -> the theme variable its colour comes from
    "heading": "text-primary",
    "heading1": "text-primary",
    "link": "text-accent",
    "broken": "text-error",
    "unwritten": "text-accent",
    "embed": "text-success",
    "code": "text-warning",
    "tag": "text-secondary",
}


def theme_styles(variables: dict[str, str], background: Any) -> Styles:
    """Styles whose colours come from a Textual theme's CSS variables (`App.get_css_variables`),
    composited on `background` (a textual Color) and made readable (4.5:1) against it; a
    variable missing or unparsable keeps the default colour."""
    from textual.color import Color, ColorParseError  # noqa: PLC0415

    from vaultwatch.tui.widgets.contrast import readable  # noqa: PLC0415

    defaults = Styles()
    try:
        text = background + Color.parse(variables.get("foreground", "#e0e0e0"))
    except ColorParseError:
        text = Color.parse("#e0e0e0")
    changes = {}
    for name, variable in THEME_COLOURS.items():
        try:
            colour = readable(Color.parse(variables[variable]), background, text)
        except (KeyError, ColorParseError):
            continue
        changes[name] = getattr(defaults, name) + Style(color=colour.rich_color)
    return replace(defaults, **changes)


Resolve = Callable[[Link], "str | None"]
# what of a link resolved to a note (the path) is missing: "heading", "block" or None
Missing = Callable[[Link, str], "str | None"]


def _nothing_missing(link: Link, target: str) -> str | None:
    return None


@dataclass(slots=True)
class Context:
    """What rendering a note needs besides its lines: how links resolve, the link table the
    rendered links are appended to (their index is their `@click` argument), the styles, the
    width tables are fitted to (None: natural widths), and what of a resolved link's #heading
    or #^block the linked note lacks (core.links.graph.missing_part)."""

    resolve: Resolve
    links: list
    styles: Styles = Styles()
    width: int | None = None
    missing: Missing = _nothing_missing
    # embeds of notes are drawn in place from this reader (None: as their names, `▣ Note`)
    embeds: EmbedReader | None = None
    source: str = ""  # the note these lines are of (what its links resolve from)
    depth: int = 0  # embeds around these lines
    # (path, #part) of the note and the embeds around these lines: one of them again is a cycle
    shown: tuple[tuple[str, str], ...] = ()
    # False: an embedded note not read yet raises EmbedNotRead instead of being read (a caller
    # on the UI thread leaves the read to its worker)
    reading: bool = True


class EmbedNotRead(Exception):
    """Drawing the line needs an embedded note that is not read yet (Context.reading False)."""


def body_lines(text: str, max_chars: int | None = None) -> list[Line]:
    """The lexer's lines of a note without its frontmatter block (the preview shows that apart)."""
    return without_frontmatter(styled_lines(text, max_chars))


def without_frontmatter(lines: list[Line]) -> list[Line]:
    """The lexer's lines after the frontmatter block."""
    n = 0
    while n < len(lines) and lines[n].kind in ("frontmatter_fence", "frontmatter"):
        n += 1
    return lines[n:] if n else lines


def render_note(
    body: str,
    resolve: Resolve,
    styles: Styles = Styles(),
    max_lines: int = MAX_LINES,
    width: int | None = None,
    missing: Missing = _nothing_missing,
) -> tuple[Text, list[tuple[Link, str | None]]]:
    """Render a whole note (tables fitted to `width` cells when given). Returns the Text and
    the links in it with their resolved paths (tests, small notes)."""
    ctx = Context(resolve, [], styles, width, missing)
    lines = body_lines(body)
    out: list[Text] = []
    n = 0
    while n < min(len(lines), max_lines):
        texts, n = render_at(lines, n, ctx)
        out.extend(texts)
    if len(lines) > max_lines:
        out.append(more_lines(len(lines) - max_lines, styles))
    text = Text("\n").join(out)
    text.no_wrap, text.overflow = False, "fold"
    return text, ctx.links


def more_lines(count: int, styles: Styles) -> Text:
    return Text(f"… {count:,} more lines not shown: open the note in your editor", styles.dim)


def render_at(lines: Sequence[Line], n: int, ctx: Context) -> tuple[list[Text], int]:
    """Source line `n` drawn (a table starting there: the whole table), and the index of the
    next source line. A line may draw as nothing (a setext heading's underline)."""
    line = lines[n]
    kind = line.kind
    if kind in _TABLE:
        end = n + 1
        while end < len(lines) and lines[end].kind in ("table_rule", "table_row"):
            end += 1
        return _table(lines[n:end], ctx), end
    if kind == "callout" and callout_fold(line) == "-":  # folded: its title line alone
        end = n + 1
        while end < len(lines) and lines[end].quote >= line.quote:
            end += 1
        return _render_line(line, ctx), end
    return _render_line(line, ctx), n + 1


def _clip(line: Line) -> tuple[str, tuple[Span, ...], str]:
    """The line's text and spans cut at MAX_LINE_CHARS, and what to say about the rest."""
    text = line.text
    if len(text) <= MAX_LINE_CHARS:
        return text, line.spans, ""
    kept = tuple(s for s in line.spans if s.end <= MAX_LINE_CHARS)
    return (
        text[:MAX_LINE_CHARS],
        kept,
        f" … {len(text) - MAX_LINE_CHARS:,} more characters of this line are not shown",
    )


QUOTE_BAR = "▎ "


def _quote_prefix(out: Text, line: Line, styles: Styles) -> None:
    if line.quote:
        out.append(QUOTE_BAR * line.quote, styles.quote)


class Hang(NamedTuple):
    """How a wrapped piece of a drawn line starts: `bars` characters repeated (a quote's or
    callout's bars, as reading view keeps the bar beside each wrapped line), then `indent`
    cells of space, so that the piece starts under the line's text (a list item's text after
    its marker, a code block's code), as reading view hangs them."""

    bars: int = 0
    indent: int = 0


def hanging(line: Line) -> Hang:
    """What every wrapped piece of `line`'s drawing starts with (a table wraps inside its cells)."""
    if line.kind in _TABLE:
        return Hang()
    bars = len(QUOTE_BAR) * line.quote
    if line.kind == "list":
        return Hang(bars, line.level + cell_len(_bullet(line)))
    if line.kind == "code":  # under the code, at its own indent (a block inside a list item)
        code = line.text[line.marker if line.quote else 0 :]
        return Hang(bars, len(_CODE_INDENT) + len(code) - len(code.lstrip(" ")))
    if line.kind == "fence":
        return Hang(bars, len(_CODE_INDENT))
    return Hang(bars)


_CODE_INDENT = "  "


# A task's mark by the character in its box. Obsidian itself draws any character but a space as
# checked; the Tasks plugin and themes (Minimal, ITS) give the common ones a look of their own.
# Each is one cell and a space, as the box's hanging indent counts.
TASK_MARKS = {
    " ": "☐",
    "x": "☑",
    "X": "☑",
    "/": "◐",  # in progress, half done
    "-": "⊟",  # cancelled (its text struck through)
    ">": "▷",  # forwarded, rescheduled
    "<": "◁",  # scheduled
    "*": "★",  # starred
}


def _bullet(line: Line) -> str:
    """What a list item's marker draws as: a task's mark, a bullet, or its number."""
    if line.info:
        state = line.info[1:2]
        return TASK_MARKS.get(state, state if state.strip() else "☐") + " "
    marker = line.text[: line.marker].lstrip(" >\t")
    if marker[:1] in "-+*":
        return "• "
    return marker.split()[0] + " " if marker.split() else "• "


def _render_line(line: Line, ctx: Context) -> list[Text]:
    styles = ctx.styles
    text, line_spans, cut = _clip(line)
    kind = line.kind
    out = Text()
    if kind == "setext_rule" or kind in ("frontmatter", "frontmatter_fence"):
        return []
    if kind == "blank":
        if line.quote:
            _quote_prefix(out, line, styles)
        return [out]
    _quote_prefix(out, line, styles)
    body_at = line.marker if line.quote and kind not in ("heading", "list", "callout") else 0
    if kind == "fence":
        opening = line.info or not _is_closing(text[body_at:])
        spans.append(
            out,
            _CODE_INDENT + "╌" * 20 + (f" {line.info}" if line.info else "") if opening else _CODE_INDENT + "╌" * 20,
            styles.dim,
        )
    elif kind == "code":
        spans.append(out, _CODE_INDENT + text[line.marker if line.quote else 0 :], styles.code)
    elif kind == "comment":  # wholly inside a comment: reading view draws no line for it
        return []
    elif kind == "rule":
        out.append("─" * 40, styles.dim)
    elif kind == "heading":
        base = styles.heading1 if line.level == 1 else styles.heading
        start, end = line.marker, len(text.rstrip())
        if text[line.marker - 1 : line.marker] in (" ", "\t", "#") or line.marker:
            stripped = text[start:end]
            closing = re.search(r"(?:^|[ \t]+)#+$", stripped)
            if closing and text.lstrip(" >").startswith("#"):
                end = start + closing.start()
        _inline(out, text, line_spans, start, end, ctx, base)
    elif kind == "callout":  # `> [!tip] My title` shows "My title"; with no title, the type's name
        title_at = line.marker
        if text[title_at:].strip():
            title_at += len(text[title_at:]) - len(text[title_at:].lstrip())
            _inline(out, text, line_spans, title_at, len(text.rstrip()), ctx, styles.callout)
        else:
            out.append(line.info.replace("-", " ").capitalize(), styles.callout)
        fold = callout_fold(line)
        if fold:  # Obsidian's fold marker after the title: folded (its body hidden) or open
            out.append(" ")
            out.append("▸" if fold == "-" else "▾", styles.dim)
    elif kind == "list":
        out.append(" " * line.level)
        state = line.info[1:2]
        task = line.info and state not in (" ", "x", "X")
        out.append(_bullet(line), styles.callout if task else styles.dim)
        look = styles.quote if line.quote else None
        if state == "-" and line.info:  # a cancelled task: struck through, as themes draw it
            look = (look or Style()) + styles.strike + styles.dim
        _inline(out, text, line_spans, line.marker, len(text), ctx, look)
    else:  # text (and a quote's lines)
        framed = _alone(line, text, line_spans, body_at, ctx)
        if framed is not None:  # a line of one embed of a note: the note's part in its place
            return _transclusion(line, framed[0], framed[1], ctx, Text())
        _inline(out, text, line_spans, body_at, len(text), ctx, styles.quote if line.quote else None)
        if not out.plain[hanging(line).bars :].strip() and any(sp.kind == "html" for sp in line_spans):
            return []  # only tags (`<div align="center">`): reading view draws no line for it
    if cut:
        out.append(cut, styles.dim)
    elif line_spans and line_spans[-1].kind == "block_id":
        out.rstrip()
    if "\n" in out.plain:  # a `<br>`: one source line drawn as several, each hung as a wrapped piece
        pieces = list(out.split("\n", allow_blank=True))
        drawn = [pieces[0], *(_hung(line, styles) + piece for piece in pieces[1:])]
    else:
        drawn = [out]
    if ctx.embeds is not None and kind in ("text", "list"):  # embeds of notes inside the line: after it
        for sp in line_spans:
            if sp.kind == "embed" and sp.link is not None:
                target = _embedded_note(sp.link, ctx)
                if target is not None:
                    drawn.extend(_transclusion(line, sp.link, target, ctx, _hung(line, styles)))
    return drawn


# Embeds of notes, drawn in place as Obsidian's reading view draws them: the note's part (all of
# it, a section, a block) in a frame titled with the note's name.
MAX_EMBED_DEPTH = 3  # embeds inside embeds drawn this deep; a deeper one stays a name
FRAME_WIDTH = 60  # a frame's rules without a width to fit (render_note with width None)
FRAME_BAR = "│ "


def _embedded_note(link: Link, ctx: Context) -> str | None:
    """The note `link` (an embed) shows in place, when it resolves to one that has its #part;
    None: it stays a name (an image, a missing note or heading, drawn as such)."""
    embeds = ctx.embeds
    if embeds is None:
        return None
    target = ctx.resolve(link)
    if embeds.note(target) is None or target is None or ctx.missing(link, target):
        return None
    return target


def _alone(line: Line, text: str, line_spans: Sequence[Span], body_at: int, ctx: Context) -> tuple[Link, str] | None:
    """(link, note) when the line is one embed of a note and nothing else (a block id may end it)."""
    if ctx.embeds is None or not any(sp.kind == "embed" for sp in line_spans):
        return None
    found = None
    pos = body_at
    for sp in line_spans:
        if sp.start < pos:
            continue  # inside the embed (spans are sorted, enclosing first)
        if text[pos : sp.start].strip():
            return None
        if sp.kind == "embed" and sp.link is not None and found is None:
            found = sp.link
        elif sp.kind != "block_id":
            return None
        pos = sp.end
    if found is None or text[pos:].strip():
        return None
    target = _embedded_note(found, ctx)
    return (found, target) if target is not None else None


def _transclusion(line: Line, link: Link, target: str, ctx: Context, lead: Text) -> list[Text]:
    """The frame of what `link` embeds of note `target`, each line starting with `lead` (the
    bars or indent of the line the embed is in). An embed of a part already being shown around
    it (a note embedding itself, a cycle), or nested too deep, is drawn as its name with a mark."""
    styles = ctx.styles
    embeds = ctx.embeds
    assert embeds is not None
    if not lead.plain and line.quote:
        lead = Text(QUOTE_BAR * line.quote, styles.quote)
    key = (target, link.heading or "")
    chain = ctx.shown or ((ctx.source, ""),)
    name = _label("![[" if link.kind == "embed" else "![](", link)
    if key in chain:
        return [_mark(lead, name, link, ctx, "↻ embeds itself: not shown again")]
    if ctx.depth >= MAX_EMBED_DEPTH:
        return [_mark(lead, name, link, ctx, "… embedded too deep to show here")]
    part = embeds.part(link, target, read=ctx.reading)
    if part is None:
        raise EmbedNotRead(target)
    if part.problem:
        return [_mark(lead, name, link, ctx, "cannot be read" if part.problem == "unreadable" else "not found")]
    width = ctx.width - lead.cell_len if ctx.width is not None else None
    top = lead.copy()
    top.append("╭─ ", styles.dim)
    _title(top, part, link, ctx)
    top.append(" ", styles.dim)
    rule = (width if width is not None else FRAME_WIDTH) - (top.cell_len - lead.cell_len)
    if rule > 0:
        top.append("─" * rule, styles.dim)
    out = [top]
    inner_width = max(10, width - len(FRAME_BAR)) if width is not None else None
    inner = Context(
        lambda inner_link: embeds.resolve(target, inner_link),
        ctx.links,
        styles,
        inner_width,
        ctx.missing,
        embeds,
        target,
        ctx.depth + 1,
        (*chain, key),
        ctx.reading,
    )
    bar = lead + Text(FRAME_BAR.rstrip(), styles.dim) + " "
    k = 0
    while k < len(part.lines):
        texts, after = render_at(part.lines, k, inner)
        hang = hanging(part.lines[k])
        for drawn in texts:
            pieces = wrap(drawn, inner_width, hang) if inner_width is not None else [drawn]
            out.extend(bar + piece for piece in pieces)
        k = after
    if part.left_out:
        more = "line" if part.left_out == 1 else "lines"
        out.append(bar + Text(f"… {part.left_out:,} more {more} of {part.title} not shown", styles.dim))
    bottom = lead.copy()
    bottom.append("╰" + "─" * ((width if width is not None else FRAME_WIDTH) - 1), styles.dim)
    out.append(bottom)
    return out


def _title(out: Text, part: Part, link: Link, ctx: Context) -> None:
    """The frame's title: the note's name, a link to it (a click opens it)."""
    index = len(ctx.links)
    ctx.links.append((link, part.path))
    out.append(part.title, ctx.styles.embed + Style(bold=True, meta={"@click": f"follow({index})"}))


def _mark(lead: Text, name: str, link: Link, ctx: Context, why: str) -> Text:
    """An embed drawn as its name, with why its content is not."""
    out = lead.copy()
    _link(out, name, link, ctx, True)
    out.append(" ")
    out.append(why, ctx.styles.dim)
    return out


def _hung(line: Line, styles: Styles) -> Text:
    """The start of a line broken by a `<br>`: the quote's bars and the item's hanging indent."""
    out = Text()
    _quote_prefix(out, line, styles)
    out.append(" " * hanging(line).indent)
    return out


_NO_HANG = Hang()


def wrap(line: Text, width: int, hang: Hang = _NO_HANG) -> list[Text]:
    """One rendered line of the note as the display lines it takes at `width` cells (words
    wrapped, over-long words folded); every display line after the first starts with the
    line's first `hang.bars` characters (a quote's bars) and `hang.indent` spaces (under a list
    item's text). Thread-safe. (The spaces around styled runs are split off when a line is
    drawn, `NoteBody.render_line` with tui.widgets.spans.separate.)"""
    console = _wrap_console()
    if line.style:  # Text.render leaves the base style out: make it the lowest span
        line.stylize_before(line.style)
        line.style = ""
    if line.cell_len <= width:
        return [line]
    if 0 < hang.bars + hang.indent < width // 2:
        head, rest = line.divide([hang.bars + hang.indent])
        bars = head[: hang.bars]
        lead = bars + " " * (head.cell_len - bars.cell_len)
        pieces = rest.wrap(console, width - head.cell_len, overflow="fold")
        return [head + pieces[0], *(lead + piece for piece in pieces[1:])]
    return list(line.wrap(console, width, overflow="fold"))


def _wrap_console() -> Console:
    """A console for wrapping (it needs one only for tab sizes and the like)."""
    global _console
    if _console is None:
        _console = Console(width=200, color_system=None, force_terminal=False, legacy_windows=False)
    return _console


def _is_closing(fence: str) -> bool:
    stripped = fence.strip()
    return bool(stripped) and stripped.count(stripped[0]) == len(stripped)


def _inline(
    out: Text,
    text: str,
    line_spans: Sequence[Span],
    start: int,
    end: int,
    ctx: Context,
    base: Style | None,
    *,
    table: bool = False,
) -> None:
    """text[start:end] with its spans styled (spans are sorted by start, enclosing ones first)."""
    pos = start
    i = 0
    n = len(line_spans)
    while i < n:
        sp = line_spans[i]
        if sp.start < pos or sp.end <= start:
            i += 1
            continue
        if sp.start >= end:
            break
        if sp.start > pos:
            _plain(out, text[pos : sp.start], base, ctx, table)
        j = i + 1
        while j < n and line_spans[j].start < sp.end:
            j += 1
        _span(out, text, sp, line_spans[i + 1 : j], min(sp.end, end), ctx, base, table)
        pos = min(sp.end, end)
        i = j
    if pos < end:
        _plain(out, text[pos:end], base, ctx, table)


def _plain(out: Text, piece: str, base: Style | None, ctx: Context, table: bool) -> None:
    """Text without lexer spans; external Markdown links (a URL: no note) shown by their label."""
    if table:
        piece = piece.replace("\\|", "|")
    if "](" not in piece:
        out.append(piece, base)
        return
    pos = 0
    for m in MD_LINK.finditer(piece):
        href = m.group(3).strip("<>")
        if not (_SCHEME.match(href) or href.startswith("#")):
            continue
        if m.start() > pos:
            out.append(piece[pos : m.start()], base)
        label = without_html(m.group(2))  # `[<button …>Open</button>](obsidian://…)` shows "Open"
        if m.group(1):  # an image: alt text that is only a size shows the file's name
            out.append(without_size(label) or file_name(href), ctx.styles.embed)
        else:
            out.append(label or href, ctx.styles.link)
        pos = m.end()
    if pos < len(piece):
        out.append(piece[pos:], base)


def _span(
    out: Text, text: str, sp: Span, inner: Sequence[Span], end: int, ctx: Context, base: Style | None, table: bool
) -> None:
    styles = ctx.styles
    kind = sp.kind
    seg = text[sp.start : end]
    if kind in _MARKS:
        mark = 0 if sp.value == "html" else _MARKS[kind]  # `<b>…</b>`: its tags are inner spans, hidden
        style = (base or Style()) + getattr(styles, kind)
        _inline(out, text, inner, sp.start + mark, max(sp.start + mark, end - mark), ctx, style, table=table)
    elif kind == "anchor":  # `<a href=…>text</a>`: its text, drawn as a link (to nothing to follow here)
        _inline(out, text, inner, sp.start, end, ctx, (base or Style()) + styles.link, table=table)
    elif kind == "autolink":
        out.append(seg[1:-1], styles.link)
    elif kind == "entity":  # the lexer marks only those that decode to something else
        out.append(html.unescape(seg), base)
    elif kind == "br":  # `_render_line` and `_table` break the line here
        out.append("\n")
    elif kind in ("wiki", "embed", "markdown") and sp.link is not None:
        _link(out, _label(seg, sp.link), sp.link, ctx, kind == "embed")
    elif kind == "code":
        ticks = len(seg) - len(seg.lstrip("`"))
        inner_text = seg[ticks:]
        if ticks and inner_text.endswith("`" * ticks):
            inner_text = inner_text[:-ticks]
        if len(inner_text) > 2 and inner_text[0] == inner_text[-1] == " " and inner_text.strip():
            inner_text = inner_text[1:-1]
        out.append(inner_text, styles.code)
    elif kind in ("comment", "block_id", "html", "escape"):  # hidden in reading view (an escape's backslash)
        return
    elif kind == "tag":
        out.append(seg, styles.tag)
    else:
        out.append(seg, base)


def _label(seg: str, link: Link) -> str:
    """What a link shows: a wiki link's alias or name (› heading); a Markdown link's text."""
    if seg.startswith("[[") or seg.startswith("![["):
        embed = seg.startswith("!")
        alias = embed_alias(link) if embed else link.alias  # an image's `|100` is its size
        if alias:
            shown = alias
        elif embed and is_image(link.target):  # an image's `#outline` names no part of it
            shown = link.target
        elif link.target and link.heading:
            shown = f"{link.target} › {link.heading}"
        else:
            shown = link.target or f"§ {link.heading}"
        return ("▣ " if embed else "") + shown
    if "](" in seg:
        label = without_html(seg[seg.index("[") + 1 : seg.rfind("](")])
        if seg.startswith("!"):
            return without_size(label) or link.target
        return label or link.target
    return seg  # a reference definition, as written


def _link(out: Text, label: str, link: Link, ctx: Context, embed: bool) -> None:
    styles = ctx.styles
    target = ctx.resolve(link)
    index = len(ctx.links)
    ctx.links.append((link, target))
    if target is None:
        out.append(label, styles.unwritten if link.target and not embed else styles.broken)
        return
    # a heading or block the note lacks is breakage, as the Broken tab lists it; the note is
    # there, so the link still opens it
    look = styles.broken if ctx.missing(link, target) else styles.embed if embed else styles.link
    style = look + Style(meta={"@click": f"follow({index})"})
    out.append(label, style)


def _cells(line: Line) -> list[tuple[int, int]]:
    """The cells of a table row as (start, end) offsets: split on unescaped pipes, outer pipes
    optional, each cell without its surrounding spaces."""
    text = line.text
    a, z = line.marker if line.quote else 0, len(text)
    while a < z and text[a] in " \t":
        a += 1
    while z > a and text[z - 1] in " \t":
        z -= 1
    if a < z and text[a] == "|":
        a += 1
    if z > a and text[z - 1] == "|" and text[z - 2 : z] != "\\|":
        z -= 1
    cells = []
    pos = a
    for m in _CELL_SPLIT.finditer(text, a, z):
        cells.append((pos, m.start()))
        pos = m.end()
    cells.append((pos, z))
    out = []
    for s, e in cells:
        while s < e and text[s] in " \t":
            s += 1
        while e > s and text[e - 1] in " \t":
            e -= 1
        out.append((s, e))
    return out


def _fit_widths(natural: list[int], floors: list[int], width: int | None) -> list[int]:
    """Column widths: as wide as their widest cell while the table fits `width`; else the
    narrow columns keep their width and the wide ones share what is left, none narrower
    than its floor (its header's longest word)."""
    widths = [max(1, w) for w in natural]
    if width is None:
        return widths
    room = width - len(COLUMN_GAP) * (len(widths) - 1)
    if sum(widths) <= room:
        return widths
    fixed: dict[int, int] = {}
    while True:  # water-filling: columns narrower than a fair share keep their width
        open_cols = [i for i in range(len(widths)) if i not in fixed]
        if not open_cols:
            break
        share = (room - sum(fixed.values())) // len(open_cols)
        narrow = [i for i in open_cols if widths[i] <= max(share, floors[i])]
        if not narrow:
            break
        for i in narrow:
            fixed[i] = widths[i]
    open_cols = [i for i in range(len(widths)) if i not in fixed]
    left = room - sum(fixed.values())
    out = []
    for i in range(len(widths)):
        if i in fixed:
            out.append(fixed[i])
        else:
            rank = open_cols.index(i)
            share = left // len(open_cols) + (1 if rank < left % len(open_cols) else 0)
            out.append(max(floors[i], MIN_COLUMN, share))
    return out


def _cell_width(cell: Text) -> int:
    """A cell's width: its widest line (a `<br>` in a cell breaks it, as in GitHub's tables)."""
    plain = cell.plain
    return max(cell_len(piece) for piece in plain.split("\n")) if "\n" in plain else cell.cell_len


def _wrap(cell: Text, width: int) -> list[Text]:
    if cell.cell_len <= width and "\n" not in cell.plain:
        return [cell]
    return list(cell.wrap(_wrap_console(), width, overflow="fold"))


def _table(rows: Sequence[Line], ctx: Context) -> list[Text]:
    """A Markdown table as aligned columns: header, a rule, then the body rows."""
    styles = ctx.styles
    aligns = []
    rule = rows[1] if len(rows) > 1 else rows[0]
    for s, e in _cells(rule):
        spec = rule.text[s:e].strip()
        left, right = spec.startswith(":"), spec.endswith(":")
        aligns.append("center" if left and right else ("right" if right else "left"))
    ncols = len(aligns)
    # a table in a quote or callout keeps the quote's bar beside each of its lines
    bar = Text(QUOTE_BAR * rows[0].quote, styles.quote) if rows[0].quote else None
    width = ctx.width - bar.cell_len if ctx.width is not None and bar is not None else ctx.width
    grid: list[list[Text]] = []
    for r, row in enumerate([rows[0], *rows[2:]]):
        cells = (_cells(row) + [(0, 0)] * ncols)[:ncols]
        texts = []
        for s, e in cells:
            cell = Text()
            _inline(cell, row.text, row.spans, s, e, ctx, styles.table_head if r == 0 else None, table=True)
            texts.append(cell)
        grid.append(texts)
    natural = [max(_cell_width(t[i]) for t in grid) for i in range(ncols)]
    floors = [min(natural[i], max([MIN_COLUMN, *(len(w) for w in grid[0][i].plain.split())])) for i in range(ncols)]
    widths = _fit_widths(natural, floors, width)
    # styled runs never start with a space: some SVG renderers drop a run's leading spaces
    gap = Text.assemble(" ", ("│", styles.table_rule), " ")
    out: list[Text] = []
    for r, texts in enumerate(grid):
        wrapped = [_wrap(t, w) for t, w in zip(texts, widths, strict=True)]
        for k in range(max(len(w) for w in wrapped)):
            line = Text()
            for i, parts in enumerate(wrapped):
                if i:
                    line.append_text(gap)
                piece = parts[k].copy() if k < len(parts) else Text()
                piece.rstrip()
                pad = widths[i] - piece.cell_len
                before = pad if aligns[i] == "right" else (pad // 2 if aligns[i] == "center" else 0)
                line.append(" " * before)
                line.append_text(piece)
                line.append(" " * (pad - before))
            line.rstrip()
            out.append(line)
        if r == 0:
            out.append(Text("─┼─".join("─" * w for w in widths), styles.table_rule))
    if bar is not None:
        out = [bar + line for line in out]
    return out
