"""Revert a journaled change: put back the bytes it replaced, only where the note still holds what it wrote.

    outcome = revert(writer, journal, change_id, actor="human")

A content change (write, edit, edit_section, update_frontmatter) is reverted when every file
it wrote still has the etag it left; then the before-bytes go back exactly (no BOM or line
ending "style" applied), a created note goes to the trash, a removed one is re-created. A
rename is reverted by first restoring every note whose links it rewrote (byte for byte)
and then moving the note or folder back. A delete into the trash is moved back out of it;
a permanent delete is re-created from the journaled bytes.

When a file changed since (an outside edit, another agent), nothing is changed and
`RevertRefused` says why, naming who changed it and carrying the three versions: before
the change, what the change wrote, and what is there now. Every revert is itself a journal
change (kind "revert", `revert_of` set) and the reverted change is marked `reverted_by`.

Crash-safe: before its first write a revert records its intent in the journal (every file it
puts back, with the etag it finds and the etag it leaves, and the move back of a rename). A
revert killed midway leaves that intent open: running the same revert again (or
core.review.resume at the next start) finishes it: files already put back are skipped, the
rest are put back, and one revert row records the whole. While it is open, the journal
counts the files it put back as the revert's, never as outside edits.
"""

from __future__ import annotations

import os
import stat as stat_mod
import threading
from dataclasses import dataclass, field, replace

from vaultwatch.core.disk.paths import is_hidden, normalize
from vaultwatch.core.disk.safeio import Loc
from vaultwatch.core.edit.atomic import fsync_dir, read_file, rename_noreplace, sweep_temp_files
from vaultwatch.core.edit.hooks import FileWrite, Scope, enter, leave
from vaultwatch.core.edit.writes import TRASH, Writer, etag_of, is_human
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review.journal import RECOVERY_ACTOR, Change, Journal, left_at
from vaultwatch.core.review.merge import MergeResult, merge3
from vaultwatch.core.review.moves import Move, follow, moved


class RevertRefused(VaultError):
    """The change cannot be reverted (the note changed since, or the change is not revertible).
    `change_id`: the change refused; `moved_from`: where the note was when the change made it, when
    it has moved to `path` since; `found_at`: a note elsewhere holding exactly what the change left,
    when nothing is at `path` (said, never reverted)."""

    code = "revert_refused"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        before: bytes | None = None,
        written: bytes | None = None,
        current: bytes | None = None,
        change_id: int | None = None,
        moved_from: str | None = None,
        found_at: str | None = None,
    ) -> None:
        super().__init__(message)
        self.found_at = found_at
        self.path = path
        self.before = before
        self.written = written
        self.current = current
        self.change_id = change_id
        self.moved_from = moved_from

    @property
    def versions(self) -> dict[str, bytes | None]:
        """The three versions of the note: before the change, what it wrote, and now."""
        return {"before": self.before, "written": self.written, "current": self.current}


@dataclass(frozen=True, slots=True)
class RevertOutcome:
    """One revert: the change reverted and the journal row of the revert itself."""

    change_id: int
    revert: Change
    paths: tuple[str, ...] = ()


@dataclass
class RevertAllOutcome:
    """Reverting every change of one agent: what was reverted and what was refused (and why)."""

    agent: str
    reverted: list[RevertOutcome] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)


def _exists(writer: Writer, rel: str) -> bool:
    """Whether something (a file, folder or link) is at the vault path `rel` (core.disk.safeio)."""
    try:
        with writer.locate(normalize(rel), follow_last=False) as loc:
            return loc.lstat() is not None
    except VaultError:
        return False


def _current(writer: Writer, rel: str) -> bytes | None:
    try:
        with writer.locate(normalize(rel)) as loc:  # core.disk.safeio: relative to the vault's descriptor
            found = read_file(loc, rel)
    except VaultError:
        return None
    return None if found is None else found[0]


NO_RECORD = (
    "by an edit the journal has no record of (made while no vaultwatch watched the vault, or dropped "
    "from the journal since)"
)


