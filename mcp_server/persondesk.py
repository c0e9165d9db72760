"""The person's desk on the server's Unix socket: `vaultwatch approve ID` and `vaultwatch decline ID`
hand their decision to the vaultwatch serving the vault (the TUI or a headless server).

Applied by the process that holds the live index, an approved pending change is in the listing,
search and subscriptions the moment its write returns (not when the watcher notices a change
made by another process), the journal records it once, as the agent's change in the agent's
session, and the TUI's views hear of it on the bus. The decision is made by the same core
functions as in-process (core.review.pending.approve / decline).

    POST /vaultwatch/person  {"action": "approve" | "decline", "id": 7, "by": "human:ann",
                              "reason": "...", "store": "<the caller's pending-changes file>"}
    -> {"ok": true, "proposal": {...}, "pid": <server pid>}
     | {"ok": false, "code": "pending_refused" | "other_store" | ..., "message": "..."}

Served on the Unix socket only (mode 0600 in a 0700 folder: the person's own processes), never
on the loopback HTTP listener, and never as an MCP tool, so no agent's client can send it. (A
process running as the same user can run `vaultwatch approve` itself: see docs/agents.md.)
A caller whose pending-changes file is not the server's (another XDG_STATE_HOME) is told so and
decides in its own process instead.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import approval, pending

from .wire import DESK_PATH

MAX_BODY = 64 * 1024
READY_SECONDS = 120.0  # an approval waits this long for the index's first load (a rename rewrites links)


def decide(vault: Any, request: dict[str, Any]) -> dict[str, Any]:
    """Carry out one decision of the person on `vault` (blocking: run it off the event loop)."""
    try:
        action = request.get("action")
        pid = request.get("id")
        by = str(request.get("by") or "human")
        if action not in ("approve", "decline") or not isinstance(pid, int) or isinstance(pid, bool):
            return {"ok": False, "code": "bad_request", "message": "give action approve or decline and a numeric id"}
        if not by.startswith("human"):
            return {"ok": False, "code": "bad_request", "message": "only the person decides pending changes"}
        store = pending.store_for(vault.root_real)
        if request.get("store") != store.path:
            return {
                "ok": False,
                "code": "other_store",
                "message": f"this server keeps its pending changes in {store.path}",
            }
        if action == "decline":
            done = pending.decline(vault.root_real, pid, str(request.get("reason") or ""), by=by)
        else:
            if vault.approval_gate is None:
                # the one-shot grant is checked by the gate (only the proposed effects, from the
                # proposed bytes); a server started without one gets the settings' gate, which
                # asks nothing of anyone the settings did not already cover (and, like every gate
                # `configure` makes, reads the settings file as it is at each decision)
                approval.configure(vault)
            wait = getattr(vault, "wait_ready", None)
            if callable(wait):
                wait(READY_SECONDS)
            done = pending.approve(vault, pid, by=by)
    except VaultError as exc:
        return {"ok": False, "code": exc.code, "message": exc.message}
    return {"ok": True, "proposal": done.as_json(), "pid": os.getpid()}


class PersonDesk:
    """ASGI wrapper for the Unix socket's app: POST DESK_PATH is the person's decision (see module
    doc); everything else goes to the MCP app."""

    def __init__(self, app: Any, vault: Any) -> None:
        self.app = app
        self.vault = vault

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != DESK_PATH:
            return await self.app(scope, receive, send)
        if scope.get("method") != "POST":
            return await _answer(send, 405, {"ok": False, "code": "bad_request", "message": "POST only"})
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > MAX_BODY:
                return await _answer(send, 413, {"ok": False, "code": "bad_request", "message": "request too large"})
            if not message.get("more_body"):
                break
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            return await _answer(send, 400, {"ok": False, "code": "bad_request", "message": "send a JSON object"})
        answer = await asyncio.to_thread(decide, self.vault, request)
        return await _answer(send, 200, answer)


async def _answer(send: Any, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})


__all__ = ["PersonDesk", "decide"]
