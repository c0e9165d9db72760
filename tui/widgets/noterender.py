"""A cheap, linear Markdown renderer for the preview, with clickable wiki links.

Textual's Markdown widget is superlinear (2,100 lines take 10 s), so the preview draws a
note line by line into one rich Text: headings, lists, quotes, fences, rules, inline code,
bold, tags, wiki links, embeds and Markdown links. Cost is linear and capped at
`max_lines`. Links carry an `@click` action with their index in the returned link table.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from rich.style import Style
from rich.text import Text

from core.model import Link

MAX_LINES = 3000

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


@dataclass(frozen=True, slots=True)
class Styles:
    """The styles the renderer uses (taken from the app's theme by the caller)."""

    heading: Style = Style(bold=True, color="#7fb4ff")
    heading1: Style = Style(bold=True, underline=True, color="#7fb4ff")
    link: Style = Style(underline=True, color="#5fd7ff")
    broken: Style = Style(color="#ff6b6b", strike=True)
    embed: Style = Style(italic=True, color="#d7af5f")
    code: Style = Style(color="#d7875f")
    quote: Style = Style(italic=True, dim=True)
    tag: Style = Style(color="#af87ff")
    dim: Style = Style(dim=True)
    bold: Style = Style(bold=True)


def wiki_link(inner: str, embed: bool) -> Link:
    """The core Link for the inside of `[[...]]`."""
    target, _, alias = inner.partition("|")
    target, _, heading = target.partition("#")
    return Link(target.strip(), "embed" if embed else "wiki", heading.strip() or None, alias.strip() or None)


def render_note(body: str, resolve: Callable[[Link], str | None], styles: Styles = Styles(),
                max_lines: int = MAX_LINES) -> tuple[Text, list[tuple[Link, str | None]]]:
    """Render a note body. Returns the Text and the links in it with their resolved paths."""
    out = Text(no_wrap=False, overflow="fold")
    links: list[tuple[Link, str | None]] = []
    lines = body.split("\n")
    fence: str | None = None
    for n, line in enumerate(lines):
        if n >= max_lines:
            out.append(f"\n… {len(lines) - max_lines:,} more lines not shown: open the note in your editor",
                       styles.dim)
            break
        if n:
            out.append("\n")
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
                out.append("  " + "╌" * 20, styles.dim)
            else:
                out.append("  " + line, styles.code)
            continue
        if m:
            fence = m.group(1)
            lang = line.strip()[len(fence):].strip()
            out.append("  " + "╌" * 20 + (f" {lang}" if lang else ""), styles.dim)
            continue
        if _RULE.match(line):
            out.append("─" * 40, styles.dim)
            continue
        m = _HEADING.match(line)
        if m:
            level = len(m.group(1))
            _inline(out, m.group(2), resolve, links, styles, styles.heading1 if level == 1 else styles.heading)
            continue
        if line.startswith(">"):
            out.append("▎ ", styles.quote)
            _inline(out, line[1:].lstrip(), resolve, links, styles, styles.quote)
            continue
        m = _BULLET.match(line)
        if m:
            indent, task = m.group(1), m.group(3)
            bullet = "• " if not task else ("☑ " if task.strip()[1] in "xX" else "☐ ")
            out.append(indent + bullet, styles.dim)
            _inline(out, line[m.end():], resolve, links, styles, None)
            continue
        _inline(out, line, resolve, links, styles, None)
    return out, links


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
