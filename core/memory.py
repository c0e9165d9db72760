"""Process memory housekeeping, the one owner of the process-global garbage-collector tricks.

Nothing else in vaultwatch calls `gc.disable`, `gc.enable` or `gc.freeze`:

- `collector_paused()`: automatic collection off for a block (a load making 100k long-lived
  records, where generational passes cost seconds). Pauses nest and overlap across threads:
  they are counted, and collection comes back on (if it was on before the first) only when the
  last one ends, so a load finishing in one thread never turns collection back on under a front
  end that holds its own pause (the TUI's between-frames collector, `pause_collector()`).
- `freeze_long_lived()`: move every object alive now out of the collector's way for good
  (`gc.freeze`): the index after a big load, the views' derived tables.
- `collect(generation)` and `pending_objects()`: explicit collections for a collector that
  runs them itself while collection is paused.
- `release_free_memory()`: hand the C heap's free pages back to the OS after big work.
  CPython frees its own small-object arenas when they empty, but pages that C allocations
  (SQLite's caches, large buffers, dict tables) used and freed stay resident in glibc's heap
  until `malloc_trim`. Only glibc has it; elsewhere this does nothing.
- `limit_malloc_arenas(n)`: at most `n` glibc malloc arenas for the whole process, set before
  its first threads start. glibc gives each new thread an arena of its own (up to 8 per core);
  memory a worker thread freed stays in its arena, and `malloc_trim` does not return all of it:
  at 100k notes the note vectors' thread kept ~13 MB that one shared arena gives back, and the
  TUI settled at 389 MB with two arenas against 405 MB with glibc's default. The interpreter
  allocates under its lock, so threads rarely wait for an arena; an explicit MALLOC_ARENA_MAX
  in the environment wins.
- `fix_mmap_threshold(n)`: blocks of `n` bytes and more get a mapping of their own, which goes
  back to the OS when freed; smaller ones come from the heap. glibc's own threshold moves: it
  starts at 128 KB and rises to the size of each mapped block freed (up to 32 MB), so after a
  build's big buffers came and went, later ones of that size were carved out of the heap, where
  what is freed between live blocks stays resident. See MMAP_THRESHOLD in tui.commands.cli for what a
  fixed one measured; an explicit MALLOC_MMAP_THRESHOLD_ in the environment wins.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_pauses = 0
_was_enabled = True


def pause_collector() -> None:
    """Turn automatic collection off until the matching `resume_collector()` (counted)."""
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1


def resume_collector() -> None:
    """End one pause; the last one turns collection back on if it was on before the first."""
    global _pauses
    with _lock:
        if _pauses == 0:
            raise RuntimeError("resume_collector() without a matching pause_collector()")
        _pauses -= 1
        if _pauses == 0 and _was_enabled:
            gc.enable()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Automatic garbage collection off for the block (see the module docstring)."""
    pause_collector()
    try:
        yield
    finally:
        resume_collector()


def collector_pauses() -> int:
    """How many pauses are in effect (0: the collector is CPython's as it was)."""
    return _pauses


def freeze_long_lived() -> None:
    """Keep every object alive now out of all later collections (gc.freeze)."""
    gc.freeze()


def pending_objects() -> int:
    """New container objects since the last collection of the youngest generation."""
    return gc.get_count()[0]


def collect(generation: int = 2) -> int:
    """Collect `generation` (and the younger ones) now; the number of unreachable objects found."""
    return gc.collect(generation)


def _glibc_function(name: str) -> Any:  # a ctypes function, or None
    """The process's own C library function `name` when it is glibc's (None elsewhere: musl and
    others have no malloc_trim or M_ARENA_MAX)."""
    if not sys.platform.startswith("linux"):
        return None
    from vaultwatch.core import platform  # noqa: PLC0415  (ctypes: kept off the way to the first frame)

    return platform.glibc_function(name)


def can_release_free_memory() -> bool:
    """True where release_free_memory can hand pages back (glibc's malloc_trim exists)."""
    return _glibc_function("malloc_trim") is not None


def resident_bytes() -> int:
    """This process's resident set size in bytes (0 where /proc is missing)."""
    import os  # noqa: PLC0415

    from vaultwatch.core import platform  # noqa: PLC0415  (ctypes: kept off the way to the first frame)

    pages = platform.statm_resident_pages()
    return 0 if pages is None else pages * os.sysconf("SC_PAGE_SIZE")


def release_free_memory() -> bool:
    """Return the C heap's free pages to the OS (glibc `malloc_trim(0)`); True if any were."""
    trim = _glibc_function("malloc_trim")
    if trim is None:
        return False
    import ctypes  # noqa: PLC0415

    trim.argtypes = [ctypes.c_size_t]
    return bool(trim(0))


M_ARENA_MAX = -8  # glibc's mallopt parameters
M_MMAP_THRESHOLD = -3


def _mallopt(param: int, value: int, env: str) -> bool:
    """glibc's `mallopt(param, value)`, unless the environment sets `env` (glibc's own variable
    for it, which wins); True if it was set."""
    import os  # noqa: PLC0415

    if os.environ.get(env):
        return False
    mallopt = _glibc_function("mallopt")
    if mallopt is None:
        return False
    import ctypes  # noqa: PLC0415

    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(param, value))


def limit_malloc_arenas(n: int) -> bool:
    """At most `n` glibc malloc arenas (see the module docstring); True if the limit was set.
    Call it before the process starts threads: a thread keeps the arena it was given."""
    return _mallopt(M_ARENA_MAX, n, "MALLOC_ARENA_MAX")


def fix_mmap_threshold(n: int) -> bool:
    """glibc's mmap threshold fixed at `n` bytes (see the module docstring); True if it was set."""
    return _mallopt(M_MMAP_THRESHOLD, n, "MALLOC_MMAP_THRESHOLD_")
