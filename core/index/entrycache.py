"""The persistent entry cache: parsed index entries in SQLite under the user's cache folder.

One folder per vault, named after a hash of the vault's real path, under
`$XDG_CACHE_HOME/vaultwatch/` (default `~/.cache/vaultwatch/`); never inside the vault,
which may be synced. A warm start walks and stats the tree, reuses every cached entry whose
size, mtime and inode still match, and parses only the rest.

Entries are stored in 64 buckets (by a hash of the path) of marshalled tuples: a bucket is
the unit of rewrite, so an edit rewrites ~1/64 of the cache, and a load is 64 `marshal.loads`
calls instead of 100k unpicklings. Equal strings and tuples are shared before marshalling,
which makes the blobs smaller and the loaded index lighter.

Links are stored once for the whole cache, in a links table (one marshalled list of link
tuples, append-only between full rewrites); a bucket's entries name their links by position
in it. A warm load builds each distinct Link once and shares it, by list index: looking every
link up in a dict instead (273k links, 115k distinct at 100k notes) was a third of the load.

Beside each entry a front end may have the cache keep a row of its own (`row_of`: the MCP server's listing
row), which a warm load hands back with the entry it made (`kept_rows`): opaque here.

A corrupt or incompatible cache (another schema, another parser) is rebuilt, never fatal.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import marshal
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from vaultwatch.core.disk.private import private_file, private_folder, write_private
from vaultwatch.core.index.sharing import SHORT_CHARS, frozen, interned_memo
from vaultwatch.core.model import FOLDER, Entry, Link, make_entry
from vaultwatch.core.rests import Rests

SCHEMA_VERSION = 3
BUCKETS = 64
EMPTY_GUARD = 10  # a vault that had more entries than this and now looks empty is suspect
# A file modified within this long before its entry was written may have changed again since
# without changing size or mtime (timestamp granularity: ext4 a few ms, FAT 2 s): re-read it.
RACY_NS = 2_000_000_000
MAX_FLUSH_WAIT = 30.0  # seconds a busy vault may keep the cache unwritten
BUSY_POLL_S = 0.05  # how often a flush held back while the process is busy answering looks again
# A flush that runs while a client's calls come (MAX_FLUSH_WAIT passed, or a first search build waits
# for it) goes a step at a time and rests between steps: run whole, it held the interpreter in turns
# with the thread answering, and every call waited out the interpreter's switch interval.
PACE_ROWS = 32  # entries encoded (or sorted into buckets, x PACE_GROUP) in one step
PACE_GROUP = 32
PACE_REST_S = 0.004  # the rest after each step while calls come
# a partial flush appends new links to the table; past this many times the distinct links the
# last full rewrite held (plus LINKS_SLACK), the next flush rewrites everything and drops stale ones
LINKS_GROWTH = 2
LINKS_SLACK = 10_000
_CORE = Path(__file__).resolve().parents[1]
_PARSER_SOURCES = (
    "markdown/parse.py",
    "markdown/mdlex.py",
    "markdown/fastyaml.py",
    "markdown/okf.py",
    "model.py",
    "index/scan.py",
    "index/parsepool.py",
    "index/entrycache.py",
    "index/warmscan.py",
    "index/sharing.py",
    "serialize.py",  # the listing rows kept beside the entries (`EntryCache.row_of`)
)
_FIELDS = tuple(f.name for f in fields(Entry))
# what a cache keeps beside an entry when a front end asks (`EntryCache.row_of`): marshal-able, or None
RowOf = Callable[[Entry], Any]


def _fingerprint() -> str:
    """Identifies the code that produced cached entries: a parser change invalidates the cache."""
    h = hashlib.sha256(repr((SCHEMA_VERSION, _FIELDS)).encode())
    for name in _PARSER_SOURCES:
        try:
            h.update((_CORE / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:24]


FINGERPRINT = _fingerprint()


def cache_root() -> Path:
    """`$XDG_CACHE_HOME/vaultwatch`, or `~/.cache/vaultwatch` when unset or relative."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vaultwatch"


