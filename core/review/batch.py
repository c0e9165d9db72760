"""Revert a session's batch of changes as one unit: newest first, all or nothing, crash-safe.

    outcome = revert_session(writer, journal, session, actor="human:me")

The batch is every change of one agent session (its id, or a unique prefix of it, as
`vaultwatch changes` shows it), optionally only those between `since` and `until` on the
journal's own time, that is not reverted yet. Before anything is written every file the batch
touched is checked where it is now (following the moves journaled since: core.review.moves): each must still hold
what the batch's last change to it left. One file changed since (outside vaultwatch, another
agent) refuses the whole batch, naming the file and who changed it, and nothing is written.

Then one intent for the whole batch is written (its changes, and every path and etag the
batch's reverts put back, so that the server never takes them for outside edits) and the
changes are reverted one by one, newest first, each with `core.review.revert.revert` (its
own intent and journal row, tagged with the batch id). Killed midway, running the same
`revert_session` again (or core.review.resume at the next start) finishes the revert that was
cut off and the rest of the batch. The batch's revert rows carry `{"batch": BATCH_ID}` in their
arguments: `batch_reverts` finds them again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from vaultwatch.core.edit.writes import Writer, etag_of
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import sessionids
from vaultwatch.core.review.journal import Change, Journal, left_at
from vaultwatch.core.review.moves import follow
from vaultwatch.core.review.revert import (
    RevertOutcome,
    RevertRefused,
    current_bytes,
    refuse_changed,
    revert,
)

BATCH = "batch"  # an intent's plan "operation" for a batch revert


@dataclass
class BatchOutcome:
    """A batch revert: its id, the session, and each change reverted (newest first)."""

    batch: str
    session: str
    reverted: list[RevertOutcome] = field(default_factory=list)
    finished: bool = False  # it finished a batch revert a crash had cut off


def session_changes(
    journal: Journal, session: str, *, since: float | None = None, until: float | None = None
) -> list[Change]:
    """The changes of `session` (an id or a unique prefix) not reverted yet, newest first;
    `since`/`until` bound them on the journal's own time (`Journal.now()`)."""
    rows = journal.changes(kinds=("change",), session=sessionids.resolve(session, journal.sessions()))
    if not rows:
        raise VaultError(f"no change of session {session!r} in the journal (`vaultwatch changes` lists sessions)")
    times = journal.journal_times(c.id for c in rows)
    out = []
    for c in rows:
        jt = times.get(c.id, c.at)
        if since is not None and jt < since:
            continue
        if until is not None and jt > until:
            continue
        if c.reverted_by is None:
            out.append(c)
    return out


def where_now(path: str, moves: list[tuple[str, str]]) -> str:
    """Where the file that was at `path` is now, after the batch's later renames (oldest first)."""
    for src, dst in moves:
        if path == src:
            path = dst
        elif path.startswith(src + "/"):
            path = dst + path[len(src) :]
    return path


def check_batch(writer: Writer, journal: Journal, changes: list[Change]) -> None:
    """Raise RevertRefused when any file of the batch (`changes`, newest first) changed since the
    batch's last change to it; change nothing."""
    # where each file is now: the journal's moves since the change (the batch's own later renames,
    # anyone's renames through vaultwatch, the person's moves outside it), core.review.moves
    moves = journal.moves(after=min(c.id for c in changes)) if changes else []
    seen: set[str] = set()
    for change in changes:
        if change.kind != "change":
            raise RevertRefused(f"change {change.id} is not an agent's or the person's change")
        for f in change.files:
            disk = journal.on_disk(f.after_etag)  # None for a removed file: it follows its folders only
            now = follow(moves, f.path, change.id, folders_only=f.after_etag is None, disk=disk)[0]
            if now in seen:
                continue
            seen.add(now)
            current = current_bytes(writer, now)
            if (current is None) != (f.after_etag is None) or (
                current is not None and etag_of(current) != f.after_etag
            ):
                before, written = journal.contents(change.id, f.seq)
                raise refuse_changed(journal, change, now, before, written, current)
        if change.operation == "rename" and change.src:
            dst = follow(moves, change.path, change.id, disk=journal.on_disk(left_at(change, change.path)))[0]
            if dst not in seen and change.etag is not None:
                seen.add(dst)
                current = current_bytes(writer, dst)
                if current is None or etag_of(current) != change.etag:
                    raise refuse_changed(journal, change, dst, None, None, current)
        elif change.operation == "delete":
            rel = follow(moves, change.path, change.id, folders_only=True)[0]
            if rel not in seen:
                seen.add(rel)
                if current_bytes(writer, rel) is not None:
                    raise RevertRefused(
                        f"cannot revert change {change.id}: {rel} exists again; rename or remove it first", path=rel
                    )


