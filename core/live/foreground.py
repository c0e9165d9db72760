"""The person at the keyboard goes first: while a front end answers a person's input, agents'
calls wait (briefly) before they start.

vaultwatch serves agents from the process that draws the TUI, and CPython runs one thread at
a time: twenty agents calling as fast as they can took most of that time, so a filter edit
or a triage key waited behind their calls. A front end `hold`s the foreground when input
arrives and `release`s it once the screen shows the answer; the MCP layer `wait_turn`s
before each tool call. A hold expires on its own, and a call waits at most `max_wait`
however often the person types: agents are slowed while a person acts, never stopped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by the coroutine that waits: a stdio server's first answer needs no asyncio
    import asyncio


class Foreground:
    """A person's claim on the process. Safe from any thread and any event loop."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until = 0.0
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self.waits = 0  # calls that waited (figures and tests)
        self.waited_s = 0.0

    def hold(self, seconds: float) -> None:
        """Claim the next `seconds` (extends, never shortens, a claim already held)."""
        until = self._clock() + seconds
        if until > self._until:
            self._until = until

    def release(self) -> None:
        """The person's input has been answered: waiting calls go on at once."""
        self._until = 0.0
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop has closed
                pass

    @property
    def waiting(self) -> int:
        """Calls waiting for their turn right now (tests wait on it instead of sleeping)."""
        return len(self._waiters)

    def remaining(self) -> float:
        """Seconds left of the current claim (0.0 when there is none)."""
        return max(0.0, self._until - self._clock())

    async def wait_turn(self, max_wait: float) -> float:
        """Wait while the foreground is held, at most `max_wait` seconds; returns the wait.

        Sleeps until the release (woken from the releasing thread) or the claim's end, not
        in a polling loop: twenty waiting calls must not take the interpreter from the person
        they are waiting for."""
        left = self.remaining()
        if not left:
            return 0.0
        import asyncio  # noqa: PLC0415  (see the import above)

        start = self._clock()
        deadline = start + max_wait
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(waiter)
        try:
            while left:
                budget = deadline - self._clock()
                if budget <= 0:
                    break
                waiter[1].clear()
                try:
                    await asyncio.wait_for(waiter[1].wait(), min(left, budget))
                except TimeoutError:
                    pass
                left = self.remaining()
        finally:
            with self._lock:
                self._waiters.discard(waiter)
        waited = self._clock() - start
        self.waits += 1
        self.waited_s += waited
        return waited
