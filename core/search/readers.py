"""The full-text index's read connections: a small pool every thread borrows from.

A read-only SQLite connection keeps its own page cache (up to `CACHE_KIB`) for as long as it is
open. One connection per thread (as it was) meant one cache per thread that ever searched: the
TUI's searches run as Textual thread workers on asyncio's default executor (up to 6 threads on
2 cores, a different one from search to search), the MCP server's on others, so the process
kept a connection and a filled cache for each, for good.

Here a search borrows a connection for its length and gives it back. At most `IDLE` stay open
between searches, the most recently used lent first (its cache is the warm one); searches
running at once beyond that each open one more, closed when given back, so nobody waits.
A connection whose database file was replaced since it opened (`epoch`) is closed, never lent.
The idle ones are closed once none was borrowed for IDLE_CLOSE_S (a thread that waits for it,
started when a connection is given back and gone with the last idle one): else their page
caches would hold SQLite's heap for good after a burst of searches.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vaultwatch.core.memory import release_free_memory
from vaultwatch.core.search.notetext import register_functions

IDLE = 2  # connections kept open between searches (the TUI's and one more, e.g. an agent's)
# each connection's page cache limit (SQLite allocates it as pages are read). Small: the index's
# pages sit in the OS's page cache anyway, so a bigger private cache bought no search CPU and
# only kept SQLite's heap larger after searches (the figures are in the commit that set it)
CACHE_KIB = 2000
IDLE_CLOSE_S = 60.0  # idle connections are closed after this long with no search (as the query tokenizer is dropped)


class Reader:
    """One pooled connection and what it holds besides its cache (the scope temp table's key)."""

    __slots__ = ("con", "epoch", "scope_key")

    def __init__(self, con: sqlite3.Connection, epoch: int) -> None:
        self.con = con
        self.epoch = epoch
        self.scope_key: object = None


class ReaderPool:
    """Read-only connections to one index file, lent to any thread (see the module docstring)."""

    def __init__(self, db_path: Path, idle: int = IDLE) -> None:
        self.db_path = db_path
        self.idle_max = idle
        self._lock = threading.Lock()
        self._idle_close_s = IDLE_CLOSE_S
        self._idle: list[Reader] = []  # most recently given back last
        self.lent = 0  # connections borrowed now
        self._given_back_at = 0.0  # when a connection was last given back (under _lock)
        self._closer: threading.Thread | None = None  # waits to close the idle connections
        self._wake = threading.Event()  # close_idle: the closer looks again (and ends: nothing idle)

    @property
    def idle_close_s(self) -> float:
        """Seconds without a search after which the idle connections are closed."""
        return self._idle_close_s

    @idle_close_s.setter
    def idle_close_s(self, seconds: float) -> None:
        # a closer already waiting out the old timeout looks again: a shorter one takes effect now,
        # not once the old one has run out (under the lock, so the closer cannot miss the wake-up)
        with self._lock:
            self._idle_close_s = seconds
            self._wake.set()

    def _open(self, epoch: int) -> Reader:
        # autocommit: the scope temp table's writes must not open a transaction that would pin
        # this reader to an old snapshot of the index
        con = sqlite3.connect(
            f"file:{self.db_path}?mode=ro", uri=True, timeout=5.0, check_same_thread=False, isolation_level=None
        )
        con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        register_functions(con)
        return Reader(con, epoch)

    @contextmanager
    def borrow(self, epoch: int) -> Iterator[Reader]:
        """A connection to the index as of `epoch`, this thread's alone until the block ends."""
        stale: list[Reader] = []
        reader = None
        with self._lock:
            while self._idle:
                r = self._idle.pop()
                if r.epoch == epoch:
                    reader = r
                    break
                stale.append(r)
            self.lent += 1
        for r in stale:
            r.con.close()
        try:
            got = reader if reader is not None else self._open(epoch)
        except BaseException:
            with self._lock:
                self.lent -= 1
            raise
        try:
            yield got
        finally:
            closer = None
            with self._lock:
                self.lent -= 1
                keep = len(self._idle) < self.idle_max
                if keep:
                    self._idle.append(got)
                    self._given_back_at = time.monotonic()
                    if self._closer is None:
                        closer = self._closer = threading.Thread(
                            target=self._close_when_unused, daemon=True, name="vaultwatch-readers-idle"
                        )
            if not keep:
                got.con.close()
            if closer is not None:
                closer.start()

    def _close_when_unused(self) -> None:
        """Close the idle connections once none was given back for `idle_close_s`."""
        while True:
            with self._lock:
                left = self._given_back_at + self._idle_close_s - time.monotonic()
                if not self._idle or left <= 0:
                    idle, self._idle = self._idle, []
                    self._closer = None
                    break
                self._wake.clear()
            self._wake.wait(left)
        for r in idle:
            r.con.close()
        if idle:
            release_free_memory()  # SQLite gave its page caches back to the C heap

    def close_idle(self) -> None:
        """Close the connections nobody is using (their page caches go with them)."""
        with self._lock:
            idle, self._idle = self._idle, []
        self._wake.set()
        for r in idle:
            r.con.close()

    @property
    def open_count(self) -> int:
        """Connections open now: idle plus lent."""
        with self._lock:
            return len(self._idle) + self.lent