def _moved_to(journal: Journal, change: Change, rel: str) -> tuple[str, tuple[Move, ...]] | None:
    """Where the note at vault path `rel` was when `change` made it, and the journaled moves that
    took it to `rel` since; None when it did not move."""
    moves = journal.moves(after=change.id)
    if not moves:
        return None
    try:
        original = journal.get(change.id)
    except VaultError:
        return None
    for old in dict.fromkeys([f.path for f in original.files] + [original.path]):
        removed = original.operation == "delete" and old == original.path
        disk = None if removed else journal.on_disk(left_at(original, old))
        now, via = follow(moves, old, change.id, folders_only=removed, disk=disk)
        if via and now == rel:
            return old, via
    return None


# a note not where the journal's moves leave it, with no journaled row that removed it there: the
# journal cannot know what did (so never "removed by an edit")
NOT_THERE = "moved or removed while no vaultwatch watched the vault (or by a change dropped from the journal since)"


def _since(journal: Journal, change: Change, rel: str, gone: bool, holder: str | None = None) -> str:
    """What happened to `rel` after `change`, in plain words, from the journal's newest later row of
    the note (at each place its journaled moves took it, while it was there). `holder`: a note
    holding exactly what the change left, found by name (moved there while nothing watched?)."""
    last = later_edit(journal, change, rel)
    who = ("outside vaultwatch" if last.kind == "outside" else f"by {last.who}") if last is not None else ""
    if not gone:
        return f"changed after it, {NO_RECORD}" if last is None else f"changed after it, {who} (change {last.id})"
    if last is not None and last.operation == "delete":
        said = f"is gone: deleted after it, {who} (change {last.id})"
    elif (
        last is not None
        and last.kind == "outside"
        and any(c.id == last.id for c in journal.changes(path=rel, limit=50))
    ):
        said = f"is gone: removed or moved out of the vault after it, {who} (change {last.id})"
    elif last is None:
        said = f"is not there now: {NOT_THERE}"
    else:
        said = f"is not there now: changed after it, {who} (change {last.id}), then {NOT_THERE}"
    if holder:
        said += (
            f"; a note holding exactly what this change left is at {holder} "
            "(moved there while vaultwatch was not watching?)"
        )
    return said


def _shown(journal: Journal, change: Change, rel: str) -> tuple[str, str | None]:
    """`rel` as the person reads it in a refusal (where it was, and where it moved since), and where
    it was when the change made it (None: there)."""
    found = _moved_to(journal, change, rel)
    if found is None:
        return rel, None
    old, via = found
    how = ", ".join(f"change {m.change_id}, {m.who}" for m in via)
    return f"{old} (moved since to {rel}: {how})", old


def _refuse_changed(
    journal: Journal, change: Change, rel: str, before: bytes | None, written: bytes | None, current: bytes | None
) -> RevertRefused:
    # a copy of what the change left found elsewhere by name is said, never reverted in its place
    holder = journal.holder_of(rel, etag_of(written)) if current is None and written is not None else None
    hint = (
        "look at the hunks, revert the agent's lines anyway where the later edit did not touch them, or edit "
        "the note by hand"
        if current is not None and before is not None and written is not None
        else f"if {holder} is the note, move it back to {rel} and revert again, or revert it there by hand"
        if holder
        else "edit the note by hand"
    )
    shown, old = _shown(journal, change, rel)
    return RevertRefused(
        f"cannot revert change {change.id}: {shown} {_since(journal, change, rel, current is None, holder)}. "
        f"Nothing was reverted; {hint}",
        path=rel,
        before=before,
        written=written,
        current=current,
        change_id=change.id,
        moved_from=old,
        found_at=holder,
    )


def located(journal: Journal, change: Change, *, after: int | None = None) -> tuple[Change, dict[str, str]]:
    """`change` with each file it wrote named where the note is now: the chain of moves the journal
    recorded since (core.review.moves), and only that chain, so the revert writes the note the change
    made and no other (and only where the bytes it wrote still are: `check`). A file the change
    removed (a delete's note) follows only the moves of its folders. A rename is reverted where it
    left things (its move back names both ends). Returns the located change and {old path: new}.
    `after`: follow only the moves after that change (a redo of a batch's reverts: after its last).
    A redo (core.review.redo) follows the one chain too."""
    if change.kind == "outside" or change.operation == "rename":
        return change, {}
    since = change.id if after is None else after
    moves = journal.moves(after=since)
    if not moves:
        return change, {}

    def now(rel: str, folders_only: bool) -> str:
        # a move back made while nothing watched: the place that holds what the change left
        disk = None if folders_only else journal.on_disk(left_at(change, rel))
        new = follow(moves, rel, since, folders_only=folders_only, disk=disk)[0]
        try:
            ok = new != rel and normalize(new) == new and not is_hidden(new)
        except VaultError:
            ok = False
        return new if ok else rel

    where: dict[str, str] = {}
    files = []
    for f in change.files:
        new = now(f.path, f.after_etag is None)
        if new != f.path:
            where[f.path] = new
            files.append(replace(f, path=new))
        else:
            files.append(f)
    path = now(change.path, True) if change.operation == "delete" else where.get(change.path, change.path)
    if path != change.path:
        where[change.path] = path
    if not where:
        return change, {}
    return replace(change, files=tuple(files), path=path), where


