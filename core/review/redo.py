"""Redo a revert: re-apply what a revert (one change's, or a whole batch's) undid.

    outcome = redo(writer, journal, revert_change_id, actor="human:me")

Given a revert row of a batch (core.review.batch), the whole batch is redone, oldest change
first, all or nothing: every file must still hold what the revert left (following the batch's
own renames, and the moves the journal recorded since, as a revert follows them: a note the
person moved with `mv` is redone where it is now) or what the redo puts there (a redo cut off by
a kill, run again, skips what it already did); one file changed since refuses the whole redo,
naming it, before anything is written. A rename is done again (the note moved, then the
rewritten links written back), a delete moves the note to the trash again. Each redo is
journaled as a revert of the revert (kind "revert", `revert_of` the revert row), so a redo of
content changes can itself be reverted. While it runs, its intent names every path and etag it
leaves, so the server never takes its writes for outside edits.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from vaultwatch.core.edit.hooks import FileWrite, Scope, enter, leave
from vaultwatch.core.edit.writes import Writer, etag_of
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review.batch import batch_reverts, where_now
from vaultwatch.core.review.journal import Change, Journal
from vaultwatch.core.review.revert import RevertRefused, current_bytes, located, refuse_changed

REDO = "redo"  # an intent's plan "operation" for a redo


@dataclass
class RedoOutcome:
    """A redo: its batch id and the journal rows it recorded (one per revert redone)."""

    batch: str
    redone: list[Change] = field(default_factory=list)
    finished: bool = False  # it finished a redo a kill had cut off


def _rows(journal: Journal, revert_id: int) -> list[tuple[Change, Change]]:
    """(revert row, the change it reverted) to redo, in the order to redo them (oldest change first)."""
    row = journal.get(revert_id)
    if row.kind != "revert" or row.revert_of is None:
        raise RevertRefused(f"change {revert_id} is not a revert; `vaultwatch changes` shows reverts as tool revert")
    batch = row.arguments.get("batch")
    rows = batch_reverts(journal, str(batch)) if batch else [row]  # newest revert first: oldest change first
    todo = [(r, journal.get(r.revert_of)) for r in rows if r.reverted_by is None and r.revert_of is not None]
    if not todo:
        raise RevertRefused(f"revert {revert_id} was redone already (by change {row.reverted_by})")
    return todo


def _followed(journal: Journal, todo: list[tuple[Change, Change]]) -> list[tuple[Change, Change, dict[str, str]]]:
    """Each revert row with its files named where the notes are now: the journal's moves after the
    last revert of the batch (a person's `mv`, a rename through vaultwatch), the chain a revert
    follows (core.review.revert.located), and {old path: new}. The moves between the batch's own
    reverts are its renames put back, which the redo does again itself; a rename's or a delete's
    row is redone where the journal named it (its check refuses when the note is not there)."""
    last = max(row.id for row, _ in todo)
    out: list[tuple[Change, Change, dict[str, str]]] = []
    for row, original in todo:
        if original.operation in ("rename", "delete"):
            out.append((row, original, {}))
            continue
        here, moved = located(journal, row, after=last)
        out.append((here, original, moved))
    return out


def _check(writer: Writer, journal: Journal, todo: list[tuple[Change, Change]]) -> None:
    earlier_moves: list[tuple[str, str]] = []  # the redo's renames before this one, newest first, backwards
    seen: set[str] = set()
    for row, original in todo:
        moves = earlier_moves
        if original.operation == "rename" and original.src:
            moves = [(original.path, original.src), *earlier_moves]
        for f in row.files:
            now = where_now(f.path, moves)
            if now in seen:
                continue
            seen.add(now)
            current = current_bytes(writer, now)
            etag = None if current is None else etag_of(current)
            if etag not in (f.after_etag, f.before_etag):
                before, written = journal.contents(row.id, f.seq)
                raise refuse_changed(journal, row, now, before, written, current)
        if original.operation == "rename" and original.src:
            src = where_now(original.src, earlier_moves)
            dst = where_now(original.path, earlier_moves)
            if current_bytes(writer, dst) is not None and current_bytes(writer, src) is not None:
                raise RevertRefused(f"cannot redo change {original.id}: {dst} exists already", path=dst)
            earlier_moves.insert(0, (original.path, original.src))


def _cut_off(journal: Journal, revert_id: int) -> list[int]:
    """The intents of redos of `revert_id`'s batch whose process was killed midway."""
    row = journal.get(revert_id)
    batch = row.arguments.get("batch")
    related = {r.id for r in batch_reverts(journal, str(batch))} if batch else {revert_id}
    return [
        i[0]
        for i in journal.open_intents(interrupted=True)
        if i[3].get("operation") == REDO and i[3].get("revert") in related
    ]


def redo(writer: Writer, journal: Journal, revert_id: int, *, actor: str = "human") -> RedoOutcome:
    """Redo the revert `revert_id` (and the rest of its batch); RevertRefused, nothing written, when
    a file changed since. A redo of it killed midway is finished: what it redid is skipped."""
    stale = _cut_off(journal, revert_id)
    try:
        todo = _rows(journal, revert_id)
    except RevertRefused:
        if not stale:
            raise
        for intent in stale:  # killed after its last row was recorded: nothing left to redo
            journal.drop_intent(intent)
        return RedoOutcome("", finished=True)
    followed = _followed(journal, todo)
    todo = [(row, original) for row, original, _ in followed]
    _check(writer, journal, todo)
    batch = uuid.uuid4().hex[:12]
    plan = {
        "operation": REDO,
        "revert": revert_id,
        "batch": batch,
        "files": [{"path": f.path, "to": f.before_etag} for r, _ in todo for f in r.files],
        "moves": [[o.src, o.path] for _, o in todo if o.operation == "rename" and o.src],
    }
    intent = journal.begin_intent(0, actor, plan)
    out = RedoOutcome(batch, finished=bool(stale))
    try:
        for row, original, moved in followed:
            out.redone.append(_redo_one(writer, journal, row, original, batch, actor, moved))
    except BaseException:
        journal.drop_intent(intent)  # refused midway: the cut-off ones stay for the next try
        raise
    for done in [intent, *stale]:
        journal.drop_intent(done)
    return out


def resume_redos(writer: Writer, journal: Journal) -> list[tuple[int, str]]:
    """Finish every redo a crash cut off (at a server's start, after the interrupted reverts)."""
    out: list[tuple[int, str]] = []
    done: set[int] = set()
    for intent_id, _, actor, plan in journal.open_intents(interrupted=True):
        if plan.get("operation") != REDO or intent_id in done:
            continue
        revert_id = plan.get("revert")
        if not isinstance(revert_id, int):  # a redo from before redos named their revert: run it again by hand
            continue
        done.update(_cut_off(journal, revert_id))
        try:
            finished = redo(writer, journal, revert_id, actor=actor)
        except VaultError as exc:
            out.append((revert_id, f"interrupted redo of revert {revert_id} not finished: {exc.message}"))
            continue
        out.append((revert_id, f"finished an interrupted redo of revert {revert_id} ({len(finished.redone)} more)"))
    return out


def _redo_one(
    writer: Writer, journal: Journal, row: Change, original: Change, batch: str, actor: str, moved: dict[str, str]
) -> Change:
    scope = Scope(journal, None, "redo", actor, {"change_id": row.id, "batch": batch}, kind="revert", revert_of=row.id)
    scope.approved = True
    token = enter(scope)
    try:
        if original.operation == "rename" and original.src:
            if not _is_there(writer, original.path):  # else a redo cut off by a kill had moved it
                writer.rename(original.src, original.path, update_links=False, actor=actor)
            summary = f"moved {original.src} to {original.path} again"
        elif original.operation == "delete":
            writer.delete(original.path, actor=actor)
            summary = f"deleted {original.path} again"
        else:
            summary = f"re-applied change {original.id} to {row.path}"
            if moved:
                summary += "; " + ", ".join(f"{old} had moved to {new} since" for old, new in moved.items())
        if original.operation != "delete":
            for f in reversed(row.files):
                wrote, left = journal.contents(row.id, f.seq)  # the revert replaced `wrote` by `left`
                current = current_bytes(writer, f.path)
                now = None if current is None else etag_of(current)
                if now == f.before_etag:  # a redo cut off by a kill had put it back
                    scope.files.append(FileWrite(f.path, left, wrote, "restored"))
                elif wrote is not None and left is not None:
                    writer.write(f.path, wrote, if_match=f.after_etag, exact=True, actor=actor, allow_attachment=True)
                elif wrote is not None:  # with the mode it had when the revert removed it
                    writer.write(
                        f.path,
                        wrote,
                        create_only=True,
                        exact=True,
                        actor=actor,
                        allow_attachment=True,
                        mode=f.before_mode,
                    )
                elif left is not None:
                    writer.delete(f.path, if_match=f.after_etag, actor=actor)
                    scope.files.append(FileWrite(f.path, left, None, "restored"))
    except VaultError:
        leave(token)
        raise
    leave(token)
    return journal.record_revert(scope, row, f"redid change {original.id} (undone by {row.id}): {summary}", row.path)


def _is_there(writer: Writer, rel: str) -> bool:
    return current_bytes(writer, rel) is not None


__all__ = ["REDO", "RedoOutcome", "redo", "resume_redos"]
