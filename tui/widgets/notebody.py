"""The preview's note body: wrapped lines drawn one at a time with the Line API.

A 5,000-line note in one `Static` froze the app for 9-11 s (Textual laid out and rendered the
whole Text on the UI thread). Here the preview's worker renders and wraps the note in
batches (`wrap`), the first screenful first; this widget only keeps the wrapped lines and
turns the few on screen into strips when they are drawn (cached), so opening any note costs
the UI thread a screenful, and the lines that come later only extend its height.
"""
from __future__ import annotations

from rich.console import Console
from rich.segment import Segment
from rich.text import Text
from textual.cache import LRUCache
from textual.color import Color
from textual.constants import DIM_FACTOR
from textual.filter import dim_style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from .. import spans

LINE_CACHE = 400  # strips kept (several screens)
_console: Console | None = None


def wrap(line: Text, width: int) -> list[Text]:
    """One rendered line of the note as the display lines it takes at `width` cells (words
    wrapped, over-long words folded), its styled runs tidied (tui.spans). Thread-safe: runs
    in the preview's worker."""
    global _console
    if _console is None:  # wrapping needs a console only for tab sizes and the like
        _console = Console(width=200, color_system=None, force_terminal=False, legacy_windows=False)
    if line.style:  # Text.render leaves the base style out: make it the lowest span
        line.stylize_before(line.style)
        line.style = ""
    line = spans.tidy(line)
    if line.cell_len <= width:
        return [line]
    return list(line.wrap(_console, width, overflow="fold"))


class NoteBody(Widget):
    """The rendered body; its links' `@click` actions land here (`follow`)."""

    DEFAULT_CSS = """
    NoteBody { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Text] = []
        self.complete = True  # False while the worker still renders the rest of the note
        self._strips: LRUCache[int, Strip] = LRUCache(LINE_CACHE)

    @property
    def plain(self) -> str:
        """The lines shown so far as plain text (tests, the follow-mode status)."""
        return "\n".join(line.plain for line in self.lines)

    def set_lines(self, lines: list[Text], *, complete: bool = True) -> None:
        """Show these lines instead of the ones before."""
        self.lines = list(lines)
        self.complete = complete
        self._changed()

    def add_lines(self, lines: list[Text], *, complete: bool) -> None:
        """More lines of the same note (what is on screen stays as it is)."""
        self.lines.extend(lines)
        self.complete = complete
        self.refresh(layout=True)

    def _changed(self) -> None:
        self._strips.clear()
        self.refresh(layout=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        strip = self._strips.get(y)
        if strip is None or strip.cell_length != width:
            if 0 <= y < len(self.lines):
                base = self.rich_style
                segments = spans.separate(self.lines[y].render(self.app.console))
                strip = Strip(_undim(Strip(segments).apply_style(base), base)).adjust_cell_length(width, base)
            else:
                strip = Strip.blank(width, self.rich_style)
            self._strips[y] = strip
        return strip

    def action_follow(self, index: int) -> None:
        from .preview import Preview  # noqa: PLC0415 (preview imports this module)

        self.post_message(Preview.FollowLink(index))


def _undim(strip: Strip, base) -> list[Segment]:
    """Dim runs drawn as Textual draws them in a Static: the colour blended towards the
    background (terminals' own dim is not what the theme's contrast was checked against)."""
    background = Color.from_rich_color(base.bgcolor) if base.bgcolor is not None else Color(0, 0, 0)
    return [Segment(seg.text, dim_style(seg.style, background, DIM_FACTOR), seg.control)
            if seg.style is not None and seg.style.dim and seg.style.color is not None else seg
            for seg in strip]
