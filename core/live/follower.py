"""A background thread that follows the index's changes: the one mechanism behind the full-text
index (core/search/fulltext.py) and the note vectors (core/search/semantic.py).

The follower subscribes to the vault's bus on `start`; every `DocumentsChanged` batch puts its
paths in `_queue` (a dict used as an ordered set) under `_cond` and wakes the thread, which the
subclass runs in `_run` and which drains `_queue` under the same condition. `stop` is safe to call
more than once and from any thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from vaultwatch.core.events import DocumentsChanged, Event

if TYPE_CHECKING:  # vault.py imports the modules that import this one
    from vaultwatch.core.vault import Vault


class ChangeFollower:
    """Queues the paths every index change touches for one daemon thread (`_run`, the subclass's)."""

    thread_name = "vaultwatch-follower"

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._cond = threading.Condition()
        self._queue: dict[str, None] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._unsub: Callable[[], None] | None = None

    def start(self) -> None:
        """Subscribe to index changes and start the thread (idempotent)."""
        if self._thread is not None:
            return
        self._unsub = self.vault.bus.subscribe(self._on_event)
        thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        thread.start()
        self._thread = thread  # only a started thread: `stop` may join it from another thread

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread: it sees the stop flag at its next wake-up and leaves its work whole."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._unsub:
            self._unsub()
        if self._thread is not None:
            self._thread.join(timeout)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, DocumentsChanged):
            paths = (*event.added, *event.changed, *event.removed)
            if paths:
                with self._cond:
                    self._queue.update(dict.fromkeys(paths))
                    self._queued(event, len(paths))
                    self._cond.notify_all()

    def _queued(self, event: DocumentsChanged, count: int) -> None:
        """Called under `_cond` after a batch of `count` paths was queued (where a subclass counts
        batches)."""

    def _run(self) -> None:
        raise NotImplementedError
