"""The state a full-text index's writer and readers share: progress, the change queue's counts,
the path -> rowid map, and how far the index lags the live index."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from vaultwatch.core import handoffs
from vaultwatch.core.events import DocumentsChanged, Event, IndexReady
from vaultwatch.core.live.follower import ChangeFollower
from vaultwatch.core.rests import Rests
from vaultwatch.core.search.ftscounts import Counts
from vaultwatch.core.search.readers import ReaderPool
from vaultwatch.core.search.results import SearchStatus
from vaultwatch.core.search.reuse import LastAnswer

QUICK_BATCH = 50  # notes: a change this small is indexed with quick hand-offs (see SearchBuilder._loop)

if TYPE_CHECKING:  # vault.py imports this module's importers
    from vaultwatch.core.search.ftsprep import FieldTokens
    from vaultwatch.core.vault import Vault


class IndexState(ChangeFollower):
    """A full-text index's shared state (`core.search.fulltext.SearchIndex` is the whole index)."""

    def __init__(self, vault: Vault, db_path: Path) -> None:
        super().__init__(vault)
        self.db_path = db_path
        self._enqueued = 0
        self._done_seq = 0
        self._quick = 0  # quick blocks (core.handoffs) begun for queued outside edits, ended once indexed
        self._resync = False
        self._readers = ReaderPool(db_path)  # the readers' connections (core.search.readers)
        self._epoch = 0  # bumped when the database file is replaced
        self._rowids: dict[str, int] = {}  # path -> FTS rowid (for scoped searches)
        self._writes = 0  # committed write transactions (invalidates readers' scope tables)
        self._tokens: FieldTokens | None = None  # the writer thread's field tokeniser (live updates)
        self._synced_generation = -1
        self._stats: tuple | None = None  # (writes, note count, {term: (document frequency, tokens)})
        # (writes, counts of the common words) as a whole sync left the index, or a write moved them
        # (core.search.ftscounts)
        self._counts: tuple[int, Counts] | None = None
        self._count_at = 0.0  # monotonic time from which the writer may count them again, when dropped or moved
        self._counts_moved = False  # whether `_counts` are a write's moves of the last count (ftscounts.Tally)
        self._last = LastAnswer()  # the last search's answer: see SearchQueries.search
        self._rests = Rests()  # a big sync's rests while calls come (SearchBuilder._pace); `hurry` ends them
        self._pacing = False  # whether the build under way rests while calls come (SearchBuilder._sync_all)
        self.ready = False
        self.done = 0
        self.total = 0
        self.problem: str | None = None
        self.build_seconds: float | None = None
        self._pool_cpu = [
            0.0
        ]  # CPU seconds of the build's processes (ftsprep's pool, ftsfirst's writer), as they report it
        self.build_pooled = False  # whether the last build's notes were prepared by processes
        self.build_elsewhere = False  # whether the last build was written by a process of its own (ftsfirst)
        self.build_pool_cpu_seconds = 0.0  # the last build's (the process's own CPU time leaves them out)

    thread_name = "vaultwatch-search"

    def hurry(self) -> None:
        """Have the build under way go on without its rests: a search waits for it."""
        self._rests.hurry()

    def _queued(self, event: DocumentsChanged, count: int) -> None:
        self._enqueued += 1
        if event.source == "disk" and count <= QUICK_BATCH and self.ready and not self._stop.is_set():
            # an outside edit that someone may be polling search for: quick hand-offs from now
            # until the writer has indexed it, so that neither its wake-up nor its work waits out
            # the switch interval while another thread runs Python (core.handoffs). The agent's own
            # writes are left out: the agent's next call runs right then, and alternating with
            # the indexing every QUICK_S would slow that call down (the writer still indexes a
            # small batch with quick hand-offs once it runs: see SearchBuilder._loop).
            handoffs.begin_quick()
            self._quick += 1

    def _end_quick(self) -> None:
        """End the quick blocks of the batches queued so far (called under `_cond`)."""
        while self._quick:
            self._quick -= 1
            handoffs.end_quick()

    def _on_event(self, event: Event) -> None:
        super()._on_event(event)
        if isinstance(event, IndexReady) and event.generation > self._synced_generation:
            with self._cond:  # a reload: compare everything again
                self._resync = True
                self._enqueued += 1
                self._cond.notify_all()

    @property
    def pending(self) -> int:
        """Change batches received but not yet in the full-text index."""
        return self._enqueued - self._done_seq

    def wait_synced(self, deadline: float) -> bool:
        """Wait until every change batch received so far is indexed; False at the deadline."""
        if not self.ready:
            return True  # not built yet: searches say so themselves
        with self._cond:
            target = self._enqueued
            while self._done_seq < target:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(left)
        return True

    def status(self) -> SearchStatus:
        """How far the full-text index has got."""
        return SearchStatus(self.ready, self.done, self.total, self.pending, self.problem)
