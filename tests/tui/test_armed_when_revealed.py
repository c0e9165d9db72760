"""A decision screen covered by another one is not armed when it is revealed: an agent's live gated
write arriving as the TUI opens puts its approval dialog over the pending-changes screen, and the
person's second `y` (a double tap, a key that repeats) after answering the dialog must not approve
the kept change the dialog's closing reveals. Its keys arm a moment after it shows again.

Real app under Pilot, the real socket server and the real mcp client for the live write; the kept
change is an agent's write through the real write path with nobody attending. The clock the keys
count on is the app's stepped monotonic clock: nothing races a timer."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from pathlib import Path

import pytest
from test_pending_view import NOTE, propose
from tui_agents import agent, wait_for
from tui_helpers import armed, open_loaded
from waiting import TIMEOUT, await_until

from vaultwatch.core.clock import SteppingClock
from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ApprovalScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.arming import ARM_S
from vaultwatch.tui.screens.pending import PendingScreen

pytestmark = pytest.mark.usefixtures("own_state")

KEPT = "# Atlas\nwire the budget to acct 999\n"


async def test_a_revealed_pending_screen_arms_anew(tui_demo: Path, socket_path: str) -> None:
    kept = propose(tui_demo, KEPT)  # kept while no TUI was open
    before = (tui_demo / NOTE).read_text()
    clock = SteppingClock(dt.datetime(2026, 11, 29, 11, tzinfo=dt.UTC))
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    config = fixed_config(mcp=True, socket_path=socket_path, monotonic=lambda: clock.reference()[1])
    app = make_app(vault, config=config)
    store = pending.store_for(str(tui_demo.resolve()))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        await await_until(lambda: os.path.exists(socket_path))
        await wait_for(lambda: any(isinstance(s, PendingScreen) for s in app.screen_stack), 10)
        screen = next(s for s in app.screen_stack if isinstance(s, PendingScreen))
        async with agent(socket_path, "scribe") as scribe:
            call = asyncio.create_task(scribe.call_tool("write", {"path": "Inbox/harmless.md", "content": "# hi\n"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen))
            dialog = app.screen
            await await_until(lambda: dialog.keys.counting, what="the dialog shown, its keys counting")
            clock.advance(ARM_S * 4)  # the person reads the dialog
            await armed(dialog)
            await pilot.press("y")  # approves the dialog's write
            await asyncio.wait_for(call, TIMEOUT)
            await await_until(lambda: app.screen is screen and screen.keys.counting, what="the pending screen shown")
            await pilot.press("y")  # the same key again a moment later
            await settle(app)
            assert store.get(kept).state == "pending" and (tui_demo / NOTE).read_text() == before
            assert "too soon: approve did nothing" in str(screen.keys.hint())
            clock.advance(ARM_S * 2)  # now read
            await armed(screen)
            await pilot.press("y")
            await await_until(lambda: store.get(kept).state == "approved", what="the kept change approved")
    assert (tui_demo / NOTE).read_text() == KEPT
