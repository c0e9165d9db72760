"""The preview's note body: wrapped lines drawn one at a time with the Line API.

A 5,000-line note in one `Static` froze the app for 9-11 s (Textual laid out and rendered the
whole Text on the UI thread). Here the body shows a `tui.widgets.notedoc.NoteDoc`: the
preview's worker renders it in small steps, the first screenful first, and a line the person
scrolls to before the worker got there is rendered when it is drawn (at most UI_BUDGET_S of
the UI thread's time a frame; a line still missing is drawn blank and redrawn shortly). This
widget turns the few lines on screen into strips (cached), so opening any note costs the UI
thread a screenful, and the lines that come later only settle its height.
"""

from __future__ import annotations

from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Size
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from vaultwatch.tui.timers import once
from vaultwatch.tui.widgets import spans
from vaultwatch.tui.widgets.notedoc import NoteDoc
from vaultwatch.tui.widgets.sizing import expect_size

LINE_CACHE = 400  # strips kept (several screens)
UI_BUDGET_S = 0.012  # rendering on the UI thread for lines scrolled to ahead of the worker, a frame
LAYOUT_AHEAD_SCREENS = 3  # while rendering: lay out again only when what is on screen comes this near the laid-out end


class NoteBody(Widget):
    """The rendered body; its links' `@click` actions land here (`follow`)."""

    DEFAULT_CSS = """
    NoteBody { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.doc = NoteDoc.fixed([])
        self._strips: LRUCache[int, Strip] = LRUCache(LINE_CACHE)
        self._height = 0
        self._redraw: Timer | None = None

    @property
    def lines(self) -> list[Text]:
        """The display lines rendered so far."""
        return self.doc.display

    @property
    def complete(self) -> bool:
        """False while the rest of the note is still to be rendered."""
        return self.doc.complete

    @property
    def plain(self) -> str:
        """The lines shown so far as plain text (tests, the follow-mode status)."""
        return "\n".join(line.plain for line in self.doc.display)

    def set_doc(self, doc: NoteDoc) -> None:
        """Show this note instead of the one before."""
        self.doc = doc
        self._changed()

    def adopt(self, doc: NoteDoc, kept: bool) -> None:
        """Show `doc`, the same note; `kept`: its lines so far are the ones shown (NoteDoc.adopt),
        so the strips drawn stay, and the layout is redone only when the height moved (drawing
        every line on screen again, and a layout of the screen, cost a key's frame 15-25 ms)."""
        if not kept:
            self.set_doc(doc)
            return
        self.doc = doc
        if self._needs_layout():
            self._expect_height()
            self.refresh(layout=True)

    def set_lines(self, lines: list[Text]) -> None:
        """Show these (rendered) lines instead of the note before."""
        self.set_doc(NoteDoc.fixed(lines))

    def grown(self) -> None:
        """The doc rendered more lines (the worker): lay out again when its height moved and
        it matters (`_needs_layout`)."""
        if self._needs_layout():
            self._expect_height()
            self.refresh(layout=True)

    def _needs_layout(self) -> bool:
        """True when the doc's height moved from the laid-out one and the doc is complete, or
        the screen is within LAYOUT_AHEAD_SCREENS of the laid-out end (the person could scroll
        past what is laid out). A layout redoes the whole screen's (15-30 ms at 160x50 while
        the worker renders): done for every batch of rendered lines, one key in five fell on
        one. The estimate of the lines not rendered yet already spans the note, so the height
        laid out is near the truth; the scrollbar settles when the note is complete."""
        if self.doc.height == self._height:
            return False
        if self.doc.complete:
            return True
        parent = self.parent
        if not isinstance(parent, Widget):
            return True
        view = max(1, parent.size.height)
        return parent.max_scroll_y - parent.scroll_y <= LAYOUT_AHEAD_SCREENS * view

    def _changed(self) -> None:
        self._strips.clear()
        self._expect_height()
        self.refresh(layout=True)

    def _expect_height(self) -> None:
        """The body's doc height, ahead of the layout (`expect_size`): the body's lines are
        drawn in the first frame after it, not a second one."""
        expect_size(self, self.doc.height)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._height = self.doc.height
        return self._height

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        strip = self._strips.get(y)
        if strip is not None and strip.cell_length == width:
            return strip
        doc = self.doc
        if y >= len(doc.display) and not doc.complete:  # scrolled ahead of the worker
            parent = self.parent
            view = parent.size.height if isinstance(parent, Widget) else 50
            doc.extend(y + view, UI_BUDGET_S, read=False)  # embedded notes are read by the worker
            if doc.height != self._height and self._redraw is None:
                self._redraw = once(self, 0.03, self._relayout)
        if doc.painted is not None and not doc.painted.is_set():  # after this frame (the worker waits)
            self.call_later(doc.painted.set)
        if 0 <= y < len(doc.display):
            base = self.rich_style
            segments = spans.separate(doc.display[y].render(self.app.console))
            strip = Strip(spans.undim(Strip(segments).apply_style(base), base)).adjust_cell_length(width, base)
            self._strips[y] = strip
        else:
            strip = Strip.blank(width, self.rich_style)
            if not doc.complete and self._redraw is None:
                self._redraw = once(self, 0.03, self._relayout)
        return strip

    def _relayout(self) -> None:
        self._redraw = None
        layout = self._needs_layout()
        if layout:
            self._expect_height()
        self.refresh(layout=layout)

    def action_follow(self, index: int) -> None:
        from vaultwatch.tui.widgets.preview import Preview  # noqa: PLC0415 (preview imports this module)

        self.post_message(Preview.FollowLink(index))
