"""Memory housekeeping: the C heap trim, and per-generation structures the garbage collector
never has to walk (lists of 100k items made every full collection, and the frame it fell in,
milliseconds longer)."""

from __future__ import annotations

import gc
import os
import sys
from array import array

import pytest

from vaultwatch.core.memory import can_release_free_memory, release_free_memory, resident_bytes
from vaultwatch.core.query.listing import Query, pairs


@pytest.mark.skipif(
    not can_release_free_memory(), reason="the C library has no malloc_trim (not glibc): nothing to trim"
)
def test_release_free_memory_hands_freed_heap_pages_back() -> None:
    """~48 MB of C-heap buffers freed between pinned survivors stay resident (glibc trims only the
    heap's top by itself) until release_free_memory gives the free pages back."""
    blocks, pinned = [], []
    for i in range(6000):
        blocks.append(bytearray(b"x" * 8000))  # > 512 bytes: malloc, not pymalloc; filled: resident
        if i % 50 == 0:
            pinned.append(bytearray(b"p" * 8000))  # keeps the freed space in the middle of the heap
    del blocks
    gc.collect()
    before = resident_bytes()
    assert release_free_memory() is True
    dropped = before - resident_bytes()
    assert dropped > 20 * 2**20, f"RSS dropped by {dropped / 2**20:.1f} MB only"
    assert len(pinned) == 120


def test_big_query_structures_are_invisible_to_the_collector(demo) -> None:
    snap = demo.snapshot
    for q in (
        Query(words=("deploy",)),
        Query(pattern="**/*Runbook*.md"),
        Query(filters=pairs({"tag": "x", "type": "howto", "status": "deprecated"})),
    ):
        demo.list(q)
    cache = snap._cache
    hay = next(v for k, v in cache.items() if type(k) is tuple and k[0] == "hay")
    blob, starts = next(v for k, v in cache.items() if type(k) is tuple and k[0] == "joined")
    inverted = [v for k, v in cache.items() if type(k) is tuple and k[0] == "inverted"]
    assert type(hay) is tuple and type(starts) is array and inverted
    assert all(type(lst) is array for inv in inverted for lst in inv.values())
    gc.collect()
    assert not gc.is_tracked(hay)  # a tuple of strings: untracked once the collector saw it
    # arrays are tracked (for their type) but hold no references the collector could walk
    assert [type(x) for x in gc.get_referents(starts)] in ([], [type])
    assert all(gc.get_referents(lst) in ([], [array]) for inv in inverted for lst in inv.values())


def test_collector_pauses_are_counted_across_threads() -> None:
    """A pause ending in one thread leaves collection off while another thread still holds one;
    the last one restores what the first found."""
    import threading

    from vaultwatch.core.memory import collector_paused, collector_pauses, pause_collector, resume_collector

    was = gc.isenabled()
    gc.enable()
    try:
        entered, release = threading.Event(), threading.Event()

        def load() -> None:
            with collector_paused():
                entered.set()
                release.wait(10)

        t = threading.Thread(target=load)
        t.start()
        assert entered.wait(10) and not gc.isenabled()
        pause_collector()  # this thread's pause outlives the load's
        release.set()
        t.join(10)
        assert collector_pauses() == 1 and not gc.isenabled()
        resume_collector()
        assert collector_pauses() == 0 and gc.isenabled()
        with pytest.raises(RuntimeError):
            resume_collector()
        gc.disable()  # collection that was off before the first pause stays off after the last
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def _fresh_interpreter(body: str, setting: str | None, unset: str) -> str:
    """stdout of `body` run in a fresh interpreter, after `setting` (a call of core.memory's, which
    must report that it set what it sets) when given; without the environment variable `unset`
    (which would win over the call)."""
    import subprocess
    import textwrap

    code = (
        f"import sys\nsys.path.insert(0, {str(os.getcwd())!r})\n"
        "from vaultwatch.core.memory import fix_mmap_threshold, limit_malloc_arenas\n"
        + (f"assert {setting}\n" if setting is not None else "")
        + textwrap.dedent(body)
    )
    env = {k: v for k, v in os.environ.items() if k != unset}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _arenas_after_threads(limit: int | None) -> int:
    """glibc arenas in a fresh interpreter after 6 threads each allocated from the C heap."""
    call = f"limit_malloc_arenas({limit!r})" if limit is not None else None
    out = _fresh_interpreter(
        """
        import ctypes, os, tempfile, threading
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.free.argtypes = [ctypes.c_void_p]
        ready, go = threading.Barrier(7), threading.Event()
        def work():
            ready.wait()
            ptrs = [libc.malloc(4000) for _ in range(200)]
            go.wait(10)
            for p in ptrs:
                libc.free(p)
        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads: t.start()
        ready.wait()
        libc.fopen.restype = ctypes.c_void_p
        libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        import time; time.sleep(0.3)
        path = tempfile.mktemp()
        fp = libc.fopen(path.encode(), b"w")
        libc.malloc_info(0, fp)
        libc.fclose(fp)
        go.set()
        for t in threads: t.join()
        print(open(path).read().count("<heap nr="))
        os.unlink(path)
    """,
        call,
        "MALLOC_ARENA_MAX",
    )
    return int(out.strip())


@pytest.mark.skipif(not can_release_free_memory(), reason="not glibc: no malloc arenas to limit")
def test_limit_malloc_arenas_keeps_threads_in_the_shared_arenas() -> None:
    assert _arenas_after_threads(None) >= 5  # glibc's default: an arena per new thread
    assert _arenas_after_threads(2) <= 2


def test_an_explicit_malloc_arena_max_wins(monkeypatch) -> None:
    from vaultwatch.core.memory import limit_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas(2) is False


def _mapped_blocks_after(fixed: int | None) -> tuple[bool, bool]:
    """In a fresh interpreter (after `fix_mmap_threshold(fixed)` when given): whether a 2 MB
    block is given a mapping of its own, and a 6 MB one after an 8 MB one came and went."""
    call = f"fix_mmap_threshold({fixed!r})" if fixed is not None else None
    small, big = _fresh_interpreter(
        """
        import ctypes
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        libc.free.argtypes = [ctypes.c_void_p]
        class Info(ctypes.Structure):
            _fields_ = [(n, ctypes.c_int) for n in
                        "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
        libc.mallinfo.restype = Info
        def mapped(size):
            before = libc.mallinfo().hblks
            p = libc.malloc(size)
            n = libc.mallinfo().hblks - before
            libc.free(p)
            return n
        small = mapped(2 << 20)
        libc.free(libc.malloc(8 << 20))
        print(small, mapped(6 << 20))
    """,
        call,
        "MALLOC_MMAP_THRESHOLD_",
    ).split()
    return small == "1", big == "1"


@pytest.mark.skipif(not can_release_free_memory(), reason="not glibc: no mmap threshold to fix")
def test_a_fixed_mmap_threshold_does_not_move_after_big_blocks_are_freed() -> None:
    # glibc's default: 2 MB is mapped (over 128 KB); freeing 8 MB raised the threshold, so 6 MB
    # then came from the heap
    assert _mapped_blocks_after(None) == (True, False)
    # fixed at 4 MB: 2 MB from the heap, and 6 MB still mapped after the 8 MB one was freed
    assert _mapped_blocks_after(4 << 20) == (False, True)


def test_an_explicit_malloc_mmap_threshold_wins(monkeypatch) -> None:
    from vaultwatch.core.memory import fix_mmap_threshold

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    assert fix_mmap_threshold(4 << 20) is False
