"""The vaultwatch TUI: folder tree, filterable list, preview, triage tabs and agent activity.

`make_app(vault, config=...)` builds the domain side (the session, and how to build the MCP
host and the watcher) and hands it to `VaultwatchApp`. The app never touches the disk on the
UI thread: the index loads in the background, queries and previews run in thread workers,
and core events reach the app as coalesced Textual messages posted from whatever thread
published them.

Start-up paints first: only what the first frame needs is imported and composed before it.
The index load, the MCP server (whose SDK takes ~0.5 s to import), the watcher and the
hidden tabs' lists start after the first frame is on the screen.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult, ScreenStackError, SuspendNotSupported, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, TabbedContent, Tree
from textual.worker import Worker, WorkerState, get_current_worker

from core import filterexpr, linkmap
from core.errors import VaultError
from core.events import AgentAccess, AgentConnected, DocumentsChanged, Event, IndexProblem, IndexProgress, IndexReady
from core.folders import folder_tree
from core.memory import freeze_long_lived, release_free_memory
from core.index import Snapshot
from core.query import Query, warm as warm_listing
from core.vault import Vault

from . import spans
from .config import AppConfig
from .gcpolicy import TICK_SECONDS as GC_TICK_SECONDS, IdleCollector
from .marks import access_kind
from .messages import (AgentCalled, AgentPresence, IndexChanged, IndexLoaded, IndexProgressed, ListFailed, ListReady,
                       ProblemReported)
from .screens.palette import NoteCommands
from .session import Session
from .widgets.activity import ActivityList
from .widgets.doclist import DocList
from .widgets.filterbar import FilterBar
from .widgets.folders import FolderView
from .widgets.preview import Preview
from .widgets.problems import Problem
from .widgets.rowlist import RowList
from .widgets.statusline import StatusLine
from .widgets.triage import PANES, Requery, TriagePane, rows_for

if TYPE_CHECKING:
    from .actions import Actions, Outcome

VIEW_GROUPS = frozenset({"query", "counts", "preview", "warm"})
COUNTS_DELAY = 0.15
COUNTS_DELAY_BIG = 0.5
BIG_VAULT = 20_000
INLINE_QUERY_NOTES = 20_000  # up to this many notes a list query takes a few ms: run it inline
PREVIEW_DELAY = 0.06
TYPING_PAUSE = 0.35  # the preview waits this long after a filter keystroke
HOLD_SECONDS = 0.2  # a person's key or edit holds agents' calls back this long, unless answered sooner
WRITE_HOLD_SECONDS = 1.0  # ... and a triage write, until it is written
ASKING_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)
WARM_FIELDS = ("tag", "type")  # the filter bar's documented field terms whose lists the tab counts do not build
log = logging.getLogger("vaultwatch.tui")


@dataclass(frozen=True, slots=True)
class ListRequest:
    """One run of a pane's query: the newest request wins, older ones are dropped unshown."""

    seq: int
    pane: TriagePane
    query: Query
    snapshot: Snapshot
    keep: bool


