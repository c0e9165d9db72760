"""The journal's hooks in the write path: who is calling, and what one Writer operation wrote.

core.edit.writes decorates each public Writer operation with `journaled(...)`, which opens a
`Scope` (a context variable, copied into the threads a rename rewrites links in); the write
path reports each committed file with `committed(...)` and asks `approve(...)` first (the
journal's room for an agent's change, then the approval gate, core.review.approval). Nested operations (a revert's writes) join the outer
scope (`enter`/`leave` open one for a revert). The MCP layer names the caller with
`calling(...)`. When the operation returns, its scope becomes one row of the vault's change
journal (core.review.journal, which stores and reads them).

The write path's layer: the journal and the approval gate sit above it (they revert and
re-run changes through the Writer), so this module imports neither. It meets them through
the vault (`vault.journal`, `vault.approval_gate`) and the `ChangeJournal` protocol below.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from vaultwatch.core.edit.effects import CREATE, LINKS, MOVE_FROM, EffectSet
from vaultwatch.core.errors import JournalUnavailable
from vaultwatch.core.events import Event

if TYPE_CHECKING:  # writes.py imports this module
    from vaultwatch.core.edit.writes import Writer

MAX_ARG_CHARS = 2000


class ChangeJournal(Protocol):
    """What the write path asks of the change journal (core.review.journal.Journal)."""

    path: str  # its file (named when it cannot take a change)

    def admit(self, actor: str, before: bytes | None, after: bytes | None) -> None:
        """Raise when an agent's change of these bytes cannot be journaled (before anything is written)."""

    def begin_intent(
        self,
        change_id: int,
        actor: str,
        plan: dict[str, Any],
        files: Iterable[tuple[str, bytes | None, bytes | None]] = (),
    ) -> int:
        """Record an operation about to write `plan` (a rename's move, an agent's write, with the
        files it is about to commit: path, bytes before and after); its id."""

    def intent_file(self, intent_id: int, rel: str, before: bytes | None, after: bytes | None) -> None:
        """One file an intent's operation is about to commit."""

    def drop_intent(self, intent_id: int) -> None:
        """Forget an intent whose operation changed nothing."""

    def record_result(self, scope: Scope, result: Any) -> object:
        """Journal a finished operation from its scope (the bytes) and its result."""


@dataclass
class Caller:
    """Who is calling: set by the MCP layer around a tool call (agent name, session, tool, arguments)."""

    agent: str
    session: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    change_ids: list[int] = field(default_factory=list)
    waiting: Any = None  # the approval request this call waits on (core.review.approval.Pending), if any
    # ask(message, timeout, binding) -> (approved, reason): asks the person through the calling
    # client (MCP elicitation, set by the MCP layer when the client can be asked; None: it cannot).
    # `binding` names exactly this change (its effects and bytes): an answer given for another
    # change, such as one re-asked after an outside edit, must not apply to it
    ask: Callable[[str, float, str], tuple[bool, str]] | None = None
    # the caller can neither wait for the person nor ask them (the stdio front's own worker, which
    # answers calls in order): a change that needs approval raises HandOver before any of it is
    # written, and the call is run again by a path that can wait and ask (the MCP SDK's)
    cannot_wait: bool = False


class HandOver(Exception):  # noqa: N818  (not an error: a signal to run the call elsewhere)
    """A change needs the person and its caller cannot wait for them (`Caller.cannot_wait`); nothing
    was written. Never a VaultError, so that no tool turns it into an answer."""


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("vaultwatch_caller", default=None)


@contextlib.contextmanager
def calling(caller: Caller) -> Iterator[Caller]:
    """Name the caller of every change made inside the block."""
    token = _caller.set(caller)
    try:
        yield caller
    finally:
        _caller.reset(token)


def current_caller() -> Caller | None:
    return _caller.get()


@dataclass
class FileWrite:
    path: str
    before: bytes | None
    after: bytes | None
    role: str
    # the permission bits of the file `before` was (None: unknown, or no file): a revert that
    # re-creates it gives it these, so a private note never comes back readable by others
    mode: int | None = None


def permission_bits(mode: int | None) -> int | None:
    """`mode` narrowed to the permission bits a journaled file keeps: never setuid, setgid or sticky."""
    return None if mode is None else int(mode) & 0o777


# How an approval reached the gate, journaled with the change so that the person can audit it;
# an answer through the agent's own client is only as trustworthy as that client.
APPROVED_IN_TUI = "tui"
APPROVED_BY_COMMAND = "approve-command"
APPROVED_BY_CLIENT = "agent-client"
APPROVED_VIA = {
    APPROVED_IN_TUI: "approved by the person in vaultwatch's TUI",
    APPROVED_BY_COMMAND: "approved by the person with `vaultwatch approve`",
    APPROVED_BY_CLIENT: "approved through the agent's own client (MCP elicitation)",
}


