"""The main screen: the workflow of the TUI (the app holds the lifecycle; see `tui.app`).

Its layout (filter bar, folder tree, triage tabs, preview, activity panel, status line), how
the views follow the index, the filter, the folder scope and the agents' calls (the visible
list's queries run through `tui.flows.querying`), the navigation keys, and the triage dispatch (the
writes themselves run in `tui.flows.triaging`).

Core events arrive as coalesced messages that the app's bus subscriber posts to the app
(from whatever thread published them), whose handlers call the methods here: as before
the split, a flood of agent calls waits in the app's queue, not in this screen's, which also
carries the compositor's updates.

Split by job into mixins whose state lives here: `tabcounts` (the tabs' counts and labels),
`typingguard` (keys routed where the keys before them sent the focus), `navigation` (the moving-around keys)
and `targets` (what a triage or fix-it key acts on). About 520 lines: this is where every
message between the views meets; the work behind each handler lives in its widget, in
`tui.flows.querying` or in `tui.flows.triaging`, and each handler here is the few lines that connect them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, TabbedContent, Tree
from textual.worker import Worker

from vaultwatch.core.errors import VaultError
from vaultwatch.core.events import AgentAccess
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.query import filterexpr
from vaultwatch.core.query.listing import Query
from vaultwatch.core.query.listing import warm as warm_listing
from vaultwatch.core.review import triageviews
from vaultwatch.tui.flows.querying import ListScheduler
from vaultwatch.tui.flows.searching import SearchFlow
from vaultwatch.tui.flows.triaging import TriageFlow
from vaultwatch.tui.messages import (
    LASTING_NOTICE_S,
    AgentCalled,
    AgentPresence,
    IndexChanged,
    IndexLoaded,
    IndexProgressed,
    ListFailed,
    ListReady,
    ProblemReported,
)
from vaultwatch.tui.screens.navigation import Navigation
from vaultwatch.tui.screens.tabcounts import TabCounts
from vaultwatch.tui.screens.targets import TriageTargets
from vaultwatch.tui.screens.typingguard import TypingGuard
from vaultwatch.tui.timers import once
from vaultwatch.tui.widgets.activity import ActivityList, ActivityPanel, ActivityTicker, refused
from vaultwatch.tui.widgets.doclist import DocList
from vaultwatch.tui.widgets.filterbar import FilterBar
from vaultwatch.tui.widgets.folders import FolderView
from vaultwatch.tui.widgets.footer import KeyFooter
from vaultwatch.tui.widgets.preview import Preview
from vaultwatch.tui.widgets.problems import Problem
from vaultwatch.tui.widgets.rowlist import RowList
from vaultwatch.tui.widgets.searchlist import SearchList
from vaultwatch.tui.widgets.statusline import StatusLine
from vaultwatch.tui.widgets.triage import PANES, Requery, TriagePane

if TYPE_CHECKING:
    from vaultwatch.tui.app import VaultwatchApp

VIEW_GROUPS = frozenset({"query", "counts", "preview", "warm", "hints", "search"})
COUNTS_DELAY = 0.15
COUNTS_DELAY_BIG = 0.5
BIG_VAULT = 20_000
PREVIEW_DELAY = 0.06
TYPING_PAUSE = 0.35  # the preview waits this long after a filter keystroke
WARM_FIELDS = ("tag", "type")  # the filter bar's documented field terms whose lists the tab counts do not build


TREE_FROM = 110  # columns from which the folder tree shows unless hidden (t)
TREE_WIDE, TREE_NARROW = 28, 22  # its width from 140 columns, and below (until resized with < and >)


class MainScreen(TabCounts, TypingGuard, TriageTargets, Navigation, Screen[None]):
    """Tree, tabs, preview, activity and status over the app's session."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.quit", "Quit", id="app.quit"),
        Binding("slash", "focus_filter", "Filter", id="app.filter"),
        Binding("ctrl+f", "search", "Full-text search (?words)", show=False, id="app.search"),
        Binding("question_mark", "app.help", "Help", id="app.help"),
        Binding("f", "toggle_follow", "Follow", id="app.follow"),
        Binding("a", "toggle_activity", "Activity", id="app.activity"),
        Binding("t", "toggle_tree", "Folder tree", show=False, id="app.tree"),
        Binding("less_than_sign", "tree_width(-2)", "Narrow the folder tree", show=False, id="app.tree_narrower"),
        Binding("greater_than_sign", "tree_width(2)", "Widen the folder tree", show=False, id="app.tree_wider"),
        Binding("d", "as_of", "Set as-of date", show=False, id="app.as_of"),
        Binding("p", "focus_preview", "Preview", show=False, id="app.preview"),
        # shown in the footer while reading (narrow screens), where the preview's Back is dead
        Binding("escape", "back_to_list", "Back to list", id="app.back"),
        Binding("escape", "focus_list", "", show=False, id="app.list"),  # the same words in the help
        Binding("u", "undo", "Undo the last action", show=False, id="app.undo"),
        Binding("ctrl+r", "reload", "Reload changed notes", show=False, id="app.reload"),
        Binding("1", "tab('notes')", "Notes", show=False, id="app.tab_notes"),
        Binding("2", "tab('deprecated')", "Deprecated", show=False, id="app.tab_deprecated"),
        Binding("3", "tab('stale')", "Stale", show=False, id="app.tab_stale"),
        Binding("4", "tab('trust')", "Trust", show=False, id="app.tab_trust"),
        Binding("5", "tab('broken')", "Broken", show=False, id="app.tab_broken"),
        Binding("y", "copy_path", "Copy the note's path", show=False, id="app.copy_path"),  # tui/flows/fixit.py
        Binding("Y", "copy_link", "Copy its [[wikilink]]", show=False, id="app.copy_link"),
        Binding("o", "open_obsidian", "Open in Obsidian", show=False, id="app.obsidian"),
        Binding(
            "C", "changes", "Changes", show=False, id="app.changes"
        ),  # tui/flows/review.py: diffs, revert, approval
        Binding("g", "approval_mode", "Approval mode", show=False, id="app.approval"),
        Binding("P", "pending", "Pending changes (kept for your approval)", show=False, id="app.pending"),
    ]

    # keys typed before the first frame reach the list, as they would a moment later (the
    # default, the first focusable widget, was the filter bar: they became filter text)
    AUTO_FOCUS = "#list-notes"

    app: VaultwatchApp

    def __init__(self, app: VaultwatchApp) -> None:
        super().__init__()
        self.session = app.session
        self.config = app.config
        self.scope: str | None = None
        self.filter_query = Query()
        self.reading = False  # narrow screens: the preview replaces the list
        self.loaded = False  # the screen has seen a complete index
        self.triage = TriageFlow(self, app)
        self.searcher = SearchFlow(self)
        self.lists = ListScheduler(
            self,
            self.session,
            show=lambda *a: self.show_rows(*a),
            failed=self._list_error,
            quitting=lambda: app.quitting,
        )
        self._counts_timer: Timer | None = None
        self._preview_timer: Timer | None = None
        self._select_when_shown: str | None = None  # open_note's path: the list cursor moves to it once shown
        # the visible list was listed anew and its cursor row is not previewed yet: a triage key
        # acts on that row, as it would once the preview caught up (tui.screens.targets)
        self._listed_unseen = False
        self._stats_key: tuple | None = None
        self._typing_until = 0.0  # monotonic time until which the filter counts as being typed
        self._warmed = -1  # the index generation whose folded text the filter warm-up built
        self._user_layout: dict[str, bool] = {}
        found = getattr(app, "settings", None)
        self.tree_width: int | None = found.tree_width if found is not None else None  # the person's, kept
        self._counts: dict[str, dict[str, int]] | None = None  # the tabs' last counts (relabelled on resize)

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # the screen keeps its own references: a query from a handler that runs while the
        # screen is being torn down (quitting during a burst of tab keys) finds nothing
        self._filterbar = FilterBar(id="filterbar", snapshot=lambda: self.session.snapshot)
        self._tree = FolderView(self.session, id="tree")
        self._tabs = TabbedContent(id="tabs")
        self._preview = Preview(self.session, id="preview")
        self._activity_panel = ActivityPanel(self.session, id="activity")
        self._ticker = ActivityTicker(self.session, id="ticker")
        self._status = StatusLine(id="status")
        self._panes = [cls(self.session, pane_id, lazy=i > 0) for i, (pane_id, cls) in enumerate(PANES)]
        self._search_list = SearchList(id="search-list")  # the filter bar's full-text mode (tui.flows.searching)
        self._search_list.display = False
        self._search_list.on_near_end = self.searcher.load_more  # the next page of hits
        yield self._filterbar
        with Horizontal(id="main"):
            yield self._tree
            with self._tabs:
                yield from self._panes
            yield self._search_list
            yield self._preview
        yield self._activity_panel
        yield self._ticker
        yield self._status
        yield KeyFooter()

    def on_mount(self) -> None:
        if not self.config.animate:
            for widget in self.query(Input):
                widget.cursor_blink = False
        self._apply_layout()
        self._activity_panel.show_title()
        self._ticker.show(None, 0)
        self._status_vault()
        if self.session.vault.wait_ready(0):
            self.loaded = True
            self.refresh_views(keep=False)
        else:
            self._status.show_indexing(0, 0)
            for pane in self._panes:
                pane.show((), empty="Indexing…")
        services = self.app.services
        if services.serving:
            self._status.show_mcp_starting()
        elif services.host_error:
            self._status.show_mcp_off(services.host_error)
        self.active_list.focus()

    async def build_hidden(self) -> None:
        """What the first frame did without: the preview's parts and the hidden tabs' lists."""
        if self._live():
            await self._preview.build_parts()
        for pane in self._panes:
            if not self._live():
                return
            await pane.materialize()

    def on_resize(self) -> None:
        self._apply_layout()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if not self.config.animate and isinstance(event.widget, Input):
            event.widget.cursor_blink = False
        if event.widget.id == "filter-input" and self.loaded:
            self.warm_filter()

    def warm_filter(self) -> None:
        """The first free word typed makes core fold every title and path of the index
        generation (~0.1 s at 100k notes; kept, and patched on changes), and the first `tag:`
        or `type:` term builds that field's inverted list (~0.17 s): build them in the
        background once the first counts are shown, and again for a new generation when the
        filter bar gets the focus, so that no keystroke waits for them (~10 MB at 100k notes)."""
        snapshot = self.session.snapshot
        if snapshot.generation != self._warmed:
            self._warmed = snapshot.generation
            self._warm_worker(snapshot)

    @work(thread=True, group="warm", exit_on_error=False, description="filter warm-up")
    def _warm_worker(self, snapshot: Snapshot) -> None:
        warm_listing(snapshot, WARM_FIELDS)
        filterexpr.warm(snapshot)  # the filter bar's hints and completions

    def _apply_layout(self) -> None:
        """Wide screens show tree, list and preview side by side (the tree from TREE_FROM
        columns, narrower below 140, or as wide as the person made it with < and >); narrow
        ones show the list, and the preview in its place while reading (enter opens it, escape
        returns)."""
        width, height = self.app.size
        narrow = width < 100
        self._tree.display = self._user_layout.get("tree", width >= TREE_FROM)
        self._tree.styles.width = self.tree_width or (TREE_WIDE if width >= 140 else TREE_NARROW)
        self._activity_panel.display = self._user_layout.get("activity", height >= 30)
        self._ticker.display = not self._activity_panel.display  # 80x24: the newest call, one line
        self._preview.display = not narrow or self.reading
        searching = self.searcher.active
        self._tabs.display = not (narrow and self.reading) and not searching
        self._search_list.display = not (narrow and self.reading) and searching
        self.set_class(narrow, "-narrow")
        self.refresh_bindings()
        if self._counts is not None:  # once the new widths are laid out
            self.call_after_refresh(lambda: self._relabel(self._counts) if self._counts and self._live() else None)

    @property
    def status(self) -> StatusLine:
        return self._status

    @property
    def tabs(self) -> TabbedContent:
        return self._tabs

    @property
    def panes(self) -> list[TriagePane]:
        return self._panes

    @property
    def active_pane(self) -> TriagePane:
        active = self._tabs.active
        return next((p for p in self._panes if p.id == active), self._panes[0])

    @property
    def active_list(self) -> RowList:
        """The list the person works in: the full-text hits in search mode, else the tab's."""
        if self.searcher.active:
            return self._search_list
        return self.active_pane.rowlist

    @property
    def search_list(self) -> SearchList:
        return self._search_list

    @property
    def activity(self) -> ActivityPanel:
        return self._activity_panel

    @property
    def preview(self) -> Preview:
        return self._preview

    @property
    def folder_view(self) -> FolderView:  # not `tree`: DOMNode.tree is Textual's debug view of the DOM
        return self._tree

    def _live(self) -> bool:
        """False while quitting or tearing the screen down: late messages are dropped."""
        return not self.app.quitting and self.app.is_running and self._tabs.is_attached

    def idle(self) -> bool:
        """No view work is pending (see `busy`)."""
        return self.busy() is None

    def busy(self) -> str | None:
        """What view work is pending, or None: the index not loaded, a hidden part not built, a
        view worker running, a timer set (tui.settle names it when the views never settle)."""
        if not self.loaded:
            return "the index is not loaded"
        if not self.app.services.started:
            return "the services have not started"
        if not self._preview.built:
            return "the preview is not built"
        unready = [p.id for p in self._panes if not p.ready]
        if unready:
            return f"panes not ready: {', '.join(str(u) for u in unready)}"
        for name, pending in (
            ("the counts timer is set", self._counts_timer is not None),
            ("the preview timer is set", self._preview_timer is not None),
            ("a list query is pending", self.lists.pending),
            (f"a search is pending ({self.searcher.state()})", self.searcher.pending),
        ):
            if pending:
                return name
        running = [w.description or w.name for w in self.app.workers if w.group in VIEW_GROUPS and not w.is_finished]
        return f"view workers running: {', '.join(running)}" if running else None

    def answered(self) -> bool:
        """Nothing the person asked for is still on its way (a list query, a write)."""
        return not self.lists.pending and not self.triage.pending and not self.searcher.pending

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.services.worker_failed(event)

    # -- core events (the app's handlers of its bus subscriber's messages call these) ----------
    def index_changed(self, message: IndexChanged) -> None:
        self.refresh_views()

    def index_progressed(self, message: IndexProgressed) -> None:
        if not self.session.vault.wait_ready(0):
            self._status.show_indexing(message.done, message.total)
            for pane in self._panes:
                pane.set_empty(f"Indexing… {message.done:,} of {message.total:,} files")

    def index_loaded(self, message: IndexLoaded) -> None:
        self.loaded = True
        self._status.set_part("index", None)
        self.refresh_views(keep=False)

    def problem_reported(self, message: ProblemReported) -> None:
        self.app.notify(
            message.text,
            severity="error" if message.severity == "error" else "warning",
            title="vault",
            timeout=LASTING_NOTICE_S if message.lasting else None,  # stays until the person dismisses it
        )
        if message.severity == "error" and not self.loaded and self.session.vault.wait_ready(0):
            self.loaded = True  # the load gave up: say so where the notes would be
            self._status.set_part("index", Text("indexing failed", style="bold red"))
            for pane in self._panes:
                pane.show((), empty=message.text)

    def agent_called(self, message: AgentCalled) -> None:
        """Every call waiting in the app's backlog gets its row; marks, tree, titles and the
        status line are redrawn once for all of them (20 agents make ~200 calls a second)."""
        events: list[AgentAccess] = []
        backlog = self.app.agent_backlog
        while backlog:
            events.append(backlog.popleft())
        if not events or not self._live():
            return
        followed = self._activity_panel.record(events)
        marked: set[str] = set()
        for event in events:
            marked.update(self.session.marks.record(event))
        if marked:
            paths = tuple(marked)
            for pane in self._panes:
                if isinstance(pane.rowlist, DocList) and pane.ready:
                    pane.rowlist.marks_changed(paths)
            self._tree.refresh_marks(marked)
            if self.preview.path in marked:
                self.preview.refresh_marks()
        if followed is not None:
            self.preview.show(followed)
            self.active_list.select_key(followed) if isinstance(self.active_list, DocList) else None
        if self._activity_panel.following:  # the followed agent's newest change, as a diff (tui/flows/review.py)
            from vaultwatch.tui.flows import review  # noqa: PLC0415

            review.follow_changes(self.app, events, self._activity_panel.follow_agent)
        self._activity_panel.show_title()
        self._ticker.show(events[-1], len(self._activity_panel.calls.calls))
        self.show_agents()

    def rules_changed(self) -> None:
        """The person's rules changed (the settings file edited): the activity panel's title names
        each agent's rule."""
        self._activity_panel.show_title()

    def agent_presence(self, message: AgentPresence) -> None:
        event = message.event
        self._activity_panel.presence(event.session, event.agent, event.connected)
        self.show_agents()

    # -- querying ---------------------------------------------------------------------------
    def query_for(self, pane: TriagePane, base: Query | None = None) -> Query:
        """The pane's query narrowed by the folder scope and the filter bar (raises QueryError)."""
        q = filterexpr.merge(base or pane.base_query(), self.filter_query)
        q = triageviews.narrow(q, self.session.snapshot, self.session.triage_rules, self.session.reviews)
        q = replace(q, folder=self.scope)
        rowlist = pane.rowlist
        if isinstance(rowlist, DocList):
            q = replace(q, sort=rowlist.sort, descending=rowlist.descending)
        return q

    def refresh_views(self, *, keep: bool = True) -> None:
        """Re-query the visible list now and everything else shortly after (coalesced)."""
        if not self._live():
            return
        if self.session.refresh_reviews():  # the Trust tab's notes, every list's Trust column, the preview's
            for pane in self._panes:
                if isinstance(pane.rowlist, DocList):
                    pane.rowlist.invalidate()
            self.preview.refresh_marks()
        self.run_active(keep=keep)
        self.preview.refresh_if_changed()
        if self._counts_timer is not None:
            self._counts_timer.stop()
        for worker in self.app.workers:  # stale counts: stop competing with the list's query
            if worker.group == "counts" and not worker.is_finished:
                worker.cancel()
        # counting runs every tab's query: on a big vault wait for a pause in the typing, or the
        # counts compete with the visible list's query for the interpreter
        delay = COUNTS_DELAY if self.session.snapshot.note_count < BIG_VAULT else COUNTS_DELAY_BIG
        self._counts_timer = once(self, delay, self.run_counts)

    def run_active(self, *, keep: bool = True, pane: TriagePane | None = None) -> None:
        """Re-run the visible pane's query off the UI thread (coalesced: tui.flows.querying)."""
        if not self._live():
            return
        if self.searcher.active and pane is None:
            self.searcher.run()  # the hits follow the index (and the folder scope) too
        pane = pane or self.active_pane
        try:
            q = self.query_for(pane)
        except VaultError as exc:
            self._filterbar.show_error(exc.message)
            return
        self.lists.request(pane, q, keep=keep)

    def _list_error(self, message: str) -> None:
        self._filterbar.show_error(message)

    def on_list_ready(self, message: ListReady) -> None:
        request = message.request
        if not self.lists.current(request.seq) or not self._live():
            return  # a newer request is on its way
        self.lists.shown()
        self.show_rows(request.pane, message.rows, message.total, request.keep)

    def on_list_failed(self, message: ListFailed) -> None:
        if self.lists.current(message.seq) and self._live():
            self._filterbar.show_error(message.error)

    def show_rows(self, pane: TriagePane, rows: Sequence[Any], total: int, keep: bool) -> None:
        empty = None
        if not self.session.snapshot.loaded:
            empty = "Indexing…"
        elif total == 0 and self.session.snapshot.note_count == 0:
            empty = "This vault has no notes yet"
        pane.show(rows, empty=empty, keep=keep)
        if not keep and pane is self.active_pane:
            self._listed_unseen = True
        self.call_after_refresh(self.app.answered)

    # -- user actions -----------------------------------------------------------------------------
    def on_filter_bar_searched(self, message: FilterBar.Searched) -> None:
        self._typing_until = time.monotonic() + TYPING_PAUSE
        self.app.person_acts()
        entering = not self.searcher.active
        self.searcher.request(message.words, message.scope)
        if entering:
            self._apply_layout()

    def on_filter_bar_applied(self, message: FilterBar.Applied) -> None:
        if self.searcher.active:  # the `?` was deleted: back to the tab's list
            self.searcher.stop()
            self._apply_layout()
            self.refresh_views(keep=False)
        if message.query == self.filter_query:
            return  # "vault" -> "vault " lists the same notes
        self._typing_until = time.monotonic() + TYPING_PAUSE
        self.app.person_acts()  # also an edit that came without a key (a paste, the palette)
        self.filter_query = message.query
        self.refresh_views(keep=False)

    def on_tree_node_selected(self, message: Tree.NodeSelected) -> None:
        folder = message.node.data
        self.scope = folder or None
        for pane in self._panes:
            if isinstance(pane.rowlist, DocList):
                pane.rowlist.set_scope(self.scope)
        self._status_vault()
        self.refresh_views(keep=False)

    def on_preview_opened(self, message: Preview.Opened) -> None:
        wanted, self._select_when_shown = self._select_when_shown, None
        if wanted is not None and self._live():
            self.active_list.select_key(wanted)
        if message.path is not None and self._tree.display and self._live():
            self._tree.reveal(message.path)

    async def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        pane = message.pane
        if not isinstance(pane, TriagePane) or not self._live():
            return  # e.g. the tabs being removed while the app quits
        await pane.materialize()  # opened before the hidden tabs were built
        if not self._live() or pane is not self.active_pane:
            return
        self.run_active(pane=pane)
        self.call_after_refresh(self._focus_if_active, pane)

    def _focus_if_active(self, pane: TriagePane) -> None:
        """Focus a tab's list once it is drawn, if that tab is still the active one: a tab key
        pressed meanwhile (at launch, before the Notes tab's first focus) must not be undone."""
        if self._live() and pane is self.active_pane:
            pane.rowlist.focus()

    @on(Requery)
    def _requery(self) -> None:
        self.run_active()

    @on(DocList.SortChanged)
    def _resort(self, message: DocList.SortChanged) -> None:
        message.doclist.reorder_next()
        self.run_active()

    def on_row_list_highlighted(self, message: RowList.Highlighted) -> None:
        row = message.row
        if isinstance(message.rowlist, ActivityList):
            self._activity_panel.selected(row)
            return
        if message.rowlist is not self.active_list:
            return
        # key repeat moves the cursor many rows a second: preview where it comes to rest; while
        # the filter is being typed, wait for a pause in the typing (opening a note re-lays the
        # screen out, which the next keystroke would wait for)
        if self._preview_timer is not None:
            self._preview_timer.stop()
        delay = max(PREVIEW_DELAY, self._typing_until - time.monotonic())
        rowlist = message.rowlist
        self._preview_timer = once(self, delay, lambda: self._preview_row(row, rowlist))

    def _preview_row(self, row: Any, rowlist: RowList | None = None) -> None:
        self._preview_timer = None
        self._listed_unseen = False
        if isinstance(row, Problem):
            self.preview.show_problem(row)
        elif row is not None:
            self.preview.show(row.path)
        elif rowlist is not None and not rowlist.rows and rowlist is self.active_list:
            # nothing matches: the last note shown would read as one of the (no) results
            self.preview.show(None)

    def on_row_list_chosen(self, message: RowList.Chosen) -> None:
        row = message.row
        if isinstance(message.rowlist, ActivityList):
            from vaultwatch.tui.flows import review  # noqa: PLC0415

            if row is not None and review.open_call(self.app, row):  # an agent's write: its diff
                return
            if row is not None and refused(row.error):  # the whole refusal, with its rule, selected
                self.app.action_refusals(row)
                return
            if row is not None and row.paths:
                self.preview.show(row.paths[0], push=True)
            return
        self.action_focus_preview()

    def open_note(self, path: str) -> None:
        """Preview a note (palette, links, tests) and put the list cursor on it when it is
        listed, once the preview shows it: finding the row scans the list (15 ms at 100k rows,
        holding the interpreter), which held up the preview's worker on its way to the first
        screen."""
        self.preview.show(path, push=self.preview.path is not None)
        self._listed_unseen = False  # what the person asked to see is what triage acts on
        if self.preview.path == path:  # shown already: no Opened comes
            self._select_when_shown = None
            self.active_list.select_key(path)
        else:
            self._select_when_shown = path

    # -- status and activity title ------------------------------------------------------------------
    def _status_vault(self) -> None:
        self._status.show_vault(self.session.vault.root, self.scope, self.session.clock.today().isoformat())

    def show_agents(self) -> None:
        host = self.app.services.host
        if host is None:
            if not self.app.services.host_error:
                self._status.show_mcp_off()
            return
        self._status.show_agents(host, self._activity_panel.agents.values(), self.session.colors)
