"""At a start: journal the agents' changes a kill cut off between their write and their row.

An agent's write, edit or delete is recorded as an intent just before it lands (core.edit.hooks):
the files it is about to commit, the bytes they held and the etag they will hold. An agent that
spawned its own server (`serve --stdio`) can kill it right after the write, before the journal's
row; without the intent the change would sit in the note with no row, unseen. For each such
intent whose process is gone (core.review.resume runs this after the other intents are finished):

- the file holds what the agent wrote (or is gone, for a delete): the change is journaled as the
  agent's, unreviewed, with the bytes it replaced, so that it can be reviewed and reverted;
- the file holds what it held before: the write never landed; the intent is closed, and the new
  folders it would have made are removed when they are still empty (unless its process lives on,
  stopped: then its write may still land, and the intent stays open);
- the file holds something else (changed again since): the first change journaled since that
  replaced what the write found or what it left says which: it did not land (closed as above), or
  it landed (journaled with the bytes that change replaced, the agent's own). With no such change
  (an outside edit) it is journaled all the same, as what the agent wrote: its revert then finds
  the outside edit and asks first (a three-way merge keeps it), and its summary says so.

A delete's row names the trash entry it made, never one a change journaled since moved there.
"""

from __future__ import annotations

import os
import re
import stat as stat_mod
from typing import Any

from vaultwatch.core import platform
from vaultwatch.core.disk.paths import normalize
from vaultwatch.core.edit.atomic import read_file
from vaultwatch.core.edit.hooks import WRITE_INTENT, FileWrite, permission_bits
from vaultwatch.core.edit.writes import TRASH, Writer, etag_of
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review.journal import Journal
from vaultwatch.core.review.revert import current_bytes, exists


def temporary_files(writer: Writer, journal: Journal) -> dict[int, bytes]:
    """The bytes in the temporary file of each interrupted agent's write that still has one (read
    before the killed run's temporary files are swept): its own bytes when it was killed before
    its switch, the file it replaced when killed after the switch and before that file's removal."""
    out = {}
    for intent_id, _, _, plan in journal.open_intents(interrupted=True):
        temp = plan.get("temp")
        if plan.get("operation") != WRITE_INTENT or not isinstance(temp, str):
            continue
        try:
            with writer.locate(temp, follow_last=False, allow_hidden=True) as loc:
                found = read_file(loc, temp)
        except VaultError:
            continue
        if found is not None:
            out[intent_id] = found[0]
    return out


def resume_writes(writer: Writer, journal: Journal, temporary: dict[int, bytes] | None = None) -> list[tuple[int, str]]:
    """Settle every agent's write a kill cut off (see module doc): (change id or 0, what happened).
    `temporary`: `temporary_files`, read before the sweep."""
    out = []
    for intent_id, _, actor, plan in journal.open_intents(interrupted=True):
        if plan.get("operation") == WRITE_INTENT:
            out.append(_settle(writer, journal, intent_id, actor, plan, (temporary or {}).get(intent_id)))
    return out


