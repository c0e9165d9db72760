"""At a server's start: finish whatever a crash (kill -9, power loss) interrupted.

Interrupted reverts and renames first (core.review.revert), then what builds on them: batch
reverts (core.review.batch), redos (core.review.redo) and approvals of pending changes
(core.review.pending); last, agents' writes killed before their row (core.review.unrecorded:
an approval's own write is settled by its approval first). The person is told how each went.

Every front end reaches this through `Vault.finish_interrupted_soon` (once per vault, in a thread,
after the first index), whatever calls its clients make. One process at a time finishes a
journal's intents: the one holding its claim (`claim`, an flock beside the journal that the kernel
drops with a killed holder); another that starts meanwhile leaves them to it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from typing import Any

from vaultwatch.core.disk.private import open_private
from vaultwatch.core.edit.atomic import sweep_temp_files
from vaultwatch.core.edit.hooks import problem
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.events import IndexProblem
from vaultwatch.core.review.batch import resume_batches
from vaultwatch.core.review.journal import Journal
from vaultwatch.core.review.pending import resume_approvals
from vaultwatch.core.review.redo import resume_redos
from vaultwatch.core.review.revert import resume_reverts, roll_back_agents_renames
from vaultwatch.core.review.unrecorded import resume_writes, temporary_files


@contextlib.contextmanager
def claim(journal: Journal) -> Iterator[bool]:
    """Hold the right to finish `journal`'s interrupted intents while the block runs: True when
    held, False when another process (or another Journal of this one) holds it. Without the claim
    two starts at once would both journal the same interrupted rename and both try to put it back."""
    try:
        fd = open_private(journal.path + ".resume", os.O_RDWR)
    except OSError:  # (a journal in a folder we cannot write: nothing else can finish its intents either)
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # (lets go of the flock)


def resume_interrupted(writer: Writer, journal: Journal, *, agents_only: bool = False) -> list[tuple[int, str]] | None:
    """Finish every revert, rename, batch revert, redo and approval a crash interrupted, and journal
    the agents' writes it cut off before their row (`agents_only`: only what agents' own operations
    left: their renames rolled back, their writes journaled). Returns (change id,
    what happened) for each; one that cannot finish stays open (the person sees why, and
    `vaultwatch revert ID` tries again). None: another process is finishing them right now.

    The killed run's half-written temporary files go first, whoever finishes (a start, a watching
    process, `vaultwatch changes --finish`, the TUI's `f`): a live write's file is never taken
    (it holds its flock), and the empty folders a killed create made can then be removed."""
    with claim(journal) as mine:
        if not mine:
            return None
        temporary = temporary_files(writer, journal)  # what killed writes' temporary files tell, before the sweep
        try:
            sweep_temp_files(writer.vault.root_real)
        except OSError:
            pass
        if agents_only:  # (a watching process, as an agent's server dies: Journal.follow)
            return roll_back_agents_renames(writer, journal) + resume_writes(writer, journal, temporary)
        out = resume_reverts(writer, journal)
        out += resume_batches(writer, journal) + resume_redos(writer, journal) + resume_approvals(writer, journal)
        return out + resume_writes(writer, journal, temporary)


def resume_and_report(vault: Any, journal: Journal, *, agents_only: bool = False) -> list[tuple[int, str]] | None:
    """`resume_interrupted` on `vault`, each outcome published on its bus as a problem (the TUI
    shows it, a headless server prints it); a failure is published too, never raised."""
    try:
        out = resume_interrupted(Writer(vault), journal, agents_only=agents_only)
    except Exception as exc:  # the intents stay open: the next start, or `vaultwatch changes --finish`, tries again
        vault.bus.publish(IndexProblem(f"finishing an interrupted operation failed: {exc!r}", "error"))
        return []
    for _, message in out or ():
        vault.bus.publish(problem(message))
    return out


__all__ = ["claim", "resume_and_report", "resume_interrupted"]