class VaultwatchApp(App[None]):
    """The TUI over one vault session (and, when given, the MCP host it serves agents with)."""

    CSS_PATH = "app.tcss"
    TITLE = "vaultwatch"
    COMMANDS = App.COMMANDS | {NoteCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="app.quit_now"),
        Binding("slash", "focus_filter", "Filter", id="app.filter"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("f", "toggle_follow", "Follow", id="app.follow"),
        Binding("a", "toggle_activity", "Activity", id="app.activity"),
        Binding("t", "toggle_tree", "Folder tree", show=False, id="app.tree"),
        Binding("d", "as_of", "Set as-of date", show=False, id="app.as_of"),
        Binding("p", "focus_preview", "Preview", show=False, id="app.preview"),
        Binding("escape", "focus_list", "Back to the list", show=False, id="app.list"),
        Binding("u", "undo", "Undo the last action", show=False, id="app.undo"),
        Binding("ctrl+r", "reload", "Reload changed notes", show=False, id="app.reload"),
        Binding("1", "tab('notes')", "Notes", show=False, id="app.tab_notes"),
        Binding("2", "tab('deprecated')", "Deprecated", show=False, id="app.tab_deprecated"),
        Binding("3", "tab('stale')", "Stale", show=False, id="app.tab_stale"),
        Binding("4", "tab('trust')", "Trust", show=False, id="app.tab_trust"),
        Binding("5", "tab('broken')", "Broken", show=False, id="app.tab_broken"),
        Binding("C", "changes", "Changes", show=False, id="app.changes"),  # tui/review.py: diffs, revert, approval
        Binding("g", "approval_mode", "Approval mode", show=False, id="app.approval"),
    ]

    def __init__(self, session: Session, *, host: Any = None, host_error: str | None = None,
                 watcher: Any = None, host_factory: Callable[[], Any] | None = None) -> None:
        super().__init__()
        self.session = session
        self.config: AppConfig = session.config
        self.host = host
        self.host_error = host_error
        self.watcher = watcher
        self._host_factory = host_factory  # builds the host after the first frame (see run_mcp)
        self.scope: str | None = None
        self.filter_query = Query()
        self.follow_agent: str | None = None
        self.following = False
        self.agents: dict[str, str] = {}  # session id -> agent name
        self._agent_backlog: deque[AgentAccess] = deque()  # calls not drawn yet (see on_agent_called)
        self._unsubscribe = None
        self._counts_timer = None
        self._preview_timer = None
        self._stats_key: tuple | None = None
        self._mcp_worker: Worker | None = None
        self._quitting = False
        self._started = False  # the services that wait for the first frame have been started
        self._frozen = False  # long-lived objects moved out of the collector's way (gc.freeze)
        self.collector = IdleCollector()
        self._writes_pending = 0  # triage writes started and not finished (see _answered)
        self._typing_until = 0.0  # monotonic time until which the filter counts as being typed
        self._warmed = -1  # the index generation whose folded text the filter warm-up built
        # the visible list's query: one thread at a time, the newest request wins (see run_active)
        self._list_lock = threading.Lock()
        self._list_next: ListRequest | None = None
        self._list_busy = False
        self._list_seq = 0
        self._list_reset = False  # a request to show the list from its top is not shown yet
        self._user_layout: dict[str, bool] = {}
        self.reading = False  # narrow screens: the preview replaces the list
        self.loaded = False  # the app has seen a complete index
        self._actions: Actions | None = None
        self._conflicted: list[str] = []  # notes whose last action met an outside change
        if not self.config.animate:
            self.animation_level = "none"
        self._theme_error: str | None = None
        if self.config.theme:
            try:
                self.theme = self.config.theme
            except Exception:  # an unknown name: say so once the screen is up, keep the default
                self._theme_error = (f"unknown theme {self.config.theme!r}: pick one with ctrl+p › Theme "
                                     f"(e.g. {', '.join(sorted(self.available_themes)[:4])})")

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # the app keeps its own references: a query from a handler that runs while the screen
        # is being torn down (quitting during a burst of tab keys) finds nothing
        self._filterbar = FilterBar(id="filterbar")
        self._tree = FolderView(self.session, id="tree")
        self._tabs = TabbedContent(id="tabs")
        self._preview = Preview(self.session, id="preview")
        self._activity_panel = Vertical(id="activity")
        self._activity_title = Static(id="activity-title")
        self._activity = ActivityList(self.session, id="activity-list")
        self._status = StatusLine(id="status")
        self._panes = [cls(self.session, pane_id, lazy=i > 0) for i, (pane_id, cls) in enumerate(PANES)]
        yield self._filterbar
        with Horizontal(id="main"):
            yield self._tree
            with self._tabs:
                yield from self._panes
            yield self._preview
        with self._activity_panel:
            yield self._activity_title
            yield self._activity
        yield self._status
        yield Footer()

    @property
    def actions(self) -> Actions:
        """The triage actions (imported on first use: start-up does not need the write path)."""
        if self._actions is None:
            from .actions import Actions  # noqa: PLC0415

            self._actions = Actions(self.session.vault, user=self.config.user)
        return self._actions

    def on_mount(self) -> None:
        if not self.config.animate:
            for widget in self.query(Input):
                widget.cursor_blink = False
        self._unsubscribe = self.session.vault.bus.subscribe(self._relay)
        self._apply_layout()
        self._update_activity_title()
        self._status_vault()
        if self.session.vault.wait_ready(0):
            self.loaded = True
            self.refresh_views(keep=False)
        else:
            self._status_indexing(0, 0)
            for pane in self._panes:
                pane.show((), empty="Indexing…")
        if self.host is not None or self._host_factory is not None:
            self.status.set_part("mcp", Text("MCP starting…", style="dim"))
        elif self.host_error:
            self.status.set_part("mcp", Text(f"MCP off: {self.host_error}", style="red"))
        if self.config.tick:
            self.set_interval(self.config.tick, self._tick)
        if self._theme_error:
            self.notify(self._theme_error, severity="warning", title="theme")
        self.active_list.focus()
        # paint first: the loader's stat/parse loop, the MCP SDK import and the hidden tabs
        # would all delay the first frame
        self.call_after_refresh(self._start_services)

    async def _start_services(self) -> None:
        """What waits for the first frame: the index load, the MCP server, the watcher, the
        hidden tabs' lists."""
        if self._started or self._quitting:
            return
        self._started = True
        from . import review  # noqa: PLC0415  (diffs, revert, approval dialogs: not needed for the first frame)
        await self.mount(review.ReviewHost(self.session.vault))  # attends the approval gate before agents come
        if not self.session.vault.wait_ready(0):
            _prestart_scan_helpers()
            self.session.vault.start()
        if self.host is not None or self._host_factory is not None:
            self._mcp_worker = self.run_mcp()
        if self.watcher is not None:
            self.run_watcher()
        if self._live():
            await self._preview.build_parts()
        for pane in self._panes:
            if not self._live():
                return
            await pane.materialize()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self.collector.input_seen()
            if isinstance(event, ASKING_EVENTS):  # not a mouse merely passing over the screen
                self._person_acts()
        try:
            await super().on_event(event)
        except ScreenStackError:
            # the screens were removed under a key's handler while the app shuts down (quit
            # from outside the queue: a signal, a closed terminal): the key goes with them
            if self.is_running:
                raise

    def _person_acts(self, seconds: float | None = None) -> None:
        """A person's input is being answered: agents' calls wait a moment (core.foreground)."""
        self.session.vault.foreground.hold(HOLD_SECONDS if seconds is None else seconds)

    def _answered(self) -> None:
        """The screen shows the answer to the person's last input (unless more is on its way):
        agents' calls may go on at once."""
        if self._list_next is None and not self._list_busy and not self._writes_pending:
            self.session.vault.foreground.release()

    def on_resize(self) -> None:
        self._apply_layout()

    def on_descendant_focus(self, event) -> None:
        if not self.config.animate and isinstance(event.widget, Input):
            event.widget.cursor_blink = False  # also the palette's and dialogs' inputs
        if event.widget.id == "filter-input" and self.loaded:
            self._warm_filter()

    def _warm_filter(self) -> None:
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

    def _apply_layout(self) -> None:
        """Wide screens show tree, list and preview side by side (the tree from 140 columns);
        narrow ones show the list, and the preview in its place while reading (enter opens it,
        escape returns)."""
        width, height = self.size
        narrow = width < 100
        self._tree.display = self._user_layout.get("tree", width >= 140)
        self._activity_panel.display = self._user_layout.get("activity", height >= 30)
        self._preview.display = not narrow or self.reading
        self._tabs.display = not (narrow and self.reading)
        self.screen.set_class(narrow, "-narrow")

    @property
    def status(self) -> StatusLine:
        return self._status

    @property
    def tabs(self) -> TabbedContent:
        return self._tabs

    @property
    def active_pane(self) -> TriagePane:
        active = self._tabs.active
        return next((p for p in self._panes if p.id == active), self._panes[0])

    @property
    def active_list(self) -> RowList:
        return self.active_pane.rowlist

    @property
    def preview(self) -> Preview:
        return self._preview

    def _live(self) -> bool:
        """False while quitting or tearing the screen down: late messages are dropped."""
        return not self._quitting and self.is_running and self._tabs.is_attached

    # -- core events, from any thread ----------------------------------------------------------
    def _relay(self, event: Event) -> None:
        """Bus subscriber: runs in the publisher's thread, so it only posts messages."""
        if isinstance(event, DocumentsChanged):
            self.post_message(IndexChanged(event.generation))
        elif isinstance(event, AgentAccess):
            self._agent_backlog.append(event)  # deque.append: safe from any thread
            self.post_message(AgentCalled(event))
        elif isinstance(event, AgentConnected):
            self.post_message(AgentPresence(event))
        elif isinstance(event, IndexProgress):
            self.post_message(IndexProgressed(event.phase, event.done, event.total))
        elif isinstance(event, IndexReady):
            self.post_message(IndexLoaded(event.notes, event.seconds))
        elif isinstance(event, IndexProblem):
            self.post_message(ProblemReported(event.message, event.severity))

    def on_index_changed(self, message: IndexChanged) -> None:
        self.refresh_views()

    def on_index_progressed(self, message: IndexProgressed) -> None:
        if not self.session.vault.wait_ready(0):
            self._status_indexing(message.done, message.total)
            for pane in self._panes:
                pane.set_empty(f"Indexing… {message.done:,} of {message.total:,} files")

    def on_index_loaded(self, message: IndexLoaded) -> None:
        self.loaded = True
        self.status.set_part("index", None)
        self.refresh_views(keep=False)

    def on_problem_reported(self, message: ProblemReported) -> None:
        self.notify(message.text, severity="error" if message.severity == "error" else "warning",
                    title="vault")
        if message.severity == "error" and not self.loaded and self.session.vault.wait_ready(0):
            self.loaded = True  # the load gave up: say so where the notes would be
            self.status.set_part("index", Text("indexing failed", style="bold red"))
            for pane in self._panes:
                pane.show((), empty=message.text)

    def on_agent_called(self, message: AgentCalled) -> None:
        """Every call waiting in the backlog gets its row; marks, tree, titles and the status
        line are redrawn once for all of them (20 agents make ~200 calls a second)."""
        events: list[AgentAccess] = []
        backlog = self._agent_backlog
        while backlog:
            events.append(backlog.popleft())
        if not events or not self._live():
            return
        self._activity.extend(events)
        marked: set[str] = set()
        followed: str | None = None
        for event in events:
            self.session.colors(event.agent)  # agents get their colours in the order they call
            marked.update(self.session.marks.record(event))
            if event.agent not in self.agents.values():
                self.agents.setdefault(event.session or event.agent, event.agent)
            if self.following and event.paths and access_kind(event) == "read" and \
                    (self.follow_agent in (None, event.agent)):
                followed = event.paths[0]
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
        self._update_activity_title()
        self._status_agents()

    def on_agent_presence(self, message: AgentPresence) -> None:
        event = message.event
        if event.connected:
            self.agents[event.session] = event.agent
        else:
            self.agents.pop(event.session, None)
        self._status_agents()
        self._update_activity_title()

    # -- querying ---------------------------------------------------------------------------
    def query_for(self, pane: TriagePane, base: Query | None = None) -> Query:
        """The pane's query narrowed by the folder scope and the filter bar (raises QueryError)."""
        q = filterexpr.merge(base or pane.base_query(), self.filter_query)
        q = replace(q, folder=self.scope)
        rowlist = pane.rowlist
        if isinstance(rowlist, DocList):
            q = replace(q, sort=rowlist.sort, descending=rowlist.descending)
        return q

    def refresh_views(self, *, keep: bool = True) -> None:
        """Re-query the visible list now and everything else shortly after (coalesced)."""
        if not self._live():
            return
        self.run_active(keep=keep)
        self.preview.refresh_if_changed()
        if self._counts_timer is not None:
            self._counts_timer.stop()
        for worker in self.workers:  # stale counts: stop competing with the list's query
            if worker.group == "counts" and not worker.is_finished:
                worker.cancel()
        # counting runs every tab's query: on a big vault wait for a pause in the typing, or the
        # counts compete with the visible list's query for the interpreter
        delay = COUNTS_DELAY if self.session.snapshot.note_count < BIG_VAULT else COUNTS_DELAY_BIG
        self._counts_timer = self.set_timer(delay, self.run_counts)

    def run_active(self, *, keep: bool = True, pane: TriagePane | None = None) -> None:
        """Re-run the visible pane's query off the UI thread.

        Requests coalesce: one query thread runs at a time and, when it finishes, takes only
        the newest request made meanwhile. Typing fast never queues a query per key, and two
        100k-note queries never compete for the interpreter."""
        if not self._live():
            return
        pane = pane or self.active_pane
        try:
            q = self.query_for(pane)
        except VaultError as exc:
            self._filterbar.show_error(exc.message)
            return
        # a newer request that supersedes one made to reset the list (a new filter) resets it too
        keep = keep and not self._list_reset
        self._list_reset = not keep
        self._list_seq += 1
        request = ListRequest(self._list_seq, pane, q, self.session.snapshot, keep)
        if request.snapshot.note_count <= INLINE_QUERY_NOTES and not self._list_busy:
            self._list_inline(request)
            return
        with self._list_lock:
            self._list_next = request
            if self._list_busy:
                return
            self._list_busy = True
        self._list_worker()

    @work(thread=True, group="query", exit_on_error=False, description="list query")
    def _list_worker(self) -> None:
        try:
            while True:
                with self._list_lock:
                    request, self._list_next = self._list_next, None
                    if request is None or self._quitting:
                        self._list_busy = False
                        return
                try:
                    result = self.session.query(request.query, request.snapshot)
                except VaultError as exc:
                    self.post_message(ListFailed(request.seq, exc.message))
                    continue
                if self._list_next is not None:  # superseded while it ran: build no rows for it
                    continue
                rows = rows_for(request.pane, result.entries, request.snapshot.skipped)
                self.post_message(ListReady(request, rows, result.total))
        except BaseException:
            with self._list_lock:
                self._list_busy = False
            raise

    def _list_inline(self, request: ListRequest) -> None:
        """A small vault's query (a few ms) runs right here: handing it to a thread and back
        costs more than that while agents keep the other threads busy."""
        try:
            result = self.session.query(request.query, request.snapshot)
        except VaultError as exc:
            self._filterbar.show_error(exc.message)
            return
        self._list_reset = False
        rows = rows_for(request.pane, result.entries, request.snapshot.skipped)
        self._show_rows(request.pane, rows, result.total, request.keep)

    def on_list_ready(self, message: ListReady) -> None:
        request = message.request
        if request.seq != self._list_seq or not self._live():
            return  # a newer request is on its way
        self._list_reset = False
        self._show_rows(request.pane, message.rows, message.total, request.keep)

    def on_list_failed(self, message: ListFailed) -> None:
        if message.seq == self._list_seq and self._live():
            self._filterbar.show_error(message.error)

    def _show_rows(self, pane: TriagePane, rows, total: int, keep: bool) -> None:
        empty = None
        if not self.session.snapshot.loaded:
            empty = "Indexing…"
        elif total == 0 and self.session.snapshot.note_count == 0:
            empty = "This vault has no notes yet"
        pane.show(rows, empty=empty, keep=keep)
        self.call_after_refresh(self._answered)

    def run_counts(self) -> None:
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
        self._counts_worker(plans, snapshot, fresh)

    @work(thread=True, exclusive=True, group="counts", exit_on_error=False, description="tab counts")
    def _counts_worker(self, plans: dict[str, dict[str, Query]], snapshot: Snapshot, fresh: bool) -> None:
        worker = get_current_worker()
        counts: dict[str, dict[str, int]] = {}
        for pane_id, queries in plans.items():
            counts[pane_id] = {}
            for key, q in queries.items():
                try:  # a count needs no order: skip the sort (overdue and title sorts are costly)
                    q = replace(q, limit=1, sort="path", descending=False)
                    counts[pane_id][key] = self.session.query(q, snapshot).total
                except VaultError:
                    counts[pane_id][key] = 0
                if worker.is_cancelled:
                    return
        stats = None
        if fresh:  # the filter and folder scope change tab counts only, not the vault's totals
            stats = self.session.stats(snapshot)
            folder_tree(snapshot)  # built here, off the UI thread, and memoized on the snapshot
            if not worker.is_cancelled:
                # the first preview maps note names for its links: do it now, idle, and
                # before the freeze below
                linkmap.warm(snapshot)
        if not worker.is_cancelled:
            self._from_thread(self._show_counts, counts, stats, snapshot)

    def _show_counts(self, counts: dict[str, dict[str, int]], stats: dict | None, snapshot: Snapshot) -> None:
        if not self._live():
            return
        relabelled = []
        for pane in self._panes:
            mine = counts.get(pane.id or "", {})
            tab = self.tabs.get_tab(pane.id or "")
            label = pane.label_for(mine)
            if tab.label.plain != label:
                tab.label = label
                relabelled.append(tab)
            pane.show_counts(mine)
        if relabelled:
            # Tabs places its underline before the relabelled tab is re-laid out; relabelling once
            # more after the refresh puts it under the tab's new width
            self.call_after_refresh(lambda: [setattr(t, "label", t.label) for t in relabelled])
        if stats is not None:
            self._stats_key = (snapshot.generation, self.session.clock)
            if snapshot is self.session.snapshot:
                self._tree.sync()
            self._status_stats(stats)
            if not self._frozen and snapshot.loaded:
                # The index (frozen by core after its load) and what the views derived from it
                # (core's name maps: ~100k small lists at 100k notes) live as long as the app.
                # Left to the collector, each full collection walks them: 50-70 ms pauses while
                # typing. Freezing keeps them out of every later collection.
                self._frozen = True
                freeze_long_lived()
                release_free_memory()
                if self.config.idle_gc and not self._quitting:
                    self.collector.start()
                    self.set_interval(GC_TICK_SECONDS, self.collector.tick, name="idle gc")
                if snapshot is self.session.snapshot:
                    self._warm_filter()

    def _from_thread(self, fn, *args) -> None:
        """Run `fn` on the UI thread from a worker thread (dropped while shutting down)."""
        if self._quitting:
            return
        try:
            self.call_from_thread(fn, *args)
        except RuntimeError:  # the app is closing
            pass

    # -- user actions -----------------------------------------------------------------------------
    def on_filter_bar_applied(self, message: FilterBar.Applied) -> None:
        if message.query == self.filter_query:
            return  # "vault" -> "vault " lists the same notes
        self._typing_until = time.monotonic() + TYPING_PAUSE
        self._person_acts()  # also an edit that came without a key (a paste, the palette)
        self.filter_query = message.query
        self.refresh_views(keep=False)

    def on_filter_bar_left(self, message: FilterBar.Left) -> None:
        self.active_list.focus()

    def on_tree_node_selected(self, message: Tree.NodeSelected) -> None:
        folder = message.node.data
        self.scope = folder or None
        self._status_vault()
        self.refresh_views(keep=False)

    async def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        pane = message.pane
        if not isinstance(pane, TriagePane) or not self._live():
            return  # e.g. the tabs being removed while the app quits
        await pane.materialize()  # opened before the hidden tabs were built
        if not self._live() or pane is not self.active_pane:
            return
        self.run_active(pane=pane)
        self.call_after_refresh(pane.rowlist.focus)

    @on(Requery)
    @on(DocList.SortChanged)
    def _requery(self) -> None:
        self.run_active()

    def on_row_list_highlighted(self, message: RowList.Highlighted) -> None:
        row = message.row
        if isinstance(message.rowlist, ActivityList):
            if row is not None and self.following:
                self.follow_agent = row.agent
                self._update_activity_title()
            return
        if message.rowlist is not self.active_list:
            return
        # key repeat moves the cursor many rows a second: preview where it comes to rest; while
        # the filter is being typed, wait for a pause in the typing (opening a note re-lays the
        # screen out, which the next keystroke would wait for)
        if self._preview_timer is not None:
            self._preview_timer.stop()
        delay = max(PREVIEW_DELAY, self._typing_until - time.monotonic())
        self._preview_timer = self.set_timer(delay, lambda: self._preview_row(row))

    def _preview_row(self, row) -> None:
        self._preview_timer = None
        if isinstance(row, Problem):
            self.preview.show_problem(row)
        elif row is not None:
            self.preview.show(row.path)

    def on_row_list_chosen(self, message: RowList.Chosen) -> None:
        row = message.row
        if isinstance(message.rowlist, ActivityList):
            from . import review  # noqa: PLC0415
            if row is not None and review.open_call(self, row):  # an agent's write: its diff
                return
            if row is not None and row.paths:
                self.preview.show(row.paths[0], push=True)
            return
        self.action_focus_preview()

    def open_note(self, path: str) -> None:
        """Preview a note (palette, tests) and put the list cursor on it when it is listed."""
        self.preview.show(path, push=self.preview.path is not None)
        self.active_list.select_key(path)

    def action_focus_filter(self) -> None:
        self._filterbar.query_one("#filter-input", Input).focus()

    def action_focus_list(self) -> None:
        if self.reading:
            self.reading = False
            self._apply_layout()
        self.active_list.focus()

    def action_focus_preview(self) -> None:
        if self.size.width < 100 and not self.reading:
            self.reading = True
            self._apply_layout()
        self.preview.focus()

    def action_tab(self, pane_id: str) -> None:
        self.tabs.active = pane_id

    def action_toggle_tree(self) -> None:
        tree = self._tree
        self._user_layout["tree"] = not tree.display
        self._apply_layout()

    def action_changes(self) -> None:
        from . import review  # noqa: PLC0415
        review.open_changes(self)

    def action_approval_mode(self) -> None:
        from . import review  # noqa: PLC0415
        review.cycle_mode(self)

    def action_toggle_activity(self) -> None:
        panel = self._activity_panel
        self._user_layout["activity"] = not panel.display
        self._apply_layout()

    def action_toggle_follow(self) -> None:
        self.following = not self.following
        self._activity.follow_tail = not self.following  # keep the followed row selected
        if self.following:
            current = self._activity.current
            self.follow_agent = current.agent if current is not None else None
            if not self._activity_panel.display:
                self._user_layout["activity"] = True
                self._apply_layout()
        self._update_activity_title()
        self._status_agents()

    def action_help(self) -> None:
        from .screens.help import HelpScreen  # noqa: PLC0415  (dialogs load when first opened)

        self.push_screen(HelpScreen(self.key_help()))

    def action_as_of(self) -> None:
        def done(clock) -> None:
            if clock is not None:
                self.set_clock(clock)

        from .screens.asof import AsOfScreen  # noqa: PLC0415

        current = self.session.clock.today().isoformat()
        self.push_screen(AsOfScreen(current, blink=self.config.animate), done)

    def set_clock(self, clock) -> None:
        """Judge staleness by another as-of clock (this session only; agents keep theirs)."""
        self.session.clock = clock
        self._invalidate_doclists()
        self.preview.refresh_marks()
        self._status_vault()
        self.refresh_views()

    def _invalidate_doclists(self) -> None:
        for pane in self._panes:
            if isinstance(pane.rowlist, DocList):
                pane.rowlist.invalidate()

    def action_copy_bridge_config(self) -> None:
        text = self.bridge_config()
        self.copy_to_clipboard(text)
        self.notify("MCP client configuration copied (Claude Desktop format)", title="bridge")

    def bridge_config(self) -> str:
        """A Claude Desktop configuration that reaches this app through `vaultwatch bridge`."""
        from mcp_server import config as client_config  # noqa: PLC0415

        socket = self.config.socket_path and getattr(self.host, "socket_path", self.config.socket_path)
        if not socket:  # the default socket: the bridge finds it from the vault
            return client_config.snippet("claude-desktop", self.session.vault.root_real)
        cmd = client_config.command()
        entry = {"command": cmd[0], "args": [*cmd[1:], "bridge", "--socket", socket]}
        return json.dumps({"mcpServers": {"vaultwatch": entry}}, indent=2)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for pane_id, cls in PANES:
            yield SystemCommand(f"Show {cls.label}", f"Switch to the {cls.label} tab",
                                lambda p=pane_id: self.action_tab(p))
        yield SystemCommand("Focus folder tree", "Move the focus to the folder tree", self._focus_tree)
        yield SystemCommand("Focus preview", "Move the focus to the preview", self.action_focus_preview)
        yield SystemCommand("Toggle activity panel", "Show or hide the agent activity panel",
                            self.action_toggle_activity)
        yield SystemCommand("Toggle follow mode", "Preview follows what the selected agent reads",
                            self.action_toggle_follow)
        yield SystemCommand("Set as-of date", "Judge staleness as of another date", self.action_as_of)
        yield SystemCommand("Copy bridge config", "Copy an MCP client configuration for `vaultwatch bridge`",
                            self.action_copy_bridge_config)
        yield SystemCommand("Clear filter", "Show every note again", lambda: self._filterbar.set_text(""))

    def _focus_tree(self) -> None:
        self._user_layout["tree"] = True
        self._apply_layout()
        self._tree.focus()

    def key_help(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """Sections of (key, description) for the help screen, from the bindings themselves."""
        from .widgets.triage import TrustPane  # noqa: PLC0415

        sections = [("Everywhere", [self]), ("Lists", [DocList, RowList]), ("Preview", [Preview]),
                    ("Folder tree", [FolderView]), ("Filter bar", [FilterBar]), ("Trust tab", [TrustPane])]
        out: list[tuple[str, list[tuple[str, str]]]] = []
        for title, sources in sections:
            rows: dict[str, list[str]] = {}
            for source in sources:
                for binding in source.BINDINGS:
                    if not isinstance(binding, Binding) or not binding.description:
                        continue
                    keys = [self.get_key_display(Binding(k.strip(), "")) for k in binding.key.split(",")]
                    rows.setdefault(binding.description, []).extend(keys)
            out.append((title, [(", ".join(dict.fromkeys(keys)), what) for what, keys in rows.items()]))
        out[0][1].append(("ctrl+p", "command palette: open a note by title, switch panel, as-of date, "
                                    "copy the bridge config, theme"))
        out[0][1].append(("mouse", "click rows, headers (sort), folders (scope) and links in the preview"))
        return out

    # -- triage actions (writes run in thread workers; see tui.actions) ------------------------------
    def on_doc_list_picks_changed(self, message: DocList.PicksChanged) -> None:
        count = len(message.doclist.picked)
        self.status.set_part("picked", Text(f"{count} marked", style="bold") if count else None)

    def on_doc_list_act(self, message: DocList.Act) -> None:
        doclist = message.doclist
        targets = doclist.targets()
        if not targets:
            return
        action = message.action
        from .screens.triage import SnoozeScreen, StatusScreen  # noqa: PLC0415
        if action == "status":
            current = targets[0].okf_status if len(targets) == 1 else None

            def chosen(status: str | None) -> None:
                if status is not None:
                    self._act(doclist, self.actions.set_status, targets, status)

            self.push_screen(StatusScreen(len(targets), current), chosen)
        elif action == "verify":
            self._act(doclist, self.actions.mark_reviewed, targets)
        elif action == "snooze":
            as_of = self.session.clock.today()

            def days_chosen(days: int | None) -> None:
                if days is not None:
                    self._act(doclist, self.actions.snooze, targets, days, as_of)

            self.push_screen(SnoozeScreen(len(targets), as_of.isoformat(), blink=self.config.animate), days_chosen)
        elif action == "edit":
            current = doclist.current
            if current is not None:
                self._edit_worker(current)

    def _act(self, doclist: DocList, fn, *args) -> None:
        doclist.clear_picks()
        self._writes_pending += 1
        self._person_acts(WRITE_HOLD_SECONDS)
        self._action_worker(fn, *args)

    @work(thread=True, group="write", exit_on_error=False, description="triage action")
    def _action_worker(self, fn, *args) -> None:
        try:
            outcome = fn(*args)
        finally:
            self._from_thread(self._write_done)
        self._from_thread(self._show_outcome, outcome)

    def _write_done(self) -> None:
        self._writes_pending -= 1
        self._person_acts()  # the row showing the write is next: the list refresh releases

    @work(group="write", exit_on_error=False, description="$EDITOR")
    async def _edit_worker(self, entry) -> None:
        """Suspend the app, run $EDITOR on the note, resume and index what it saved."""
        from core.writes import ConflictError  # noqa: PLC0415

        from .actions import Outcome, editor_command  # noqa: PLC0415

        try:
            before = await asyncio.to_thread(self.actions.seen_bytes, entry)
        except VaultError as exc:
            self._show_outcome(Outcome("edit", conflicts=[entry.path]) if isinstance(exc, ConflictError)
                               else Outcome("edit", errors=[(entry.path, exc.message)]))
            return
        command = editor_command(self.session.vault.disk_path(entry.path))
        try:
            try:
                with self.suspend():
                    # the app is suspended: the editor owns the terminal until it exits
                    code = subprocess.run(command, check=False).returncode  # noqa: ASYNC221
            except SuspendNotSupported:  # headless (tests) or web: no terminal to hand over
                done = await asyncio.to_thread(subprocess.run, command, check=False, stdin=subprocess.DEVNULL,
                                               capture_output=True)
                code = done.returncode
        except OSError as exc:
            self.notify(f"could not start the editor {command[0]!r}: {exc.strerror or exc}; set $EDITOR",
                        severity="error", title="edit")
            return
        outcome = await asyncio.to_thread(self.actions.edited, entry.path, before)
        if code:
            outcome.errors.append((entry.path, f"the editor exited with status {code}"))
        self._show_outcome(outcome)

    def action_undo(self) -> None:
        self._undo_worker()

    @work(thread=True, group="write", exit_on_error=False, description="undo")
    def _undo_worker(self) -> None:
        outcome = self.actions.undo()
        if outcome is None:
            self._from_thread(lambda: self.notify("nothing to undo", title="undo"))
        else:
            self._from_thread(self._show_outcome, outcome)

    def action_reload(self) -> None:
        paths = list(self._conflicted)
        current = self.active_list.current
        if isinstance(self.active_list, DocList) and current is not None:
            paths.append(current.path)
        self._conflicted.clear()
        if paths:
            self._reload_worker(paths)

    @work(thread=True, group="write", exit_on_error=False, description="reload")
    def _reload_worker(self, paths: list[str]) -> None:
        self.actions.reload(paths)
        self._from_thread(lambda: self.notify(f"reloaded {_names(paths)} from disk", title="reload", markup=False))

    def _show_outcome(self, outcome: Outcome) -> None:
        """Say what an action changed, and loudly what it refused to overwrite."""
        if outcome.done:
            lines = [f"{path}: {summary}" for path, summary in outcome.done[:5]]
            if len(outcome.done) > 5:
                lines.append(f"… and {len(outcome.done) - 5} more notes")
            if outcome.unchanged:
                lines.append(f"already so: {_names(outcome.unchanged)}")
            if not outcome.label.startswith("undid"):
                lines.append("u undoes")
            self.notify("\n".join(lines), title=outcome.label, markup=False)
        elif outcome.unchanged and not (outcome.conflicts or outcome.errors):
            self.notify(f"nothing to change: {_names(outcome.unchanged)}", title=outcome.label, markup=False)
        if outcome.conflicts:
            self._conflicted = list(dict.fromkeys([*self._conflicted, *outcome.conflicts]))
            self.notify(f"{_names(outcome.conflicts)} changed on disk since it was shown (an agent or another "
                        "editor). Nothing was written there: the current content is kept. Press ctrl+r to "
                        "reload, then act again.", title=f"conflict: {outcome.label}", severity="warning",
                        timeout=12, markup=False)
        for path, message in outcome.errors:
            self.notify(f"{path}: {message}", title=f"failed: {outcome.label}", severity="error", markup=False)

    # -- MCP host --------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="mcp", exit_on_error=False, description="MCP server")
    def run_mcp(self) -> None:
        """Serve MCP on the host's socket until quit (errors land in on_worker_state_changed).

        The server has a thread and an asyncio loop of its own: an agent's request never
        holds up a frame or a keystroke for longer than the interpreter's 5 ms thread switch
        (in the app's loop, each request ran to its next await first). The host is built
        here too, after the first frame: importing the MCP SDK takes ~0.5 s. A host that
        cannot be built (a second vaultwatch on the vault) leaves the TUI working and says why
        in the status line."""
        if self.host is None and self._host_factory is not None:
            try:
                self.host = self._host_factory()
            except Exception as exc:
                self.host_error = str(exc) or type(exc).__name__
                self._from_thread(self.status.set_part, "mcp", Text(f"MCP off: {self.host_error}", style="red"))
                return
        host = self.host
        if host is None or self._quitting:
            return

        async def serve() -> None:
            ready = asyncio.Event()

            async def announce() -> None:
                await ready.wait()
                self._from_thread(self._status_agents)

            announcer = asyncio.create_task(announce())
            try:
                await host.run(ready)
            finally:
                announcer.cancel()

        asyncio.run(serve())

    @work(exclusive=True, group="watch", exit_on_error=False, description="watcher")
    async def run_watcher(self) -> None:
        """Follow outside edits (the core watcher) until quit."""
        await self.watcher.run()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker failures are reported."""
        worker = event.worker
        if event.state != WorkerState.ERROR or self._quitting:
            return
        error = worker.error
        log.error("worker %s failed: %r", worker.group, error)
        if worker.group == "mcp":
            self.host_error = str(error)
            self.status.set_part("mcp", Text(f"MCP off: {error}", style="red"))
            self.notify(f"The MCP server stopped: {error}", severity="error", title="MCP")
        else:
            self.notify(f"{worker.group} failed: {error}", severity="error")

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit()

    async def shutdown(self) -> None:
        """Stop the MCP server and the watcher, and wait for them (bounded)."""
        self._quitting = True
        self.collector.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        waits = []
        if self._mcp_worker is not None:
            waits.append(self._mcp_worker)  # it may still be building the host: stop it after
        if self.host is not None:
            self.host.stop()
        if self.watcher is not None:
            try:  # stopping flushes the index cache to disk: not on the UI thread
                await asyncio.wait_for(asyncio.to_thread(self.watcher.stop), 6.0)
            except Exception as exc:
                log.warning("stopping the watcher failed: %r", exc)
        waits.extend(w for w in self.workers if w.group == "watch")
        for worker in waits:
            try:
                await asyncio.wait_for(worker.wait(), 2.0)
            except Exception:  # cancelled, failed or slow: it is reported elsewhere; quit anyway
                worker.cancel()
            if worker is self._mcp_worker and self.host is not None:
                self.host.stop()  # built while we waited

    async def on_unmount(self) -> None:
        if not self._quitting:
            await self.shutdown()

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait until the index is loaded and no view work is pending (tests, screenshots):
        no view worker running, no timer set, no message queued anywhere on the screen (a
        list's Highlighted is on its way to the app), several refreshes in a row."""
        deadline = time.monotonic() + timeout
        quiet = 0
        while time.monotonic() < deadline:
            if self._views_idle():
                quiet += 1
                if quiet >= 3:
                    return
                # widgets finish some updates after a refresh (the tab underline follows a
                # relabelled tab): let a refresh cycle pass and look again
                await self.screen.wait_for_refresh()
                await asyncio.sleep(0.005)
                continue
            quiet = 0
            await asyncio.sleep(0.01)
        raise TimeoutError("the views did not settle")

    def _views_idle(self) -> bool:
        if not (self.loaded and self._started and self._preview.built and all(p.ready for p in self._panes)):
            return False
        if self._counts_timer is not None or self._preview_timer is not None or self._list_busy:
            return False
        if any(w.group in VIEW_GROUPS and not w.is_finished for w in self.workers):
            return False
        return not any(node._message_queue.qsize() for node in (self, *self.screen.walk_children(with_self=True)))

    # -- status line -------------------------------------------------------------------------------
    def _tick(self) -> None:
        if not self.session.marks.by_path:
            return
        self._invalidate_doclists()
        self._tree.refresh_marks()
        self.preview.refresh_marks()

    def _status_vault(self) -> None:
        text = Text()
        text.append(Path(self.session.vault.root).name or self.session.vault.root, style="bold")
        if self.scope:
            text.append(f"/{self.scope}", style="bold")
        spans.append(text, f"  as of {self.session.clock.today().isoformat()}", "dim")
        self.status.set_part("vault", text)

    def _status_indexing(self, done: int, total: int) -> None:
        text = f"indexing {done:,}/{total:,}" if total else "indexing…"
        self.status.set_part("index", Text(text, style="yellow"))

    def _status_stats(self, stats: dict) -> None:
        text = Text(f"{stats['notes']:,} notes")
        if stats.get("okf_bundle"):
            spans.append(text, f" · {stats['stale']:,} stale", "yellow" if stats["stale"] else None)
        broken = stats["frontmatter_errors"] + stats["skipped"]
        if broken:
            spans.append(text, f" · {broken:,} broken", "red")
        self.status.set_part("stats", text)

    def _status_agents(self) -> None:
        if self.host is None:
            if not self.host_error:
                self.status.set_part("mcp", Text("MCP off", style="dim"))
            return
        text = Text()
        text.append("MCP ", style="bold green")
        text.append(str(getattr(self.host, "socket_path", "")), style="dim")
        names = sorted(set(self.agents.values()))
        if names:
            text.append(" · ")
            for i, name in enumerate(names):
                if i:
                    text.append(", ")
                text.append(name, style=Style(color=self.session.colors(name)))
        else:
            spans.append(text, " · no agents", "dim")
        self.status.set_part("mcp", text)

    def _update_activity_title(self) -> None:
        text = Text()
        text.append("Agent activity", style="bold")
        calls = len(self._activity.calls)
        spans.append(text, f"  {calls:,} calls", "dim")
        names = sorted(set(self.agents.values()))
        if names:
            spans.append(text, f" · {len(names)} agent{'s' if len(names) != 1 else ''}: ", "dim")
            for i, name in enumerate(names):
                if i:
                    text.append(", ")
                text.append(name, style=Style(color=self.session.colors(name)))
        text.append("  ")
        if self.following:
            text.append(" ", style="reverse")  # a pad of another style: see tui.spans
            text.append(f"following {self.follow_agent or 'any agent'}", style="bold reverse")
            text.append(" ", style="reverse")
            spans.append(text, "  f stops", "dim")
        else:
            text.append("f follows the selected agent", style="dim")
        self._activity_title.update(spans.tidy(text), layout=False)


def _names(paths: list[str], limit: int = 3) -> str:
    """"a.md, b.md and 4 more" for notifications."""
    shown = ", ".join(paths[:limit])
    return shown if len(paths) <= limit else f"{shown} and {len(paths) - limit} more"


def _log_to_file() -> None:
    """Keep library logging (the MCP SDK configures a stderr handler) off the terminal."""
    root = logging.getLogger()
    if any(isinstance(h, logging.FileHandler) for h in root.handlers):
        return
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "vaultwatch"
    try:
        state.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(state / "tui.log", encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _watcher_for(vault: Vault, search: bool) -> Any:
    """The core watcher for this vault (with the full-text index when agents can search)."""
    try:
        from core import watch  # noqa: PLC0415  (optional until the live-index work lands)
    except ImportError:
        return None
    factory = getattr(watch, "VaultWatcher", None)
    return factory(vault, search=search) if factory is not None else None


def _prestart_scan_helpers() -> None:
    """Core's parallel scan forks its workers through multiprocessing, whose resource tracker is
    started with this process's stderr descriptor. Inside the app stderr is Textual's capture
    (fileno() == -1) and the scan would fail with "bad value(s) in fds_to_keep": start the
    tracker with the real stderr put back for the moment. (Called after the first frame: the
    spawn costs the first paint ~10 ms.)"""
    from multiprocessing import resource_tracker  # noqa: PLC0415

    captured = sys.stderr
    try:
        if sys.__stderr__ is not None:
            sys.stderr = sys.__stderr__
        resource_tracker.ensure_running()
    except Exception as exc:  # the scan reports its own failure if this mattered
        log.warning("could not pre-start the multiprocessing resource tracker: %r", exc)
    finally:
        sys.stderr = captured


def make_app(vault: Vault, *, config: AppConfig | None = None) -> VaultwatchApp:
    """Build the session (and the watcher, and how to build the MCP host, that the config asks
    for) and the app. The host is built by the app after its first frame."""
    config = config or AppConfig()
    session = Session(vault, config)
    host_factory = None
    if config.mcp:
        _log_to_file()

        def host_factory() -> Any:
            from mcp_server.host import McpHost  # noqa: PLC0415  (imports the SDK only when serving)

            return McpHost(vault, socket_path=config.socket_path, compat=config.compat, read_only=config.read_only,
                           audit_log=config.audit_log, http=config.http, kind="tui")
    watcher = None
    if config.watch:
        try:
            watcher = _watcher_for(vault, search=config.mcp)
        except Exception as exc:
            log.warning("watcher unavailable: %r", exc)
    return VaultwatchApp(session, watcher=watcher, host_factory=host_factory)
