"""A quick tool call pays for no heartbeat task (mcp_server/progress.py): the heartbeat starts only once
a call has run for a first HEARTBEAT (test_write_tools.py's big rename hears it then)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_testing import serving, uds_client

from vaultwatch.mcp_server import progress


async def test_quick_calls_start_no_heartbeat_task(make_vault, open_vault, sock_dir):
    """Through the real server on its socket and the real client: twenty reads, with a progress token
    and without, answer in full, and no task of the event loop ran a heartbeat meanwhile."""
    vault = open_vault(make_vault({"Note.md": "# Note\n\nbody\n"}))
    loop = asyncio.get_running_loop()
    started: list[str] = []
    default = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Future[Any]:
        started.append(getattr(coro, "__qualname__", ""))
        if default is not None:
            return default(loop, coro, **kwargs)
        return asyncio.Task(coro, loop=loop, **kwargs)

    async def on_progress(progress_: float, total: float | None, message: str | None) -> None:
        pass

    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        loop.set_task_factory(factory)
        try:
            for i in range(20):
                result = await client.call_tool(
                    "read", {"path": "Note.md"}, progress_callback=on_progress if i % 2 else None
                )
                assert not result.is_error and "body" in result.structured_content["content"]
        finally:
            loop.set_task_factory(default)
    assert started, "the task factory saw no task: the test does not observe the server's loop"
    assert not [name for name in started if name == progress.Progress.heartbeat.__qualname__]
