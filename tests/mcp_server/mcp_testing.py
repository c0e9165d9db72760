"""Helpers for the MCP tests: the real server on a real Unix socket, and real `mcp` clients."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server.host import McpHost

ROOT = Path(__file__).resolve().parents[2]
VAULTWATCH = [sys.executable, "-m", "vaultwatch.tui.entry"]  # the console script's entry point
ALL_COMPAT = frozenset({"vault-cortex", "obsidian-mcp"})
CLIENT_DIR = ROOT / "tests" / "mcp_server" / "ts_client"  # the TypeScript SDK client (conftest: ts_sdk)


@contextlib.asynccontextmanager
async def serving(vault: Vault, socket_path: str | os.PathLike[str], **options) -> AsyncIterator[McpHost]:
    """Run an McpHost for `vault` on `socket_path` in this event loop; stop it on exit."""
    options.setdefault("compat", ALL_COMPAT)
    host = McpHost(vault, socket_path=os.fspath(socket_path), **options)
    ready = asyncio.Event()
    task = asyncio.create_task(host.run(ready))
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        task.result()  # raises the HostError
    try:
        yield host
    finally:
        host.stop()
        await asyncio.wait_for(task, 5)


def uds_client(
    socket_path: str | os.PathLike[str], *, name: str = "pytest-agent", version: str = "1.0", mode: str = "legacy"
) -> Client:
    """A real `mcp` client speaking streamable HTTP over the Unix socket."""
    http = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(uds=os.fspath(socket_path)), timeout=httpx2.Timeout(30, read=60)
    )
    return Client(
        streamable_http_client("http://localhost/mcp", http_client=http),
        mode=mode,
        client_info=Implementation(name=name, version=version),
    )


@contextlib.asynccontextmanager
async def in_own_task(cm) -> AsyncIterator:
    """Enter and exit the async context manager `cm` in one dedicated task.

    anyio cancel scopes (inside the SDK client) must be exited by the task that entered
    them; a module-scoped fixture's setup and teardown run in different tasks.
    """
    entered: asyncio.Future = asyncio.get_running_loop().create_future()
    leave = asyncio.Event()

    async def hold() -> None:
        async with cm as value:
            entered.set_result(value)
            await leave.wait()

    task = asyncio.create_task(hold())
    done, _ = await asyncio.wait([task, entered], return_when=asyncio.FIRST_COMPLETED)
    if task in done and not entered.done():
        task.result()
    try:
        yield entered.result()
    finally:
        leave.set()
        await asyncio.wait_for(task, 10)


def end_server(pid: int) -> None:
    """SIGKILL a server process a test is done with, and with it the workers of its process group (a
    headless server leads a session of its own). A graceful stop that nothing checks took a test's
    worker most of a second per server; the vault lock and the journal are made to survive a kill."""
    import signal

    if pid == os.getpid():  # a vault this process serves itself is stopped with its host, not here
        raise AssertionError(f"end_server({pid}) would kill the test process")
    with contextlib.suppress(ProcessLookupError):
        if os.getpgid(pid) == pid != os.getpgrp():
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)


def stop_headless_servers(vault: str | os.PathLike[str]) -> None:
    """End every headless server of `vault` (a test's own folder). A bridge starts one detached: left
    alone it outlives the test by its idle time (minutes), beside the rest of the suite."""
    from tests.waiting import within

    want = os.fsencode(os.path.realpath(vault))

    def running() -> set[int]:
        found = set()
        with contextlib.suppress(OSError):  # (no /proc: nothing to find)
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    with contextlib.suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as fh:
                        argv = fh.read().split(b"\0")
                        if b"--headless" in argv and want in argv:
                            found.add(int(entry))
        return found

    pids = running()
    for pid in pids:
        end_server(pid)
    assert within(lambda: not (pids & running()), timeout=10), f"headless servers {pids} outlived SIGKILL"


def children(pid: int) -> list[tuple[int, list[str]]]:
    """The processes whose parent is `pid`, with their argument lists (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = fh.read().decode("utf-8", "replace").split("\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid:
            found.append((int(entry), argv))
    return found
