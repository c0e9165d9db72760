"""The core event bus: index changes, progress, errors and agent access, as typed events.

Subscribers are called synchronously in the publisher's thread, so they must be quick and
thread-safe (the TUI posts a message; the MCP layer sets a flag). A subscriber that raises
is reported on stderr once and never breaks the publisher.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Event:
    """Base class of every bus event."""


@dataclass(frozen=True, slots=True)
class DocumentsChanged(Event):
    """The index moved to `generation`; the listed paths were added, changed or removed. `moved`:
    the (removed, added) pairs the watcher saw keep their identity (same file or folder under a new
    name: a `mv`, a file manager's or Obsidian's rename), each path also listed as removed and added."""

    generation: int
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    source: str = "disk"  # "disk" (watcher or scan), or the writer ("agent:<name>", "human")
    moved: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ExcludedGone(Event):
    """Paths the watcher saw go that the vault's ignore rules keep out of the index: the index did
    not change (no DocumentsChanged), but what watches folders by name (a rule naming one of them,
    core.review.rulefolders) looks again."""

    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IndexProgress(Event):
    """Start-up or rescan progress: `done` of `total` files in `phase`."""

    phase: str
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class IndexReady(Event):
    """The index holds a complete listing."""

    generation: int
    notes: int
    seconds: float


@dataclass(frozen=True, slots=True)
class WatcherReady(Event):
    """The OS watches on the vault are in place (again): from now on an outside edit is seen.

    Published once per watch session (at start, and after the root came back or the watcher
    restarted); `polling` when the watcher fell back to polling the folder."""

    polling: bool = False


@dataclass(frozen=True, slots=True)
class IndexProblem(Event):
    """Something the user should know about (vault vanished, cache rebuilt, watcher overflow)."""

    message: str
    severity: str = "warning"
    lasting: bool = False  # true while it stands (a rule matching nothing): a view keeps it until dismissed


@dataclass(frozen=True, slots=True)
class AgentAccess(Event):
    """One MCP tool call by one agent, as the human sees it in the activity panel."""

    agent: str
    session: str
    tool: str
    summary: str
    arguments: dict[str, Any] = field(default_factory=dict)
    paths: tuple[str, ...] = ()
    result_count: int | None = None
    duration_ms: float = 0.0
    error: str | None = None
    at: float = 0.0  # epoch seconds: when the call was answered
    write: bool = False
    diff_summary: str | None = None
    change_ids: tuple[int, ...] = ()  # the change journal's ids of what this call changed
    asked_at: float = 0.0  # epoch seconds: when the agent's call came (0: not known, read `at`)


@dataclass(frozen=True, slots=True)
class AgentConnected(Event):
    """An agent session appeared (`connected`) or went away."""

    agent: str
    session: str
    connected: bool


Subscriber = Callable[[Event], None]


class EventBus:
    """Thread-safe publish/subscribe of core events."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: tuple[Subscriber, ...] = ()

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Register `fn`; returns a function that unsubscribes it."""
        with self._lock:
            self._subs = (*self._subs, fn)

        def unsubscribe() -> None:
            with self._lock:
                self._subs = tuple(s for s in self._subs if s is not fn)

        return unsubscribe

    def publish(self, event: Event) -> None:
        """Deliver `event` to every subscriber, in subscription order."""
        for fn in self._subs:
            try:
                fn(event)
            except Exception as exc:  # a broken view must not break the index
                print(f"vaultwatch: event subscriber {fn!r} failed: {exc!r}", file=sys.stderr)
