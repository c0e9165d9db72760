"""Memory housekeeping: the C heap trim, and per-generation structures the garbage collector
never has to walk (lists of 100k items made every full collection, and the frame it fell in,
milliseconds longer)."""
from __future__ import annotations

import ctypes
import gc
import os
import sys
from array import array

import pytest

from core.memory import release_free_memory
from core.query.listing import Query, pairs


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _has_malloc_trim() -> bool:
    try:
        return sys.platform.startswith("linux") and hasattr(ctypes.CDLL(None), "malloc_trim")
    except OSError:
        return False


@pytest.mark.skipif(not _has_malloc_trim(), reason="the C library has no malloc_trim (not glibc): nothing to trim")
def test_release_free_memory_hands_freed_heap_pages_back() -> None:
    """~48 MB of C-heap buffers freed between pinned survivors stay resident (glibc trims only the
    heap's top by itself) until release_free_memory gives the free pages back."""
    blocks, pinned = [], []
    for i in range(6000):
        blocks.append(bytearray(b"x" * 8000))  # > 512 bytes: malloc, not pymalloc; filled: resident
        if i % 50 == 0:
            pinned.append(bytearray(b"p" * 8000))  # keeps the freed space in the middle of the heap
    del blocks
    gc.collect()
    before = _rss_bytes()
    assert release_free_memory() is True
    dropped = before - _rss_bytes()
    assert dropped > 20 * 2**20, f"RSS dropped by {dropped / 2**20:.1f} MB only"
    assert len(pinned) == 120


def test_big_query_structures_are_invisible_to_the_collector(demo) -> None:
    snap = demo.snapshot
    for q in (Query(words=("deploy",)), Query(pattern="**/*Runbook*.md"),
              Query(filters=pairs({"tag": "x", "type": "howto", "status": "deprecated"}))):
        demo.list(q)
    cache = snap._cache
    hay = next(v for k, v in cache.items() if type(k) is tuple and k[0] == "hay")
    blob, starts = next(v for k, v in cache.items() if type(k) is tuple and k[0] == "joined")
    inverted = [v for k, v in cache.items() if type(k) is tuple and k[0] == "inverted"]
    assert type(hay) is tuple and type(starts) is array and inverted
    assert all(type(lst) is array for inv in inverted for lst in inv.values())
    gc.collect()
    assert not gc.is_tracked(hay)  # a tuple of strings: untracked once the collector saw it
    # arrays are tracked (for their type) but hold no references the collector could walk
    assert [type(x) for x in gc.get_referents(starts)] in ([], [type])
    assert all(gc.get_referents(lst) in ([], [array]) for inv in inverted for lst in inv.values())


def test_collector_pauses_are_counted_across_threads() -> None:
    """A pause ending in one thread leaves collection off while another thread still holds one;
    the last one restores what the first found."""
    import threading

    from core.memory import collector_pauses, collector_paused, pause_collector, resume_collector

    was = gc.isenabled()
    gc.enable()
    try:
        entered, release = threading.Event(), threading.Event()

        def load() -> None:
            with collector_paused():
                entered.set()
                release.wait(10)

        t = threading.Thread(target=load)
        t.start()
        assert entered.wait(10) and not gc.isenabled()
        pause_collector()  # this thread's pause outlives the load's
        release.set()
        t.join(10)
        assert collector_pauses() == 1 and not gc.isenabled()
        resume_collector()
        assert collector_pauses() == 0 and gc.isenabled()
        with pytest.raises(RuntimeError):
            resume_collector()
        gc.disable()  # collection that was off before the first pause stays off after the last
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
