"""TUI benchmark on a vaultgen vault: first paint from process start, filter keystroke -> list
updated, scrolling frame time, agent call -> activity row, and RSS. Prints JSON.

    python bench/bench_tui.py [--notes 100000] [--vault PATH] [--launches 5] [--no-launch] [--only-long-note | --only-search]

Targets: first paint <= 0.5 s whatever the vault size; filter keystroke -> list
updated <= 50 ms at 100k; scroll frames < 16 ms; agent call -> row <= 100 ms; RSS <= 350 MB;
full-text search keystroke -> results painted p95 <= 100 ms, measured keyword-only
and again hybrid (note vectors ready, as the app runs with the semantic extra).

Two parts:

- `launch`: the real `vaultwatch VAULT` command (MCP server and watcher on, as a user runs
  it) in a pseudo-terminal, timed from before the process is spawned. `first_paint_s` is when
  the terminal has received the first frame showing the screen with its indexing progress;
  `mcp_ready_s` when the status line shows the socket; `list_loaded_s` when the Notes tab
  counts the vault. The whole process's RSS (VmRSS, and the peak VmHWM, from /proc) is read
  SETTLE_S after all three happened (`rss_mb`), and again once it held still for STILL_S
  (`rss_still_mb`: the index, the MCP server, the watcher, the full-text index's sync and, with
  the semantic extra, the note vectors are all in it; on a loaded machine the first reading
  can come before the vectors). The child keeps its
  bytecode under bench/out/pycache (as an installed vaultwatch has it, whatever
  PYTHONDONTWRITEBYTECODE says here); the first launch, which compiles it, is reported apart.
- in-process Pilot runs (headless) for the interactive figures. Frame work is measured by
  timing Textual's screen update (the compositor pass that renders the dirty lines) plus the
  key's own handler; latencies run from the key press to the end of the frame that shows it.
  Letters only ever go to the filter bar (on the list they are triage actions that write):
  `vault_unchanged` checks that the index generation did not move. After the search phase,
  `search_sqlite_memory_mb` is SQLite's heap (the read connections' page caches) and
  `search_readers_open` the full-text index's open read connections (core.search.readers).
  This process limits glibc's malloc arenas as the `vaultwatch` command does (`malloc_arenas`:
  tui.commands.cli.MALLOC_ARENAS, or an explicit MALLOC_ARENA_MAX), so `rss_mb_after` is the app's.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import pty
import re
import resource
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import AS_OF, emit, vault

ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=$]*[a-zA-Z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?")
SETTLE_S = 4.0  # seconds after the list shows the vault before the launched app's memory is read
STILL_S = 8.0  # then again once its RSS held still this long (the vectors loaded: the figure the RSS target is held to)
STILL_MAX_S = 150.0  # ... or this long after the launch
VECTORS_MAX_S = 300.0  # a first launch's wait for its note vectors (the cache file written)
NOTES_COUNTED = re.compile(r"Notes [1-9][0-9]{0,2}(,[0-9]{3})*")


def sqlite_memory_mb() -> float | None:
    """SQLite's own heap in this process (sqlite3_memory_used: page caches, schemas, statements),
    or None where the sqlite3 module's library does not export it."""
    import _sqlite3
    import ctypes

    try:
        used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
    except (OSError, AttributeError):
        return None
    used.restype = ctypes.c_int64
    return round(used() / 1e6, 1)


def stats(samples: list[float]) -> dict[str, float]:
    """n, p50, p95 and max of samples in seconds, as milliseconds."""
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