def vault_cache_dir(root_real: str) -> Path:
    """The cache folder of one vault: readable name plus a hash of the vault's real path."""
    digest = hashlib.sha256(root_real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in os.path.basename(root_real))[:40] or "vault"
    return cache_root() / f"{name}-{digest}"


PRUNE_AGE_S = 24 * 3600
_pruned = False


def prune_caches(max_age_s: float = PRUNE_AGE_S) -> int:
    """Delete cache folders of vaults that no longer exist (unused for `max_age_s`). Returns how many.

    Runs at most once per process; every error is ignored (it is housekeeping).
    """
    global _pruned
    if _pruned:
        return 0
    _pruned = True
    removed = 0
    now = time.time()
    try:
        folders = list(cache_root().iterdir())
    except OSError:
        return 0
    for folder in folders:
        try:
            root = (folder / "vault.txt").read_text(encoding="utf-8").strip()
            if os.path.exists(root) or now - (folder / "vault.txt").stat().st_mtime < max_age_s:
                continue
            for child in folder.iterdir():
                child.unlink()
            folder.rmdir()
            removed += 1
        except OSError:
            continue
    return removed


def bucket_of(path: str) -> int:
    """The bucket a path's entry is stored in."""
    return zlib.crc32(path.encode("utf-8", "surrogatepass")) & (BUCKETS - 1)


# --- entry <-> marshal tuple -------------------------------------------------------------------


def _share(value: Any, memo: dict[Any, Any]) -> Any:
    """Replace equal short strings and tuples by one shared object (marshal then writes refs)."""
    if isinstance(value, str):
        return memo.setdefault(value, value) if len(value) <= SHORT_CHARS else value
    if isinstance(value, dict):
        return {_share(k, memo): _share(v, memo) for k, v in value.items()}
    if isinstance(value, list):
        shared = [_share(v, memo) for v in value]
        key = frozen(shared)  # equal lists (a note's `tags:`), types included: one list
        return shared if key is None else memo.setdefault(key, shared)
    if isinstance(value, tuple):
        return memo.setdefault(("t", value), tuple(_share(v, memo) for v in value)) if value else ()
    return value


class LinkTable:
    """The cache's links: raw link tuples by position, and the position of each (for writing)."""

    def __init__(self, raw: list[tuple] | None = None) -> None:
        self.fresh = raw is None  # a new table: stale positions in the stored one are gone with it
        self.raw: list[tuple] = list(raw or ())
        self.pos: dict[tuple, int] = {t: i for i, t in enumerate(self.raw)}
        self.grew = False

    def ids(self, links: tuple[Link, ...]) -> tuple[int, ...]:
        out = []
        for ln in links:
            raw = (ln.target, ln.kind, ln.heading, ln.alias)
            i = self.pos.get(raw)
            if i is None:
                i = self.pos[raw] = len(self.raw)
                self.raw.append(raw)
                self.grew = True
            out.append(i)
        return tuple(out)

    def encode(self) -> bytes:
        return marshal.dumps(self.raw, 4)


def decode_links(blob: bytes) -> list[Link]:
    """The Links of a stored links table, by position."""
    raw = marshal.loads(blob)
    if not isinstance(raw, list):
        raise ValueError("links table has the wrong shape")
    return [_make_link(t) for t in raw]


def _encode(e: Entry, memo: dict, table: LinkTable, row_of: RowOf | None = None) -> tuple:
    links = table.ids(e.links)
    return (
        e.path,
        _share(e.kind, memo),
        e.size_bytes,
        e.mtime_ns,
        _share(e.title, memo),
        e.inode,
        _share(e.frontmatter, memo),
        _share(e.tags, memo),
        _share(links, memo),
        e.content_chars,
        e.frontmatter_error,
        e.decode_error,
        _share(e.mime_type, memo),
        _share(e.okf_status, memo),
        _share(e.okf_trust, memo),
        e.stale_date.toordinal() if e.stale_date is not None else None,
        e.stale_instant.isoformat() if e.stale_instant is not None else None,
        e.anchors,
        None if row_of is None else row_of(e),
    )


_make_link = Link._make


def _decode(t: tuple, links: list[Link]) -> Entry:
    out: dict[str, Entry] = {}
    decode_rows([t], t[3] + 1, links, out)
    return out[t[0]]


