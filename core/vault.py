"""The facade a front end holds: open a vault, load its index, answer queries, publish events."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultwatch.core import settings
from vaultwatch.core.clock import Clock, SystemClock
from vaultwatch.core.disk.paths import normalize, to_disk
from vaultwatch.core.disk.storednames import stored_root
from vaultwatch.core.errors import JournalUnavailable, NotFoundError, QueryError, VaultError
from vaultwatch.core.events import DocumentsChanged, Event, EventBus, IndexProblem, IndexProgress, IndexReady
from vaultwatch.core.index.ignore import IgnoreRules
from vaultwatch.core.index.scan import FileFact, ScanConfig, entry_for, parse_attachment_exts, stat_one
from vaultwatch.core.index.snapshot import Index, Snapshot
from vaultwatch.core.live.foreground import Foreground
from vaultwatch.core.memory import collector_paused, freeze_long_lived
from vaultwatch.core.model import Entry, Skipped
from vaultwatch.core.query.listing import Query, QueryResult, run_query, stats
from vaultwatch.core.query.problems import template_folders

if TYPE_CHECKING:  # imported when first started
    from vaultwatch.core.index.parsepool import ProgressFn  # multiprocessing: only a parse needs it
    from vaultwatch.core.links.graph import LinkGraph, LinkReport, ResolvedLink
    from vaultwatch.core.live.watch import LiveIndex
    from vaultwatch.core.review.approval import ApprovalGate
    from vaultwatch.core.review.journal import Journal
    from vaultwatch.core.search.fulltext import SearchIndex
    from vaultwatch.core.search.results import SearchResult, SearchStatus
    from vaultwatch.core.search.semantic import VectorIndex

GC_FREEZE_MIN = 3_000  # entries (the parse pool's size too: core.index.parsepool); see load()
ARM_WAIT_S = 30.0  # s a load waits for the watcher's OS watches before it walks the disk anyway
RESUME_READY_WAIT_S = 120.0  # s the start's finishing of interrupted operations waits for the first index


def demo_vault_path() -> Path:
    """The demo vault bundled with vaultwatch (the default vault of every command)."""
    return Path(__file__).resolve().parent / "demo_vault"


class Vault:
    """One vault: its index, its clock and its event bus."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        okf_mode: str = "auto",
        attachment_exts: str | list[str] | None = None,
        bus: EventBus | None = None,
        cache: bool | None = None,
    ) -> None:
        self.root = os.path.abspath(os.fspath(root))
        if not os.path.isdir(self.root):
            raise VaultError(f"vault folder not found: {self.root!r} is not a directory; pass an existing folder")
        self.root_real = stored_root(self.root)  # its realpath, spelled as the disk stores it
        self.clock: Clock = clock or SystemClock()
        self.bus = bus or EventBus()
        self.foreground = Foreground()  # a person's input goes before agents' calls (see core.live.foreground)
        self.index = Index(okf_mode)
        self.attachment_exts = parse_attachment_exts(attachment_exts)
        self.config = ScanConfig(self.attachment_exts, IgnoreRules.from_vault(self.root_real))
        self._ready = threading.Event()
        # set once the first load's walk is known to be what the disk held when the vault came to be
        # watched (Vault.load): until then a change made while vaultwatch started may be missing
        self._start_checked = threading.Event()
        self._loader: threading.Thread | None = None
        # live index: one lock serialises every refresh (watcher, writes, rescans)
        self.refresh_lock = threading.RLock()
        self._start_lock = threading.Lock()  # creates the watcher and search index once
        self._live: LiveIndex | None = None
        self._search: SearchIndex | None = None
        self._vectors: VectorIndex | None = None
        self._links_prev: LinkGraph | None = None
        # the person's approval gate for agents' changes (core.review.approval.attach sets it; None: no gate)
        self.approval_gate: ApprovalGate | None = None
        self._journal: Journal | None = None  # the change journal (see `journal`), once set
        self._journal_set = False
        self._journal_problem: str | None = None  # why the journal meant to be on could not be opened
        self._journal_lock = threading.Lock()
        # the person started this folder as a vault of its own though it lies inside a vault of theirs
        # (--allow-nested): its journal may be made (core.review.nestedvault.journal_withheld)
        self.nested_allowed = False
        self._resumer: threading.Thread | None = None  # finish_interrupted_soon's thread, the latest
        self._resuming_agents_only = False  # that thread finishes the agents' operations alone
        self._resume_all_next = False  # a full run was asked for meanwhile: the thread runs one next
        # True while the process is busy answering (a client's burst of calls): the entry cache's
        # writes wait for it to end (at most entrycache.MAX_FLUSH_WAIT). Set by the server.
        self.answering: Callable[[], bool] | None = None
        if cache is None:
            cache = bool(settings.env("VAULTWATCH_CACHE"))
        self.entry_cache = None
        if cache:
            from vaultwatch.core.index.entrycache import EntryCache

            self.entry_cache = EntryCache(self.root_real)
            self.bus.subscribe(self._cache_on_change)

    @property
    def snapshot(self) -> Snapshot:
        """The current index generation."""
        return self.index.snapshot

    @property
    def journal(self) -> Journal | None:
        """The vault's change journal, opened on first use (core.review.journal.open_journal; None
        when it is switched off, or when it cannot be opened: `journal_problem` says so). The write path reaches it here, as it reaches `approval_gate`:
        both sit above the write path, which imports neither. The vault holds it, so it goes with
        the vault."""
        if not self._journal_set:
            said = None
            with self._journal_lock:
                if not self._journal_set:
                    said = self._open_journal_locked()
                    self._journal_set = True
            self._say_journal_problem(said)
        return self._journal

    @property
    def journal_problem(self) -> str | None:
        """Why the journal, meant to be on (VAULTWATCH_JOURNAL is not 0), could not be opened; None
        when it is open or switched off. The write path refuses agents' changes while it is set
        (core.edit.hooks): a journal that cannot be opened never reads as one switched off."""
        self.journal  # noqa: B018  (opened on first use)
        return self._journal_problem

    def reopen_journal(self) -> Journal | None:
        """Try once more to open a journal that could not be opened (the person may have moved the
        damaged file away meanwhile): an agent's change asks before it is refused, so fixing the file
        needs no restart. Returns the journal (None: still none; `journal_problem` says why)."""
        if self.journal is not None or self._journal_problem is None:
            return self._journal
        said = None
        with self._journal_lock:
            if self._journal is None and self._journal_problem is not None:
                said = self._open_journal_locked()
        self._say_journal_problem(said)
        journal = self._journal
        if journal is not None and self._live is not None:
            journal.follow(on_interrupted=self._journal_killed_writes_soon)
        return journal

    def _open_journal_locked(self) -> str | None:
        """Open the journal (the caller holds `_journal_lock`); returns a new problem to publish."""
        from vaultwatch.core.review.journal import open_journal  # noqa: PLC0415  (loaded on the first write)
        from vaultwatch.core.review.nestedvault import journal_withheld  # noqa: PLC0415

        withheld = None if self.nested_allowed else journal_withheld(self.root_real)
        if withheld is not None:  # a journal made here would make the folder a vault of its own
            new = withheld != self._journal_problem
            self._journal, self._journal_problem = None, withheld
            return withheld if new else None
        try:
            self._journal, self._journal_problem = open_journal(self), None
        except JournalUnavailable as exc:
            new = exc.message != self._journal_problem  # once per problem, not once per refused change
            self._journal, self._journal_problem = None, exc.message
            return exc.message if new else None
        return None

    def _say_journal_problem(self, message: str | None) -> None:
        if message is not None:  # (published with no lock held: a subscriber may ask for the journal)
            self.bus.publish(IndexProblem(message, "error"))

    def use_journal(self, journal: Journal | None) -> None:
        """Journal this vault's changes in `journal` (None: journal nothing) instead of opening one."""
        with self._journal_lock:
            self._journal, self._journal_set, self._journal_problem = journal, True, None
        if journal is not None and self._live is not None:
            journal.follow(on_interrupted=self._journal_killed_writes_soon)

    def load(self) -> Snapshot:
        """Scan and parse the whole vault now (blocking); publishes progress and IndexReady.

        With the entry cache on (the default), files whose size, mtime and inode match the
        cache are not read again; the cache is brought up to date in the background.
        """
        started = time.perf_counter()
        for problem in self.config.ignore.problems:
            self.bus.publish(IndexProblem(problem))
        progress = lambda done, total: self.bus.publish(IndexProgress("parse", done, total))  # noqa: E731
        later: list[Callable[[], bool]] = []
        try:
            with collector_paused():  # the scan makes ~1M long-lived objects; see the freeze below
                try:
                    snap = self._load_entries(progress, later)
                finally:
                    if len(self.index.snapshot.by_path) >= GC_FREEZE_MIN:
                        # Freeze before the collector is back on: otherwise its first pass walks every
                        # record just made, and later passes keep walking them.
                        freeze_long_lived()
            self._ready.set()
            self.bus.publish(IndexReady(snap.generation, snap.note_count, time.perf_counter() - started))
            if self.entry_cache is not None and self.entry_cache.dirty:
                self.flush_cache_soon(0.0)
        finally:
            self._check_start(later)
        return snap

    def _check_start(self, later: list[Callable[[], bool]]) -> None:
        """The first load's last step, after it is published: the forked walk's rows, made while the
        vault's watches were being placed, are checked against the disk once they are in place
        (core.index.warmscan), and a change the check finds is compared and applied as the watcher
        applies an outside change (`index_stale` until then). The first answers need not wait for
        that check; `wait_for_pending_writes` does."""
        try:
            for still_so in later:
                if not still_so():
                    live = self._live
                    if live is not None:  # (else stopped meanwhile: nothing follows the disk any more)
                        live.rescan()
        finally:
            self._start_checked.set()

    def _watched(self) -> None:
        """Return once the watcher's OS watches are in place (at once when nothing is to watch this vault:
        `prepare_watching`): a file changed after this is seen by the watcher, so a walk checked against
        the disk after it misses nothing (LiveIndex.wait_armed)."""
        live = self._live
        if live is not None:
            live.wait_armed(ARM_WAIT_S)

    def _load_entries(self, progress: ProgressFn, later: list[Callable[[], bool]]) -> Snapshot:
        with self.refresh_lock:
            if self.entry_cache is not None:
                from vaultwatch.core.index.warmscan import warm_scan

                entries, skipped = warm_scan(
                    self.entry_cache,
                    self.root_real,
                    self.config,
                    progress,
                    lambda msg, severity="warning": self.bus.publish(IndexProblem(msg, severity)),
                    watched=self._watched,
                    # checked after the index is published only when a watcher is there to apply a change
                    later=later if self._live is not None else None,
                )
            else:
                from vaultwatch.core.index.parsepool import scan

                self._watched()  # the parse dwarfs the wait: walk once the watches are in place
                entries, skipped = scan(self.root_real, self.config, progress)
            return self.index.load(entries, skipped, self.config.ignore.problems)

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
        with self.refresh_lock:
            memo: dict[str, str | None] = {}  # the folders' answers, shared by the batch (scan.walked_folder)
            found = {
                rel: (stat_one(self.root_real, rel, self.config, memo) if rel else None) for rel in dict.fromkeys(paths)
            }
            return self.apply_found(found, source)

    def apply_found(self, found_by_path: dict, source: str, moved: Iterable[tuple[str, str]] = ()) -> Snapshot:
        """Apply stat results ({path: FileFact | Entry | Skipped | None}) to the index; publish the change.

        The one place single-path changes enter the index (refresh_paths and the live
        watcher both end here). Unchanged size/mtime/inode is a no-op. `moved`: the (old, new)
        pairs the watcher found to be one file or folder under a new name (published with the change).
        """
        snap = self.snapshot
        upserts: list[Entry] = []
        removals: list[str] = []
        skipped: list[Skipped] = []
        was_skipped = {s.path for s in snap.skipped} if snap.skipped else set()
        for rel, found in found_by_path.items():
            old = snap.get(rel)
            if found is None:
                if old is not None or rel in was_skipped:
                    removals.append(rel)
                continue
            if isinstance(found, Skipped):
                skipped.append(found)
                continue
            if old is not None and (old.kind, old.size_bytes, old.mtime_ns, old.inode) == (
                found.kind,
                found.size if isinstance(found, FileFact) else found.size_bytes,
                found.mtime_ns,
                found.inode,
            ):
                continue
            entry = entry_for(found) if isinstance(found, FileFact) else found
            if isinstance(entry, Skipped):
                skipped.append(entry)
            else:
                upserts.append(entry)
        if not (upserts or removals or skipped):
            return snap
        new = self.index.apply(upserts, removals, skipped)
        added = tuple(e.path for e in upserts if snap.get(e.path) is None)
        changed = tuple(e.path for e in upserts if snap.get(e.path) is not None)
        # only removals and newly skipped files take paths away (an upsert never does): skip the
        # whole-index set difference for plain edits, which matters at 100k notes
        gone = tuple(sorted(snap.by_path.keys() - new.by_path.keys())) if (removals or skipped) else ()
        pairs: tuple[tuple[str, str], ...] = ()
        if moved and gone and added:
            went, came = set(gone), set(added)
            pairs = tuple((a, b) for a, b in moved if a in went and b in came)
        self.bus.publish(DocumentsChanged(new.generation, added, changed, gone, source, pairs))
        return new

    def list(self, query: Query | None = None) -> QueryResult:
        """Run the one listing query against the current snapshot."""
        return run_query(self.snapshot, query or Query(), self.clock)

    def stats(self, snapshot: Snapshot | None = None, clock: Clock | None = None) -> dict:
        """Counts by kind, status, staleness and trust tier (of `snapshot`, as of `clock`: by default
        the current index and the vault's clock); problems in the templates folders left out, as the
        Broken tab leaves them."""
        return stats(snapshot or self.snapshot, clock or self.clock, template_folders(self.root))

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

    # --- live index: cache, watcher, pending writes, search, links -------------------

    def _cache_on_change(self, event: Event) -> None:
        if isinstance(event, DocumentsChanged) and self.entry_cache is not None:
            self.entry_cache.mark_dirty((*event.added, *event.changed, *event.removed))
            self.flush_cache_soon()

    def keep_rows(self, row_of: Callable[[Entry], Any]) -> None:
        """Have the entry cache keep, beside each entry it writes, what `row_of(entry)` gives (opaque here: a
        front end's listing row, core.serialize.StoredRow), and a load hand it back (`kept_rows`): a warm
        start's first listing then makes no row again. The first caller's `row_of` is the one kept; one that
        raises keeps nothing for that entry. Call before the load (a load before it hands nothing back)."""
        cache = self.entry_cache
        if cache is None or cache.row_of is not None:
            return

        def guarded(entry: Entry) -> Any:
            try:
                return row_of(entry)
            except Exception:  # a row is only ever made again: never a reason to lose the cache's write
                return None

        cache.row_of = guarded

    def kept_rows(self) -> dict[str, tuple[Entry, Any]]:
        """By path, what `keep_rows`' row_of gave for each entry when the cache was written, with the Entry the
        last load made of it: handed over (whoever serves a row pops it); empty without a cache."""
        cache = self.entry_cache
        return {} if cache is None else cache.kept_rows()

    def flush_cache_soon(self, delay: float = 1.0) -> None:
        cache = self.entry_cache
        if cache is not None:
            cache.flush_soon(
                lambda: self.snapshot.entries, lambda msg: self.bus.publish(IndexProblem(msg)), delay, self.answering
            )

    def prepare_watching(self) -> LiveIndex:
        """Make the vault's watcher and applier (not started; `start_watching` starts them) when there are
        none. A load begun after this and before the watches are in place checks its walk against the
        disk once they are (`_watched`): call it before `start()` when watching follows the load."""
        with self._start_lock:
            if self._live is None:
                from vaultwatch.core.live.watch import LiveIndex

                self._live = LiveIndex(self)
            return self._live

    def start_watching(self) -> None:
        """Watch the vault folder and apply outside changes to the index (idempotent).

        Call before or after `start()`/`load()`: changes seen while the index loads are
        applied once it is ready, and a load begun after `prepare_watching` misses no change made
        before the watches were in place. Stop with `stop()`.
        """
        self.prepare_watching().start()
        # a watching process shows what other processes journal (a CLI revert while the TUI runs):
        # their rows are announced from the journal's commits, whatever order their disk events come in
        journal = self.journal
        if journal is not None:
            journal.follow(on_interrupted=self._journal_killed_writes_soon)
        self.finish_interrupted_soon()  # what a killed run left half done, once the index is ready

    def finish_interrupted_soon(self, *, agents_only: bool = False) -> bool:
        """Finish or roll back what a killed process left open in the journal (an interrupted revert,
        rename, batch revert, redo or approval: core.review.resume), in a thread of its own that waits
        for the first index: the start's first answers never wait for it, and it runs whatever calls
        come or do not come. Every front end that serves the vault or writes to it calls it as it
        starts: `start_watching` (every `serve`, and the TUI's watcher), the MCP host and the TUI; a
        call while one runs is that one, and another process finishing them at the same moment is
        left to it (resume.claim). With nothing to finish it costs one look at the journal. A
        watching process's journal has it finish what an agent's killed server left (`agents_only`,
        Journal.follow: its renames rolled back, its writes journaled). Returns False when a run
        already under way was left to go on."""
        with self._start_lock:
            if self._resumer is not None and self._resumer.is_alive():
                # a full run asked for while one for the agents' operations alone runs: it follows that one
                self._resume_all_next = self._resume_all_next or (self._resuming_agents_only and not agents_only)
                return False
            self._resuming_agents_only = agents_only
            self._resumer = threading.Thread(
                target=self._finish_interrupted, args=(agents_only,), name="vaultwatch-resume", daemon=True
            )
            self._resumer.start()
            return True

    def _journal_killed_writes_soon(self) -> bool:
        return self.finish_interrupted_soon(agents_only=True)

    def _finish_interrupted(self, agents_only: bool = False) -> None:
        self._finish_interrupted_once(agents_only)
        with self._start_lock:
            again, self._resume_all_next = self._resume_all_next, False
            self._resuming_agents_only = self._resuming_agents_only and not again
        if again:
            self._finish_interrupted_once(False)

    def _finish_interrupted_once(self, agents_only: bool) -> None:
        # its writes refresh the index: after the first load, and after the load's check of the disk has
        # been applied, so that what the killed run left (its new folders) is seen while its intent is open
        self.wait_for_pending_writes(RESUME_READY_WAIT_S)
        if not self._may_hold_intents():
            return
        journal = self.journal
        if journal is None or not journal.open_intents(interrupted=True):
            return
        # the write path and the revert modules load only now: a start with nothing to finish never
        # loads them (a warm start's first answer needs neither)
        from vaultwatch.core.review.resume import resume_and_report  # noqa: PLC0415

        resume_and_report(self, journal, agents_only=agents_only)

    def _may_hold_intents(self) -> bool:
        """Whether the journal may hold an open intent. A process that has not opened the journal (a
        TUI showing no changes yet) opens it only when its file holds one: opening it starts
        recording outside edits."""
        from vaultwatch.core.review.journal import has_intents, journal_path  # noqa: PLC0415

        return self._journal_set or has_intents(journal_path(self.root_real))

    def unsettled_temp_files(self) -> set[str] | None:
        """The temporary files of agents' writes a kill cut off that are not settled yet
        (`Journal.intent_temps`): a sweep leaves them to the settling, which reads them to tell
        whether each write landed. Opens no journal that holds no intent. None when the journal
        cannot be opened: which files its intents name is unknown, so a sweep keeps every one."""
        if not self._may_hold_intents():
            return set()
        journal = self.journal
        if journal is None:
            return None if self._journal_problem is not None else set()
        return journal.intent_temps()

    def wait_watching(self, timeout: float | None = None) -> bool:
        """Block until the watcher's OS watches are in place (when it publishes WatcherReady), so
        an outside edit made after this returned True is seen. Also waits for `start_watching()`
        when another thread has yet to call it. False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            live = self._live
            step = 0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))
            if live is not None:
                if live.watching.wait(step):
                    return True
            else:
                time.sleep(step)
            if deadline is not None and time.monotonic() >= deadline:
                live = self._live
                return live is not None and live.watching.is_set()

    def start_search(self) -> SearchIndex:
        """Build (or bring up to date) the full-text index in the background (idempotent).
        Returns the core.search.fulltext.SearchIndex."""
        with self._start_lock:
            if self._search is None:
                from vaultwatch.core.index.entrycache import vault_cache_dir
                from vaultwatch.core.search.fulltext import SearchIndex

                base = (
                    self.entry_cache.dir
                    if self.entry_cache is not None and not self.entry_cache.disabled
                    else vault_cache_dir(self.root_real)
                )
                self._search = SearchIndex(self, base / "search.sqlite")
                self._search.start()
            return self._search

    def start_vectors(self) -> VectorIndex | None:
        """Compute note vectors for semantic search in the background, after the full-text index
        (idempotent). Returns the core.search.semantic.VectorIndex, or None without the `semantic`
        extra (or with VAULTWATCH_SEMANTIC=0)."""
        from vaultwatch.core.search import semantic

        if not semantic.offered():
            return None
        index = self.start_search()
        with self._start_lock:
            if self._vectors is None:
                self._vectors = semantic.VectorIndex(self, index, index.db_path.with_name("vectors.npz"))
                self._vectors.start()
            return self._vectors

    def start_live(self, *, search: bool = True) -> None:
        """Everything a long-running front end wants: watch, load in the background, index for
        search. Note vectors are not started here: the first query by meaning starts them
        (`search` with mode semantic or hybrid, `similar`, `prepare_semantic_queries`), so a
        process nobody asks by meaning never loads the model nor starts its worker process."""
        # the load first: its walk runs in a process of its own while the watches are placed (which
        # walks the vault too, holding the interpreter), and is checked once they are (_watched)
        self.prepare_watching()
        self.start()
        self.start_watching()
        if search:
            self.start_search()
        from vaultwatch.core.edit.atomic import clean_temp_files_soon

        clean_temp_files_soon(self)  # what a killed run's writes left behind

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and indexing, and write the entry cache out. Safe to call twice; the
        index stays readable, and `start_watching()`/`search()` start afresh afterwards. With the
        journal open, outside changes the watcher was told of are applied and journaled first
        (LiveIndex.drain, at most DRAIN_S)."""
        live = self._live
        if live is not None and self._journal_set and self._journal is not None:
            # outside changes the kernel or the watcher already hold are this process's to journal:
            # the next start indexes them, but journals nothing it did not watch happen
            from vaultwatch.core.live.watch import DRAIN_S  # noqa: PLC0415  (loaded with the watcher)

            live.drain(time.monotonic() + min(DRAIN_S, timeout))
        live, self._live = self._live, None
        if live is not None:
            live.stop(timeout)
        if self._journal_set and self._journal is not None:
            self._journal.recheck_now()  # (the watcher has stopped: no outside row comes after these)
            self._journal.stop_following()
        # under the start lock: an index another thread is starting right now is taken once started
        with self._start_lock:
            vectors, self._vectors = self._vectors, None
            search, self._search = self._search, None
        if vectors is not None:
            vectors.stop(timeout)
        if search is not None:
            search.stop(timeout)
        cache = self.entry_cache
        if cache is not None:
            cache.wait_flushed(timeout)
            if cache.dirty and self._ready.is_set():
                problem = cache.flush(self.snapshot.entries)
                if problem:
                    self.bus.publish(IndexProblem(problem))

    def wait_for_pending_writes(self, timeout: float | None = 10.0) -> bool:
        """Wait until every change known now is in the index (and the search index, once built).

        "Known" means: the initial load and its check of the disk (`_check_start`), every change
        made on disk before the call (outside edits the OS has not handed to the watcher yet or
        that wait in its debounce window included: see LiveIndex.wait_settled, which costs up to
        one watcher tick, ~50 ms), and changes queued for full-text indexing. Writes made through
        vaultwatch are applied synchronously and are never pending. Returns False when `timeout`
        (seconds) passed first: answer from the current index and report `index_stale`.
        """
        deadline = time.monotonic() + (timeout if timeout is not None else 3600.0)
        if not self.wait_ready(max(0.0, deadline - time.monotonic())):
            return False
        if not self._start_checked.wait(max(0.0, deadline - time.monotonic())):
            return False  # (the start's check queues its rescan before this is set: waited for below)
        live, search = self._live, self._search
        if live is not None and not live.wait_settled(deadline):
            return False
        if search is not None and not search.wait_synced(deadline):
            return False
        return True

    @property
    def index_stale(self) -> bool:
        """True while the listing may lag the disk: loading, watcher changes in flight (a change the
        first load's check found among them), the vault folder gone or held back because it suddenly
        looked empty. As for a change the watcher has yet to hand over, a check still under way is
        not a lag known (`wait_for_pending_writes` waits for both)."""
        if not self._ready.is_set() or not self.snapshot.loaded:
            return True
        live = self._live
        if live is not None and (live.pending or live.root_missing or live.holding):
            return True
        return self.entry_cache is not None and self.entry_cache.hold

    def search(
        self,
        text: str,
        scope: Query | None = None,
        *,
        folder: str | None = None,
        recursive: bool | None = None,
        pattern: str | None = None,
        filters: Mapping[str, Any] | Iterable[tuple[str, str]] | None = None,
        exclude: Mapping[str, Any] | Iterable[tuple[str, str]] | None = None,
        limit: int = 20,
        cursor: str | None = None,
        count: bool | None = None,
        wait: float = 0.0,
        mode: str | None = None,
    ) -> SearchResult:
        """Full-text search, ranked, with the listing's scoping arguments. Returns a SearchResult.

        text: words, "phrases", prefix* and -excluded words (every input is safe).
        scope / folder / recursive / pattern / filters / exclude: exactly the listing's
            semantics (a `Query`, or its fields as keywords; filters as {key: value}).
        limit (1-1000), cursor: paging (`next_cursor` of the previous result). `count` is
            accepted for compatibility; `total` is always counted.
        wait: seconds to wait for a first full-text index build before answering.
        mode: "keyword", "semantic" or "hybrid" (core.search.hybrid; the latter two need the
            semantic extra); None: hybrid once note vectors are ready, else keyword.
        Raises QueryError for bad arguments, SearchNotReady (a QueryError) while the full-text
        index is still being built (starts building it on first use).
        """
        from vaultwatch.core.search.fulltext import scope_query

        index = self.start_search()
        q = scope_query(scope, folder=folder, recursive=recursive, pattern=pattern, filters=filters, exclude=exclude)
        if wait > 0:
            self.wait_search_ready(wait)
        elif not index.ready:
            self._hurry_search(index)  # someone is asking (a person's search retries): no more giving way to calls
        from vaultwatch.core.search import hybrid

        vectors = self._vectors if mode is None else (self.start_vectors() if mode != "keyword" else None)
        used = hybrid.resolve_mode(mode, vectors)
        if used == "keyword" or vectors is None:  # resolve_mode refuses other modes without vectors
            return index.search(text, q, limit=limit, cursor=cursor, count=count)
        if wait > 0:
            vectors.wait_ready(wait)
        if used == "hybrid" and not vectors.ready and not vectors.problem:
            # words and meaning were asked for while the vectors are still being computed (the
            # first query by meaning starts them): the words' half now, and the answer says so
            result = index.search(text, q, limit=limit, cursor=cursor, count=count)
            return replace(result, note=hybrid.building_note(vectors))
        return hybrid.search(self, index, vectors, text, q, used, limit=limit, cursor=cursor)

    def similar(
        self,
        path: str,
        scope: Query | None = None,
        *,
        folder: str | None = None,
        pattern: str | None = None,
        filters: Mapping[str, Any] | Iterable[tuple[str, str]] | None = None,
        limit: int = 10,
        wait: float = 0.0,
    ) -> SearchResult:
        """Notes like the note at `path`, nearest by meaning first (a SearchResult; needs the
        semantic extra, else a QueryError that says so)."""
        from vaultwatch.core.search import hybrid
        from vaultwatch.core.search.fulltext import scope_query

        index = self.start_search()
        vectors = self.start_vectors()
        if vectors is None:
            raise QueryError("similar needs semantic search: install vaultwatch[semantic]")
        if wait > 0:
            self.wait_search_ready(wait)
            vectors.wait_ready(wait)
        q = scope_query(scope, folder=folder, pattern=pattern, filters=filters)
        return hybrid.similar(self, index, vectors, path, q, limit=limit)

    def prepare_semantic_queries(self) -> None:
        """Queries by meaning are about to come (the person opened search): start the note
        vectors (computed, or read from their cache, in the background) and load what embedding
        a query needs, on a thread of its own (the vectors' start imports numpy). A no-op
        without the semantic extra."""

        def prepare() -> None:
            vectors = self.start_vectors()
            if vectors is not None:
                vectors.prepare_queries()

        threading.Thread(target=prepare, name="vaultwatch-semantic-start", daemon=True).start()

    def semantic_status(self) -> dict:
        """What semantic search offers now: installed, started (something asked by meaning), ready,
        done/total vectors, problem."""
        from vaultwatch.core.search import semantic

        v = self._vectors
        return {
            "installed": semantic.offered(),
            "started": v is not None,
            "ready": bool(v and v.ready),
            "done": v.done if v else 0,
            "total": v.total if v else 0,
            "problem": v.problem if v else None,
        }

    def search_status(self) -> SearchStatus:
        """Progress of the full-text index (a SearchStatus); starts building it if needed."""
        return self.start_search().status()

    def search_ready(self) -> bool:
        """Whether the full-text index is built and answering now; unlike `search_status`, starts nothing."""
        index = self._search
        return index is not None and index.ready

    def vectors_started(self) -> bool:
        """Whether a query by meaning has started note vectors (then a search with no mode is hybrid once
        they are ready); a cheap look, for a caller on every search (`semantic_status` says more)."""
        return self._vectors is not None

    def wait_search_ready(self, timeout: float | None = None) -> bool:
        """Block until the full-text index is built; False on timeout or when it failed."""
        index = self.start_search()
        deadline = time.monotonic() + (timeout if timeout is not None else 3600.0)
        while not index.ready:
            if index.problem or time.monotonic() >= deadline:
                return False
            self._hurry_search(index)
            time.sleep(0.02)
        return True

    def _hurry_search(self, index: SearchIndex) -> None:
        """A search waits for the full-text build: the build, which rests while calls come, goes on without
        its rests, and so does the entry cache's write, which a first build waits for."""
        index.hurry()
        cache = self.entry_cache
        if cache is not None:
            cache.hurry()

    def _graph(self) -> LinkGraph:
        from vaultwatch.core.links.graph import graph

        g = graph(self.snapshot, self._links_prev)
        self._links_prev = g
        return g

    def links(self, path: str) -> LinkReport:
        """Outgoing links, backlinks and broken links of one note (a LinkReport); validated path."""
        entry = self.entry(path)
        return self._graph().report(entry.path)

    def broken_links(self) -> tuple[ResolvedLink, ...]:
        """Every link in the vault that resolves to nothing (ResolvedLinks, by source path)."""
        return self._graph().broken

    def orphans(self) -> tuple[str, ...]:
        """Notes with no links in or out (in path order)."""
        return self._graph().orphans()
