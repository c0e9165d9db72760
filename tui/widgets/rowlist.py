"""A virtual list of rows with a fixed header line: the Line API, never a widget per row.

Only the visible lines are rendered (`render_line`), each from the row it shows, so 100,000
rows cost one tuple. Cell text is literal (Segments, never markup), so a title such as
`[draft] a [/] b` shows as written. Subclasses say what the columns are and what each cell
holds; this class owns the cursor, scrolling, the header and mouse handling.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, NamedTuple

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.color import Color
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from vaultwatch.tui.widgets.contrast import MIN_RATIO, ratio, readable
from vaultwatch.tui.widgets.spans import separate

LINE_CACHE = 600  # rendered lines kept per list (a dozen screens; each Strip holds 7 small caches)


class Column(NamedTuple):
    """One column: `width` cells (plus the remaining space when `flex`), shown at position `pos`."""

    key: str
    label: str
    width: int
    flex: bool = False
    right: bool = False
    pos: int = 0


Cell = tuple[str, Style | None]
Parts = list[tuple[str, Style | None]]  # a cell made of differently styled pieces


VS16 = "\ufe0f"  # emoji presentation selector


def steady(text: str) -> str:
    """`text` without emoji presentation selectors: `❤️` is two cells to Rich and Textual but one
    in many terminals (which ignore the selector), so a row holding one ended a cell short
    and its border moved. Without the selector every side draws `❤` in one cell; emoji that
    are wide by themselves stay wide."""
    return text.replace(VS16, "") if VS16 in text else text


def fit(text: str, width: int, right: bool = False) -> str:
    """Pad or cut `text` to exactly `width` cells (an ellipsis marks a cut)."""
    if width <= 0:
        return ""
    text = steady(text.replace("\n", " ").replace("\t", " "))
    size = cell_len(text)
    if size > width:
        return set_cell_size(text, width - 1) + "…"
    pad = " " * (width - size)
    return pad + text if right else text + pad


def layout(columns: Sequence[Column], width: int, gap: int = 1) -> list[Column]:
    """Keep columns (given in priority order) while they fit, in `pos` order; the flex column
    takes what is left."""
    kept: list[Column] = []
    used = 0
    for col in columns:
        need = col.width + (gap if kept else 0)
        if used + need <= width or col.flex:
            kept.append(col)
            used += need
    flex_extra = max(0, width - used)
    kept.sort(key=lambda c: c.pos)
    return [c._replace(width=c.width + flex_extra) if c.flex else c for c in kept]


class RowList(ScrollView, can_focus=True):
    """Base class of the document, problem and activity lists."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False, id="list.up"),
        Binding("down,j", "move(1)", "Down", show=False, id="list.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="list.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="list.page_down"),
        Binding("home", "jump(0)", "First", show=False, id="list.first"),
        Binding("end", "jump(-1)", "Last", show=False, id="list.last"),
        Binding("enter", "choose", "Open", show=False, id="list.open"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "rowlist--header",
        "rowlist--cursor",
        "rowlist--empty",
        "rowlist--dim",
        "rowlist--warn",
        "rowlist--error",
        "rowlist--ok",
        "rowlist--accent",
    }
    DEFAULT_CSS = """
    RowList {
        background: $surface;
        overflow-x: hidden;
        overflow-y: auto;
        & > .rowlist--header { text-style: bold; background: $panel; color: $foreground; }
        & > .rowlist--cursor { background: $block-cursor-blurred-background; color: $block-cursor-blurred-foreground; }
        &:focus > .rowlist--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
        & > .rowlist--empty { color: $text-muted; text-style: italic; }
        & > .rowlist--dim { color: $text-muted; }
        & > .rowlist--warn { color: $text-warning; }
        & > .rowlist--error { color: $text-error; }
        & > .rowlist--ok { color: $text-success; }
        & > .rowlist--accent { color: $text-accent; }
    }
    """

    empty_text = "Nothing to show"

    class Highlighted(Message):
        """The cursor moved to a row."""

        def __init__(self, rowlist: RowList, row: Any) -> None:
            super().__init__()
            self.rowlist, self.row = rowlist, row

        @property
        def control(self) -> RowList:
            return self.rowlist

    class Chosen(Message):
        """A row was opened (enter or click)."""

        def __init__(self, rowlist: RowList, row: Any) -> None:
            super().__init__()
            self.rowlist, self.row = rowlist, row

        @property
        def control(self) -> RowList:
            return self.rowlist

    class HeaderClicked(Message):
        """A column header was clicked."""

        def __init__(self, rowlist: RowList, column: str) -> None:
            super().__init__()
            self.rowlist, self.column = rowlist, column

        @property
        def control(self) -> RowList:
            return self.rowlist

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows: Sequence[Any] = ()
        self.updates = 0  # counts set_rows calls (benchmarks and tests wait on it)
        self.cursor = 0
        self._stamp = 0
        self._lines: LRUCache[tuple, Strip] = LRUCache(LINE_CACHE)
        self._layout: tuple[int, int, list[Column]] | None = None
        self._empty = self.empty_text
        self._reordering = False  # the next rows are these rows in a new order (see reorder_next)
        # styles resolved once per (stamp, focus): DOMNode.rich_style walks every ancestor
        self._styles_key: tuple[int, bool] | None = None
        self._base = Style()
        self._cursor = Style()
        self._cstyles: dict[str, Style] = {}
        self._combined: dict[tuple[Style, Style], Style] = {}  # base + cell style, per stamp

    # -- what subclasses provide -------------------------------------------------------
    def row_key(self, row: Any) -> Any:
        """A stable identity of a row, used to keep the cursor on it across updates."""
        return row

    def all_columns(self) -> Sequence[Column]:
        """Columns in priority order (the first ones survive narrow widths)."""
        return (Column("row", "", 10, flex=True),)

    def cells(self, row: Any, columns: Sequence[Column]) -> list[Cell]:
        """Literal cell texts (and optional styles) for `row`, one per column."""
        return [(str(row), None) for _ in columns]

    # -- state -----------------------------------------------------------------------
    @property
    def current(self) -> Any | None:
        """The row under the cursor, if any."""
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def set_rows(self, rows: Sequence[Any], *, empty: str | None = None, keep: bool = True) -> None:
        """Show `rows`, keeping the cursor on the same row (by key) and its place on screen."""
        old = self.current
        old_screen = self.cursor - int(self.scroll_y)
        reordered, self._reordering = self._reordering, False
        self.rows = rows
        self.updates += 1
        self._empty = empty or self.empty_text
        index = 0
        if keep and old is not None and rows:
            index = self._find(self.row_key(old), self.cursor)
            if index < 0:
                index = min(self.cursor, len(rows) - 1)
        self.cursor = max(0, min(index, len(rows) - 1))
        self.invalidate()
        self.resize_virtual()
        if keep and reordered and self.cursor < self._body_height():
            # a new order starts at its top: keeping the row's place on screen scrolled the
            # order's first rows out of sight whenever the row moved up
            self.scroll_to(y=0, animate=False, immediate=True)
        elif keep and old is not None and 0 <= old_screen < self._body_height():
            self.scroll_to(y=max(0, self.cursor - old_screen), animate=False, immediate=True)
        elif not keep:
            self.scroll_to(y=0, animate=False, immediate=True)
        self._reveal()
        if self.current is not old:
            self.post_message(self.Highlighted(self, self.current))

    def reorder_next(self) -> None:
        """Say that the next `set_rows` shows these rows in another order (a new sort): the
        selected row stays selected, and the list shows the new order's top when that row is
        on its first screen, else keeps the row where it was on screen (in view)."""
        self._reordering = True

    def row_keys(self, rows: Sequence[Any]) -> Iterable[Any]:
        """`row_key` of every row, in order. A subclass whose key is an attribute returns
        `map(attrgetter(...), rows)`: `_find` then scans in C (at 100k rows a Python call per row
        held the UI thread ~30 ms on every note opened from the palette)."""
        return map(self.row_key, rows)

    def _find(self, key: Any, hint: int) -> int:
        rows = self.rows
        if 0 <= hint < len(rows) and self.row_key(rows[hint]) == key:
            return hint
        try:
            return operator.indexOf(self.row_keys(rows), key)
        except ValueError:
            return -1

    def select_key(self, key: Any) -> bool:
        """Move the cursor to the row with this key; False when it is not listed."""
        index = self._find(key, self.cursor)
        if index < 0:
            return False
        self._move_to(index)
        return True

    def set_empty(self, text: str) -> None:
        """What the list says while it has no rows (e.g. indexing progress)."""
        self._empty = text
        if self.is_mounted and not self.rows:
            self.refresh()

    def invalidate(self) -> None:
        """Forget rendered lines (the rows, marks or theme changed) and repaint."""
        self._stamp += 1
        self._lines.clear()
        self._layout = None
        self.refresh()

    def _resolve_styles(self) -> None:
        key = (self._stamp, self.has_focus)
        if self._styles_key != key:
            self._styles_key = key
            self._base = self.rich_style
            self._cursor = self._base + self.get_component_rich_style("rowlist--cursor")
            self._cstyles = {}
            self._combined = {}

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.invalidate()

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.rows) + 1)
        self.invalidate()

    def resize_virtual(self) -> None:
        """Match the scrollable height to the rows. A full layout happens only when the scrollbar
        appears or goes: a screen re-layout per agent call would cost ~40 ms at 160x50."""
        size = Size(self.scrollable_content_region.width, len(self.rows) + 1)
        old = self.virtual_size
        if size == old:
            return
        height = self.container_size.height
        if old.width == size.width and (old.height > height) == (size.height > height):
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)
            self.refresh()
        else:
            self.virtual_size = size

    # -- cursor ----------------------------------------------------------------------
    def _body_height(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def _reveal(self) -> None:
        top, height = int(self.scroll_y), self._body_height()
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def _move_to(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        if index == self.cursor:
            self._reveal()
            return
        old = self.cursor
        self.cursor = index
        # cached lines are keyed by whether they hold the cursor: only the two rows that
        # changed need drawing again, and only if they are on screen
        self._reveal()
        self._refresh_row(old)
        self._refresh_row(index)
        self.post_message(self.Highlighted(self, self.current))

    def _refresh_row(self, index: int) -> None:
        y = index - int(self.scroll_y) + 1  # line 0 is the header
        if 1 <= y < self.scrollable_content_region.height:
            self.refresh_line(index + 1)  # virtual coordinates: ScrollView subtracts scroll_y

    def action_move(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * self._body_height())

    def action_jump(self, index: int) -> None:
        self._move_to(index if index >= 0 else len(self.rows) - 1)

    def action_choose(self) -> None:
        if self.current is not None:
            self.post_message(self.Chosen(self, self.current))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self._column_at(offset.x)
            if column is not None:
                self.post_message(self.HeaderClicked(self, column))
            return
        index = int(self.scroll_y) + offset.y - 1
        if 0 <= index < len(self.rows):
            self._move_to(index)
            if event.chain >= 2:
                self.post_message(self.Chosen(self, self.current))

    def column_x(self, key: str) -> int | None:
        """The x offset where column `key` starts (None when it is not shown)."""
        at = 0
        for col in self._columns(self.scrollable_content_region.width):
            if col.key == key:
                return at
            at += col.width + 1
        return None

    def column_widths(self, width: int | None = None) -> dict[str, int]:
        """Each shown column's width, by key, in a list `width` cells wide (default: as drawn now)."""
        region = self.scrollable_content_region.width if width is None else width
        return {col.key: col.width for col in self._columns(region)}

    def _column_at(self, x: int) -> str | None:
        at = 0
        for col in self._columns(self.scrollable_content_region.width):
            if at <= x < at + col.width + 1:
                return col.key
            at += col.width + 1
        return None

    # -- rendering ---------------------------------------------------------------------
    def _columns(self, width: int) -> list[Column]:
        if self._layout is None or self._layout[:2] != (width, self._stamp):
            self._layout = (width, self._stamp, layout(self.all_columns(), width))
        return self._layout[2]

    def header_label(self, column: Column) -> str:
        """The header text of a column (subclasses add sort arrows)."""
        return column.label

    def _strip(self, cells: Sequence[Cell | Parts], columns: Sequence[Column], base: Style, width: int) -> Strip:
        segments: list[Segment] = []
        used = -1
        gap = Segment(" ", base)
        for cell, col in zip(cells, columns, strict=True):
            if used >= 0:
                segments.append(gap)
            used += col.width + 1
            if isinstance(cell, list):
                segments.extend(_fit_parts(cell, col.width, base, self._on))
                continue
            text, style = cell
            if style:
                style = self._on(base, style)
            segments.append(Segment(fit(text, col.width, col.right), style or base))
        if used < width:
            segments.append(Segment(" " * (width - used), base))
        segments = separate(segments)  # every visible run starts at its cell (see tui.widgets.spans)
        if used <= width:
            return Strip(segments, width)
        return Strip(segments, used).adjust_cell_length(width, base)

    def _on(self, base: Style, style: Style) -> Style:
        """`style` drawn over `base` (a row's colours: the list's or the cursor's), its colour
        moved toward the row's own text colour as far as it takes to be readable (MIN_RATIO)
        there: a muted folder or a highlighted word computed for the list's background sat
        at 1.0-3.9:1 on the cursor's in every theme."""
        key = (base, style)
        out = self._combined.get(key)
        if out is None:
            out = base + style
            fg, bg, toward = out.color, out.bgcolor, base.color
            if (
                fg is not None
                and bg is not None
                and toward is not None
                and fg != toward
                and fg.triplet is not None
                and bg.triplet is not None
                and toward.triplet is not None
            ):
                fg_c, bg_c = Color.from_rich_color(fg), Color.from_rich_color(bg)
                if ratio(fg_c, bg_c) < MIN_RATIO:
                    moved = readable(fg_c, bg_c, Color.from_rich_color(toward))
                    out = out + Style(color=moved.rich_color)
            self._combined[key] = out
        return out

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        columns = self._columns(width)
        self._resolve_styles()
        base = self._base
        if y == 0:
            header = self.get_component_rich_style("rowlist--header")
            cells: list[Cell] = [(self.header_label(c), None) for c in columns]
            return self._strip(cells, columns, base + header, width)
        index = int(self.scroll_y) + y - 1
        if not self.rows:
            if y == 1:
                style = self.get_component_rich_style("rowlist--empty")
                return Strip([Segment(" ", base), Segment(fit(self._empty, width - 1), base + style)])
            return Strip.blank(width, base)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        selected = index == self.cursor
        key = (self._stamp, index, selected, width, self._styles_key)
        strip = self._lines.get(key)
        if strip is None:
            cells = self.cells(self.rows[index], columns)
            strip = self._strip(cells, columns, self._cursor if selected else base, width)
            self._lines[key] = strip
        return strip

    def on_focus(self, event: events.Focus) -> None:
        self.refresh()  # the cursor row's colours follow the focus (the line key holds it)

    def on_blur(self, event: events.Blur) -> None:
        self.refresh()

    def cstyle(self, name: str) -> Style:
        """The rich style of one of this list's component classes (e.g. "rowlist--warn")."""
        style = self._cstyles.get(name)
        if style is None:
            # the colour resolved against the list's own background (`$text-muted` is the
            # foreground at 60% alpha: the partial style alone resolved it to white in every
            # theme), without that background, so that the cursor row keeps its own
            partial = self.get_component_rich_style(name, partial=True)
            full = self.get_component_rich_style(name)
            style = partial + Style(color=full.color) if full.color is not None else partial
            self._cstyles[name] = style
        return style


def _fit_parts(
    parts: Parts, width: int, base: Style, on: Callable[[Style, Style], Style] | None = None
) -> list[Segment]:
    """Segments for a multi-part cell, cut (with an ellipsis) or padded to `width` cells
    (`on(base, style)` combines a piece's style with the row's)."""
    out: list[Segment] = []
    left = width
    combine = on or (lambda b, s: b + s)
    for text, style in parts:
        if left <= 0:
            break
        text = steady(text.replace("\n", " ").replace("\t", " "))
        size = cell_len(text)
        if size > left:
            out.append(Segment(set_cell_size(text, left - 1) + "…", combine(base, style) if style else base))
            return out
        out.append(Segment(text, combine(base, style) if style else base))
        left -= size
    if left > 0:
        out.append(Segment(" " * left, base))
    return out