def _settle(
    writer: Writer, journal: Journal, intent_id: int, actor: str, plan: dict[str, Any], temp: bytes | None = None
) -> tuple[int, str]:
    tool = str(plan.get("tool") or "write")
    named = str(plan.get("path") or "")
    who = plan.get("agent") or actor.removeprefix("agent:")
    what = f"agent {who}'s {tool} of {named}"
    intended = journal.intent_files(intent_id)
    newest = plan.get("newest")
    now: bytes | None = None
    before: bytes | None = None
    written: bytes | None = None  # what the agent's write was to leave (None: a removal, or not kept)
    back = None  # where the rollback of a rename moved the note since
    since = None  # the first change journaled since that replaced what the write found or left
    by_intent = False  # `since` is a later killed write's intent, not a journaled change
    if intended:
        rel, before, after_etag = intended[0]
        # the rollback of a rename killed beside it may have moved the note back since (resume rolls
        # renames back first): the write is settled, and journaled, where its bytes are now
        back = journal.moved_back_since(rel, newest) if isinstance(newest, int) else None
        if back is not None:
            plan = {**plan, "path": back, "paths": [*plan.get("paths", ()), back]}
            what += f" (moved back to {back} since)"
            rel = back
        now = current_bytes(writer, rel)
        landed = (etag_of(now) if now is not None else None) == after_etag
        untouched = not landed and now == before
        written = journal.intended_bytes(intent_id)[0]
        if temp is not None and written is not None:
            # its temporary file tells: still its own bytes, the switch never came; other bytes, the
            # switch came and that is the file it replaced (whatever reached the note before it)
            if temp == written and not landed:
                untouched = True
            elif temp != written:
                landed, untouched, before = True, False, temp
                if now is None or etag_of(now) != after_etag:
                    now = written
        if not landed and not untouched and isinstance(newest, int) and temp is None:
            # changed again since: a change journaled since tells by what it replaced whether the
            # write landed; without it, another's later change would be journaled as this agent's
            # (and reverting that row would undo it)
            before_etag = etag_of(before) if before is not None else None
            since = journal.first_replace_after(rel, newest, (before_etag, after_etag))
            if since is None:  # or a later write, killed too (its row is not journaled yet)
                # only when it found what this write left: it may have looked before this write
                # landed, so finding the bytes before tells nothing
                found = journal.later_intent_found(intent_id, rel)
                found_etag = etag_of(found[1]) if found is not None and found[1] is not None else None
                if found is not None and found_etag == after_etag:
                    since, by_intent = (found[0], found_etag, found[1]), True
            if since is not None:
                landed = since[1] == after_etag
                untouched = not landed
                if landed:
                    now = since[2]
    else:  # no bytes either side: a folder's delete (or a hard-linked file's): gone or not
        rel = str(plan.get("bytes_at") or named)
        landed = not exists(writer, rel)
        untouched = not landed
    if not landed and platform.pid_alive(plan.get("pid")):
        # a stopped process (SIGSTOP), its intent taken as interrupted for its age: its write may
        # still land when it goes on, so it stays open, to be journaled by that process, or here
        # once landed or once the process is gone (closed now, the write would land unjournaled)
        return 0, f"{what} is held up in process {plan.get('pid')} (stopped?): it has not landed; left open"
    if untouched:
        removed = _remove_empty(writer, plan.get("new_folders") or [])
        journal.drop_intent(intent_id)
        also = f"; removed the empty folders it had made: {', '.join(removed)}" if removed else ""
        since_text = f" ({_later(since[0], by_intent)} changed the note since)" if since is not None else ""
        return 0, f"{what} was stopped before it landed: nothing changed{since_text}{also}"
    moved_to = None
    if tool == "delete" and now is None:
        # the trash entries the changes since moved there are theirs, not this delete's
        taken = journal.trash_entries_after(newest) if isinstance(newest, int) else set()
        moved_to = _in_trash(writer, rel, before, taken)
    if landed:
        summary = f"{tool} of {named}, journaled at the next start: a kill stopped it after it landed"
        if since is not None:
            summary += f" ({_later(since[0], by_intent)} changed the note since)"
    else:
        # changed outside vaultwatch since, before or after the write landed (nothing tells which):
        # the row holds what the agent wrote, so its revert finds the later edit and asks first
        # instead of putting the old bytes over it; an intent from before the journal kept those
        # bytes can only hold what is there now
        if written is not None or (intended and intended[0][2] is None):
            now = written
            summary = (
                f"{tool} of {named}, journaled at the next start: a kill stopped it, and the note has "
                "changed outside vaultwatch since; the journal holds what the agent wrote, and a revert "
                "shows the later edit first"
            )
        else:
            summary = (
                f"{tool} of {named}, journaled at the next start: a kill stopped it, and the note has changed "
                "again since; the journal holds it before the agent's change and as it is now"
            )
    mode = plan.get("mode")  # the permission bits of the file it replaced or removed (None: not kept)
    kept = permission_bits(mode) if isinstance(mode, int) and before is not None else None
    files = [FileWrite(rel, before, now, "target", kept)] if intended else []
    if moved_to:
        summary += f" (moved to {moved_to})"
    if back is not None:
        summary += f" (the rollback of a rename killed beside it moved the note back to {back})"
    folder = not intended and moved_to is not None and _is_folder(writer, moved_to)
    change = journal.record_interrupted_write(intent_id, actor, plan, files, summary, moved_to=moved_to, folder=folder)
    return change.id, f"journaled {what} (change {change.id}): a kill stopped it before its row; review it"


def _later(ref: int, by_intent: bool) -> str:
    return f"a later write, stopped too (operation {ref})" if by_intent else f"change {ref}"


def _is_folder(writer: Writer, rel: str) -> bool:
    try:
        with writer.locate(rel, follow_last=False, allow_hidden=True) as loc:
            st = loc.lstat()
    except VaultError:
        return False
    return st is not None and stat_mod.S_ISDIR(st.st_mode)


def _remove_empty(writer: Writer, folders: list[str]) -> list[str]:
    """The folders of `folders` that are still empty, removed (deepest first; the killed write's
    temporary file in them is swept before, core.review.resume)."""
    removed = []
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        try:
            with writer.locate(normalize(folder), follow_last=False) as loc:
                st = loc.lstat()
                if st is None or not stat_mod.S_ISDIR(st.st_mode):
                    continue
                os.rmdir(loc.name, dir_fd=loc.dir_fd)
        except (VaultError, OSError):  # not empty (someone put something there), or gone
            continue
        removed.append(folder)
    if removed:
        writer.vault.refresh_paths(removed, source="vaultwatch")
    return removed


def _in_trash(writer: Writer, rel: str, before: bytes | None, taken: set[str]) -> str | None:
    """Where in the vault's trash a killed delete put `rel`: the entry named as the trash names it
    (the name, or the name with a number) that holds the bytes it had, or, without bytes to
    compare (a folder), the one moved there last; never one of `taken` (entries journaled changes
    moved there)."""
    name = rel.rpartition("/")[2]
    stem, dot, ext = name.rpartition(".")
    if not stem:
        stem, dot, ext = name, "", ""
    like = re.compile(rf"{re.escape(name)}|{re.escape(stem)} \d+{re.escape(dot + ext)}|{re.escape(name)} \d+")
    try:
        with writer.locate(TRASH, follow_last=False, allow_hidden=True) as trash:
            st = trash.lstat()
            if st is None or not stat_mod.S_ISDIR(st.st_mode):
                return None
            fd = os.open(trash.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=trash.dir_fd)
    except (VaultError, OSError):
        return None
    try:
        found: list[tuple[float, str]] = []
        for entry in os.listdir(fd):
            if not like.fullmatch(entry) or f"{TRASH}/{entry}" in taken:
                continue
            try:
                est = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if before is not None:
                if not stat_mod.S_ISREG(est.st_mode) or est.st_size != len(before):
                    continue
                try:
                    efd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
                except OSError:
                    continue
                with os.fdopen(efd, "rb") as f:
                    if f.read(len(before) + 1) != before:
                        continue
            found.append((est.st_ctime, entry))  # a move into the trash sets the moved entry's ctime
    finally:
        os.close(fd)
    return f"{TRASH}/{max(found)[1]}" if found else None


__all__ = ["resume_writes", "temporary_files"]
