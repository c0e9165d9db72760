"""The full-text index's read connections stay few however many threads search (issue 16).

Each open reader keeps an SQLite page cache of up to 8 MB. Searches from a thread pool (the
TUI's Textual thread workers run on asyncio's default executor, whose threads live on) used to
leave one connection per pool thread that ever searched. Real threads, a real index; the open
connections are counted among the interpreter's live objects, not from the pool's own bookkeeping.
"""

from __future__ import annotations

import gc
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.waiting import wait_until
from vaultwatch.core.search import readers
from vaultwatch.core.vault import Vault

THREADS = 6


@pytest.fixture(autouse=True)
def xdg_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return tmp_path / "xdg-cache"


def open_connections() -> list[sqlite3.Connection]:
    """SQLite connections alive and open in this process (any database). Counted from the
    interpreter's objects: SQLite itself keeps a closed connection's file descriptor while another
    connection to the file holds a lock, so descriptors say less."""
    gc.collect()
    found = []
    for obj in gc.get_objects():
        if isinstance(obj, sqlite3.Connection):
            try:
                obj.total_changes  # noqa: B018 (raises on a closed connection)
            except sqlite3.ProgrammingError:
                continue
            found.append(obj)
    return found


def opened_since(before: list[sqlite3.Connection]) -> int:
    """Connections opened since `before` was taken and still open. Other tests' vaults in this
    process may close theirs meanwhile (their idle readers time out): only new ones count. `before`
    holds its connections, so no new one can take a gone one's id."""
    known = {id(c) for c in before}
    return sum(1 for c in open_connections() if id(c) not in known)


def test_searches_from_many_threads_leave_a_bounded_number_of_readers(demo_vault, clock):
    v = Vault(demo_vault, clock=clock)
    v.load()
    try:
        assert v.wait_search_ready(10)
        before = open_connections()  # the index writer's, the entry cache's
        together = threading.Barrier(THREADS)

        def search(word: str) -> list[str]:
            together.wait(10)  # every pool thread searches, all at the same time
            return [h.path for h in v.search(word, limit=5).hits]

        expected = [h.path for h in v.search("deploy", limit=5).hits]  # (this thread's reader stays idle)
        assert expected
        with ThreadPoolExecutor(THREADS) as pool:  # its threads stay alive between the rounds
            for _round in range(3):
                got = list(pool.map(search, ["deploy"] * THREADS))
                assert got == [expected] * THREADS  # each thread's answer is right
                readers_open = opened_since(before)
                assert readers_open <= readers.IDLE, f"{readers_open} read connections left open"
        assert v._search._readers.open_count <= readers.IDLE
        v._search.close_reader()
        assert opened_since(before) == 0
    finally:
        v.stop()


def test_idle_readers_are_closed_once_nobody_searched_for_a_while(demo_vault, clock):
    """Issue 16: the idle connections (and their page caches) stayed open for good after a burst
    of searches. The idle timeout is long while the burst's readers are counted (a short one
    raced the count on a loaded machine) and short afterwards: the waiting closer takes it up."""
    v = Vault(demo_vault, clock=clock)
    v.load()
    try:
        assert v.wait_search_ready(10)
        pool = v._search._readers
        pool.idle_close_s = 3600.0  # nothing is closed for being idle while the burst's readers are counted
        pool.close_idle()  # the first search's reader: the burst's are counted from none
        before = open_connections()
        assert pool.open_count == 0
        expected = [h.path for h in v.search("deploy", limit=5).hits]
        with ThreadPoolExecutor(2) as threads:  # two searches at once: two idle readers after
            together = threading.Barrier(2)

            def search(word: str) -> list[str]:
                together.wait(10)
                return [h.path for h in v.search(word, limit=5).hits]

            assert list(threads.map(search, ["deploy"] * 2)) == [expected] * 2
        assert opened_since(before) == pool.open_count >= 1
        pool.idle_close_s = 0.3  # the closer, waiting out the hour, looks again
        wait_until(lambda: pool.open_count == 0, what="the idle readers closed")
        assert opened_since(before) == 0
        assert v.search("runbook", limit=5).hits  # a new reader when asked
        assert pool.open_count == 1
    finally:
        v.stop()
