"""A note's display lines, rendered on demand: what the preview's body draws.

The lexer's lines (`core.markdown.lines`) are known at once; turning them into wrapped rich
Text costs ~0.1 ms a line, so a 5,000-line note is never rendered in one go. `NoteDoc.extend`
renders the next source lines in order for at most a time budget: the preview's worker calls
it in small steps (resting between them, so keys stay live), and the body calls it on the UI
thread for the lines about to be drawn when the person scrolls ahead of the worker. A lock
keeps the two apart; either holds it for one step only.

The height of the lines not rendered yet is estimated from their length (a wrapped line is
rarely more than its characters over the width), so the scrollbar spans the whole note from
the first screen; it settles as the lines are rendered.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from rich.text import Text

from vaultwatch.core.markdown.lines import Line
from vaultwatch.tui.widgets.noterender import Context, EmbedNotRead, hanging, more_lines, render_at, wrap


def _estimate(line: Line, width: int) -> int:
    if line.kind == "setext_rule":
        return 0
    return max(1, -(-len(line.text) // max(1, width)))


class NoteDoc:
    """Display lines of one note at one width, rendered as far as asked."""

    def __init__(
        self,
        lines: Sequence[Line],
        ctx: Context | None,
        width: int,
        *,
        more: int = 0,
        tail: Text | None = None,
        final: bool = True,
    ) -> None:
        self.source = lines
        self.final = final  # False: the lines of a prefix (never complete; a whole-note doc adopts it)
        self.ctx = ctx
        self.width = width
        self.display: list[Text] = []
        self.next = 0
        self.tail = tail  # a last line to show after the source lines (what was left out)
        self._lock = threading.Lock()
        self.painted: threading.Event | None = None  # set once a line of it was drawn (tui.widgets.preview)
        # (source index, first display index) of each rendered group of source lines, in order:
        # where a line of the note is on screen (the Broken tab opens a note at a problem's line)
        self.starts: list[tuple[int, int]] = []
        self._rest = sum(_estimate(line, width) for line in lines) + more + (1 if tail is not None else 0)

    @classmethod
    def fixed(cls, lines: list[Text]) -> NoteDoc:
        """Lines rendered already (a message, a skipped file)."""
        doc = cls((), None, 80)
        doc.display = list(lines)
        doc._rest = 0
        return doc

    @property
    def links(self) -> list:
        """The links rendered so far, in order (their index is their `@click` argument)."""
        return self.ctx.links if self.ctx is not None else []

    @property
    def complete(self) -> bool:
        return self.final and self.next >= len(self.source) and self.tail is None

    @property
    def height(self) -> int:
        """Display lines rendered plus an estimate of the rest."""
        return len(self.display) + max(0, self._rest)

    def extend(self, upto: int | None = None, budget: float = 0.002, *, read: bool = True) -> bool:
        """Render source lines until more than `upto` display lines exist (None: all), for at
        most `budget` seconds (at least one line). True when lines were added. `read` False (the
        UI thread): stop before a line that embeds a note not read yet (the worker reads it)."""
        with self._lock:
            before = len(self.display)
            deadline = time.perf_counter() + budget
            source, ctx, width = self.source, self.ctx, self.width
            if ctx is not None:
                ctx.reading = read
            while self.next < len(source) and (upto is None or len(self.display) <= upto):
                n = self.next
                links = len(ctx.links) if ctx is not None else 0
                try:
                    texts, after = render_at(source, n, ctx)  # type: ignore[arg-type]
                except EmbedNotRead:
                    del ctx.links[links:]  # type: ignore[union-attr]
                    break
                self.starts.append((n, len(self.display)))
                self.next = after
                hang = hanging(source[n])
                for text in texts:
                    self.display.extend(wrap(text, width, hang))
                for k in range(n, self.next):
                    self._rest -= _estimate(source[k], width)
                if time.perf_counter() >= deadline:
                    break
            if self.next >= len(source) and self.tail is not None:
                self.display.append(self.tail)
                self.tail = None
                self._rest = 0
            if self.complete:
                self._rest = 0
            return len(self.display) > before

    def display_index(self, source_index: int) -> int:
        """The first display line of the source line `source_index` (of the group it is
        rendered in), rendering up to it first; past the end: the last display line."""
        while self.next <= source_index and not self.complete:
            if not self.extend(len(self.display) + 100, 0.05, read=False) and self.next <= source_index:
                break
        with self._lock:
            found = 0
            for n, index in self.starts:
                if n > source_index:
                    break
                found = index
            return min(found, max(0, len(self.display) - 1))

    def adopt(self, earlier: NoteDoc) -> bool:
        """Keep what `earlier` (the same note lexed from a prefix, for its first screen) has
        rendered, when its lines read as this doc's do (True); else render them again (False)."""
        with earlier._lock, self._lock:
            k = earlier.next
            if (
                self.next
                or k > len(self.source)
                or earlier.width != self.width
                or list(earlier.source[:k]) != list(self.source[:k])
            ):
                return False
            self.display = list(earlier.display)
            self.starts = list(earlier.starts)
            if self.ctx is not None and earlier.ctx is not None:
                self.ctx.links[:] = earlier.ctx.links
            self.next = k
            self._rest -= sum(_estimate(self.source[i], self.width) for i in range(k))
            return True


def note_doc(
    lines: Sequence[Line], ctx: Context, width: int, max_lines: int, *, more: int = 0, final: bool = True
) -> NoteDoc:
    """A doc of at most `max_lines` source lines (then a line saying how many more there are);
    `more` estimates the lines after a prefix (`final` False)."""
    tail = None
    if len(lines) > max_lines:
        tail = more_lines(len(lines) - max_lines, ctx.styles) if final else None
        lines = lines[:max_lines]
    return NoteDoc(lines, ctx, width, more=more, tail=tail, final=final)