def _plan(batch: str, session: str, changes: list[Change]) -> dict:
    """The batch's intent: its changes, and every path and etag its reverts leave on the way."""
    files = [{"path": f.path, "to": f.before_etag} for c in changes for f in c.files]
    moves = [[c.path, c.src] for c in changes if c.operation == "rename" and c.src]
    return {
        "operation": BATCH,
        "batch": batch,
        "session": session,
        "changes": [c.id for c in changes],
        "files": files,
        "moves": moves,
    }


def revert_session(
    writer: Writer,
    journal: Journal,
    session: str,
    *,
    since: float | None = None,
    until: float | None = None,
    actor: str = "human",
) -> BatchOutcome:
    """Revert the batch of `session` (see module doc); RevertRefused (nothing written) when a
    file changed since. An interrupted batch revert of the same session is finished instead."""
    for intent_id, _, _, plan in journal.open_intents(interrupted=True):
        if plan.get("operation") == BATCH and str(plan.get("session", "")).startswith(session):
            return _finish(writer, journal, intent_id, plan, actor)
    changes = session_changes(journal, session, since=since, until=until)
    if not changes:
        raise RevertRefused(f"every change of session {session!r} is reverted already")
    full = changes[0].session or session
    check_batch(writer, journal, changes)
    batch = uuid.uuid4().hex[:12]
    intent = journal.begin_intent(0, actor, _plan(batch, full, changes))
    return _run(writer, journal, intent, batch, full, [c.id for c in changes], actor, finished=False)


def _finish(writer: Writer, journal: Journal, intent: int, plan: dict, actor: str) -> BatchOutcome:
    ids = [int(i) for i in plan.get("changes", ())]
    # the revert the kill cut off first (revert() finishes it from its own intent)
    left = [i for i in ids if journal.get(i).reverted_by is None]
    return _run(writer, journal, intent, str(plan["batch"]), str(plan["session"]), left, actor, finished=True)


def _run(
    writer: Writer, journal: Journal, intent: int, batch: str, session: str, ids: list[int], actor: str, finished: bool
) -> BatchOutcome:
    out = BatchOutcome(batch, session, finished=finished)
    for change_id in ids:  # newest first
        if journal.get(change_id).reverted_by is not None:
            continue
        out.reverted.append(revert(writer, journal, change_id, actor=actor, batch=batch))
    journal.drop_intent(intent)
    return out


def batch_reverts(journal: Journal, batch: str) -> list[Change]:
    """The revert rows of batch revert `batch`, newest first."""
    return [c for c in journal.changes(kinds=("revert",)) if c.arguments.get("batch") == batch]


def resume_batches(writer: Writer, journal: Journal) -> list[tuple[int, str]]:
    """Finish every batch revert a crash interrupted (at a server's start)."""
    out: list[tuple[int, str]] = []
    for intent_id, _, actor, plan in journal.open_intents(interrupted=True):
        if plan.get("operation") != BATCH:
            continue
        try:
            done = _finish(writer, journal, intent_id, plan, actor)
        except VaultError as exc:
            out.append((0, f"interrupted revert of session {plan.get('session')} not finished: {exc.message}"))
            continue
        out.append((0, f"finished reverting session {done.session} ({len(done.reverted)} more changes)"))
    return out


__all__ = [
    "BatchOutcome",
    "batch_reverts",
    "check_batch",
    "resume_batches",
    "revert_session",
    "session_changes",
    "where_now",
]