def check(writer: Writer, journal: Journal, change: Change) -> None:
    """Raise RevertRefused when `change` cannot be reverted now (see module doc); change nothing."""
    if change.kind == "outside":
        raise RevertRefused(
            f"change {change.id} is an edit made outside vaultwatch: the journal does not know what "
            "was there before, so it cannot be reverted here (use your editor's or git's history)"
        )
    if change.reverted_by is not None:
        raise RevertRefused(f"change {change.id} was already reverted by change {change.reverted_by}")
    if change.kind == "revert" and change.revert_of is not None:
        try:
            original = journal.get(change.revert_of)
        except VaultError:
            original = None
        if original is not None and original.operation in ("rename", "delete"):
            raise RevertRefused(
                f"change {change.id} reverted a {original.operation}; to redo it, {original.operation} again"
            )
    for f in change.files:
        before, written = journal.contents(change.id, f.seq)
        current = _current(writer, f.path)
        if (current is None) != (written is None) or (current is not None and etag_of(current) != f.after_etag):
            raise _refuse_changed(journal, change, f.path, before, written, current)
    if change.operation == "rename":
        src, dst = change.src, change.path
        if not src:
            raise RevertRefused(f"change {change.id}: the journal has no source path for this rename")
        if _exists(writer, src):
            raise RevertRefused(
                f"cannot revert change {change.id}: {src} exists again, so {dst} cannot move back "
                "there; rename or remove it first",
                path=src,
            )
        if not _exists(writer, dst):
            raise _refuse_moved_rename(writer, journal, change, src, dst)
        if change.etag is not None and not any(f.path == dst for f in change.files):
            current = _current(writer, dst)
            if current is None or etag_of(current) != change.etag:
                raise _refuse_changed(journal, change, dst, None, None, current)
    if change.operation == "delete":
        rel = change.path
        if _exists(writer, rel):
            raise RevertRefused(
                f"cannot revert change {change.id}: {rel} exists again; rename or remove it first", path=rel
            )
        source = _trash_source(writer, change)
        if source is not None:
            source.close()
        if source is None and not change.files:
            raise RevertRefused(
                f"cannot revert change {change.id}: {rel} is no longer in the trash "
                f"({change.moved_to or 'deleted permanently'}) and the journal holds no copy"
            )


def _refuse_moved_rename(writer: Writer, journal: Journal, change: Change, src: str, dst: str) -> RevertRefused:
    """The refusal for a rename whose note is no longer where the rename put it. Moved since (the
    journal followed it), it says where it is and how to undo the rename: the revert does not move it
    back from there, because a rename's revert is a move, and moving it would undo the later move too
    (a revert of an edit after a move changes the note's bytes and leaves it where it was moved to)."""
    now, via = journal.where_now(dst, change.id)
    if not via or now == dst or not _exists(writer, now):
        return RevertRefused(f"cannot revert change {change.id}: {dst} is gone (moved or deleted since)", path=dst)
    how = ", ".join(f"change {m.change_id}, {m.who}" for m in via)
    return RevertRefused(
        f"cannot revert change {change.id}: {dst} was moved since to {now} ({how}). Reverting the rename "
        f"from there would undo that move too, so nothing was reverted. To put it back at {src}, move it "
        f"back to {dst} and revert again (the links the rename rewrote are put back too), or rename it "
        "yourself",
        path=dst,
        change_id=change.id,
    )


def exists(writer: Writer, rel: str) -> bool:
    """Whether something (a file, folder or link) is at the vault path `rel`."""
    return _exists(writer, rel)


def current_bytes(writer: Writer, rel: str) -> bytes | None:
    """What is at vault path `rel` now (None: nothing, or not a readable file)."""
    return _current(writer, rel)


