"""The in-memory index: immutable snapshots, swapped whole on every change.

Readers take `index.snapshot` once and work on it; a writer builds the next snapshot
under a lock and swaps the reference, so no reader ever sees half an update.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core.markdown import okf
from vaultwatch.core.model import FOLDER, NOTE, Entry, Skipped

# patch(old_value, base, changed_paths): a memoized structure derived from an earlier generation's
# (None: build it anew); see Snapshot.cached
Patch = Callable[[Any, "Snapshot", frozenset[str]], Any]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One consistent generation of the index.

    `paths`/`entries` hold notes, attachments and folders in code-point order of path.
    """

    generation: int
    paths: tuple[str, ...]
    entries: tuple[Entry, ...]
    by_path: dict[str, Entry]
    skipped: tuple[Skipped, ...] = ()
    is_bundle: bool = False
    loaded: bool = True
    problems: tuple[str, ...] = ()
    _cache: dict = field(default_factory=dict, compare=False, repr=False)
    # key -> the lock its one builder holds: callers asking for a structure while another thread
    # builds it wait for that build instead of building it again beside it
    _building: dict = field(default_factory=dict, compare=False, repr=False)

    def get(self, path: str) -> Entry | None:
        """The entry at a canonical vault-relative path, or None."""
        return self.by_path.get(path)

    def span(self, folder: str | None) -> tuple[int, int]:
        """Index range of the entries at or below `folder` (None or "" = the whole vault)."""
        if not folder:
            return 0, len(self.paths)
        lo = bisect_left(self.paths, folder + "/")
        hi = bisect_right(self.paths, folder + "/\U0010ffff")
        return lo, hi

    def cached(self, key: object, build: Callable[[], Any], patch: Patch | None = None) -> Any:
        """Memoize a derived structure (counts, inverted lists) for this generation only.

        `patch(old_value, base, changed_paths)` may derive the value from an earlier
        generation's (`base`); `changed_paths` holds every path added, removed or replaced since.
        It returns None to ask for a full build. Structures indexed by position must check
        `in_place(base)` first (same paths, same kinds). That keeps the first query after an
        edit at 100k notes in milliseconds instead of a rebuild per structure.
        """
        value = self._derive(key, patch)
        if value is not _MISSING:
            return value
        with _BUILDERS:
            lock = self._building.setdefault(key, threading.RLock())  # reentrant: a build may ask again
        with lock:
            value = self._derive(key, patch)  # built (or patched) by another caller meanwhile
            if value is _MISSING:
                value = build()
                self._cache[key] = value
        return value

    def derived(self, key: object, patch: Callable[[Any, Snapshot, frozenset[str]], Any] | None = None) -> Any:
        """What `cached(key, build, patch)` would answer without building: the memoized value, or
        one patched from the earlier generation's (then memoized), else None. For callers that answer
        at once when that is quick and move a whole build elsewhere (off an event loop)."""
        value = self._derive(key, patch)
        return None if value is _MISSING else value

    def _derive(self, key: object, patch: Callable[[Any, Snapshot, frozenset[str]], Any] | None) -> Any:
        try:
            return self._cache[key]
        except KeyError:
            pass
        if patch is None:
            return _MISSING
        origin = self._cache.get(_ORIGIN)
        if origin is None:
            return _MISSING
        base, changed, _ = origin
        old = base._cache.get(key, _MISSING)
        if old is _MISSING:
            return _MISSING
        value = patch(old, base, changed)
        if value is None:
            return _MISSING
        self._cache[key] = value
        return value

    def in_place(self, base: Snapshot) -> bool:
        """True when this generation differs from `base` (its cache origin) only by entries
        replaced in place: the same paths in the same order, each of the same kind."""
        origin = self._cache.get(_ORIGIN)
        return origin is not None and origin[0] is base and origin[2]

    @property
    def note_count(self) -> int:
        return self.cached("note_count", lambda: sum(1 for e in self.entries if e.kind == NOTE))


_BUILDERS = threading.Lock()  # guards Snapshot._building's setdefault (one lock per key and snapshot)
_ORIGIN = "__origin__"  # in Snapshot._cache: (earlier snapshot, paths changed since, in place?)
_MISSING = object()


def _bundle(by_path: dict[str, Entry], mode: str) -> bool:
    if mode == "on":
        return True
    if mode == "off":
        return False
    index = by_path.get("index.md")
    return index is not None and okf.declares_okf(index.frontmatter)


RESHAPE_MAX = 256  # paths added or removed at once beyond which the path order is sorted anew