# A rename's link rewrites as they will be, computed only when asked for (the question put to the
# person through an agent's client shows them): (path of the note's bytes after the move, its
# bytes now, its bytes with the links rewritten), for each note whose links change.
Relinks = Callable[[], Iterable[tuple[str, bytes, bytes]]]


@dataclass
class Scope:
    """One Writer operation in progress: what it committed so far."""

    journal: ChangeJournal | None
    gate: Any
    operation: str
    actor: str
    arguments: dict[str, Any]
    files: list[FileWrite] = field(default_factory=list)
    approved: bool = False  # the person started this operation (a revert from the TUI): the gate is not asked
    covered: set[tuple[str, str]] = field(default_factory=set)  # (path key, change) the gate has let through
    effects: list[EffectSet] = field(default_factory=list)  # every effect set the operation asked about
    kind: str = "change"
    revert_of: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    preread: tuple[str, bytes] | None = None  # delete: the bytes of the note before it went (see approve)
    preread_mode: int | None = None  # and its permission bits
    pending: Any = None  # the approval gate's Pending this operation waited on (core.approval)
    approved_via: str | None = None  # how the gate's approval came (APPROVED_VIA); None: none was needed
    admitted: bool = False  # the journal has room for this operation (asked once, before its first write)
    intent: int | None = None  # a rename's intent in the journal (written before the move, see approve)
    method: str = ""  # the Writer operation's name and its arguments in full (not clipped like
    call: dict[str, Any] = field(default_factory=dict)  # `arguments`): what a later approval re-runs
    label: str | None = None  # what the person asked for (an undo), journaled as the operation (see `labelled`)


_scope: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("vaultwatch_change", default=None)


_label: contextvars.ContextVar[str | None] = contextvars.ContextVar("vaultwatch_label", default=None)


@contextlib.contextmanager
def labelled(operation: str) -> Iterator[None]:
    """Journal the Writer operations run inside as `operation` (an undo writes the bytes back, but
    the person reads "undo" in the journal, not "write")."""
    token = _label.set(operation)
    try:
        yield
    finally:
        _label.reset(token)


def current_scope() -> Scope | None:
    return _scope.get()


def enter(scope: Scope) -> contextvars.Token:
    """Make `scope` the operation in progress (a revert's writes join it); `leave(token)` ends it."""
    return _scope.set(scope)


def leave(token: contextvars.Token) -> None:
    _scope.reset(token)


def committed(rel: str, old: bytes | None, new: bytes | None, mode: int | None = None) -> None:
    """The write path wrote `new` over `old` at `rel` (called with the note's lock held); `mode`:
    the permission bits of the file it replaced."""
    scope = _scope.get()
    if scope is None or scope.journal is None:
        return
    role = {"rename": "links", "revert": "restored"}.get(scope.operation, "target")
    with scope.lock:
        scope.files.append(FileWrite(rel, old, new, role, permission_bits(mode) if old is not None else None))


def approve(
    effects: EffectSet,
    old: bytes | None = None,
    new: bytes | None = None,
    temp: str | None = None,
    *,
    relinks: Relinks | None = None,
    old_mode: int | None = None,
) -> None:
    """Ask the approval gate (if any) before the write path makes the change `effects` describes;
    raises to decline. Only effects the gate already let through in this operation (the same
    paths, the same kind of change) pass without asking again. `relinks`: a rename's link
    rewrites, for the gate to show the person; `old_mode`: the permission bits of the file `old` is."""
    scope = _scope.get()
    if scope is None:
        return
    first = effects.effects[0]
    old_mode = permission_bits(old_mode) if old is not None else None
    if effects.operation == "delete" and old is not None:
        scope.preread = (first.via or first.path, old)  # kept so that a permanent delete can be reverted
        scope.preread_mode = old_mode  # with its mode: a private note comes back private
    with scope.lock, _recording(scope):  # a rename's link rewrites ask from several threads at once
        scope.effects.append(effects)
        if scope.journal is not None and not scope.admitted:
            # before the gate asks the person: a write the journal cannot keep is refused, not made;
            # asked once, before the operation's first write, so a rename is never cut off midway
            scope.journal.admit(scope.actor, old, new)
            scope.admitted = True
        if scope.operation == "rename" and first.change == MOVE_FROM and first.dest and scope.journal is not None:
            if scope.intent is None:
                # before the move: a rename rewrites links in many notes, one at a time; killed midway,
                # the journal knows what it moved and what it rewrote (core.review.revert rolls it back)
                # (every path the move takes along, both ends: a roll-back journals them, so that
                # the files a folder's move carries are told from outside edits)
                moved = list(
                    dict.fromkeys(p for e in effects.effects if e.change != LINKS for p in (e.path, e.dest) if p)
                )
                scope.intent = scope.journal.begin_intent(
                    0, scope.actor, {"operation": "rename", "move": [first.path, first.dest], "paths": moved}
                )
        elif scope.intent is not None and scope.journal is not None and (old is not None or new is not None):
            # a rename's link rewrite, recorded before it lands: killed right after, it is still rolled back
            scope.journal.intent_file(scope.intent, first.path, old, new)
    if scope.gate is not None and not scope.approved:
        form = scope.gate.form
        keys = {(form.key(p), e.change) for e in effects.effects for p in (e.path, e.via) if p}
        with scope.lock:
            asked = not keys <= scope.covered
        if asked:
            scope.gate.check(scope, effects, old, new, relinks=relinks)  # may wait for the person: no lock held
            with scope.lock:
                scope.covered |= keys
    _intend(scope, effects, old, new, temp, old_mode)


