"""What an agent is told of its own situation when it connects, after the general instructions:
whether the person watches live, and its own effective rules.

The instructions are the same for every client (handshake.py); this middleware adds, to the
`initialize` answer (and a 2026-07-28 client's `server/discover`), a short paragraph for the
agent named in that request: whether a person has vaultwatch's TUI open now (then a change that
needs approval is asked there) or not (then it waits as a pending change, or is asked through
the agent's own client where the person allows it), the person's rule for this agent, and its
approval mode. An agent learns them before it fails, not by failing.

A read-only agent is still offered the write tools, and told here that they will be refused.
The tool list is one list for every session: the server says it never changes (listChanged
false) and clients keep it for the whole session, while the person's rules apply live (an edit
of settings.toml takes effect within seconds); a list cut to the rules at connect time would be
wrong as soon as the person changed them, whereas a refusal always names the rule in force.
Both this paragraph and the rules can go stale during a session (the TUI opens or quits, the
person edits the file): the paragraph says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from vaultwatch.core.review.agentrules import agent_label

CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"  # where 2026-07-28 requests carry the client's name
WRITE_TOOLS = "write, edit, update_frontmatter, rename and delete"
MODE_WORDS = {
    "none": "your changes go through without asking, unless a folder rule asks",
    "deletes": "a delete or rename waits for the person's approval",
    "writes": "every change waits for the person's approval",
}


def told(gate: Any, agent: str | None) -> str:
    """The paragraph for `agent` (its `name/version` label) under `gate` (None: no gate)."""
    if gate is None:
        return ""
    if gate.attended:
        watch = (
            "The person has vaultwatch's TUI open now: they see each call live, and a change that needs "
            "their approval waits for their answer there."
        )
    else:
        watch = (
            "No one watches live now (vaultwatch's TUI is not open): your calls and changes are recorded "
            "for the person to review later, and a change that needs their approval is kept as a pending "
            "change (you are told its id), or asked through your client where the person allows it."
        )
    parts = [watch]
    rule = gate.rule_for(agent)
    if rule is not None and rule.read_only:
        parts.append(f"The person's rule {rule.source} makes you read-only: {WRITE_TOOLS} will be refused.")
    else:
        if rule is not None:
            parts.append(f"The person's rule {rule.source} for you: {rule.summary()}.")
        mode = (rule.approve if rule is not None else None) or gate.mode
        parts.append(f'Approval mode "{mode}": {MODE_WORDS.get(mode, mode)}.')
    parts.append("This is as you connect; the person may change it, and a refused call names the rule in force.")
    return " ".join(parts)


def _agent(method: str, params: Any) -> str | None:
    """The agent label a request names: the handshake's clientInfo, or a 2026-07-28 request's `_meta`."""
    if not isinstance(params, Mapping):
        return None
    info = params.get("clientInfo")
    if method != "initialize":
        meta = params.get("_meta")
        info = meta.get(CLIENT_INFO_META) if isinstance(meta, Mapping) else None
    if not isinstance(info, Mapping) or not isinstance(info.get("name"), str):
        return None
    version = info.get("version")
    return agent_label(info["name"], version if isinstance(version, str) else None)


def middleware(gate_of: Callable[[], Any]) -> Any:
    """Server middleware: add the paragraph to the instructions `initialize` and `server/discover` answer."""

    async def tell(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        result = await call_next(ctx)
        if ctx.method in ("initialize", "server/discover") and isinstance(result, dict):
            text = result.get("instructions")
            if isinstance(text, str):
                said = told(gate_of(), _agent(ctx.method, ctx.params))
                if said:
                    result["instructions"] = f"{text}\n\n{said}"
        return result

    return tell
