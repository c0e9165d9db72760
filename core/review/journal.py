"""The change journal: every change made through vaultwatch, who made it, and the bytes to undo it.

Every Writer operation (an agent's tool call, a TUI action, a revert) becomes one `Change`:
who (the actor, plus the agent's name and session when an MCP call made it), when (the
vault's injected clock), the tool and its arguments, every path it touched and, per file it
rewrote, the bytes before and after (a rename's link rewriting included). Outside edits are
not journaled (their before-state is unknown) but appear as "outside" rows naming the paths.

Storage: one SQLite database per vault under `$XDG_STATE_HOME/vaultwatch/journal/`
(default `~/.local/state`), in WAL mode, one transaction per change, so a crash (kill -9
included) leaves the last committed change and never a torn one. Before-bytes are zlib
compressed; after-bytes are compressed against the before-bytes as a preset dictionary,
so a small edit of a note costs a few hundred bytes. Bounded: the oldest changes are
dropped beyond `max_changes` or `max_bytes` of stored content (both configurable).

Hooks: the write path reports to the journal through core.review.hooks (`journaled`,
`committed`, `approve`, the MCP layer's `calling`; importable from here too); `record_result`
turns one operation's scope into one row.

Over 500 lines on purpose: the store is one job around one SQLite connection and its lock:
the schema, one transaction per change, the bounds (pruning), the reads and the "changed
outside" rows (which look up recent rows before they insert one) all share them; splitting
them would spread that lock's rules over several modules.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core.edit.effects import LINKS
from vaultwatch.core.errors import NotFoundError, VaultError
from vaultwatch.core.events import DocumentsChanged, Event
from vaultwatch.core.review.hooks import (  # the write path's hooks, importable from here too
    MAX_ARG_CHARS,
    Caller,
    FileWrite,
    Scope,
    approve,
    calling,
    committed,
    current_caller,
    current_scope,
    journaled,
    problem,
    waited,
)

DEFAULT_MAX_CHANGES = 10_000
DEFAULT_MAX_BYTES = 256 * 2**20
MAX_OUTSIDE_PATHS = 1000
RECENT_S = 300.0  # s: a change journaled by another process this recently may explain a disk event
RECHECK_S = 1.0  # s: an outside row is checked again this long after (another process's journal row)
_ZLIB_LEVEL = 1  # fast: a 10 KB note compresses in ~0.05 ms; the delta against the before-bytes does the rest
_WINDOW = 32 * 1024  # zlib's preset dictionary reaches this far back


# --- records -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file a change rewrote: its path after the change, and both etags (None: absent)."""

    seq: int
    path: str
    before_etag: str | None
    after_etag: str | None
    before_size: int
    after_size: int
    role: str = "target"  # target (the note asked for) | links (rewritten by a rename) | restored

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "role": self.role,
            "before_etag": self.before_etag,
            "after_etag": self.after_etag,
            "before_size": self.before_size,
            "after_size": self.after_size,
        }


@dataclass(frozen=True, slots=True)
class Change:
    """One journaled change (kind "change" or "revert") or an outside edit (kind "outside")."""

    id: int
    at: float
    kind: str
    actor: str
    agent: str | None
    session: str | None
    tool: str
    operation: str
    path: str
    arguments: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    src: str | None = None  # rename: the source path (path is the destination)
    moved_to: str | None = None  # delete: the trash location; rename: the destination
    kind_of_path: str = "note"  # note | attachment | folder
    previous_etag: str | None = None
    etag: str | None = None
    paths: tuple[str, ...] = ()
    files: tuple[FileChange, ...] = ()
    revert_of: int | None = None
    reverted_by: int | None = None

    @property
    def who(self) -> str:
        """The actor as a person reads it: the agent's name (and session), or the human."""
        if self.kind == "outside":
            return "outside vaultwatch"
        if self.agent:
            return self.agent
        return self.actor

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": _iso(self.at),
            "kind": self.kind,
            "actor": self.actor,
            "agent": self.agent,
            "session": self.session,
            "tool": self.tool,
            "operation": self.operation,
            "path": self.path,
            "src": self.src,
            "moved_to": self.moved_to,
            "summary": self.summary,
            "arguments": self.arguments,
            "previous_etag": self.previous_etag,
            "etag": self.etag,
            "paths": list(self.paths),
            "files": [f.as_json() for f in self.files],
            "revert_of": self.revert_of,
            "reverted_by": self.reverted_by,
        }


