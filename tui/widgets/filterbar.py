"""The filter bar (`/`): text in, a core Query out, or an error shown under the bar.

The parsing is core's (core.query.filterexpr); this widget only shows the text and the error.
"""
from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from core.query import filterexpr
from core.errors import QueryError
from core.query.listing import Query

from ..spans import tidy

PLACEHOLDER = ("/ filter: words  status:deprecated  trust:unverified  stale:true  tag:craft  path:Projects/**  "
               "-key:value")


class FilterBar(Vertical):
    """An input line and, when the text does not parse, the error with a caret under it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Back to list", id="filter.leave"),
        Binding("ctrl+u", "clear", "Clear filter", show=False, id="filter.clear"),
    ]

    class Applied(Message):
        """The filter text parsed: list what `query` selects."""

        def __init__(self, text: str, query: Query) -> None:
            super().__init__()
            self.text, self.query = text, query

        def can_replace(self, message) -> bool:
            return isinstance(message, FilterBar.Applied)  # a newer text supersedes a queued one

    class Left(Message):
        """The user is done with the filter (escape or enter)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.query_value = Query()
        self.error: QueryError | None = None

    def compose(self):
        yield Input(placeholder=PLACEHOLDER, id="filter-input", select_on_focus=False)
        yield Static("", id="filter-error")

    def on_mount(self) -> None:
        self.query_one("#filter-error").display = False

    @property
    def text(self) -> str:
        return self.query_one(Input).value

    def set_text(self, text: str) -> None:
        """Replace the filter text (from the palette or a test)."""
        self.query_one(Input).value = text

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._apply(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Left())

    def _apply(self, text: str) -> None:
        error_line = self.query_one("#filter-error", Static)
        try:
            query = filterexpr.parse(text)
        except QueryError as exc:
            self.error = exc
            error_line.update(tidy(_error_text(text, exc)))
            error_line.display = True
            self.add_class("-error")
            return
        self.error = None
        error_line.display = False
        self.remove_class("-error")
        self.query_value = query
        self.post_message(self.Applied(text, query))

    def show_error(self, message: str) -> None:
        """Show an error found when the query ran (e.g. a bad glob)."""
        error_line = self.query_one("#filter-error", Static)
        error_line.update(Text(f"✖ {message}", style="bold red"))
        error_line.display = True
        self.add_class("-error")

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def action_clear(self) -> None:
        self.set_text("")


def _error_text(text: str, exc: QueryError) -> Text:
    start = getattr(exc, "start", None)
    out = Text()
    if isinstance(start, int):
        end = getattr(exc, "end", start + 1)
        out.append(" " * start + "^" * max(1, min(end, len(text) + 1) - start) + " ", style="bold red")
    out.append(f"✖ {exc.message}", style="bold red")
    return out
