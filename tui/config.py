"""What the app runs with besides the vault: MCP hosting, watching, time and test switches."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FIXED_WALL = 1_795_950_000.0  # 2026-11-29 11:00 UTC


@dataclass(frozen=True, slots=True)
class AppConfig:
    """Options of one TUI session.

    mcp: host the MCP server on a Unix socket in the app (off in most tests and snapshots).
    watch: follow outside edits with the core watcher when it is available.
    socket_path / compat / read_only / audit_log / http: handed to the MCP host.
    server_options: build_server's own for the host (max_answer_bytes, tool_prefix).
    allow_nested: serve a folder inside a vault the person has rules for (core.review.nestedvault).
    wall: the wall clock for "how long ago" labels (fixed in snapshots).
    localtime: how activity times are shown (time.gmtime in snapshots: no time-zone leakage).
    tick: seconds between refreshes of those labels; None switches the timer off.
    animate: Textual animations and cursor blink (off in tests).
    theme: a Textual theme name, or None for the default.
    user: who the triage actions write as (`human:<user>`); None: the login name.
    idle_gc: collect garbage between frames when input is quiet (tui.gcpolicy), not mid-frame;
    off in tests, whose process outlives the app.
    settings: read the settings file (tui.settings: theme, keymap) and keep the theme picked
    there; off in tests unless a test turns it on (with a tmp XDG_CONFIG_HOME).
    semantic: with the semantic extra installed, compute note vectors in the background after
    the first frame (hybrid search, the preview's similar notes); off in tests.
    monotonic: seconds that never step, for how long something has been on screen (a dialog's
    decision keys arm a moment after it shows: tui.screens.arming); a test may step its own.
    """

    mcp: bool = True
    watch: bool = True
    socket_path: str | None = None
    compat: frozenset[str] = frozenset()
    read_only: bool = False
    audit_log: str | None = None
    http: str | None = None
    server_options: dict = field(default_factory=dict)
    allow_nested: bool = False
    wall: Callable[[], float] = field(default=time.time)
    localtime: Callable[[float], time.struct_time] = field(default=time.localtime)
    tick: float | None = 5.0
    animate: bool = True
    theme: str | None = None
    user: str | None = None
    idle_gc: bool = True
    settings: bool = True
    semantic: bool = True
    monotonic: Callable[[], float] = field(default=time.monotonic)


def fixed_config(**changes: Any) -> AppConfig:
    """A deterministic config: no server, no watcher, no timers, no blink, a frozen wall clock,
    the garbage collector left as CPython runs it."""
    base: dict[str, Any] = dict(
        mcp=False,
        watch=False,
        tick=None,
        animate=False,
        wall=lambda: FIXED_WALL,
        localtime=time.gmtime,
        idle_gc=False,
        settings=False,
        semantic=False,
    )
    base.update(changes)
    return AppConfig(**base)
