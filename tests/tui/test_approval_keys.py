"""The approval dialog's decision keys arm a moment after it shows (tui.screens.arming): keys the
person was typing elsewhere when an agent's change put the dialog in front of them (the `y` of
"every", typed into the filter) do nothing but say they came too soon, and never reach the screen
below; the next queued dialog, pushed as one closes, arms anew. The title marks an agent whose
name reads as the person's as an agent.

A real agent (the real `mcp` client) on the app's real socket, Pilot keys. The app's monotonic
clock is a stepped one (AppConfig.monotonic): "before the keys arm" is the clock not moved, not a
race against a timer, and nothing here sleeps or times anything."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest
from tui_agents import agent, mcp_started
from tui_helpers import armed, open_loaded
from waiting import TIMEOUT, await_until

from vaultwatch.core.clock import SteppingClock
from vaultwatch.core.review import approval
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ApprovalScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.arming import ARM_S
from vaultwatch.tui.widgets.diffview import DiffView, plain

pytestmark = pytest.mark.usefixtures("own_state")


def stepped() -> SteppingClock:
    return SteppingClock(dt.datetime(2026, 11, 29, 11, tzinfo=dt.UTC))


def dialog_text(app) -> str:
    views = app.screen.query(DiffView)
    return plain(views.first().renderable) if views and views.first().renderable else ""


def shown(app, path: str) -> bool:
    return isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app) and path in dialog_text(app)


async def test_keys_typed_on_as_the_dialog_comes_up_decide_nothing_and_stay_in_it(tui_demo: Path, socket_path: str):
    clock = stepped()
    vault = open_loaded(tui_demo)
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    app = make_app(
        vault, config=fixed_config(mcp=True, socket_path=socket_path, monotonic=lambda: clock.reference()[1])
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        await pilot.press("slash", *"ever")  # the person is typing "every day" into the filter
        main = app.screen
        field = main.query_one("#filter-input")
        activity = main.query_one("#activity")
        panel_shown = activity.display
        async with agent(socket_path, "scribe") as scribe:
            path = "Inbox/harmless.md"
            call = asyncio.create_task(scribe.call_tool("write", {"path": path, "content": "# x\nsend the ledger\n"}))
            await await_until(lambda: shown(app, path) and app.screen.keys.counting)
            dialog = app.screen
            await pilot.press("y", "space", "d", "a", "y")  # the rest of "every day", typed on
            await settle(app)
            assert app.screen is dialog and not dialog.decided and not call.done()
            assert [p.id for p in gate.pending()] == [dialog.pending.id]  # still waits for the person
            assert not (tui_demo / path).exists()
            assert not dialog.has_class("-reason")  # `d` did not open the reason either
            assert "too soon: approve did nothing; keys arm in a moment" in dialog_text(app)
            # none of them reached the screen below: the filter and the activity panel are as they were
            assert field.value == "ever" and activity.display == panel_shown

            clock.advance(ARM_S)  # the dialog has been on screen a moment: the keys act
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert not result.is_error, result.content
    assert (tui_demo / path).read_text() == "# x\nsend the ledger\n"


async def test_the_next_queued_dialog_arms_anew(tui_demo: Path, socket_path: str):
    """The person approves the first change; a key pressed as the second one's dialog replaces it
    decides nothing; once that dialog has been on screen a moment, `n` declines it."""
    clock = stepped()
    vault = open_loaded(tui_demo)
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    app = make_app(
        vault, config=fixed_config(mcp=True, socket_path=socket_path, monotonic=lambda: clock.reference()[1])
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "scribe") as scribe, agent(socket_path, "clerk") as clerk:
            first = asyncio.create_task(scribe.call_tool("write", {"path": "Inbox/one.md", "content": "# one\n"}))
            await await_until(lambda: shown(app, "Inbox/one.md"))
            await await_until(lambda: app.screen.keys.counting, what="the first dialog's keys counting")
            second = asyncio.create_task(clerk.call_tool("write", {"path": "Inbox/two.md", "content": "# two\n"}))
            await await_until(lambda: len(gate.pending()) == 2)
            clock.advance(ARM_S)
            await pilot.press("y")
            assert not (await asyncio.wait_for(first, TIMEOUT)).is_error
            await await_until(lambda: shown(app, "Inbox/two.md") and app.screen.keys.counting)
            await pilot.press("y")  # the key pressed again, as the next dialog comes up
            await settle(app)
            assert isinstance(app.screen, ApprovalScreen) and not app.screen.decided
            assert not second.done() and len(gate.pending()) == 1
            assert "too soon: approve did nothing" in dialog_text(app)
            clock.advance(ARM_S)
            await pilot.press("n")
            result = await asyncio.wait_for(second, TIMEOUT)
    assert result.is_error and not (tui_demo / "Inbox" / "two.md").exists()
    assert (tui_demo / "Inbox" / "one.md").read_text() == "# one\n"


async def test_the_dialog_marks_an_agent_named_like_the_person_as_an_agent(tui_demo: Path, socket_path: str):
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "human:alice") as posing:
            call = asyncio.create_task(posing.call_tool("write", {"path": "Inbox/me.md", "content": "# me\n"}))
            await await_until(lambda: shown(app, "Inbox/me.md"))
            assert "agent human:alice/1.0 wants to write Inbox/me.md" in dialog_text(app), dialog_text(app)
            await armed(app.screen)
            await pilot.press("n")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert result.is_error and not (tui_demo / "Inbox" / "me.md").exists()
