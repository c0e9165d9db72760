"""Styled runs that start and end with their text, not with spaces.

Terminals draw spaces as they are, but librsvg (what turns SVG screenshots into images on
Linux) drops the leading spaces of each <text> run in Textual's SVG export and squeezes
long runs of spaces: session 1's screenshots showed "Archive0" for a folder with a dim
" 0" count, folder hints glued to their titles and list columns out of line. So the spaces
around each run's text go into runs of their own, in an invisibly different style (bold
toggled: bold spaces look like spaces), and every visible run starts at its own cell.
Terminal output is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.constants import DIM_FACTOR
from textual.filter import dim_style


def append(text: Text, piece: str, style: str | Style | None = None) -> Text:
    """Append `piece` in `style` with its leading and trailing spaces unstyled."""
    if not style:
        text.append(piece)
        return text
    body = piece.strip(" ")
    lead = len(piece) - len(piece.lstrip(" "))
    if lead:
        text.append(piece[:lead])
    if body:
        text.append(body, style)
    trail = len(piece) - lead - len(body)
    if trail and body:
        text.append(" " * trail)
    return text


_TOGGLED: dict[Style | None, Style] = {}


def _toggled(style: Style | None) -> Style:
    """The same look on spaces, but another style (so the spaces form a run of their own)."""
    toggled = _TOGGLED.get(style)
    if toggled is None:
        if len(_TOGGLED) > 4096:
            _TOGGLED.clear()
        base = style or Style()
        toggled = _TOGGLED[style] = base + Style(bold=not base.bold)
    return toggled


def separate(segments: Iterable[Segment]) -> list[Segment]:
    """One line's segments with the spaces around each segment's text split off into
    segments of their own (see the module doc)."""
    out: list[Segment] = []
    add = out.append
    for seg in segments:
        text = seg.text
        if seg.control or " " not in text or (text[0] != " " and text[-1] != " "):
            add(seg)
            continue
        core = text.strip(" ")
        if not core:
            add(Segment(text, _toggled(seg.style)))
            continue
        lead = len(text) - len(text.lstrip(" "))
        trail = len(text) - lead - len(core)
        if lead:
            add(Segment(text[:lead], _toggled(seg.style)))
        add(Segment(core, seg.style))
        if trail:
            add(Segment(text[len(text) - trail :], _toggled(seg.style)))
    return out


def tidy(text: Text) -> Text:
    """A copy of `text` whose styled runs start and end with their text (module doc)."""
    plain = text.plain
    if not plain or " " not in plain:
        return text
    result = Text(
        justify=text.justify, overflow=text.overflow, no_wrap=text.no_wrap, end=text.end, tab_size=text.tab_size
    )
    if text.style:
        result.style = text.style
    for piece, style in _runs(text, plain):
        if " " not in piece or (piece[0] != " " and piece[-1] != " "):
            result.append(piece, style)
            continue
        core = piece.strip(" ")
        lead = len(piece) - len(piece.lstrip(" "))
        trail = len(piece) - lead - len(core)
        if lead:
            result.append(piece[:lead], _toggled(style))
        if core:
            result.append(core, style)
        if trail and core:
            result.append(piece[len(piece) - trail :], _toggled(style))
    return result


def _runs(text: Text, plain: str) -> list[tuple[str, Style | None]]:
    """The text cut where its style (the spans covering it, in order) or the line changes."""
    events: dict[int, list] = {}
    for order, span in enumerate(text.spans):
        if span.start >= span.end:
            continue
        style = Style.parse(span.style) if isinstance(span.style, str) else span.style
        events.setdefault(span.start, []).append((1, order, style))
        events.setdefault(span.end, []).append((0, order, style))
    cuts = set(events)
    at = plain.find("\n")
    while at >= 0:
        cuts.update((at, at + 1))
        at = plain.find("\n", at + 1)
    cuts.update((0, len(plain)))
    active: dict[int, Style] = {}
    runs: list[tuple[str, Style | None]] = []
    ordered = sorted(c for c in cuts if 0 <= c <= len(plain))
    for a, b in pairwise(ordered):
        for opens, order, style in events.get(a, ()):
            if opens:
                active[order] = style
            else:
                active.pop(order, None)
        if a == b:
            continue
        run_style = Style.chain(*(active[k] for k in sorted(active))) if active else None
        runs.append((plain[a:b], run_style))
    return runs


def undim(strip: Iterable[Segment], base: Style) -> list[Segment]:
    """Dim runs drawn as Textual draws them in a Static: the colour blended towards the
    background (terminals' own dim is not what the theme's contrast was checked against)."""
    background = Color.from_rich_color(base.bgcolor) if base.bgcolor is not None else Color(0, 0, 0)
    return [
        Segment(seg.text, dim_style(seg.style, background, DIM_FACTOR), seg.control)
        if seg.style is not None and seg.style.dim and seg.style.color is not None
        else seg
        for seg in strip
    ]
