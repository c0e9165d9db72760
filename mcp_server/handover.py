"""The TUI and a headless server hand the vault over without the agent noticing.

- Take-over (the TUI opens on a vault a headless server serves): SIGTERM to the headless server,
  which unlinks its socket (bridges notice at once), finishes its calls in flight and releases
  the vault lock; the TUI takes the lock as soon as it is free and binds. Every bridge finds
  the TUI through the lock and re-initializes there with its client's original `initialize`.
- Hand-back (the TUI quits while agents are connected): before releasing the lock the TUI starts
  a headless server that waits for the lock (`serve --headless --wait-lock`): it imports and
  loads while the TUI shuts down, and serves the moment the lock is free. Bridges follow it.
  It starts with the TUI's guard (--read-only, the approval mode chosen by then, --audit-log) on
  its command line, and takes the guard the TUI kept as well (guardflags.py): never looser.

Only a headless server is ever stopped: a TUI or `serve` someone started is left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Sequence
from typing import Any

from vaultwatch.core import platform
from vaultwatch.core.disk.vaultlock import VaultBusy, VaultLock

from .launch import IDLE_EXIT_DEFAULT, log_path, spawn_headless

TAKEOVER_SECONDS = 10.0  # how long the TUI waits for a headless server to let go
TAKEOVER_MAX_SECONDS = (
    60.0  # ... and longer while the server it stopped is still alive (shutting down on a busy machine)
)
WAIT_LOCK_SECONDS = 15.0  # how long a hand-back server waits for the TUI to let go


def is_headless(busy: VaultBusy) -> bool:
    h = busy.holder
    if h.info.get("kind") == "headless":
        return True
    if h.pid:  # its record may be in another state folder: its command line says it too
        return b"--headless" in (platform.process_cmdline(h.pid) or [])
    return False


async def take_over(lock: VaultLock, busy: VaultBusy, record: dict[str, Any]) -> bool:
    """Stop the headless server holding the vault and take its lock; False when the holder is
    not headless (the caller reports it busy) or does not let go in time."""
    if not is_headless(busy) or not busy.holder.pid:
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(busy.holder.pid, signal.SIGTERM)
    start = time.monotonic()
    while True:
        try:
            lock.acquire(record=record)
            return True
        except VaultBusy as again:
            if again.holder.pid != busy.holder.pid and not is_headless(again):
                raise
            if again.holder.pid and again.holder.pid != busy.holder.pid:  # a bridge restarted one meanwhile
                busy = again
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(again.holder.pid, signal.SIGTERM)
        waited = time.monotonic() - start
        if waited >= TAKEOVER_MAX_SECONDS or (waited >= TAKEOVER_SECONDS and not _alive(busy.holder.pid)):
            return False
        await asyncio.sleep(0.01)


def _alive(pid: int | None) -> bool:
    """Whether the process is still there (a stopped server shutting down on a starved machine:
    in a CI run beside other work one took over 10 s to finish its calls and let go)."""
    return platform.pid_alive(pid)


def hand_back(root_real: str, socket_path: str, serve_args: Sequence[str] = ()) -> None:
    """Start the headless server that takes over when this TUI lets go (see module doc), with
    `serve_args` (the TUI's --tool-prefix, --max-answer-bytes and guard options)."""
    with contextlib.suppress(OSError):
        spawn_headless(
            root_real, socket_path, IDLE_EXIT_DEFAULT, wait_lock=WAIT_LOCK_SECONDS, serve_args=serve_args, by_tui=True
        )


__all__ = ["hand_back", "is_headless", "log_path", "take_over"]