def proc_status(pid: int | str = "self") -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process in MB."""
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key = line.split(":", 1)[0]
            if key in ("VmRSS", "VmHWM"):
                out[key] = round(int(line.split()[1]) / 1024, 1)
    return out


# -- launch from process start, in a pty ---------------------------------------------------------
def launch(
    root: Path,
    size: tuple[int, int],
    timeout: float = 60.0,
    pycache: Path | None = None,
    searches: bool = False,
    cache_home: Path | None = None,
) -> dict:
    """Run `vaultwatch ROOT` in a pty; seconds from spawn to each milestone, RSS, quit time.

    With `pycache`, the child keeps its compiled bytecode there (PYTHONPYCACHEPREFIX), as an
    installed vaultwatch has it; without, it may compile every module it imports first. With
    `searches`, the settled app is then searched as a person and an agent would (`searched`).
    With `cache_home`, the child's XDG_CACHE_HOME: an empty folder makes the launch a first
    one, which builds the index, the full-text index and the note vectors in that run."""
    exe = shutil.which("vaultwatch", path=str(Path(sys.executable).parent)) or shutil.which("vaultwatch")
    if exe is None:
        raise SystemExit("the vaultwatch command is not installed next to this Python")
    sock_dir = tempfile.mkdtemp(prefix="vwb-")  # AF_UNIX paths are short
    argv = [exe, str(root), "--socket", os.path.join(sock_dir, "s.sock")]
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(size[0]), LINES=str(size[1]))
    for name in ("NO_COLOR", "TEXTUAL_THEME", "TEXTUAL_ANIMATIONS"):
        env.pop(name, None)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    if cache_home is not None:
        env["XDG_CACHE_HOME"] = str(cache_home)
    out: dict = {}
    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: become vaultwatch at once
        os.execve(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))

    def mark(name: str) -> None:
        out.setdefault(name, round(time.perf_counter() - t0, 3))

    text = ""
    try:
        while time.perf_counter() - t0 < timeout:
            ready, _, _ = select.select([fd], [], [], 0.01)
            if not ready:
                continue
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                break
            if not data:
                break
            text = (text + ESCAPES.sub(b"", data).decode("utf-8", "replace"))[-40_000:]
            if "Notes" in text and "indexing" in text.lower():
                mark("first_paint_s")
            if "first_paint_s" in out and "MCP /" in text:
                mark("mcp_ready_s")
            if "first_paint_s" in out and NOTES_COUNTED.search(text):
                mark("list_loaded_s")
            if {"first_paint_s", "mcp_ready_s", "list_loaded_s"} <= out.keys():
                break
        if cache_home is not None and vectors_offered():
            # a first launch builds the note vectors after the full-text index: read the memory
            # (and search) once their cache file is written, as the figures of a warm launch are
            until_t = time.perf_counter() + VECTORS_MAX_S
            while time.perf_counter() < until_t and not any(cache_home.rglob("vectors.npz")):
                drain(fd, 0.5)
            if any(cache_home.rglob("vectors.npz")):
                mark("vectors_ready_s")
        # the full-text sync, the tab counts and the cache flush run on after the list shows:
        # read the memory once they had time to finish (the peak covers the whole run)
        settle_until = time.perf_counter() + SETTLE_S
        while time.perf_counter() < settle_until:  # keep draining the terminal meanwhile
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    os.read(fd, 1 << 16)
                except OSError:
                    break
        rss = proc_status(pid)
        out["rss_mb"], out["peak_rss_mb"] = rss.get("VmRSS"), rss.get("VmHWM")
        # under load the note vectors (and the full-text sync) may still be on their way then:
        # read it again once it held still for STILL_S (within 3 MB), or after STILL_MAX_S
        samples: list[tuple[float, float]] = []
        while time.perf_counter() - t0 < STILL_MAX_S:
            if select.select([fd], [], [], 0.5)[0]:
                try:
                    os.read(fd, 1 << 16)
                except OSError:
                    break
            now = time.perf_counter()
            if not samples or now - samples[-1][0] >= 0.5:
                samples.append((now, proc_status(pid).get("VmRSS", 0.0)))
                recent = [r for t, r in samples if t >= now - STILL_S]
                if now - samples[0][0] >= STILL_S and max(recent) - min(recent) <= 3:
                    break
        rss = proc_status(pid)
        out["rss_still_mb"], out["peak_rss_still_mb"] = rss.get("VmRSS"), rss.get("VmHWM")
        out["rss_still_at_s"] = round(time.perf_counter() - t0, 1)
        if searches:
            out.update(searched(pid, fd, os.path.join(sock_dir, "s.sock")))
        t = time.perf_counter()
        os.write(fd, b"\x11")  # ctrl+q
        while time.perf_counter() - t < 15:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            ready, _, _ = select.select([fd], [], [], 0.01)
            if ready:
                try:
                    os.read(fd, 1 << 16)
                except OSError:
                    pass
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        out["quit_s"] = round(time.perf_counter() - t, 3)
    finally:
        os.close(fd)
        shutil.rmtree(sock_dir, ignore_errors=True)
    return out


def vectors_offered() -> bool:
    """True when the launched app computes note vectors (the semantic extra installed and not
    turned off with VAULTWATCH_SEMANTIC=0, which the child inherits)."""
    from vaultwatch.core.search.semantic import offered

    return offered()


def drain(fd: int, seconds: float) -> None:
    """Read and drop what the app draws for `seconds` (a pty whose reader stops blocks the app)."""
    until_t = time.perf_counter() + seconds
    while time.perf_counter() < until_t:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                os.read(fd, 1 << 16)
            except OSError:
                return


SEARCHED_QUERIES = ("vault socket index", "deploy runbook keys")
AGENT_QUERIES = (
    "deploy keys rotation",
    "incident review",
    "latency budget",
    "garden notes",
    "socket permissions",
    "release checklist",
    "meeting notes",
    "vector index",
    "backup restore",
    "hand plane",
    "runbook",
    "weekly review",
    "reading list",
    "api tokens",
    "error budget",
    "project kickoff",
)


def searched(pid: int, fd: int, sock: str) -> dict:
    """The launched app's RSS once searched by the person and by an agent (the RSS
    target, as the app is used): in the TUI, ctrl+f and two phrases typed at ~8 keys a second
    (the note vectors are ready by now, so they are hybrid searches), then the real MCP client
    on the app's socket makes 16 hybrid `search` calls with different words. Read 2 s after the
    last answer (`rss_searched_mb`), and again once 65 s passed without a search
    (`rss_searched_idle_mb`: the idle query tokenizer and read connections are dropped after 60 s)."""
    out: dict = {}
    os.write(fd, b"\x06")  # ctrl+f: full-text search in the filter bar
    drain(fd, 1.0)
    for words in SEARCHED_QUERIES:
        for ch in words:
            os.write(fd, ch.encode())
            drain(fd, 0.12)
        drain(fd, 3.0)
        os.write(fd, b"\x15")  # ctrl+u: clear the words
        drain(fd, 1.0)
    os.write(fd, b"\x1b")
    drain(fd, 1.0)
    out["rss_tui_searched_mb"] = proc_status(pid).get("VmRSS")

    # the agent is a process of its own: the MCP client's imports must not weigh on this
    # process, whose own RSS the Pilot runs report
    agent = subprocess.Popen(
        [sys.executable, __file__, "--agent-searches", sock], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    while agent.poll() is None:  # keep the terminal drained while the agent searches
        drain(fd, 0.1)
    answer, errors = agent.communicate()
    result: list = []
    if agent.returncode == 0:
        result.append(json.loads(answer))
    else:
        out["agent_error"] = errors.strip().splitlines()[-1:] or f"exit {agent.returncode}"
    out["agent_search_hits"] = result[0] if result else None
    drain(fd, 2.0)
    rss = proc_status(pid)
    out["rss_searched_mb"], out["peak_rss_searched_mb"] = rss.get("VmRSS"), rss.get("VmHWM")
    drain(fd, 65.0)
    out["rss_searched_idle_mb"] = proc_status(pid).get("VmRSS")
    return out


def agent_searches(sock: str) -> list[tuple]:
    """`searched`'s agent (its own process): 16 hybrid `search` calls through the real MCP
    client on the app's socket; (mode, returned) of each answer."""
    from bench.bench_mcp import client

    async def run() -> list[tuple]:
        hits = []
        async with client(sock, "bench-rss", "auto") as c:
            for words in AGENT_QUERIES:
                res = await c.call_tool("search", {"query": words, "mode": "hybrid", "limit": 20})
                sc = res.structured_content or {}
                hits.append((sc.get("mode"), sc.get("returned")))
        return hits

    return asyncio.run(run())


