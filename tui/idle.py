"""Waiting until the TUI is idle: the public way for tests, benchmarks and screenshot scripts
to know that the screen shows the answer to everything asked so far.

    async with app.run_test() as pilot:
        await settle(app)      # index loaded, lists and counts shown, no view work pending

Production code never waits like this: the app reacts to messages.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vaultwatch.tui.app import VaultwatchApp


def idle(app: VaultwatchApp) -> bool:
    """The main screen has no view work pending and no message is queued anywhere on the
    current screen (a list's Highlighted may be on its way to the screen)."""
    return busy(app) is None


def busy(app: VaultwatchApp) -> str | None:
    """What keeps the app from being idle, in words, or None when it is idle."""
    reason = app.main.busy()
    if reason is not None:
        return reason
    nodes = (app, *app.screen.walk_children(with_self=True))
    if app.screen is not app.main:
        nodes = (*nodes, app.main)
    queued = [repr(node) for node in nodes if node.message_queue_size]
    return f"messages queued on {', '.join(queued[:5])}" if queued else None


SETTLE_TIMEOUT = 60.0  # s: only bounds a failure; on a machine with many more runnable processes
# than cores a healthy app can take many seconds to load and draw, and settling returns as soon
# as the views are idle, so a generous ceiling costs a passing caller nothing


REFRESH_WAIT_S = 1.0  # s: one refresh cycle's wait; settling looks again after it either way


async def settle(app: VaultwatchApp, timeout: float = SETTLE_TIMEOUT) -> None:
    """Wait until the index is loaded and no view work is pending: no view worker running, no
    timer set, no message queued, several refreshes in a row (raises TimeoutError)."""
    deadline = time.monotonic() + timeout
    quiet = 0
    reason: str | None = None
    while time.monotonic() < deadline:
        if app.return_code is not None:
            # an app that has ended never goes idle or refreshes again: say so now
            raise RuntimeError(f"the app ended (return code {app.return_code}) while waiting for it to settle")
        reason = busy(app)
        if reason is None:
            quiet += 1
            if quiet >= 3:
                return
            # widgets finish some updates after a refresh (the tab underline follows a
            # relabelled tab): let a refresh cycle pass and look again. Bounded: a screen that
            # closes or an app that ends in the meantime never runs the refresh's callback
            try:
                await asyncio.wait_for(app.screen.wait_for_refresh(), REFRESH_WAIT_S)
            except TimeoutError:
                quiet -= 1  # no refresh passed: this look does not count
            await asyncio.sleep(0.005)
            continue
        quiet = 0
        await asyncio.sleep(0.01)
    raise TimeoutError(f"the views did not settle: {reason or 'no refresh passed'}")
