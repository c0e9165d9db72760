"""The vaultwatch TUI: folder tree, filterable list, preview, triage tabs and agent activity.

`make_app(vault, config=...)` builds the domain side (the session, the MCP host) and hands
it to `VaultwatchApp`. The app never touches the disk on the UI thread: the index loads in
the background, queries and previews run in thread workers, and core events reach the app
as coalesced Textual messages posted from whatever thread published them.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SuspendNotSupported, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, TabbedContent, Tree
from textual.worker import Worker, WorkerState, get_current_worker

from core import filterexpr
from core.errors import VaultError
from core.events import AgentAccess, AgentConnected, DocumentsChanged, Event, IndexProblem, IndexProgress, IndexReady
from core.folders import folder_tree
from core.index import Snapshot
from core.query import Query
from core.vault import Vault
from core.writes import ConflictError

from .actions import Actions, Outcome, editor_command
from .config import AppConfig
from .marks import access_kind
from .messages import AgentCalled, AgentPresence, IndexChanged, IndexLoaded, IndexProgressed, ProblemReported
from .screens.asof import AsOfScreen
from .screens.help import HelpScreen
from .screens.palette import NoteCommands
from .screens.triage import SnoozeScreen, StatusScreen
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

VIEW_GROUPS = frozenset({"query", "counts", "preview"})
COUNTS_DELAY = 0.15
COUNTS_DELAY_BIG = 0.5
BIG_VAULT = 20_000
PREVIEW_DELAY = 0.06
log = logging.getLogger("vaultwatch.tui")


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
    ]

    def __init__(self, session: Session, *, host: Any = None, host_error: str | None = None,
                 watcher: Any = None) -> None:
        super().__init__()
        self.session = session
        self.config: AppConfig = session.config
        self.host = host
        self.host_error = host_error
        self.watcher = watcher
        self.scope: str | None = None
        self.filter_query = Query()
        self.follow_agent: str | None = None
        self.following = False
        self.agents: dict[str, str] = {}  # session id -> agent name
        self._unsubscribe = None
        self._counts_timer = None
        self._preview_timer = None
        self._stats_key: tuple | None = None
        self._mcp_worker: Worker | None = None
        self._quitting = False
        self._user_layout: dict[str, bool] = {}
        self.reading = False  # narrow screens: the preview replaces the list
        self.loaded = False  # the app has seen a complete index
        self.actions = Actions(session.vault, user=self.config.user)
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
        yield FilterBar(id="filterbar")
        with Horizontal(id="main"):
            yield FolderView(self.session, id="tree")
            with TabbedContent(id="tabs"):
                for pane_id, cls in PANES:
                    yield cls(self.session, pane_id)
            yield Preview(self.session, id="preview")
        with Vertical(id="activity"):
            yield Static(id="activity-title")
            yield ActivityList(self.session, id="activity-list")
        yield StatusLine(id="status")
        yield Footer()

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
            # paint first: the loader thread's stat/parse loop competes with the first frame
            self.call_after_refresh(self.session.vault.start)
            self._status_indexing(0, 0)
            for pane in self.query(TriagePane):
                pane.show((), empty="Indexing…")
        if self.host is not None:
            self._mcp_worker = self.run_mcp()
        elif self.host_error:
            self.status.set_part("mcp", Text(f"MCP off: {self.host_error}", style="red"))
        if self.watcher is not None:
            self.run_watcher()
        if self.config.tick:
            self.set_interval(self.config.tick, self._tick)
        if self._theme_error:
            self.notify(self._theme_error, severity="warning", title="theme")
        self.active_list.focus()

    def on_resize(self) -> None:
        self._apply_layout()

    def on_descendant_focus(self, event) -> None:
        if not self.config.animate and isinstance(event.widget, Input):
            event.widget.cursor_blink = False  # also the palette's and dialogs' inputs

    def _apply_layout(self) -> None:
        """Wide screens show tree, list and preview side by side (the tree from 140 columns);
        narrow ones show the list, and the preview in its place while reading (enter opens it,
        escape returns)."""
        width, height = self.size
        narrow = width < 100
        self.query_one("#tree").display = self._user_layout.get("tree", width >= 140)
        self.query_one("#activity").display = self._user_layout.get("activity", height >= 30)
        self.query_one("#preview").display = not narrow or self.reading
        self.query_one("#tabs").display = not (narrow and self.reading)
        self.screen.set_class(narrow, "-narrow")

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one("#tabs", TabbedContent)

    @property
    def active_pane(self) -> TriagePane:
        pane = self.tabs.active_pane
        assert isinstance(pane, TriagePane)
        return pane

    @property
    def active_list(self) -> RowList:
        return self.active_pane.rowlist

    @property
    def preview(self) -> Preview:
        return self.query_one(Preview)

    # -- core events, from any thread ----------------------------------------------------------
    def _relay(self, event: Event) -> None:
        """Bus subscriber: runs in the publisher's thread, so it only posts messages."""
        if isinstance(event, DocumentsChanged):
            self.post_message(IndexChanged(event.generation))
        elif isinstance(event, AgentAccess):
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
            for pane in self.query(TriagePane):
                pane.rowlist._empty = f"Indexing… {message.done:,} of {message.total:,} files"
                pane.rowlist.refresh()

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
            for pane in self.query(TriagePane):
                pane.show((), empty=message.text)

    def on_agent_called(self, message: AgentCalled) -> None:
        event = message.event
        self.query_one(ActivityList).add(event)
        marked = self.session.marks.record(event)
        if event.agent not in self.agents.values():
            self.agents.setdefault(event.session or event.agent, event.agent)
        if marked:
            for doclist in self.query(DocList):
                doclist.marks_changed(marked)
            self.query_one(FolderView).refresh_marks()
            if self.preview.path in marked:
                self.preview.refresh_marks()
        if self.following and event.paths and access_kind(event) == "read" and \
                (self.follow_agent in (None, event.agent)):
            path = event.paths[0]
            self.preview.show(path)
            self.active_list.select_key(path) if isinstance(self.active_list, DocList) else None
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
        self.run_active(keep=keep)
        self.preview.refresh_if_changed()
        if self._counts_timer is not None:
            self._counts_timer.stop()
        # counting runs every tab's query: on a big vault wait for a pause in the typing, or the
        # counts compete with the visible list's query for the interpreter
        delay = COUNTS_DELAY if self.session.snapshot.note_count < BIG_VAULT else COUNTS_DELAY_BIG
        self._counts_timer = self.set_timer(delay, self.run_counts)

    def run_active(self, *, keep: bool = True) -> None:
        """Re-run the visible pane's query (off the UI thread)."""
        pane = self.active_pane
        try:
            q = self.query_for(pane)
        except VaultError as exc:
            self.query_one(FilterBar).show_error(exc.message)
            return
        self._query_worker(pane.id or "", q, self.session.snapshot, keep)

    @work(thread=True, exclusive=True, group="query", exit_on_error=False, description="list query")
    def _query_worker(self, pane_id: str, q: Query, snapshot: Snapshot, keep: bool) -> None:
        worker = get_current_worker()
        try:
            result = self.session.query(q, snapshot)
        except VaultError as exc:
            if not worker.is_cancelled:
                self._from_thread(self.query_one(FilterBar).show_error, exc.message)
            return
        if worker.is_cancelled:
            return
        pane = self.query_one(f"#{pane_id}", TriagePane)
        rows = rows_for(pane, result.entries, snapshot.skipped)
        self._from_thread(self._show_rows, pane, rows, result.total, keep)

    def _show_rows(self, pane: TriagePane, rows, total: int, keep: bool) -> None:
        empty = None
        if not self.session.snapshot.loaded:
            empty = "Indexing…"
        elif total == 0 and self.session.snapshot.note_count == 0:
            empty = "This vault has no notes yet"
        pane.show(rows, empty=empty, keep=keep)

    def run_counts(self) -> None:
        """Re-count every tab, the tree and the status line (off the UI thread)."""
        self._counts_timer = None
        plans: dict[str, dict[str, Query]] = {}
        for pane in self.query(TriagePane):
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
            self._from_thread(self._show_counts, counts, stats, snapshot)

    def _show_counts(self, counts: dict[str, dict[str, int]], stats: dict | None, snapshot: Snapshot) -> None:
        relabelled = []
        for pane in self.query(TriagePane):
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
                self.query_one(FolderView).sync()
            self._status_stats(stats)

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
        self.filter_query = message.query
        self.refresh_views(keep=False)

    def on_filter_bar_left(self, message: FilterBar.Left) -> None:
        self.active_list.focus()

    def on_tree_node_selected(self, message: Tree.NodeSelected) -> None:
        folder = message.node.data
        self.scope = folder or None
        self._status_vault()
        self.refresh_views(keep=False)

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        self.run_active()
        self.call_after_refresh(self.active_list.focus)

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
        # key repeat moves the cursor many rows a second: preview where it comes to rest
        if self._preview_timer is not None:
            self._preview_timer.stop()
        self._preview_timer = self.set_timer(PREVIEW_DELAY, lambda: self._preview_row(row))

    def _preview_row(self, row) -> None:
        self._preview_timer = None
        if isinstance(row, Problem):
            self.preview.show_problem(row)
        elif row is not None:
            self.preview.show(row.path)

    def on_row_list_chosen(self, message: RowList.Chosen) -> None:
        row = message.row
        if isinstance(message.rowlist, ActivityList):
            if row is not None and row.paths:
                self.preview.show(row.paths[0], push=True)
            return
        self.action_focus_preview()

    def open_note(self, path: str) -> None:
        """Preview a note (palette, tests) and put the list cursor on it when it is listed."""
        self.preview.show(path, push=self.preview.path is not None)
        self.active_list.select_key(path)

    def action_focus_filter(self) -> None:
        self.query_one("#filter-input", Input).focus()

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
        tree = self.query_one("#tree")
        self._user_layout["tree"] = not tree.display
        self._apply_layout()

    def action_toggle_activity(self) -> None:
        panel = self.query_one("#activity")
        self._user_layout["activity"] = not panel.display
        self._apply_layout()

    def action_toggle_follow(self) -> None:
        self.following = not self.following
        self.query_one(ActivityList).follow_tail = not self.following  # keep the followed row selected
        if self.following:
            current = self.query_one(ActivityList).current
            self.follow_agent = current.agent if current is not None else None
            if not self.query_one("#activity").display:
                self._user_layout["activity"] = True
                self._apply_layout()
        self._update_activity_title()
        self._status_agents()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.key_help()))

    def action_as_of(self) -> None:
        def done(clock) -> None:
            if clock is not None:
                self.set_clock(clock)

        current = self.session.clock.today().isoformat()
        self.push_screen(AsOfScreen(current, blink=self.config.animate), done)

    def set_clock(self, clock) -> None:
        """Judge staleness by another as-of clock (this session only; agents keep theirs)."""
        self.session.clock = clock
        for doclist in self.query(DocList):
            doclist.invalidate()
        self.preview.refresh_marks()
        self._status_vault()
        self.refresh_views()

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
        yield SystemCommand("Clear filter", "Show every note again", lambda: self.query_one(FilterBar).set_text(""))

    def _focus_tree(self) -> None:
        self._user_layout["tree"] = True
        self._apply_layout()
        self.query_one(FolderView).focus()

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
        self._action_worker(fn, *args)

    @work(thread=True, group="write", exit_on_error=False, description="triage action")
    def _action_worker(self, fn, *args) -> None:
        outcome = fn(*args)
        self._from_thread(self._show_outcome, outcome)

    @work(group="write", exit_on_error=False, description="$EDITOR")
    async def _edit_worker(self, entry) -> None:
        """Suspend the app, run $EDITOR on the note, resume and index what it saved."""
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
    @work(exclusive=True, group="mcp", exit_on_error=False, description="MCP server")
    async def run_mcp(self) -> None:
        """Serve MCP on the host's socket until quit (errors land in on_worker_state_changed)."""
        ready = asyncio.Event()

        async def announce() -> None:
            await ready.wait()
            self._status_agents()

        announcer = asyncio.create_task(announce())
        self.status.set_part("mcp", Text("MCP starting…", style="dim"))
        try:
            await self.host.run(ready)
        finally:
            announcer.cancel()

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
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        waits = []
        if self.host is not None:
            self.host.stop()
            if self._mcp_worker is not None:
                waits.append(self._mcp_worker)
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

    async def on_unmount(self) -> None:
        if not self._quitting:
            await self.shutdown()

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait until the index is loaded and no view worker is pending (tests, screenshots)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = [w for w in self.workers if w.group in VIEW_GROUPS and not w.is_finished]
            idle = self._counts_timer is None and self._preview_timer is None
            if self.loaded and not busy and idle:
                await asyncio.sleep(0.01)
                busy = [w for w in self.workers if w.group in VIEW_GROUPS and not w.is_finished]
                idle = self._counts_timer is None and self._preview_timer is None
                if not busy and idle and not self._message_queue.qsize():
                    # widgets finish some updates after a refresh (the tab underline follows a
                    # relabelled tab): let a few refresh cycles pass
                    for _ in range(3):
                        await self.screen.wait_for_refresh()
                    return
            await asyncio.sleep(0.01)
        raise TimeoutError("the views did not settle")

    # -- status line -------------------------------------------------------------------------------
    def _tick(self) -> None:
        if not self.session.marks.by_path:
            return
        for doclist in self.query(DocList):
            doclist.invalidate()
        self.query_one(FolderView).refresh_marks()
        self.preview.refresh_marks()

    def _status_vault(self) -> None:
        text = Text()
        text.append(Path(self.session.vault.root).name or self.session.vault.root, style="bold")
        if self.scope:
            text.append(f"/{self.scope}", style="bold")
        text.append(f"  as of {self.session.clock.today().isoformat()}", style="dim")
        self.status.set_part("vault", text)

    def _status_indexing(self, done: int, total: int) -> None:
        text = f"indexing {done:,}/{total:,}" if total else "indexing…"
        self.status.set_part("index", Text(text, style="yellow"))

    def _status_stats(self, stats: dict) -> None:
        text = Text(f"{stats['notes']:,} notes")
        if stats.get("okf_bundle"):
            text.append(f" · {stats['stale']:,} stale", style="yellow" if stats["stale"] else "")
        broken = stats["frontmatter_errors"] + stats["skipped"]
        if broken:
            text.append(f" · {broken:,} broken", style="red")
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
            text.append(" · no agents", style="dim")
        self.status.set_part("mcp", text)

    def _update_activity_title(self) -> None:
        text = Text()
        text.append("Agent activity", style="bold")
        calls = len(self.query_one(ActivityList).calls)
        text.append(f"  {calls:,} calls", style="dim")
        names = sorted(set(self.agents.values()))
        if names:
            text.append(f" · {len(names)} agent{'s' if len(names) != 1 else ''}: ", style="dim")
            for i, name in enumerate(names):
                if i:
                    text.append(", ")
                text.append(name, style=Style(color=self.session.colors(name)))
        text.append("  ")
        if self.following:
            text.append(f" following {self.follow_agent or 'any agent'} ", style="bold reverse")
            text.append("  f stops", style="dim")
        else:
            text.append("f follows the selected agent", style="dim")
        self.query_one("#activity-title", Static).update(text, layout=False)


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
    (fileno() == -1) and the scan fails with "bad value(s) in fds_to_keep": start the tracker
    now, while stderr is still the real one."""
    try:
        from multiprocessing import resource_tracker  # noqa: PLC0415

        resource_tracker.ensure_running()
    except Exception as exc:  # the scan reports its own failure if this mattered
        log.warning("could not pre-start the multiprocessing resource tracker: %r", exc)


def make_app(vault: Vault, *, config: AppConfig | None = None) -> VaultwatchApp:
    """Build the session (and the MCP host and watcher the config asks for) and the app."""
    config = config or AppConfig()
    if not vault.wait_ready(0):
        _prestart_scan_helpers()
    session = Session(vault, config)
    host = None
    host_error = None
    if config.mcp:
        _log_to_file()
        try:
            from mcp_server.host import McpHost  # noqa: PLC0415  (imports the SDK only when serving)
            host = McpHost(vault, socket_path=config.socket_path, compat=config.compat, read_only=config.read_only,
                           audit_log=config.audit_log, http=config.http)
        except Exception as exc:  # shown in the status line; the TUI still works
            host_error = str(exc) or type(exc).__name__
    watcher = None
    if config.watch:
        try:
            watcher = _watcher_for(vault, search=config.mcp)
        except Exception as exc:
            log.warning("watcher unavailable: %r", exc)
    return VaultwatchApp(session, host=host, host_error=host_error, watcher=watcher)