def launches(root: Path, runs: int, size: tuple[int, int], searches: bool = False, first: bool = False) -> dict:
    """`runs` launches with bytecode compiled (after one that compiles it, reported apart).
    With `first`, each of the `runs` is a first launch on the vault: its cache folder starts
    empty (`launch`'s `cache_home`), as when a person opens a vault for the first time."""
    from bench.common import OUT

    pycache = OUT / "pycache"  # outside the checkout's __pycache__ folders
    shutil.rmtree(pycache, ignore_errors=True)
    compiling = launch(root, size, pycache=pycache)
    runs_out = []
    for _ in range(runs):
        cache_home = Path(tempfile.mkdtemp(prefix="vwb-cache-")) if first else None
        try:
            runs_out.append(launch(root, size, pycache=pycache, searches=searches, cache_home=cache_home))
        finally:
            if cache_home is not None:
                shutil.rmtree(cache_home, ignore_errors=True)
    summary: dict = {"first_launch_compiling_bytecode": compiling, "first_launches": first, "runs": runs_out}
    for key in (
        "first_paint_s",
        "mcp_ready_s",
        "list_loaded_s",
        "rss_mb",
        "peak_rss_mb",
        "rss_still_mb",
        "peak_rss_still_mb",
        "rss_tui_searched_mb",
        "rss_searched_mb",
        "peak_rss_searched_mb",
        "rss_searched_idle_mb",
        "quit_s",
    ):
        values = sorted(r[key] for r in runs_out if r.get(key) is not None)
        if values:
            summary[key] = {"median": values[len(values) // 2], "max": values[-1]}
    return summary


# -- in-process Pilot measurements -----------------------------------------------------------------
class FrameClock:
    """Times every screen update (Textual's compositor pass over the dirty widgets)."""

    def __init__(self) -> None:
        from textual.screen import Screen

        self.frames: list[tuple[float, float]] = []
        self._screen = Screen
        self._orig = Screen._on_timer_update
        clock = self

        def timed(screen) -> None:
            start = time.perf_counter()
            clock._orig(screen)
            clock.frames.append((start, time.perf_counter()))

        Screen._on_timer_update = timed

    def close(self) -> None:
        self._screen._on_timer_update = self._orig

    def frame_after(self, t: float) -> tuple[float, float] | None:
        """The first frame that started at or after `t`, if there is one yet."""
        for frame in reversed(self.frames):
            if frame[0] < t:
                break
            found = frame
        else:
            return self.frames[0] if self.frames else None
        return locals().get("found")

    def frame_around(self, t: float) -> tuple[float, float] | None:
        """The frame that was being drawn at `t` (started before it, ended after it), if it ended."""
        for frame in reversed(self.frames):
            if frame[0] <= t <= frame[1]:
                return frame
            if frame[1] < t:
                return None
        return None


async def settle(app, timeout: float = 60.0) -> None:
    """The app shows the answer to everything asked so far (tui.idle.settle)."""
    from vaultwatch.tui.idle import settle as settled

    await settled(app, timeout)


async def until(predicate, timeout: float = 60.0, step: float = 0.0005) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(step)
    return time.perf_counter() - start


async def painted_after(clock: FrameClock, t: float, timeout: float = 5.0) -> tuple[float, float]:
    """The frame that started after `t` (waiting for it)."""
    start = time.perf_counter()
    while (frame := clock.frame_after(t)) is None or frame[1] > time.perf_counter():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("no frame painted")
        await asyncio.sleep(0.0005)
    return frame


def key_event(key: str):
    from textual import events

    char = {"space": " "}.get(key, key if len(key) == 1 else None)
    return events.Key(key, char)


async def interactive(root: Path, size: tuple[int, int], only: str | None = None) -> dict:
    """The Pilot runs; `only` ("long_note" or "search") runs that step alone."""
    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.events import AgentAccess
    from vaultwatch.core.vault import Vault
    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.config import fixed_config

    out: dict = {}
    clock = FrameClock()
    # one note more than the vault's (the long-note figures)
    long_path = write_long_note(root) if only != "search" else None
    t = time.perf_counter()
    v = Vault(root, clock=parse_as_of(AS_OF))  # not loaded: the app loads it in the background
    # the test config (no MCP, no watcher, no timers), but the garbage collector run as the
    # real app runs it: between frames, when input is quiet (tui.gcpolicy)
    app = make_app(v, config=fixed_config(idle_gc=True))
    try:
        async with app.run_test(size=size) as pilot:
            await app.screen.wait_for_refresh()
            out["first_paint_after_app_built_s"] = round(time.perf_counter() - t, 3)
            await until(lambda: v.wait_ready(0), timeout=120, step=0.05)
            await settle(app, timeout=60)
            out["index_loaded_s"] = round(time.perf_counter() - t, 2)
            out["rows"] = len(app.main.active_list.rows)
            if v.entry_cache is not None:  # a cold load writes the cache: let it finish
                await asyncio.to_thread(v.entry_cache.wait_flushed, 120)
            await settle(app, timeout=60)
            generation = v.snapshot.generation  # a write to the vault would change it
            steps = {"settled": proc_status()["VmRSS"]}
            if only is None:
                out.update(await typing(app, pilot, clock))
                steps["typed"] = proc_status()["VmRSS"]
                out.update(await scrolling(app, pilot, clock))
                steps["scrolled"] = proc_status()["VmRSS"]
            if only in (None, "search"):
                out.update(await searching(app, pilot, clock))
                steps["searched"] = proc_status()["VmRSS"]
                out["search_sqlite_memory_mb"] = sqlite_memory_mb()  # every connection's caches
                out["search_readers_open"] = v._search._readers.open_count if v._search is not None else None
            if only is None:
                out.update(await agent_rows(app, v, clock, AgentAccess))
                steps["agent_rows"] = proc_status()["VmRSS"]
            if long_path is not None:
                out.update(await long_note(app, clock, long_path))
                steps["long_note"] = proc_status()["VmRSS"]
            out["rss_mb_after"] = steps
            out["idle_gc_collections_by_generation"] = list(app.collector.collections)
            out["vault_unchanged"] = v.snapshot.generation == generation
            rss = proc_status()
            out["rss_mb"], out["peak_rss_mb"] = rss["VmRSS"], rss["VmHWM"]
            out["ru_maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
            await pilot.press("ctrl+q")
    finally:
        clock.close()
        if long_path is not None:
            remove_long_note(root, long_path)
    return out


LONG_NOTE = "zz-bench-long-note-{pid}/Long note.md"  # a folder per run: see write_long_note
LONG_NOTE_OPENS = 3
LONG_NOTE_OPEN_TIMEOUT_S = 60.0  # one open of the long note, its keys and its complete render


def write_long_note(root: Path, lines: int = 5000) -> str:
    """A 5,000-line note (headings, links, lists, code, a table) in the vault, for `long_note`
    (removed again after the run: remove_long_note). Its folder is this process's own: two runs
    on one vault (two engineers' benchmarks) once shared one, and the first to finish removed the
    other's note under it (that run's step then timed out and its cleanup failed)."""
    out = ["---", "title: Long note", "tags: [bench]", "---", "# Long note"]
    for i in range(lines):
        part = i % 50
        if part == 0:
            out.append(f"## Part {i // 50}")
        elif part < 30:
            out.append(f"Line {i}: words with `code`, **bold**, a [[Note {i}]] link and #tag/part{i // 50} on it.")
        elif part < 40:
            out.append(f"- item {i} of a list pointing at [[Elsewhere|another note]]")
        elif part == 40:
            out.append("| Key | Value | Notes |")
        elif part == 41:
            out.append("| --- | ---: | --- |")
        elif part < 46:
            out.append(f"| row {i} | {i * 7} | a cell long enough to wrap inside its column when narrow |")
        else:
            out.append(f"> quoted line {i}")
    rel = LONG_NOTE.format(pid=os.getpid())
    path = root / rel
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return rel


def remove_long_note(root: Path, rel: str) -> None:
    """Remove what write_long_note wrote; what is gone already, or a folder someone put other
    files in, is left as it is (a cleanup never hides the run's own error)."""
    path = root / rel
    path.unlink(missing_ok=True)
    try:
        path.parent.rmdir()
    except FileNotFoundError:
        pass
    except OSError as exc:
        print(f"bench_tui: left {path.parent} in place: {exc}", file=sys.stderr)


async def long_note(app, clock: FrameClock, path: str) -> dict:
    """The 5,000-line note opened from another note: open -> its first screen painted, and
    while the rest renders, `down` keys on the preview -> the scrolled frame painted (targets:
    first screen <= 100 ms, keys p95 <= 50 ms meanwhile), and open -> the whole note rendered.

    Each of the LONG_NOTE_OPENS opens has LONG_NOTE_OPEN_TIMEOUT_S: one that runs out is counted
    in `long_note_timeouts` (its samples so far are kept) and the next one starts after the app
    settled, so a slow machine still gets the figures of the other opens."""
    from vaultwatch.tui.widgets.notebody import NoteBody

    preview = app.main.preview
    body = app.query_one(NoteBody)
    other = app.main.active_list.rows[0].path
    first: list[float] = []
    keys: list[float] = []
    whole: list[float] = []
    first_cpu: list[float] = []
    moved: list[float] = []  # when the preview's scroll position changed
    preview.watch(preview, "scroll_y", lambda: moved.append(time.perf_counter()), init=False)
    shown: list[float] = []  # when the body was given the long note's lines
    drawn: list[float] = []  # when the body first drew a line of them (in a frame)
    set_doc = body.set_doc
    render_line = body.render_line

    def timed_set_doc(doc) -> None:
        set_doc(doc)
        if doc.display and preview.wanted == path:
            shown.append(time.perf_counter())

    def timed_render_line(y: int):
        if shown and not drawn and preview.wanted == path:
            drawn.append(time.perf_counter())
        return render_line(y)

    async def one_open(deadline: float) -> None:
        def left() -> float:
            return max(0.1, deadline - time.perf_counter())

        app.main.open_note(other)
        await settle(app, timeout=left())
        t0, cpu0 = time.perf_counter(), time.process_time()
        shown.clear()
        drawn.clear()
        app.main.open_note(path)
        await until(lambda: preview.path == path and bool(body.lines) and bool(shown), timeout=left())
        # the first screen is the frame that drew the body's first line of the note (a frame
        # between the body getting the note and its layout shows the header only)
        await until(lambda: bool(drawn) and clock.frame_around(drawn[0]) is not None, timeout=left())
        frame = clock.frame_around(drawn[0])
        first.append(frame[1] - t0)
        # the process's CPU over the same span (every thread: the worker lexing the first screen,
        # the UI thread applying and painting it, and the rest's rendering once it began): what
        # the machine's load cannot inflate
        first_cpu.append(time.process_time() - cpu0)
        app.set_focus(preview)
        while not body.complete:
            y, t = preview.scroll_y, time.perf_counter()
            n = len(moved)
            app.post_message(key_event("down"))
            await until(lambda y=y: preview.scroll_y != y or body.complete, timeout=left())
            if preview.scroll_y == y:
                break  # the note was complete before the key took effect
            # the first frame that started after the scroll moved shows it (polling may wake
            # after that frame: timing from the poll would wait for a frame that never comes)
            frame = await painted_after(clock, moved[n] if len(moved) > n else time.perf_counter(), timeout=left())
            keys.append(frame[1] - t)
            await asyncio.sleep(0.03)
        await settle(app, timeout=left())
        whole.append(time.perf_counter() - t0)

    body.set_doc = timed_set_doc
    body.render_line = timed_render_line
    timeouts = 0
    try:
        for _ in range(LONG_NOTE_OPENS):
            try:
                await one_open(time.perf_counter() + LONG_NOTE_OPEN_TIMEOUT_S)
            except TimeoutError:
                timeouts += 1
                try:
                    await settle(app, timeout=LONG_NOTE_OPEN_TIMEOUT_S)
                except TimeoutError:
                    break  # the app does not settle: the figures so far are all there is
    finally:
        body.set_doc = set_doc
        body.render_line = render_line
    return {
        "long_note_lines": len(body.lines) if preview.path == path else None,
        "long_note_open_to_first_screen": stats(first) if first else None,
        "long_note_open_to_first_screen_process_cpu": stats(first_cpu) if first_cpu else None,
        "long_note_keys_while_rendering": stats(keys) if keys else None,
        "long_note_open_to_complete": stats(whole) if whole else None,
        "long_note_timeouts": timeouts,
    }


async def typing(app, pilot, clock: FrameClock) -> dict:
    """Keys typed into the filter bar as a person types them: the bench never waits for the app
    between keys. A key is done when the list shows the rows for its text or for a later one
    (a newer key's query supersedes an older one still running)."""
    from vaultwatch.core.query import filterexpr

    out: dict = {}
    doclist = app.main.active_list
    ran: list = []
    shown: list[tuple[float, object]] = []
    orig_query, orig_show = app.session.query, app.main.show_rows

    def query(q, snapshot=None):
        if q.limit is None:  # the list's own queries (tab counts and warm-ups ask for one row)
            ran.append(q)
        return orig_query(q, snapshot)

    def show_rows(pane, rows, total, keep):
        orig_show(pane, rows, total, keep)
        shown.append((time.perf_counter(), app.main.filter_query))

    app.session.query, app.main.show_rows = query, show_rows
    field = app.query_one("#filter-input")

    async def type_text(text: str, gap: float) -> dict:
        if not focused():
            raise RuntimeError("the filter bar lost the focus: keys would reach the list")
        shown.clear()
        ran_before = len(ran)
        keys: list[tuple[float, object]] = []
        typed = field.value
        for ch in text:
            typed += ch
            keys.append((time.perf_counter(), filterexpr.analyse(typed, app.session.snapshot).query))
            app.post_message(key_event("space" if ch == " " else ch))
            await asyncio.sleep(gap)
        final = keys[-1][1]
        await until(lambda: bool(shown) and shown[-1][1] == final, timeout=30)
        await settle(app, timeout=60)
        updated, painted, work, unchanged = [], [], [], 0
        for i, (t0, q) in enumerate(keys):
            if i and q == keys[i - 1][1]:
                unchanged += 1  # "vault" -> "vault ": the same query, nothing to re-list
                continue
            later = [k[1] for k in keys[i:]]
            t_done = next(t for t, shown_q in shown if t >= t0 and shown_q in later)
            updated.append(t_done - t0)
            frame = clock.frame_after(t_done)
            if frame is not None:
                painted.append(frame[1] - t0)
                work.append(frame[1] - frame[0])
        return {
            "updated": updated,
            "painted": painted,
            "work": work,
            "unchanged": unchanged,
            "queries": len(ran) - ran_before,
            "keys": len(keys),
        }

    def focused() -> bool:
        return app.focused is field

    try:
        # the first key as soon as the filter bar has the focus: the bar's warm-up (core
        # folding every title and path once) has only just started. (Keys go to the input
        # only once it has the focus: a letter sent to the list would be a triage action.)
        app.main.action_focus_filter()
        await until(focused, timeout=10)
        t0 = time.perf_counter()
        app.post_message(key_event("v"))
        want = filterexpr.analyse("v", app.session.snapshot).query
        await until(lambda: bool(shown) and shown[-1][1] == want, timeout=30)
        out["filter_first_key_right_after_focus_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        await settle(app, timeout=60)
        await pilot.press("ctrl+u")
        await settle(app, timeout=60)
        # a brisk typist, ~8 keys a second
        steady = await type_text("vault 12", 0.12)
        out["filter_keystroke_to_list_updated"] = stats(steady["updated"])
        out["filter_keystroke_to_painted"] = stats(steady["painted"])
        out["filter_frame_work"] = stats(steady["work"])
        out["filter_keys_same_query"] = steady["unchanged"]
        out["filter_list_queries_run"] = steady["queries"]
        out["filter_rows_after"] = len(doclist.rows)
        await pilot.press("ctrl+u")
        await settle(app, timeout=60)
        # a burst, a key every 25 ms: queries coalesce and the last key still lists at once
        burst = await type_text("socket 00", 0.025)
        out["filter_burst_keys"] = burst["keys"]
        out["filter_burst_list_queries_run"] = burst["queries"]
        out["filter_burst_key_to_list_updated"] = stats(burst["updated"])
        out["filter_burst_last_key_to_list_updated_ms"] = round(burst["updated"][-1] * 1000, 1)
        await pilot.press("ctrl+u")
        await settle(app, timeout=60)
        # whole filter texts at once (the palette's "Clear filter", a pasted term)
        samples = []
        for text in ("status:deprecated", "stale:true", "", "tag:craft", "path:Projects/**", ""):
            n = len(shown)
            want = filterexpr.analyse(text, app.session.snapshot).query
            t0 = time.perf_counter()
            field.value = text
            await until(lambda n=n, want=want: len(shown) > n and shown[-1][1] == want, timeout=30)
            samples.append(time.perf_counter() - t0)
            await settle(app, timeout=60)
        out["filter_set_whole_text_to_list_updated"] = stats(samples)
    finally:
        del app.session.query, app.main.show_rows
    await pilot.press("escape")
    await settle(app, timeout=60)
    return out


async def searching(app, pilot, clock: FrameClock) -> dict:
    """Full-text search in the filter bar (`?words`, target: keystroke -> results painted
    p95 <= 100 ms): words typed at ~8 keys a second once the full-text index is built; a key
    is done when the hits for its text, or a later one, are on the list and painted."""
    out: dict = {}
    flow = app.main.searcher
    shown: list[tuple[float, str]] = []
    orig_show = flow._show

    def show(seq, result):
        orig_show(seq, result)
        shown.append((time.perf_counter(), result.query))

    t0 = time.perf_counter()
    ready = await asyncio.to_thread(app.session.vault.wait_search_ready, 1800)
    out["search_index_ready_s"] = round(time.perf_counter() - t0, 1)
    if not ready:
        out["search_error"] = "the full-text index was not ready"
        return out
    flow._show = show
    field = app.query_one("#filter-input")

    async def typed(phrases) -> list[float]:
        """Each phrase typed at ~8 keys a second; key -> its hits (or a later key's) painted."""
        painted: list[float] = []
        for text, gap in phrases:
            keys: list[tuple[float, str]] = []
            typed = field.value
            shown.clear()
            for ch in text:
                typed += ch
                keys.append((time.perf_counter(), typed[1:].strip()))
                app.post_message(key_event("space" if ch == " " else ch))
                await asyncio.sleep(gap)
            last = keys[-1][1]
            await until(lambda last=last: bool(shown) and shown[-1][1] == last, timeout=60)
            await settle(app, timeout=60)
            for i, (k0, words) in enumerate(keys):
                if i and words == keys[i - 1][1]:
                    continue  # a space: the same words
                later = {w for _, w in keys[i:]}
                t_done = next((t for t, q in shown if t >= k0 and q in later), None)
                frame = clock.frame_after(t_done) if t_done is not None else None
                if frame is not None:
                    painted.append(frame[1] - k0)
        return painted

    try:
        app.main.action_search()
        await until(lambda: app.focused is field, timeout=10)
        await settle(app, timeout=60)
        cpu = time.process_time()
        phrases = (("vault socket", 0.12), (" index", 0.12))
        painted = await typed(phrases)
        out["search_keystroke_to_painted"] = stats(painted) if painted else {"n": 0}
        out["search_mode"] = flow._result.mode if flow._result is not None else None
        # the process's CPU (search thread, UI thread, all) from the first key until the last
        # key's hits were painted and the app settled, per key typed
        out["search_process_cpu_ms_per_key"] = round(
            (time.process_time() - cpu) * 1000 / sum(len(t) for t, _ in phrases)
        )
        out["search_hits_listed"] = len(app.main.search_list.rows)
        await pilot.press("ctrl+u")
        await settle(app, timeout=60)
        # as the app runs with the semantic extra: note vectors ready, so searches are hybrid
        # (keyword ranking fused with the nearest notes by meaning, the query embedded per key)
        vectors = await asyncio.to_thread(app.session.vault.start_vectors)
        if vectors is not None and await asyncio.to_thread(vectors.wait_ready, 900):
            app.main.action_search()
            await until(lambda: app.focused is field, timeout=10)
            await settle(app, timeout=60)
            cpu = time.process_time()
            phrases = (("deploy runbook", 0.12), (" keys", 0.12))
            painted = await typed(phrases)
            out["search_hybrid_keystroke_to_painted"] = stats(painted) if painted else {"n": 0}
            out["search_hybrid_mode"] = flow._result.mode if flow._result is not None else None
            out["search_hybrid_process_cpu_ms_per_key"] = round(
                (time.process_time() - cpu) * 1000 / sum(len(t) for t, _ in phrases)
            )
            await pilot.press("ctrl+u")
            await settle(app, timeout=60)
    finally:
        del flow._show
    await pilot.press("escape")
    await settle(app, timeout=60)
    return out


async def scrolling(app, pilot, clock: FrameClock) -> dict:
    """Hold pagedown (key repeat, 30 keys a second, never waiting for the app), then jump the
    viewport across all the rows, then let the cursor rest so the preview opens its note."""
    out: dict = {}
    doclist = app.main.active_list
    doclist.focus()
    await settle(app, timeout=60)
    moves: list[tuple[float, float]] = []
    orig_move = doclist._move_to

    def move(index: int) -> None:
        t = time.perf_counter()
        orig_move(index)
        moves.append((t, time.perf_counter()))

    doclist._move_to = move
    keys: list[float] = []
    first_frame = len(clock.frames)
    try:
        for _ in range(60):
            keys.append(time.perf_counter())
            app.post_message(key_event("pagedown"))
            await asyncio.sleep(1 / 30)
        await until(lambda: len(moves) >= len(keys), timeout=10)
        await painted_after(clock, moves[-1][1])
    finally:
        del doclist._move_to
    frames = clock.frames[first_frame:]
    # a frame's work: its own update plus the key handlers that ran since the frame before it
    work, previous_end = [], keys[0]
    for start, end in frames:
        handlers = sum(e - s for s, e in moves if previous_end <= s < start)
        work.append(end - start + handlers)
        previous_end = end
    latency = []
    for t0, (_, moved) in zip(keys, moves, strict=True):
        frame = next((f for f in frames if f[0] >= moved), None)
        if frame is not None:
            latency.append(frame[1] - t0)
    out["scroll_keys"] = len(keys)
    out["scroll_frames"] = len(frames)
    out["scroll_pagedown_frame_work"] = stats(work)
    out["scroll_pagedown_key_to_painted"] = stats(latency)

    # the cursor rests: the preview opens the note under it (a layout of the whole screen)
    await settle(app, timeout=60)
    samples = []
    for _ in range(10):
        before = app.main.preview.path
        app.post_message(key_event("down"))
        await until(lambda b=before: app.main.preview.path != b, timeout=10)
        frame = await painted_after(clock, time.perf_counter())
        samples.append(frame[1] - frame[0])
        await settle(app, timeout=60)
    out["preview_open_frame_work"] = stats(samples)

    # the viewport jumps to 40 places spread over the whole list (scrollbar drag, mouse
    # wheel): every frame renders a screenful of rows it has never rendered before
    work = []
    total = len(doclist.rows)
    for i in range(40):
        y = (i * 2_477) % max(1, total - doclist.size.height)
        t0 = time.perf_counter()
        doclist.scroll_to(y=y, animate=False, immediate=True)
        t1 = time.perf_counter()
        frame = await painted_after(clock, t1)
        work.append((t1 - t0) + (frame[1] - frame[0]))
        await asyncio.sleep(0.02)
    out["scroll_jump_frame_work"] = stats(work)
    t0 = time.perf_counter()
    app.post_message(key_event("end"))
    await until(lambda: doclist.cursor == len(doclist.rows) - 1, timeout=5)
    frame = await painted_after(clock, time.perf_counter())
    out["jump_to_end_key_to_painted_ms"] = round((frame[1] - t0) * 1000, 1)
    out["cursor_at"] = doclist.cursor
    return out


async def agent_rows(app, v, clock: FrameClock, AgentAccess) -> dict:
    """Agent calls published from another thread (as the MCP server does) -> painted rows."""
    from vaultwatch.tui.widgets.activity import ActivityList

    activity = app.query_one(ActivityList)
    paths = tuple(e.path for e in app.main.active_list.rows[:100])
    samples, work = [], []
    for i in range(30):
        event = AgentAccess(
            agent=f"bench-agent-{i % 3}/1",
            session=f"s{i % 3}",
            tool="list_documents" if i % 2 else "read",
            summary="bench",
            paths=paths if i % 2 else paths[:1],
            result_count=len(paths),
            duration_ms=1.0,
            at=time.time(),
        )
        n = len(activity.rows)
        t0 = time.perf_counter()
        threading.Thread(target=v.bus.publish, args=(event,)).start()
        await until(lambda n=n: len(activity.rows) > n)
        frame = await painted_after(clock, time.perf_counter())
        samples.append(frame[1] - t0)
        work.append(frame[1] - frame[0])
        await asyncio.sleep(0.05)
    return {"agent_call_to_row_painted": stats(samples), "agent_row_frame_work": stats(work)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=100_000, help="vaultgen vault size (default 100000)")
    parser.add_argument("--vault", default=None, help="an existing vault instead of a vaultgen one")
    parser.add_argument("--launches", type=int, default=5, help="pty launches from process start (default 5)")
    parser.add_argument("--no-launch", action="store_true", help="skip the launches")
    parser.add_argument(
        "--launch-searches",
        action="store_true",
        help="search each launched app in the TUI and over MCP, then read its RSS again",
    )
    parser.add_argument(
        "--first-launches",
        action="store_true",
        help="make each measured launch a first one: an empty cache folder of its own",
    )
    parser.add_argument("--no-interactive", action="store_true", help="skip the in-process Pilot runs")
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--only-long-note",
        action="store_const",
        dest="only",
        const="long_note",
        help="of the Pilot runs, only the long note's (iterating on the preview)",
    )
    only.add_argument(
        "--only-search",
        action="store_const",
        dest="only",
        const="search",
        help="of the Pilot runs, only the full-text search's (keyword, then hybrid)",
    )
    parser.add_argument("--agent-searches", metavar="SOCKET", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agent_searches:
        print(json.dumps(agent_searches(args.agent_searches)))
        return 0
    # the Pilot runs measure the app as `vaultwatch` runs it: with its glibc arena limit, set
    # before any thread starts (tui.commands.cli.MALLOC_ARENAS); glibc's default gives the search and
    # worker threads arenas of their own, which kept more of the search step's heap
    from vaultwatch.core.memory import fix_mmap_threshold, limit_malloc_arenas
    from vaultwatch.tui.commands.cli import MALLOC_ARENAS, MMAP_THRESHOLD

    arenas = MALLOC_ARENAS if limit_malloc_arenas(MALLOC_ARENAS) else os.environ.get("MALLOC_ARENA_MAX")
    mmap_threshold = (
        MMAP_THRESHOLD
        if fix_mmap_threshold(MMAP_THRESHOLD)
        else os.environ.get("MALLOC_MMAP_THRESHOLD_", "glibc's own")
    )
    root = Path(args.vault) if args.vault else vault(args.notes)[0]
    size = (160, 50)
    result: dict = {
        "bench": "tui",
        "vault": str(root),
        "notes": args.notes,
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
        "size": list(size),
        "malloc_arenas": arenas,
        "mmap_threshold": mmap_threshold,
    }
    if not args.no_launch:
        result["launch"] = launches(root, args.launches, size, args.launch_searches, args.first_launches)
    if not args.no_interactive:
        result.update(asyncio.run(interactive(root, size, args.only)))
    result["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
