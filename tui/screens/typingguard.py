"""The main screen's key routing: every key goes where the keys before it have sent the focus.

A mixin of `tui.screens.main.MainScreen` (split out of it by job; its state lives there).

Textual sends a key to the widget focused when the app takes the key from its queue, and runs
bindings once the key has bubbled back up; the widgets' own handling (the filter's enter,
which leaves it) runs later still, from their queues. In a burst (fast typing, type-ahead on a
busy machine) the keys behind `/` reached the list, and the keys behind the filter's enter
reached the filter. Here the keys that move the focus between the filter and the list move it
at once, so that each later key is routed as it would be once the screen had caught up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.widgets import Input

from vaultwatch.tui.widgets.filterbar import FilterBar

if TYPE_CHECKING:
    from vaultwatch.tui.screens.mainparts import MainParts


class TypingGuard:
    """Keys that leave the filter, and keys that arrived at the list after `/` (MainScreen's part)."""

    def on_filter_bar_left(self: MainParts, message: FilterBar.Left) -> None:
        # a click elsewhere or the leave binding run from the palette: the focus goes at once
        # (Widget.focus() waits behind queued keys)
        if self.focused is self._filter_field():
            self.app.set_focus(self.active_list)

    def _filter_field(self: MainParts) -> Input:
        return self._filterbar.query_one("#filter-input", Input)

    def leave_filter(self: MainParts) -> None:
        """Enter or escape in the filter, as the person meant it, now: the dropdown closes and
        the focus goes to the list, before the app takes the next key from its queue. Escape
        while suggestions show closes them and leaves too: one key, not two (before, escape
        then `j` typed `albumsj`)."""
        self._filterbar.close_dropdown()
        self.app.set_focus(self.active_list)

    def takes_filter_key(self: MainParts, event: events.Key) -> bool:
        """A key on its way to the filter that leaves it (enter with no suggestion to take,
        escape): True when it was handled here, at once."""
        if event.key == "escape" or (event.key == "enter" and not self._filterbar.dropdown_open):
            self.leave_filter()
            return True
        return False

    def route_key(self: MainParts, event: events.Key) -> bool:
        """A key the app just took from its queue, before Textual sends it to the focused
        widget: True when it was handled here (it left the filter)."""
        return self.focused is self._filter_field() and self.takes_filter_key(event)

    def reroute(self: MainParts, event: events.Key, sent_to: object) -> bool:
        """A key the focus had not caught up with, now at the app before its bindings run: True
        when it went on into the filter instead (or, enter or escape, left it again). The keys
        behind `/` reach the list and then the bindings of the filter's focus chain (`p`, the
        preview; `e`, the editor...) unless they are sent on here."""
        field = self._filter_field()
        if self.focused is not field or sent_to is field or sent_to is None:
            return False
        event.stop()
        event.prevent_default()
        if self.takes_filter_key(event):
            return True
        # through the field's queue, behind the keys it still has to handle
        copy = events.Key(event.key, event.character)
        self.app.key_targets[id(copy)] = field
        field.post_message(copy)
        return True
