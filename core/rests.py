"""Background work that gives way to a client's calls: the rests it takes between its steps.

The entry cache's write and a first full-text build run in threads of the process that answers
the client. Run whole, such work holds the interpreter in turns with the thread answering, and every
call waits out the switch interval to get it back. So the work goes a step at a time and calls
`Rests.rest` between steps: while `busy()` says calls are coming (`Vault.answering`, which the server
sets), it rests a moment, unless something waits for the work (`hurry`) or it has rested its budget.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable


class Rests:
    """The rests of one piece of background work at a time (its thread calls `rest`, `start`, `end`)."""

    def __init__(self) -> None:
        self._hurry = threading.Event()
        self.rested = 0.0  # seconds rested since `start`

    def hurry(self) -> None:
        """No more rests until `end`: something waits for the work (thread-safe)."""
        self._hurry.set()

    def start(self) -> None:
        """A new piece of work: its rests count from nothing."""
        self.rested = 0.0

    def end(self) -> None:
        """The work is over: the next one rests again, unless hurried anew."""
        self._hurry.clear()

    def rest(self, busy: Callable[[], bool] | None, seconds: float, budget: float = math.inf) -> bool:
        """Rest `seconds` if `busy()` says calls are coming, unless hurried or `budget` seconds rested already;
        whether it rested. (A hurry during the rest ends it at once.)"""
        if busy is not None and not self._hurry.is_set() and self.rested < budget and busy():
            self._hurry.wait(seconds)
            self.rested += seconds
            return True
        return False

    def wait_pause(
        self, busy: Callable[[], bool] | None, step: float, budget: float, stopped: Callable[[], bool] = lambda: False
    ) -> None:
        """Rest `step` at a time while `busy()` says calls are coming, `budget` seconds in all at most, until
        hurried or `stopped()`: work that should not begin while a client's calls come."""
        while not stopped() and self.rest(busy, step, budget):
            pass
