"""The `history` read tool: a note's journaled changes (core.review.journal), newest first.

An agent sees what others (agents, the person, outside editors) changed in a note, and
whether its own change was reverted and by whom. Registered in read-only mode too.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from vaultwatch.core.disk.paths import normalize
from vaultwatch.core.edit.effects import in_words, read_as
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import pending, sessionids
from vaultwatch.core.review.journal import Change, journal_for, why_no_journal

from . import schemas
from .activity import current_call
from .results import fail, ok, read_only, vault_errors

HISTORY = (
    "Show a note's journaled changes, newest first: who (an agent, the person, or an outside edit), when, "
    "the tool, a summary, and reverts.\n"
    "Use it before changing a note others edit, or to see whether your change was kept or reverted; "
    "read gives the current text. `pending`: changes kept for the person's approval and their state."
)
P_PATH = "Vault-relative path (a renamed note is found under both paths)."
P_LIMIT = "Most changes to return (default 20)."


def session_tag(session: str) -> str:
    """What an agent sees of a change's session: the label and a little of the random part, enough
    to tell sessions apart, never the id (core.review.sessionids.agent_tag). On the HTTP socket a
    session id is what a request carries to act in that session, so the whole id let any agent that
    read a note's history call tools, and answer the person's approval questions, as the agent that
    wrote it."""
    return sessionids.agent_tag(session)


def change_row(c: Change) -> dict[str, Any]:
    """The compact form of one change for agents."""
    row: dict[str, Any] = {
        "id": c.id,
        "at": c.as_json()["at"],
        "kind": c.kind,
        "who": c.who,
        "tool": c.tool,
        "path": c.path,
        "summary": c.summary,
    }
    if c.session:
        row["session"] = session_tag(c.session)
    if c.src:
        row["src"] = c.src
    if c.etag or c.previous_etag:
        row["etag"], row["previous_etag"] = c.etag, c.previous_etag
    if c.reverted_by is not None:
        row["reverted_by"] = c.reverted_by
    if c.revert_of is not None:
        row["revert_of"] = c.revert_of
    return row


def register(server: MCPServer, env: Any) -> None:
    """Add the `history` tool (also in read-only mode) and open the vault's journal now."""
    vault = env.vault
    journal_for(vault)  # opened at start: outside edits from now on show as "changed outside" rows

    @vault_errors
    def history(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=P_PATH)],
        limit: Annotated[int, Field(ge=1, le=500, description=P_LIMIT)] = 20,
    ) -> Annotated[CallToolResult, schemas.History]:
        rel = normalize(path)
        journal = journal_for(vault)
        if journal is None:
            return fail(f"{why_no_journal(vault)}; so there is no history")
        changes = journal.changes(path=rel, limit=limit)
        current_call().listed([rel], len(changes))
        body: dict[str, Any] = {"path": rel, "changes": [change_row(c) for c in changes]}
        try:
            proposals = pending.store_for(vault.root_real).proposals(path=rel, limit=limit)
        except VaultError:
            proposals = []  # the history stands without them
        if proposals:
            body["pending"] = [_pending_row(p) for p in reversed(proposals)]
        return ok(body, meta={"untrusted": "changes[].summary"})

    server.add_tool(
        history, name="history", title="Change History", description=HISTORY, annotations=read_only("Change History")
    )


def _pending_row(p: pending.Proposal) -> dict[str, Any]:
    row = p.as_json()
    # in the words the person read the same change in (the pending screen, `vaultwatch pending`), so
    # that an agent telling the person about it says what they saw, not `move_from` lines
    row["effects"] = [in_words(e) for e in read_as(p.effects)]  # a move once, with its arrival
    if row.get("session"):
        row["session"] = session_tag(row["session"])
    return row


__all__ = ["change_row", "register", "session_tag"]
