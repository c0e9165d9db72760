"""At a server's start: finish whatever a crash (kill -9, power loss) interrupted.

Interrupted reverts and renames first (core.review.revert), then what builds on them: batch
reverts (core.review.batch), redos (core.review.redo) and approvals of pending changes
(core.review.pending). The person is told how each went.
"""

from __future__ import annotations

import threading

from vaultwatch.core.edit.hooks import problem
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.batch import resume_batches
from vaultwatch.core.review.journal import Journal
from vaultwatch.core.review.pending import resume_approvals
from vaultwatch.core.review.redo import resume_redos
from vaultwatch.core.review.revert import resume_reverts


def resume_interrupted(writer: Writer, journal: Journal) -> list[tuple[int, str]]:
    """Finish every revert, rename, batch revert, redo and approval a crash interrupted. Returns (change id,
    what happened) for each; one that cannot finish stays open (the person sees why, and
    `vaultwatch revert ID` tries again)."""
    out = resume_reverts(writer, journal)
    return out + resume_batches(writer, journal) + resume_redos(writer, journal) + resume_approvals(writer, journal)


def resume_in_background(vault: object, journal: Journal) -> threading.Thread | None:
    """At a server's start: finish interrupted reverts in a thread (the person is told how each
    went on the vault's bus); None when there is none."""
    if not journal.open_intents(interrupted=True):
        return None

    def run() -> None:
        wait = getattr(vault, "wait_ready", None)
        if callable(wait):  # the revert's writes refresh the index: after the first load
            wait(120)
        for _, message in resume_interrupted(Writer(vault), journal):  # type: ignore[arg-type]
            vault.bus.publish(problem(message))  # type: ignore[attr-defined]

    thread = threading.Thread(target=run, name="vaultwatch-resume-revert", daemon=True)
    thread.start()
    return thread


__all__ = ["resume_in_background", "resume_interrupted"]
