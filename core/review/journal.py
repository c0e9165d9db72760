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
so a small edit of a note costs a few hundred bytes. Bounded: beyond `max_changes` or
`max_bytes` (the database and its WAL on disk, both configurable) the oldest changes are
dropped, but only changes the person has reviewed and that are older than `keep_s` (default
7 days). When only protected changes fill it, agents' writes are refused (`JournalFull`,
raised by `admit` before anything is written) instead of the journal forgetting what an
agent did; and one agent may hold at most `agent_share` of it, of its bytes and of its number
of changes alike, so one agent's flood (of big writes or of small ones) is what gets refused
while the others still write. The person's own writes are never refused.

Reviewed: the person's own changes, outside edits, and agents' writes the person approved at
the approval gate are reviewed when recorded; the rest wait for `mark_reviewed` (the Changes
view's `m`, `vaultwatch changes --mark-reviewed`, a revert). `unreviewed_paths()` answers
"which notes did an agent change that nobody has reviewed since", from one indexed query, and
`reviewed_paths()` "which notes' agent changes has the person reviewed" (core.review.triageviews).

Time: each change records the wall time (`at`, shown, never trusted for order) and the
clock's monotonic reference (boot id, monotonic seconds); from them a journal time (`jt`)
that only moves forward: within one boot it advances by the monotonic clock, across a boot
it takes the wall time but never goes back. Order is the id; "since 30m" is
`jt >= now - 30m` with `now` reckoned from the newest change's references.

Revert intents: a revert writes its plan (`begin_intent`) before it changes anything and
closes it when its row is recorded; an open intent names the bytes it puts back, so its
partial writes are not "outside" edits and the next run finishes it (core.review.revert).

Other processes: a watching process (`Vault.start_watching`, the TUI's or a server's) follows
the journal (`follow`): each row another process commits (`vaultwatch revert` while the TUI runs,
or the one that finishes a killed revert) is published as ChangeRecorded once it is committed,
whatever the order of its disk events and its commit.

Hooks: the write path reports to the journal through core.edit.hooks (`journaled`,
`committed`, `approve`, the MCP layer's `calling`; importable from here too); `record_result`
turns one operation's scope into one row.

Over 500 lines on purpose: the store is one job around one SQLite connection and its lock:
the schema, one transaction per change, the bounds (pruning), the reads and the "changed
outside" rows (which look up recent rows before they insert one) all share them; splitting
them would spread that lock's rules over several modules.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import os
import sqlite3
import stat as stat_mod
import threading
import urllib.parse
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core import platform, settings
from vaultwatch.core.clock import SystemClock
from vaultwatch.core.clock import reference as reference_of
from vaultwatch.core.disk.private import private_file, private_folder
from vaultwatch.core.disk.safeio import locate
from vaultwatch.core.edit.atomic import read_file
from vaultwatch.core.edit.effects import LINKS
from vaultwatch.core.edit.hooks import (  # the write path's hooks, importable from here too
    APPROVED_BY_COMMAND,
    APPROVED_IN_TUI,
    APPROVED_VIA,
    MAX_ARG_CHARS,
    WRITE_INTENT,
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
from vaultwatch.core.errors import JournalUnavailable, NotFoundError, VaultError
from vaultwatch.core.events import DocumentsChanged, Event
from vaultwatch.core.review import vaultroots
from vaultwatch.core.review.agentrules import shown_agent
from vaultwatch.core.review.guardenv import state_dir
from vaultwatch.core.review.moves import Move, OnDisk, Where, describe, follow, top_pairs, whereabouts

DEFAULT_MAX_CHANGES = 10_000
DEFAULT_MAX_BYTES = 256 * 2**20
DEFAULT_KEEP_S = 7 * 86400.0  # s: a change younger than this is never dropped, reviewed or not
DEFAULT_AGENT_SHARE = 0.5  # the part of the journal one agent's protected changes may fill
RECOVERY_ACTOR = "vaultwatch"  # the actor of a killed rename's roll-back at the next start
_ROW_OVERHEAD = 200  # bytes a change row and its index entries take besides its contents
MAX_OUTSIDE_PATHS = 1000
RECENT_S = 300.0  # s: a change journaled by another process this recently may explain a disk event
RECHECK_S = 1.0  # s: an outside row is checked again this long after (another process's journal row)
FOLLOW_S = 0.25  # s: how often a watching process looks whether another process committed to the journal
INTERRUPTED_EVERY = 4  # looks of the follower between its looks for a dead process's open intent
# an agent's write holds its intent from the gate's yes to its row, a few milliseconds of writing:
# another process's held this long is stopped (or stuck), and its write is settled as a killed one's
STALE_WRITE_S = 30.0
_ZLIB_LEVEL = 1  # fast: a 10 KB note compresses in ~0.05 ms; the delta against the before-bytes does the rest
_WINDOW = 32 * 1024  # zlib's preset dictionary reaches this far back


# One agent's changes, as `--agent NAME` selects them: by the name its writes are journaled under
# (`agent:<clientInfo name>`), so every version of its client is it; or by a full label as shown.
# Never by a prefix of the label, or a LIKE pattern: `acme` would take `acme/writer`'s changes (a
# client's name may hold a slash) and `a_me` `acme`'s, and a revert or a review is not another's.
AGENT_WHERE = "(agent=? OR actor=? OR actor=?)"


def agent_params(agent: str) -> list[str]:
    """The parameters of AGENT_WHERE for `--agent NAME` (`NAME`, `agent:NAME`, a label)."""
    return [agent, "agent:" + agent, agent]


# --- records -------------------------------------------------------------------------------


class JournalFull(VaultError):
    """An agent's write was refused because the journal could not keep it without dropping
    changes the person has not reviewed (or younger than the retention age)."""

    code = "journal_full"


@dataclass(frozen=True, slots=True)
class Within:
    """A "since" given as a duration back from now (30m), resolved on the journal's own time."""

    seconds: float


@dataclass(frozen=True, slots=True)
class At:
    """A point on the journal's own time (`Journal.now()`): "since the session started" that a
    stepped wall clock cannot move."""

    jt: float


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
    before_mode: int | None = None  # the permission bits of the file before (None: none, or not kept)

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
    reviewed_at: float | None = None  # journal time the person reviewed it (None: not yet)
    approved_via: str | None = None  # how the person's approval came (core.edit.hooks.APPROVED_VIA); None: none needed

    @property
    def approval(self) -> str:
        """How this change was approved, in words ("" when it needed no approval)."""
        if not self.approved_via:
            return ""
        return APPROVED_VIA.get(self.approved_via, f"approved ({self.approved_via})")

    @property
    def reviewed(self) -> bool:
        return self.reviewed_at is not None

    @property
    def who(self) -> str:
        """The actor as a person reads it: the agent's name (and session), or the human."""
        if self.kind == "outside":
            return "outside vaultwatch"
        if self.agent:
            return shown_agent(self.agent)
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
            "reviewed": self.reviewed,
            "approved_via": self.approved_via,
        }


@dataclass(frozen=True, slots=True)
class ChangeRecorded(Event):
    """A change entered the journal (published after its transaction committed)."""

    change: Change


@dataclass(frozen=True, slots=True)
class JournalUpdated(Event):
    """Another process committed to the journal (a `vaultwatch changes --mark-reviewed` or a revert
    from the command line while the TUI runs): rows this process already showed may be reviewed,
    reverted or dropped now, so views of the journal read it again. Published after the
    ChangeRecorded of any new rows of the same commits."""


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


def journal_path(root_real: str) -> str:
    """The journal file of the vault at `root_real`."""
    name = os.path.basename(root_real.rstrip("/")) or "vault"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:40]
    digest = hashlib.sha256(os.fsencode(root_real)).hexdigest()[:16]
    return os.path.join(state_dir(), "journal", f"{safe}-{digest}.sqlite3")


SCHEMA_VERSION = 1  # PRAGMA user_version of the journals this version writes; a higher one is a newer vaultwatch's


def _refuse_odd_files(path: str) -> None:
    """JournalUnavailable when the journal's file, or its WAL or shared-memory file, is anything but
    a regular file (a folder, a symbolic link, a device): SQLite would follow a link to wherever it
    points, and a folder or a device is no journal."""
    for name in (path, path + "-wal", path + "-shm"):
        try:
            st = os.lstat(name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise JournalUnavailable(unopenable(path, _said(exc))) from None
        if stat_mod.S_ISREG(st.st_mode):
            continue
        what = (
            "a symbolic link"
            if stat_mod.S_ISLNK(st.st_mode)
            else "a folder"
            if stat_mod.S_ISDIR(st.st_mode)
            else "not a regular file"
        )
        raise JournalUnavailable(unopenable(path, f"{name} is {what}"))


def _identity(path: str) -> tuple[int, int] | None:
    """The (device, inode) at `path` now, not following a link (None: nothing there)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@functools.cache
def _expected_columns() -> dict[str, frozenset[str]]:
    """Every column this version reads or writes, per table (the schema and the columns added since)."""
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(_SCHEMA)
        for name, decl in _ADDED:
            con.execute(f"ALTER TABLE changes ADD COLUMN {name} {decl}")
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: frozenset(r[1] for r in con.execute(f"PRAGMA table_info({t})")) for t in tables if t != "sqlite_sequence"
        }
    finally:
        con.close()


def _unfit_tables(con: sqlite3.Connection) -> str | None:
    """What keeps this version from reading and writing the journal's tables (a newer vaultwatch's,
    or a damaged one): a table missing or not a table, a column it lacks, or a column it has that
    this version's rows would leave empty where it may not be. None: they fit."""
    kinds = dict(con.execute("SELECT name, type FROM sqlite_master"))
    for table, columns in _expected_columns().items():
        if kinds.get(table) != "table":
            return f"its {table!r} is {'missing' if table not in kinds else 'not a table'}"
        info = con.execute(f"PRAGMA table_info({table})").fetchall()
        have = {r[1] for r in info}
        if columns - have:
            return f"its table {table!r} lacks the columns {sorted(columns - have)}"
        unfilled = sorted(r[1] for r in info if r[1] not in columns and r[3] and r[4] is None and not r[5])
        if unfilled:
            return f"its table {table!r} has columns this vaultwatch cannot fill: {unfilled}"
    return None


def has_intents(path: str) -> bool:
    """Whether the journal file at `path` holds an open intent, read without opening it as a
    Journal (no schema, no bus subscription): False when there is no journal there. A start
    that has no other use for the journal looks here first (Vault.finish_interrupted_soon)."""
    if not os.path.isfile(path):
        return False
    try:
        con = sqlite3.connect(f"file:{urllib.parse.quote(path)}?mode=rw", uri=True, timeout=10)
        try:
            return con.execute("SELECT 1 FROM intents LIMIT 1").fetchone() is not None
        finally:
            con.close()
    except sqlite3.Error:
        return True  # the journal's own opening says what is wrong with it


def enabled_by_env() -> bool:
    return bool(settings.env("VAULTWATCH_JOURNAL"))


def open_journal(vault: Any) -> Journal | None:
    """A new journal for `vault` (Vault.journal opens it on first use): None when switched off
    (VAULTWATCH_JOURNAL=0). One meant to be on that cannot be opened raises JournalUnavailable:
    never None, which would read as "switched off" and let agents' changes through unrecorded."""
    if not enabled_by_env():
        return None
    try:
        return Journal.for_vault(vault)
    except JournalUnavailable:
        raise
    except (OSError, sqlite3.Error) as exc:
        raise JournalUnavailable(unopenable(journal_path(vault.root_real), _said(exc))) from None


def unopenable(path: str, why: str, *, newer: bool = False) -> str:
    """What an agent's refused change, `vaultwatch changes` and the TUI say of a journal that is
    meant to be on and cannot be opened: which file, why, and what the person can do."""
    fix = "use the newer vaultwatch that wrote it, or " if newer else ""
    return (
        f"the change journal {path} cannot be opened: {why}. Agents' changes are refused until it can be "
        "(nothing of theirs is written); the person's own edits still go through, unjournaled. To go on, "
        f"{fix}move the file (and its -wal and -shm files beside it) away to start a new journal, or put "
        "back a copy that opens"
    )


def _said(exc: BaseException) -> str:
    """An OSError or SQLite error as a person reads it (the file it names, the system's words)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror} ({exc.filename})" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__


def journal_for(vault: Any) -> Journal | None:
    """The vault's journal, opened on first use (None when switched off, VAULTWATCH_JOURNAL=0, or
    when it cannot be opened: `why_no_journal` tells the two apart)."""
    return vault.journal


def why_no_journal(vault: Any) -> str:
    """Why `vault` has no journal, as a person reads it: the one answer every view gives (the CLI,
    the TUI, the history and triage tools), so a journal that cannot be opened is never reported
    as switched off."""
    broken = vault.journal_problem
    if broken:
        return broken
    return "the change journal is switched off (VAULTWATCH_JOURNAL=0)"


def require_journal(vault: Any) -> Journal:
    """The vault's journal; a VaultError saying why when there is none (see `why_no_journal`)."""
    journal = vault.journal
    if journal is None:
        broken = vault.journal_problem
        raise JournalUnavailable(broken) if broken else VaultError(why_no_journal(vault))
    return journal