def decode_rows(
    rows: list[tuple],
    racy: int,
    links: list[Link],
    out: dict[str, Entry],
    shared: dict | None = None,
    kept: dict[str, tuple[Entry, Any]] | None = None,
) -> None:
    """Decode every row whose mtime is safely before `racy` into `out` (by path): one loop.

    The warm start's hot path (100k rows): no call per row but make_entry; a note's links are
    the table's shared Links, by position (an out-of-range position raises IndexError).
    `shared` (one dict for all the buckets of a load) makes equal sizes and character counts
    one int object across buckets (marshal shares them within a bucket only): a few thousand
    distinct values stand for hundreds of thousands of ints, a clear cut in the load's memory for
    a small share of this loop's time. Tag tuples are shared the same way, for the same reason.
    `kept` (when given) gets, by path, each entry made and what `EntryCache.row_of` gave for it (if anything).
    """
    fromordinal = dt.date.fromordinal
    fromiso = dt.datetime.fromisoformat
    share = (shared if shared is not None else {}).setdefault
    for t in rows:
        if t[3] >= racy:
            continue
        ids = t[8]
        sd, si = t[15], t[16]
        e = out[t[0]] = make_entry(
            t[0],
            t[1],
            share(t[2], t[2]),
            t[3],
            t[4],
            t[5],
            t[6],
            t[7],
            tuple([links[i] for i in ids]) if ids else (),
            share(t[9], t[9]),
            t[10],
            t[11],
            t[12],
            t[13],
            t[14],
            fromordinal(sd) if sd is not None else None,
            fromiso(si) if si is not None else None,
            t[17],
        )
        if kept is not None and t[18] is not None:
            kept[t[0]] = (e, t[18])


def _no_pace() -> None:
    pass


def encode_bucket(
    entries: Iterable[Entry],
    table: LinkTable,
    written_ns: int | None = None,
    pace: Callable[[], None] = _no_pace,
    row_of: RowOf | None = None,
) -> bytes:
    """Marshal one bucket's entries (sorted by path) with the time they were written; their
    links become positions in `table` (which grows by the links it did not hold). `pace()` is
    called before every PACE_ROWS entries of each pass (the flush's rests); the bytes are the same.
    `row_of(entry)`, kept beside each entry (`EntryCache.row_of`): marshal-able, or None."""
    ordered = sorted(entries, key=lambda e: e.path)
    memo: dict = {}
    for at in range(0, len(ordered), PACE_ROWS):
        pace()
        memo.update(interned_memo(ordered[at : at + PACE_ROWS]))
    rows: list[tuple] = []
    for at in range(0, len(ordered), PACE_ROWS):
        pace()
        rows.extend([_encode(e, memo, table, row_of) for e in ordered[at : at + PACE_ROWS]])
    return marshal.dumps((time.time_ns() if written_ns is None else written_ns, rows), 4)


def decode_bucket(blob: bytes) -> tuple[int, list[tuple]]:
    """(written_ns, raw entry tuples) of one bucket."""
    got = marshal.loads(blob)
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], int) and isinstance(got[1], list)):
        raise ValueError("bucket has the wrong shape")
    return got


# --- the store ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WarmStats:
    """What a cache-aware load did (for the bench and the tests)."""

    cached: int  # entries found in the cache
    reused: int  # entries taken from the cache unchanged
    parsed: int  # files read and parsed
    removed: int  # cached entries whose file is gone
    seconds: float
    rebuilt: str | None = None  # why the cache was rebuilt, if it was


