"""What the journal's open intents are, for the person: an operation that started and has not been
recorded (a rename, a revert, a batch revert, a redo, an approval or an agent's write), whether its process still runs
or was killed, what finishing it will do and how to have it finished now.

Read only: finishing is core.review.resume's (at every start of vaultwatch on the vault, and
`vaultwatch changes --finish`). Imports neither the write path nor the revert modules, so
`vaultwatch changes` shows them without loading either.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core.review.journal import Journal

FINISH_NOW = "vaultwatch changes {vault} --finish"


@dataclass(frozen=True)
class OpenIntent:
    """One open intent as the person reads it (`as_json` for `vaultwatch changes --json`)."""

    intent: int
    operation: str  # rename, revert, batch, redo, approve or write
    actor: str
    at: float
    process: int | None
    running: bool  # its process still runs (in progress, not interrupted)
    summary: str  # what it was doing and how far it got
    will: str  # what finishing it does
    finish: str  # the commands that finish it now
    paths: tuple[str, ...] = field(default_factory=tuple)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": "interrupted" if not self.running else "in_progress",
            "id": None,  # not a change: it has no row yet (finishing it records one)
            "intent": self.intent,
            "operation": self.operation,
            "tool": self.operation,
            "actor": self.actor,
            "at": dt.datetime.fromtimestamp(self.at, dt.UTC).isoformat(),
            "process": self.process,
            "running": self.running,
            "summary": self.summary,
            "will": self.will,
            "finish": self.finish,
            "paths": list(self.paths),
            "reviewed": False,
        }


def open_intents(journal: Journal, root_real: str, vault_arg: str | None = None) -> list[OpenIntent]:
    """Every open intent of `journal` (the vault at `root_real`), oldest first. `vault_arg`: how the
    commands named in `finish` name the vault (default: its path)."""
    dead = {i[0] for i in journal.open_intents(interrupted=True)}
    vault = _quoted(vault_arg or root_real)
    out = []
    for intent_id, change_id, actor, plan in journal.open_intents():
        at, committed = journal.intent_info(intent_id)
        running = intent_id not in dead
        pid = plan.get("pid") if isinstance(plan.get("pid"), int) else None
        summary, will, finish, paths = _describe(root_real, vault, change_id, plan, committed)
        if running:
            will = f"it is under way in process {pid}; if that process is killed, {will}"
        finish_now = FINISH_NOW.format(vault=vault)
        how = (
            "wait for it to end"
            if running
            else f"start vaultwatch on the vault (the TUI or `vaultwatch serve`), or run `{finish_now}`"
            + (f" (or `{finish}`)" if finish else "")
        )
        operation = str(plan.get("operation") or ("revert" if change_id else "rename"))
        out.append(OpenIntent(intent_id, operation, actor, at, pid, running, summary, will, how, paths))
    return out


def _describe(
    root_real: str, vault: str, change_id: int, plan: dict[str, Any], committed: int
) -> tuple[str, str, str, tuple[str, ...]]:
    """(what it was doing, what finishing it does, the operation's own command that finishes it, paths)."""
    operation = plan.get("operation")
    if operation == "rename" or (not operation and not change_id and plan.get("move")):
        src, dst = (list(plan.get("move") or ["?", "?"]) + ["?", "?"])[:2]
        moved = _exists(root_real, dst) and not _exists(root_real, src)
        notes = f"{committed} note{'s' if committed != 1 else ''}"
        if moved:
            summary = f"rename {src} -> {dst}: moved, and rewrote links in {notes} before it stopped"
            will = f"it is rolled back: the links in those notes are put back and {dst} is moved back to {src}"
        else:
            summary = f"rename {src} -> {dst}: stopped before the move"
            will = "it is closed: nothing was moved, so there is nothing to put back"
        return summary, will, "", (src, dst)
    if operation == "batch":
        session = str(plan.get("session", ""))
        n = len(plan.get("changes", ()))
        return (
            f"revert of session {session} ({n} changes) as one batch",
            "it is finished: the changes of the session not reverted yet are reverted",
            f"vaultwatch revert --session {session} {vault} --yes",  # the whole id: it names one session
            tuple(f["path"] for f in plan.get("files", ()) if isinstance(f, dict) and "path" in f),
        )
    if operation == "redo":
        revert_id = plan.get("revert")
        return (
            f"redo of revert {revert_id}",
            "it is finished: what it had not redone yet is redone",
            f"vaultwatch redo {revert_id} {vault}" if isinstance(revert_id, int) else "",
            tuple(f["path"] for f in plan.get("files", ()) if isinstance(f, dict) and "path" in f),
        )
    if operation == "write":
        tool, named = plan.get("tool") or "write", str(plan.get("path") or "?")
        who = plan.get("agent") or "an agent"
        return (
            f"{who}'s {tool} of {named}, made and not journaled yet",
            "it is journaled as the agent's change, unreviewed (or closed, when it never landed)",
            "",
            (named,),
        )
    if operation == "approve":
        pending = plan.get("pending")
        return (
            f"approval of pending change {pending}",
            "what it applied is rolled back (or, journaled whole, it is marked approved), and the change "
            "waits for the person's approval again",
            f"vaultwatch approve {pending} {vault}",
            tuple(f["path"] for f in plan.get("files", ()) if isinstance(f, dict) and "path" in f),
        )
    files = [f["path"] for f in plan.get("files", ()) if isinstance(f, dict) and "path" in f]
    move = plan.get("move")
    what = f"revert of change {change_id}"
    if move:
        what += f" (moves {move[0]} back to {move[1]})"
    return (
        what + f": {len(files)} file{'s' if len(files) != 1 else ''} to put back",
        f"it is finished: the files it had not put back yet are, and the revert of change {change_id} is recorded",
        f"vaultwatch revert {change_id} {vault}",
        tuple(files),
    )


def _exists(root_real: str, rel: str) -> bool:
    return os.path.lexists(os.path.join(root_real, rel))


def _quoted(path: str) -> str:
    import shlex  # noqa: PLC0415

    return shlex.quote(path)


__all__ = ["OpenIntent", "open_intents"]
