"""Progress notifications and client logging for tool calls that take a while.

A client that sends a progress token with tools/call hears from a call that runs longer than a
second (a first search while the full-text index builds, wait_for_pending_writes, a big
rename): the tool reports real progress where it knows some (the index build: notes done of
total), and otherwise a heartbeat says every second that the call is still working, which also
keeps a client's request timeout from firing (the TS SDK resets it on progress when asked).
While the call waits for the person's approval (the gate sets `Caller.waiting`), the same
heartbeat says so, with the second at which the wait times out as its `total`: one channel per
call, so that every notification's progress is higher than the last one's, as the spec requires
(two senders counting on their own repeat values), and a client's progress bar does not flicker
between two messages. Once a tool reports its own progress, the heartbeat stops. Without a
token the SDK's report_progress is a no-op.

Where they arrive: on stdio (`serve --stdio`), in-process clients, and the socket, whose HTTP
transport answers a call that carries a progress token as an SSE stream (its notifications,
then its answer; streaming.py) and every other call as one JSON body; `vaultwatch bridge`
relays the stream's events to its client as they come.

Logging: `logging/setLevel` sets, per session, the least severe level the client wants as
`notifications/message`; nothing is sent before a client asks. Each call then logs its
duration (debug) and a warning when its answer may miss writes still in flight.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from typing import Any

from vaultwatch.core.edit.hooks import current_caller

HEARTBEAT = 1.0
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_current: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("vaultwatch_progress", default=None)


class Progress:
    """The progress channel of one tool call (see module doc)."""

    def __init__(self, context: Any, loop: asyncio.AbstractEventLoop, caller: Any = None) -> None:
        self.context = context
        self.loop = loop
        self.caller = caller  # the journal's Caller of this call: its `waiting` is the approval it waits on
        self.own = False  # the tool reports its own progress: no heartbeat
        self.last = -1.0  # a first report of 0 is sent (the client hears that the work started)
        self._wait: Any = None  # the approval request the last heartbeat saw, and its end (call's seconds)
        self._wait_end = 0

    async def _send(self, progress: float, total: float | None, message: str | None) -> None:
        try:
            await self.context.report_progress(progress, total, message)
        except Exception:  # a client gone mid-call: the answer path reports that, not this one
            pass

    def report(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """From the tool's worker thread: send a progress notification (when it moves forward)."""
        self.own = True
        if progress <= self.last:
            return
        self.last = progress
        asyncio.run_coroutine_threadsafe(self._send(progress, total, message), self.loop)

    def _waiting(self, elapsed: float) -> tuple[int, str] | None:
        """(total, message) while the call waits for the person's approval, else None. The total is the
        second of the call at which the wait times out, fixed when the wait is first seen."""
        pending = getattr(self.caller, "waiting", None)
        if pending is None:
            return None
        if pending is not self._wait:
            self._wait = pending
            self._wait_end = round(elapsed + pending.remaining(time.monotonic()))
        return self._wait_end, f"waiting for the person to approve this {pending.operation} in vaultwatch"

    async def heartbeat(self, start: float) -> None:
        """From the first HEARTBEAT of a call begun at `start` (monotonic) on: each HEARTBEAT, say it is
        still working, or waiting for the person's approval; progress counts the call's seconds."""
        while True:
            elapsed = time.monotonic() - start
            seconds = round(elapsed)
            if not self.own and seconds > self.last:
                self.last = seconds
                waiting = self._waiting(elapsed)
                if waiting is None:
                    await self._send(seconds, None, f"still working ({seconds} s)")
                else:
                    await self._send(seconds, max(waiting[0], seconds), waiting[1])
            await asyncio.sleep(HEARTBEAT)


def current() -> Progress | None:
    """The progress channel of the tool call running in this context, or None."""
    return _current.get()


async def around(context: Any, call: Any) -> Any:
    """Run the coroutine `call` with a progress channel for `context` (and its heartbeat)."""
    try:
        context.request_context  # noqa: B018  (raises outside a request)
    except Exception:
        return await call
    loop = asyncio.get_running_loop()
    start = time.monotonic()
    progress = Progress(context, loop, current_caller())
    token = _current.set(progress)
    # the heartbeat task starts only once the call has run for a first HEARTBEAT: most calls end well
    # before, and a timer costs them less than a task that must be started and then cancelled
    beat: list[asyncio.Task[None]] = []
    timer = loop.call_later(HEARTBEAT, lambda: beat.append(loop.create_task(progress.heartbeat(start))))
    try:
        return await call
    finally:
        timer.cancel()
        for task in beat:
            task.cancel()
        _current.reset(token)


class ClientLog:
    """The level each session asked for with logging/setLevel, and the messages sent at it."""

    def __init__(self) -> None:
        self.levels: dict[int, int] = {}  # id(connection) -> index into LEVELS

    @staticmethod
    def _key(session: Any) -> int:
        from . import sdk

        return id(sdk.connection(session) or session)  # the connection outlives each request's session view

    def set_level(self, session: Any, level: str) -> None:
        self.levels[self._key(session)] = LEVELS.index(level)

    async def send(self, context: Any, level: str, message: str) -> None:
        try:
            session = context.request_context.session
        except Exception:
            return
        wanted = self.levels.get(self._key(session))
        if wanted is None or LEVELS.index(level) < wanted:
            return
        try:
            await context.log(level, message, logger_name="vaultwatch")
        except Exception:
            pass