def refuse_first(effects: EffectSet) -> None:
    """Let the approval gate (if any) refuse `effects` by a rule that asks nobody (a "never" folder,
    the agent's own rule, a settings file that does not parse) before the write path puts any of the
    change's bytes on disk, its temporary file included; `approve` asks the rest."""
    scope = _scope.get()
    if scope is None or scope.gate is None or scope.approved:
        return
    scope.gate.refuse_first(scope, effects)


# an agent's operations on one note (or one delete), each recorded as an intent before it lands
WRITE_INTENT = "write"
_ONE_NOTE_OPERATIONS = frozenset({"write", "edit", "edit_section", "update_frontmatter", "delete"})


def _intend(
    scope: Scope,
    effects: EffectSet,
    old: bytes | None,
    new: bytes | None,
    temp: str | None = None,
    old_mode: int | None = None,
) -> None:
    """An agent's change, let through by its rules and the gate, is recorded as an intent just
    before it lands: an agent that spawned its server can kill it between the write and the
    journal's row, and the next start then journals the change the kill cut off
    (core.review.unrecorded) instead of leaving it in the note unseen."""
    if (
        scope.journal is None
        or scope.kind != "change"
        or scope.operation not in _ONE_NOTE_OPERATIONS
        or scope.intent is not None
        or scope.actor == "human"
        or scope.actor.startswith("human:")
    ):
        return
    first = effects.effects[0]
    caller = current_caller()
    plan = {
        "operation": WRITE_INTENT,
        "tool": scope.operation,
        "path": first.via or first.path,
        "bytes_at": first.path,
        "new_folders": [e.path for e in effects.effects[1:] if e.change == CREATE],
        "paths": list(effects.paths()),
        # the write's temporary file (vault path), when made before this: killed after the switch,
        # it holds what the write replaced; killed before, the write's own bytes (core.review.unrecorded)
        "temp": temp,
        # the permission bits of the file the write replaces or removes: journaled with its bytes
        # when a kill cuts the write off, so that a revert puts a private note back private
        "mode": old_mode,
        "approved_via": scope.approved_via,
        "agent": caller.agent if caller is not None else None,
        "session": caller.session if caller is not None else None,
        "caller_tool": caller.tool if caller is not None else None,
        "arguments": _clipped(caller.arguments if caller is not None and caller.arguments else scope.arguments),
    }
    # (no bytes on either side: a folder's delete, or a hard-linked file's, whose bytes are never read)
    files = [] if old is None and new is None else [(first.path, old, new)]
    with scope.lock, _recording(scope):
        scope.intent = scope.journal.begin_intent(0, scope.actor, plan, files)


@contextlib.contextmanager
def _recording(scope: Scope) -> Iterator[None]:
    """The journal's part before a change lands (its room, its intent): a SQLite error there (the
    file locked past its timeout, damaged, its disk full) refuses the change, which has written
    nothing yet, with an error that names the journal, never a bare database error."""
    begun = scope.intent is not None  # a rename whose move is under way: its intent says what it did
    try:
        yield
    except sqlite3.Error as exc:
        where = getattr(scope.journal, "path", "")
        done = "it stopped midway and its intent records how far it got" if begun else "nothing was written"
        raise JournalUnavailable(
            f"the change journal {where} could not take this {scope.operation} ({exc or type(exc).__name__}): "
            f"{done}; try again, and if it goes on, the person can see what is wrong with `vaultwatch changes`"
        ) from None


