"""Pending changes: an agent's gated change kept for the person when nobody can be asked now.

When the approval gate (core.review.approval) decides a change needs the person and no TUI
attends, the change is not declined: it is proposed here and the agent is told its id. The
proposal keeps what is needed to apply it later exactly as the agent asked: the Writer
operation and its full arguments, the caller (agent, session, tool, arguments), the effect
set, and a fingerprint of every path the effect set names (the bytes' SHA-256, "folder",
a link's target, or "absent"), plus the bytes before and after of the note it names, for the
diff the person reads.

    store = store_for(vault.root_real)
    store.pending()                       # what waits, oldest first
    approve(vault, 7, by="human:ann")     # apply it as the agent, or refuse: a path changed
    decline(vault.root_real, 7, "not now", by="human:ann")

An approval re-runs the operation through the normal write path as the agent (so the journal
records the agent's change), under a one-shot `Grant` bound to the proposal: the gate lets
the change through without asking again only if every effect lies inside the proposed set
and the note's bytes are still the proposed ones; before that, every fingerprint must match.
Anything else refuses the approval and nothing changes.

Storage: one SQLite file per vault under `$XDG_STATE_HOME/vaultwatch/pending/` (folder 0700,
file 0600), apart from the journal's file so the two evolve independently.

Bounded: what waits for the person (pending, or being applied) holds at most `max_changes`
proposals and `max_bytes` of what they store (the content, the bytes before and after, the
arguments, the effects), and one agent at most `agent_share` of either, like the journal's
bounds (VAULTWATCH_PENDING_MAX_CHANGES, VAULTWATCH_PENDING_MAX_MB, VAULTWATCH_PENDING_AGENT_SHARE).
Past them a new proposal is refused (`PendingFull`: nothing written, nothing kept) and nothing
already kept is dropped: a flooding agent waits for the person while other agents' changes are
still kept for them. Decided proposals stay, as the record the agent's `history` reads, and count
against no bound: only the person's decisions add them.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import datetime as dt
import hashlib
import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from vaultwatch.core import settings
from vaultwatch.core.disk.safeio import locate
from vaultwatch.core.edit.effects import MOVE_FROM, Effect, EffectSet, PathForm, form_of
from vaultwatch.core.edit.hooks import APPROVED_BY_COMMAND, Caller, calling
from vaultwatch.core.errors import GuardUnavailable, VaultError
from vaultwatch.core.review import refusals
from vaultwatch.core.review.journal import RECOVERY_ACTOR, journal_for, journal_path, state_dir
from vaultwatch.core.review.journal import etag as etag_of

PENDING = "pending"
APPLYING = "applying"  # an approval is applying it right now
APPROVED = "approved"  # approved and applied
DECLINED = "declined"
REFUSED = "refused"  # approved, but what it would touch had changed: nothing applied
STATES = (PENDING, APPLYING, APPROVED, DECLINED, REFUSED)
APPROVE = "approve"  # a journal intent's plan "operation" for an approval being applied
WAITING = (PENDING, APPLYING)  # what the store's bounds count: the rest is decided
DEFAULT_MAX_CHANGES = 1_000
DEFAULT_MAX_BYTES = 256 * 2**20
DEFAULT_AGENT_SHARE = 0.5  # the part of what waits that one agent's proposals may fill
_ROW_OVERHEAD = 200  # bytes a proposal's row and its index entry take besides what it stores

_SCHEMA = """
CREATE TABLE IF NOT EXISTS proposals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    agent TEXT,
    session TEXT,
    tool TEXT NOT NULL,
    caller_arguments TEXT NOT NULL,
    method TEXT NOT NULL,
    call TEXT NOT NULL,
    operation TEXT NOT NULL,
    path TEXT NOT NULL,
    dest TEXT,
    effects TEXT NOT NULL,
    fingerprints TEXT NOT NULL,
    before BLOB,
    after BLOB,
    why TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    decided_at REAL,
    decided_by TEXT,
    change_ids TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS proposals_state ON proposals(state);
