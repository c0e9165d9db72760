"""Running the views' queries off the UI thread: the visible list's coalescing scheduler and
the tab counts.

`ListScheduler` runs the visible pane's query: one query thread at a time and, when it
finishes, it takes only the newest request made meanwhile. Typing fast never queues a query
per key, and two 100k-note queries never compete for the interpreter. A small vault's query
(a few ms) runs inline instead: handing it to a thread and back costs more than that while
agents keep the other threads busy.

`count_all` is the tab counts' work (every tab's count queries, and on a new index
generation the vault's totals, the folder tree and the link name maps); it runs in a thread
worker of the main screen and touches no widget.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vaultwatch.core.errors import VaultError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.links import resolve as linkmap
from vaultwatch.core.query import problems
from vaultwatch.core.query.folders import folder_tree
from vaultwatch.core.query.listing import Query
from vaultwatch.tui.messages import ListFailed, ListReady
from vaultwatch.tui.session import Session
from vaultwatch.tui.widgets.triage import TriagePane, rows_for

if TYPE_CHECKING:
    from textual.dom import DOMNode

INLINE_QUERY_NOTES = 20_000  # up to this many notes a list query takes a few ms: run it inline


@dataclass(frozen=True, slots=True)
class ListRequest:
    """One run of a pane's query: the newest request wins, older ones are dropped unshown."""

    seq: int
    pane: TriagePane
    query: Query
    snapshot: Snapshot
    keep: bool


class ListScheduler:
    """The visible list's query: one thread at a time, the newest request wins.

    `owner` is the node whose thread workers run the queries and which receives `ListReady`
    and `ListFailed` (it shows a result only when `current(seq)` says it is the newest);
    `show` draws an inline query's rows and `failed` shows an inline query's error."""

    def __init__(
        self,
        owner: DOMNode,
        session: Session,
        *,
        show: Callable[[TriagePane, Sequence[Any], int, bool], None],
        failed: Callable[[str], None],
        quitting: Callable[[], bool],
    ) -> None:
        self._owner = owner
        self._session = session
        self._show = show
        self._failed = failed
        self._quitting = quitting
        self._lock = threading.Lock()
        self._next: ListRequest | None = None
        self._busy = False
        self._seq = 0
        self._reset = False  # a request to show the list from its top is not shown yet

    @property
    def pending(self) -> bool:
        """A query is running or waiting to run."""
        return self._busy or self._next is not None

    def current(self, seq: int) -> bool:
        """Whether `seq` is the newest request (an older one's result is not shown)."""
        return seq == self._seq

    def shown(self) -> None:
        """The newest request's rows are on the list."""
        self._reset = False

    def request(self, pane: TriagePane, query: Query, *, keep: bool) -> None:
        """Run `query` for `pane` on the current snapshot (coalesced with requests meanwhile)."""
        # a newer request that supersedes one made to reset the list (a new filter) resets it too
        keep = keep and not self._reset
        self._reset = not keep
        self._seq += 1
        request = ListRequest(self._seq, pane, query, self._session.snapshot, keep)
        if request.snapshot.note_count <= INLINE_QUERY_NOTES and not self._busy:
            self._inline(request)
            return
        with self._lock:
            self._next = request
            if self._busy:
                return
            self._busy = True
        self._owner.run_worker(self._work, thread=True, group="query", exit_on_error=False, description="list query")

    def _work(self) -> None:
        try:
            while True:
                with self._lock:
                    request, self._next = self._next, None
                    if request is None or self._quitting():
                        self._busy = False
                        return
                try:
                    result = self._session.query(request.query, request.snapshot)
                except VaultError as exc:
                    self._owner.post_message(ListFailed(request.seq, exc.message))
                    continue
                if self._next is not None:  # superseded while it ran: build no rows for it
                    continue
                rows = rows_for(request.pane, result.entries, request.snapshot.skipped, request.snapshot)
                self._owner.post_message(ListReady(request, rows, result.total))
        except BaseException:
            with self._lock:
                self._busy = False
            raise

    def _inline(self, request: ListRequest) -> None:
        try:
            result = self._session.query(request.query, request.snapshot)
        except VaultError as exc:
            self._failed(exc.message)
            return
        self._reset = False
        rows = rows_for(request.pane, result.entries, request.snapshot.skipped, request.snapshot)
        self._show(request.pane, rows, result.total, request.keep)


def count_all(
    session: Session,
    plans: dict[str, dict[str, Query]],
    snapshot: Snapshot,
    fresh: bool,
    cancelled: Callable[[], bool],
    counters: dict[str, Callable[[Query, Snapshot], int]] | None = None,
) -> tuple[dict[str, dict[str, int]], dict | None] | None:
    """Every tab's counts for `plans` (pane id -> count key -> query), each by the pane's
    counter (`counters`: TriagePane.count; else the query's total), and with `fresh` the
    vault's totals (building the folder tree and the link name maps on the way, off the UI
    thread). None when cancelled."""
    counts: dict[str, dict[str, int]] = {}
    for pane_id, queries in plans.items():
        counts[pane_id] = {}
        count = (counters or {}).get(pane_id)
        for key, q in queries.items():
            try:  # a count needs no order: skip the sort (overdue and title sorts are costly)
                if count is not None:
                    counts[pane_id][key] = count(q, snapshot)
                else:
                    q = replace(q, limit=1, sort="path", descending=False)
                    counts[pane_id][key] = session.query(q, snapshot).total
            except VaultError:
                counts[pane_id][key] = 0
            if cancelled():
                return None
    stats = None
    if fresh:  # the filter and folder scope change tab counts only, not the vault's totals
        stats = session.stats(snapshot)
        # what the Broken tab counts unfiltered, so that the status line and the tab agree
        stats = {**stats, "broken_total": problems.vault_tally(snapshot, session.vault.root).broken}
        folder_tree(snapshot)  # built here, off the UI thread, and memoized on the snapshot
        if not cancelled():
            # the first preview maps note names for its links: do it now, idle, and before
            # the app freezes its long-lived objects (gc.freeze)
            linkmap.warm(snapshot)
    return None if cancelled() else (counts, stats)
