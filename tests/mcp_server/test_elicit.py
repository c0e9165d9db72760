"""Approval with no TUI open, for a client that can ask its person (MCP elicitation of the 2025
revisions): the headless server sends `elicitation/create` during the gated call with the
change's summary, and applies or declines the change on the answer.

Real parts: the Python `mcp` client with an elicitation callback runs the bridge command
`mcp-config` writes; the bridge starts the headless server, which reads `[approve]` from
settings.toml."""

from __future__ import annotations

from pathlib import Path

import test_pending
from mcp import Client
from mcp_types import ElicitResult
from test_pending import NOTE, bridged, tree

place = test_pending.place  # the same vault, settings and environment as the pending-change tests


def answering(action: str, content: dict | None, seen: list[str]):
    async def callback(context, params) -> ElicitResult:
        seen.append(params.message)
        return ElicitResult(action=action, content=content)

    return callback


async def test_accept_through_the_client_applies_the_change_byte_exact(place) -> None:
    root, env = place
    wanted = "# Plan\r\nkeep these bytes: é\r\nadded by the agent\r\n"
    seen: list[str] = []
    callback = answering("accept", {"approve": True}, seen)
    async with Client(bridged(root, env), mode="legacy", elicitation_callback=callback) as client:
        done = await client.call_tool("write", {"path": "Notes/plan.md", "content": wanted, "overwrite": True})
        assert not done.is_error, done.content[0].text
    assert (root / "Notes" / "plan.md").read_bytes() == wanted.encode()
    [asked] = seen
    # the person reads what the change touches, its lines added and removed, and its first hunk
    assert "write Notes/plan.md" in asked and "Lines: +1 -0" in asked, asked
    assert "+added by the agent" in asked and "@@" in asked, asked


async def test_decline_through_the_client_changes_nothing_and_quotes_the_reason(place) -> None:
    root, env = place
    before = tree(root)
    seen: list[str] = []
    callback = answering("accept", {"approve": False, "reason": "not this week"}, seen)
    async with Client(bridged(root, env), mode="legacy", elicitation_callback=callback) as client:
        got = await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"})
        assert got.is_error and "the person declined this change: not this week" in got.content[0].text, got.content
        plain = await client.call_tool("delete", {"path": "Notes/plan.md"})
        assert plain.is_error
    assert tree(root) == before
    assert "links Notes/other.md" in seen[0], seen[0]  # every effect, not only the path the agent named
    assert len(seen) == 2


async def test_a_decline_action_declines(place) -> None:
    root, env = place
    before = tree(root)
    async with Client(bridged(root, env), mode="legacy", elicitation_callback=answering("decline", None, [])) as client:
        got = await client.call_tool("edit", {"path": "Notes/plan.md", "old_text": "# Plan", "new_text": "# X"})
    assert got.is_error and "declined it in the client" in got.content[0].text, got.content
    assert tree(root) == before
    assert NOTE.encode() == (Path(root) / "Notes" / "plan.md").read_bytes()
