"""One-shot timers that always fire.

Textual's `set_timer` makes a timer of one tick that skips a tick it is late for: when its task
runs later than the moment it was due (another thread held the interpreter, a collection ran, the
machine was busy), it ends without ever calling back. For a short delay that is a pause of a few
milliseconds in the wrong place. The view's pending work (a preview, the tab counts, a retry)
would then never run, and the screen would wait for it forever.

`once` runs the callback on a repeating timer instead, which catches up on a late tick rather
than dropping it, and stops the timer at its first tick. The callback runs as `set_timer`'s
would: queued on the node's own message loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.timer import Timer


class Scheduling(Protocol):
    """What `once` uses of a node (a Textual MessagePump: an app, a screen, a widget)."""

    def set_interval(self, interval: float, callback: Callable[[], Any], *, name: str | None = None) -> Timer: ...
    def call_next(self, callback: Callable[[], Any]) -> None: ...


def once(node: Scheduling, delay: float, callback: Callable[[], Any], *, name: str | None = None) -> Timer:
    """Call `callback` on `node`'s message loop once, `delay` seconds from now (or as soon as
    possible after that). `stop()` on the returned timer cancels it, as with `set_timer`."""
    timer: Timer | None = None

    def tick() -> None:
        assert timer is not None  # (set below, before the timer's first tick can run)
        timer.stop()
        node.call_next(callback)

    timer = node.set_interval(delay, tick, name=name)
    return timer


__all__ = ["Scheduling", "once"]
