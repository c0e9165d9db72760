"""One running app shared by a module's tests, each of them handed it in its start state.

An app's start (compose, stylesheet, first layout and render, the lists' first queries) is most
of a short TUI test's cost. Tests that only type in the bar, move between views and look can
share one app: before each of them the app is brought back (screens closed, the bar emptied, the
first tab's list focused, the first note previewed with nothing to go back to, folders opened
since closed again) and then compared with the state it started in, by everything a test looks
at. Any difference and a fresh app is started instead, so no test ever sees another's traces and
the order of the tests does not matter.

A module using it marks its tests to run in one event loop (the app's) and on one xdist worker:

    pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("name")]
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from textual.app import active_app
from textual.message_pump import active_message_pump
from textual.pilot import Pilot
from textual.widgets import Input

from vaultwatch.tui.app import VaultwatchApp
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.folders import FolderView
from vaultwatch.tui.widgets.footer import KeyFooter
from vaultwatch.tui.widgets.statusline import StatusLine


def _expanded(tree: FolderView) -> frozenset[str]:
    out: set[str] = set()
    stack = [tree.root]
    while stack:
        node = stack.pop()
        if node.is_expanded:
            out.add(str(node.data))
            stack.extend(node.children)
    return frozenset(out)


def _patched(app: VaultwatchApp) -> list[tuple[str, str]]:
    """Methods a test replaced on a widget itself (not through monkeypatch)."""
    return [
        (type(node).__name__, name)
        for node in (app, *app.walk_children(with_self=False))
        for name, value in vars(node).items()
        if callable(value)
        and callable(getattr(type(node), name, None))
        # monkeypatch's undo leaves the method it took, bound to the widget: that is no change
        and not (getattr(value, "__self__", None) is node and value.__func__ is getattr(type(node), name))
    ]


def app_state(app: VaultwatchApp) -> dict[str, Any]:
    """What the tests look at, as plain values: equal for two apps in the same state."""
    main = app.main
    preview = main.preview
    tree = app.query_one(FolderView)
    return {
        "screens": [type(screen).__name__ for screen in app.screen_stack],
        "size": tuple(app.size),
        "theme": app.theme,
        "focused": None if app.focused is None else (type(app.focused).__name__, app.focused.id),
        "filter": app.query_one("#filter-input", Input).value,
        "searching": main.searcher.active,
        "reading": main.reading,
        "tab": main.active_pane.id,
        "lists": [
            (
                pane.id,
                getattr(pane.rowlist, "sort", None),
                pane.rowlist.cursor,
                int(pane.rowlist.scroll_y),
                len(pane.rowlist.rows),
            )
            for pane in main.panes
        ],
        "rows": [row.path for row in main.active_list.rows],
        "tabs": [str(main.tabs.get_tab(pane.id).label) for pane in main.panes],
        "preview": (preview.path, tuple(preview.history), int(preview.scroll_y)),
        "tree": (_expanded(tree), None if tree.cursor_node is None else tree.cursor_node.data, main.scope),
        "status": app.query_one(StatusLine).plain,
        "footer": app.query_one(KeyFooter).keys,
        "activity": (len(main.activity.calls.rows), main.activity.following),
        "patched": _patched(app),
    }


class SharedApp:
    """Hands out one app (built by `build`, run at `size`) in its start state, test after test."""

    def __init__(self, build: Callable[[], VaultwatchApp], size: tuple[int, int]) -> None:
        self.build = build
        self.size = size
        self.starts = 0  # apps started (one, unless a test left what the reset cannot undo)
        self.left: list[str] = []  # what made each restart: the parts of the state that differed
        self._stack: AsyncExitStack | None = None
        self._context = contextvars.copy_context()
        self._app: VaultwatchApp | None = None
        self._pilot: Pilot | None = None
        self._start: dict[str, Any] = {}

    async def ready(self) -> tuple[VaultwatchApp, Pilot]:
        """The app and its pilot, in the state a fresh app starts in."""
        return await self._ready()

    @staticmethod
    def _enter(app: VaultwatchApp) -> None:
        """What Textual's run_test sets for the code under it. The test's code runs in a context of
        its own, and parts of Textual look the running app up there: Pilot.pause() lays out a
        screen with pending changes right in its caller's context, and without these set that
        layout raised LookupError, which ended the app while the caller waited on it."""
        active_app.set(app)
        active_message_pump.set(app)

    async def _ready(self) -> tuple[VaultwatchApp, Pilot]:
        if self._app is not None and self._pilot is not None:
            self._enter(self._app)
            await self._reset(self._app, self._pilot)
            now = app_state(self._app)
            if now == self._start:
                return self._app, self._pilot
            self.left.append(", ".join(f"{k}: {now[k]!r} != {v!r}" for k, v in self._start.items() if now[k] != v))
            await self.close()
        return await self._open()

    async def _open(self) -> tuple[VaultwatchApp, Pilot]:
        app = self.build()
        stack = AsyncExitStack()
        # Textual sets its context variables on entering the app's run and resets them on leaving,
        # which must happen in the same context: both run in this app's own, not in the tests'
        self._context = contextvars.copy_context()
        pilot = await asyncio.create_task(
            stack.enter_async_context(app.run_test(size=self.size)), context=self._context
        )
        self._stack = stack
        self._enter(app)
        await settle(app)
        await pilot.pause()
        self.starts += 1
        self._app, self._pilot, self._start = app, pilot, app_state(app)
        return app, pilot

    async def _reset(self, app: VaultwatchApp, pilot: Pilot) -> None:
        start = self._start
        while len(app.screen_stack) > 1:
            app.pop_screen()
            await settle(app)
        if tuple(app.size) != start["size"]:
            await pilot.resize_terminal(*start["size"])
        field = app.query_one("#filter-input", Input)
        if field.value:
            field.value = ""
            await settle(app)
        main = app.main
        if main.reading:
            main.action_focus_list()
        if main.active_pane.id != start["tab"]:
            main.tabs.active = start["tab"]
            await settle(app)
        main.active_list.focus()
        await settle(app)
        if main.preview.path != start["preview"][0]:
            main.open_note(start["preview"][0])
            await settle(app)
        if main.preview.history:
            main.preview.history.clear()  # as at the start: nothing to go back to
            app.refresh_bindings()
            await settle(app)
        tree = app.query_one(FolderView)
        opened = _expanded(tree) - start["tree"][0]
        for node in list(tree.root.children):
            stack = [node]
            while stack:
                node = stack.pop()
                if str(node.data) in opened:
                    node.collapse()
                stack.extend(node.children)
        await settle(app)
        await pilot.pause()

    async def close(self) -> None:
        if self._stack is not None:
            await asyncio.create_task(self._stack.aclose(), context=self._context)
        self._stack = self._app = self._pilot = None
