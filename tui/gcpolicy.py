"""Garbage collection between frames instead of inside them.

CPython collects when allocations pass a threshold, and nothing allocates like a frame being
drawn: while a list scrolls, a young collection (2-5 ms) fell in one frame of four and a full
one (13-20 ms: every Textual Strip carries eight small caches, so a screenful of cached lines
is tens of thousands of objects) in one of thirty, pushing those frames past 16 ms.

`IdleCollector` switches automatic collection off and collects from a timer instead: when no
key or mouse event came for `quiet` seconds, or, whatever the input, once garbage candidates
pile up past BACKSTOP. Reference counting still frees almost everything at once; only
reference cycles wait for a tick. Stopping hands collection back to CPython.

The switching goes through core.memory, the one owner of the collector: the app holds a pause
for as long as it collects itself, so a core load ending meanwhile (its own pause) cannot turn
automatic collection back on under it.

A full collection made while input is quiet is followed by a trim of the C heap
(`core.memory.release_free_memory`): pages that big buffers, dict tables and SQLite's caches
freed since stay resident otherwise (7 MB of a settled 100k-note app; the trim takes
~0.3 ms when little was freed, ~25 ms over 100 MB of fragments).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from vaultwatch.core.memory import collect, pause_collector, pending_objects, release_free_memory, resume_collector

TICK_SECONDS = 0.25
YOUNG_MIN = 700  # CPython's own first threshold: fewer new objects than this are not worth a pass
BACKSTOP = 100_000  # new objects after which a tick collects even while keys keep coming
FULL_EVERY = 10  # every tenth collection looks at the old generation too (as CPython's default)


class IdleCollector:
    """Collects garbage when the user is not typing or scrolling. Not thread-safe: the app's
    loop calls every method."""

    def __init__(self, *, quiet: float = 0.2, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet = quiet
        self._clock = clock
        self._last_input = float("-inf")
        self._ticks_collected = 0
        self.active = False
        self.collections = [0, 0, 0]  # per generation collected (tests and benchmarks read it)
        self.trims = 0  # C heap trims after quiet full collections

    def start(self) -> None:
        """Take collection over from CPython (idempotent)."""
        if self.active:
            return
        pause_collector()
        self.active = True

    def stop(self) -> None:
        """Give collection back to CPython as it was before `start` (idempotent)."""
        if not self.active:
            return
        self.active = False
        resume_collector()

    def input_seen(self) -> None:
        """A key or mouse event arrived: hold collections until it has been quiet a while."""
        self._last_input = self._clock()

    def tick(self) -> int | None:
        """Collect if it is time to; returns the generation collected, or None."""
        if not self.active:
            return None
        pending = pending_objects()
        if pending < YOUNG_MIN:
            return None
        quiet = self._clock() - self._last_input >= self.quiet
        if not quiet and pending < BACKSTOP:
            return None
        self._ticks_collected += 1
        generation = 2 if self._ticks_collected % FULL_EVERY == 0 else 1
        collect(generation)
        self.collections[generation] += 1
        if generation == 2 and quiet:
            release_free_memory()
            self.trims += 1
        return generation
