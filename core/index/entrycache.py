"""The persistent entry cache: parsed index entries in SQLite under the user's cache folder.

One folder per vault, named after a hash of the vault's real path, under
`$XDG_CACHE_HOME/vaultwatch/` (default `~/.cache/vaultwatch/`); never inside the vault,
which may be synced. A warm start walks and stats the tree, reuses every cached entry whose
size, mtime and inode still match, and parses only the rest.

Entries are stored in 64 buckets (by a hash of the path) of marshalled tuples: a bucket is
the unit of rewrite, so an edit rewrites ~1/64 of the cache, and a load is 64 `marshal.loads`
calls instead of 100k unpicklings. Equal strings and tuples are shared before marshalling,
which makes the blobs smaller and the loaded index lighter.

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

from core.model import FOLDER, Entry, Link, make_entry

SCHEMA_VERSION = 1
BUCKETS = 64
EMPTY_GUARD = 10  # a vault that had more entries than this and now looks empty is suspect
# A file modified within this long before its entry was written may have changed again since
# without changing size or mtime (timestamp granularity: ext4 a few ms, FAT 2 s): re-read it.
RACY_NS = 2_000_000_000
MAX_FLUSH_WAIT = 30.0  # seconds a busy vault may keep the cache unwritten
_CORE = Path(__file__).resolve().parents[1]
_PARSER_SOURCES = ("markdown/parse.py", "markdown/mdlex.py", "markdown/fastyaml.py", "markdown/okf.py",
                   "model.py", "index/scan.py", "index/parsepool.py", "index/entrycache.py",
                   "index/warmscan.py")
_FIELDS = tuple(f.name for f in fields(Entry))


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

def _share(value, memo: dict):
    """Replace equal short strings and tuples by one shared object (marshal then writes refs)."""
    if isinstance(value, str):
        return memo.setdefault(value, value) if len(value) <= 64 else value
    if isinstance(value, dict):
        return {_share(k, memo): _share(v, memo) for k, v in value.items()}
    if isinstance(value, list):
        return [_share(v, memo) for v in value]
    if isinstance(value, tuple):
        return memo.setdefault(("t", value), tuple(_share(v, memo) for v in value)) if value else ()
    return value


def _encode(e: Entry, memo: dict) -> tuple:
    links = tuple((ln.target, ln.kind, ln.heading, ln.alias) for ln in e.links)
    return (
        e.path, _share(e.kind, memo), e.size_bytes, e.mtime_ns, e.title, e.inode, _share(e.frontmatter, memo),
        _share(e.tags, memo), _share(links, memo), e.content_chars, e.frontmatter_error, e.decode_error,
        _share(e.mime_type, memo), _share(e.okf_status, memo), _share(e.okf_trust, memo),
        e.stale_date.toordinal() if e.stale_date is not None else None,
        e.stale_instant.isoformat() if e.stale_instant is not None else None,
        e.anchors,
    )


_make_link = Link._make


def _decode(t: tuple, links_seen: dict) -> Entry:
    links = t[8]
    if links:
        # a note's links mostly name notes other notes link to as well (273k links, 73k
        # distinct at 100k notes): one shared Link per distinct link saves ~25 MB
        links = tuple([links_seen.get(raw) or links_seen.setdefault(raw, _make_link(raw)) for raw in links])
    sd, si = t[15], t[16]
    return make_entry(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], links, t[9], t[10], t[11], t[12], t[13],
                      t[14], dt.date.fromordinal(sd) if sd is not None else None,
                      dt.datetime.fromisoformat(si) if si is not None else None, t[17])


def encode_bucket(entries: Iterable[Entry], written_ns: int | None = None) -> bytes:
    """Marshal one bucket's entries (sorted by path) with the time they were written."""
    memo: dict = {}
    rows = [_encode(e, memo) for e in sorted(entries, key=lambda e: e.path)]
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
        self._last_change = 0.0
        self._latest: Callable[[], Iterable[Entry]] | None = None
        self.hold = False  # True while the vault looks empty/unmounted: never overwrite a good cache
        self.last_stats: WarmStats | None = None
        inside = str(self.dir.resolve()) + os.sep
        self.disabled: str | None = None
        if inside.startswith(root_real + os.sep):
            self.disabled = (f"cache folder {self.dir} lies inside the vault; caching is off "
                             "(set XDG_CACHE_HOME elsewhere)")

    # connections ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if not self.dir.is_dir():
            self.dir.mkdir(parents=True, exist_ok=True)
            (self.dir / "vault.txt").write_text(self.root_real + "\n", encoding="utf-8")
        else:
            marker = self.dir / "vault.txt"
            if not marker.exists() or time.time() - marker.stat().st_mtime > 3600:
                marker.write_text(self.root_real + "\n", encoding="utf-8")  # "in use" for prune_caches
        con = sqlite3.connect(self.db_path, timeout=5.0, isolation_level=None, check_same_thread=False)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute("PRAGMA journal_size_limit = 33554432")
            con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            con.execute("CREATE TABLE IF NOT EXISTS buckets (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
            got = dict(con.execute("SELECT key, value FROM meta").fetchall())
            if got.get("fingerprint") != FINGERPRINT or got.get("root") != self.root_real:
                had = "fingerprint" in got
                con.execute("BEGIN IMMEDIATE")
                con.execute("DELETE FROM buckets")
                con.execute("DELETE FROM meta")
                con.executemany("INSERT INTO meta VALUES (?, ?)", [
                    ("schema", str(SCHEMA_VERSION)), ("fingerprint", FINGERPRINT), ("root", self.root_real)])
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
        bad: list[str] = []
        links_seen: dict[tuple, Link] = {}
        try:
            # one bucket's bytes at a time: all 64 at once (30 MB at 100k notes) raised the
            # process's peak memory, which the allocator then kept
            for (bid,) in con.execute("SELECT id FROM buckets").fetchall():
                row = con.execute("SELECT data FROM buckets WHERE id = ?", (bid,)).fetchone()
                if row is None:
                    continue
                try:
                    written, rows = decode_bucket(row[0])
                    racy = written - RACY_NS
                    decoded = [_decode(t, links_seen) for t in rows if t[3] < racy]  # mtime safely before the write
                except (ValueError, EOFError, TypeError, IndexError, OverflowError) as exc:
                    bad.append(repr(exc))
                    self._dirty.add(bid)
                    continue
                del row, rows
                for e in decoded:
                    out[e.path] = e
        except sqlite3.DatabaseError as exc:
            con.close()
            self._discard()
            return {}, [f"cache file {self.db_path} was corrupt ({exc}); rebuilt it"]
        con.close()
        if bad:
            problems.append(f"{len(bad)} cache bucket(s) were corrupt ({bad[-1]}); their notes were parsed again")
        return out, problems

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

    def flush(self, entries: Iterable[Entry]) -> str | None:
        """Rewrite the dirty buckets from `entries` (a snapshot's). Returns a problem message or None."""
        if self.disabled or self.hold:
            return None
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        if not dirty:
            return None
        groups: dict[int, list[Entry]] = {b: [] for b in dirty}
        for e in entries:
            if e.kind == FOLDER:
                continue
            g = groups.get(bucket_of(e.path))
            if g is not None:
                g.append(e)
        try:
            con = self._connect()
            try:
                con.execute("BEGIN IMMEDIATE")
                while groups:  # one bucket's bytes at a time
                    b, es = groups.popitem()
                    con.execute("INSERT OR REPLACE INTO buckets (id, data) VALUES (?, ?)", (b, encode_bucket(es)))
                con.execute("COMMIT")
            finally:
                con.close()
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

    def flush_soon(self, latest: Callable[[], Iterable[Entry]], report: Callable[[str], None],
                   delay: float = 1.0) -> None:
        """Flush in a (non-daemon) background thread after `delay`, coalescing bursts of changes.

        Non-daemon, so a short-lived process (the CLI) still persists its cache on exit.
        """
        with self._lock:
            self._latest = latest
            if self._flush_thread is not None and self._flush_thread.is_alive():
                return
            t = threading.Thread(target=self._flush_loop, args=(report, delay), name="vaultwatch-cache",
                                 daemon=False)
            self._flush_thread = t
        t.start()

    def _flush_loop(self, report: Callable[[str], None], delay: float) -> None:
        started = time.monotonic()
        while True:
            # debounce: a burst of changes (a git checkout) is written once it settles, so the
            # flush does not compete with the index for the interpreter (at most MAX_FLUSH_WAIT)
            while not self._wake.wait(delay):
                quiet = time.monotonic() - self._last_change
                if quiet >= delay or time.monotonic() - started >= MAX_FLUSH_WAIT:
                    break
            started = time.monotonic()
            latest = self._latest
            if latest is None:
                return
            problem = self.flush(latest())
            if problem:
                report(problem)
            with self._lock:
                if not self._dirty or self.hold or self.disabled:
                    self._flush_thread = None
                    return

    def wait_flushed(self, timeout: float | None = None) -> None:
        """Flush now (skipping the coalescing delay) and wait for it (shutdown, tests)."""
        t = self._flush_thread
        if t is not None:
            self._wake.set()
            t.join(timeout)
            self._wake.clear()
