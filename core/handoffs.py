"""The one owner of the interpreter's switch interval (`sys.setswitchinterval`), a process-global.

vaultwatch serves agents, the person and its indexers from threads of one interpreter, which
runs one thread at a time. A thread that wants the interpreter while another runs Python code
waits up to the switch interval (CPython's default: 5 ms) before it asks for it, and a call that
blocks and wakes many times (every system call, every hand-over between the event loop and a
worker thread) pays that wait each time. `quick_handoffs()` lowers the interval to QUICK_S for a
block while a thread is known to run long: the other threads then wait at most QUICK_S at each
hand-over (plus the running thread's current C call), at the price of more switches for the
long runner.

Quick blocks nest and overlap across threads: they are counted, and the interval comes back to
what it was before the first only when the last one ends. The MCP server's lane
(mcp_server/lane.py) holds one while an agent's heavy call runs. Nothing else in core or
mcp_server or tui calls `sys.setswitchinterval`; the TUI's approval dialog holds one block per
decided change until its answer is out (tui/screens/approval.py QuickHandoffs).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

QUICK_S = 0.0005  # s: the switch interval while a quick block is in effect (CPython's default: 0.005)

_lock = threading.Lock()
_holds = 0
_saved = 0.005


def begin_quick() -> None:
    """Lower the switch interval to QUICK_S until the matching `end_quick()` (counted)."""
    global _holds, _saved
    with _lock:
        if _holds == 0:
            _saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved, QUICK_S))
        _holds += 1


def end_quick() -> None:
    """End one quick block; the last one puts back the interval that was in effect before the first."""
    global _holds
    with _lock:
        if _holds == 0:
            raise RuntimeError("end_quick() without a matching begin_quick()")
        _holds -= 1
        if _holds == 0:
            sys.setswitchinterval(_saved)


@contextmanager
def quick_handoffs() -> Iterator[None]:
    """The switch interval at QUICK_S for the block (see the module docstring)."""
    begin_quick()
    try:
        yield
    finally:
        end_quick()


def quick_holds() -> int:
    """How many quick blocks are in effect (0: the interval is as it was)."""
    return _holds