@dataclass(frozen=True, slots=True)
class ChangeRecorded(Event):
    """A change entered the journal (published after its transaction committed)."""

    change: Change


def _iso(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).isoformat(timespec="milliseconds")


def etag(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- compression -----------------------------------------------------------------------------


def _pack(data: bytes | None, base: bytes | None = None) -> bytes | None:
    if data is None:
        return None
    if base:
        c = zlib.compressobj(_ZLIB_LEVEL, zdict=base[-_WINDOW:])
        return b"d" + c.compress(data) + c.flush()
    return b"z" + zlib.compress(data, _ZLIB_LEVEL)


def _unpack(blob: bytes | None, base: bytes | None = None) -> bytes | None:
    if blob is None:
        return None
    tag, body = blob[:1], blob[1:]
    if tag == b"d":
        d = zlib.decompressobj(zdict=(base or b"")[-_WINDOW:])
        return d.decompress(body) + d.flush()
    return zlib.decompress(body)


# --- where journals live -----------------------------------------------------------------------


def state_dir() -> str:
    """`$XDG_STATE_HOME/vaultwatch`, or `~/.local/state/vaultwatch` when unset or relative."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "vaultwatch")


def journal_path(root_real: str) -> str:
    """The journal file of the vault at `root_real`."""
    name = os.path.basename(root_real.rstrip("/")) or "vault"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:40]
    digest = hashlib.sha256(os.fsencode(root_real)).hexdigest()[:16]
    return os.path.join(state_dir(), "journal", f"{safe}-{digest}.sqlite3")


def enabled_by_env() -> bool:
    return os.environ.get("VAULTWATCH_JOURNAL", "1").lower() not in ("0", "off", "no", "false")


_open_lock = threading.Lock()


def journal_for(vault: Any, *, create: bool = True) -> Journal | None:
    """The vault's journal, opened on first use (None when switched off: VAULTWATCH_JOURNAL=0)."""
    found = vault.__dict__.get("_journal", ...)
    if found is not ...:
        return found
    if not create:
        return None
    with _open_lock:
        found = vault.__dict__.get("_journal", ...)
        if found is not ...:
            return found
        journal = None
        if enabled_by_env():
            try:
                journal = Journal.for_vault(vault)
            except (OSError, sqlite3.Error) as exc:
                vault.bus.publish(problem(f"the change journal is off: {exc}"))
        vault._journal = journal
        return journal


def attach(vault: Any, journal: Journal | None) -> None:
    """Use `journal` for `vault` (None: journal nothing)."""
    vault._journal = journal
    if journal is not None:
        journal.watch(vault.bus)


# --- the store -----------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    actor TEXT NOT NULL,
    agent TEXT,
    session TEXT,
    tool TEXT NOT NULL,
    operation TEXT NOT NULL,
    path TEXT NOT NULL,
    src TEXT,
    moved_to TEXT,
    path_kind TEXT NOT NULL DEFAULT 'note',
    summary TEXT NOT NULL DEFAULT '',
    arguments TEXT NOT NULL DEFAULT '{}',
    previous_etag TEXT,
    etag TEXT,
    revert_of INTEGER,
    reverted_by INTEGER,
    size INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS changes_at ON changes(at);
CREATE INDEX IF NOT EXISTS changes_agent ON changes(agent);
CREATE TABLE IF NOT EXISTS files (
    change_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    path TEXT NOT NULL,
    role TEXT NOT NULL,
    before BLOB,
    after BLOB,
    before_etag TEXT,
    after_etag TEXT,
    before_size INTEGER NOT NULL,
    after_size INTEGER NOT NULL,
    PRIMARY KEY (change_id, seq)
);
CREATE TABLE IF NOT EXISTS paths (
    change_id INTEGER NOT NULL,
    path TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS paths_path ON paths(path, change_id);
CREATE INDEX IF NOT EXISTS paths_change ON paths(change_id);
"""


class Journal:
    """The journal of one vault (see module doc). Thread-safe."""

    def __init__(
        self,
        path: str,
        *,
        clock: Callable[[], float] | None = None,
        max_changes: int = DEFAULT_MAX_CHANGES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        bus: Any = None,
    ) -> None:
        self.path = path
        self.max_changes = max(1, int(max_changes))
        self.max_bytes = max(1, int(max_bytes))
        self._clock = clock or _wall
        self._lock = threading.RLock()
        self._bus = bus
        self._unsubscribe: Callable[[], None] | None = None
        self.current: Callable[[str], bytes | None] | None = None  # a vault path's bytes now (see _explained)
        self._announced: set[int] = set()
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if not os.path.exists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._con = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses at most the last commits, never corrupts
        self._con.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self._con.executescript(_SCHEMA)
        row = self._con.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM changes").fetchone()
        self._count, self._bytes = int(row[0]), int(row[1])

    @classmethod
    def for_vault(cls, vault: Any, **options: Any) -> Journal:
        """The journal of `vault` in the state folder, on the vault's clock, watching its bus."""
        clock = vault.clock
        journal = cls(
            journal_path(vault.root_real),
            clock=lambda: clock.now().timestamp(),
            bus=vault.bus,
            **_env_bounds(),
            **options,
        )
        journal.current = _reader(vault)
        journal.watch(vault.bus)
        return journal

    def watch(self, bus: Any) -> None:
        """Publish ChangeRecorded on `bus` and record its outside edits as "outside" rows."""
        self._bus = bus
        if self._unsubscribe is None and bus is not None:
            self._unsubscribe = bus.subscribe(self._on_event)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._lock:
            try:
                self._con.close()
            except sqlite3.Error:
                pass

    # --- recording ---

    def _on_event(self, event: Event) -> None:
        if isinstance(event, DocumentsChanged) and event.source == "disk":
            paths = [p for p in (*event.added, *event.changed, *event.removed) if p]
            if not paths:
                return
            gone = set(event.removed)
            recent = self._recent_paths() if self.current is not None else set()
            unexplained = [p for p in paths if p not in recent or not self._explained(p, p in gone)]
            if unexplained:
                outside = self.record_outside(unexplained, removed=gone)
                if self.current is not None:  # a change journaled by another process may land just after its write
                    timer = threading.Timer(RECHECK_S, self._recheck, (outside, unexplained, gone))
                    timer.daemon = True
                    timer.start()

    def _recent_paths(self) -> set[str]:
        """Paths of the changes journaled in the last RECENT_S seconds (only those can explain a
        disk event: a 10,000-file checkout is not looked up path by path)."""
        with self._lock:
            return {
                r[0]
                for r in self._con.execute(
                    "SELECT DISTINCT p.path FROM paths p JOIN changes c ON c.id = p.change_id "
                    "WHERE c.at >= ? AND c.kind != 'outside'",
                    (float(self._clock()) - RECENT_S,),
                )
            }

    def _explained(self, rel: str, removed: bool) -> bool:
        """`rel` holds what the newest journaled change touching it left there: the disk event is
        that change (made by another vaultwatch process, e.g. `vaultwatch revert` while the TUI
        runs), not an outside edit. Publishes ChangeRecorded for such a change, once."""
        if self.current is None:
            return False
        with self._lock:
            row = self._con.execute(
                "SELECT c.id, c.kind, c.path, c.src, c.etag, c.operation FROM paths p JOIN changes c "
                "ON c.id = p.change_id WHERE p.path=? ORDER BY c.id DESC LIMIT 1",
                (rel,),
            ).fetchone()
            if row is None or row[1] == "outside":
                return False
            cid, _, path, src, change_etag, operation = row
            written = self._con.execute(
                "SELECT after_etag FROM files WHERE change_id=? AND path=? ORDER BY seq DESC LIMIT 1", (cid, rel)
            ).fetchone()
        try:
            data = None if removed else self.current(rel)
        except Exception:  # unreadable now: not explained
            return False
        if data is None:
            ok = (written is not None and written[0] is None) or src == rel or (operation == "delete" and path == rel)
        else:
            now = etag(data)
            ok = (written is not None and written[0] == now) or (path == rel and change_etag == now)
        if ok and cid not in self._announced and self._bus is not None:
            self._announced.add(cid)
            try:
                self._bus.publish(ChangeRecorded(self.get(cid)))
            except NotFoundError:
                pass
        return ok

    def _recheck(self, outside: Change, paths: list[str], gone: set[str]) -> None:
        """Drop an "outside" row whose every path a change journaled just after it explains."""
        try:
            if all(self._explained(p, p in gone) for p in paths):
                with self._lock:
                    self._con.execute("BEGIN IMMEDIATE")
                    try:
                        size = self._con.execute("SELECT size FROM changes WHERE id=?", (outside.id,)).fetchone()
                        for table, key in (("files", "change_id"), ("paths", "change_id"), ("changes", "id")):
                            self._con.execute(f"DELETE FROM {table} WHERE {key}=?", (outside.id,))
                        if size is not None:
                            self._count -= 1
                            self._bytes -= int(size[0])
                        self._con.execute("COMMIT")
                    except BaseException:
                        self._con.execute("ROLLBACK")
                        raise
                if self._bus is not None:
                    self._bus.publish(ChangeRecorded(outside))
        except (sqlite3.Error, ValueError):  # closed meanwhile
            pass

    def record_outside(self, paths: list[str], *, removed: Iterable[str] = ()) -> Change:
        """An outside edit of `paths` (no bytes: vaultwatch cannot know what was there)."""
        gone = set(removed)
        shown = paths[:MAX_OUTSIDE_PATHS]
        first = shown[0]
        n = len(paths)
        summary = (
            f"{'removed' if first in gone else 'changed'} outside vaultwatch"
            if n == 1
            else f"{n} files changed outside vaultwatch"
        )
        return self._insert(
            dict(
                kind="outside",
                actor="outside",
                agent=None,
                session=None,
                tool="outside",
                operation="outside",
                path=first,
                summary=summary,
                arguments={},
            ),
            [],
            shown,
        )

    def record_result(self, scope: Scope, result: Any) -> Change:
        """Journal a finished Writer operation from its scope (the bytes) and its WriteResult."""
        caller = current_caller()
        human = scope.actor == "human" or scope.actor.startswith("human:")
        agent = (
            caller.agent
            if caller is not None and not human
            else (None if human else scope.actor.removeprefix("agent:"))
        )
        tool = caller.tool if caller is not None and not human else scope.operation
        arguments = caller.arguments if caller is not None and not human and caller.arguments else scope.arguments
        src = None
        path = result.path
        if result.operation == "rename":
            src = str(scope.arguments.get("src") or scope.arguments.get("path") or "")
            try:
                from vaultwatch.core.disk.paths import normalize

                src = normalize(src)
            except (VaultError, TypeError, ValueError):
                pass
        files = list(scope.files)
        if result.operation == "delete" and scope.preread is not None and scope.preread[0] == result.path:
            if etag(scope.preread[1]) == result.previous_etag:
                files = [FileWrite(result.path, scope.preread[1], None, "target"), *files]
        path_kind = (
            "folder"
            if result.operation in ("rename", "delete") and result.etag is None and result.previous_etag is None
            else ("note" if path.endswith(".md") else "attachment")
        )
        row = dict(
            kind=scope.kind,
            actor=scope.actor,
            agent=agent,
            session=caller.session if caller and not human else None,
            tool=tool,
            operation=result.operation,
            path=path,
            src=src,
            moved_to=result.moved_to,
            path_kind=path_kind,
            summary=result.diff_summary,
            arguments=_clip_args(arguments),
            previous_etag=result.previous_etag,
            etag=result.etag,
            revert_of=scope.revert_of,
        )
        # every path the change's effect set names (core.edit.effects): a folder's rename or delete is
        # found in the history of each file it moved, whoever made it
        touched = [p for es in scope.effects for e in es.effects if e.change != LINKS for p in (e.path, e.via) if p]
        change = self._insert(row, files, [*result.changed_paths, *([src] if src else []), *touched])
        if caller is not None:
            caller.change_ids.append(change.id)
        return change

    def record_revert(self, scope: Scope, of: Change, summary: str, path: str) -> Change:
        """Journal a revert of `of` (its files come from the scope the revert's writes ran in)."""
        caller = current_caller()
        human = scope.actor == "human" or scope.actor.startswith("human:")
        row = dict(
            kind="revert",
            actor=scope.actor,
            agent=None if human else (caller.agent if caller else scope.actor.removeprefix("agent:")),
            session=caller.session if caller and not human else None,
            tool="revert",
            operation="revert",
            path=path,
            summary=summary,
            arguments={"change_id": of.id},
            revert_of=of.id,
        )
        paths = [f.path for f in scope.files] + [path] + list(of.paths)
        change = self._insert(row, list(scope.files), paths, reverts=of.id)
        if caller is not None:
            caller.change_ids.append(change.id)
        return change

    def _insert(
        self, row: dict[str, Any], files: list[FileWrite], paths: Iterable[str], *, reverts: int | None = None
    ) -> Change:
        at = float(self._clock())
        packed = []
        size = 0
        for i, f in enumerate(files):
            b = _pack(f.before)
            a = _pack(f.after, f.before)
            size += len(b or b"") + len(a or b"")
            packed.append(
                (
                    i,
                    f.path,
                    f.role,
                    b,
                    a,
                    etag(f.before) if f.before is not None else None,
                    etag(f.after) if f.after is not None else None,
                    len(f.before or b""),
                    len(f.after or b""),
                )
            )
        args_json = json.dumps(row.get("arguments") or {}, ensure_ascii=False, default=str)
        size += len(args_json) + 200
        unique_paths = list(dict.fromkeys(p for p in paths if p))
        with self._lock:
            con = self._con
            con.execute("BEGIN IMMEDIATE")
            try:
                cur = con.execute(
                    "INSERT INTO changes (at, kind, actor, agent, session, tool, operation, path, src, moved_to,"
                    " path_kind, summary, arguments, previous_etag, etag, revert_of, size)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        at,
                        row["kind"],
                        row["actor"],
                        row.get("agent"),
                        row.get("session"),
                        row["tool"],
                        row["operation"],
                        row["path"],
                        row.get("src"),
                        row.get("moved_to"),
                        row.get("path_kind", "note"),
                        row.get("summary") or "",
                        args_json,
                        row.get("previous_etag"),
                        row.get("etag"),
                        row.get("revert_of"),
                        size,
                    ),
                )
                assert cur.lastrowid is not None  # an INSERT just ran
                cid = cur.lastrowid
                if packed:
                    con.executemany("INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?,?)", [(cid, *p) for p in packed])
                con.executemany("INSERT INTO paths VALUES (?,?)", [(cid, p) for p in unique_paths])
                if reverts is not None:
                    con.execute("UPDATE changes SET reverted_by=? WHERE id=?", (cid, reverts))
                self._count += 1
                self._bytes += size
                self._prune_locked()
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                row_count = con.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM changes").fetchone()
                self._count, self._bytes = int(row_count[0]), int(row_count[1])
                raise
        change = Change(
            cid,
            at,
            row["kind"],
            row["actor"],
            row.get("agent"),
            row.get("session"),
            row["tool"],
            row["operation"],
            row["path"],
            dict(row.get("arguments") or {}),
            row.get("summary") or "",
            row.get("src"),
            row.get("moved_to"),
            row.get("path_kind", "note"),
            row.get("previous_etag"),
            row.get("etag"),
            tuple(unique_paths),
            tuple(FileChange(p[0], p[1], p[5], p[6], p[7], p[8], p[2]) for p in packed),
            row.get("revert_of"),
            None,
        )
        if self._bus is not None:
            self._bus.publish(ChangeRecorded(change))
        return change

    def _prune_locked(self) -> None:
        con = self._con
        over_n = self._count - self.max_changes
        if over_n <= 0 and self._bytes <= self.max_bytes:
            return
        ids: list[int] = []
        if over_n > 0:
            ids = [r[0] for r in con.execute("SELECT id FROM changes ORDER BY id LIMIT ?", (over_n,))]
        freed = (
            sum(r[0] for r in con.execute(f"SELECT size FROM changes WHERE id IN ({','.join('?' * len(ids))})", ids))
            if ids
            else 0
        )
        if self._bytes - freed > self.max_bytes:
            last = ids[-1] if ids else 0
            for cid, size in con.execute("SELECT id, size FROM changes WHERE id > ? ORDER BY id", (last,)):
                if self._bytes - freed <= self.max_bytes or self._count - len(ids) <= 1:
                    break
                ids.append(cid)
                freed += size
        if not ids:
            return
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            con.execute(f"DELETE FROM files WHERE change_id IN ({marks})", chunk)
            con.execute(f"DELETE FROM paths WHERE change_id IN ({marks})", chunk)
            con.execute(f"DELETE FROM changes WHERE id IN ({marks})", chunk)
        self._count -= len(ids)
        self._bytes -= freed
        con.execute("PRAGMA incremental_vacuum")

    # --- reading ---

    def get(self, change_id: int) -> Change:
        """One change by id (NotFoundError when unknown or pruned)."""
        with self._lock:
            row = self._con.execute(f"SELECT {_COLS} FROM changes WHERE id=?", (int(change_id),)).fetchone()
            if row is None:
                raise NotFoundError(
                    f"no change {change_id} in the journal (unknown, or dropped by the journal's "
                    "bounds); `vaultwatch changes` lists what it holds"
                )
            return self._change(row)

    def changes(
        self,
        *,
        agent: str | None = None,
        since: float | None = None,
        path: str | None = None,
        limit: int | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[Change]:
        """Journaled changes, newest first, optionally of one agent, since a time, or touching a path."""
        sql = f"SELECT {_COLS} FROM changes"
        where: list[str] = []
        params: list[Any] = []
        if path is not None:
            where.append("id IN (SELECT change_id FROM paths WHERE path=?)")
            params.append(path)
        if agent is not None:
            where.append("(agent=? OR agent LIKE ? OR actor=?)")
            params += [agent, agent + "/%", agent]
        if since is not None:
            where.append("at>=?")
            params.append(float(since))
        if kinds is not None:
            k = list(kinds)
            where.append(f"kind IN ({','.join('?' * len(k))})")
            params += k
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._lock:
            return [self._change(r) for r in self._con.execute(sql, params).fetchall()]

    def contents(self, change_id: int, seq: int) -> tuple[bytes | None, bytes | None]:
        """(before, after) bytes of one file of a change."""
        with self._lock:
            row = self._con.execute(
                "SELECT before, after FROM files WHERE change_id=? AND seq=?", (int(change_id), int(seq))
            ).fetchone()
        if row is None:
            raise NotFoundError(f"change {change_id} has no file {seq}")
        before = _unpack(row[0])
        return before, _unpack(row[1], before)

    def stats(self) -> dict[str, int]:
        with self._lock:
            size = os.path.getsize(self.path) + (
                os.path.getsize(self.path + "-wal") if os.path.exists(self.path + "-wal") else 0
            )
            return {"changes": self._count, "content_bytes": self._bytes, "file_bytes": size}

    def checkpoint(self) -> None:
        with self._lock:
            self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _change(self, row: tuple) -> Change:
        (
            cid,
            at,
            kind,
            actor,
            agent,
            session,
            tool,
            operation,
            path,
            src,
            moved_to,
            path_kind,
            summary,
            arguments,
            previous_etag,
            etag_,
            revert_of,
            reverted_by,
        ) = row
        files = tuple(
            FileChange(seq, p, be, ae, bs, as_, role)
            for seq, p, role, be, ae, bs, as_ in self._con.execute(
                "SELECT seq, path, role, before_etag, after_etag, before_size, after_size "
                "FROM files WHERE change_id=? ORDER BY seq",
                (cid,),
            )
        )
        paths = tuple(r[0] for r in self._con.execute("SELECT path FROM paths WHERE change_id=?", (cid,)))
        try:
            args = json.loads(arguments)
        except ValueError:
            args = {}
        return Change(
            cid,
            at,
            kind,
            actor,
            agent,
            session,
            tool,
            operation,
            path,
            args,
            summary,
            src,
            moved_to,
            path_kind,
            previous_etag,
            etag_,
            paths,
            files,
            revert_of,
            reverted_by,
        )


_COLS = (
    "id, at, kind, actor, agent, session, tool, operation, path, src, moved_to, path_kind, summary, "
    "arguments, previous_etag, etag, revert_of, reverted_by"
)


def _clip_args(arguments: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in (arguments or {}).items():
        if isinstance(v, str) and len(v) > MAX_ARG_CHARS:
            v = v[:MAX_ARG_CHARS] + f"…(+{len(v) - MAX_ARG_CHARS})"
        out[str(k)[:80]] = v
    return out


def _reader(vault: Any) -> Callable[[str], bytes | None]:
    """The bytes of a vault path now, read as the write path reads them (inside the vault only)."""
    writers: list[Any] = []

    def current(rel: str) -> bytes | None:
        from ..edit.atomic import read_file  # noqa: PLC0415
        from ..edit.writes import Writer  # noqa: PLC0415  (writes imports this module)

        if not writers:
            writers.append(Writer(vault))
        try:
            with writers[0]._loc(rel) as loc:
                found = read_file(loc, rel)
        except VaultError:
            return None
        return None if found is None else found[0]

    return current


def _env_bounds() -> dict[str, int]:
    out = {}
    for key, env in (("max_changes", "VAULTWATCH_JOURNAL_MAX_CHANGES"), ("max_bytes", "VAULTWATCH_JOURNAL_MAX_MB")):
        raw = os.environ.get(env)
        if raw:
            try:
                value = float(raw)
            except ValueError:
                continue
            out[key] = int(value * 2**20) if key == "max_bytes" else int(value)
    return out


def _wall() -> float:
    import time

    return time.time()


def parse_since(text: str, now: dt.datetime) -> float:
    """`--since` values: an ISO date or datetime, or a duration back from now ("30m", "2h", "1d")."""
    raw = text.strip()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    if raw and raw[-1] in units and raw[:-1].replace(".", "", 1).isdigit():
        return now.timestamp() - float(raw[:-1]) * units[raw[-1]]
    try:
        when = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise VaultError(
            f"--since {text!r}: give an ISO date or time (2026-11-29, 2026-11-29T10:00) or a "
            "duration back from now (30m, 2h, 1d)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


__all__ = [
    "Caller",
    "Change",
    "ChangeRecorded",
    "FileChange",
    "Journal",
    "Scope",
    "approve",
    "attach",
    "calling",
    "committed",
    "current_caller",
    "current_scope",
    "journal_for",
    "journal_path",
    "journaled",
    "parse_since",
    "state_dir",
    "waited",
]