"""
# what a row stores, in bytes: the size of a row kept before sizes were recorded
_SIZE_SQL = (
    "length(CAST(caller_arguments AS BLOB)) + length(CAST(call AS BLOB)) + length(CAST(effects AS BLOB))"
    " + length(CAST(fingerprints AS BLOB)) + COALESCE(length(before), 0) + COALESCE(length(after), 0)"
    " + length(CAST(path AS BLOB)) + COALESCE(length(CAST(dest AS BLOB)), 0) + length(CAST(why AS BLOB))"
    f" + {_ROW_OVERHEAD}"
)


class AwaitingPerson(VaultError):
    """The change was not made: it waits for the person as a pending change (the agent's answer)."""

    code = "pending_approval"

    def __init__(self, proposal: Proposal, not_asked: str = "", undecided: str = "") -> None:
        self.proposal = proposal
        self.not_asked = not_asked
        # (not_asked: why the client, which could have asked the person, was not asked; undecided:
        # why the person, asked in the TUI, did not decide it there)
        unasked = f"It was not put to the person through your client: {not_asked}. " if not_asked else ""
        nobody = f"The person did not decide it ({undecided})" if undecided else "No one is at vaultwatch's TUI"
        super().__init__(
            f"not applied yet: this change awaits the person's approval as pending change "
            f"{proposal.id} ({proposal.why}); nothing was written. {nobody}, "
            f"so the person will approve or decline it later (`vaultwatch approve {proposal.id}`). "
            f"{unasked}Do not retry it; look its state up with the history tool on {proposal.path!r} "
            "(pending, approved, declined or refused)"
        )


class PendingFull(VaultError):
    """A gated change was neither applied nor kept: too many changes (of this agent's, or of all
    agents') already wait for the person."""

    code = "pending_full"


class ApprovalRefused(VaultError):
    """An approved pending change could not be applied as proposed; nothing was changed."""

    code = "pending_refused"


@dataclass(frozen=True, slots=True)
class Proposal:
    id: int
    at: float
    actor: str
    agent: str | None
    session: str | None
    tool: str
    caller_arguments: dict[str, Any]
    method: str
    call: dict[str, Any]
    operation: str
    path: str
    dest: str | None
    effects: tuple[Effect, ...]
    fingerprints: dict[str, str]
    before: bytes | None
    after: bytes | None
    why: str
    state: str
    reason: str
    decided_at: float | None
    decided_by: str | None
    change_ids: tuple[int, ...]

    @property
    def permanent(self) -> bool:
        """A delete for good, not to the trash: what approving it replays (its call) says so."""
        return self.method == "delete" and bool(self.call.get("permanent"))

    def touches(self, path: str) -> bool:
        return path == self.path or path == self.dest or path in self.fingerprints

    def as_json(self, *, bytes_too: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            # as the journal's rows show their times (an epoch float read as noise beside them)
            "at": dt.datetime.fromtimestamp(self.at, dt.UTC).isoformat(timespec="milliseconds"),
            "state": self.state,
            "agent": self.agent,
            "session": self.session,
            "tool": self.tool,
            "operation": self.operation,
            "path": self.path,
            "why": self.why,
            "effects": [e.describe() for e in self.effects],
        }
        if self.dest:
            out["dest"] = self.dest
        if self.reason:
            out["reason"] = self.reason
        if self.decided_by:
            out["decided_by"] = self.decided_by
        if self.change_ids:
            out["change_ids"] = list(self.change_ids)
        if bytes_too:
            out["arguments"] = self.caller_arguments
        return out


# --- arguments as JSON (a write's content may be bytes) ----------------------------------------


def _encode(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {"$map": [[k, _encode(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "items"):  # a Mapping
        return {"$map": [[k, _encode(v)] for k, v in value.items()]}
    raise VaultError(f"this change cannot be kept for later approval: an argument of type {type(value).__name__}")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "$bytes" in value:
            return base64.b64decode(value["$bytes"])
        return {k: _decode(v) for k, v in value["$map"]}
    return value


# --- what the paths hold -------------------------------------------------------------------------


def fingerprint(root_real: str, rel: str) -> str:
    """What `rel` holds now, as a short comparable string (never follows its last symlink)."""
    try:
        with locate(root_real, rel, follow_last=False, missing_ok=True) as loc:
            if loc.missing:
                return "absent"
            st = loc.lstat()
            if st is None:
                return "absent"
            if stat.S_ISDIR(st.st_mode):
                return "folder"
            if stat.S_ISLNK(st.st_mode):
                return "link:" + os.readlink(loc.name, dir_fd=loc.dir_fd)
            fd = loc.open(os.O_RDONLY | os.O_NOFOLLOW)
            try:
                digest = hashlib.sha256()
                while chunk := os.read(fd, 1 << 20):
                    digest.update(chunk)
            finally:
                os.close(fd)
            return "sha256:" + digest.hexdigest()
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        return f"unreadable:{exc.errno}"


def fingerprints(root_real: str, paths: Iterable[str]) -> dict[str, str]:
    return {p: fingerprint(root_real, p) for p in dict.fromkeys(paths)}


def _effect_paths(effects: Iterable[Effect]) -> list[str]:
    return [p for e in effects for p in (e.path, e.via, e.dest) if p]


def binding(
    effects: EffectSet, old: bytes | None, new: bytes | None, links: Iterable[tuple[str, bytes, bytes]] = ()
) -> str:
    """A digest naming exactly this change: its effects and the bytes before and after (a rename's:
    `links`, each note whose links it rewrites, by its path and its bytes before and after)."""
    digest = hashlib.sha256()
    for e in effects.effects:
        digest.update(json.dumps([e.path, e.change, e.via, e.dest]).encode())
    if effects.permanent:  # (to the trash or for good: the same paths, another change)
        digest.update(b"permanent")
    for data in (old, new):
        digest.update(b"-" if data is None else hashlib.sha256(data).digest())
    for path, was, now in links:
        digest.update(json.dumps(path).encode() + hashlib.sha256(was).digest() + hashlib.sha256(now).digest())
    return digest.hexdigest()


# --- the store -----------------------------------------------------------------------------------


def pending_path(root_real: str) -> str:
    """The pending-changes file of the vault at `root_real` (named like its journal)."""
    return os.path.join(state_dir(), "pending", os.path.basename(journal_path(root_real)))


class PendingStore:
    """The vault's proposals. Thread-safe; several processes may share the file (SQLite locks)."""

    def __init__(
        self,
        path: str,
        *,
        max_changes: int = DEFAULT_MAX_CHANGES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        agent_share: float = DEFAULT_AGENT_SHARE,
    ) -> None:
        self.path = path
        self.max_changes = max(1, int(max_changes))
        self.max_bytes = max(1, int(max_bytes))
        self.agent_share = min(1.0, max(0.01, float(agent_share)))
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if not os.path.exists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._lock = threading.Lock()
        self._con = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.executescript(_SCHEMA)
        self._add_sizes()
        self.identity = _identity(path)

    def _add_sizes(self) -> None:
        """Give a store kept before proposals recorded their size the column, and its rows their
        sizes, in one transaction (another process may open it at the same time)."""
        if "size" not in {r[1] for r in self._con.execute("PRAGMA table_info(proposals)")}:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                if "size" not in {r[1] for r in self._con.execute("PRAGMA table_info(proposals)")}:
                    self._con.execute("ALTER TABLE proposals ADD COLUMN size INTEGER")
                    self._con.execute(f"UPDATE proposals SET size = {_SIZE_SQL}")
                self._con.execute("COMMIT")
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
        # the bounds sum what waits from this index alone, never reading the rows' content
        self._con.execute("CREATE INDEX IF NOT EXISTS proposals_sizes ON proposals(state, actor, size)")

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def propose(
        self,
        *,
        actor: str,
        caller: Caller,
        method: str,
        call: dict[str, Any],
        effects: EffectSet,
        fingerprints: dict[str, str],
        path: str,
        dest: str | None,
        before: bytes | None,
        after: bytes | None,
        why: str,
        at: float,
    ) -> Proposal:
        arguments_json = json.dumps(caller.arguments, default=str, ensure_ascii=False)
        call_json = json.dumps(_encode(call), ensure_ascii=False)
        effects_json = json.dumps([[e.path, e.change, e.via, e.dest] for e in effects.effects], ensure_ascii=False)
        fingerprints_json = json.dumps(fingerprints, ensure_ascii=False)
        # what the row stores, counted as _SIZE_SQL counts it: the content is in `call` and `after`
        size = _ROW_OVERHEAD + sum(
            len(text.encode()) for text in (arguments_json, call_json, effects_json, fingerprints_json, path, why)
        )
        size += len(dest.encode()) if dest else 0
        size += len(before or b"") + len(after or b"")
        row = (
            at,
            actor,
            caller.agent,
            caller.session,
            caller.tool,
            arguments_json,
            method,
            call_json,
            effects.operation,
            path,
            dest,
            effects_json,
            fingerprints_json,
            before,
            after,
            why,
            PENDING,
            size,
        )
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")  # the bounds and the insert in one go, also across processes
            try:
                self._admit_locked(actor, size)
                cur = self._con.execute(
                    "INSERT INTO proposals (at, actor, agent, session, tool, caller_arguments, method, call,"
                    " operation, path, dest, effects, fingerprints, before, after, why, state, size) VALUES"
                    " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                self._con.execute("COMMIT")
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            pid = int(cur.lastrowid or 0)
        found = self.get(pid)
        assert found is not None
        return found

    def _agent_changes(self) -> int:
        return max(1, int(self.max_changes * self.agent_share))

    def _admit_locked(self, actor: str, size: int) -> None:
        """Raise PendingFull when one more proposal of `size` bytes from `actor` would take what
        waits, or the agent's part of it, over its bounds (see module doc). The part is the agent's
        by its name (`agent:<clientInfo name>`), never its name/version label, whose version the
        client chooses anew each session."""
        marks = ",".join("?" * len(WAITING))
        count, held = self._con.execute(
            f"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM proposals WHERE state IN ({marks})", WAITING
        ).fetchone()
        if count + 1 > self.max_changes or held + size > self.max_bytes:
            raise PendingFull(self._full_message(None, int(count), int(held), size))
        mine, mine_held = self._con.execute(
            f"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM proposals WHERE state IN ({marks}) AND actor = ?",
            (*WAITING, actor),
        ).fetchone()
        if mine + 1 > self._agent_changes() or mine_held + size > self.max_bytes * self.agent_share:
            raise PendingFull(self._full_message(actor.removeprefix("agent:"), int(mine), int(mine_held), size))

    def refusing(self) -> list[str]:
        """Whom the store refuses now, in the person's words (`vaultwatch pending` says it): every
        agent when what waits fills it, else each agent whose waiting changes fill its share. The
        agent hears it on its refused call; the person would otherwise learn it from no one."""
        marks = ",".join("?" * len(WAITING))
        mb = 2**20
        with self._lock:
            count, held = self._con.execute(
                f"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM proposals WHERE state IN ({marks})", WAITING
            ).fetchone()
            if count >= self.max_changes or held >= self.max_bytes:
                return [
                    f"the pending changes fill the store ({_changes(int(count))}, {held / mb:.1f} MB): every "
                    "agent's gated change is refused until you approve or decline some"
                ]
            rows = self._con.execute(
                f"SELECT actor, COUNT(*), COALESCE(SUM(size), 0) FROM proposals WHERE state IN ({marks})"
                " GROUP BY actor ORDER BY actor",
                WAITING,
            ).fetchall()
        return [
            f"{actor.removeprefix('agent:')}'s pending changes fill its share ({_changes(int(n))}, "
            f"{size / mb:.1f} MB): its further gated changes are refused until you approve or decline some"
            for actor, n, size in rows
            if n >= self._agent_changes() or size >= self.max_bytes * self.agent_share
        ]

    def _full_message(self, agent: str | None, count: int, held: int, size: int) -> str:
        mb = 2**20
        if agent is not None:
            head = (
                f"not applied and not kept: the person already has too many of {agent}'s changes waiting for "
                f"approval: {_changes(count)} holding {held / mb:.1f} MB, and this one would add "
                f"{size / mb:.1f} MB; one agent may have at most its share ({self.agent_share:.0%}) of the "
                f"pending changes waiting ({self._agent_changes()} changes, "
                f"{self.max_bytes * self.agent_share / mb:.0f} MB)"
            )
        else:
            head = (
                f"not applied and not kept: the person already has too many changes waiting for approval: "
                f"{_changes(count)} holding {held / mb:.1f} MB, and this one would add {size / mb:.1f} MB "
                f"(at most {self.max_changes} changes, {self.max_bytes / mb:.0f} MB)"
            )
        return (
            head + "; nothing was written. Wait until the person has reviewed the changes waiting (the history "
            "tool shows each one's state) before proposing more; do not retry this one now. The person can "
            "decide them (`vaultwatch pending`, `vaultwatch approve ID`, `vaultwatch decline ID`) or raise the "
            "cap (VAULTWATCH_PENDING_MAX_CHANGES, VAULTWATCH_PENDING_MAX_MB)"
        )

    def get(self, pid: int) -> Proposal | None:
        with self._lock:
            row = self._con.execute(f"SELECT {_COLUMNS} FROM proposals WHERE id = ?", (pid,)).fetchone()
        return _proposal(row) if row else None

    def proposals(
        self, *, state: str | None = None, path: str | None = None, limit: int | None = None
    ) -> list[Proposal]:
        """Proposals oldest first (only one state, or only those touching `path`)."""
        sql = f"SELECT {_COLUMNS} FROM proposals"
        params: list[Any] = []
        if state is not None:
            sql += " WHERE state = ?"
            params.append(state)
        sql += " ORDER BY id"
        with self._lock:
            rows = self._con.execute(sql, params).fetchall()
        out = [_proposal(r) for r in rows]
        if path is not None:
            out = [p for p in out if p.touches(path)]
        return out[-limit:] if limit else out

    def pending(self) -> list[Proposal]:
        return self.proposals(state=PENDING)

    def count(self, state: str = PENDING) -> int:
        """How many proposals are in `state` (one small query: a view's count, read now and then)."""
        with self._lock:
            row = self._con.execute("SELECT COUNT(*) FROM proposals WHERE state = ?", (state,)).fetchone()
        return int(row[0])

    def settle(
        self,
        pid: int,
        state: str,
        *,
        reason: str = "",
        by: str | None = None,
        change_ids: Iterable[int] = (),
        expect: str = PENDING,
        at: float | None = None,
    ) -> bool:
        """Move a proposal from `expect` to `state`; False when it was not in `expect` (someone else
        decided it first: the UPDATE is the one place two deciders meet)."""
        with self._lock:
            cur = self._con.execute(
                "UPDATE proposals SET state = ?, reason = ?, decided_by = COALESCE(?, decided_by),"
                " decided_at = ?, change_ids = ? WHERE id = ? AND state = ?",
                (state, reason, by, at if at is not None else time.time(), json.dumps(list(change_ids)), pid, expect),
            )
            return cur.rowcount == 1


_COLUMNS = (
    "id, at, actor, agent, session, tool, caller_arguments, method, call, operation, path, dest, effects,"
    " fingerprints, before, after, why, state, reason, decided_at, decided_by, change_ids"
)


def _proposal(r: tuple) -> Proposal:
    return Proposal(
        id=int(r[0]),
        at=float(r[1]),
        actor=r[2],
        agent=r[3],
        session=r[4],
        tool=r[5],
        caller_arguments=json.loads(r[6]),
        method=r[7],
        call=_decode(json.loads(r[8])),
        operation=r[9],
        path=r[10],
        dest=r[11],
        effects=tuple(Effect(p, c, v, d) for p, c, v, d in json.loads(r[12])),
        fingerprints=json.loads(r[13]),
        before=r[14],
        after=r[15],
        why=r[16],
        state=r[17],
        reason=r[18],
        decided_at=r[19],
        decided_by=r[20],
        change_ids=tuple(json.loads(r[21])),
    )


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


_stores: dict[str, PendingStore] = {}
_stores_lock = threading.Lock()


def store_for(root_real: str) -> PendingStore:
    """The vault's store, opened once per process."""
    path = pending_path(root_real)
    with _stores_lock:
        store = _stores.get(path)
        if store is not None and store.identity != _identity(path):
            # its file was removed (or replaced) since: a proposal written through the old
            # connection would land in a deleted file that `vaultwatch approve` never finds
            store.close()
            store = None
        if store is None:
            try:
                store = _stores[path] = PendingStore(path, **_env_bounds())
            except (OSError, sqlite3.Error) as exc:
                raise VaultError(f"the pending-changes store {path} cannot be opened: {exc}") from None
        return store


def _changes(count: int) -> str:
    return f"{count} pending change" + ("" if count == 1 else "s")


def _env_bounds() -> dict[str, Any]:
    return settings.bounds(
        {
            "max_changes": ("VAULTWATCH_PENDING_MAX_CHANGES", int),
            "max_bytes": ("VAULTWATCH_PENDING_MAX_MB", settings.mib),
            "agent_share": ("VAULTWATCH_PENDING_AGENT_SHARE", float),
        }
    )


# --- proposing (the gate, with no one to ask) -----------------------------------------------------


def propose(
    root_real: str,
    scope: Any,
    caller: Caller,
    effects: EffectSet,
    old: bytes | None,
    new: bytes | None,
    why: str,
    at: float,
    *,
    not_asked: str = "",
    undecided: str = "",
) -> AwaitingPerson:
    """Keep the change the write path is about to make for the person; the error to answer with
    (`not_asked`: why the calling client, which could ask the person, was not asked; `undecided`:
    why the person asked in the TUI did not decide it there)."""
    if not scope.method:
        raise VaultError("this change cannot be kept for later approval (it was not made by a Writer operation)")
    first = effects.effects[0]
    proposal = store_for(root_real).propose(
        actor=scope.actor,
        caller=caller,
        method=scope.method,
        call=scope.call,
        effects=effects,
        fingerprints=fingerprints(root_real, _effect_paths(effects.effects)),
        path=first.via or first.path,
        dest=first.dest,
        before=old,
        after=new,
        why=why,
        at=at,
    )
    return AwaitingPerson(proposal, not_asked, undecided)


# --- approving -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Grant:
    """A one-shot approval bound to one proposal: only its effects, only from its bytes. `via`:
    where the person approved it (journaled with the change: core.edit.hooks.APPROVED_VIA)."""

    proposal: Proposal
    via: str = APPROVED_BY_COMMAND

    def admit(
        self, effects: EffectSet, old: bytes | None, form: PathForm, links: Iterable[tuple[str, bytes, bytes]] = ()
    ) -> None:
        """Return when the change is inside what the person approved; raise ApprovalRefused otherwise.
        `links`: a rename's link rewrites as the write path read them (each note's path after the
        move, its bytes before and after), each from the bytes fingerprinted when it was proposed."""
        allowed = {form.key(p) for p in _effect_paths(self.proposal.effects)}
        outside = [p for p in _effect_paths(effects.effects) if form.key(p) not in allowed]
        if outside:
            raise ApprovalRefused(
                f"pending change {self.proposal.id} now also touches {', '.join(sorted(set(outside)))}, "
                "which the person did not approve; nothing was changed"
            )
        first = effects.effects[0]
        was = self.proposal.fingerprints.get(first.path)
        if old is not None and was is not None and was != "sha256:" + hashlib.sha256(old).hexdigest():
            raise ApprovalRefused(
                f"pending change {self.proposal.id}: {first.path!r} changed since it was proposed; nothing was changed"
            )
        # a linking note fingerprinted where it was before the move (one the rename carries along)
        back = {form.key(e.dest): e.path for e in effects.effects if e.change == MOVE_FROM and e.dest}
        kept = {form.key(p): was for p, was in self.proposal.fingerprints.items()}
        for path, before, _after in links:
            src = back.get(form.key(path), path)
            was = kept.get(form.key(src))
            if was is not None and was != "sha256:" + hashlib.sha256(before).hexdigest():
                raise ApprovalRefused(
                    f"pending change {self.proposal.id}: {src!r}, whose links it rewrites, changed since it "
                    "was proposed; nothing was changed"
                )


_grant: contextvars.ContextVar[Grant | None] = contextvars.ContextVar("vaultwatch_grant", default=None)


def current_grant() -> Grant | None:
    return _grant.get()


@contextlib.contextmanager
def granted(grant: Grant) -> Iterator[None]:
    token = _grant.set(grant)
    try:
        yield
    finally:
        _grant.reset(token)


def approve(vault: Any, pid: int, *, by: str, via: str = APPROVED_BY_COMMAND) -> Proposal:
    """Apply pending change `pid` as the agent proposed it (journaled as the agent's change), or
    refuse it (ApprovalRefused, the proposal marked refused) when anything it touches changed.

    Crash-safe: before its first write the approval opens an intent in the journal (the pending
    change, the newest change id then, and the bytes it leaves in the note it names, so a server
    watching never takes them for an outside edit); it closes it once the proposal is settled. An
    approval killed midway leaves the proposal "applying" with that intent open: running `approve`
    again (or the next server start, `resume_approvals`) rolls back what it did (a cut-off rename
    through the journal's rename intent) and, here, applies it anew."""
    store = store_for(vault.root_real)
    journal = journal_for(vault)
    if journal is None and vault.journal_problem is not None:
        journal = vault.reopen_journal()
        if journal is None:  # the agent's change could not be journaled: it still waits, for later
            raise ApprovalRefused(f"pending change {pid} was not applied and still waits: {vault.journal_problem}")
    found = store.get(pid)
    if found is not None and found.state == APPLYING and journal is not None:
        mine = [i for i in journal.open_intents() if i[3].get("operation") == APPROVE and i[3].get("pending") == pid]
        dead = {i[0] for i in journal.open_intents(interrupted=True)}
        if any(i[0] not in dead for i in mine):
            alive = next(i[3].get("pid") for i in mine if i[0] not in dead)
            raise VaultError(f"pending change {pid} is being applied right now (process {alive}); wait for it")
        from vaultwatch.core.edit.atomic import sweep_temp_files  # noqa: PLC0415
        from vaultwatch.core.review.revert import resume_reverts  # noqa: PLC0415  (as _writer)
        from vaultwatch.core.review.unrecorded import resume_writes, temporary_files  # noqa: PLC0415

        writer = _writer(vault)  # what the killed approval did is rolled back first, then settled
        temporary = temporary_files(writer, journal)  # (read before the sweep, as core.review.resume does)
        with contextlib.suppress(OSError):  # (its half-written files first, as core.review.resume does)
            sweep_temp_files(vault.root_real)
        resume_reverts(writer, journal)
        resume_approvals(writer, journal)
        resume_writes(writer, journal, temporary)  # its own write's intent: put back above, so closed here
        found = store.get(pid)
        if found is not None and found.state == APPROVED:
            return found  # it had landed whole and was journaled: finished
    proposal = _waiting(store, pid)
    intent = None
    if journal is not None:
        newest = journal.changes(limit=1)
        files = [{"path": proposal.path, "to": etag_of(proposal.after)}] if proposal.after is not None else []
        plan = {"operation": APPROVE, "pending": pid, "mark": newest[0].id if newest else 0, "files": files}
        intent = journal.begin_intent(0, by, plan)
    if not store.settle(pid, APPLYING, by=by):
        if intent is not None and journal is not None:
            journal.drop_intent(intent)
        raise VaultError(f"pending change {pid} was decided meanwhile; `vaultwatch pending` shows its state")
    try:
        return _apply(vault, store, proposal, by, via)
    finally:
        if intent is not None and journal is not None:
            journal.drop_intent(intent)  # after the proposal is settled: a kill before leaves both open


def link_rewrites(vault: Any, proposal: Proposal) -> list[tuple[str, bytes, bytes]]:
    """What a pending rename would make of each note whose links it rewrites if approved now (each
    note's path after the move, its bytes now and after; none for any other change, or one already
    decided), computed by the write path that would apply it (`Writer.link_rewrites`, the reading the
    question through an agent's client shows): the rename has not happened, so nothing stores them.
    `vault` must be loaded (which notes link to what is the index's); raises VaultError when the
    rename could not be applied as it stands (its source gone)."""
    if proposal.method != "rename" or proposal.state != PENDING:
        return []
    call = proposal.call
    return list(
        _writer(vault).link_rewrites(call["src"], call["dst"], update_links=bool(call.get("update_links", True)))
    )


def stranded(vault: Any, proposal: Proposal) -> list[str]:
    """The notes whose links to what a pending rename without link rewriting moves would be left
    pointing at nothing if it were approved now (none for any other change, or one decided), as
    the write path finds them (`Writer.stranded`). `vault` must be loaded; raises VaultError as
    link_rewrites does."""
    if proposal.method != "rename" or proposal.state != PENDING:
        return []
    call = proposal.call
    if call.get("update_links", True):
        return []
    return list(_writer(vault).stranded(call["src"], call["dst"]))


def unproposed(vault: Any, proposal: Proposal) -> list[str]:
    """What a pending folder rename or delete would now also move or delete that it did not propose
    (a note put in the folder since), by the paths under the folder, as the write path lists them
    (`Writer.contents`): approving it would be refused (Grant.admit), so the person is told first.
    None for any other change, or one decided; raises VaultError when its folder is gone."""
    if proposal.method not in ("rename", "delete") or proposal.state != PENDING:
        return []
    files, folders = _writer(vault).contents(proposal.path)
    form = form_of(vault.root_real)
    allowed = {form.key(p) for p in _effect_paths(proposal.effects)}
    return sorted(p for p in (*folders, *files) if form.key(p) not in allowed)


def _writer(vault: Any) -> Any:
    """The vault's Writer. The write path is imported only when a change is applied: the approval gate
    loads this module at every server start, before its first answer, which writes nothing."""
    from vaultwatch.core.edit.writes import Writer  # noqa: PLC0415

    return Writer(vault)


def _apply(vault: Any, store: PendingStore, proposal: Proposal, by: str, via: str) -> Proposal:
    pid = proposal.id
    changed = [p for p, was in proposal.fingerprints.items() if fingerprint(vault.root_real, p) != was]
    if changed:
        reason = f"{', '.join(changed)} changed since the change was proposed"
        _refuse(vault.root_real, store, proposal, reason)
        raise ApprovalRefused(f"pending change {pid} was not applied: {reason}; nothing was changed")
    caller = Caller(proposal.agent or proposal.actor, proposal.session or "", proposal.tool, proposal.caller_arguments)
    try:
        with granted(Grant(proposal, via)), calling(caller):
            result = getattr(_writer(vault), proposal.method)(**proposal.call, actor=proposal.actor)
    except GuardUnavailable as exc:  # the guard cannot judge it now (its journal, the person's rules): later
        store.settle(pid, PENDING, expect=APPLYING)
        raise ApprovalRefused(f"pending change {pid} was not applied and still waits: {exc.message}") from None
    except VaultError as exc:
        _refuse(vault.root_real, store, proposal, exc.message)
        raise ApprovalRefused(f"pending change {pid} was not applied: {exc.message}") from None
    except BaseException:
        store.settle(pid, PENDING, expect=APPLYING)  # not our error to judge: it stays for the person
        raise
    # what the change said as it was applied (a linking note edited since the person saw the rename's
    # rewrites, and left as it was): the person approving reads it, not only the agent
    said = "; ".join(str(w) for w in getattr(result, "warnings", None) or ())
    store.settle(pid, APPROVED, by=by, change_ids=caller.change_ids, expect=APPLYING, reason=said)
    done = store.get(pid)
    assert done is not None
    return done


def resume_approvals(writer: Any, journal: Any) -> list[tuple[int, str]]:
    """Settle every approval a crash cut off (run after the journal's interrupted renames are rolled
    back, core.review.revert.resume_reverts): journaled whole, it is finished (approved);
    nothing left applied, it waits for the person again; the note written but not journaled, its
    bytes are put back and it waits again; anything else changed since, it is refused."""
    out: list[tuple[int, str]] = []
    for intent_id, _, _, plan in journal.open_intents(interrupted=True):
        if plan.get("operation") != APPROVE:
            continue
        try:
            said = _recover(writer, journal, plan)
        except VaultError as exc:
            out.append((0, f"interrupted approval of pending change {plan.get('pending')} not settled: {exc.message}"))
            continue
        journal.drop_intent(intent_id)
        out.append((0, said))
    return out


def _recover(writer: Any, journal: Any, plan: dict[str, Any]) -> str:
    root = writer.vault.root_real
    store = store_for(root)
    pid = int(plan.get("pending", 0))
    p = store.get(pid)
    if p is None or p.state != APPLYING:
        return f"interrupted approval of pending change {pid}: already {p.state if p else 'gone'}"
    mark = int(plan.get("mark", 0))
    ids = [
        c.id
        for c in journal.changes(kinds=("change",), limit=200)
        if c.id > mark
        and c.session == p.session
        and c.tool == p.tool
        and c.reverted_by is None
        and (c.path in (p.path, p.dest) or c.src == p.path)
    ]
    if ids and p.session:
        store.settle(pid, APPROVED, change_ids=sorted(ids), expect=APPLYING)
        return f"finished the interrupted approval of pending change {pid} (journal: {', '.join(map(str, ids))})"
    changed = [path for path, was in p.fingerprints.items() if fingerprint(root, path) != was]
    landed = p.after is not None and fingerprint(root, p.path) == "sha256:" + hashlib.sha256(p.after).hexdigest()
    if changed == [p.path] and landed and p.after is not None:
        # written, and killed before the journal recorded it: the bytes go back, journaled as the recovery's
        if p.before is None:
            writer.delete(p.path, if_match=etag_of(p.after), actor=RECOVERY_ACTOR)
        else:
            writer.write(p.path, p.before, if_match=etag_of(p.after), exact=True, actor=RECOVERY_ACTOR)
        changed = []
    if not changed:
        store.settle(pid, PENDING, expect=APPLYING)
        return f"rolled back the interrupted approval of pending change {pid}; it waits for the person again"
    reason = f"{', '.join(changed)} changed while its approval was cut off"
    _refuse(root, store, p, reason)
    return f"interrupted approval of pending change {pid} refused: {reason}"


def decline(root_real: str, pid: int, reason: str = "", *, by: str) -> Proposal:
    """Decline pending change `pid` (the pending screen's `n` and `d`, `vaultwatch decline`, the person's
    desk of a running server): kept with the proposal, and in the record of changes that did not happen."""
    store = store_for(root_real)
    _waiting(store, pid)
    if not store.settle(pid, DECLINED, reason=reason.strip() or "declined by the person", by=by):
        raise VaultError(f"pending change {pid} was decided meanwhile; `vaultwatch pending` shows its state")
    done = store.get(pid)
    assert done is not None
    _keep_outcome(root_real, done, refusals.DECLINED, done.reason)
    return done


def _refuse(root_real: str, store: PendingStore, proposal: Proposal, reason: str) -> None:
    """Settle an approval that cannot apply as refused: kept with the proposal, and in the record of
    changes that did not happen (`vaultwatch refusals`, the TUI's refusals view), as a decline is."""
    if store.settle(proposal.id, REFUSED, reason=reason, expect=APPLYING):
        _keep_outcome(root_real, proposal, refusals.REFUSED, f"approved, but could not apply: {reason}")


def _keep_outcome(root_real: str, proposal: Proposal, kind: str, reason: str) -> None:
    # every path it would have touched, as the gate keeps a live refusal or decline: a folder's rename
    # reads `A -> B (+18)` whichever way it was turned down
    touched = [p for e in proposal.effects for p in (e.via or e.path, e.dest)] or [proposal.path, proposal.dest]
    paths = list(dict.fromkeys(p for p in touched if p))
    refusals.note(
        root_real,
        refusals.Refusal(
            at=time.time(),
            kind=kind,
            agent=proposal.agent or proposal.actor,
            session=proposal.session,
            tool=proposal.tool,
            operation=proposal.operation,
            paths=paths,
            reason=f"pending change {proposal.id}: {reason}",
            pending=proposal.id,
            proposed=proposal.at,
        ),
    )


def _waiting(store: PendingStore, pid: int) -> Proposal:
    proposal = store.get(pid)
    if proposal is None:
        raise VaultError(f"no pending change {pid} in this vault; `vaultwatch pending` lists them")
    if proposal.state != PENDING:
        raise VaultError(f"pending change {pid} is already {proposal.state}; only a pending change can be decided")
    return proposal


__all__ = [
    "APPLYING",
    "APPROVED",
    "DECLINED",
    "PENDING",
    "REFUSED",
    "STATES",
    "ApprovalRefused",
    "AwaitingPerson",
    "Grant",
    "PendingFull",
    "PendingStore",
    "Proposal",
    "approve",
    "binding",
    "current_grant",
    "decline",
    "fingerprint",
    "fingerprints",
    "granted",
    "link_rewrites",
    "pending_path",
    "propose",
    "resume_approvals",
    "store_for",
    "unproposed",
]
