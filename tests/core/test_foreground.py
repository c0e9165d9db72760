"""core.foreground: a person's claim on the process, which agents' calls wait for (bounded)."""
from __future__ import annotations

import asyncio
import threading
import time

from core.foreground import Foreground


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_a_hold_expires_extends_and_is_released() -> None:
    clock = FakeClock()
    fg = Foreground(clock)
    assert fg.remaining() == 0.0
    fg.hold(0.2)
    assert round(fg.remaining(), 6) == 0.2
    fg.hold(0.1)  # never shortens a claim
    assert round(fg.remaining(), 6) == 0.2
    clock.now += 0.15
    assert round(fg.remaining(), 3) == 0.05
    fg.hold(1.0)
    assert round(fg.remaining(), 6) == 1.0
    fg.release()
    assert fg.remaining() == 0.0
    fg.hold(0.3)
    clock.now += 0.31
    assert fg.remaining() == 0.0


def test_no_wait_when_nobody_holds_it() -> None:
    fg = Foreground()
    assert asyncio.run(fg.wait_turn(1.0)) == 0.0
    assert fg.waits == 0


def test_a_call_waits_until_the_release() -> None:
    fg = Foreground()
    fg.hold(30.0)
    threading.Timer(0.05, fg.release).start()
    waited = asyncio.run(fg.wait_turn(5.0))
    assert 0.04 <= waited < 5.0 and fg.waits == 1


def test_a_call_never_waits_longer_than_its_bound() -> None:
    fg = Foreground()
    fg.hold(30.0)
    started = time.monotonic()
    waited = asyncio.run(fg.wait_turn(0.1))
    assert 0.1 <= waited < 1.0 and time.monotonic() - started < 1.0
    assert fg.remaining() > 29  # the claim itself is untouched
