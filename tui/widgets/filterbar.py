"""The filter bar (`/`): text in, a core Query out, and under the bar what the text means.

The parsing, the hints and the completions are core's (core.query.filterexpr); this widget shows
the text, the error or the term still being typed (the list shows the text applied, which the
line says), the hints that explain an empty answer (worked out off the UI thread) and the
completion of the last word: the first candidate as a ghost suggestion (right arrow accepts it)
and every candidate in a dropdown under the input (up/down move, tab/enter take the highlighted
one, escape closes it and leaves the filter, typing narrows it). Both come from core's filterexpr.completions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input, OptionList, Static

from vaultwatch.core.errors import QueryError
from vaultwatch.core.query import filterexpr
from vaultwatch.core.query.listing import Query

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from vaultwatch.core.index.snapshot import Snapshot

from vaultwatch.tui.widgets.sizing import content_sized_free
from vaultwatch.tui.widgets.spans import tidy

DROPDOWN_LIMIT = 50  # candidates listed at most (the list scrolls; typing narrows it)

PLACEHOLDER = (
    "/ filter: words  status:deprecated  trust:unverified  stale:true  tag:craft  path:Projects/**  -key:value"
)


class FilterSuggester(Suggester):
    """Completes the last word from the vault's keys, values, tags and folders (core's
    filterexpr.complete, in a thread: a key's values may be read for the first time)."""

    def __init__(self, snapshot: Callable[[], Snapshot]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self._snapshot = snapshot

    async def get_suggestion(self, value: str) -> str | None:
        snapshot = self._snapshot()
        if not snapshot.loaded:
            return None
        return await asyncio.to_thread(filterexpr.complete, value, snapshot)


class FilterInput(Input):
    """The bar's input line. Textual's Input sets its virtual size to its text's width on every
    change of its value, and that reactive asked for a layout of the whole screen; but this
    line's size never follows its text (one line, the bar's width: CSS), so each key re-measured
    every widget on screen, and the layout left scrollbars to redraw in the next frame, across
    the screen (several frames per key typed, where one shows it). Its virtual size is still
    set (the line's horizontal scrolling reads it), without that layout (tui.widgets.sizing)."""

    virtual_size = content_sized_free()


class FilterBar(Vertical):
    """An input line and under it, when there is something to say, one line: the error with a
    caret, the term still being typed, or hints for terms that select nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Back to list", id="filter.leave"),
        Binding("ctrl+u", "clear", "Clear filter", show=False, id="filter.clear"),
        Binding("tab", "complete", "Accept the completion", show=False, id="filter.complete"),
    ]

    class Applied(Message):
        """The filter text parsed: list what `query` selects."""

        def __init__(self, text: str, query: Query) -> None:
            super().__init__()
            self.text, self.query = text, query

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, FilterBar.Applied)  # a newer text supersedes a queued one

    class Searched(Message):
        """The text starts with `?`: search the text of the notes for `words` within `scope`."""

        def __init__(self, text: str, words: str, scope: Query) -> None:
            super().__init__()
            self.text, self.words, self.scope = text, words, scope

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, (FilterBar.Searched, FilterBar.Applied))

    class Left(Message):
        """The user is done with the filter (escape or enter)."""

    def __init__(self, *, id: str | None = None, snapshot: Callable[[], Snapshot] | None = None) -> None:
        super().__init__(id=id)
        self.query_value = Query()
        self.applied = ""  # the text the list shows
        self.error: QueryError | None = None
        self.pending: filterexpr.FilterError | None = None
        self.hints: tuple[filterexpr.Hint, ...] = ()
        self._snapshot = snapshot

    def compose(self) -> ComposeResult:
        suggester = FilterSuggester(self._snapshot) if self._snapshot is not None else None
        yield FilterInput(placeholder=PLACEHOLDER, id="filter-input", select_on_focus=False, suggester=suggester)
        yield Static("", id="filter-error")
        yield OptionList(id="filter-complete")

    def on_mount(self) -> None:
        self.query_one("#filter-error").display = False
        dropdown = self.query_one("#filter-complete", OptionList)
        dropdown.display = False
        dropdown.can_focus = False  # the input keeps the focus; its keys drive the dropdown
        self._choices: tuple[tuple[str, str], ...] = ()

    @property
    def dropdown_open(self) -> bool:
        """The completion dropdown is showing."""
        return self.query_one("#filter-complete", OptionList).display

    def close_dropdown(self) -> None:
        self.query_one("#filter-complete", OptionList).display = False

    @work(exclusive=True, group="complete", exit_on_error=False, description="filter completions")
    async def _offer(self, text: str) -> None:
        snapshot = self._snapshot() if self._snapshot is not None else None
        if snapshot is None or not snapshot.loaded or text.lstrip().startswith(filterexpr.SEARCH_PREFIX):
            self.close_dropdown()
            return
        field = self.query_one(Input)
        if not field.cursor_at_end:
            self.close_dropdown()
            return
        found = await asyncio.to_thread(filterexpr.completions, text, snapshot, limit=DROPDOWN_LIMIT)
        if not self.is_attached or self.text != text:
            return  # the text moved on meanwhile
        self._show_choices(found)

    def _show_choices(self, found: tuple[tuple[str, str], ...]) -> None:
        dropdown = self.query_one("#filter-complete", OptionList)
        self._choices = found
        if not found or not self.query_one(Input).has_focus:
            dropdown.display = False
            return
        dropdown.set_options([shown for shown, _ in found])
        dropdown.highlighted = 0
        start = max(self.text.rfind(" "), self.text.rfind("\t")) + 1
        dropdown.styles.offset = (min(start + 1, max(0, self.size.width - 30)), 1)
        dropdown.display = True

    def _take(self) -> bool:
        """Put the highlighted candidate into the input; False when there is none."""
        dropdown = self.query_one("#filter-complete", OptionList)
        index = dropdown.highlighted
        if not dropdown.display or index is None or index >= len(self._choices):
            return False
        field = self.query_one(Input)
        dropdown.display = False
        field.value = self._choices[index][1]
        field.cursor_position = len(field.value)
        return True

    def on_key(self, event: events.Key) -> None:
        """While the dropdown shows: up/down move in it, tab/enter take (escape leaves the
        filter, closing it: `tui.screens.typingguard`)."""
        if not self.dropdown_open:
            return
        dropdown = self.query_one("#filter-complete", OptionList)
        if event.key in ("down", "up"):
            dropdown.action_cursor_down() if event.key == "down" else dropdown.action_cursor_up()
        elif event.key in ("tab", "enter"):
            self._take()
        else:
            return
        event.stop()
        event.prevent_default()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # a click on a candidate
        self.query_one("#filter-complete", OptionList).highlighted = event.option_index
        self._take()
        self.query_one(Input).focus()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if isinstance(event.widget, Input):
            self.close_dropdown()

    @property
    def text(self) -> str:
        return self.query_one(Input).value

    def set_text(self, text: str) -> None:
        """Replace the filter text (from the palette or a test)."""
        self.query_one(Input).value = text

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._apply(event.value)
        self._offer(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Left())

    @property
    def searching(self) -> bool:
        """The text is a full-text search (it starts with `?`)."""
        return self.text.lstrip().startswith(filterexpr.SEARCH_PREFIX)

    def _apply(self, text: str) -> None:
        snapshot = self._snapshot() if self._snapshot is not None else None
        loaded = snapshot if snapshot is not None and snapshot.loaded else None
        body = text.lstrip()
        search = body.startswith(filterexpr.SEARCH_PREFIX)
        skip = len(text) - len(body) + 1 if search else 0
        try:
            analysis = filterexpr.analyse(text[skip:], loaded, search=search)
        except filterexpr.FilterError as exc:
            exc.start, exc.end = exc.start + skip, exc.end + skip
            self.error, self.pending, self.hints = exc, None, ()
            self._say(_error_text(text, exc, self.applied), error=True)
            return
        except QueryError as exc:
            self.error, self.pending, self.hints = exc, None, ()
            self._say(_error_text(text, exc, self.applied), error=True)
            return
        if search:
            self.error, self.pending, self.hints = None, analysis.pending, ()
            self._say(
                _pending_text(text, analysis.pending, "?" + analysis.applied) if analysis.pending is not None else None
            )
            self.applied = "?" + analysis.applied
            self.post_message(self.Searched(text, analysis.search, analysis.query))
            return
        self.error, self.pending, self.hints = None, analysis.pending, ()
        if analysis.pending is not None:
            self._say(_pending_text(text, analysis.pending, analysis.applied))
        else:
            self._say(None)
        self.applied = analysis.applied
        self.query_value = analysis.query
        self.post_message(self.Applied(analysis.applied, analysis.query))
        if snapshot is not None and snapshot.loaded and any(t.key is not None for t in analysis.terms):
            self._explain(text, analysis.terms, snapshot)

    @work(thread=True, exclusive=True, group="hints", exit_on_error=False, description="filter hints")
    def _explain(self, text: str, terms: tuple[filterexpr.FilterTerm, ...], snapshot: Snapshot) -> None:
        hints = filterexpr.explain(terms, snapshot)
        if hints:
            self.app.call_from_thread(self._show_hints, text, hints)

    def _show_hints(self, text: str, hints: tuple[filterexpr.Hint, ...]) -> None:
        if not self.is_attached or self.text != text or self.error is not None:
            return  # the text moved on meanwhile
        self.hints = hints
        out = Text()
        if self.pending is None:
            first = hints[0]
            out.append(" " * first.start + "^" * max(1, first.end - first.start) + " ", style="bold")
        out.append("  ·  ".join(f"⚠ {h.message}" for h in hints))
        self._say(out)

    def _say(self, text: Text | None, *, error: bool = False) -> None:
        line = self.query_one("#filter-error", Static)
        self.set_class(error, "-error")
        line.set_class(not error and text is not None, "-hint")
        if text is None:
            line.display = False
            return
        line.update(tidy(text))
        line.display = True

    def show_error(self, message: str) -> None:
        """Show an error found when the query ran (e.g. a bad glob)."""
        error_line = self.query_one("#filter-error", Static)
        error_line.update(Text(f"✖ {message}", style="bold red"))
        error_line.display = True
        self.add_class("-error")

    def action_leave(self) -> None:
        self.close_dropdown()
        self.post_message(self.Left())

    def action_clear(self) -> None:
        self.set_text("")

    def action_complete(self) -> None:
        """Tab takes the suggested completion (as the right arrow does at the end of the text)."""
        field = self.query_one(Input)
        if field._suggestion and field.cursor_at_end:
            field.value = field._suggestion
            field.cursor_position = len(field.value)
        else:
            self.screen.focus_next()


def _error_text(text: str, exc: QueryError, applied: str) -> Text:
    start = getattr(exc, "start", None)
    out = Text()
    if isinstance(start, int):
        end = getattr(exc, "end", start + 1)
        out.append(" " * start + "^" * max(1, min(end, len(text) + 1) - start) + " ", style="bold red")
    out.append(f"✖ {exc.message.rsplit(' (column', 1)[0]}", style="bold red")
    out.append(f"  · listed: {_shown(applied)}", style="dim")
    return out


def _pending_text(text: str, pending: filterexpr.FilterError, applied: str) -> Text:
    out = Text()
    out.append(f"… {pending.message.rsplit(' (column', 1)[0]}", style="italic")
    out.append(f"  · listed: {_shown(applied)}", style="dim")
    return out


def _shown(applied: str) -> str:
    return f"“{applied}”" if applied.strip() else "every note"
