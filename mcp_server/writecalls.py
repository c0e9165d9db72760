"""The `write` call on core alone: one implementation for the SDK's tool and the stdio front.

write_tools.py registers `write` with the SDK over `write` here; the stdio front (earlycalls.py)
answers a client's plain writes with the same function, so that a session of listings, reads,
searches and writes never needs the SDK's import. Every rule of the change stays in core's
Writer (path safety, the journal, the approval gate); this shapes its answer and marks the call
as a write for the activity panel. Nothing here imports the SDK.
"""

from __future__ import annotations

from typing import Any

from vaultwatch.core.edit.writes import Writer, WriteResult
from vaultwatch.core.review.agentrules import NAME_CHARS

from .activity import current_call
from .answers import Answer, ok_answer

WRITE_TEXT = "diff_summary, warnings"  # they quote the notes' values and links (see readcalls.ROW_TEXT)


def actor(client_name: Any) -> str:
    """The writer a client's changes are journaled as: `agent:<its name>` (`agent:unknown` without one)."""
    return "agent:" + str(client_name or "unknown")[:NAME_CHARS]


def started() -> None:
    """Mark the call being served as a write (before it runs: a refused write is still one)."""
    current_call().write = True


def write_answer(result: WriteResult) -> Answer:
    """The answer of a write tool's result; the call's record lists the paths it changed."""
    record = current_call()
    record.listed(result.changed_paths, len(result.changed_paths))
    record.diff_summary = result.diff_summary
    return ok_answer(result.as_dict(), meta={"untrusted": WRITE_TEXT})


def write(
    writer: Writer,
    *,
    path: str,
    content: str,
    actor: str,
    if_match: str | None = None,
    overwrite: bool = False,
    create_only: bool = False,
) -> Answer:
    """The `write` tool's answer; core's VaultError for a write it refuses."""
    started()
    return write_answer(
        writer.write(path, content, if_match=if_match, overwrite=overwrite, create_only=create_only, actor=actor)
    )


__all__ = ["WRITE_TEXT", "actor", "started", "write", "write_answer"]
