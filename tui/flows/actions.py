"""The human's triage actions on notes: set status, mark human-reviewed, snooze, edit, undo.

Every call here blocks (file reads and writes) and runs in a thread worker, never on the
UI thread. Writes go through core.edit.writes.Writer with `if_match` set to the etag of the
bytes the human was shown: the list row's entry says what the human saw (size, mtime,
inode), and when the file on disk no longer matches it — an agent or another editor
changed the note since — the action refuses with a conflict instead of writing. Undo
restores the exact previous bytes, again with `if_match` (the etag the action produced),
so a later edit by someone else is never clobbered.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
import shlex
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vaultwatch.core.disk.reader import note_bytes
from vaultwatch.core.edit.hooks import labelled
from vaultwatch.core.edit.writes import ConflictError, Writer, etag_of, line_summary
from vaultwatch.core.errors import NotFoundError, VaultError
from vaultwatch.core.model import Entry

if TYPE_CHECKING:
    from vaultwatch.core.vault import Vault

MAX_UNDO = 50


@dataclass(frozen=True, slots=True)
class Change:
    """One note written by an action: its bytes before, and the etag of the bytes written."""

    path: str
    before: bytes
    etag: str


@dataclass(slots=True)
class Outcome:
    """What one action did, note by note (for the notification)."""

    label: str
    done: list[tuple[str, str]] = field(default_factory=list)  # (path, diff summary)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    undoable: bool = True  # False: nothing in the notes changed, so `u` has nothing of it to undo

    @property
    def changed_paths(self) -> list[str]:
        return [p for p, _ in self.done]


def login_name() -> str:
    """The user at the keyboard (for `verified: by: human:<user>`)."""
    try:
        return getpass.getuser() or os.environ.get("USER") or "user"
    except (OSError, KeyError, ImportError):  # no login name in this environment
        return os.environ.get("USER") or "user"


# editors that open a file at a line given as `+LINE` before it (others get the file alone)
LINE_EDITORS = frozenset(
    {"vi", "vim", "nvim", "gvim", "view", "nano", "pico", "emacs", "emacsclient", "micro", "kak", "joe", "ne", "mg"}
)


def editor_command(path: str, line: int | None = None) -> list[str]:
    """$VISUAL or $EDITOR (split like a shell would), then `vi`, with the file appended; with
    `line`, `+LINE` before it when the editor is one that takes it."""
    spec = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        argv = shlex.split(spec)
    except ValueError:
        argv = [spec]
    argv = argv or ["vi"]
    if line is not None and line > 0 and os.path.basename(argv[0]) in LINE_EDITORS:
        return [*argv, f"+{line}", path]
    return [*argv, path]


class Actions:
    """The TUI's write side over one vault, for one user. Thread-safe (one action at a time)."""

    def __init__(self, vault: Vault, *, user: str | None = None, now: Callable[[], dt.datetime] | None = None) -> None:
        self.vault = vault
        self.writer = Writer(vault)
        self.actor = f"human:{user or login_name()}"
        self._now = now or (lambda: vault.clock.now())
        self.undo_stack: list[tuple[str, tuple[Change, ...]]] = []
        self._own: dict[str, str] = {}  # path -> etag of the bytes our latest write left there
        self._lock = threading.Lock()

    # -- reading what the human saw ---------------------------------------------------------
    def seen_bytes(self, entry: Entry) -> bytes:
        """The note's bytes, provided they are what the human was shown (or what our own last
        write left there). Raises ConflictError when the file changed behind the app's back,
        NotFoundError when it is gone."""
        try:
            data, st = note_bytes(self.vault.root_real, entry.path)  # core's safe open, never a path by name
        except NotFoundError:
            raise NotFoundError(f"{entry.path} was deleted or moved") from None
        except FileNotFoundError:
            raise NotFoundError(f"{entry.path} was deleted or moved") from None
        except OSError as exc:
            raise VaultError(f"{entry.path} cannot be read: {exc.strerror or exc}") from None
        shown = (entry.size_bytes, entry.mtime_ns, entry.inode)
        if (st.st_size, st.st_mtime_ns, st.st_ino) != shown and self._own.get(entry.path) != etag_of(data):
            raise ConflictError(f"{entry.path} changed on disk since it was shown", entry.path, etag_of(data))
        return data

    # -- actions ----------------------------------------------------------------------------
    def set_status(self, entries: Sequence[Entry], status: str, value: Any = None) -> Outcome:
        """Set `status` on each note, written as `value` when given (the form the vault's notes
        hold that word in, `core.query.statuschoices`: a list of links stays one)."""
        return self._update(f"status → {status}", entries, set={"status": status if value is None else value})

    def mark_reviewed(self, entries: Sequence[Entry], *, write: bool = True) -> Outcome:
        """Mark each note reviewed: its agents' changes reviewed in the change journal, and (when
        `write`: an OKF bundle, or the person's `write_verified`) a `verified` entry by this human,
        at the clock's now, appended to the note. Only a note that still holds what the person was
        shown is marked, and only the changes journaled before that look: an agent's change that
        came after it is not one the person has seen (a conflict, marked nothing)."""
        listed = self._unreviewed([e.path for e in entries])  # before any look at the bytes
        refused = Outcome("marked reviewed")
        seen: list[Entry] = []
        for entry in entries:
            try:
                self.seen_bytes(entry)
            except ConflictError:
                refused.conflicts.append(entry.path)
                continue
            except VaultError as exc:
                refused.errors.append((entry.path, exc.message))
                continue
            seen.append(entry)
        # marked before the note's own write, so that the write's index change shows both
        reviewed = self._mark({e.path: listed[e.path] for e in seen if e.path in listed})
        if write:
            at = self._now().isoformat(timespec="seconds")
            out = self._update("marked human-reviewed", seen, append={"verified": {"by": self.actor, "at": at}})
        else:
            out = Outcome("marked reviewed", undoable=False)
            for entry in seen:
                n = reviewed.get(entry.path, 0)
                if n:
                    out.done.append(
                        (entry.path, f"{n} agent change{'' if n == 1 else 's'} reviewed; the note is unchanged")
                    )
                else:
                    out.unchanged.append(entry.path)
        out.conflicts[:0] = refused.conflicts
        out.errors[:0] = refused.errors
        return out

    def _unreviewed(self, paths: Sequence[str]) -> dict[str, list[int]]:
        """The journal's unreviewed changes of each of `paths`, by id (none when the journal is off)."""
        from vaultwatch.core.review.journal import journal_for  # noqa: PLC0415

        journal = journal_for(self.vault)
        if journal is None:  # switched off: nothing to mark
            return {}
        out: dict[str, list[int]] = {}
        taken: set[int] = set()
        for path in paths:
            for change in journal.changes(path=path, unreviewed=True):
                if change.id not in taken:
                    taken.add(change.id)
                    out.setdefault(path, []).append(change.id)
        return out

    def _mark(self, listed: dict[str, list[int]]) -> dict[str, int]:
        """Mark the changes `listed` reviewed by this person; how many per path."""
        from vaultwatch.core.review.journal import journal_for  # noqa: PLC0415

        journal = journal_for(self.vault)
        ids = {cid: path for path, cids in listed.items() for cid in cids}
        if journal is None or not ids:
            return {}
        counts: dict[str, int] = {}
        for cid in journal.mark_reviewed(list(ids), by=self.actor):
            counts[ids[cid]] = counts.get(ids[cid], 0) + 1
        return counts

    def snooze(self, entries: Sequence[Entry], days: int, as_of: dt.date) -> Outcome:
        """Set `stale_after` to the as-of date plus `days`."""
        until = as_of + dt.timedelta(days=days)
        return self._update(f"snoozed until {until.isoformat()}", entries, set={"stale_after": until})

    def _update(self, label: str, entries: Iterable[Entry], **change: Any) -> Outcome:
        out = Outcome(label)
        written: list[Change] = []
        with self._lock:
            for entry in entries:
                try:
                    before = self.seen_bytes(entry)
                    result = self.writer.update_frontmatter(
                        entry.path, **change, if_match=etag_of(before), actor=self.actor
                    )
                except ConflictError:
                    out.conflicts.append(entry.path)
                    continue
                except VaultError as exc:
                    out.errors.append((entry.path, exc.message))
                    continue
                if not result.changed or result.etag is None:
                    out.unchanged.append(entry.path)
                    continue
                self._own[entry.path] = result.etag
                written.append(Change(entry.path, before, result.etag))
                out.done.append((entry.path, result.diff_summary))
            self._remember(label, written)
        return out

    def journal_mark(self) -> int:
        """The newest change the journal holds now (0: none, or the journal is off): what `edited`
        compares with, to tell the person's edit from an agent's change made meanwhile."""
        from vaultwatch.core.review.journal import journal_for  # noqa: PLC0415

        journal = journal_for(self.vault)
        newest = journal.changes(limit=1) if journal is not None else []
        return newest[0].id if newest else 0

    def edited(self, path: str, before: bytes, since: int | None = None) -> Outcome:
        """After $EDITOR returned: index what it saved and remember it for undo. An agent's change
        of the note journaled after `since` (`journal_mark` when the editor opened) makes it a
        conflict: what is there now is not (only) the person's edit, and is never taken for one."""
        out = Outcome("edited in $EDITOR")
        with self._lock:
            try:
                after, _st = note_bytes(self.vault.root_real, path)
            except (OSError, VaultError) as exc:
                out.errors.append((path, f"cannot be read after editing: {getattr(exc, 'message', None) or exc}"))
                self.vault.refresh_paths([path], source=self.actor)
                return out
            self.vault.refresh_paths([path], source=self.actor)
            if since is not None and self._agent_changed(path, since):
                out.conflicts.append(path)
                return out
            if after == before:
                out.unchanged.append(path)
                return out
            etag = etag_of(after)
            self._own[path] = etag
            self._remember(out.label, [Change(path, before, etag)])
            out.done.append(
                (path, "edited: " + line_summary(before.decode("utf-8", "replace"), after.decode("utf-8", "replace")))
            )
        return out

    def _agent_changed(self, path: str, since: int) -> bool:
        from vaultwatch.core.review.journal import journal_for  # noqa: PLC0415

        journal = journal_for(self.vault)
        if journal is None:
            return False
        return any(c.id > since and c.agent is not None for c in journal.changes(path=path, limit=50))

    def undo(self) -> Outcome | None:
        """Restore the bytes the last action replaced (None: nothing to undo). A note changed
        since by someone else is left alone and reported as a conflict."""
        with self._lock:
            if not self.undo_stack:
                return None
            label, changes = self.undo_stack.pop()
            out = Outcome(f"undid {label}")
            for change in reversed(changes):
                try:
                    with labelled("undo"):
                        result = self.writer.write(change.path, change.before, if_match=change.etag, actor=self.actor)
                except ConflictError:
                    out.conflicts.append(change.path)
                    continue
                except VaultError as exc:
                    out.errors.append((change.path, exc.message))
                    continue
                if result.etag is not None:
                    self._own[change.path] = result.etag
                out.done.append((change.path, result.diff_summary))
        return out

    def reload(self, paths: Iterable[str]) -> None:
        """Re-read notes from disk into the index (after a conflict, or an unwatched change)."""
        self.vault.refresh_paths(list(paths), source="disk")

    def _remember(self, label: str, written: list[Change]) -> None:
        if written:
            self.undo_stack.append((label, tuple(written)))
            del self.undo_stack[:-MAX_UNDO]
