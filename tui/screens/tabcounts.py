"""The main screen's tab counts: every tab's counts, the tree's and the status line's, counted off
the UI thread after a pause in the changes, and the tab labels fitted to the tab bar.

A mixin of `tui.screens.main.MainScreen` (split out of it by job; its state lives there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual import work
from textual.widgets import Tab
from textual.worker import get_current_worker

from vaultwatch.core.errors import VaultError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.query.listing import Query
from vaultwatch.tui.flows.querying import count_all
from vaultwatch.tui.widgets.triage import LABEL_LEVELS

if TYPE_CHECKING:
    from textual.timer import Timer

    from vaultwatch.core.clock import Clock
    from vaultwatch.tui.screens.mainparts import MainParts

TAB_PADDING = 2  # a tab's cells besides its label (Textual's Tab: padding 0 1)


class TabCounts:
    """Counting the tabs (MainScreen's part)."""

    _counts: dict[str, dict[str, int]] | None
    _counts_timer: Timer | None
    _stats_key: tuple[int, Clock] | None

    def run_counts(self: MainParts) -> None:
        """Re-count every tab, the tree and the status line (off the UI thread)."""
        self._counts_timer = None
        if not self._live():
            return
        plans: dict[str, dict[str, Query]] = {}
        for pane in self._panes:
            try:
                plans[pane.id or ""] = {k: self.query_for(pane, base) for k, base in pane.count_queries().items()}
            except VaultError:
                plans[pane.id or ""] = {}
        snapshot = self.session.snapshot
        fresh = (snapshot.generation, self.session.clock) != self._stats_key
        counters = {pane.id or "": pane.count for pane in self._panes}
        self._counts_worker(plans, snapshot, fresh, counters)

    @work(thread=True, exclusive=True, group="counts", exit_on_error=False, description="tab counts")
    def _counts_worker(
        self: MainParts, plans: dict[str, dict[str, Query]], snapshot: Snapshot, fresh: bool, counters: dict
    ) -> None:
        worker = get_current_worker()
        done = count_all(self.session, plans, snapshot, fresh, lambda: worker.is_cancelled, counters)
        if done is not None:
            self.app.from_thread(self._show_counts, *done, snapshot)

    def _show_counts(
        self: MainParts, counts: dict[str, dict[str, int]], stats: dict | None, snapshot: Snapshot
    ) -> None:
        if not self._live():
            return
        self._counts = counts
        self._relabel(counts)
        for pane in self._panes:
            pane.show_counts(counts.get(pane.id or "", {}))
        if stats is not None:
            self._stats_key = (snapshot.generation, self.session.clock)
            if snapshot is self.session.snapshot:
                self._tree.sync()
            self._status.show_stats(stats)
            if snapshot.loaded and self.app.freeze_long_lived() and snapshot is self.session.snapshot:
                self.warm_filter()

    def _relabel(self: MainParts, counts: dict[str, dict[str, int]]) -> None:
        """Tab labels at the widest level that fits the tab bar (`Trust ✗21 ◐10 ✓12`, `10k`,
        `Depr`...), so that every tab stays on screen from 80 columns up."""
        width = self._tabs.size.width or self.app.size.width
        labels: list[str] = []
        for level in range(LABEL_LEVELS):
            labels = [pane.label_for(counts.get(pane.id or "", {}), level) for pane in self._panes]
            if sum(cell_len(label) + TAB_PADDING for label in labels) <= width:
                break
        relabelled = []
        for pane, label in zip(self._panes, labels, strict=True):
            tab = self.tabs.get_tab(pane.id or "")
            if tab.label.plain != label:
                tab.label = label
                relabelled.append(tab)
        if relabelled:
            # Tabs places its underline before the relabelled tab is re-laid out; telling it once
            # more after the refresh puts it under the tab's new width (only the underline is
            # redrawn: setting the labels again would lay the whole screen out once more)
            def relabelled_again() -> None:
                for t in relabelled:
                    if t.is_attached:
                        t.post_message(Tab.Relabelled(t))

            self.call_after_refresh(relabelled_again)