def refuse_changed(
    journal: Journal, change: Change, rel: str, before: bytes | None, written: bytes | None, current: bytes | None
) -> RevertRefused:
    """The refusal for `rel`, changed after `change` (who changed it, and the three versions)."""
    return _refuse_changed(journal, change, rel, before, written, current)


def _trash_source(writer: Writer, change: Change) -> Loc | None:
    """A core.disk.safeio Loc on the deleted entry in the vault's .trash (the caller closes it), or None."""
    moved = change.moved_to
    if change.operation != "delete" or not moved or not moved.startswith(TRASH + "/"):
        return None
    try:
        with writer.locate(TRASH, follow_last=False, allow_hidden=True) as trash:
            tst = trash.lstat()
        if tst is None or not stat_mod.S_ISDIR(tst.st_mode):  # missing, a symlink or a file
            return None
        loc = writer.locate(moved, follow_last=False, allow_hidden=True)
    except (VaultError, OSError):
        return None
    st = loc.lstat()
    if st is None or stat_mod.S_ISLNK(st.st_mode):
        loc.close()
        return None
    if change.previous_etag is not None:
        try:
            found = read_file(loc, moved) if stat_mod.S_ISREG(st.st_mode) else None
        except VaultError:
            found = None
        if found is None or etag_of(found[0]) != change.previous_etag:
            loc.close()
            return None
    return loc


def _plan(change: Change) -> dict:
    """What a revert of `change` will leave on disk: per file, the etag it finds and the one it leaves."""
    files = [{"path": f.path, "from": f.after_etag, "to": f.before_etag} for f in change.files]
    move = [change.path, change.src] if change.operation == "rename" and change.src else None
    return {"change_id": change.id, "files": files, "move": move}


def _etag_now(writer: Writer, rel: str) -> str | None:
    data = _current(writer, rel)
    return None if data is None else etag_of(data)


def _resume_check(writer: Writer, journal: Journal, change: Change) -> set[int]:
    """A revert of `change` was interrupted: every file must hold what the change wrote or what the
    revert puts back (anything else changed since: refused). Returns the seqs already put back."""
    done: set[int] = set()
    for f in change.files:
        now = _etag_now(writer, f.path)
        if now == f.before_etag:
            done.add(f.seq)
        elif now != f.after_etag:
            before, written = journal.contents(change.id, f.seq)
            raise _refuse_changed(journal, change, f.path, before, written, _current(writer, f.path))
    return done


def revert(
    writer: Writer, journal: Journal, change_id: int, *, actor: str = "human", batch: str | None = None
) -> RevertOutcome:
    """Revert one change (see module doc); raises RevertRefused with the reason when it cannot.
    A revert of this change that was interrupted is finished instead of refused. `batch`: the
    id of the batch revert (core.review.batch) this revert is part of, kept in its journal row."""
    change, moved = located(journal, journal.get(change_id))
    with _active_lock:
        mine = [i for i in journal.open_intents() if i[1] == change.id]
        dead = {i[0] for i in journal.open_intents(interrupted=True)}
        # interrupted: its process is gone, or it is this process's and no thread runs it any more
        interrupted = [i for i in mine if i[0] in dead or (i[3].get("pid") == os.getpid() and i[0] not in _active)]
        if len(mine) > len(interrupted):
            pid = next(i[3].get("pid") for i in mine if i not in interrupted)
            raise RevertRefused(f"change {change.id} is being reverted right now (process {pid}); wait for it")
        claimed = {i[0] for i in interrupted}
        _active.update(claimed)
    try:
        if batch is None and interrupted:  # finishing a batch's revert: it stays the batch's
            batch = interrupted[-1][3].get("batch")
        return _revert(writer, journal, change, interrupted, actor, claimed, batch, moved)
    finally:
        with _active_lock:
            _active.difference_update(claimed)


_active: set[int] = set()  # intents a thread of this process is carrying out now
_active_lock = threading.Lock()


