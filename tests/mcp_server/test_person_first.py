"""Agents' tool calls let a person's input go first (core.live.foreground), over the real socket."""

from __future__ import annotations

import asyncio

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.mcp_server.activity import FOREGROUND_MAX_WAIT


@pytest.mark.timing
async def test_tool_calls_wait_for_a_held_foreground_and_go_on_when_released(demo, sock_dir):
    fg = demo.foreground
    try:
        async with serving(demo, sock_dir / "v.sock") as host:
            async with uds_client(host.socket_path) as client:
                free = await client.call_tool("list_documents", {"limit": 1})
                assert not free.is_error and fg.waits == 0

                fg.hold(30.0)  # a person who never stops typing: each call waits its bound, no more
                held = await client.call_tool("list_documents", {"limit": 1})
                assert not held.is_error and fg.waits == 1
                assert FOREGROUND_MAX_WAIT <= fg.waited_s < 10 * FOREGROUND_MAX_WAIT

                before = fg.waited_s
                call = asyncio.create_task(client.call_tool("read", {"path": "index.md"}))
                while fg.waiting == 0:  # the call has reached its turn and waits for the person
                    assert not call.done(), "the call went on while the foreground was held"
                    await asyncio.sleep(0.002)
                fg.release()  # the screen answered the person: the waiting call goes on at once
                result = await call
                assert not result.is_error and fg.waits == 2
                assert fg.waited_s - before < FOREGROUND_MAX_WAIT
    finally:
        fg.release()
