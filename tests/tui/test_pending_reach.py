"""The pending changes are within reach from the TUI at any time: an approval dialog that times out
keeps its change as a pending change, the status line counts it (from the pending store, not only the
live dialogs), and `P` or the palette's "Show pending changes" opens the pending screen."""

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
from vaultwatch.tui.flows.review import ApprovalScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.pending import PendingScreen

pytestmark = pytest.mark.usefixtures("own_state")

NOTE = "Inbox/idea.md"


def status(app) -> str:
    part = app.status.parts.get("approval")
    return part.plain if part is not None else ""


async def test_a_timed_out_dialog_leaves_a_counted_pending_change_p_opens(tui_demo: Path, socket_path: str):
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes", timeout=1))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            call = asyncio.create_task(claude.call_tool("write", {"path": NOTE, "content": "# Idea\n"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen))
            result = await asyncio.wait_for(call, TIMEOUT)  # nobody answers: it waits as a pending change
        assert result.is_error and "pending change" in result.content[0].text, result.content[0].text
        [kept] = pending.store_for(str(tui_demo.resolve())).pending()
        await await_until(lambda: not isinstance(app.screen, ApprovalScreen))
        await await_until(lambda: status(app).endswith("· 1 waiting"))
        await pilot.press("P")
        await await_until(lambda: isinstance(app.screen, PendingScreen))
        assert [p.id for p in app.screen.queue] == [kept.id]
        await pilot.press("escape")
        await settle(app)
        assert not isinstance(app.screen, PendingScreen)
        commands = [c.title for c in app.get_system_commands(app.screen)]
        assert "Show pending changes (waiting for your approval)" in commands, commands
        # declined elsewhere (as `vaultwatch decline` does): the count follows the store
        pending.decline(str(tui_demo.resolve()), kept.id, "no", by="human:test")
        await await_until(lambda: "waiting" not in status(app))
