"""core.handoffs: the one owner of the interpreter's switch interval (counted quick blocks)."""

from __future__ import annotations

import sys
import threading

import pytest

from vaultwatch.core import handoffs


def test_quick_blocks_nest_and_overlap_across_threads_and_the_last_one_restores():
    start = sys.getswitchinterval()
    assert start > handoffs.QUICK_S
    handoffs.begin_quick()
    assert sys.getswitchinterval() == handoffs.QUICK_S
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with handoffs.quick_handoffs():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    assert entered.wait(10)
    handoffs.end_quick()  # the first block ends while the other thread's is still in effect
    assert sys.getswitchinterval() == handoffs.QUICK_S and handoffs.quick_holds() == 1
    release.set()
    t.join(10)
    assert sys.getswitchinterval() == start and handoffs.quick_holds() == 0


def test_an_end_without_a_begin_is_an_error_and_changes_nothing():
    start = sys.getswitchinterval()
    with pytest.raises(RuntimeError, match="without a matching"):
        handoffs.end_quick()
    assert sys.getswitchinterval() == start and handoffs.quick_holds() == 0