def _revert(
    writer: Writer,
    journal: Journal,
    change: Change,
    interrupted: list,
    actor: str,
    claimed: set[int],
    batch: str | None = None,
    moved: dict[str, str] | None = None,
) -> RevertOutcome:
    if interrupted and change.reverted_by is not None:  # recorded after all: nothing left to finish
        for stale in interrupted:
            journal.drop_intent(stale[0])
        interrupted = []
    done: set[int] = set()
    moved_back = False
    undeleted = False
    if interrupted and change.reverted_by is None:
        intent = interrupted[-1][0]
        done = _resume_check(writer, journal, change)
        if change.operation == "rename" and change.src:
            moved_back = _exists(writer, change.src) and not _exists(writer, change.path)
        # a delete's revert killed once the note was back (moved out of the trash or re-created):
        # the note there is the revert's own, not one that "exists again"
        undeleted = change.operation == "delete" and bool(change.files) and {f.seq for f in change.files} <= done
        if not moved_back and not undeleted:
            check(writer, journal, _without(change, done))
    else:
        check(writer, journal, change)
        with _active_lock:
            plan = _plan(change) if batch is None else {**_plan(change), "batch": batch}
            intent = journal.begin_intent(change.id, actor, plan)
            _active.add(intent)
            claimed.add(intent)
    arguments: dict = {"change_id": change.id} if batch is None else {"change_id": change.id, "batch": batch}
    scope = Scope(journal, None, "revert", actor, arguments, kind="revert", revert_of=change.id, approved=True)
    token = enter(scope)
    touched: list[str] = []
    restored: list[str] = []  # the files of a folder moved back out of the trash
    try:
        for f in reversed(change.files):
            before, written = journal.contents(change.id, f.seq)
            touched.append(f.path)
            if f.seq in done:  # put back by the interrupted run
                scope.files.append(FileWrite(f.path, written, before, "restored"))
            elif written is not None and before is not None:
                writer.write(f.path, before, if_match=f.after_etag, exact=True, actor=actor, allow_attachment=True)
            elif written is not None:  # the change created it: to the trash (the journal keeps its bytes)
                writer.delete(f.path, if_match=f.after_etag, actor=actor)
                scope.files.append(FileWrite(f.path, written, None, "restored", _removed_mode(scope, f.path)))
                # the folders the change made for it (its paths list them) go too, when left empty
                made = [p for p in change.paths if f.path.startswith(p + "/")]
                if made:
                    touched += writer.remove_empty_folders(made, actor=actor)
            elif before is not None and change.operation != "delete":
                writer.write(
                    f.path,
                    before,
                    create_only=True,
                    exact=True,
                    actor=actor,
                    allow_attachment=True,
                    mode=f.before_mode,
                )
        if change.operation == "rename" and change.src:
            if not moved_back:
                writer.rename(change.path, change.src, update_links=False, actor=actor)
            touched += [change.path, change.src]
            # the folders the rename made for its destination (its paths list them) go too, when left empty
            made = [p for p in change.paths if change.path.startswith(p + "/")]
            if made:
                touched += writer.remove_empty_folders(made, actor=actor)
            summary = f"moved {change.path} back to {change.src}"
            n = sum(1 for f in change.files if f.role == "links")
            if n:
                summary += f"; restored the links in {n} note{'s' if n != 1 else ''}"
        elif change.operation == "delete" and undeleted:
            summary = f"put {change.path} back"
            touched.append(change.path)
        elif change.operation == "delete":
            summary, restored = _undelete(writer, journal, change, scope, actor)
            touched += [change.path, *restored]
        else:
            summary = f"restored {', '.join(dict.fromkeys(touched)) or change.path} as before change {change.id}"
    finally:
        leave(token)
    if moved:
        summary += "; " + ", ".join(f"{old} had moved to {new} since" for old, new in moved.items())
    if interrupted:
        summary += " (finished an interrupted revert)"
        try:  # the killed run's half-written temporary files (a running server may not start again soon)
            sweep_temp_files(writer.vault.root_real, keep=journal.intent_temps())
        except OSError:
            pass
    record = journal.record_revert(
        scope, change, f"reverted change {change.id}: {summary}", change.path, intent=intent, also=restored
    )
    for stale in interrupted[:-1]:
        journal.drop_intent(stale[0])
    return RevertOutcome(change.id, record, tuple(dict.fromkeys(touched)))


def _without(change: Change, done: set[int]) -> Change:
    """`change` without the files an interrupted revert already put back (for `check`)."""
    if not done:
        return change
    return replace(change, files=tuple(f for f in change.files if f.seq not in done))


