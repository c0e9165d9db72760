"""Real agents for the TUI tests: the `mcp` client on the app's own Unix socket."""

from __future__ import annotations

import contextlib
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation
from waiting import TIMEOUT, await_until

from vaultwatch.tui.idle import settle


@contextlib.asynccontextmanager
async def agent(socket_path: str, name: str, session: str | None = None):
    """An MCP client session over the app's Unix socket, introducing itself as `name`; `session`
    names its session as the bridge does for its client (a stateless request carries none)."""
    headers = {"x-vaultwatch-session": session} if session else None
    http = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(uds=socket_path), timeout=httpx2.Timeout(30, read=60), headers=headers
    )
    async with (
        http,
        Client(
            streamable_http_client("http://localhost/mcp", http_client=http),
            client_info=Implementation(name=name, version="1.0"),
        ) as client,
    ):
        yield client


async def wait_for(predicate, timeout: float = TIMEOUT) -> None:
    """waiting.await_until under the name the TUI's agent tests use."""
    await await_until(predicate, timeout)


async def mcp_started(app, socket_path: str) -> None:
    """Until the app has settled and its MCP server listens on `socket_path` (and says so)."""
    await settle(app)
    await await_until(lambda: os.path.exists(socket_path) and socket_path in app.status.parts["mcp"].plain)
