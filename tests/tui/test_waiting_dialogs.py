"""A change waiting in the TUI's approval dialog is never lost or misreported: quitting asks first and
keeps what still waits as a pending change the agent is told about (a real agent on the app's real
socket, Pilot keys)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tui_agents import agent, mcp_started
from tui_helpers import open_loaded
from waiting import TIMEOUT, await_until

from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ApprovalScreen, ConfirmScreen

pytestmark = pytest.mark.usefixtures("own_state")

NOTE = "Inbox/idea.md"


async def test_quitting_with_a_dialog_open_asks_and_the_change_waits_as_a_pending_change(
    tui_demo: Path, socket_path: str
):
    key = "ctrl+q"  # the quit key of every screen, the dialog's too
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            call = asyncio.create_task(claude.call_tool("write", {"path": NOTE, "content": "# Idea\n"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen))
            await pilot.press(key)
            await await_until(lambda: isinstance(app.screen, ConfirmScreen))
            asked = str(app.screen.question)
            assert "1 change waits for your approval: quit anyway?" in asked, asked
            assert "pending change" in asked, asked
            await pilot.press("n")  # not now: the dialog is back, the call still waits
            await await_until(lambda: isinstance(app.screen, ApprovalScreen))
            assert not call.done() and app.is_running
            await pilot.press(key)
            await await_until(lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    text = result.content[0].text
    assert result.is_error and "not applied yet" in text and "the person declined" not in text, text
    assert "The person did not decide it (they closed vaultwatch's TUI first)" in text, text
    [kept] = pending.store_for(str(tui_demo.resolve())).pending()
    assert f"pending change {kept.id}" in text and kept.path == NOTE and kept.tool == "write"
    assert not (tui_demo / NOTE).exists()
