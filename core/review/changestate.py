"""A change's revert state in words: the one wording `vaultwatch changes`, the TUI's Changes view and
its detail share.

    state_said(change, lookup(journal, rows))   # "reverted by 9, redone by 10"

A revert is itself a change, and a redo is a revert of that revert: the row a revert names keeps only
the first step ("reverted by 9"), so a redone change read as undone while its edit was back. The
whole chain is followed: each later step undoes the one before it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from vaultwatch.core.errors import VaultError
from vaultwatch.core.review.journal import Change

MAX_STEPS = 20  # a chain longer than this is cut (each step is a person's revert or redo)


def lookup(journal: Any, rows: Iterable[Change] = ()) -> Callable[[int], Change | None]:
    """One change by id: among `rows` first (those already read), else from `journal` (None: unknown,
    or dropped by the journal's bounds)."""
    known = {c.id: c for c in rows}

    def get(change_id: int) -> Change | None:
        if change_id in known:
            return known[change_id]
        if journal is None:
            return None
        try:
            found: Change = journal.get(change_id)
        except VaultError:
            return None
        known[change_id] = found
        return found

    return get


def state_said(change: Change, get: Callable[[int], Change | None]) -> str:
    """What became of `change` by reverts and redos since, and what it reverts ("" for neither)."""
    parts: list[str] = []
    if change.revert_of is not None:
        undone = get(change.revert_of) if change.tool == "redo" else None
        if undone is not None and undone.revert_of is not None:
            parts.append(f"redoes {undone.revert_of} (reverts {change.revert_of})")
        else:
            parts.append(f"reverts {change.revert_of}")
    steps: list[str] = []
    at: Change | None = change
    while at is not None and at.reverted_by is not None and len(steps) < MAX_STEPS:
        later = get(at.reverted_by)
        if len(steps) % 2:
            verb = "redone"
        else:
            verb = "undone" if change.revert_of is not None else "reverted"
        redo = " (redo)" if verb == "undone" and later is not None and later.tool == "redo" else ""
        steps.append(f"{verb} by {at.reverted_by}{redo}")
        at = later
    if steps:
        parts.append(", ".join(steps))
    return "; ".join(parts)


__all__ = ["lookup", "state_said"]
