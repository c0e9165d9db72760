"""Memory housekeeping: the C heap trim, and per-generation structures the garbage collector
never has to walk (lists of 100k items made every full collection, and the frame it fell in,
milliseconds longer)."""
from __future__ import annotations

import gc
from array import array

from core.memory import release_free_memory
from core.query import Query, pairs


def test_release_free_memory_is_safe_to_call() -> None:
    assert release_free_memory() in (True, False)


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
