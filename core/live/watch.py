"""Keep a vault's index live: watch the filesystem, apply what changed, account for what is pending.

Two threads per vault. The watcher runs watchfiles (50 ms debounce, 5 ms step: latency,
not the 1.6 s default) and turns each batch of raw events into vault-relative paths. The
applier drains every batch queued meanwhile (a `git checkout` flood becomes a few large
refreshes), stats the paths once per folder, walks folders that appeared, reuses parsed
entries of files that merely moved, and applies the result through the vault's one refresh
path (`Vault.apply_found`), which publishes DocumentsChanged with the new generation.

Trouble is survived and reported as IndexProblem events: a deleted or unmounted vault root
keeps the index as it was (and the watcher waits for the root to come back, then rescans);
a vault that suddenly looks empty is not applied; a changed `.vaultwatchignore` or
`.obsidian/app.json` reloads the ignore rules and rescans.

Lost events: when the kernel's queue of file events overflows (more than
/proc/sys/fs/inotify/max_queued_events waiting), the OS drops events; notify reports that
as a path-less "rescan" event, which watchfiles 1.3 discards (samuelcolvin/watchfiles#348).
So the watcher watches for the two ways a queue overflows: the process stalled (suspended,
stopped, starved: a gap between two of its wake-ups longer than STALL_S) or a single batch
of at least BURST_RECHECK changes. Either schedules a full comparison of the disk with the
index at the next quiet moment, and a comparison that finds changes no event reported
publishes an IndexProblem saying how many were missed and that they are indexed now.

Pending changes: `wait_settled` is a barrier on the watcher's cycles. It returns once a
watchfiles call that was still running SETTLE_MS after the wait began has returned and
everything queued by then is applied, so edits still in the OS queue or in the debounce
window when the wait began are in the index when it returns.

An orderly exit drains (`drain`, from Vault.stop): what the kernel queued for the watcher and what
watchfiles holds in its debounce window would otherwise die with the process, and an outside change
made in the exit's last moments would be applied (and journaled) by nobody. The drain waits until
the kernel's queue for the watcher's inotify descriptors is read (FIONREAD), then for one watchfiles
look after that, then for the applier; with nothing pending that is the rest of the watcher's
current look. Bounded (DRAIN_S): it runs on the way out of a process somebody asked to end.

Over 500 lines on purpose: LiveIndex is one state machine. Its watch loop,
apply loop, barrier (`wait_settled`) and overflow accounting share one queue, one condition
and one cycle counter; the barrier's guarantee is a statement about both loops at once, so
splitting them would put that shared state behind an interface no one else uses.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, cast

from vaultwatch.core import handoffs, platform
from vaultwatch.core.disk.paths import MAX_PATH_CHARS, displayable, is_hidden, unaddressable
from vaultwatch.core.events import ExcludedGone, IndexProblem, WatcherReady
from vaultwatch.core.index.ignore import IgnoreRules
from vaultwatch.core.index.scan import FileFact, Found, ScanConfig, is_dir, listed_elsewhere, visit, walk, walked_folder
from vaultwatch.core.model import FOLDER, NOTE, Entry, Skipped

if TYPE_CHECKING:  # vault.py imports this module
    from vaultwatch.core.index.snapshot import Snapshot
    from vaultwatch.core.vault import Vault

DEBOUNCE_MS = 50
# watchfiles hands a batch over once a step passes with no new event, so a lone outside change
# waits one to two steps before the applier sees it; the step is the idle wake-up period too
# (one short take of the interpreter each time, far below a core's percent)
STEP_MS = 5
TICK_MS = 50  # the watcher wakes at least this often: to check on the vault root, and to settle waits
SETTLE_MS = 25  # how long the OS gets to hand a finished write's event to the watcher (see wait_settled)
POLL_DELAY_MS = 500  # the polling fallback's period
# Bound on an exit's drain. An MCP client gives a stdio server a short grace after it closes the
# server's input and then sends SIGTERM (the SDKs' shutdown), and the person quitting the TUI waits
# for it: a drain must end well inside that grace, whatever a hung disk or a locked journal does to
# the applier. Applying what is pending takes far less, even for a large moved folder, so the bound
# is reached only when something is wrong (what is left then is the next start's, unjournaled).
DRAIN_S = 1.0
# after the kernel's queue is seen empty, the watcher's own thread may still be putting the events it
# just read into the batch watchfiles hands over: brief work, with room for that thread to wait for a core
DRAIN_HANDLE_MS = 2 * STEP_MS
STALL_S = 1.0  # a gap this long between two watcher wake-ups may have overflowed the OS event queue
QUICK_PATHS = 50  # changed paths: a batch this small goes in with quick hand-offs (see _enqueue)
EMPTY_GUARD = 10  # removing more than this many entries and leaving an empty root is held back
RULE_FILES = frozenset({".vaultwatchignore", ".obsidian/app.json"})


def _queue_limit() -> int:
    try:
        with open("/proc/sys/fs/inotify/max_queued_events") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 16_384


QUEUE_LIMIT = _queue_limit()  # events the OS queues for one watcher before dropping them
# One batch this big means thousands of raw events (a file write alone is three) arrived within
# a debounce window: close enough to the queue limit to check the whole vault afterwards.
BURST_RECHECK = max(QUEUE_LIMIT // 16, 256)


class _ArmingStop:
    """The stop event handed to watchfiles, which also tells when the OS watches are in place.

    watchfiles asks its stop event `is_set()` only from inside a watch session's waits, and a
    session's watches are all in place before its first wait: so the first question means the
    vault is watched. (watchfiles' own first yield comes a timeout later, when nothing changes.)

    It is also asked once every step, just before watchfiles looks whether changes are waiting:
    `asked_at` (monotonic) is when its current call last looked (LiveIndex.drain).
    """

    def __init__(self, stop: threading.Event, armed: threading.Event) -> None:
        self._stop, self._armed = stop, armed
        self._said = False
        self.asked_at = float("-inf")

    def is_set(self) -> bool:
        self.asked_at = time.monotonic()
        if not self._said:
            self._said = True
            self._armed.set()
        return self._stop.is_set()


def _wall() -> float:
    """Seconds on a clock that keeps running while the process is stopped or the machine sleeps."""
    try:
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    except (AttributeError, OSError):
        return time.monotonic()


def stat_many(root_real: str, rels: Iterable[str], config: ScanConfig) -> dict[str, Found | None]:
    """Stat vault paths the way the walk would, one directory listing per parent folder.

    None marks a path that is absent, hidden or not part of the vault.
    """
    by_parent: dict[str, list[str]] = {}
    out: dict[str, Found | None] = {}
    for rel in rels:
        if not rel or is_hidden(rel):
            out[rel] = None
            continue
        parent, _, _ = rel.rpartition("/")
        by_parent.setdefault(parent, []).append(rel)
    for parent, group in by_parent.items():
        names = {rel.rpartition("/")[2]: rel for rel in group}
        for rel in group:
            out[rel] = None
        if parent and walked_folder(root_real, parent, config) != parent:
            continue  # spelled through a symlinked folder the walk does not follow (or leading out)
        try:
            with os.scandir(os.path.join(root_real, *parent.split("/")) if parent else root_real) as it:
                for de in it:
                    wanted = names.get(de.name)
                    if wanted is None:
                        continue
                    rel = wanted
                    bad = unaddressable(de.name, at_root=not parent)
                    if bad is not None or len(rel) > MAX_PATH_CHARS:
                        out[rel] = Skipped(displayable(rel), f"cannot be addressed: {bad or 'path too long'}")
                        continue
                    if de.is_symlink() and is_dir(de) and listed_elsewhere(de.path, root_real, config):
                        out[rel] = Skipped(
                            rel, "symlinked folder already listed at its real path (a loop or a duplicate)"
                        )
                        continue
                    try:
                        found = visit(de, rel, root_real, config, set())
                    except OSError as exc:
                        found = Skipped(rel, f"unreadable: {exc.strerror or exc}")
                    out[rel] = cast("tuple[Entry, str]", found)[0] if type(found) is tuple else cast(Found, found)
        except OSError:
            pass
    return out


def walk_under(root_real: str, folder: Entry, config: ScanConfig) -> Iterator[Found]:
    """Everything below an indexed folder (not the folder itself), as the full walk would find it."""
    return walk(root_real, config, start=folder.path)


def _rel_of(found: Found) -> str:
    return found.rel if isinstance(found, FileFact) else found.path


def _visible_names(root_real: str) -> bool:
    """True when the vault root lists at least one non-hidden name."""
    try:
        with os.scandir(root_real) as it:
            return any(not de.name.startswith(".") for de in it)
    except OSError:
        return False


class LiveIndex:
    """The watcher and applier threads of one vault, and the count of changes still in flight."""

    def __init__(self, vault: Vault, *, debounce_ms: int = DEBOUNCE_MS, step_ms: int = STEP_MS) -> None:
        self.vault = vault
        self.debounce_ms, self.step_ms = debounce_ms, step_ms
        self._cond = threading.Condition()
        self._batches: list[tuple[set[str], bool, str | None]] = []  # (paths, rescan, why a rescan re-checks)
        self._quick = 0  # quick blocks (core.handoffs) begun for the queued batches, ended once applied
        self._received = 0
        self._applied = 0
        self._cycle_at = float("-inf")  # monotonic time the watcher last returned from watchfiles
        # monotonic time of the last look at waiting changes by a watchfiles call whose batch is queued
        # (see drain); and the inotify descriptors of the current watch session (empty: none known)
        self._looked_at = float("-inf")
        self._os_queues: frozenset[int] = frozenset()
        self.polling = False
        self.recheck_due = False  # events may have been lost: a full comparison waits for a quiet moment
        self.rechecks = 0  # full comparisons made because events may have been lost
        self.missed = 0  # changes those comparisons found that no event ever reported
        # paths a re-check found changed, until events for them turn up (then they were only late):
        # (paths, why, when the re-check was applied)
        self._suspects: tuple[set[str], str, float] | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.root_missing = False
        self.holding = False  # a change that would have emptied the vault is held back
        self.watching = threading.Event()  # set once the OS watches on the vault are in place
        # set once the first watch session has its OS watches in place, or could not get them (see
        # wait_armed): the first load's walk is checked against the disk after it (core.index.warmscan)
        self.armed = threading.Event()
        self.last_batch_size = 0

    # lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """Start watching (idempotent). Events that arrive before the index is loaded wait for it."""
        if self._threads:
            return
        for target, name in ((self._watch_loop, "vaultwatch-watch"), (self._apply_loop, "vaultwatch-apply")):
            t = threading.Thread(target=target, name=name, daemon=True)
            self._threads.append(t)
            t.start()

    def wait_armed(self, timeout: float) -> bool:
        """Block until the first watch session's OS watches are in place (or it failed, or the vault
        folder is missing, or the watcher stopped): a change made on disk after this returns reaches
        the watcher. Placing the watches walks the whole vault and holds the interpreter meanwhile, so
        a load's walk begun before it saw the disk before the watches did: it is checked once this
        returns (core.index.warmscan). False on timeout."""
        return self.armed.wait(timeout)

    def stop(self, timeout: float = 3.0) -> None:
        """Stop both threads; changes not yet applied are dropped (the next start rescans them)."""
        self._stop.set()
        self.armed.set()  # nobody waits for watches that will never come
        with self._cond:
            self._cond.notify_all()
            self._end_quick()  # batches no one will apply now
        for t in self._threads:
            t.join(timeout)

    @property
    def pending(self) -> int:
        """Change batches received from the watcher and not yet applied to the index (a full
        comparison that is due because events may have been lost counts as one)."""
        return self._received - self._applied + self.recheck_due

    def wait_settled(self, deadline: float) -> bool:
        """Wait until every change made on disk before this call is applied to the index.

        First a barrier on the watcher: a watchfiles call still running SETTLE_MS after this
        call began must have returned (so an event the OS queued before this call, or one
        waiting in the debounce window, has been handed over), then `wait_applied`. False at
        the deadline (monotonic). With the vault folder gone there is nothing to wait for:
        returns at once (`Vault.index_stale` says the index cannot follow the disk).
        """
        asked = time.monotonic()
        settle = (SETTLE_MS + (POLL_DELAY_MS if self.polling else 0)) / 1000
        with self._cond:
            while not (
                self.root_missing
                or (self.watching.is_set() and self._cycle_at >= asked + settle and not self.recheck_due)
            ):
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(left)
        return self.wait_applied(deadline)

    def drain(self, deadline: float) -> bool:
        """Have every change the watcher was told of before this call applied: what the kernel
        queued for it, what watchfiles holds in its debounce window, what waits for the applier.

        For an orderly exit (Vault.stop), where `stop` would drop them. With the kernel's queue
        readable (Linux) it costs, with nothing pending, the rest of the watcher's current look
        (at most a tick); elsewhere, and while polling, the OS gets SETTLE_MS (and a poll) as in
        `wait_settled`. False at the deadline (monotonic), or when nothing is watching to drain.
        """
        if not self._threads or self._stop.is_set() or not self.vault.wait_ready(0):
            return False  # a load still under way sees the disk itself
        since = self._os_read(deadline)
        with self._cond:
            while self.watching.is_set() and not self.root_missing and self._looked_at < since:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(left)
        return self.wait_applied(deadline)

    def _os_read(self, deadline: float) -> float:
        """The monotonic time from which a look by watchfiles finds every change the OS reported
        before this call: once the kernel's queue for the watches is seen empty, the events it held
        are in watchfiles' hands (notify's thread reads it as soon as it is readable)."""
        asked = time.monotonic()
        fds = self._os_queues
        if self.polling or not fds:
            return asked + (SETTLE_MS + (POLL_DELAY_MS if self.polling else 0)) / 1000
        while True:
            queued = platform.queued_event_bytes(fds)
            now = time.monotonic()
            if queued is None:
                return asked + SETTLE_MS / 1000
            if queued == 0 or now >= deadline:
                return now + DRAIN_HANDLE_MS / 1000
            time.sleep(self.step_ms / 1000)

    def wait_applied(self, deadline: float) -> bool:
        """Wait until every batch received so far is applied; False at the deadline (monotonic)."""
        with self._cond:
            target = self._received
            while self._applied < target:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(left)
        return True

    def rescan(self) -> None:
        """Queue a full comparison of the disk with the index (counts as a pending change)."""
        self._enqueue(set(), True)

    def recheck(self, why: str) -> None:
        """Queue a full comparison because events may have been lost; changes it finds are reported."""
        self.rechecks += 1
        with self._cond:
            self._enqueue(set(), True, why)
            self.recheck_due = False

    def _report(self, message: str, severity: str = "warning") -> None:
        self.vault.bus.publish(IndexProblem(message, severity))

    def _due(self) -> None:
        with self._cond:
            self.recheck_due = True

    def _enqueue(self, rels: set[str], rescan: bool, why: str | None = None) -> None:
        # A small change to a loaded index: quick hand-offs from the moment it is queued until it
        # is applied, so that neither the wake-up of the applier nor its work waits out the switch
        # interval while another thread runs Python (see _apply_quickly).
        quick = not rescan and 0 < len(rels) <= QUICK_PATHS and self.vault.wait_ready(0)
        with self._cond:
            if quick and not self._stop.is_set():
                handoffs.begin_quick()
                self._quick += 1
            self._batches.append((rels, rescan, why))
            self._received += 1
            self._cond.notify_all()

    # the watcher ------------------------------------------------------------------------------
    def _root_inode(self) -> int | None:
        try:
            st = os.stat(self.vault.root_real)
        except OSError:
            return None
        return st.st_ino if os.path.isdir(self.vault.root_real) else None

    def _report_missed(self) -> None:
        """Half a second after a re-check, its changed paths that no event has reported since were
        missed by the watcher (lost events never come; late ones come within milliseconds)."""
        with self._cond:
            suspects = self._suspects
            if suspects is None or time.monotonic() - suspects[2] < 0.5 or self._applied < self._received:
                return
            self._suspects = None
        paths, why, _ = suspects
        if paths:
            self.missed += len(paths)
            self._report(
                f"file watcher missed {len(paths):,} change(s) because {why}; re-checked the whole vault "
                "and indexed them"
            )

    def _cycle_done(self, looked: float) -> None:
        with self._cond:
            self._cycle_at = time.monotonic()
            self._looked_at = looked
            self._cond.notify_all()

    def _watch_loop(self) -> None:
        import watchfiles

        root = self.vault.root_real
        prefix = root + os.sep
        failures = 0
        polling = False
        needs_rescan = False  # set when events may have been missed; done once the new watches are in place
        while not self._stop.is_set():
            ino = self._root_inode()
            if ino is None:
                self.armed.set()  # nothing to watch: a load waiting for the watches goes on (and finds no vault)
                if not self.root_missing:
                    with self._cond:
                        self.root_missing = True
                        self._cond.notify_all()  # waiters stop waiting for a folder that is gone
                    self.watching.clear()
                    self._report(
                        f"vault folder {root} was deleted or unmounted; keeping the index as it was "
                        "and waiting for the folder to come back",
                        "error",
                    )
                self._stop.wait(0.25)
                continue
            if self.root_missing:
                self.root_missing = False
                self._report(f"vault folder {root} is back; re-indexing it", "info")
                needs_rescan = True
            self.polling = polling
            known = None if polling else platform.inotify_fds()
            last_wake = None  # _wall() at the previous yield of this watch session
            recheck: tuple[str, float] | None = None  # (why, since when) a full comparison is due
            in_burst = False  # a burst re-check was queued: the rest of that burst waits for its end
            stop = _ArmingStop(self._stop, self.armed)
            try:
                for changes in watchfiles.watch(
                    root,
                    watch_filter=None,
                    debounce=self.debounce_ms,
                    step=self.step_ms,
                    stop_event=stop,
                    rust_timeout=TICK_MS,
                    yield_on_timeout=True,
                    raise_interrupt=False,
                    ignore_permission_denied=True,
                    force_polling=polling,
                    poll_delay_ms=POLL_DELAY_MS,
                ):
                    failures = 0
                    looked = stop.asked_at  # (the look that handed these over, made just before it returned)
                    if not self.watching.is_set():  # the first yield: the OS watches are in place
                        if known is not None:  # the descriptors this session opened (see drain)
                            now_open = platform.inotify_fds()
                            self._os_queues = frozenset() if now_open is None else now_open - known
                        self.watching.set()
                        self.vault.bus.publish(WatcherReady(polling))
                    if needs_rescan:
                        needs_rescan = False
                        self.rescan()
                    now = _wall()
                    if last_wake is not None and now - last_wake > STALL_S and recheck is None and not polling:
                        recheck = (
                            f"vaultwatch was stalled for {now - last_wake:.1f} s (stopped, suspended or "
                            "overloaded), long enough for the operating system's queue of file events "
                            f"({QUEUE_LIMIT:,} at most) to overflow",
                            time.monotonic(),
                        )
                        self._due()
                    last_wake = now
                    if len(changes) >= BURST_RECHECK and recheck is None and not polling:
                        # the first check comes at most 1 s into a burst, then one more once it is over
                        recheck = (
                            f"a burst of {len(changes):,} file changes at once may have overflowed the "
                            f"operating system's queue of file events ({QUEUE_LIMIT:,} at most)",
                            float("inf") if in_burst else time.monotonic(),
                        )
                        self._due()
                    root_event = False
                    if changes:
                        rels: set[str] = set()
                        rescan = False
                        for _change, path in changes:
                            if path == root:
                                root_event = True
                                continue
                            if not path.startswith(prefix):
                                continue
                            rel = path[len(prefix) :].replace(os.sep, "/")
                            if rel in RULE_FILES:
                                rescan = True
                            elif not is_hidden(rel):
                                rels.add(rel)
                        if rels or rescan:
                            self._enqueue(rels, rescan)
                    if recheck is not None and (not changes or time.monotonic() - recheck[1] > 1.0):
                        self.recheck(recheck[0])  # once the backlog is in: what is still different was lost
                        in_burst = bool(changes)
                        recheck = None
                    elif not changes:
                        in_burst = False
                    self._report_missed()
                    self._cycle_done(looked)
                    if root_event or self._root_inode() != ino:
                        if recheck is not None:
                            self.recheck(recheck[0])
                        break  # the root was deleted or replaced: re-attach (or wait for it)
                    if self.holding and _visible_names(root):
                        self.holding = False
                        self.rescan()
                self.watching.clear()
                self._os_queues = frozenset()
            except Exception as exc:  # the watcher must never take the app down
                self.armed.set()  # no watches this time: the load goes on (the restart rescans)
                self.watching.clear()
                self._os_queues = frozenset()
                if recheck is not None:
                    self.recheck(recheck[0])
                    recheck = None
                failures += 1
                needs_rescan = True
                if failures == 1:
                    self._report(f"file watcher failed ({exc!r}); restarting it and re-checking the vault")
                if failures == 3 and not polling:  # e.g. the OS limit on watches: poll instead
                    polling = True
                    self._report("file watcher keeps failing; falling back to polling the vault every 0.5 s")
                self._stop.wait(min(5.0, 0.2 * failures))

    # the applier ------------------------------------------------------------------------------
    def _apply_loop(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                while not self._batches and not self._stop.is_set():
                    self._cond.wait()
                if self._stop.is_set():
                    return
                batches, self._batches = self._batches, []
                quick, self._quick = self._quick, 0
                target = self._received
            try:
                self._apply_drained(batches, target)
            finally:
                for _ in range(quick):
                    handoffs.end_quick()

    def _end_quick(self) -> None:
        """End the quick blocks of batches still queued (called under _cond)."""
        while self._quick:
            self._quick -= 1
            handoffs.end_quick()

    def _apply_drained(self, batches: list[tuple[set[str], bool, str | None]], target: int) -> None:
        while not self.vault.wait_ready(0.2):
            if self._stop.is_set():
                return
        rels: set[str] = set()
        rescan = False
        whys: list[str] = []
        for r, full, why in batches:
            rels |= r
            rescan = rescan or full
            if why:
                whys.append(why)
        self.last_batch_size = len(rels)
        if rels and self._suspects is not None:
            with self._cond:  # an event turned up for a path the re-check changed: it was late, not lost
                if self._suspects is not None:
                    self._suspects[0].difference_update(rels)
        try:
            self._apply_batch(rels, rescan, whys)
        except Exception as exc:  # reported; the next event or rescan repairs the index
            self._report(f"could not apply file changes ({exc!r}); will re-check on the next change")
        with self._cond:
            self._applied = max(self._applied, target)
            self._cond.notify_all()

    def _apply_batch(self, rels: set[str], rescan: bool, whys: list[str]) -> None:
        if rescan:
            if rels:  # what events reported goes in first: the comparison sees only the rest
                self._apply_quickly(rels)
            changed = self.reconcile()
            if whys:
                with self._cond:  # a second re-check adds to the first one's suspects
                    old = self._suspects
                    self._suspects = (
                        (old[0] | changed, old[1], time.monotonic())
                        if old is not None
                        else (changed, whys[0], time.monotonic())
                    )
        elif rels:
            self._apply_quickly(rels)

    def _apply_quickly(self, rels: set[str]) -> None:
        # Quick hand-offs while the changed paths go in: applying them blocks and wakes on every
        # stat, read and lock, and each wake-up waited out the whole switch interval whenever
        # another thread ran Python (an agent polling the listing for this very change). A full
        # comparison (reconcile) is long and rare, and keeps the ordinary interval.
        with handoffs.quick_handoffs():
            self.apply_paths(rels)

    def apply_paths(self, rels: Iterable[str]) -> None:
        """Refresh these vault-relative paths (and whatever appeared below new folders)."""
        vault = self.vault
        root = vault.root_real
        if self._root_inode() is None:
            return  # the watcher reports it; never turn a vanished vault into an empty index
        with vault.refresh_lock:
            snap = vault.snapshot
            config = vault.config
            rels = set(rels)
            walked: dict[str, str | None] = {}
            for rel in list(rels):  # an event spelled through a symlinked folder: refresh the real path too
                parent, _, name = rel.rpartition("/")
                if parent:
                    if parent not in walked:
                        walked[parent] = walked_folder(root, parent, config)
                    canon = walked[parent]
                    if canon is not None and canon != parent:
                        rels.add(f"{canon}/{name}" if canon else name)
            for rel in list(rels):  # an event below a folder the index does not know: refresh the folder too
                parent = rel.rpartition("/")[0]
                while parent and parent not in rels and snap.get(parent) is None:
                    rels.add(parent)
                    parent = parent.rpartition("/")[0]
            found = stat_many(root, rels, config)
            if not config.ignore.empty:
                gone: list[str] = []
                for rel, f in found.items():
                    below = any(config.ignore.excluded(a, is_dir=True) for a in _ancestors(rel))
                    if below:  # a path below an excluded folder is not part of the vault
                        found[rel] = None
                    if f is None and snap.get(rel) is None and (below or config.ignore.excluded(rel, is_dir=True)):
                        gone.append(rel)
                if gone:  # no index change says it: a rule naming an excluded folder must still hear
                    vault.bus.publish(ExcludedGone(tuple(sorted(gone))))
            for rel, f in list(found.items()):
                if isinstance(f, Entry) and f.kind == FOLDER:
                    old = snap.get(rel)
                    if old is None or old.kind != FOLDER or old.inode != f.inode:
                        for sub in walk_under(root, f, config):  # a folder created or moved in
                            found.setdefault(_rel_of(sub), sub)
            removed = self._removed_entries(found, snap)
            if len(removed) > EMPTY_GUARD and len(removed) >= len(snap.paths) and not _visible_names(root):
                if not self.holding:
                    self.holding = True
                    self._report(
                        f"vault {root} suddenly looks empty ({len(removed)} entries gone at once); "
                        "keeping the index and the cache until files reappear",
                        "error",
                    )
                return
            moves = _moves(found, snap, removed)
            self._reuse_moved(found, snap, moves)
            vault.apply_found(found, "disk", moves)

    @staticmethod
    def _removed_entries(found: dict[str, Found | None], snap: Snapshot) -> list[Entry]:
        removed: list[Entry] = []
        for rel, f in found.items():
            old = snap.get(rel)
            if f is None and old is not None:
                removed.append(old)
                if old.kind == FOLDER:
                    lo, hi = snap.span(rel)
                    removed.extend(snap.entries[lo:hi])
        return removed

    @staticmethod
    def _reuse_moved(found: dict[str, Found | None], snap: Snapshot, moves: list[tuple[str, str]]) -> None:
        """A note that only moved (one of `_moves`' pairs: same inode, size and mtime) keeps its parsed
        entry: no re-read."""
        for was, rel in moves:
            old, f = snap.get(was), found.get(rel)
            if old is None or old.kind != NOTE or not isinstance(f, FileFact) or f.kind != NOTE:
                continue
            stem = old.path.rsplit("/", 1)[-1][:-3]
            if old.title == stem:
                continue  # the title may come from the file name: parse it again
            found[rel] = dataclasses.replace(old, path=rel)

    def reconcile(self) -> set[str]:
        """Compare the whole disk with the index and apply the differences (rules reloaded first).
        Returns the paths that differed."""
        vault = self.vault
        root = vault.root_real
        if self._root_inode() is None:
            return set()
        rules = IgnoreRules.from_vault(root)
        if rules != vault.config.ignore:
            vault.config = ScanConfig(vault.config.attachment_exts, rules)
            for problem in rules.problems:
                self._report(problem)
        with vault.refresh_lock:
            snap = vault.snapshot
            config = vault.config
            found: dict[str, Found | None] = {}
            seen: set[str] = set()
            skipped_before = {s.path: s.reason for s in snap.skipped}
            for f in walk(root, config):
                rel = _rel_of(f)
                seen.add(rel)
                old = snap.get(rel)
                if isinstance(f, FileFact):
                    if old is None or (old.kind, old.size_bytes, old.mtime_ns, old.inode) != (
                        f.kind,
                        f.size,
                        f.mtime_ns,
                        f.inode,
                    ):
                        found[rel] = f
                elif isinstance(f, Skipped):
                    if skipped_before.get(rel) != f.reason or old is not None:
                        found[rel] = f
                elif old is None or (old.kind, old.mtime_ns, old.inode) != (f.kind, f.mtime_ns, f.inode):
                    found[rel] = f
            gone = [p for p in snap.paths if p not in seen]
            if not seen and len(gone) > EMPTY_GUARD:
                if not self.holding:
                    self.holding = True
                    self._report(
                        f"vault {root} looks empty or unreadable; keeping the index and the cache until files reappear",
                        "error",
                    )
                return set()
            for p in gone:
                found[p] = None
            for s in snap.skipped:  # skipped files that vanished
                if s.path not in seen:
                    found.setdefault(s.path, None)
            self.holding = False
            removed = self._removed_entries(found, snap)
            moves = _moves(found, snap, removed)
            self._reuse_moved(found, snap, moves)
            vault.apply_found(found, "disk", moves)
            cache = vault.entry_cache
            if cache is not None and cache.hold:
                cache.hold = False
                cache.mark_all_dirty()
                vault.flush_cache_soon()
            return set(found)


def _identity(kind: str, inode: int, size: int, mtime_ns: int) -> tuple:
    """What a rename keeps: a folder its inode (a move to another folder may touch its times), a
    file its inode, size and modification time (a freed inode number may be reused at once)."""
    return (kind, inode) if kind == FOLDER else (kind, inode, size, mtime_ns)


def _moves(found: dict[str, Found | None], snap: Snapshot, removed: list[Entry]) -> list[tuple[str, str]]:
    """The (old, new) pairs of one batch that are one file or folder under a new name: gone from
    where the index had it, found where the index had nothing, with the same identity."""
    if not removed:
        return []
    by_identity = {_identity(e.kind, e.inode, e.size_bytes, e.mtime_ns): e.path for e in removed if e.inode}
    pairs: list[tuple[str, str]] = []
    for rel, f in found.items():
        if f is None or isinstance(f, Skipped) or snap.get(rel) is not None or not f.inode:
            continue
        size = f.size if isinstance(f, FileFact) else f.size_bytes
        old = by_identity.pop(_identity(f.kind, f.inode, size, f.mtime_ns), None)
        if old is not None and old != rel:
            pairs.append((old, rel))
    return pairs


def _ancestors(rel: str) -> Iterator[str]:
    parent = rel.rpartition("/")[0]
    while parent:
        yield parent
        parent = parent.rpartition("/")[0]


class VaultWatcher:
    """The live index as a front end hosts it: `await watcher.run()` until `stop()`.

    `run()` starts watching the vault and building the full-text index (the work happens in
    core threads, so any event loop, or none, can host it) and returns after `stop()`.
    """

    def __init__(self, vault: Vault, *, search: bool = True) -> None:
        self.vault = vault
        self.search = search
        self._stopped = threading.Event()

    def start(self) -> None:
        """Start watching (and full-text indexing) without waiting."""
        self.vault.start_watching()
        if self.search:
            self.vault.start_search()

    async def run(self) -> None:
        """Start, then wait (without blocking the event loop) until `stop()` is called."""
        import asyncio

        self.start()
        while not self._stopped.is_set():
            await asyncio.sleep(0.1)

    def stop(self) -> None:
        """Stop watching and indexing, write the cache out, and let `run()` return. Thread-safe."""
        self._stopped.set()
        self.vault.stop()
