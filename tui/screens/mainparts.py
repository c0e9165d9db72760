"""What the main screen's mixins (`tabcounts`, `typingguard`, `navigation`, `targets`) use of it.

Their methods take `self: MainParts`: mypy accepts a mixin's self type only when it is a
protocol (a mixin is no subclass of `MainScreen`), and checks at every call that
`MainScreen` has what is listed here. Only for the type checker: nothing imports it at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual import events
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, TabbedContent
from textual.worker import Worker

from vaultwatch.core.clock import Clock
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.model import Entry
from vaultwatch.core.query.listing import Query
from vaultwatch.tui.app import VaultwatchApp
from vaultwatch.tui.config import AppConfig
from vaultwatch.tui.flows.querying import ListScheduler
from vaultwatch.tui.flows.searching import SearchFlow
from vaultwatch.tui.flows.triaging import TriageFlow
from vaultwatch.tui.session import Session
from vaultwatch.tui.widgets.activity import ActivityPanel
from vaultwatch.tui.widgets.doclist import DocList
from vaultwatch.tui.widgets.filterbar import FilterBar
from vaultwatch.tui.widgets.folders import FolderView
from vaultwatch.tui.widgets.preview import Preview
from vaultwatch.tui.widgets.rowlist import RowList
from vaultwatch.tui.widgets.searchlist import SearchList
from vaultwatch.tui.widgets.statusline import StatusLine
from vaultwatch.tui.widgets.triage import TriagePane


class MainParts(Protocol):
    # the screen's (Textual's) own
    @property
    def app(self) -> VaultwatchApp: ...
    @property
    def focused(self) -> Widget | None: ...
    def call_after_refresh(self, callback: Callable[[], Any]) -> bool: ...
    def set_interval(self, interval: float, callback: Callable[[], Any], *, name: str | None = None) -> Timer: ...
    def call_next(self, callback: Callable[[], Any]) -> None: ...

    # MainScreen's state
    session: Session
    config: AppConfig
    filter_query: Query
    reading: bool
    tree_width: int | None
    triage: TriageFlow
    searcher: SearchFlow
    lists: ListScheduler
    _filterbar: FilterBar
    _tree: FolderView
    _tabs: TabbedContent
    _status: StatusLine
    _panes: list[TriagePane]
    _search_list: SearchList
    _activity_panel: ActivityPanel
    _user_layout: dict[str, bool]
    _listed_unseen: bool
    _preview_timer: Timer | None
    _counts_timer: Timer | None
    _counts: dict[str, dict[str, int]] | None
    _stats_key: tuple[int, Clock] | None

    @property
    def tabs(self) -> TabbedContent: ...
    @property
    def active_list(self) -> RowList: ...
    @property
    def preview(self) -> Preview: ...

    # MainScreen's methods
    def _live(self) -> bool: ...
    def _apply_layout(self) -> None: ...
    def _status_vault(self) -> None: ...
    def _preview_row(self, row: Any, rowlist: RowList | None = None) -> None: ...
    def refresh_views(self, *, keep: bool = True) -> None: ...
    def show_agents(self) -> None: ...
    def query_for(self, pane: TriagePane, base: Query | None = None) -> Query: ...
    def warm_filter(self) -> None: ...

    # the mixins' methods that other methods of theirs call
    def _counts_worker(
        self, plans: dict[str, dict[str, Query]], snapshot: Snapshot, fresh: bool, counters: dict[str, Any]
    ) -> Worker[None]: ...
    def _show_counts(
        self, counts: dict[str, dict[str, int]], stats: dict[str, Any] | None, snapshot: Snapshot
    ) -> None: ...
    def _relabel(self, counts: dict[str, dict[str, int]]) -> None: ...
    def _filter_field(self) -> Input: ...
    def leave_filter(self) -> None: ...
    def takes_filter_key(self, event: events.Key) -> bool: ...
    def clear_filter(self) -> None: ...
    def end_search(self) -> None: ...
    def action_focus_list(self) -> None: ...
    def set_tree_width(self, width: int, *, keep: bool = True) -> None: ...
    def set_clock(self, clock: Clock) -> None: ...
    def invalidate_doclists(self) -> None: ...
    def _act_when_caught_up(self, message: DocList.Act, deadline: float) -> None: ...
    def caught_up(self) -> bool: ...
    def targets(self, doclist: DocList, *, edit: bool = False) -> list[Entry]: ...
    def seen_entry(self) -> Entry | None: ...
