"""Process memory housekeeping: hand the C heap's free pages back to the OS after big work.

CPython frees its own small-object arenas when they empty, but pages that C allocations
(SQLite's caches, large buffers, dict tables) used and freed stay resident in glibc's heap
until `malloc_trim`. Only glibc has it; elsewhere this does nothing.
"""
from __future__ import annotations

import sys


def release_free_memory() -> bool:
    """Return the C heap's free pages to the OS (glibc `malloc_trim(0)`); True if any were."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # noqa: PLC0415  (4 ms: kept off the way to the first frame)

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own symbols: glibc's when linked to it
    except (OSError, AttributeError):
        return False  # musl and others have no malloc_trim
    trim.argtypes = [ctypes.c_size_t]
    return bool(trim(0))
