"""One server, one set of rules: a bridge whose environment names other rules than the server's
is refused, where the server was started by another client's bridge.

Every bridge of a vault shares the server that serves it, and that server applies the settings
file, journal and pending store its own environment names (core/review/guardenv.py). A server the
person started (the TUI, `vaultwatch serve`) runs in the person's environment: its rules are the
person's, whatever environment a client trims its bridge to, so it serves every bridge. A server a
bridge started runs in that MCP client's environment, which the client's configuration may have
changed. There a bridge whose own environment (sent in GUARD_ENV_HEADER on every request) names
other rules gets a JSON-RPC error naming each difference, instead of its agent being served under
rules the person did not write for it. Requests without the header (`--http` clients, `vaultwatch
approve`, a bridge of another version) are served as before.
"""

from __future__ import annotations

import json
import os
from typing import Any

from vaultwatch.core.review.guardenv import decoded, differences, encoded, guard_environment

from .wire import GUARD_ENV_HEADER

# a server-defined JSON-RPC error code: the client can tell this refusal from the others
OTHER_ENVIRONMENT = -32003


class SameGuardEnvironment:
    """ASGI wrapper: see the module doc. The server's environment is resolved again for each request:
    its variables do not change, but a folder they name may be a symlink pointed elsewhere since the
    start, and every decision reads the settings file through it as it is then."""

    def __init__(self, app: Any, root_real: str) -> None:
        self.app = app
        self.root_real = root_real
        self._header = GUARD_ENV_HEADER.encode("ascii")

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") == "DELETE":  # ending a session is always allowed
            return await self.app(scope, receive, send)
        given = next((v for k, v in scope.get("headers") or () if k == self._header), None)
        if given is None:
            return await self.app(scope, receive, send)
        mine = guard_environment()
        if given == encoded(mine).encode("ascii"):
            return await self.app(scope, receive, send)
        theirs = decoded(given.decode("latin-1"))
        found = differences(mine, theirs) if theirs is not None else ["its environment is unreadable"]
        if not found:  # the same values, spelled by another version
            return await self.app(scope, receive, send)
        return await _refuse(send, self.refusal(found))

    def refusal(self, found: list[str]) -> str:
        return (
            f"vaultwatch (pid {os.getpid()}), started by another MCP client's bridge, serves {self.root_real} "
            "with another environment than this client's, so this agent would not be under the rules you "
            f"set for it: {'; '.join(found)}. "
            "Give every MCP client of this vault the same environment (`vaultwatch mcp-config` writes "
            f"yours into the configuration it prints), or stop that server (pid {os.getpid()}) and connect again. This request changed nothing"
        )


async def _refuse(send: Any, message: str) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": OTHER_ENVIRONMENT, "message": message}},
        ensure_ascii=False,
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 409,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