def resume_reverts(writer: Writer, journal: Journal) -> list[tuple[int, str]]:
    """Finish every revert a crash (kill -9, power loss) interrupted, and roll back every rename
    it cut off (a batch's own intent is core.review.batch's; core.review.resume runs both at
    start). Returns (change id, what happened) per interrupted revert; one that cannot finish
    stays open (the person sees why, and `vaultwatch revert ID` tries again)."""
    out: list[tuple[int, str]] = []
    seen: set[int] = set()
    for intent_id, change_id, actor, plan in journal.open_intents(interrupted=True):
        if plan.get("operation") == "rename":
            out.append(_roll_back_rename(writer, journal, intent_id, actor, plan))
            continue
        if plan.get("operation") in ("batch", "redo", "approve", "write"):  # finished after this loop, once
            continue  # the renames they cut off are rolled back (core.review.resume)
        if change_id in seen:
            continue
        seen.add(change_id)
        try:
            done = revert(writer, journal, change_id, actor=actor)
        except VaultError as exc:
            out.append((change_id, f"interrupted revert of change {change_id} not finished: {exc.message}"))
            continue
        out.append((change_id, done.revert.summary))
    return out


def roll_back_agents_renames(writer: Writer, journal: Journal) -> list[tuple[int, str]]:
    """Roll back every rename of an agent a kill cut off (a watching process, as the agent's server
    dies: Journal.follow); the person's own interrupted operations wait for them (see resume_reverts)."""
    return [
        _roll_back_rename(writer, journal, intent_id, actor, plan)
        for intent_id, _, actor, plan in journal.open_intents(interrupted=True)
        if plan.get("operation") == "rename" and not is_human(actor)
    ]


def _undelete(writer: Writer, journal: Journal, change: Change, scope: Scope, actor: str) -> tuple[str, list[str]]:
    """Put a deleted note (or folder) back: out of the trash, else from the journal's bytes. Returns
    what it did and, for a folder, the paths that came back with it (the revert's row names them, so
    a watching process tells their arrival from an outside edit)."""
    rel = normalize(change.path)
    source = _trash_source(writer, change)
    if source is not None:
        with source, writer.locate(rel, follow_last=False, make_dirs=True) as dst:
            rename_noreplace(source.dir_fd, source.name, dst.dir_fd, dst.name)
            fsync_dir(source.dir_fd)
            fsync_dir(dst.dir_fd)
            refresh = [*dst.created, rel]
            st = dst.lstat()
            if st is not None and stat_mod.S_ISDIR(st.st_mode):
                refresh += writer.files_under(rel, dst) + writer.dirs_under(rel, dst, "folder")
        writer.vault.refresh_paths(refresh, source=actor)
        return f"moved {change.moved_to} back to {rel}", [p for p in refresh if p.startswith(rel + "/")]
    for f in change.files:
        before, _ = journal.contents(change.id, f.seq)
        if before is not None:  # with the mode it had (a row from before the journal kept it: the usual one)
            writer.write(
                f.path, before, create_only=True, exact=True, actor=actor, allow_attachment=True, mode=f.before_mode
            )
    return f"re-created {rel} from the journal", []


def _removed_mode(scope: Scope, rel: str) -> int | None:
    """The permission bits of the file the revert's delete of `rel` just removed (kept in its row,
    so that a redo re-creates it as it was)."""
    if scope.preread is not None and scope.preread[0] == normalize(rel):
        return scope.preread_mode
    return None


def _roll_back_rename(writer: Writer, journal: Journal, intent_id: int, actor: str, plan: dict) -> tuple[int, str]:
    """A rename killed midway: journal what it did (the move, the links it rewrote) as its change,
    then revert that (links back, the note moved back). Killed before the move: nothing to do."""
    src, dst = plan["move"]
    if not (_exists(writer, dst) and not _exists(writer, src)):
        journal.drop_intent(intent_id)
        return 0, f"an interrupted rename of {src} had not moved it; nothing to roll back"
    change = journal.record_interrupted_rename(intent_id, actor, src, dst, moved=plan.get("paths", ()))
    try:
        done = revert(writer, journal, change.id, actor=RECOVERY_ACTOR)
    except VaultError as exc:
        return change.id, f"interrupted rename {src} -> {dst} (change {change.id}) not rolled back: {exc.message}"
    return change.id, f"rolled back an interrupted rename (change {change.id}): {done.revert.summary}"


