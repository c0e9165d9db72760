"""The app's long-running services: the MCP server and the watcher, started after the first
frame and stopped (bounded) on quit.

The MCP server has a thread and an asyncio loop of its own: an agent's request never holds
up a frame or a keystroke for longer than the interpreter's 5 ms thread switch. The host is
built in that thread, after the first frame: importing the MCP SDK takes ~0.5 s. A host that
cannot be built (a second vaultwatch on the vault) leaves the TUI working and says why in the
status line. Worker failures of every group are reported in one place (`worker_failed`).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from vaultwatch.tui.app import VaultwatchApp

log = logging.getLogger("vaultwatch.tui")
ANSWER_BUDGET_S = 3.0  # s: how long quitting waits for the agents' calls in flight to be answered
ANSWER_LOOK_S = 0.02  # s: how often it looks


class Services:
    """The MCP host (or how to build it) and the watcher of one app."""

    def __init__(
        self,
        app: VaultwatchApp,
        *,
        host: Any = None,
        host_error: str | None = None,
        watcher: Any = None,
        host_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.app = app
        self.host = host
        self.host_error = host_error
        self.watcher = watcher
        self.host_factory = host_factory  # builds the host after the first frame (see _serve)
        self.quitting = False
        self.started = False  # the services that wait for the first frame have been started
        self._mcp_worker: Worker | None = None

    @property
    def serving(self) -> bool:
        """An MCP host exists or will be built."""
        return self.host is not None or self.host_factory is not None

    def start(self) -> None:
        """Start the index load (unless loaded), the MCP server and the watcher (once)."""
        if self.started or self.quitting:
            return
        self.started = True
        vault = self.app.session.vault
        if not vault.wait_ready(0):
            _prestart_scan_helpers()
            if self.watcher is not None:  # the load's walk is checked once the watcher's watches are in place
                vault.prepare_watching()
            vault.start()
        # what a killed run left half done (a rename, a revert) is finished or rolled back, with or
        # without a server or a watcher (core: once per vault, in the background after the first index)
        vault.finish_interrupted_soon()
        if self.serving:
            self._mcp_worker = self.app.run_worker(
                self._serve, thread=True, exclusive=True, group="mcp", exit_on_error=False, description="MCP server"
            )
        if self.watcher is not None:
            self.app.run_worker(
                self.watcher.run(), exclusive=True, group="watch", exit_on_error=False, description="watcher"
            )
        if self.app.session.config.semantic:  # a no-op without the extra; numpy imports off the UI thread
            self.app.run_worker(
                vault.start_vectors, thread=True, group="vectors", exit_on_error=False, description="note vectors"
            )

    def _serve(self) -> None:
        """Serve MCP on the host's socket until quit (errors land in worker_failed)."""
        app = self.app
        if self.host is None and self.host_factory is not None:
            try:
                self.host = self.host_factory()
            except Exception as exc:
                self.host_error = str(exc) or type(exc).__name__
                app.from_thread(app.status.show_mcp_off, self.host_error)
                return
        host = self.host
        if host is None or self.quitting:
            return

        async def serve() -> None:
            ready = asyncio.Event()

            async def announce() -> None:
                await ready.wait()
                app.from_thread(app.show_agents)

            announcer = asyncio.create_task(announce())
            try:
                await host.run(ready)
            finally:
                announcer.cancel()

        asyncio.run(serve())

    def worker_failed(self, event: Worker.StateChanged) -> None:
        """The one place worker failures are reported."""
        worker = event.worker
        if event.state != WorkerState.ERROR or self.quitting:
            return
        error = worker.error
        log.error("worker %s failed: %r", worker.group, error)
        if worker.group == "mcp":
            self.host_error = str(error)
            self.app.status.show_mcp_off(str(error))
            self.app.notify(f"The MCP server stopped: {error}", severity="error", title="MCP")
        else:
            self.app.notify(f"{worker.group} failed: {error}", severity="error")

    async def shutdown(self) -> None:
        """Stop the MCP server and the watcher, and wait for them (bounded)."""
        self.quitting = True
        waits = []
        if self._mcp_worker is not None:
            waits.append(self._mcp_worker)  # it may still be building the host: stop it after
        if self.host is not None:
            await self._answered(self.host)
            self.host.stop()
        if self.watcher is not None:
            try:  # stopping flushes the index cache to disk: not on the UI thread
                await asyncio.wait_for(asyncio.to_thread(self.watcher.stop), 6.0)
            except Exception as exc:
                log.warning("stopping the watcher failed: %r", exc)
        waits.extend(w for w in self.app.workers if w.group == "watch")
        for worker in waits:
            try:
                await asyncio.wait_for(worker.wait(), 2.0)
            except Exception:  # cancelled, failed or slow: it is reported elsewhere; quit anyway
                worker.cancel()
            if worker is self._mcp_worker and self.host is not None:
                self.host.stop()  # built while we waited

    @staticmethod
    async def _answered(host: Any) -> None:
        """Until the agents' calls in flight have been answered (bounded): stopping the server cancels
        them, and an agent whose change was just kept as a pending change must hear its id, not that
        the call may or may not have been applied."""
        deadline = time.monotonic() + ANSWER_BUDGET_S
        while getattr(host, "calls_in_flight", 0) and time.monotonic() < deadline:
            await asyncio.sleep(ANSWER_LOOK_S)


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
