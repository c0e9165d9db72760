"""Diffs on screen: unified and coloured, words highlighted inside changed lines, side by side when wide.

`render_diff` / `render_files` (and tui.flows.review's `render_change` / `render_pending`) turn
versions into a `DiffDoc`: pieces (a title, a file's header, one piece per hunk) that rich
can render whole (`plain`) and that `DiffView`, the scrolling widget of the Changes view and
the approval dialog, draws only as far as they are on screen: a 1 MB note rewritten on every
tenth line has some 1,500 hunks, and the view computes the words and lines of the screenful
it shows (core.review.textdiff computes hunk lines on first use).
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from vaultwatch.core.edit.fmedit import shown as shown_value
from vaultwatch.core.review.textdiff import Diff, Hunk, Line, text_diff
from vaultwatch.core.review.visible import visible, visible_parts
from vaultwatch.tui.widgets.spans import tidy

SIDE_BY_SIDE_MIN = 160  # columns from which a diff is shown side by side

REMOVED = "on #3a1e1e"
ADDED = "on #1c361f"
REMOVED_WORD = "bold #ffffff on #8b2e2e"
ADDED_WORD = "bold #ffffff on #2c7a35"
GUTTER = "dim"


def _line_text(line: Line, escaped: bool = False) -> Text:
    """A diff line coloured by its op; `escaped`: with what could disguise it written as `\\uXXXX`
    (core.review.visible), judged on the whole line, not word by word."""
    base = REMOVED if line.op == "-" else ADDED if line.op == "+" else ""
    word = REMOVED_WORD if line.op == "-" else ADDED_WORD
    text = Text(style=base)
    if line.words:
        parts = [part for _, part in line.words]
        for (changed, _), part in zip(line.words, visible_parts(parts) if escaped else parts, strict=True):
            text.append(part, style=word if changed else None)
    else:
        text.append(visible(line.text) if escaped else line.text)
    return text


def _gutter(line: Line) -> Text:
    old = "" if line.old_no is None else str(line.old_no)
    new = "" if line.new_no is None else str(line.new_no)
    out = Text(f"{old:>5} {new:>5} ", style=GUTTER)
    sign = {"-": ("-", "bold red"), "+": ("+", "bold green")}.get(line.op, (" ", ""))
    out.append(sign[0] + " ", style=sign[1])
    return out


def unified_hunk(hunk: Hunk, escaped: bool = False) -> Text:
    """One hunk in one column: its `@@` header, line numbers, -/+ lines, changed words in strong colour
    (`escaped`: see _line_text)."""
    out = Text(hunk.header + "\n", style="bold cyan", no_wrap=False)
    for line in hunk.lines:
        out.append_text(_gutter(line))
        out.append_text(_line_text(line, escaped))
        out.append("\n")
    out.rstrip()
    return out


def _pairs(lines: Iterable[Line]) -> list[tuple[Line | None, Line | None]]:
    rows: list[tuple[Line | None, Line | None]] = []
    removed: list[Line] = []
    added: list[Line] = []

    def flush() -> None:
        for k in range(max(len(removed), len(added))):
            rows.append((removed[k] if k < len(removed) else None, added[k] if k < len(added) else None))
        removed.clear()
        added.clear()

    for line in lines:
        if line.op == "-":
            removed.append(line)
        elif line.op == "+":
            added.append(line)
        else:
            flush()
            rows.append((line, line))
    flush()
    return rows


def side_by_side_hunk(hunk: Hunk, escaped: bool = False) -> SideBySide:
    """One hunk in two columns, before | after, changed lines paired across (every hunk has the
    same column widths at one width, so hunks drawn one by one line up)."""
    return SideBySide(hunk, escaped)


class SideBySide:
    """A hunk's two columns, laid out line by line (a rich Table measures every cell: ~10x slower)."""

    def __init__(self, hunk: Hunk, escaped: bool = False) -> None:
        self.hunk = hunk
        self.escaped = escaped

    def strips(self, console: Console, width: int) -> list[Strip]:
        room = max(2, width - 13)  # two 5-column gutters and three spaces
        lw = room // 2
        rw = room - lw
        out: list[Strip] = []
        header = Text(" " * 6) + Text(self.hunk.header, style="bold cyan")
        out.append(Strip(list(header.render(console))).crop_extend(0, width, None))
        gutter = console.get_style(GUTTER)
        for left, right in _pairs(self.hunk.lines):
            cells = []
            for line, w, old in ((left, lw, True), (right, rw, False)):
                text = _line_text(line, self.escaped) if line is not None else Text("")
                number = None if line is None else (line.old_no if old else line.new_no)
                wrapped = text.wrap(console, w) if text.plain else [Text("")]
                cells.append(("" if number is None else str(number), wrapped, w))
            for i in range(max(len(cells[0][1]), len(cells[1][1]))):
                segments: list[Segment] = []
                for n, (shown, wrapped, w) in enumerate(cells):
                    if n:
                        segments.append(Segment(" "))
                    segments.append(Segment(f"{shown if i == 0 else '':>5} ", gutter))
                    part = wrapped[i] if i < len(wrapped) else Text("")
                    part = part.copy()
                    part.truncate(w, pad=True)
                    segments.extend(part.render(console))
                out.append(Strip(segments).crop_extend(0, width, None))
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for strip in self.strips(console, options.max_width):
            yield from strip
            yield Segment.line()


