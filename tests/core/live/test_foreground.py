"""core.live.foreground: a person's claim on the process, which agents' calls wait for (bounded)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from vaultwatch.core.live.foreground import Foreground


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


@pytest.mark.timing
def test_a_call_waits_until_the_release() -> None:
    fg = Foreground()
    fg.hold(30.0)

    async def scenario() -> tuple[float, float]:
        call = asyncio.create_task(fg.wait_turn(5.0))
        while fg.waiting == 0:  # the call is asleep on the claim (not a guess at how long that takes)
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.05)
        assert not call.done()  # still held: it waits for the release, not for a poll
        released = time.monotonic()
        threading.Thread(target=fg.release).start()  # from another thread, as the TUI does
        waited = await call
        return waited, time.monotonic() - released

    waited, after_release = asyncio.run(scenario())
    assert 0.05 <= waited < 5.0 and fg.waits == 1 and fg.waiting == 0
    assert after_release < 2.5  # woken by the release, well before the 5 s bound


@pytest.mark.timing
def test_a_call_never_waits_longer_than_its_bound() -> None:
    fg = Foreground()
    fg.hold(30.0)
    started = time.monotonic()
    waited = asyncio.run(fg.wait_turn(0.1))
    assert 0.1 <= waited < 1.0 and time.monotonic() - started < 1.0
    assert fg.remaining() > 29  # the claim itself is untouched