def later_edit(journal: Journal, change: Change, rel: str) -> Change | None:
    """The newest journaled change of the note at `rel` after `change` (an outside edit, the person,
    another agent), or None when the journal holds none: who changed the note since, and when. When
    it moved since, each place the moves took it counts while it was there (an edit before a move
    is the note's; one at its old place after the move is another note's), and the moves are not
    its changes."""
    found = _moved_to(journal, change, rel)
    old, via = found if found else (rel, ())
    stays: list[tuple[str, int, int | None]] = []  # (place, after, until) in journal order
    place, since = old, change.id
    for m in via:
        stays.append((place, since, m.change_id))
        place, since = moved(place, m.pairs) or place, m.change_id
    stays.append((place, since, None))
    moves = {m.change_id for m in via}
    later = [
        c
        for place, after, until in stays
        for c in journal.changes(path=place, limit=50)
        if c.id > after and (until is None or c.id < until) and c.id not in moves
    ]
    return max(later, key=lambda c: c.id) if later else None


def merge_revert(refused: RevertRefused) -> MergeResult | None:
    """What "revert the agent's lines anyway" would leave, for a revert refused because its note
    changed since: a three-way merge (core.review.merge) of the note now with the undo of the
    change (base: what the change wrote, ours: the note now, theirs: before the change). None when
    there is nothing to merge (the note or one version is gone, or the refusal is of another kind)."""
    if refused.path is None or refused.before is None or refused.written is None or refused.current is None:
        return None
    return merge3(refused.written, refused.current, refused.before)


def revert_anyway(writer: Writer, journal: Journal, change_id: int, *, actor: str = "human") -> RevertOutcome:
    """Revert a content change whose note changed since, keeping the later edit: the agent's lines
    are undone where the later edit did not touch them (see `merge_revert`). A change that can be
    reverted plainly is; overlapping edits are refused, naming the lines of the note now."""
    change = journal.get(change_id)
    try:
        return revert(writer, journal, change_id, actor=actor)
    except RevertRefused as exc:
        refused = exc
    merged = merge_revert(refused)
    if merged is None or len(change.files) != 1 or change.operation in ("rename", "delete"):
        raise refused
    rel = refused.path or change.path
    if merged.merged is None:
        where = ", ".join(
            f"line {h.ours_start + 1}" if h.ours_end - h.ours_start <= 1 else f"lines {h.ours_start + 1}-{h.ours_end}"
            for h in merged.conflicts
        )
        raise RevertRefused(
            f"cannot revert change {change.id} anyway: the later edit of {rel} touches the agent's lines "
            f"({where} of the note now); nothing was reverted; edit the note by hand",
            path=rel,
            before=refused.before,
            written=refused.written,
            current=refused.current,
        )
    assert refused.current is not None  # merge_revert returned a result
    scope = Scope(
        journal, None, "revert", actor, {"change_id": change.id}, kind="revert", revert_of=change.id, approved=True
    )
    token = enter(scope)
    try:
        writer.write(
            rel, merged.merged, if_match=etag_of(refused.current), exact=True, actor=actor, allow_attachment=True
        )
    finally:
        leave(token)
    record = journal.record_revert(
        scope, change, f"undid the agent's lines in {rel}, kept the later edit (three-way merge)", rel
    )
    return RevertOutcome(change.id, record, (rel,))


def revert_agent(
    writer: Writer, journal: Journal, agent: str, *, since: float | None = None, actor: str = "human"
) -> RevertAllOutcome:
    """Revert every change of `agent` not yet reverted, newest first; refusals are listed, not fatal."""
    out = RevertAllOutcome(agent)
    for change in journal.changes(agent=agent, since=since, kinds=("change",)):
        if change.reverted_by is not None:
            continue
        try:
            out.reverted.append(revert(writer, journal, change.id, actor=actor))
        except RevertRefused as exc:
            out.refused.append((change.id, exc.message))
    return out


__all__ = [
    "located",
    "NO_RECORD",
    "NOT_THERE",
    "RevertAllOutcome",
    "RevertOutcome",
    "RevertRefused",
    "check",
    "later_edit",
    "merge_revert",
    "current_bytes",
    "exists",
    "refuse_changed",
    "roll_back_agents_renames",
    "resume_reverts",
    "revert",
    "revert_agent",
    "revert_anyway",
]