def attach(vault: Any, journal: Journal | None) -> None:
    """Use `journal` for `vault` (None: journal nothing)."""
    vault.use_journal(journal)
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
CREATE TABLE IF NOT EXISTS intents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    change_id INTEGER NOT NULL,
    actor TEXT NOT NULL,
    plan TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS intent_files (
    intent_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    path TEXT NOT NULL,
    before BLOB,
    after_etag TEXT,
    after BLOB,
    PRIMARY KEY (intent_id, seq)
);
"""

# columns added after the first release: (name, declaration); an older journal gets them on open
_ADDED = (
    ("boot", "TEXT"),
    ("mono", "REAL"),
    ("jt", "REAL"),
    ("reviewed_at", "REAL"),
    ("reviewed_by", "TEXT"),
    ("approved_via", "TEXT"),
    # the permission bits of each file a change replaced or removed, as JSON {seq: mode}: a column of
    # `changes`, not of `files`, whose rows an older vaultwatch inserts without naming their columns
    ("before_modes", "TEXT"),
)
_ADDED_INDEXES = """
CREATE INDEX IF NOT EXISTS changes_jt ON changes(jt);
CREATE INDEX IF NOT EXISTS changes_unreviewed ON changes(id) WHERE reviewed_at IS NULL;
CREATE INDEX IF NOT EXISTS changes_held ON changes(actor, reviewed_at, jt, size);
"""


class Journal:
    """The journal of one vault (see module doc). Thread-safe."""

    def __init__(
        self,
        path: str,
        *,
        clock: Callable[[], float] | None = None,
        reference: Callable[[], tuple[str, float]] | None = None,
        max_changes: int = DEFAULT_MAX_CHANGES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep_s: float = DEFAULT_KEEP_S,
        agent_share: float = DEFAULT_AGENT_SHARE,
        bus: Any = None,
    ) -> None:
        self.path = path
        self.max_changes = max(1, int(max_changes))
        self.max_bytes = max(1, int(max_bytes))
        self.keep_s = max(0.0, float(keep_s))
        self.agent_share = min(1.0, max(0.01, float(agent_share)))
        # the WAL may hold this much between checkpoints; it is part of the cap on disk
        self.wal_limit = max(64 * 1024, min(4 * 2**20, self.max_bytes // 8))
        self._clock = clock or _wall
        self._ref = reference or (lambda: _system_reference())
        self._lock = threading.RLock()
        self._bus = bus
        self._unsubscribe: Callable[[], None] | None = None
        self.current: Callable[[str], bytes | None] | None = None  # a vault path's bytes now (see _explained)
        self.is_folder: Callable[[str], bool] | None = None  # a vault path is a real folder now (see _explained)
        self.exists: Callable[[str], bool] | None = None  # anything is at a vault path now (see on_disk)
        self.named: Callable[[str], tuple[str, ...]] | None = None  # the index's files of a name (see holder_of)
        self._announced: set[int] = set()  # rows published on the bus above the follower's mark
        self._followed: int | None = None  # the newest row id the follower has looked at (None: not following)
        self._data_version: int | None = None
        self._follow_stop = threading.Event()
        self._follower: threading.Thread | None = None
        # outside rows waiting for their recheck: (timer, its arguments); `recheck_now` runs them at a stop
        self._rechecks: dict[threading.Timer, tuple[Change, list[str], set[str]]] = {}
        self._full_announced = False  # the person was told agents' writes are refused (until marks)
        self._gone_announced = False  # the person was told the file was removed or replaced (see admit)
        self._on_interrupted: Callable[[], bool] | None = None  # see follow
        self._handed_over: set[int] = set()  # dead intents on_interrupted was called for
        private_folder(os.path.dirname(path))  # its parents too: the journal may be the first to make them
        _refuse_odd_files(path)
        private_file(path)
        self._con = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        try:
            self._open_schema()
            # which file this connection writes: one removed or replaced while it is open would take
            # agents' changes where nobody reads them (see `admit`)
            self._identity = _identity(path)
            # and its write-ahead log, where committed rows wait for a checkpoint: one removed while
            # the connection is open takes those rows with it at the next crash (see `_still_there`)
            self._wal_identity = _identity(path + "-wal")
        except BaseException:
            self._con.close()
            raise
        row = self._con.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM changes").fetchone()
        self._count, self._bytes = int(row[0]), int(row[1])

    def _open_schema(self) -> None:
        """Settle the connection's modes and the schema: an older journal gets what it lacks; a newer
        vaultwatch's journal, or one whose tables this version could not fill, is refused
        (JournalUnavailable), never written with rows it would misread."""
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses at most the last commits, never corrupts
        self._con.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self._con.execute(f"PRAGMA journal_size_limit={self.wal_limit}")
        version = int(self._con.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise JournalUnavailable(
                unopenable(
                    self.path,
                    f"it was written by a newer vaultwatch (journal schema {version}; this one knows up to "
                    f"{SCHEMA_VERSION})",
                    newer=True,
                )
            )
        self._con.executescript(_SCHEMA)
        have = {r[1] for r in self._con.execute("PRAGMA table_info(changes)")}
        for name, decl in _ADDED:
            if name not in have:
                try:
                    self._con.execute(f"ALTER TABLE changes ADD COLUMN {name} {decl}")
                except sqlite3.OperationalError:  # another process added it meanwhile
                    pass
        if "after" not in {r[1] for r in self._con.execute("PRAGMA table_info(intent_files)")}:
            try:  # an older journal's intents held no bytes after
                self._con.execute("ALTER TABLE intent_files ADD COLUMN after BLOB")
            except sqlite3.OperationalError:  # another process added it meanwhile
                pass
        if "jt" not in have:  # rows of an older journal: their wall time is all there is
            self._con.execute("UPDATE changes SET jt = at WHERE jt IS NULL")
        self._con.executescript(_ADDED_INDEXES)
        wrong = _unfit_tables(self._con)
        if wrong:
            raise JournalUnavailable(unopenable(self.path, wrong, newer=True))
        if version < SCHEMA_VERSION:
            self._con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @classmethod
    def for_vault(cls, vault: Any, **options: Any) -> Journal:
        """The journal of `vault` in the state folder, on the vault's clock, watching its bus."""
        clock = vault.clock
        journal = cls(
            journal_path(vault.root_real),
            clock=lambda: clock.now().timestamp(),
            reference=lambda: reference_of(clock),
            bus=vault.bus,
            **_env_bounds(),
            **options,
        )
        journal.current = _reader(vault)
        journal.is_folder = _folder_probe(vault.root_real)
        journal.exists = _exists_probe(vault.root_real)
        journal.named = _name_lookup(vault)
        journal.watch(vault.bus)
        vaultroots.record(os.path.dirname(journal.path), vault.root_real)  # for nestedvault's look below a folder
        return journal

    def watch(self, bus: Any) -> None:
        """Publish ChangeRecorded on `bus` and record its outside edits as "outside" rows."""
        self._bus = bus
        if self._unsubscribe is None and bus is not None:
            self._unsubscribe = bus.subscribe(self._on_event)

    def follow(self, interval: float = FOLLOW_S, *, on_interrupted: Callable[[], bool] | None = None) -> None:
        """Publish ChangeRecorded for every row another process commits from now on (idempotent;
        `stop_following` or `close` ends it). A watching process needs this: another process's
        revert (`vaultwatch revert` while the TUI runs) writes its files under an open intent,
        and its disk events may arrive before or after its row commits, or the process may be
        killed and its revert finished later without writing anything; only the journal's own
        commits tell when its row exists.

        `on_interrupted()` is called when another process died with an agent's operation open (its
        server killed between a write and its row, or midway through a rename): this process
        finishes it now, while the person watches, not at the next start. It returns whether it
        started. (The person's own killed revert, rename or approval waits for them: the same
        command again, or the next start.)"""
        if on_interrupted is not None:
            self._on_interrupted = on_interrupted
        with self._lock:
            if self._follower is not None and self._follower.is_alive():
                return
            self._follow_stop = threading.Event()
            self._followed = int(self._con.execute("SELECT COALESCE(MAX(id), 0) FROM changes").fetchone()[0])
            self._data_version = int(self._con.execute("PRAGMA data_version").fetchone()[0])
            stop = self._follow_stop
            self._follower = threading.Thread(
                target=self._follow_loop, args=(stop, interval), name="vaultwatch-journal-follow", daemon=True
            )
            self._follower.start()

    def stop_following(self) -> None:
        self._follow_stop.set()
        follower, self._follower = self._follower, None
        if follower is not None and follower is not threading.current_thread():
            follower.join(5)

    def _follow_loop(self, stop: threading.Event, interval: float) -> None:
        looks = 0
        while not stop.wait(interval):
            try:
                self.announce_others()
                looks += 1
                if looks % INTERRUPTED_EVERY == 0:
                    self._hand_over_interrupted()
            except (sqlite3.Error, ValueError):  # closed meanwhile
                return

    def _hand_over_interrupted(self) -> None:
        """Call `on_interrupted` (see `follow`) when an agent's operation's process died since the
        last look; each dead intent once, unless the call could not start finishing it (already under way)."""
        callback = self._on_interrupted
        if callback is None:
            return
        with self._lock:
            if self._con.execute("SELECT 1 FROM intents LIMIT 1").fetchone() is None:
                return  # the common case: one look at an empty table
        dead = {
            i[0]
            for i in self.open_intents(interrupted=True)
            if i[3].get("operation") in (WRITE_INTENT, "rename") and not _is_human(i[2])
        }
        dead -= self._handed_over
        if dead and callback():
            self._handed_over |= dead

    def revision(self) -> tuple[int, int] | None:
        """A value that moves whenever the journal may have changed: this process's commits (the
        connection's count of changed rows) and, seen by the follower, other processes' commits.
        None when nothing follows other processes' commits (then only reading again tells). Read
        without the lock: a view that asks on every keystroke must not wait behind an agent's write."""
        version = self._data_version
        if self._followed is None or version is None:
            return None
        try:
            return self._con.total_changes, version
        except sqlite3.ProgrammingError:  # closed: nothing to compare, read (and fail) as before
            return None

    def announce_others(self) -> list[Change]:
        """Publish ChangeRecorded for each row other processes committed since the last look that
        this journal has not published yet, then one JournalUpdated: their commits may also have
        marked, reverted or dropped older rows (the follower calls it; cheap when nothing changed:
        SQLite's data version moves only on other connections' commits). Returns the new rows."""
        with self._lock:
            if self._followed is None:
                return []
            version = int(self._con.execute("PRAGMA data_version").fetchone()[0])
            if version == self._data_version:
                return []
            self._data_version = version
            rows = self._con.execute(
                f"SELECT {_COLS} FROM changes WHERE id > ? ORDER BY id", (self._followed,)
            ).fetchall()
            fresh = [self._change(r) for r in rows if r[0] not in self._announced]
            if rows:
                self._followed = int(rows[-1][0])
                # everything up to the mark is published now: the set keeps only rows above it
                self._announced = {i for i in self._announced if i > self._followed}
        if self._bus is not None:
            for change in fresh:
                self._bus.publish(ChangeRecorded(change))
            self._bus.publish(JournalUpdated())
        return fresh

    def close(self) -> None:
        self.stop_following()
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
            # a folder still there that "changed" changed only in its own times (a file came or went
            # in it, or the load's check saw its mtime move under a write): each file is its own event
            is_folder = self.is_folder
            changed = [p for p in event.changed if not (is_folder is not None and is_folder(p))]
            paths = [p for p in (*event.added, *changed, *event.removed) if p]
            if not paths:
                return
            gone = set(event.removed)
            arrived = set(event.added)
            recent = self._recent_paths() if self.current is not None else set()
            intended = self._intended_paths() if self.current is not None else {}
            unexplained = [
                p
                for p in paths
                if not self._intended(p, p in gone, intended, added=p in arrived)
                and not (p in recent and self._explained(p, p in gone, p in arrived))
                and not self._moved_along(p, p in gone, p in arrived, recent)
            ]
            if unexplained:
                shown = set(unexplained)  # a move of which one end is explained is no outside move
                pairs = [(a, b) for a, b in event.moved if a in shown and b in shown]
                outside = self.record_outside(unexplained, removed=gone, moved=pairs)
                if self.current is not None:  # a change journaled by another process may land just after its write
                    args = (outside, unexplained, gone)
                    timer = threading.Timer(RECHECK_S, lambda: self._recheck_once(timer))
                    timer.daemon = True
                    with self._lock:
                        self._rechecks[timer] = args
                    timer.start()

    def _recheck_once(self, timer: threading.Timer) -> None:
        with self._lock:
            args = self._rechecks.pop(timer, None)
        if args is not None:
            self._recheck(*args)

    def recheck_now(self) -> None:
        """Recheck now the outside rows still waiting for it (a process about to stop: its timers would
        die with it, and an agent's write whose own file event came before its row would stay in the
        journal as an outside edit too)."""
        with self._lock:
            waiting, self._rechecks = self._rechecks, {}
        for timer, args in waiting.items():
            timer.cancel()
            self._recheck(*args)

    def _recent_paths(self) -> set[str]:
        """Paths of the changes journaled in the last RECENT_S seconds (only those can explain a
        disk event: a 10,000-file checkout is not looked up path by path)."""
        with self._lock:
            return {
                r[0]
                for r in self._con.execute(
                    "SELECT DISTINCT p.path FROM paths p JOIN changes c ON c.id = p.change_id "
                    "WHERE c.jt >= ? AND c.kind != 'outside'",
                    (self._now_locked() - RECENT_S,),
                )
            }

    def _explained(self, rel: str, removed: bool, added: bool = False) -> bool:
        """`rel` holds what the newest journaled change touching it left there: the disk event is
        that change (made by another vaultwatch process, e.g. `vaultwatch revert` while the TUI
        runs), not an outside edit. Publishes ChangeRecorded for such a change, once."""
        if self.current is None:
            return False
        if self._intended(rel, removed):  # a revert in progress (or killed midway) put it there
            return True
        with self._lock:
            row = self._con.execute(
                "SELECT c.id, c.kind, c.path, c.src, c.etag, c.operation, c.revert_of FROM paths p JOIN changes c "
                "ON c.id = p.change_id WHERE p.path=? ORDER BY c.id DESC LIMIT 1",
                (rel,),
            ).fetchone()
            if row is None or row[1] == "outside":
                return False
            cid, _, path, src, change_etag, operation, revert_of = row
            written = self._con.execute(
                "SELECT after_etag FROM files WHERE change_id=? AND path=? ORDER BY seq DESC LIMIT 1", (cid, rel)
            ).fetchone()
            moved_back = None  # a revert of a rename moved the note from (its path) back to (its src)
            undeleted = None  # a revert of a delete moved the note (or folder) back out of the trash
            if operation == "revert" and revert_of is not None:
                reverted = self._con.execute(
                    "SELECT operation, path, src, previous_etag FROM changes WHERE id=?", (revert_of,)
                ).fetchone()
                if reverted is not None and reverted[0] == "rename":
                    moved_back = (reverted[1], reverted[2])
                elif reverted is not None and reverted[0] == "delete":
                    undeleted = (reverted[1], reverted[3])
        try:
            data = None if removed else self.current(rel)
        except Exception:  # unreadable now: not explained
            return False
        if data is None:
            ok = (written is not None and written[0] is None) or src == rel or (operation == "delete" and path == rel)
            # a folder a change made on the way to what it wrote or moved (a folder has no bytes): the
            # change names it, so the folder's arrival is that change, even when its disk event came first
            ok = ok or (not removed and operation != "delete" and self.is_folder is not None and self.is_folder(rel))
            ok = ok or (moved_back is not None and moved_back[0] == rel)
        else:
            now = etag(data)
            ok = (written is not None and written[0] == now) or (path == rel and change_etag == now)
            ok = ok or (moved_back is not None and moved_back[1] == rel)
            # the trashed note back where it was, with the bytes it was trashed with (a restored folder's
            # files arrive with it: the revert's row names them, and an edit in place is no arrival)
            if undeleted is not None and not ok:
                ok = (undeleted[0] == rel and undeleted[1] in (None, now)) or (
                    added and rel.startswith(undeleted[0] + "/")
                )
        if ok and self._bus is not None and self._claim(cid):
            try:
                self._bus.publish(ChangeRecorded(self.get(cid)))
            except NotFoundError:
                pass
        return ok

    def _claim(self, cid: int) -> bool:
        """Whether row `cid` is still to be published (and from now on counts as published)."""
        with self._lock:
            if cid in self._announced or (self._followed is not None and cid <= self._followed):
                return False
            self._announced.add(cid)
            return True

    def _moved_along(self, rel: str, removed: bool, added: bool, recent: set[str]) -> bool:
        """`rel` went or came with its folder, which a recently journaled rename (or a revert of one)
        moved: another process's folder move (its change names every path it moved, both ends)."""
        folder = rel
        while folder:
            if folder in recent:
                if not (removed or added):  # changed in place, unless the move took it since
                    try:
                        removed = self.current is not None and self.current(rel) is None
                    except Exception:
                        return False
                    if not removed:
                        return False
                with self._lock:
                    row = self._con.execute(
                        "SELECT c.id, c.operation, c.path, c.src, c.revert_of FROM paths p JOIN changes c "
                        "ON c.id = p.change_id WHERE p.path=? AND c.kind != 'outside' ORDER BY c.id DESC LIMIT 1",
                        (folder,),
                    ).fetchone()
                    if row is not None and row[1] == "revert" and row[4] is not None:
                        back = self._con.execute(
                            "SELECT id, src, path FROM changes WHERE id=? AND operation='rename'", (row[4],)
                        ).fetchone()
                        row = (back[0], "rename", back[1], back[2], None) if back is not None else None
                    # only a file the rename itself moved (its change names both ends of each)
                    if row is not None and row[1] == "rename":
                        rid, _, to, frm, _ = row
                        if ((added and to == folder) or (removed and frm == folder)) and self._con.execute(
                            "SELECT 1 FROM paths WHERE change_id=? AND path=? LIMIT 1", (rid, rel)
                        ).fetchone():
                            return True
            folder = folder.rpartition("/")[0]
        return False

    def _recheck(self, outside: Change, paths: list[str], gone: set[str]) -> None:
        """Drop an "outside" row whose every path a change journaled just after it explains."""
        try:
            recent = self._recent_paths()
            # (what the first look took for arrived is not known here: a file there now may have)
            if all(
                self._explained(p, p in gone, p not in gone) or self._moved_along(p, p in gone, p not in gone, recent)
                for p in paths
            ):
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

    # --- intents (a revert's plan, written before it starts) ---

    def begin_intent(
        self,
        change_id: int,
        actor: str,
        plan: dict[str, Any],
        files: Iterable[tuple[str, bytes | None, bytes | None]] = (),
    ) -> int:
        """Record that an operation is about to write `plan` (a revert of `change_id`, see
        core.review.revert; 0: a rename, an approval, an agent's write), with the `files` (path,
        bytes before, bytes after) it is about to commit, in one transaction."""
        plan = {**plan, "pid": os.getpid()}
        with self._lock:
            con = self._con
            con.execute("BEGIN IMMEDIATE")
            try:
                if plan.get("operation") == WRITE_INTENT:
                    # the newest row when the agent's write is about to land: the rows after it are
                    # changes made since, which tell a resume whether the write landed before them
                    # (see first_replace_after) and which trash entries are theirs (trash_entries_after)
                    plan["newest"] = int(con.execute("SELECT COALESCE(MAX(id), 0) FROM changes").fetchone()[0])
                cur = con.execute(
                    "INSERT INTO intents (change_id, actor, plan, at) VALUES (?,?,?,?)",
                    (int(change_id), actor, json.dumps(plan), float(self._clock())),
                )
                assert cur.lastrowid is not None
                intent = int(cur.lastrowid)
                # the bytes after too: a write killed before its row and changed outside since is
                # journaled as what it wrote, so that its revert finds the later edit and asks first
                con.executemany(
                    "INSERT INTO intent_files (intent_id, seq, path, before, after_etag, after) VALUES (?,?,?,?,?,?)",
                    [
                        (
                            intent,
                            i,
                            rel,
                            _pack(before),
                            etag(after) if after is not None else None,
                            _pack(after, before),
                        )
                        for i, (rel, before, after) in enumerate(files)
                    ],
                )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            return intent

    def open_intents(self, *, interrupted: bool = False) -> list[tuple[int, int, str, dict[str, Any]]]:
        """(intent id, change id, actor, plan) of every operation that started and was not recorded
        (a revert of change id, or 0: a rename, an approval, an agent's write); `interrupted`: only
        those whose process is gone (killed), and agents' writes another process has held open for
        STALE_WRITE_S (a stopped process: SIGSTOP would otherwise keep its landed write unjournaled)."""
        with self._lock:
            rows = self._con.execute("SELECT id, change_id, actor, plan, at FROM intents ORDER BY id").fetchall()
        now = float(self._clock()) if interrupted else 0.0
        out = []
        for iid, cid, actor, plan, at in rows:
            try:
                parsed = json.loads(plan)
            except ValueError:
                continue
            pid = parsed.get("pid")
            if interrupted and _alive(pid):
                stale = (
                    parsed.get("operation") == WRITE_INTENT and pid != os.getpid() and now - float(at) > STALE_WRITE_S
                )
                if not stale:
                    continue
            out.append((int(iid), int(cid), str(actor), parsed))
        return out

    def _intent_open(self, intent_id: int) -> bool:
        return self._con.execute("SELECT 1 FROM intents WHERE id=?", (int(intent_id),)).fetchone() is not None

    def intent_info(self, intent_id: int) -> tuple[float, int]:
        """(when it was opened, how many files it has committed so far) of an open intent."""
        with self._lock:
            row = self._con.execute(
                "SELECT at, (SELECT COUNT(*) FROM intent_files WHERE intent_id=?) FROM intents WHERE id=?",
                (int(intent_id), int(intent_id)),
            ).fetchone()
        return (float(row[0]), int(row[1])) if row else (0.0, 0)

    def drop_intent(self, intent_id: int) -> None:
        with self._lock:
            self._con.execute("DELETE FROM intent_files WHERE intent_id=?", (int(intent_id),))
            self._con.execute("DELETE FROM intents WHERE id=?", (int(intent_id),))

    def intent_file(self, intent_id: int, rel: str, before: bytes | None, after: bytes | None) -> None:
        """An intent's operation is about to commit `after` over `before` at `rel` (a rename's link
        rewrite: its progress, so that a killed rename can be rolled back and its writes are not
        taken for outside edits)."""
        with self._lock:
            self._con.execute(
                "INSERT INTO intent_files (intent_id, seq, path, before, after_etag) "
                "VALUES (?, (SELECT COUNT(*) FROM intent_files WHERE intent_id=?), ?,?,?)",
                (int(intent_id), int(intent_id), rel, _pack(before), etag(after) if after is not None else None),
            )

    def writes_under_way(self) -> set[str]:
        """Every path an agent's write whose intent is still open touches, its process alive or not:
        such a write may have landed with its row not written yet (a server stopped or killed in
        between), so the note counts as an agent's change nobody has reviewed until it is settled."""
        return {
            path
            for _, _, _, plan in self.open_intents()
            if plan.get("operation") == WRITE_INTENT
            for path in plan.get("paths") or ()
            if isinstance(path, str)
        }

    def intent_temps(self) -> set[str]:
        """The temporary file (vault path) of every agent's write whose intent is still open, its
        process alive or not: until the write is settled, what that file holds tells whether it
        landed (core.review.unrecorded), so a sweep of a killed run's files leaves it to the settling."""
        return {
            plan["temp"]
            for _, _, _, plan in self.open_intents()
            if plan.get("operation") == WRITE_INTENT and isinstance(plan.get("temp"), str)
        }

    def intent_files(self, intent_id: int) -> list[tuple[str, bytes | None, str | None]]:
        """(path, before bytes, after etag) of each file an intent named, in order."""
        with self._lock:
            rows = self._con.execute(
                "SELECT path, before, after_etag FROM intent_files WHERE intent_id=? ORDER BY seq", (int(intent_id),)
            ).fetchall()
        return [(p, _unpack(b), a) for p, b, a in rows]

    def moved_back_since(self, rel: str, newest: int) -> str | None:
        """Where `rel` is now if a revert of a folder's or note's rename journaled after row `newest`
        moved it back (the rollback of an agent's rename a kill cut off takes along what was written
        into the folder meanwhile), else None."""
        with self._lock:
            moves = self._con.execute(
                "SELECT r.path, r.src FROM changes v JOIN changes r ON r.id = v.revert_of "
                "WHERE v.id > ? AND v.operation = 'revert' AND r.operation = 'rename' AND r.src IS NOT NULL "
                "ORDER BY v.id",
                (int(newest),),
            ).fetchall()
        now = rel
        for dst, src in moves:
            if now == dst or now.startswith(dst + "/"):
                now = src + now[len(dst) :]
        return None if now == rel else now

    def later_intent_found(self, intent_id: int, rel: str) -> tuple[int, bytes | None] | None:
        """(intent id, bytes it found there) of the first write intent after `intent_id` still open
        that names `rel`: a later write, killed too, tells by what it found whether this one landed."""
        with self._lock:
            row = self._con.execute(
                "SELECT f.intent_id, f.before FROM intent_files f JOIN intents i ON i.id = f.intent_id "
                "WHERE f.intent_id > ? AND f.path = ? AND i.change_id = 0 ORDER BY f.intent_id LIMIT 1",
                (int(intent_id), rel),
            ).fetchone()
        return None if row is None else (int(row[0]), _unpack(row[1]))

    def intended_bytes(self, intent_id: int) -> list[bytes | None]:
        """The bytes each file an intent named was to hold, in order (None: removed, or an intent
        recorded before the journal kept them)."""
        with self._lock:
            rows = self._con.execute(
                "SELECT before, after FROM intent_files WHERE intent_id=? ORDER BY seq", (int(intent_id),)
            ).fetchall()
        return [_unpack(a, _unpack(b)) for b, a in rows]

    def first_replace_after(
        self, rel: str, newest: int, etags: Iterable[str | None]
    ) -> tuple[int, str | None, bytes | None] | None:
        """(change id, etag, bytes) of what the first change journaled after row `newest` found at
        `rel` and replaced, among those that found one of `etags` there (None: no file); None when
        no such change. An agent's write killed before its row is settled by this: the change
        after it replaced either what the write left (it landed) or what it found (it did not)."""
        wanted = set(etags)
        with self._lock:
            rows = self._con.execute(
                "SELECT change_id, seq, before_etag FROM files WHERE path=? AND change_id > ? ORDER BY change_id, seq",
                (rel, int(newest)),
            ).fetchall()
        for cid, seq, before_etag in rows:
            if before_etag in wanted:
                return int(cid), before_etag, self.contents(int(cid), int(seq))[0]
        return None

    def trash_entries_after(self, newest: int) -> set[str]:
        """The trash entries (`moved_to`) the changes journaled after row `newest` moved notes to."""
        with self._lock:
            return {
                r[0]
                for r in self._con.execute(
                    "SELECT moved_to FROM changes WHERE id > ? AND moved_to IS NOT NULL", (int(newest),)
                )
            }

    def _intended_paths(self) -> dict[str, list[dict[str, Any]]]:
        """Per path, what open intents will leave there: {"to": etag or None} (a file put back or
        removed), {"moved": "from"|"to"} (the move back of a rename), {"made": True} (a folder an
        agent's write makes on its way to its note)."""
        out: dict[str, list[dict[str, Any]]] = {}
        with self._lock:
            for rel, after in self._con.execute(
                "SELECT path, after_etag FROM intent_files WHERE intent_id IN (SELECT id FROM intents)"
            ):
                out.setdefault(rel, []).append({"to": after})
        for _, _, _, plan in self.open_intents():
            for f in plan.get("files", ()):
                out.setdefault(f["path"], []).append({"to": f.get("to")})
            for folder in plan.get("new_folders", ()):  # an agent's write makes them on its way
                out.setdefault(folder, []).append({"made": True})
            for move in [plan.get("move"), *plan.get("moves", ())]:  # a revert's, or a batch's
                if move:
                    out.setdefault(move[0], []).append({"moved": "from"})
                    out.setdefault(move[1], []).append({"moved": "to"})
        return out

    def _intended(
        self,
        rel: str,
        removed: bool,
        intended: dict[str, list[dict[str, Any]]] | None = None,
        *,
        added: bool = False,
    ) -> bool:
        """`rel` holds what an open revert intent puts there: its own write, not an outside edit.
        A folder's move takes every file under it along: a file gone from under the folder's old
        path, or newly arrived under its new one (`added`), is the move's too."""
        intended = intended if intended is not None else self._intended_paths()
        if not intended:  # no revert or rename in progress: the common case, one look
            return False
        wants = intended.get(rel)
        if not wants:
            if self.current is None:
                return False
            if not (removed or added):  # changed in place, unless its folder's move took it since
                try:
                    removed = self.current(rel) is None
                except Exception:
                    return False
            return self._under_move(rel, removed, added, intended)
        if self.current is None:
            return False
        try:
            data = None if removed else self.current(rel)
        except Exception:
            return False
        now = None if data is None else etag(data)
        for want in wants:
            if "to" in want and want["to"] == now:
                return True
            # made, or removed again by the finish of a write that never landed (core.review.unrecorded)
            if want.get("made") and data is None and (removed or (self.is_folder is not None and self.is_folder(rel))):
                return True
            if want.get("moved") == "from" and data is None:
                return True
            if want.get("moved") == "to":
                return True  # the moved note (or folder) arrived where the revert moves it
        # put back, then taken along by its folder's move before this event was handled
        return self._under_move(rel, data is None, added, intended)

    @staticmethod
    def _under_move(rel: str, removed: bool, added: bool, intended: dict[str, list[dict[str, Any]]]) -> bool:
        if not (removed or added):
            return False  # a file changed in place under a moved folder is not the move's doing
        if added:  # a folder the move made for its destination (or a killed one's, found at the next start)
            inside = rel + "/"
            if any(p.startswith(inside) and any("moved" in w for w in wants) for p, wants in intended.items()):
                return True
        folder = rel.rpartition("/")[0]
        while folder:
            for want in intended.get(folder, ()):
                if want.get("moved") == ("from" if removed else "to"):
                    return True
            folder = folder.rpartition("/")[0]
        return False

    def record_outside(
        self, paths: list[str], *, removed: Iterable[str] = (), moved: Iterable[tuple[str, str]] = ()
    ) -> Change:
        """An outside edit of `paths` (no bytes: vaultwatch cannot know what was there). `moved`: the
        (old, new) pairs among them that the watcher saw keep their identity; the row keeps them (its
        arguments' "moved", a folder's pair standing for what moved along under it) so that the
        journal can tell where a note went (core.review.moves)."""
        gone = set(removed)
        shown = paths[:MAX_OUTSIDE_PATHS]
        first = shown[0]
        n = len(paths)
        pairs = top_pairs(moved)
        summary = (
            f"{'removed' if first in gone else 'changed'} outside vaultwatch"
            if n == 1
            else f"{n} files changed outside vaultwatch"
        )
        if pairs:
            move = describe(Move(0, "", tuple(pairs)))
            ends = [end for pair in pairs for end in pair]
            rest = [p for p in paths if not any(p == e or p.startswith(e + "/") for e in ends)]
            # a moved folder's files are listed at their old and their new place: each one moved
            # once, so it is counted once, at its new place, and folders are not files
            dests = [new for _, new in pairs]
            parents = _parents(paths)
            files = [p for p in paths if p not in parents and any(p == d or p.startswith(d + "/") for d in dests)]
            if any(d in parents or (self.is_folder is not None and self.is_folder(d)) for d in dests):
                move = f"{move} ({len(files)} file{'s' if len(files) != 1 else ''})"
            summary = (
                f"{move} outside vaultwatch"
                if not rest
                else f"{rest[0]} {'removed' if rest[0] in gone else 'changed'} outside vaultwatch; {move}"
                if len(rest) == 1
                else f"{len(rest)} files changed outside vaultwatch; {move}"
            )
            first = pairs[0][1]
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
                arguments={"moved": [list(p) for p in pairs]} if pairs else {},
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
        tool = caller.tool if caller is not None and not human else (scope.label or scope.operation)
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
        replaced_note = ""
        previous_etag = result.previous_etag
        if len(files) == 1 and files[0].role == "target" and result.operation not in ("delete", "rename"):
            # what the switch really replaced (core.edit.atomic) differs from what the write last
            # looked at: another process's change or an editor's save reached the note in between
            # (a stopped server can stretch that gap); the row holds it, so its revert gives it back
            found = etag(files[0].before) if files[0].before is not None else None
            if found != previous_etag:
                previous_etag = found
                replaced_note += (
                    " (the note changed between this write's last look and its switch: the journal holds what "
                    "it replaced)"
                )
        if result.operation == "delete" and scope.preread is not None and scope.preread[0] == result.path:
            if etag(scope.preread[1]) == result.previous_etag:
                files = [FileWrite(result.path, scope.preread[1], None, "target", scope.preread_mode), *files]
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
            operation=scope.label or result.operation,
            path=path,
            src=src,
            moved_to=result.moved_to,
            path_kind=path_kind,
            summary=result.diff_summary + replaced_note,
            arguments=_clip_args(arguments),
            previous_etag=previous_etag,
            etag=result.etag,
            revert_of=scope.revert_of,
        )
        # every path the change's effect set names (core.edit.effects): a folder's rename or delete is
        # found in the history of each file it moved, whoever made it
        touched = [p for es in scope.effects for e in es.effects if e.change != LINKS for p in (e.path, e.via) if p]
        row["approved_via"] = scope.approved_via
        pending = scope.pending
        if scope.approved_via in (APPROVED_IN_TUI, APPROVED_BY_COMMAND) or (
            pending is not None and getattr(pending, "approved", None) is True
        ):
            # the person saw this very change (the TUI's dialog, `vaultwatch pending`) and let it through;
            # an answer through the agent's own client reviews nothing (it may be the agent's)
            row["reviewed_by"] = "approval"
        change = self._insert(
            row, files, [*result.changed_paths, *([src] if src else []), *touched, path], intent=scope.intent
        )
        if caller is not None:
            caller.change_ids.append(change.id)
        return change

    def record_interrupted_rename(
        self, intent_id: int, actor: str, src: str, dst: str, *, moved: Iterable[str] = ()
    ) -> Change:
        """A rename killed midway (its intent still open), as the change it made: the move and the
        link rewrites that landed, so that it can be reverted (core.review.resume.resume_interrupted)."""
        files = [FileWrite(p, before, None, "links") for p, before, _ in self.intent_files(intent_id)]
        stored = []
        for f, (_, _, after_etag) in zip(files, self.intent_files(intent_id), strict=True):
            data = self.current(f.path) if self.current is not None else None
            if data is not None and etag(data) == after_etag:  # what the rename wrote is still there
                stored.append(FileWrite(f.path, f.before, data, "links"))
        human = _is_human(actor)
        row = dict(
            kind="change",
            actor=actor,
            agent=None if human else actor.removeprefix("agent:"),
            tool="rename",
            operation="rename",
            path=dst,
            src=src,
            moved_to=dst,
            summary=f"interrupted rename {src} -> {dst}: rewrote links in {len(stored)} notes before it stopped",
            arguments={"src": src, "dst": dst},
        )
        return self._insert(row, stored, [src, dst, *moved, *(f.path for f in stored)], intent=intent_id)

    def record_interrupted_write(
        self,
        intent_id: int,
        actor: str,
        plan: dict[str, Any],
        files: list[FileWrite],
        summary: str,
        *,
        moved_to: str | None = None,
        folder: bool = False,
    ) -> Change:
        """An agent's write, edit or delete killed after it landed and before its row (its intent
        still open, core.review.unrecorded), as the change it made (`folder`: of a folder); closes
        the intent."""
        human = _is_human(actor)
        tool = str(plan.get("tool") or "write")
        named = str(plan.get("path") or (files[0].path if files else ""))
        target = files[0] if files else None
        row = dict(
            kind="change",
            actor=actor,
            agent=plan.get("agent") or (None if human else actor.removeprefix("agent:")),
            session=plan.get("session"),
            tool=str(plan.get("caller_tool") or tool),
            operation=tool,
            path=named,
            moved_to=moved_to,
            path_kind="folder" if folder else ("note" if named.endswith(".md") else "attachment"),
            summary=summary,
            arguments=_clip_args(plan.get("arguments") or {}),
            previous_etag=etag(target.before) if target is not None and target.before is not None else None,
            etag=etag(target.after) if target is not None and target.after is not None else None,
            approved_via=plan.get("approved_via"),
        )
        paths = [named, *plan.get("paths", ()), *(f.path for f in files)]
        return self._insert(row, files, paths, intent=intent_id)

    def record_revert(
        self,
        scope: Scope,
        of: Change,
        summary: str,
        path: str,
        *,
        intent: int | None = None,
        also: Iterable[str] = (),
    ) -> Change:
        """Journal a revert of `of` (its files come from the scope the revert's writes ran in; `also`:
        more paths it touched without writing them, such as the files of a folder it moved back)."""
        caller = current_caller()
        human = scope.actor == "human" or scope.actor.startswith("human:")
        row = dict(
            kind="revert",
            actor=scope.actor,
            agent=None if human else (caller.agent if caller else scope.actor.removeprefix("agent:")),
            session=caller.session if caller and not human else None,
            # a redo is journaled as a revert of a revert (core.review.redo), listed as what it is
            tool="redo" if scope.operation == "redo" else "revert",
            operation="revert",
            path=path,
            summary=summary,
            # a batch revert's (or a redo's) id: core.review.batch finds its rows by it
            arguments={"change_id": of.id, **{k: scope.arguments[k] for k in ("batch",) if k in scope.arguments}},
            revert_of=of.id,
        )
        paths = [f.path for f in scope.files] + [path] + list(of.paths) + list(also)
        change = self._insert(row, list(scope.files), paths, reverts=of.id, intent=intent)
        if caller is not None:
            caller.change_ids.append(change.id)
        return change

    def _insert(
        self,
        row: dict[str, Any],
        files: list[FileWrite],
        paths: Iterable[str],
        *,
        reverts: int | None = None,
        intent: int | None = None,
    ) -> Change:
        at = float(self._clock())
        packed = []
        size = 0
        modes = {str(i): f.mode & 0o777 for i, f in enumerate(files) if f.mode is not None and f.before is not None}
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
        size += len(args_json) + _ROW_OVERHEAD
        unique_paths = list(dict.fromkeys(p for p in paths if p))
        reviewed_by = row.get("reviewed_by")
        if reviewed_by is None and (row["kind"] == "outside" or _is_human(row["actor"])):
            reviewed_by = row["actor"]  # the person's own change, or an edit the journal holds no bytes of
        with self._lock:
            con = self._con
            con.execute("BEGIN IMMEDIATE")
            try:
                if intent is not None and row["kind"] == "change" and not self._intent_open(intent):
                    # its process was taken for stopped and another journaled its change meanwhile
                    # (core.review.unrecorded): that row stands, none is added for the same write
                    found = con.execute(
                        "SELECT id FROM changes WHERE kind='change' AND path=? AND session IS ? AND etag IS ? "
                        "ORDER BY id DESC LIMIT 1",
                        (row["path"], row.get("session"), row.get("etag")),
                    ).fetchone()
                    if found is not None:
                        con.execute("COMMIT")
                        return self.get(int(found[0]))
                boot, mono = self._ref()
                jt = self._journal_time(boot, mono, at)
                cur = con.execute(
                    "INSERT INTO changes (at, kind, actor, agent, session, tool, operation, path, src, moved_to,"
                    " path_kind, summary, arguments, previous_etag, etag, revert_of, size, boot, mono, jt,"
                    " reviewed_at, reviewed_by, approved_via, before_modes)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
                        boot,
                        mono,
                        jt,
                        jt if reviewed_by else None,
                        reviewed_by,
                        row.get("approved_via"),
                        json.dumps(modes) if modes else None,
                    ),
                )
                assert cur.lastrowid is not None  # an INSERT just ran
                cid = cur.lastrowid
                if packed:
                    con.executemany("INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?,?)", [(cid, *p) for p in packed])
                con.executemany("INSERT INTO paths VALUES (?,?)", [(cid, p) for p in unique_paths])
                if reverts is not None:
                    con.execute("UPDATE changes SET reverted_by=? WHERE id=?", (cid, reverts))
                    if reviewed_by:  # the person reverted it: they have seen it
                        con.execute(
                            "UPDATE changes SET reviewed_at=?, reviewed_by=? WHERE id=? AND reviewed_at IS NULL",
                            (jt, reviewed_by, reverts),
                        )
                if self._followed is not None:  # published below, by this process: not the follower's
                    self._announced.add(cid)
                if intent is not None:  # the change is recorded: its intent is done, in the same transaction
                    con.execute("DELETE FROM intent_files WHERE intent_id=?", (intent,))
                    con.execute("DELETE FROM intents WHERE id=?", (intent,))
                self._count += 1
                self._bytes += size
                self._prune_locked(0, jt)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                self._recount_locked()
                raise
            self._trim_wal_locked()
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
            tuple(FileChange(p[0], p[1], p[5], p[6], p[7], p[8], p[2], modes.get(str(p[0]))) for p in packed),
            row.get("revert_of"),
            None,
            jt if reviewed_by else None,
            row.get("approved_via"),
        )
        if self._bus is not None:
            self._bus.publish(ChangeRecorded(change))
        return change

    def _recount_locked(self) -> None:
        row = self._con.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM changes").fetchone()
        self._count, self._bytes = int(row[0]), int(row[1])

    def _trim_wal_locked(self) -> None:
        """Fold the WAL back into the database once it outgrows its share of the cap (a plain
        auto-checkpoint leaves the file at its largest size)."""
        try:
            if os.path.getsize(self.path + "-wal") > self.wal_limit:
                self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except (OSError, sqlite3.Error):  # no WAL yet, or a reader holds it: the next commit tries again
            pass

    # --- time ---

    def _journal_time(self, boot: str, mono: float, wall: float) -> float:
        """The journal time of a change recorded now (see module doc); call under the lock."""
        last = self._con.execute("SELECT boot, mono, jt FROM changes ORDER BY id DESC LIMIT 1").fetchone()
        if last is None or last[2] is None:
            return wall
        last_boot, last_mono, last_jt = last
        if last_boot == boot and last_mono is not None:
            return float(last_jt) + max(0.0, mono - float(last_mono))
        return max(float(last_jt), wall)  # another boot: the wall clock is all there is, but never back

    def _now_locked(self) -> float:
        boot, mono = self._ref()
        return self._journal_time(boot, mono, float(self._clock()))

    def now(self) -> float:
        """The journal's time now (see module doc): what "since 30m" counts back from."""
        with self._lock:
            return self._now_locked()

    # --- bounds ---

    def _budget(self) -> int:
        """Content bytes the journal may hold: its cap less the WAL's room and SQLite's page overhead."""
        return max(1, self.max_bytes - self.wal_limit - self.max_bytes // 32)

    def _prunable(self, now: float) -> Iterator[tuple[int, int]]:
        """(id, size) of the changes retention may drop, oldest first: reviewed and older than keep_s."""
        yield from self._con.execute(
            "SELECT id, size FROM changes WHERE reviewed_at IS NOT NULL AND jt <= ? "
            "AND id NOT IN (SELECT change_id FROM intents) ORDER BY id",
            (now - self.keep_s,),
        )

    def _prune_locked(self, need: int, now: float) -> None:
        """Drop prunable changes until `need` more bytes (and one more change, when need) fit."""
        extra = 1 if need else 0
        if self._count + extra <= self.max_changes and self._bytes + need <= self._budget():
            return
        ids: list[int] = []
        freed = 0
        for cid, size in self._prunable(now):
            if self._count + extra - len(ids) <= self.max_changes and self._bytes + need - freed <= self._budget():
                break
            ids.append(cid)
            freed += size
        if not ids:
            return
        con = self._con
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            con.execute(f"DELETE FROM files WHERE change_id IN ({marks})", chunk)
            con.execute(f"DELETE FROM paths WHERE change_id IN ({marks})", chunk)
            con.execute(f"DELETE FROM changes WHERE id IN ({marks})", chunk)
        self._count -= len(ids)
        self._bytes -= freed
        con.execute("PRAGMA incremental_vacuum")

    def admit(self, actor: str, before: bytes | None, after: bytes | None) -> None:
        """Raise JournalFull when an agent's change of these bytes cannot be journaled without
        dropping protected changes (see module doc). Called before anything is written; the
        person's own changes are always admitted. JournalUnavailable when the file this journal
        writes was removed or replaced since it was opened."""
        if _is_human(actor) or actor == RECOVERY_ACTOR:
            return
        self._still_there()
        need = len(before or b"") + len(after or b"") + _ROW_OVERHEAD  # compressed, it is never much larger
        try:
            self._admit(actor, need)
        except JournalFull as exc:
            # the person hears it once (the TUI's status line), not once per refused call
            if not self._full_announced and self._bus is not None:
                self._full_announced = True
                self._bus.publish(problem(exc.message.replace("refused this write", "refuses writes", 1)))
            raise

    def _still_there(self) -> None:
        """JournalUnavailable when the journal's path no longer names the file this connection writes
        (removed, or replaced by another file, a folder or a link, while it was open), or its
        write-ahead log was removed or replaced: an agent's change would be journaled into a file
        nobody reads, or lost with the log at the next crash. Two stats."""
        if _identity(self.path) == self._identity:
            wal = _identity(self.path + "-wal")
            if self._wal_identity is None:  # (not made yet when the journal was opened)
                self._wal_identity = wal
            if wal == self._wal_identity:
                return
        message = (
            f"the change journal {self.path} (or its write-ahead log, -wal) was removed or replaced while this "
            f"vaultwatch (process "
            f"{os.getpid()}) had it open: agents' changes are refused, so that none is journaled where "
            "nobody reads it; restart vaultwatch (the TUI, or the server serving the vault) to open the "
            "journal that is there now"
        )
        if not self._gone_announced and self._bus is not None:
            self._gone_announced = True
            self._bus.publish(problem(message, "error"))
        raise JournalUnavailable(message)

    def _agent_changes(self) -> int:
        """Changes one agent may hold that retention may not drop: its share of the change cap, as
        its share of the bytes, so that a flood of small writes is refused like a flood of big ones."""
        return max(1, int(self.max_changes * self.agent_share))

    def _admit(self, actor: str, need: int) -> None:
        with self._lock:
            budget = self._budget()
            share = budget * self.agent_share
            if self._count < self._agent_changes() and self._bytes + need <= share:
                return  # under one agent's share in total: no agent can be over it
            if self._count >= self.max_changes or self._bytes + need > budget:
                now = self._now_locked()
                self._con.execute("BEGIN IMMEDIATE")
                try:
                    self._prune_locked(need, now)
                    self._con.execute("COMMIT")
                except BaseException:
                    self._con.execute("ROLLBACK")
                    self._recount_locked()
                    raise
                self._trim_wal_locked()
                if self._count >= self.max_changes:
                    raise JournalFull(self._full_message(need, None, by_count=True))
                if self._bytes + need > budget:
                    raise JournalFull(self._full_message(need, None))
            # the share is the agent's by its name (the actor, `agent:<clientInfo name>`), never by
            # its name/version label: a client that sent another version each session would
            # otherwise start each with a share of its own
            held, held_changes = self._held_locked(actor)
            name = actor.removeprefix("agent:")
            if held + need > share:
                raise JournalFull(self._full_message(need, name))
            if held_changes + 1 > self._agent_changes():
                raise JournalFull(self._full_message(need, name, by_count=True))

    def _held_locked(self, actor: str) -> tuple[int, int]:
        """Bytes and number of `actor`'s changes retention may not drop (unreviewed, or younger than keep_s)."""
        row = self._con.execute(
            "SELECT COALESCE(SUM(size), 0), COUNT(*) FROM changes WHERE actor=? AND (reviewed_at IS NULL OR jt>?)",
            (actor, self._now_locked() - self.keep_s),
        ).fetchone()
        return int(row[0]), int(row[1])

    def _full_message(self, need: int, agent: str | None, *, by_count: bool = False) -> str:
        mb = 2**20
        unreviewed = self._con.execute("SELECT COUNT(*) FROM changes WHERE reviewed_at IS NULL").fetchone()[0]
        days = self.keep_s / 86400
        if agent is not None and by_count:
            head = (
                f"the change journal refused this write: {agent}'s changes the person has not reviewed fill its "
                f"share ({self.agent_share:.0%}) of the journal ({self._agent_changes()} of its "
                f"{self.max_changes} changes)"
            )
        elif agent is not None:
            head = (
                f"the change journal refused this write: {agent}'s changes the person has not reviewed fill its "
                f"share ({self.agent_share:.0%}) of the journal ({self.max_bytes / mb:.0f} MB)"
            )
        elif by_count:
            head = (
                f"the change journal is full: it holds {self._count} changes it must keep ({unreviewed} not "
                f"reviewed, or younger than {days:g} days), its cap"
            )
        else:
            head = (
                f"the change journal is full: {self._bytes / mb:.1f} MB of changes it must keep "
                f"({unreviewed} not reviewed, or younger than {days:g} days) and this change needs "
                f"{need / mb:.1f} MB more (cap {self.max_bytes / mb:.0f} MB)"
            )
        cap = "VAULTWATCH_JOURNAL_MAX_CHANGES" if by_count else "VAULTWATCH_JOURNAL_MAX_MB"
        return (
            head + "; nothing was written. The person can review the changes (the Changes view's m, or "
            f"`vaultwatch changes --mark-reviewed all`), revert them, or raise the cap ({cap}); "
            "until then agents' writes wait"
        )

    def status(self) -> dict[str, Any]:
        """How full the journal is: content bytes, the bytes it must keep, the room left for agents'
        changes, unreviewed changes, and `full` (under a tenth of it left: agents' writes are refused
        or soon will be)."""
        with self._lock:
            now = self._now_locked()
            unreviewed = self._con.execute("SELECT COUNT(*) FROM changes WHERE reviewed_at IS NULL").fetchone()[0]
            prunable = sum(size for _, size in self._prunable(now))
            kept = self._bytes - prunable
            # full: less than a tenth of the journal is left for agents' changes
            room = max(0, self._budget() - kept)
            full = room < self._budget() // 10 or (self._count >= self.max_changes and not prunable)
            return {
                "room_bytes": room,
                "changes": self._count,
                "content_bytes": self._bytes,
                "kept_bytes": kept,
                "max_bytes": self.max_bytes,
                "unreviewed": int(unreviewed),
                "full": bool(full),
            }

    # --- reviewed ---

    def mark_reviewed(
        self, ids: Iterable[int] | None = None, *, agent: str | None = None, by: str = "human"
    ) -> list[int]:
        """Mark changes reviewed by the person (`ids`, or every unreviewed one, of `agent` if given);
        returns the ids newly marked. Reviewed changes may be dropped once older than keep_s."""
        where = ["reviewed_at IS NULL"]
        params: list[Any] = []
        if ids is not None:
            wanted = [int(i) for i in ids]
            if not wanted:
                return []
            where.append(f"id IN ({','.join('?' * len(wanted))})")
            params += wanted
        if agent is not None:
            where.append(AGENT_WHERE)
            params += agent_params(agent)
        with self._lock:
            con = self._con
            con.execute("BEGIN IMMEDIATE")
            try:
                now = self._now_locked()
                marked = [r[0] for r in con.execute(f"SELECT id FROM changes WHERE {' AND '.join(where)}", params)]
                for start in range(0, len(marked), 500):
                    chunk = marked[start : start + 500]
                    con.execute(
                        f"UPDATE changes SET reviewed_at=?, reviewed_by=? WHERE id IN ({','.join('?' * len(chunk))})",
                        [now, by, *chunk],
                    )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        if marked:
            self._full_announced = False
        return marked

    def unreviewed(self, *, agent: str | None = None, limit: int | None = None) -> list[Change]:
        """Changes nobody has reviewed yet, newest first."""
        return self.changes(agent=agent, limit=limit, unreviewed=True)

    def unreviewed_paths(self) -> dict[str, int]:
        """Every vault path an unreviewed change touched, with the newest such change's id: the
        notes an agent changed that nobody has reviewed since, where they are now (a note moved
        since, by vaultwatch or outside it, is named at its new path). One indexed query, and one
        more for the moves when the journal holds any after those changes."""
        with self._lock:
            found = self._con.execute(
                "SELECT p.path, MAX(c.id), MIN(c.id) FROM changes c JOIN paths p ON p.change_id = c.id "
                "WHERE c.reviewed_at IS NULL GROUP BY p.path"
            ).fetchall()
        moves = self.moves(after=min(r[2] for r in found)) if found else []
        exists = self.exists
        if not moves and (exists is None or all(exists(path) for path, _, _ in found)):
            return {path: int(cid) for path, cid, _ in found}
        # a note moved by the journal's moves, or one not where its change left it (moved while
        # nothing watched): each change's own place, and the note of that name holding its bytes
        with self._lock:  # each change's paths on their own: a move between two of them splits their notes
            rows = self._con.execute(
                f"SELECT p.path, c.id, {_LEFT} FROM changes c JOIN paths p ON p.change_id = c.id "
                "WHERE c.reviewed_at IS NULL"
            ).fetchall()
        out: dict[str, int] = {}
        for path, cid, left in rows:
            now = self._where(moves, path, int(cid), left).listed
            out[now] = max(out.get(now, 0), int(cid))
        return out

    def reviewed_paths(self) -> set[str]:
        """Every vault path an agent's change touched that the person has reviewed (marked, approved
        at the gate or reverted), leaving out the paths a change still waits on (`unreviewed_paths`):
        the notes whose agents' changes the person has seen, where they are now. Reviewed changes
        older than keep_s may be dropped by the journal's bounds, and their notes with them."""
        with self._lock:
            first = self._con.execute(
                "SELECT MIN(id) FROM changes WHERE agent IS NOT NULL AND reviewed_at IS NOT NULL"
            ).fetchone()[0]
        moves = self.moves(after=int(first)) if first is not None else []
        if not moves:
            with self._lock:
                return {
                    path
                    for (path,) in self._con.execute(
                        "SELECT DISTINCT p.path FROM changes c JOIN paths p ON p.change_id = c.id "
                        "WHERE c.agent IS NOT NULL AND c.reviewed_at IS NOT NULL AND p.path NOT IN "
                        "(SELECT p2.path FROM changes c2 JOIN paths p2 ON p2.change_id = c2.id "
                        "WHERE c2.reviewed_at IS NULL)"
                    )
                }
        with self._lock:
            rows = self._con.execute(
                f"SELECT DISTINCT p.path, c.id, {_LEFT} FROM changes c JOIN paths p ON p.change_id = c.id "
                "WHERE c.agent IS NOT NULL AND c.reviewed_at IS NOT NULL"
            ).fetchall()
        return {self._where(moves, path, int(cid), left).listed for path, cid, left in rows} - set(
            self.unreviewed_paths()
        )

    def folders_seen(self, folders: Iterable[str], key: Callable[[str], str]) -> set[str]:
        """Those of `folders` (vault paths) that some journaled change touched a path in or under:
        evidence that the folder was this vault's (a rule naming it that matches nothing now names
        a folder renamed or removed, not one of another vault). `key` puts a name in the form the
        vault's file system compares names in."""
        wanted: dict[str, list[str]] = {}
        for folder in folders:
            wanted.setdefault(key(folder), []).append(folder)
        if not wanted:
            return set()
        try:
            with self._lock:
                rows = self._con.execute("SELECT DISTINCT path FROM paths").fetchall()
        except sqlite3.Error:  # (a journal closed or broken under it: no evidence, said as such)
            return set()
        found: set[str] = set()
        for (path,) in rows:
            parts = str(path).split("/")
            for depth in range(1, len(parts) + 1):
                named = wanted.get(key("/".join(parts[:depth])))
                if named:
                    found.update(named)
        return found

    def moves(self, *, after: int = 0) -> list[Move]:
        """The journal's rows after change `after` that moved paths, oldest first (core.review.moves):
        renames made through vaultwatch, reverts of them (the move back), and outside moves."""
        with self._lock:
            rows = self._con.execute(
                "SELECT c.id, c.kind, c.actor, c.agent, c.operation, c.path, c.src, c.arguments, o.path, o.src "
                "FROM changes c LEFT JOIN changes o ON c.operation = 'revert' AND o.id = c.revert_of "
                "AND o.operation = 'rename' WHERE c.id > ? AND ((c.operation = 'rename' AND c.src IS NOT NULL) "
                "OR (c.kind = 'outside' AND c.arguments != '{}') OR o.id IS NOT NULL) ORDER BY c.id",
                (int(after),),
            ).fetchall()
        out: list[Move] = []
        for cid, kind, actor, agent, operation, path, src, arguments, back_from, back_to in rows:
            if kind == "outside":
                try:
                    listed = json.loads(arguments).get("moved") or []
                except (ValueError, AttributeError):
                    continue
                pairs = tuple(
                    (p[0], p[1])
                    for p in listed
                    if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) and x for x in p)
                )
            elif operation == "rename":
                pairs = ((src, path),)
            elif back_from and back_to:
                pairs = ((back_from, back_to),)
            else:
                continue
            if pairs:
                who = "outside vaultwatch" if kind == "outside" else shown_agent(agent) if agent else actor
                out.append(Move(int(cid), who, pairs))
        return out

    def whereabouts(self, changes: Iterable[Change]) -> dict[int, Where]:
        """Where the note of each of `changes` is now, for those moved since or not where the journal's
        moves leave it (by change id; when not, the one note of its file name holding exactly what
        the change left, found in the index: `holder_of`). What `vaultwatch changes`, the
        Changes view and a revert's refusal say beside the path the change names (`Where.words`). A
        delete's note is in the trash, and an outside row names no note of its own: neither is here."""
        listed = [c for c in changes if c.kind != "outside" and c.operation != "delete" and c.reverted_by is None]
        if not listed:
            return {}
        moves = self.moves(after=min(c.id for c in listed))
        out: dict[int, Where] = {}
        for c in listed:
            where = self._where(moves, c.path, c.id, left_at(c, c.path))
            if not where.there or where.path != c.path:
                out[c.id] = where
        return out

    def now_at(self, changes: Iterable[Change]) -> dict[int, str]:
        """Where the note of each of `changes` is now, for those it moved away from since and that
        something is at (by change id); never a place where nothing is (`whereabouts` says more)."""
        listed = list(changes)
        named = {c.id: c.path for c in listed}
        return {cid: w.path for cid, w in self.whereabouts(listed).items() if w.there and w.path != named[cid]}

    def _where(self, moves: list[Move], path: str, after: int, recorded: str | None) -> Where:
        """The one answer to "where is the note change `after` left at `path` (with etag
        `recorded`)" for every view: the journal's moves, then the disk (core.review.moves)."""
        return whereabouts(moves, path, after, disk=self.on_disk(recorded))

    def where_now(
        self, path: str, after: int, *, folders_only: bool = False, etag: str | None = None
    ) -> tuple[str, tuple[Move, ...]]:
        """Where the note at `path` just after change `after` is now, by the moves journaled since,
        and those moves (core.review.moves.follow). `etag`: the bytes the note held then, to find it
        at an earlier place of the chain when the moves end where nothing is (`on_disk`)."""
        return follow(self.moves(after=after), path, after, folders_only=folders_only, disk=self.on_disk(etag))

    def on_disk(self, recorded: str | None) -> OnDisk | None:
        """How core.review.moves.follow checks a followed place against this journal's vault, for a
        note whose recorded bytes have `etag`: a chain of moves that ends where nothing is (a move
        back made while nothing watched) falls back to the earlier place that holds those bytes.
        None when there is nothing to check with (no etag: a removed note; a journal not opened
        for a vault)."""
        current, exists = self.current, self.exists
        if recorded is None or current is None or exists is None:
            return None

        def holds(rel: str) -> bool:
            data = current(rel)
            return data is not None and etag(data) == recorded

        return OnDisk(exists, holds, lambda missing: self.holder_of(missing, recorded))

    def holder_of(self, missing: str, recorded: str | None) -> str | None:
        """The one note, other than `missing`, with `missing`'s file name that holds exactly the
        bytes with etag `recorded` (None: none, more than one, or nothing to look with). Only the
        index's files of that name are read, never the vault. A guess to say to the person (a note
        moved while nothing watched), never a place to revert: a copy is not the note."""
        named, current = self.named, self.current
        if recorded is None or named is None or current is None:
            return None
        found: list[str] = []
        for rel in named(missing.rsplit("/", 1)[-1]):
            if rel == missing:
                continue
            data = current(rel)
            if data is not None and etag(data) == recorded:
                found.append(rel)
        return found[0] if len(found) == 1 else None

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
        since: float | Within | At | None = None,
        path: str | None = None,
        limit: int | None = None,
        kinds: Iterable[str] | None = None,
        unreviewed: bool = False,
        session: str | None = None,
    ) -> list[Change]:
        """Journaled changes, newest first (by id), optionally of one agent, since a time (a wall
        time, or `Within`: a duration back on the journal's own time), touching a path, unreviewed,
        or of one session (its whole id: core.review.sessionids resolves what the person typed)."""
        sql = f"SELECT {_COLS} FROM changes"
        where: list[str] = []
        params: list[Any] = []
        if session is not None:
            where.append("session=?")
            params.append(session)
        if path is not None:
            where.append("id IN (SELECT change_id FROM paths WHERE path=?)")
            params.append(path)
        if agent is not None:
            where.append(AGENT_WHERE)
            params += agent_params(agent)
        if isinstance(since, Within):
            where.append("jt>=?")
            params.append(self.now() - since.seconds)
        elif isinstance(since, At):
            where.append("jt>=?")
            params.append(since.jt)
        elif since is not None:
            where.append("at>=?")
            params.append(float(since))
        if unreviewed:
            where.append("reviewed_at IS NULL")
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

    def sessions(self) -> list[str]:
        """Every agent session that has a change in the journal (what a shown id must tell apart)."""
        with self._lock:
            rows = self._con.execute("SELECT DISTINCT session FROM changes WHERE session IS NOT NULL").fetchall()
        return [r[0] for r in rows]

    def journal_times(self, ids: Iterable[int]) -> dict[int, float]:
        """Each change's time on the journal's own clock (the one "since" counts on)."""
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        with self._lock:
            rows = self._con.execute(
                f"SELECT id, jt FROM changes WHERE id IN ({','.join('?' * len(wanted))})", wanted
            ).fetchall()
        return {int(i): float(jt) for i, jt in rows if jt is not None}

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
            reviewed_at,
            approved_via,
            before_modes,
        ) = row
        modes = _modes(before_modes)
        files = tuple(
            FileChange(seq, p, be, ae, bs, as_, role, modes.get(seq))
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
            reviewed_at,
            approved_via,
        )


