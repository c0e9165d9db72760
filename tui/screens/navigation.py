"""The main screen's navigation keys: the filter and search modes, the list, the preview, the
tabs, the tree and the activity panel shown or hidden, the as-of date.

A mixin of `tui.screens.main.MainScreen` (split out of it by job; its state lives there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Input

from vaultwatch.core.query import filterexpr
from vaultwatch.tui.widgets.doclist import DocList
from vaultwatch.tui.widgets.folders import FolderView

if TYPE_CHECKING:
    from vaultwatch.core.clock import Clock
    from vaultwatch.tui.screens.mainparts import MainParts


class Navigation:
    """Moving around the screen (MainScreen's part)."""

    tree_width: int | None

    def action_search(self: MainParts) -> None:
        """The filter bar in full-text mode: its text gets the `?` prefix."""
        field = self._filterbar.query_one("#filter-input", Input)
        if not self._filterbar.searching:
            field.value = filterexpr.SEARCH_PREFIX + field.value
        field.cursor_position = len(field.value)
        self.app.set_focus(field)

    def action_focus_filter(self: MainParts) -> None:
        # at once: keys typed right after `/` are queued already and must reach the field
        self.app.set_focus(self._filterbar.query_one("#filter-input", Input))

    def clear_filter(self: MainParts) -> None:
        self._filterbar.set_text("")

    def check_action(self: MainParts, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back_to_list":
            return self.reading  # else escape goes on to focus_list (the same key's next binding)
        return True

    def action_back_to_list(self: MainParts) -> None:
        self.action_focus_list()

    def action_focus_list(self: MainParts) -> None:
        if self.reading:
            self.reading = False
            self._apply_layout()
        elif self.searcher.active and self.focused is self._search_list:
            self.end_search()  # escape in the hits leaves the full-text search
            return
        self.active_list.focus()

    def end_search(self: MainParts) -> None:
        """Back from the full-text hits to the tab's list, the bar's `?` text cleared."""
        self.searcher.stop()
        self._apply_layout()
        self.clear_filter()
        self.refresh_views(keep=False)
        self.app.set_focus(self.active_list)

    def action_focus_preview(self: MainParts) -> None:
        if self.app.size.width < 100 and not self.reading:
            self.reading = True
            self._apply_layout()
        self.preview.focus()

    def action_tab(self: MainParts, pane_id: str) -> None:
        self.tabs.active = pane_id

    def action_toggle_tree(self: MainParts) -> None:
        self._user_layout["tree"] = not self._tree.display
        self._apply_layout()

    def action_tree_width(self: MainParts, delta: int) -> None:
        """Narrow or widen the folder tree (shown if it was hidden); the width is kept in the
        person's settings file for the next start."""
        from vaultwatch.tui.screens.main import TREE_NARROW, TREE_WIDE  # noqa: PLC0415

        current = self.tree_width or (TREE_WIDE if self.app.size.width >= 140 else TREE_NARROW)
        self.set_tree_width(current + delta)

    def set_tree_width(self: MainParts, width: int, *, keep: bool = True) -> None:
        """The folder tree `width` cells wide (within settings.TREE_WIDTHS and half the screen),
        shown; `keep`: written to the settings file."""
        from vaultwatch.tui.settings import TREE_WIDTHS  # noqa: PLC0415

        low, high = TREE_WIDTHS
        width = max(low, min(high, width, max(low, self.app.size.width // 2)))
        if width == self.tree_width and self._tree.display and not keep:
            return
        self.tree_width = width
        self._user_layout["tree"] = True
        self._apply_layout()
        if keep:
            self.app.keep_tree_width(width)

    def on_folder_view_resized(self: MainParts, message: FolderView.Resized) -> None:
        """A drag of the tree's border: follow it, keep the width where the button is released."""
        self.set_tree_width(message.width, keep=message.done)

    def action_changes(self: MainParts) -> None:
        from vaultwatch.tui.flows import review  # noqa: PLC0415

        review.open_changes(self.app)

    def action_pending(self: MainParts) -> None:
        from vaultwatch.tui.flows import review  # noqa: PLC0415

        review.open_pending(self.app)

    def action_approval_mode(self: MainParts) -> None:
        from vaultwatch.tui.flows import review  # noqa: PLC0415

        review.cycle_mode(self.app)

    def action_toggle_activity(self: MainParts) -> None:
        self._user_layout["activity"] = not self._activity_panel.display
        self._apply_layout()

    def focus_tree(self: MainParts) -> None:
        self._user_layout["tree"] = True
        self._apply_layout()
        self._tree.focus()

    def action_toggle_follow(self: MainParts) -> None:
        if self._activity_panel.toggle_follow() and not self._activity_panel.display:
            self._user_layout["activity"] = True
            self._apply_layout()
        self.show_agents()

    def action_as_of(self: MainParts) -> None:
        def done(clock: Clock | None) -> None:
            if clock is not None:
                self.set_clock(clock)

        from vaultwatch.tui.screens.asof import AsOfScreen  # noqa: PLC0415

        current = self.session.clock.today().isoformat()
        self.app.push_screen(AsOfScreen(current, blink=self.config.animate), done)

    def set_clock(self: MainParts, clock: Clock) -> None:
        """Judge staleness by another as-of clock (this session only; agents keep theirs)."""
        self.session.clock = clock
        self.invalidate_doclists()
        self.preview.refresh_marks()
        self._status_vault()
        self.refresh_views()

    def invalidate_doclists(self: MainParts) -> None:
        for pane in self._panes:
            if isinstance(pane.rowlist, DocList):
                pane.rowlist.invalidate()

    def tick(self: MainParts) -> None:
        """Redraw the "read … ago" marks (the app's tick)."""
        if not self.session.marks.by_path:
            return
        self.invalidate_doclists()
        self._tree.refresh_marks()
        self.preview.refresh_marks()
