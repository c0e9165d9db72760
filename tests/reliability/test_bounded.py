"""reliability_helpers.bounded: a call that hangs fails its test and leaves nothing behind that
the end of the test session (the interpreter's exit) would wait for."""

from __future__ import annotations

import threading

import pytest
from reliability_helpers import bounded


def test_a_hung_call_times_out_and_leaves_no_thread_the_exit_waits_for() -> None:
    release = threading.Event()
    try:
        with pytest.raises(TimeoutError):
            bounded(release.wait, timeout=0.1)
        left = [t.name for t in threading.enumerate() if t.name.startswith("bounded") and not t.daemon]
        assert left == []
    finally:
        release.set()


def test_the_call_gives_its_value_or_its_exception() -> None:
    assert bounded(lambda: 42) == 42
    with pytest.raises(ZeroDivisionError):
        bounded(lambda: 1 / 0)