class Piece:
    """A part of a rendered diff drawn on its own: a hunk, or a few fixed lines (a title, a header)."""

    def __init__(
        self,
        renderable: RenderableType | None = None,
        *,
        hunk: Hunk | None = None,
        paired: bool = False,
        escaped: bool = False,
    ) -> None:
        self._renderable = renderable
        self.hunk = hunk
        self.paired = paired
        self.escaped = escaped  # a hunk's lines as core.review.visible shows them (see _line_text)

    def renderable(self) -> RenderableType:
        if self.hunk is None:
            return self._renderable if self._renderable is not None else Text("")
        if self.paired:
            return side_by_side_hunk(self.hunk, self.escaped)
        return unified_hunk(self.hunk, self.escaped)

    def estimate(self, width: int) -> int:
        """Terminal lines this piece takes at `width`, without drawing it (a hunk: its rows, long
        lines counted wrapped); fixed pieces are drawn to count them."""
        if self.hunk is None:
            return -1
        if self.paired:
            return 1 + self.hunk.rows(paired=True)
        room = max(1, width - 14)
        return 1 + sum(1 + max(0, len(t) - 1) // room for t in self.hunk.texts())


class DiffDoc:
    """A rendered diff as pieces: rich renders it whole (`plain`, exports); `DiffView` draws only
    the pieces on screen (see LazyLines)."""

    def __init__(self, pieces: Iterable[Piece] = ()) -> None:
        self.pieces: list[Piece] = list(pieces)

    def add(self, item: RenderableType | DiffDoc | Piece) -> DiffDoc:
        if isinstance(item, DiffDoc):
            self.pieces.extend(item.pieces)
        elif isinstance(item, Piece):
            self.pieces.append(item)
        else:
            self.pieces.append(Piece(item))
        return self

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for piece in self.pieces:
            yield piece.renderable()


def render_diff(
    before: bytes | None, after: bytes | None, width: int, *, diff: Diff | None = None, escaped: bool = False
) -> DiffDoc:
    """The diff of two versions for a view `width` columns wide (side by side from SIDE_BY_SIDE_MIN);
    `escaped`: its text as core.review.visible shows it (what the person approves an agent's change from)."""
    diff = diff or text_diff(before, after)
    seen = visible if escaped else str
    doc = DiffDoc()
    if diff.binary:
        return doc.add(Text(f"binary content ({len(before or b'')} -> {len(after or b'')} bytes)", style="italic"))
    if diff.frontmatter:
        fm = Text("frontmatter\n", style="bold")
        for key, old, new in diff.frontmatter:
            fm.append(f"  {seen(str(key))}: ", style="bold")
            if old is None:
                fm.append(seen(shown_value(new)), style=ADDED_WORD).append("  (added)\n", style="dim")
            elif new is None:
                fm.append(seen(shown_value(old)), style=REMOVED_WORD).append("  (removed)\n", style="dim")
            else:
                fm.append(seen(shown_value(old)), style=REMOVED_WORD).append(" → ").append(
                    seen(shown_value(new)), style=ADDED_WORD
                )
                fm.append("\n")
        doc.add(tidy(fm))
    if diff.empty:
        return doc.add(Text("no change in the text", style="italic dim"))
    doc.add(
        Text(
            f"+{diff.added} -{diff.removed} lines" + (f" in {len(diff.hunks)} hunks" if len(diff.hunks) > 1 else ""),
            style="dim",
        )
    )
    paired = width >= SIDE_BY_SIDE_MIN
    for hunk in diff.hunks:
        doc.add(Piece(hunk=hunk, paired=paired, escaped=escaped))
    return doc


def render_files(
    title: Text,
    files: list[tuple[str, str, bytes | None, bytes | None]],
    width: int,
    lead: Iterable[RenderableType] = (),
    *,
    escaped: bool = False,
) -> DiffDoc:
    """A header, lines before the files (a rename's move), then each (path, role, before, after) diffed
    (`escaped`: the paths and the diffs as core.review.visible shows them)."""
    # spaces between runs of other styles in runs of their own (spans.tidy): an SVG screenshot's
    # renderer would drop them and glue "change 4" to its agent, "write" to "created"
    doc = DiffDoc().add(tidy(title))
    for item in lead:
        doc.add(tidy(item) if isinstance(item, Text) else item)
    for path, role, before, after in files:
        label = {"links": "links rewritten in", "restored": "restored", "target": ""}.get(role, "")
        head = Text("\n")
        head.append(f"{label} " if label else "", style="dim")
        head.append(visible(path, keep_tab=False) if escaped else path, style="bold underline")
        if before is None:
            head.append("  (created)", style="green")
        elif after is None:
            head.append("  (removed)", style="red")
        doc.add(tidy(head))
        doc.add(render_diff(before, after, width, escaped=escaped))
    return doc


class LazyLines:
    """The terminal lines of a DiffDoc at one width, drawn piece by piece as they are asked for.

    Pieces not drawn yet count their estimated height; drawing one replaces the estimate with
    its exact height (`changed` tells the view its virtual height moved)."""

    def __init__(self, doc: DiffDoc, width: int, console: Console, options: ConsoleOptions | None = None) -> None:
        self.doc = doc
        self.width = max(1, width)
        self.console = console
        self.options = (options or console.options).update_width(self.width)
        self.heights: list[int] = []
        self._drawn: dict[int, list[Strip]] = {}
        for k, piece in enumerate(doc.pieces):
            h = piece.estimate(self.width)
            if h < 0:
                h = len(self._draw(k))
            self.heights.append(h)
        self._starts: list[int] = []
        self._restart()
        self.changed = False

    def _restart(self) -> None:
        self._starts = list(itertools.accumulate(self.heights, initial=0))

    @property
    def height(self) -> int:
        return self._starts[-1]

    def _draw(self, k: int) -> list[Strip]:
        strips = self._drawn.get(k)
        if strips is None:
            renderable = self.doc.pieces[k].renderable()
            if isinstance(renderable, SideBySide):
                strips = renderable.strips(self.console, self.width)
            else:
                lines = self.console.render_lines(renderable, self.options, pad=False)
                strips = [Strip(line).crop_extend(0, self.width, None) for line in lines]
            self._drawn[k] = strips
        return strips

    def line(self, y: int) -> Strip:
        """Terminal line `y` (blank past the end)."""
        if y < 0 or y >= self.height:
            return Strip.blank(self.width)
        k = bisect.bisect_right(self._starts, y) - 1
        strips = self._draw(k)
        if len(strips) != self.heights[k]:
            self.heights[k] = len(strips)
            self._restart()
            self.changed = True
            if y >= self.height:
                return Strip.blank(self.width)
            k = bisect.bisect_right(self._starts, y) - 1
            strips = self._draw(k)
        offset = y - self._starts[k]
        return strips[offset] if offset < len(strips) else Strip.blank(self.width)

    def lines(self, start: int, count: int) -> list[Strip]:
        return [self.line(y) for y in range(start, start + count)]


class DiffView(ScrollView, can_focus=True):
    """A scrolling view of one rendered diff that draws only the lines on screen."""

    DEFAULT_CSS = """
    DiffView { height: 1fr; }
    """

    renderable: RenderableType = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._doc = DiffDoc()
        self._lines: LazyLines | None = None

    def show(self, renderable: RenderableType, *, keep_scroll: bool = False) -> None:
        self.renderable = renderable
        self._doc = renderable if isinstance(renderable, DiffDoc) else DiffDoc([Piece(renderable)])
        self._lines = None
        if not keep_scroll:
            self.scroll_to(0, 0, animate=False)
        self._layout()
        self.refresh()

    def _model(self) -> LazyLines:
        width = max(1, self.scrollable_content_region.width)
        if self._lines is None or self._lines.width != width:
            self._lines = LazyLines(self._doc, width, self.app.console)
        return self._lines

    def _layout(self) -> None:
        if not self.is_mounted:
            return
        model = self._model()
        model.changed = False
        self.virtual_size = Size(model.width, model.height)

    def on_resize(self) -> None:
        self._layout()

    def render_line(self, y: int) -> Strip:
        model = self._model()
        strip = model.line(self.scroll_offset.y + y)
        if model.changed:
            model.changed = False
            self.call_after_refresh(self._layout)
        return strip.apply_style(self.rich_style)

    def visible_text(self) -> str:
        """The text of the lines on screen now (tests)."""
        model = self._model()
        return "\n".join(
            s.text.rstrip() for s in model.lines(self.scroll_offset.y, self.scrollable_content_region.height)
        )


def plain(renderable: RenderableType, width: int = 200) -> str:
    """The text of a renderable as a terminal `width` wide would show it (tests, benchmarks)."""
    from rich.console import Console  # noqa: PLC0415

    console = Console(width=width, record=True, file=open(os.devnull, "w"), color_system="truecolor")
    console.print(renderable)
    return console.export_text()


__all__ = [
    "DiffDoc",
    "DiffView",
    "LazyLines",
    "Piece",
    "SIDE_BY_SIDE_MIN",
    "plain",
    "render_diff",
    "render_files",
    "side_by_side_hunk",
    "unified_hunk",
]
