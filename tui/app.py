"""The vaultwatch TUI app: the lifecycle around the main screen.

`make_app(vault, config=...)` builds the domain side (the session, and how to build the MCP
host and the watcher) and hands it to `VaultwatchApp`. The app holds what lives as long as
the process: the session, the services (`tui.services`: MCP server, watcher, shutdown), the
bus subscriber that turns core events into messages for the main screen, the person-first
hold on agents' calls (core.live.foreground), the garbage-collector policy, help, the command
palette's commands and the theme. The workflow (layout, views, navigation, triage) is the
main screen's (`tui.screens.main`).

The app never touches the disk on the UI thread: the index loads in the background, queries
and previews run in thread workers, and core events reach the screen as coalesced Textual
messages posted from whatever thread published them.

Start-up paints first: only what the first frame needs is imported and composed before it.
The index load, the MCP server (whose SDK takes ~0.5 s to import), the watcher and the
hidden tabs' lists start after the first frame is on the screen.
"""

from __future__ import annotations

import json
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import App, ScreenStackError, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input
from textual.worker import Worker

from vaultwatch.core.disk.private import private_file, private_folder, write_private
from vaultwatch.core.events import (
    AgentAccess,
    AgentConnected,
    DocumentsChanged,
    Event,
    IndexProblem,
    IndexProgress,
    IndexReady,
)
from vaultwatch.core.memory import freeze_long_lived, release_free_memory
from vaultwatch.core.vault import Vault
from vaultwatch.tui import terminaltext
from vaultwatch.tui.config import AppConfig
from vaultwatch.tui.gcpolicy import TICK_SECONDS as GC_TICK_SECONDS
from vaultwatch.tui.gcpolicy import IdleCollector
from vaultwatch.tui.leaks import release_style_caches
from vaultwatch.tui.messages import (
    AgentCalled,
    AgentPresence,
    IndexChanged,
    IndexLoaded,
    IndexProgressed,
    ProblemReported,
)
from vaultwatch.tui.screens.main import MainScreen
from vaultwatch.tui.screens.palette import NoteCommands
from vaultwatch.tui.services import Services
from vaultwatch.tui.session import Session
from vaultwatch.tui.stylecache import shared_stylesheet
from vaultwatch.tui.widgets.doclist import DocList
from vaultwatch.tui.widgets.filterbar import FilterBar
from vaultwatch.tui.widgets.folders import FolderView
from vaultwatch.tui.widgets.preview import Preview
from vaultwatch.tui.widgets.rowlist import RowList
from vaultwatch.tui.widgets.statusline import StatusLine
from vaultwatch.tui.widgets.triage import PANES

if TYPE_CHECKING:
    from textual.await_complete import AwaitComplete
    from textual.dom import DOMNode
    from textual.theme import Theme

    from vaultwatch.tui.flows.actions import Actions

HOLD_SECONDS = 0.2  # a person's key or edit holds agents' calls back this long, unless answered sooner
ASKING_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)
log = logging.getLogger("vaultwatch.tui")