def _reshape(
    old: Snapshot, by_path: dict[str, Entry], added: list[str], removed: set[str], replaced: Iterable[str]
) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    """The sorted paths and their entries after a small change, from the old ones by bisection
    (each insert or delete moves pointers in C) instead of a lookup per path of the vault."""
    if len(added) + len(removed) > RESHAPE_MAX:
        paths = tuple(sorted((set(old.paths) - removed).union(added)))
        return paths, tuple(map(by_path.__getitem__, paths))
    work_paths = list(old.paths) if added or removed else None
    work = list(old.entries)
    if work_paths is not None:
        for p in removed:
            i = bisect_left(work_paths, p)
            if i < len(work_paths) and work_paths[i] == p:
                del work_paths[i], work[i]
        for p in added:
            i = bisect_left(work_paths, p)
            work_paths.insert(i, p)
            work.insert(i, by_path[p])
    where = old.paths if work_paths is None else work_paths
    for p in replaced:
        i = bisect_left(where, p)
        work[i] = by_path[p]
    return (old.paths if work_paths is None else tuple(work_paths)), tuple(work)


def _link_origin(snap: Snapshot, old: Snapshot, changed: frozenset[str], in_place: bool) -> None:
    """Let `snap` derive its caches from `old`'s (or from what `old` would have derived its own
    from, when `old` built none), then cut `old`'s link: only one earlier generation is ever
    kept alive this way."""
    inherited = old._cache.get(_ORIGIN)
    if inherited is not None and len(old._cache) == 1:  # nothing computed on `old` itself
        base, before, was_in_place = inherited
        snap._cache[_ORIGIN] = (base, before | changed, was_in_place and in_place)
    else:
        snap._cache[_ORIGIN] = (old, changed, in_place)
    old._cache.pop(_ORIGIN, None)


class Index:
    """Holds the current Snapshot and applies changes by building the next one."""

    def __init__(self, okf_mode: str = "auto") -> None:
        if okf_mode not in okf.MODES:
            raise ValueError(f"okf mode must be one of {', '.join(okf.MODES)}")
        self.okf_mode = okf_mode
        self._lock = threading.Lock()
        self._snapshot = Snapshot(0, (), (), {}, loaded=False)

    @property
    def snapshot(self) -> Snapshot:
        """The current generation (an atomic reference read)."""
        return self._snapshot

    def load(
        self,
        entries: Iterable[Entry],
        skipped: Iterable[Skipped] = (),
        problems: Iterable[str] = (),
        loaded: bool = True,
    ) -> Snapshot:
        """Replace the whole index (start-up or a full rescan)."""
        by_path = {e.path: e for e in entries}
        with self._lock:
            return self._swap(by_path, tuple(skipped), tuple(problems), loaded)

    def apply(
        self, upserts: Iterable[Entry] = (), removals: Iterable[str] = (), skipped: Iterable[Skipped] = ()
    ) -> Snapshot:
        """Add or replace entries, remove paths (a removed folder takes everything under it),
        and record newly skipped files. Returns the new snapshot."""
        upserts = list(upserts)
        with self._lock:
            old = self._snapshot
            by_path = dict(old.by_path)
            skip = {s.path: s for s in old.skipped}
            removed: set[str] = set()
            for path in removals:
                skip.pop(path, None)
                gone = by_path.pop(path, None)
                if gone is None:
                    continue
                removed.add(path)
                if gone.kind == FOLDER:
                    lo, hi = old.span(path)
                    for p in old.paths[lo:hi]:
                        if by_path.pop(p, None) is not None:
                            removed.add(p)
            for entry in upserts:
                skip.pop(entry.path, None)
                by_path[entry.path] = entry
                removed.discard(entry.path)
            for s in skipped:
                skip[s.path] = s
                if by_path.pop(s.path, None) is not None:
                    removed.add(s.path)
            added = list(dict.fromkeys(e.path for e in upserts if e.path not in old.by_path))
            replaced = {e.path for e in upserts if e.path in old.by_path and e.path in by_path}
            paths, entries = _reshape(old, by_path, [p for p in added if p in by_path], removed, replaced)
            snap = self._swap(by_path, tuple(skip.values()), old.problems, old.loaded, paths, entries)
            if snap.is_bundle == old.is_bundle:
                in_place = paths is old.paths and all(
                    (o := old.by_path.get(e.path)) is not None and o.kind == e.kind for e in upserts
                )
                _link_origin(snap, old, frozenset(e.path for e in upserts) | removed, in_place)
            return snap

    def mark_loaded(self) -> Snapshot:
        """Flag the current entries as a complete index."""
        with self._lock:
            old = self._snapshot
            return self._swap(dict(old.by_path), old.skipped, old.problems, True)

    def _swap(
        self,
        by_path: dict[str, Entry],
        skipped: tuple[Skipped, ...],
        problems: tuple[str, ...],
        loaded: bool,
        paths: tuple[str, ...] | None = None,
        entries: tuple[Entry, ...] | None = None,
    ) -> Snapshot:
        if paths is None:
            paths = tuple(sorted(by_path))
        snap = Snapshot(
            generation=self._snapshot.generation + 1,
            paths=paths,
            entries=tuple(map(by_path.__getitem__, paths)) if entries is None else entries,
            by_path=by_path,
            skipped=skipped,
            is_bundle=_bundle(by_path, self.okf_mode),
            loaded=loaded,
            problems=problems,
        )
        self._snapshot = snap
        return snap