def waited() -> bool:
    """The operation in progress waited for the person's approval (so what it read before may be stale):
    in the TUI, or through the agent's client, whose question the person may answer minutes later."""
    scope = _scope.get()
    return scope is not None and (scope.pending is not None or scope.approved_via == APPROVED_BY_CLIENT)


def moved_while_waiting(rel: str) -> str | None:
    """Where the note at `rel` went while the operation in progress waited for the person in the TUI's
    dialog, as far as the journal saw (None: not seen moved, or it did not wait there)."""
    scope = _scope.get()
    if scope is None or scope.pending is None or scope.gate is None:
        return None
    moved: str | None = scope.gate.moved_since_asked(scope.pending, rel)
    return moved


def journaled(operation: str) -> Callable:
    """Decorator of Writer operations: one scope per outermost call, one journal row per change."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(self: Writer, *args: Any, **kwargs: Any) -> Any:
            outer = _scope.get()
            if outer is not None:
                return fn(self, *args, **kwargs)
            vault = self.vault
            journal = vault.journal
            actor = kwargs.get("actor", "human")
            if journal is None and not is_person(actor) and vault.journal_problem is not None:
                # meant to be on but it cannot be opened: an agent's change it cannot record is not
                # made (the person's own edits go on: theirs need no review, and they must be able
                # to work while they fix it)
                journal = vault.reopen_journal()
                if journal is None:
                    raise JournalUnavailable(vault.journal_problem or "the change journal cannot be opened")
            gate = vault.approval_gate
            if journal is None and gate is None:
                return fn(self, *args, **kwargs)
            scope = Scope(journal, gate, operation, actor, _arguments(fn, args, kwargs), label=_label.get())
            scope.method, scope.call = fn.__name__, _call(fn, args, kwargs)
            token = _scope.set(scope)
            failed: BaseException | None = None
            try:
                try:
                    result = fn(self, *args, **kwargs)
                except BaseException as exc:
                    failed = exc  # (told to the person who approved it: core.review.approval.finished)
                    if scope.intent is not None and journal is not None and not scope.files:
                        journal.drop_intent(scope.intent)  # refused before it moved anything
                    raise
                finally:
                    _scope.reset(token)
                if scope.intent is not None and journal is not None and not getattr(result, "changed", False):
                    journal.drop_intent(scope.intent)
                if journal is not None and getattr(result, "changed", False):
                    try:
                        journal.record_result(scope, result)
                    except sqlite3.Error as exc:  # the change happened; the journal says it could not record it
                        vault.bus.publish(problem(f"the change journal could not record {operation}: {exc}"))
                return result
            finally:
                if scope.pending is not None and gate is not None:
                    gate.finished(scope.pending, failed)

        return run

    return wrap


def is_person(actor: str) -> bool:
    """The person's own change (`human`, `human:<login>`), never an agent's or a recovery's."""
    return actor == "human" or actor.startswith("human:")


def problem(message: str, severity: str = "warning") -> Event:
    from vaultwatch.core.events import IndexProblem

    return IndexProblem(message, severity)


def _call(fn: Callable, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The operation's arguments by name, in full (the actor apart)."""
    names = fn.__code__.co_varnames[1 : fn.__code__.co_argcount]
    out: dict[str, Any] = dict(zip(names, args, strict=False))
    out.update(kwargs)
    out.pop("actor", None)
    return out


def _arguments(fn: Callable, args: tuple, kwargs: dict) -> dict[str, Any]:
    return _clipped(_call(fn, args, kwargs))


def _clipped(arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` as the journal keeps them: long text clipped, anything else made JSON."""
    clean: dict[str, Any] = {}
    for key, value in arguments.items():
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, str) and len(value) > MAX_ARG_CHARS:
            value = value[:MAX_ARG_CHARS] + f"…(+{len(value) - MAX_ARG_CHARS})"
        try:
            json.dumps(value, default=str)
        except (TypeError, ValueError):
            value = str(value)
        clean[key] = value
    return clean


__all__ = [
    "APPROVED_BY_CLIENT",
    "APPROVED_BY_COMMAND",
    "APPROVED_IN_TUI",
    "APPROVED_VIA",
    "MAX_ARG_CHARS",
    "WRITE_INTENT",
    "Caller",
    "ChangeJournal",
    "FileWrite",
    "HandOver",
    "Relinks",
    "Scope",
    "approve",
    "calling",
    "committed",
    "current_caller",
    "current_scope",
    "enter",
    "is_person",
    "journaled",
    "leave",
    "permission_bits",
    "problem",
    "refuse_first",
    "moved_while_waiting",
    "waited",
]
