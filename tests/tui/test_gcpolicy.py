"""Garbage collection between frames (tui.gcpolicy): the collector's rules with a fake clock,
and the running app taking collection over after its load and handing it back on quit."""

from __future__ import annotations

import gc

import pytest

from vaultwatch.core.memory import can_release_free_memory, pause_collector, resident_bytes, resume_collector
from vaultwatch.tui import gcpolicy
from vaultwatch.tui.gcpolicy import IdleCollector
from vaultwatch.tui.idle import settle


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def collector():
    clock = FakeClock()
    c = IdleCollector(quiet=0.2, clock=clock)
    was = gc.isenabled()
    yield c, clock
    c.stop()
    (gc.enable if was else gc.disable)()


def _garbage(n: int = 2 * gcpolicy.YOUNG_MIN) -> list:
    return [[i] for i in range(n)]  # tracked containers: they count as new objects


def test_start_and_stop_hand_collection_over_and_back(collector) -> None:
    c, _ = collector
    gc.enable()
    c.start()
    assert c.active and not gc.isenabled()
    c.start()  # idempotent: stop must still restore "enabled"
    c.stop()
    assert not c.active and gc.isenabled()
    c.stop()
    assert gc.isenabled()


def test_nothing_is_collected_while_input_keeps_coming(collector) -> None:
    c, clock = collector
    c.start()
    keep = _garbage()
    c.input_seen()
    clock.now += 0.1
    assert c.tick() is None
    clock.now += 0.15  # 0.25 s since the last key: quiet
    assert c.tick() == 1
    assert c.collections == [0, 1, 0]
    del keep


def test_too_little_garbage_is_left_for_later(collector) -> None:
    c, clock = collector
    c.start()
    gc.collect()
    clock.now += 10
    assert gc.get_count()[0] < gcpolicy.YOUNG_MIN
    assert c.tick() is None


def test_the_backstop_collects_even_mid_input(collector, monkeypatch) -> None:
    c, clock = collector
    monkeypatch.setattr(gcpolicy, "BACKSTOP", 2 * gcpolicy.YOUNG_MIN)
    c.start()
    c.input_seen()
    keep = _garbage(3 * gcpolicy.YOUNG_MIN)
    assert c.tick() == 1
    del keep


def test_every_tenth_collection_is_a_full_one(collector) -> None:
    c, clock = collector
    c.start()
    got = []
    for _ in range(gcpolicy.FULL_EVERY):
        keep = _garbage()
        clock.now += 1
        got.append(c.tick())
        del keep
    assert got == [1] * (gcpolicy.FULL_EVERY - 1) + [2]


@pytest.mark.skipif(
    not can_release_free_memory(), reason="the C library has no malloc_trim (not glibc): nothing to trim"
)
def test_a_quiet_full_collection_hands_the_freed_c_heap_back(collector) -> None:
    """~48 MB of C-heap buffers freed between pinned survivors stay resident until the next quiet
    full collection's trim."""
    c, clock = collector
    c.start()
    blocks, pinned = [], []
    for i in range(6000):
        blocks.append(bytearray(b"x" * 8000))  # > 512 bytes: malloc, not pymalloc; filled: resident
        if i % 50 == 0:
            pinned.append(bytearray(b"p" * 8000))  # keeps the freed space in the middle of the heap
    del blocks
    before = resident_bytes()
    got = []
    for _ in range(gcpolicy.FULL_EVERY):
        keep = _garbage()
        clock.now += 1
        got.append(c.tick())
        del keep
    assert got[-1] == 2 and c.trims == 1
    dropped = before - resident_bytes()
    assert dropped > 20 * 2**20, f"RSS dropped by {dropped / 2**20:.1f} MB only"
    assert len(pinned) == 120


def test_no_trim_after_a_backstop_collection_mid_input(collector, monkeypatch) -> None:
    c, clock = collector
    monkeypatch.setattr(gcpolicy, "BACKSTOP", 2 * gcpolicy.YOUNG_MIN)
    c.start()
    for _ in range(gcpolicy.FULL_EVERY):
        c.input_seen()
        keep = _garbage(3 * gcpolicy.YOUNG_MIN)
        c.tick()
        del keep
    assert c.collections[2] == 1 and c.trims == 0


def test_a_core_load_overlapping_the_takeover_cannot_turn_collection_back_on(collector) -> None:
    c, _ = collector
    gc.enable()
    pause_collector()  # a core load (another thread) began before the app took over...
    c.start()
    resume_collector()  # ...and ended after it: one owner counts both pauses
    assert c.active and not gc.isenabled()
    c.stop()
    assert gc.isenabled()


async def test_the_app_collects_when_idle_and_restores_the_collector_on_quit(tui_demo, app_for) -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        app = app_for(tui_demo, idle_gc=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app)
            assert app.collector.active and not gc.isenabled()
            await pilot.press("down", "down", "up")
            keep = _garbage()
            for _ in range(40):  # ticks every 0.25 s; the keys above hold it for 0.2 s
                if sum(app.collector.collections):
                    break
                await pilot.pause(0.05)
            assert sum(app.collector.collections) >= 1
            del keep
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


async def test_the_test_config_leaves_the_collector_alone(tui_demo, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 40)):
        await settle(app)
        assert not app.collector.active
