"""The facade a front end holds: open a vault, load its index, answer queries, publish events."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from .clock import Clock, SystemClock
from .errors import NotFoundError, VaultError
from .events import DocumentsChanged, EventBus, IndexProblem, IndexProgress, IndexReady
from .ignore import IgnoreRules
from .index import Index, Snapshot
from .model import Entry, Skipped
from .paths import normalize, to_disk
from .query import Query, QueryResult, run_query, stats
from .scan import FileFact, ScanConfig, entry_for, parse_attachment_exts, scan, stat_one


def demo_vault_path() -> Path:
    """The demo vault bundled with vaultwatch (the default vault of every command)."""
    return Path(__file__).resolve().parent / "demo_vault"


class Vault:
    """One vault: its index, its clock and its event bus."""

    def __init__(self, root: str | os.PathLike[str], *, clock: Clock | None = None, okf_mode: str = "auto",
                 attachment_exts: str | list[str] | None = None, bus: EventBus | None = None) -> None:
        self.root = os.path.abspath(os.fspath(root))
        if not os.path.isdir(self.root):
            raise VaultError(f"vault folder not found: {self.root!r} is not a directory; pass an existing folder")
        self.root_real = os.path.realpath(self.root)
        self.clock: Clock = clock or SystemClock()
        self.bus = bus or EventBus()
        self.index = Index(okf_mode)
        self.attachment_exts = parse_attachment_exts(attachment_exts)
        self.config = ScanConfig(self.attachment_exts, IgnoreRules.from_vault(self.root_real))
        self._ready = threading.Event()
        self._loader: threading.Thread | None = None

    @property
    def snapshot(self) -> Snapshot:
        """The current index generation."""
        return self.index.snapshot

    def load(self) -> Snapshot:
        """Scan and parse the whole vault now (blocking); publishes progress and IndexReady."""
        started = time.perf_counter()
        for problem in self.config.ignore.problems:
            self.bus.publish(IndexProblem(problem))
        entries, skipped = scan(self.root_real, self.config,
                                lambda done, total: self.bus.publish(IndexProgress("parse", done, total)))
        snap = self.index.load(entries, skipped, self.config.ignore.problems)
        self._ready.set()
        self.bus.publish(IndexReady(snap.generation, snap.note_count, time.perf_counter() - started))
        return snap

    def start(self) -> None:
        """Load the index in a background thread (queries meanwhile report `loaded=False`)."""
        if self._loader is None:
            self._loader = threading.Thread(target=self._load_safely, name="vaultwatch-index", daemon=True)
            self._loader.start()

    def _load_safely(self) -> None:
        try:
            self.load()
        except Exception as exc:  # reported, never fatal to the app
            self.bus.publish(IndexProblem(f"indexing failed: {exc!r}", "error"))
            self._ready.set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the first complete index exists; False on timeout."""
        return self._ready.wait(timeout)

    def refresh_paths(self, paths: Iterable[str], source: str = "disk") -> Snapshot:
        """Re-read the given vault-relative paths from disk and apply what changed, synchronously.

        The one way single files enter the index after start-up: the watcher calls it for
        outside edits, the write path for its own writes. A path whose size, mtime and inode
        are unchanged is a no-op, so a watcher echo of our own write costs one stat and never
        bumps the generation. A path that is gone (or now hidden/ignored) is removed, with
        everything under it when it was a folder.
        """
        snap = self.snapshot
        upserts: list[Entry] = []
        removals: list[str] = []
        skipped: list[Skipped] = []
        for rel in dict.fromkeys(paths):
            found = stat_one(self.root_real, rel, self.config) if rel else None
            old = snap.get(rel)
            if found is None:
                if old is not None:
                    removals.append(rel)
                continue
            if isinstance(found, Skipped):
                skipped.append(found)
                continue
            if old is not None and (old.kind, old.size_bytes, old.mtime_ns, old.inode) == (
                    found.kind, found.size if isinstance(found, FileFact) else found.size_bytes,
                    found.mtime_ns, found.inode):
                continue
            entry = entry_for(found) if isinstance(found, FileFact) else found
            (skipped if isinstance(entry, Skipped) else upserts).append(entry)
        if not (upserts or removals or skipped):
            return snap
        new = self.index.apply(upserts, removals, skipped)
        added = tuple(e.path for e in upserts if snap.get(e.path) is None)
        changed = tuple(e.path for e in upserts if snap.get(e.path) is not None)
        gone = tuple(p for p in snap.by_path.keys() - new.by_path.keys())
        self.bus.publish(DocumentsChanged(new.generation, added, changed, tuple(sorted(gone)), source))
        return new

    def list(self, query: Query | None = None) -> QueryResult:
        """Run the one listing query against the current snapshot."""
        return run_query(self.snapshot, query or Query(), self.clock)

    def stats(self) -> dict:
        """Counts by kind, status, staleness and trust tier."""
        return stats(self.snapshot, self.clock)

    def entry(self, path: str) -> Entry:
        """The indexed entry at a caller-supplied path (validated); NotFoundError when absent."""
        rel = normalize(path)
        to_disk(self.root_real, rel)  # symlink escapes fail loudly, even for unindexed paths
        found = self.snapshot.get(rel)
        if found is None:
            raise NotFoundError(f"not found: {rel!r} is not in the vault; list_documents shows what exists")
        return found

    def disk_path(self, path: str) -> str:
        """Validated real filesystem location of a caller-supplied vault path."""
        return to_disk(self.root_real, normalize(path))