class EntryCache:
    """The entry cache of one vault. Thread-safe; every SQLite connection is short-lived.

    Methods never raise for a bad cache: they return a problem message for the event bus.
    """

    def __init__(self, root_real: str, directory: Path | None = None) -> None:
        self.root_real = root_real
        self.dir = directory or vault_cache_dir(root_real)
        self.db_path = self.dir / "entries.sqlite"
        self._lock = threading.Lock()
        self._dirty: set[int] = set()
        self._flush_thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._rests = Rests()  # the background flush's rests while calls come (`hurry` ends them)
        self._last_change = 0.0
        self._latest: Callable[[], Iterable[Entry]] | None = None
        self.hold = False  # True while the vault looks empty/unmounted: never overwrite a good cache
        self.last_stats: WarmStats | None = None
        # What a flush keeps beside each entry it writes (opaque here: a front end's listing row, so that a
        # warm start's first listing need not make it again), set by the vault (`Vault.keep_rows`); when set,
        # a load hands each entry's back (`kept_rows`).
        self.row_of: RowOf | None = None
        self._kept: dict[str, tuple[Entry, Any]] = {}
        inside = str(self.dir.resolve()) + os.sep
        self.disabled: str | None = None
        if inside.startswith(root_real + os.sep):
            self.disabled = (
                f"cache folder {self.dir} lies inside the vault; caching is off (set XDG_CACHE_HOME elsewhere)"
            )

    # connections ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if not self.dir.is_dir():
            private_folder(self.dir)
            write_private(self.dir / "vault.txt", self.root_real + "\n")
        else:
            marker = self.dir / "vault.txt"
            if not marker.exists() or time.time() - marker.stat().st_mtime > 3600:
                write_private(marker, self.root_real + "\n")  # "in use" for prune_caches
        private_file(self.db_path)
        con = sqlite3.connect(self.db_path, timeout=5.0, isolation_level=None, check_same_thread=False)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute("PRAGMA journal_size_limit = 33554432")
            con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            con.execute("CREATE TABLE IF NOT EXISTS buckets (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
            con.execute("CREATE TABLE IF NOT EXISTS links (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
            got = dict(con.execute("SELECT key, value FROM meta").fetchall())
            if got.get("fingerprint") != FINGERPRINT or got.get("root") != self.root_real:
                had = "fingerprint" in got
                con.execute("BEGIN IMMEDIATE")
                con.execute("DELETE FROM buckets")
                con.execute("DELETE FROM links")
                con.execute("DELETE FROM meta")
                con.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("schema", str(SCHEMA_VERSION)), ("fingerprint", FINGERPRINT), ("root", self.root_real)],
                )
                con.execute("COMMIT")
                if had:
                    self._reset_reason = self.VERSION_RESET
        except BaseException:
            con.close()
            raise
        return con

    _reset_reason: str | None = None
    VERSION_RESET = "index cache was written by another vaultwatch version; rebuilt it"

    def _discard(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.db_path) + suffix)
            except FileNotFoundError:
                pass

    def load_entries(self) -> tuple[dict[str, Entry], list[str]]:
        """Every trustworthy cached entry by path, plus problem messages (cache reset, bad buckets).

        Never raises: a corrupt file is deleted and reported; a bad bucket is skipped, reported
        and rewritten later. Entries whose file was modified within RACY_NS before the bucket
        was written are left out (they are parsed again). Buckets are decoded one at a time,
        so the raw data never all sits in memory next to the entries.
        """
        if self.disabled:
            return {}, [self.disabled]
        self._reset_reason = None
        prune_caches()
        try:
            con = self._connect()
        except sqlite3.DatabaseError as exc:
            self._discard()
            return {}, [f"cache file {self.db_path} was unreadable ({exc}); rebuilt it"]
        except OSError as exc:
            self.disabled = f"cache folder {self.dir} is not usable ({exc}); caching is off"
            return {}, [self.disabled]
        problems = [self._reset_reason] if self._reset_reason else []
        out: dict[str, Entry] = {}
        shared: dict = {}  # equal small values, one object for every bucket (decode_rows)
        kept: dict[str, tuple[Entry, Any]] | None = {} if self.row_of is not None else None
        bad: list[str] = []
        try:
            got = con.execute("SELECT data FROM links WHERE id = 0").fetchone()
            try:
                links = decode_links(got[0]) if got is not None else []
            except (ValueError, EOFError, TypeError, IndexError) as exc:
                con.close()
                self.mark_all_dirty()
                return {}, [f"cache links table was corrupt ({exc!r}); every note was parsed again"]
            # one bucket's bytes at a time: all of them at once raised the process's peak memory,
            # which the allocator then kept
            for (bid,) in con.execute("SELECT id FROM buckets").fetchall():
                row = con.execute("SELECT data FROM buckets WHERE id = ?", (bid,)).fetchone()
                if row is None:
                    continue
                try:
                    written, rows = decode_bucket(row[0])
                    decoded: dict[str, Entry] = {}
                    # (mtime safely before the write)
                    decode_rows(rows, written - RACY_NS, links, decoded, shared, kept)
                except (ValueError, EOFError, TypeError, IndexError, OverflowError) as exc:
                    bad.append(repr(exc))
                    self._dirty.add(bid)
                    continue
                del row, rows
                out.update(decoded)
        except sqlite3.DatabaseError as exc:
            con.close()
            self._discard()
            return {}, [f"cache file {self.db_path} was corrupt ({exc}); rebuilt it"]
        con.close()
        self._kept = kept or {}
        if bad:
            problems.append(f"{len(bad)} cache bucket(s) were corrupt ({bad[-1]}); their notes were parsed again")
        return out, problems

    def kept_rows(self) -> dict[str, tuple[Entry, Any]]:
        """By path, what `row_of` gave for each entry the last load reused, with the Entry that load made of
        it: handed over (whoever serves a row pops it; the cache keeps no copy)."""
        return self._kept

    def mark_dirty(self, paths: Iterable[str]) -> None:
        """Note that these paths changed (their buckets are rewritten on the next flush)."""
        with self._lock:
            self._dirty.update(bucket_of(p) for p in paths)
            self._last_change = time.monotonic()

    def mark_all_dirty(self) -> None:
        with self._lock:
            self._dirty.update(range(BUCKETS))

    @property
    def dirty(self) -> bool:
        return bool(self._dirty)

    def flush(
        self, entries: Iterable[Entry] | Callable[[], Iterable[Entry]], pace: Callable[[], None] = _no_pace
    ) -> str | None:
        """Rewrite the dirty buckets from `entries` (a snapshot's, or what gives the current snapshot's).
        Returns a problem message or None. `pace()` is called between the steps of the work (the
        background flush rests there)."""
        if self.disabled or self.hold:
            return None
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        if not dirty:
            return None
        if callable(entries):
            # read after the marks were taken: a change is marked once its snapshot is in place, so these
            # entries hold every change marked (read before, a note marked meanwhile was written without
            # its entry and its mark consumed: the cache lost it)
            entries = entries()
        if not isinstance(entries, (list, tuple)):
            entries = list(entries)  # a flush that finds the links table outgrown goes over them again
        groups: dict[int, list[Entry]] = {b: [] for b in dirty}
        everything = len(groups) == BUCKETS
        step = PACE_ROWS * PACE_GROUP
        for at in range(0, len(entries), step):
            pace()
            for e in entries[at : at + step]:
                if e.kind == FOLDER:
                    continue
                g = groups.get(bucket_of(e.path))
                if g is not None:
                    g.append(e)
        try:
            con = self._connect()
            try:
                con.execute("BEGIN IMMEDIATE")
                table = self._links_for(con, everything)
                if table is not None:
                    while groups:  # one bucket's bytes at a time
                        b, es = groups.popitem()
                        con.execute(
                            "INSERT OR REPLACE INTO buckets (id, data) VALUES (?, ?)",
                            (b, encode_bucket(es, table, pace=pace, row_of=self.row_of)),
                        )
                    if table.grew or table.fresh:
                        con.execute("INSERT OR REPLACE INTO links (id, data) VALUES (0, ?)", (table.encode(),))
                    if table.fresh:
                        con.execute("INSERT OR REPLACE INTO meta VALUES ('links_base', ?)", (str(len(table.raw)),))
                    con.execute("COMMIT")
                else:
                    con.execute("ROLLBACK")
            finally:
                con.close()
            if table is None:  # the links table outgrew the links in use: rewrite every bucket
                self.mark_all_dirty()
                return self.flush(entries, pace)
        except sqlite3.DatabaseError as exc:
            # corrupt or locked: forget the file when corrupt, keep the dirty marks when locked
            if "locked" in str(exc) or "busy" in str(exc):
                with self._lock:
                    self._dirty.update(dirty)
                return f"cache is busy (another vaultwatch?); will retry: {exc}"
            self._discard()
            self.mark_all_dirty()
            return f"cache file was corrupt ({exc}); it will be rebuilt"
        except OSError as exc:
            return f"cache could not be written ({exc})"
        return None

    def _links_for(self, con: sqlite3.Connection, everything: bool) -> LinkTable | None:
        """The links table a flush extends: empty when every bucket is rewritten, else the stored
        one (None when it has grown past LINKS_GROWTH times its last full size: rewrite all)."""
        if everything:
            return LinkTable()
        got = con.execute("SELECT data FROM links WHERE id = 0").fetchone()
        if got is None:  # a new cache; with buckets already there (the table was lost), rewrite them all
            return LinkTable() if con.execute("SELECT 1 FROM buckets LIMIT 1").fetchone() is None else None
        try:
            raw = marshal.loads(got[0])
        except (ValueError, EOFError, TypeError):
            return None
        if not isinstance(raw, list):
            return None
        base = con.execute("SELECT value FROM meta WHERE key = 'links_base'").fetchone()
        if len(raw) > LINKS_GROWTH * int(base[0] if base is not None else 0) + LINKS_SLACK:
            return None
        return LinkTable(raw)

    def flush_soon(
        self,
        latest: Callable[[], Iterable[Entry]],
        report: Callable[[str], None],
        delay: float = 1.0,
        busy: Callable[[], bool] | None = None,
    ) -> None:
        """Flush in a (non-daemon) background thread after `delay`, coalescing bursts of changes,
        and not while `busy()` says the process is answering (a cold load's whole-cache write takes
        the interpreter for a while: a client's first calls come first). At most MAX_FLUSH_WAIT; a flush
        that runs while `busy()` rests between its steps (PACE_REST_S after each).

        Non-daemon, so a short-lived process (the CLI) still persists its cache on exit.
        """
        with self._lock:
            self._latest = latest
            if self._flush_thread is not None and self._flush_thread.is_alive():
                return
            t = threading.Thread(
                target=self._flush_loop, args=(report, delay, busy), name="vaultwatch-cache", daemon=False
            )
            self._flush_thread = t
            # started under the lock: a thread others can see is a started one (`wait_flushed` joins it,
            # and a second call here sees it alive); a thread that flushes at once waits for the lock
            t.start()

    def _flush_loop(self, report: Callable[[str], None], delay: float, busy: Callable[[], bool] | None) -> None:
        started = time.monotonic()
        step = delay if busy is None else max(delay, BUSY_POLL_S)
        rests = self._rests

        def pace() -> None:
            # at most MAX_FLUSH_WAIT of rests in all: the flush holds the cache's write transaction
            # throughout (another process writing this cache waits for it)
            rests.rest(busy, PACE_REST_S, MAX_FLUSH_WAIT)

        while True:
            # debounce: a burst of changes (a git checkout) is written once it settles, so the
            # flush does not compete with the index for the interpreter (at most MAX_FLUSH_WAIT)
            while not self._wake.wait(step):
                quiet = time.monotonic() - self._last_change
                if time.monotonic() - started >= MAX_FLUSH_WAIT:
                    break
                if quiet >= delay and (busy is None or not busy()):
                    break
            started = time.monotonic()
            latest = self._latest
            if latest is None:
                return
            rests.start()
            problem = self.flush(latest, pace)
            if problem:
                report(problem)
            with self._lock:
                if not self._dirty or self.hold or self.disabled:
                    self._flush_thread = None
                    rests.end()
                    return

    def hurry(self) -> None:
        """Have the background flush under way, if any, go on without its rests: something waits for it
        (the stop, a search waiting for the first full-text build, which waits for this flush)."""
        with self._lock:
            if self._flush_thread is not None:
                self._rests.hurry()  # until that flush thread ends

    def wait_flushed(self, timeout: float | None = None, *, hurry: bool = True) -> None:
        """Flush now (skipping the coalescing delay) and wait for it (shutdown, tests). `hurry`: without
        the rests a flush takes while calls come (False: a waiter that should not slow the calls)."""
        with self._lock:
            t = self._flush_thread
        if t is not None:
            if hurry:  # before the wake: a flush it starts has no rests at all
                self.hurry()
            self._wake.set()
            t.join(timeout)
            self._wake.clear()