_COLS = (
    "id, at, kind, actor, agent, session, tool, operation, path, src, moved_to, path_kind, summary, "
    "arguments, previous_etag, etag, revert_of, reverted_by, reviewed_at, approved_via, before_modes"
)


def _modes(text: str | None) -> dict[int, int]:
    """A row's `before_modes` as {seq: permission bits}: empty for a row written before the journal
    kept them (its revert gives a re-created file the usual mode), and for anything unreadable."""
    if not text:
        return {}
    try:
        found = json.loads(text)
        return {int(k): int(v) & 0o777 for k, v in found.items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def _is_human(actor: str) -> bool:
    return actor == "human" or actor.startswith("human:")


def _alive(pid: Any) -> bool:
    """Whether process `pid` still runs (another process's intent in progress, not a killed one)."""
    return pid == os.getpid() or platform.pid_alive(pid)


def _system_reference() -> tuple[str, float]:
    return SystemClock().reference()


def _clip_args(arguments: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in (arguments or {}).items():
        if isinstance(v, str) and len(v) > MAX_ARG_CHARS:
            v = v[:MAX_ARG_CHARS] + f"…(+{len(v) - MAX_ARG_CHARS})"
        out[str(k)[:80]] = v
    return out


def _parents(paths: Iterable[str]) -> set[str]:
    """Every folder above one of `paths`."""
    out: set[str] = set()
    for p in paths:
        folder = p.rpartition("/")[0]
        while folder and folder not in out:
            out.add(folder)
            folder = folder.rpartition("/")[0]
    return out


def _folder_probe(root_real: str) -> Callable[[str], bool]:
    """Whether a vault path is a real folder now (not a link to one), reached inside the vault only."""

    def is_folder(rel: str) -> bool:
        try:
            with locate(root_real, rel, follow_last=False, missing_ok=True) as loc:
                st = loc.lstat()
        except (OSError, VaultError):
            return False
        return st is not None and stat_mod.S_ISDIR(st.st_mode)

    return is_folder


def left_at(change: Change, path: str) -> str | None:
    """The etag of what `change` left at vault path `path` (None: nothing, or not recorded)."""
    for f in reversed(change.files):
        if f.path == path:
            return f.after_etag
    return change.etag if path == change.path else None


# what a change left at one of its paths, in the journal's paths query (`left_at` in SQL)
_LEFT = (
    "COALESCE((SELECT f.after_etag FROM files f WHERE f.change_id = c.id AND f.path = p.path "
    "ORDER BY f.seq DESC LIMIT 1), CASE WHEN p.path = c.path THEN c.etag END)"
)


def _exists_probe(root_real: str) -> Callable[[str], bool]:
    """Whether anything (a file, folder or link) is at a vault path now, reached inside the vault only."""

    def exists(rel: str) -> bool:
        try:
            with locate(root_real, rel, follow_last=False, missing_ok=True) as loc:
                return loc.lstat() is not None
        except (OSError, VaultError):
            return False

    return exists


def _name_lookup(vault: Any) -> Callable[[str], tuple[str, ...]]:
    """The vault paths of the index's files with a file name (as Obsidian compares names:
    casefolded), from the name table link resolution keeps (core.links.resolve.names)."""

    def named(name: str) -> tuple[str, ...]:
        # loaded at the first look, not with the journal (which the MCP layer imports for `calling`)
        from vaultwatch.core.links.resolve import names  # noqa: PLC0415

        found = names(vault.snapshot).get(name.casefold(), ())
        return (found,) if isinstance(found, str) else tuple(found)

    return named


def _reader(vault: Any) -> Callable[[str], bytes | None]:
    """The bytes of a vault path now, read as the write path reads them (inside the vault only)."""
    writers: list[Any] = []

    def current(rel: str) -> bytes | None:
        if not writers:
            # the write path is loaded when the journal first reads a file, not with the journal
            # (which the MCP layer imports for `calling`)
            from vaultwatch.core.edit.writes import Writer  # noqa: PLC0415

            writers.append(Writer(vault))
        try:
            with writers[0].locate(rel) as loc:
                found = read_file(loc, rel)
        except VaultError:
            return None
        return None if found is None else found[0]

    return current


def _env_bounds() -> dict[str, Any]:
    return settings.bounds(
        {
            "max_changes": ("VAULTWATCH_JOURNAL_MAX_CHANGES", int),
            "max_bytes": ("VAULTWATCH_JOURNAL_MAX_MB", settings.mib),
            "keep_s": ("VAULTWATCH_JOURNAL_KEEP_DAYS", settings.days),
            "agent_share": ("VAULTWATCH_JOURNAL_AGENT_SHARE", float),
        }
    )


def _wall() -> float:
    import time

    return time.time()


def parse_since(text: str, now: dt.datetime) -> float | Within:
    """`--since` values: an ISO date or datetime (a wall time), or a duration back from now ("30m",
    "2h", "1d": a `Within`, counted on the journal's own time so that a stepped clock cannot hide
    changes; `now` is kept for callers that show the resulting wall time)."""
    raw = text.strip()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    if raw and raw[-1] in units and raw[:-1].replace(".", "", 1).isdigit():
        return Within(float(raw[:-1]) * units[raw[-1]])
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
    "At",
    "Caller",
    "Change",
    "ChangeRecorded",
    "FileChange",
    "Journal",
    "JournalFull",
    "Scope",
    "Within",
    "approve",
    "attach",
    "calling",
    "committed",
    "current_caller",
    "current_scope",
    "has_intents",
    "journal_for",
    "open_journal",
    "require_journal",
    "unopenable",
    "why_no_journal",
    "journal_path",
    "journaled",
    "left_at",
    "parse_since",
    "state_dir",
    "waited",
]