class VaultwatchApp(App[None]):
    """The TUI over one vault session (and, when given, the MCP host it serves agents with)."""

    CSS_PATH = "app.tcss"
    TITLE = "vaultwatch"
    COMMANDS = App.COMMANDS | {NoteCommands}
    # the main screen's bindings are the everyday keys (tui.screens.main); this one works on
    # every screen
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="app.quit_now"),
    ]

    def __init__(
        self,
        session: Session,
        *,
        host: Any = None,
        host_error: str | None = None,
        watcher: Any = None,
        host_factory: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__()
        terminaltext.install()  # what notes and agents wrote is drawn, never obeyed by the terminal
        # the process's parsed CSS: a second app in one process does not parse it all again
        self.stylesheet = shared_stylesheet(self.get_css_variables())
        self.session = session
        self.config: AppConfig = session.config
        self.services = Services(self, host=host, host_error=host_error, watcher=watcher, host_factory=host_factory)
        self.agent_backlog: deque[AgentAccess] = deque()  # calls not drawn yet (see MainScreen.on_agent_called)
        self._main: MainScreen | None = None
        self.key_targets: dict[int, object] = {}  # id(key event) -> the widget it was sent to
        self._unsubscribe: Callable[[], None] | None = None
        self._frozen = False  # long-lived objects moved out of the collector's way (gc.freeze)
        self.collector = IdleCollector()
        if not self.config.animate:
            self.animation_level = "none"
        self._theme_error: str | None = None
        self.settings = None
        if self.config.settings:  # the person's settings file (tui.settings)
            from vaultwatch.tui import settings  # noqa: PLC0415

            self.settings = settings.load()
        theme = self.config.theme or (self.settings.theme if self.settings is not None else None)
        if theme:
            try:
                self.theme = theme
            except Exception:  # an unknown name: say so once the screen is up, keep the default
                self._theme_error = (
                    f"unknown theme {theme!r}: pick one with ctrl+p › Theme "
                    f"(e.g. {', '.join(sorted(self.available_themes)[:4])})"
                )
        self._saved_theme = self.theme  # a theme picked later is written to the settings file

    def get_default_screen(self) -> Screen:
        self._main = MainScreen(self)
        return self._main

    @property
    def main(self) -> MainScreen:
        """The main screen (the workflow: layout, views, navigation, triage)."""
        assert self._main is not None, "the app has not been composed"
        return self._main

    @property
    def status(self) -> StatusLine:
        return self.main.status

    @property
    def actions(self) -> Actions:
        """The triage actions (see tui.flows.triaging)."""
        return self.main.triage.actions

    @property
    def quitting(self) -> bool:
        return self.services.quitting

    def on_mount(self) -> None:
        self._unsubscribe = self.session.vault.bus.subscribe(self._relay)
        if self.config.tick:
            self.set_interval(self.config.tick, lambda: self.main.tick())
        if self._theme_error:
            self.notify(self._theme_error, severity="warning", title="theme")
        if self.settings is not None:
            self._apply_settings()
        # paint first: the loader's stat/parse loop, the MCP SDK import and the hidden tabs
        # would all delay the first frame
        self.call_after_refresh(self._start_services)

    async def _start_services(self) -> None:
        """What waits for the first frame: the index load, the MCP server, the watcher, the
        hidden tabs' lists."""
        if self.services.started or self.quitting:
            return
        from vaultwatch.tui.flows import review  # noqa: PLC0415  (diffs, revert, approval dialogs: not needed for the first frame)

        await self.mount(review.ReviewHost(self.session.vault))  # attends the approval gate before agents come
        self.services.start()
        await self.main.build_hidden()

    def pop_screen(self) -> AwaitComplete:
        # a closed screen's widgets would stay in memory through Textual's style cache (tui/leaks.py)
        release_style_caches()
        return super().pop_screen()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self.collector.input_seen()
            if isinstance(event, ASKING_EVENTS):  # not a mouse merely passing over the screen
                self.person_acts()
            if isinstance(event, events.Key) and not event.is_forwarded:
                if self._main is not None and self.screen is self._main and self._main.route_key(event):
                    return  # it left the filter, now: the next key goes to the list
                # where Textual sends the key: the widget focused now (see MainScreen.reroute)
                if len(self.key_targets) > 256:
                    self.key_targets.clear()
                self.key_targets[id(event)] = self.focused
        try:
            await super().on_event(event)
        except ScreenStackError:
            # the screens were removed under a key's handler while the app shuts down (quit
            # from outside the queue: a signal, a closed terminal): the key goes with them
            if self.is_running:
                raise

    def on_key(self, event: events.Key) -> None:
        """Before the bindings: a key sent to a widget the focus has since left (see
        MainScreen.reroute)."""
        sent_to = self.key_targets.pop(id(event), None)
        if self._main is not None and self.screen is self._main and self._main.reroute(event, sent_to):
            event.prevent_default()

    def _apply_settings(self) -> None:
        """The settings file's keymap (binding ids, as Textual's set_keymap), its problems said,
        and from now on the theme the person picks kept in it."""
        from vaultwatch.tui import settings  # noqa: PLC0415

        found = self.settings
        assert found is not None
        problems = list(found.problems)
        if found.keymap:
            unknown = sorted(set(found.keymap) - settings.binding_ids())
            if unknown:
                problems.append(
                    f"{found.path}: [keymap] has no binding {', '.join(map(repr, unknown))} "
                    "(the ids are in the help screen, ?)"
                )
            self.set_keymap({k: v for k, v in found.keymap.items() if k not in unknown})
        for problem in problems:
            self.notify(problem, severity="warning", title="settings", markup=False, timeout=10)
        self.theme_changed_signal.subscribe(self, self._theme_picked)

    def _theme_picked(self, theme: Theme) -> None:
        if theme.name == self._saved_theme or self.quitting:
            return
        self._saved_theme = theme.name
        self.run_worker(
            lambda: self._save_theme(theme.name),
            thread=True,
            group="settings",
            exit_on_error=False,
            description="save the theme",
        )

    def keep_tree_width(self, width: int) -> None:
        """Write the folder tree's width to the settings file (when the app reads one), off the
        UI thread; a problem is said, the width stays for this run."""
        if self.settings is None:
            return

        def save() -> None:
            from vaultwatch.tui import settings  # noqa: PLC0415

            problem = settings.save_tree_width(width, self.settings.path if self.settings is not None else None)
            if problem:
                self.from_thread(lambda: self.notify(problem, severity="warning", title="settings", markup=False))

        self.run_worker(save, thread=True, group="settings", exit_on_error=False, description="save the tree width")

    def _save_theme(self, name: str) -> None:
        from vaultwatch.tui import settings  # noqa: PLC0415

        problem = settings.save_theme(name, self.settings.path if self.settings is not None else None)
        if problem:
            self.from_thread(lambda: self.notify(problem, severity="warning", title="settings", markup=False))

    def person_acts(self, seconds: float | None = None) -> None:
        """A person's input is being answered: agents' calls wait a moment (core.live.foreground)."""
        self.session.vault.foreground.hold(HOLD_SECONDS if seconds is None else seconds)

    def answered(self) -> None:
        """The screen shows the answer to the person's last input (unless more is on its way):
        agents' calls may go on at once."""
        if self.main.answered():
            self.session.vault.foreground.release()

    def show_agents(self) -> None:
        """The MCP part of the status line (the server is up, or an agent came or went)."""
        self.main.show_agents()

    # -- core events, from any thread ----------------------------------------------------------
    def _relay(self, event: Event) -> None:
        """Bus subscriber: runs in the publisher's thread, so it only posts messages."""
        if isinstance(event, DocumentsChanged):
            self.post_message(IndexChanged(event.generation))
        elif isinstance(event, AgentAccess):
            self.agent_backlog.append(event)  # deque.append: safe from any thread
            self.post_message(AgentCalled(event))
        elif isinstance(event, AgentConnected):
            self.post_message(AgentPresence(event))
        elif isinstance(event, IndexProgress):
            self.post_message(IndexProgressed(event.phase, event.done, event.total))
        elif isinstance(event, IndexReady):
            self.post_message(IndexLoaded(event.notes, event.seconds))
        elif isinstance(event, IndexProblem):
            self.post_message(ProblemReported(event.message, event.severity, event.lasting))

    # handled in the app's queue, not the main screen's, which carries the compositor's updates
    def on_index_changed(self, message: IndexChanged) -> None:
        self.main.index_changed(message)

    def on_index_progressed(self, message: IndexProgressed) -> None:
        self.main.index_progressed(message)

    def on_index_loaded(self, message: IndexLoaded) -> None:
        self.main.index_loaded(message)

    def on_problem_reported(self, message: ProblemReported) -> None:
        self.main.problem_reported(message)

    def on_agent_called(self, message: AgentCalled) -> None:
        self.main.agent_called(message)

    def on_agent_presence(self, message: AgentPresence) -> None:
        self.main.agent_presence(message)

    def from_thread(self, fn: Callable[..., object], *args: Any) -> None:
        """Run `fn` on the UI thread from a worker thread (dropped while shutting down)."""
        if self.quitting:
            return
        try:
            self.call_from_thread(fn, *args)
        except RuntimeError:  # the app is closing
            pass

    def freeze_long_lived(self) -> bool:
        """Once, after the first complete counts: move the index and what the views derived
        from it out of the collector's way, and start the idle collector. True the first time.

        The index (frozen by core after its load) and what the views derived from it (core's
        name maps: ~100k small lists at 100k notes) live as long as the app. Left to the
        collector, each full collection walks them: 50-70 ms pauses while typing. Freezing
        keeps them out of every later collection."""
        if self._frozen:
            return False
        self._frozen = True
        freeze_long_lived()
        release_free_memory()
        if self.config.idle_gc and not self.quitting:
            self.collector.start()
            self.set_interval(GC_TICK_SECONDS, self.collector.tick, name="idle gc")
        return True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.services.worker_failed(event)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if not self.config.animate and isinstance(event.widget, Input):
            event.widget.cursor_blink = False  # the palette's and dialogs' inputs

    # -- lifecycle ---------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        from vaultwatch.tui.flows import review  # noqa: PLC0415  (as in on_mount)

        question = None if self.quitting else review.quit_question(self)
        if question is not None and not isinstance(self.screen, review.ConfirmScreen):
            # agents' changes wait in dialogs: quitting keeps them as pending changes, so ask first
            self.push_screen(review.ConfirmScreen(question), self._quit_if)
            return
        await self.shutdown()
        self.exit()

    async def _quit_if(self, yes: bool | None) -> None:
        if yes:
            await self.shutdown()
            self.exit()

    async def shutdown(self) -> None:
        """Stop the MCP server and the watcher, and wait for them (bounded); changes still waiting
        for the person become pending changes first, and their agents' answers go out."""
        self.services.quitting = True
        self.collector.stop()
        from vaultwatch.tui.flows import review  # noqa: PLC0415  (as in on_mount)

        review.hand_over(self)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        await self.services.shutdown()

    async def on_unmount(self) -> None:
        if not self.quitting:
            await self.shutdown()

    # -- help, palette, bridge ---------------------------------------------------------------------
    def action_help(self) -> None:
        from vaultwatch.tui.screens.help import HelpScreen  # noqa: PLC0415  (dialogs load when first opened)

        self.push_screen(HelpScreen(self.key_help()))

    def action_copy_bridge_config(self) -> None:
        """Send the configuration to the terminal's clipboard (OSC 52, the only way a terminal
        app has; terminals without it ignore it silently, so the message does not claim it
        arrived) and write it to a file that is there whatever the terminal."""
        text = self.bridge_config()
        self.copy_to_clipboard(text)
        saved = ""
        try:
            target = _state_folder() / "bridge-config.json"
            write_private(target, text + "\n")
            saved = f"; also written to {target}"
        except OSError as exc:
            saved = f"; could not write it to a file: {exc.strerror or exc}"
        self.notify(
            "MCP client configuration (Claude Desktop format) sent to the terminal's clipboard "
            f"(OSC 52: a terminal without clipboard support ignores it){saved}",
            title="bridge",
            markup=False,
        )

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """Screenshots go to ~/Downloads, or to the home folder where there is none (Textual's
        default failed when ~/Downloads did not exist)."""
        if path is None:
            from platformdirs import user_downloads_path  # noqa: PLC0415  (Textual's own choice)

            downloads = user_downloads_path()
            path = str(downloads if downloads.is_dir() else Path.home())
        return super().deliver_screenshot(filename, path, time_format)

    def bridge_config(self) -> str:
        """A Claude Desktop configuration that reaches this app through `vaultwatch bridge`."""
        from vaultwatch.mcp_server import config as client_config  # noqa: PLC0415

        socket = self.config.socket_path and getattr(self.services.host, "socket_path", self.config.socket_path)
        if not socket:  # the default socket: the bridge finds it from the vault
            return client_config.snippet("claude-desktop", self.session.vault.root_real)
        cmd = client_config.command()
        entry = {"command": cmd[0], "args": [*cmd[1:], "bridge", "--socket", socket]}
        return json.dumps({"mcpServers": {"vaultwatch": entry}}, indent=2)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        main = self.main
        for pane_id, cls in PANES:
            yield SystemCommand(
                f"Show {cls.label}", f"Switch to the {cls.label} tab", lambda p=pane_id: main.action_tab(p)
            )
        yield SystemCommand("Focus folder tree", "Move the focus to the folder tree", main.focus_tree)
        yield SystemCommand("Focus preview", "Move the focus to the preview", main.action_focus_preview)
        yield SystemCommand(
            "Toggle activity panel", "Show or hide the agent activity panel", main.action_toggle_activity
        )
        yield SystemCommand(
            "Toggle follow mode", "Preview follows what the selected agent reads and writes", main.action_toggle_follow
        )
        yield SystemCommand("Set as-of date", "Judge staleness as of another date", main.action_as_of)
        yield SystemCommand(
            "Copy bridge config",
            "Copy an MCP client configuration for `vaultwatch bridge`",
            self.action_copy_bridge_config,
        )
        yield SystemCommand("Clear filter", "Show every note again", main.clear_filter)
        yield SystemCommand(
            "Show pending changes (waiting for your approval)",  # found by "pending", "approv" or "wait"
            "Agents' changes kept for you: a dialog nobody answered in time, or made while vaultwatch was closed (P)",
            self.action_pending,
        )
        yield SystemCommand(
            "Show refusals",
            "Agents' changes your rules refused, you declined, or that timed out waiting (x in the Changes view)",
            self.action_refusals,
        )

    def action_pending(self) -> None:
        """The pending changes kept for the person (ctrl+p, or `P`)."""
        from vaultwatch.tui.flows import review  # noqa: PLC0415

        review.open_pending(self)

    def action_refusals(self, call: AgentAccess | None = None) -> None:
        """The agents' changes that did not happen (ctrl+p, `x` in the Changes view, or enter on a
        refused call in the activity panel: `call`, its record selected)."""
        from vaultwatch.tui.screens.refusals import RefusalsScreen  # noqa: PLC0415  (dialogs load when first opened)

        self.push_screen(RefusalsScreen(self.session.vault, call=call))

    def key_help(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """Sections of (key, description) for the help screen, from the bindings themselves."""
        from vaultwatch.tui.screens.approval import ApprovalScreen  # noqa: PLC0415
        from vaultwatch.tui.screens.changes import ChangeScreen, ChangesScreen, ConflictScreen  # noqa: PLC0415
        from vaultwatch.tui.screens.refusals import RefusalsScreen  # noqa: PLC0415
        from vaultwatch.tui.widgets.triage import TrustPane  # noqa: PLC0415

        sections: list[tuple[str, list[type[DOMNode] | DOMNode]]] = [
            ("Everywhere", [MainScreen, self]),
            ("Lists", [DocList, RowList]),
            ("Preview", [Preview]),
            ("Folder tree", [FolderView]),
            ("Filter bar", [FilterBar]),
            ("Changes view and a change's diff", [ChangesScreen, ChangeScreen]),
            ("Refused and declined changes (x in the Changes view)", [RefusalsScreen]),
            ("Approval dialog (an agent's call waits)", [ApprovalScreen]),
            ("Revert refused: the conflict view", [ConflictScreen]),
            ("Trust tab", [TrustPane]),  # last: the tier counts' legend follows it
        ]
        out: list[tuple[str, list[tuple[str, str]]]] = []
        keymap = getattr(self, "_keymap", {}) or {}
        for title, sources in sections:
            rows: dict[str, list[str]] = {}
            ids: dict[str, list[str]] = {}
            for source in sources:
                for binding in source.BINDINGS:
                    if not isinstance(binding, Binding) or not binding.description:
                        continue
                    spec = keymap.get(binding.id, binding.key) if binding.id else binding.key
                    keys = [self.get_key_display(Binding(k.strip(), "")) for k in spec.split(",")]
                    rows.setdefault(binding.description, []).extend(keys)
                    if binding.id:
                        ids.setdefault(binding.description, []).append(binding.id)
            # the binding ids are what [keymap] in settings.toml names (tui.settings)
            out.append(
                (
                    title,
                    [
                        (
                            ", ".join(dict.fromkeys(keys)),
                            what + (f"  ({', '.join(dict.fromkeys(ids[what]))})" if what in ids else ""),
                        )
                        for what, keys in rows.items()
                    ],
                )
            )
        out[0][1].append(
            ("ctrl+p", "command palette: open a note by title, switch panel, as-of date, copy the bridge config, theme")
        )
        out[0][1].append(("mouse", "click rows, headers (sort), folders (scope) and links in the preview"))
        out[-1][1].append(("✗ ◐ ✓", "the tab's counts: unverified, machine-confirmed, human-reviewed"))
        return out


def _state_folder() -> Path:
    """vaultwatch's folder in $XDG_STATE_HOME (default ~/.local/state)."""
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "vaultwatch"


def _log_to_file() -> None:
    """Keep library logging (the MCP SDK configures a stderr handler) off the terminal."""
    root = logging.getLogger()
    if any(isinstance(h, logging.FileHandler) for h in root.handlers):
        return
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "vaultwatch"
    try:
        private_folder(state)
        handler: logging.Handler = logging.FileHandler(private_file(state / "tui.log"), encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _watcher_for(vault: Vault, search: bool) -> Any:
    """The core watcher for this vault (with the full-text index when agents can search)."""
    from vaultwatch.core.live.watch import VaultWatcher  # noqa: PLC0415  (off the way to the first frame)

    return VaultWatcher(vault, search=search)


def make_app(vault: Vault, *, config: AppConfig | None = None) -> VaultwatchApp:
    """Build the session (and the watcher, and how to build the MCP host, that the config asks
    for) and the app. The host is built by the app after its first frame."""
    config = config or AppConfig()
    if config.allow_nested:  # the person said the folder is a vault of its own: it keeps a journal
        vault.nested_allowed = True
    session = Session(vault, config)
    host_factory = None
    if config.mcp:
        _log_to_file()

        def host_factory() -> Any:
            from vaultwatch.mcp_server.host import McpHost  # noqa: PLC0415  (imports the SDK only when serving)

            return McpHost(
                vault,
                socket_path=config.socket_path,
                compat=config.compat,
                read_only=config.read_only,
                audit_log=config.audit_log,
                http=config.http,
                kind="tui",
                allow_nested=config.allow_nested,
                **config.server_options,
            )

    watcher = None
    if config.watch:
        try:
            watcher = _watcher_for(vault, search=config.mcp)
        except Exception as exc:
            log.warning("watcher unavailable: %r", exc)
    return VaultwatchApp(session, watcher=watcher, host_factory=host_factory)
