"""A cheap, linear Markdown renderer for the preview, with clickable wiki links.

Textual's Markdown widget is superlinear (2,100 lines take 10 s), so the preview draws a
note line by line into one rich Text: headings, lists, quotes, fences, rules, inline code,
bold, tags, wiki links, embeds, Markdown links and tables. Cost is linear and capped at
`max_lines`. Links carry an `@click` action with their index in the returned link table.

Tables (GitHub style: a header row, a `| --- | :-: |` delimiter row, body rows) are drawn as
aligned columns; given the `width` they will be shown at, wide cells wrap inside their
column instead of the whole row wrapping across the screen.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote

from rich.console import Console
from rich.style import Style
from rich.text import Text

from core.model import Link

from .. import spans

MAX_LINES = 3000
MAX_LINE_CHARS = 20_000  # a longer line is cut (one 3 MB line would be 30,000 screen lines)

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)([-*+])\s+(\[[ xX]\]\s+)?")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_INLINE = re.compile(
    r"(?P<wiki>!?\[\[(?P<wt>[^\[\]\n]+?)\]\])"
    r"|(?P<md>!?\[(?P<mt>[^\]\n]*)\]\((?P<mh><[^>\n]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\))"
    r"|(?P<code>`[^`\n]+`)"
    r"|(?P<bold>\*\*[^*\n]+\*\*|__[^_\n]+__)"
    r"|(?P<tag>(?<![^\s(])#[\w/-]*[^\W\d][\w/-]*)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TABLE_DELIMITER = re.compile(r"^\s{0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
COLUMN_GAP = " │ "
MIN_COLUMN = 4
_console: Console | None = None


@dataclass(frozen=True, slots=True)
class Styles:
    """The styles the renderer uses (taken from the app's theme by the caller)."""

    heading: Style = Style(bold=True, color="#7fb4ff")
    table_head: Style = Style(bold=True)
    table_rule: Style = Style(dim=True)
    heading1: Style = Style(bold=True, underline=True, color="#7fb4ff")
    link: Style = Style(underline=True, color="#5fd7ff")
    broken: Style = Style(color="#ff6b6b", strike=True)
    embed: Style = Style(italic=True, color="#d7af5f")
    code: Style = Style(color="#d7875f")
    quote: Style = Style(italic=True, dim=True)
    tag: Style = Style(color="#af87ff")
    dim: Style = Style(dim=True)
    bold: Style = Style(bold=True)


THEME_COLOURS = {  # Styles field -> the theme variable its colour comes from
    "heading": "text-primary", "heading1": "text-primary", "link": "text-accent", "broken": "text-error",
    "embed": "text-success", "code": "text-warning", "tag": "text-secondary",
}


def theme_styles(variables: dict[str, str], background: Any) -> Styles:
    """Styles whose colours come from a Textual theme's CSS variables (`App.get_css_variables`),
    composited on `background` (a textual Color) and made readable (4.5:1) against it; a
    variable missing or unparsable keeps the default colour."""
    from textual.color import Color, ColorParseError  # noqa: PLC0415

    from ..contrast import readable  # noqa: PLC0415

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


def wiki_link(inner: str, embed: bool) -> Link:
    """The core Link for the inside of `[[...]]`."""
    target, _, alias = inner.partition("|")
    target, _, heading = target.partition("#")
    return Link(target.strip(), "embed" if embed else "wiki", heading.strip() or None, alias.strip() or None)


def render_note(body: str, resolve: Callable[[Link], str | None], styles: Styles = Styles(),
                max_lines: int = MAX_LINES, width: int | None = None) -> tuple[Text, list[tuple[Link, str | None]]]:
    """Render a note body (tables fitted to `width` cells when given). Returns the Text and
    the links in it with their resolved paths."""
    links: list[tuple[Link, str | None]] = []
    out = Text("\n").join(iter_note(body, resolve, links, styles, max_lines, width))
    out.no_wrap, out.overflow = False, "fold"
    return out, links


def iter_note(body: str, resolve: Callable[[Link], str | None], links: list[tuple[Link, str | None]],
              styles: Styles = Styles(), max_lines: int = MAX_LINES, width: int | None = None) -> Iterator[Text]:
    """The note's rendered lines one at a time (a Text without newlines each, a table row
    wrapped inside its columns being several), so that a caller shows the first screen
    before the rest is rendered; the links met so far are appended to `links`."""
    lines = body.split("\n")
    fence: str | None = None
    n = -1
    while n + 1 < len(lines):
        n += 1
        line = lines[n]
        if len(line) > MAX_LINE_CHARS:
            line = lines[n] = (f"{line[:MAX_LINE_CHARS]} … {len(line) - MAX_LINE_CHARS:,} more characters of this "
                               "line are not shown")
        if n >= max_lines:
            yield Text(f"… {len(lines) - max_lines:,} more lines not shown: open the note in your editor",
                       styles.dim)
            return
        if fence is None and "|" in line and n + 1 < len(lines) and _TABLE_DELIMITER.match(lines[n + 1]):
            end = _table_end(lines, n, max_lines)
            if end > n + 1:
                yield from _table(lines[n:end], resolve, links, styles, width)
                n = end - 1
                continue
        out = Text()
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
                spans.append(out, "  " + "╌" * 20, styles.dim)
            else:
                spans.append(out, "  " + line, styles.code)
            yield out
            continue
        if m:
            fence = m.group(1)
            lang = line.strip()[len(fence):].strip()
            spans.append(out, "  " + "╌" * 20 + (f" {lang}" if lang else ""), styles.dim)
        elif _RULE.match(line):
            out.append("─" * 40, styles.dim)
        elif (m := _HEADING.match(line)):
            level = len(m.group(1))
            _inline(out, m.group(2), resolve, links, styles, styles.heading1 if level == 1 else styles.heading)
        elif line.startswith(">"):
            out.append("▎ ", styles.quote)
            _inline(out, line[1:].lstrip(), resolve, links, styles, styles.quote)
        elif (m := _BULLET.match(line)):
            indent, task = m.group(1), m.group(3)
            bullet = "• " if not task else ("☑ " if task.strip()[1] in "xX" else "☐ ")
            out.append(indent + bullet, styles.dim)
            _inline(out, line[m.end():], resolve, links, styles, None)
        else:
            _inline(out, line, resolve, links, styles, None)
        yield out


def _cells(line: str) -> list[str]:
    """The cells of a table row: split on unescaped pipes, outer pipes optional."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT.split(line)]


def _table_end(lines: list[str], start: int, max_lines: int) -> int:
    """One past the last line of the table whose header is `lines[start]` (start + 1 when the
    header and delimiter rows disagree on the number of columns: not a table)."""
    if len(_cells(lines[start])) != len(_cells(lines[start + 1])):
        return start + 1
    end = start + 2
    while end < len(lines) and end < max_lines and "|" in lines[end] and lines[end].strip():
        end += 1
    return end


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


def _wrap(cell: Text, width: int) -> list[Text]:
    global _console
    if cell.cell_len <= width:
        return [cell]
    if _console is None:  # Text.wrap needs a console only for tab sizes and the like
        _console = Console(width=200, color_system=None, force_terminal=False, legacy_windows=False)
    return list(cell.wrap(_console, width, overflow="fold"))


def _table(rows: list[str], resolve: Callable[[Link], str | None], links: list, styles: Styles,
           width: int | None) -> Iterator[Text]:
    """A Markdown table as aligned columns: header, a rule, then the body rows."""
    aligns = []
    for spec in _cells(rows[1]):
        left, right = spec.startswith(":"), spec.endswith(":")
        aligns.append("center" if left and right else ("right" if right else "left"))
    ncols = len(aligns)
    grid: list[list[Text]] = []
    for r, row in enumerate(rows[:1] + rows[2:]):
        cells = (_cells(row) + [""] * ncols)[:ncols]
        texts = []
        for cell in cells:
            text = Text()
            _inline(text, cell, resolve, links, styles, styles.table_head if r == 0 else None)
            texts.append(text)
        grid.append(texts)
    natural = [max(t[i].cell_len for t in grid) for i in range(ncols)]
    floors = [min(natural[i], max([MIN_COLUMN, *(len(w) for w in grid[0][i].plain.split())])) for i in range(ncols)]
    widths = _fit_widths(natural, floors, width)
    # styled runs never start with a space: some SVG renderers drop a run's leading spaces
    gap = Text.assemble(" ", ("│", styles.table_rule), " ")
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
            yield line
        if r == 0:
            yield Text("─┼─".join("─" * w for w in widths), styles.table_rule)


def _inline(out: Text, line: str, resolve: Callable[[Link], str | None], links: list, styles: Styles,
            base: Style | None) -> None:
    pos = 0
    for m in _INLINE.finditer(line):
        if m.start() > pos:
            out.append(line[pos:m.start()], base)
        pos = m.end()
        kind = m.lastgroup
        if m.group("wiki"):
            embed = m.group("wiki").startswith("!")
            link = wiki_link(m.group("wt"), embed)
            if link.alias:
                shown = link.alias
            elif link.target and link.heading:
                shown = f"{link.target} › {link.heading}"
            else:
                shown = link.target or f"§ {link.heading}"
            _link(out, ("▣ " if embed else "") + shown, link, resolve, links, styles, embed)
        elif m.group("md"):
            href = m.group("mh").strip("<>")
            label = m.group("mt") or href
            embed = m.group("md").startswith("!")
            if _SCHEME.match(href) or href.startswith("#"):
                out.append(label, styles.link if not embed else styles.embed)
                continue
            target, _, heading = unquote(href).partition("#")
            _link(out, label, Link(target, "embed" if embed else "markdown", heading or None, None), resolve,
                  links, styles, embed)
        elif kind == "code":
            out.append(m.group("code")[1:-1], styles.code)
        elif kind == "bold":
            out.append(m.group("bold")[2:-2], (base or Style()) + styles.bold)
        elif kind == "tag":
            out.append(m.group("tag"), styles.tag)
    if pos < len(line):
        out.append(line[pos:], base)


def _link(out: Text, label: str, link: Link, resolve: Callable[[Link], str | None], links: list, styles: Styles,
          embed: bool) -> None:
    target = resolve(link)
    index = len(links)
    links.append((link, target))
    if target is None:
        out.append(label, styles.broken)
        return
    style = (styles.embed if embed else styles.link) + Style(meta={"@click": f"follow({index})"})
    out.append(label, style)
