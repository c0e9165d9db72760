"""Ask the person through the calling client (MCP elicitation) when no TUI is open.

The approval gate (core.review.approval) runs in the tool's worker thread and knows nothing of
MCP: the middleware gives each call's `Caller` an `ask(message, timeout)` function when the
client declared the elicitation capability on a 2025-era session, and the gate calls it with
the change's summary. `ask` sends the server-to-client `elicitation/create` request on the
server's event loop, tied to the tool call's request id, and waits for the answer.

The answer form: `approve` (yes/no) and an optional `reason`. The person's "accept" with
approve = true applies the change; anything else declines it, quoting the reason.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Apply this change", "default": False},
        "reason": {"type": "string", "title": "Reason (if you decline)"},
    },
    "required": ["approve"],
}

Ask = Callable[[str, float], tuple[bool, str]]


def can_elicit(ctx: Any) -> bool:
    """The client declared form elicitation on a session that can carry server-to-client requests."""
    try:
        params = ctx.session.client_params
        return params is not None and params.capabilities.elicitation is not None
    except AttributeError:
        return False


def asker(ctx: Any, modern: bool) -> Ask | None:
    """The `ask` function for this call, or None when the client cannot be asked this way (the
    2026-07-28 revision has no server-to-client requests: its round trip is InputRequiredResult)."""
    if modern or not can_elicit(ctx):
        return None
    loop = asyncio.get_running_loop()
    session, request_id = ctx.session, ctx.request_id

    def ask(message: str, timeout: float) -> tuple[bool, str]:
        future = asyncio.run_coroutine_threadsafe(session.elicit_form(message, SCHEMA, request_id), loop)
        try:
            answer = future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return False, f"no answer through the client within {timeout:g} s"
        except Exception as exc:  # the client went away or refused the request: nothing is applied
            return False, f"the client could not ask the person ({type(exc).__name__}: {exc})"
        content = answer.content or {}
        reason = str(content.get("reason") or "").strip()
        if answer.action == "accept" and content.get("approve") is True:
            return True, ""
        if answer.action == "cancel":
            return False, reason or "the person dismissed the question in the client"
        return False, reason or "the person declined it in the client"

    return ask


__all__ = ["SCHEMA", "Ask", "asker", "can_elicit"]
