"""The main screen's typing guard: keys typed on after leaving the filter bar go on into it.

A mixin of `tui.screens.main.MainScreen` (split out of it by job; its state lives there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.widgets import Input

from ..widgets.filterbar import FilterBar

if TYPE_CHECKING:
    from .main import MainScreen

TYPING_GUARD = 0.6  # keys this close together after leaving the filter are still filter text


class TypingGuard:
    """The burst of typing that left the filter (MainScreen's part)."""

    def on_filter_bar_left(self: MainScreen, message: FilterBar.Left) -> None:
        # the person may type on without looking: keys in that burst go on into the filter
        self._guard_from = message.time
        self.app.set_focus(self.active_list)  # at once: Widget.focus() waits behind queued keys

    def end_typing_guard(self: MainScreen) -> None:
        """The list's keys act at once again (the typing burst that left the filter is over)."""
        self._guard_from = None

    def reroute(self: MainScreen, event: events.Key, sent_to: object) -> bool:
        """A key the focus had not caught up with, now at the app before its bindings run: True
        when it went on into the filter instead. Textual sends a key to the widget focused when
        the key is taken from the queue and runs bindings once it bubbled up, so in a burst
        (fast typing, type-ahead on a busy machine) the keys behind `/` reach the list and then
        the bindings of the filter's focus chain (`p`, the preview; `e`, the editor...)."""
        field = self._filterbar.query_one("#filter-input", Input)
        if self.focused is not field or sent_to is field or sent_to is None:
            return False
        self._into_filter(event, field)
        return True

    def on_key(self: MainScreen, event: events.Key) -> None:
        """A printable key in the burst of typing that left the filter (enter or escape, then
        more keys less than TYPING_GUARD apart, timed when the terminal delivered them) is
        filter text, not a list action: it goes on into the filter. Before, `/plane` enter
        ` verify` wrote a human attestation. Any other key (an arrow, tab) ends that burst."""
        if self._guard_from is None:
            return
        if event.character is None or not event.is_printable or event.time - self._guard_from > TYPING_GUARD:
            self._guard_from = None
            return
        if isinstance(self.focused, Input):
            return
        self._guard_from = event.time
        self._into_filter(event, self._filterbar.query_one("#filter-input", Input))

    def _into_filter(self: MainScreen, event: events.Key, field: Input) -> None:
        event.stop()
        event.prevent_default()
        if self.focused is not field:
            self.app.set_focus(field)
        # through the field's queue, behind the keys it still has to handle
        copy = events.Key(event.key, event.character)
        self.app.key_targets[id(copy)] = field
        field.post_message(copy)
