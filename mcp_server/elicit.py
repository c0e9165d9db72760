"""Ask the person through the calling client (MCP elicitation) when no TUI is open.

The approval gate (core.review.approval) runs in the tool's worker thread and knows nothing of
MCP: the middleware gives each call's `Caller` an `ask(message, timeout, binding)` function when
the client declared the elicitation capability, and the gate calls it with the whole change
(core.review.question) and a digest naming exactly that change, only when the person's settings
let this agent's client ask (`ask_client`) and the whole change fits in one question: the client
that answers is the agent's own, so its answer is only as trustworthy as that client. Two forms,
by the session's protocol revision, carrying the same question:

- 2025 revisions: `ask` sends the server-to-client `elicitation/create` request on the server's
  event loop, tied to the tool call's request id, and waits for the answer.
- 2026-07-28 (no server-to-client requests): the first call raises `InputNeeded`, which the tool
  answers with an `InputRequiredResult` carrying the question and a `requestState` holding the
  change's digest (the SDK seals the state); the client retries the call with the person's
  answer, and the retry applies the change only when it recomputes the same digest: the same
  effects and the same bytes before and after. Anything else declines it.

The answer form: `approve` (yes/no) and an optional `reason`. The person's "accept" with
approve = true applies the change; anything else declines it, quoting the reason.
"""

from __future__ import annotations

import concurrent.futures
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from vaultwatch.core.errors import VaultError

if TYPE_CHECKING:  # the SDK's types load when a question is built: the stdio front answers before them
    from mcp_types import InputRequiredResult

GATED_TOOLS = frozenset({"write", "edit", "update_frontmatter", "rename", "delete"})  # may wait for approval


def gated(tool: Any, prefix: str = "") -> bool:
    """Whether a call of the tool named `tool` may wait for the person's approval: a write tool, under
    the server's `--tool-prefix` (`prefix`) when it has one."""
    return isinstance(tool, str) and tool.startswith(prefix) and tool[len(prefix) :] in GATED_TOOLS


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Apply this change", "default": False},
        "reason": {"type": "string", "title": "Reason (if you decline)"},
    },
    "required": ["approve"],
}

Ask = Callable[[str, float, str], tuple[bool, str]]
KEY = "vaultwatch_approval"  # the input request's key and the requestState's field


class InputNeeded(VaultError):
    """The change needs the person's answer through the client (2026-07-28 round trip)."""

    code = "input_required"

    def __init__(self, message: str, binding: str) -> None:
        super().__init__("the person must answer through the client first")
        self.question = message
        self.binding = binding

    def result(self) -> InputRequiredResult:
        from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult  # noqa: PLC0415

        request = ElicitRequest(params=ElicitRequestFormParams(message=self.question, requested_schema=SCHEMA))
        return InputRequiredResult(input_requests={KEY: request}, request_state=json.dumps({KEY: self.binding}))


def _decision(action: str, content: Mapping[str, Any] | None) -> tuple[bool, str]:
    content = content or {}
    reason = str(content.get("reason") or "").strip()
    if action == "accept" and content.get("approve") is True:
        return True, ""
    if action == "cancel":
        return False, reason or "the person dismissed the question in the client"
    return False, reason or "the person declined it in the client"


def can_elicit(ctx: Any) -> bool:
    """The client declared form elicitation on a session that can carry server-to-client requests."""
    try:
        params = ctx.session.client_params
        return params is not None and params.capabilities.elicitation is not None
    except AttributeError:
        return False


def asker(ctx: Any, modern: bool) -> Ask | None:
    """The `ask` function for this call, or None when the client cannot be asked."""
    if not can_elicit(ctx):
        return None
    if modern:
        return _round_trip(ctx.params if isinstance(ctx.params, Mapping) else {})
    import asyncio  # noqa: PLC0415  (on the SDK's event loop; a stdio server's early answers need none)

    loop = asyncio.get_running_loop()
    session, request_id = ctx.session, ctx.request_id

    def ask(message: str, timeout: float, binding: str) -> tuple[bool, str]:
        future = asyncio.run_coroutine_threadsafe(session.elicit_form(message, SCHEMA, request_id), loop)
        try:
            answer = future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return False, f"no answer through the client within {timeout:g} s"
        except Exception as exc:  # the client went away or refused the request: nothing is applied
            return False, f"the client could not ask the person ({type(exc).__name__}: {exc})"
        return _decision(answer.action, answer.content)

    return ask


def _round_trip(params: Mapping[str, Any]) -> Ask:
    """2026-07-28: the first round asks (InputNeeded), the retry carries the answer."""
    responses = params.get("inputResponses")
    state = params.get("requestState")

    def ask(message: str, timeout: float, binding: str) -> tuple[bool, str]:
        if not isinstance(responses, Mapping) or KEY not in responses or not isinstance(state, str):
            raise InputNeeded(message, binding)
        try:
            asked = json.loads(state).get(KEY)
        except (ValueError, AttributeError):
            asked = None
        if asked != binding:
            return False, (
                "the change is no longer the one the person was asked about (the note or what the "
                "change touches changed meanwhile); call again without the answer to ask anew"
            )
        answer = responses[KEY]
        if not isinstance(answer, Mapping):
            return False, "the client's answer could not be read"
        content = answer.get("content")
        return _decision(str(answer.get("action", "")), content if isinstance(content, Mapping) else None)

    return ask


__all__ = ["GATED_TOOLS", "KEY", "SCHEMA", "Ask", "InputNeeded", "asker", "can_elicit", "gated"]
