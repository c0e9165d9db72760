"""TUI benchmark (Pilot, headless) on a vaultgen vault: first paint, filter keystroke -> list
updated, scrolling frame time, agent call -> activity row, and RSS. Prints JSON.

    python bench/bench_tui.py [--notes 100000]

Targets (issue 5): first paint <= 0.5 s whatever the vault size; filter keystroke -> list
updated <= 50 ms at 100k; scroll frames < 16 ms; agent call -> row <= 100 ms; RSS <= 350 MB.
"""
from __future__ import annotations

import time

PROCESS_T0 = time.perf_counter()  # before Textual and the app are imported

import argparse
import asyncio
import os
import resource
import statistics
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import AS_OF, emit, vault  # noqa: E402
from core.clock import parse_as_of  # noqa: E402
from core.events import AgentAccess  # noqa: E402
from core.vault import Vault  # noqa: E402
from tui.app import make_app  # noqa: E402
from tui.config import fixed_config  # noqa: E402
from tui.widgets.activity import ActivityList  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"n": len(samples), "p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1)}


async def until(predicate, timeout: float = 60.0, step: float = 0.001) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(step)
    return time.perf_counter() - start


async def timed_key(pilot, key: str, probe, settle: bool = True) -> float:
    """Seconds from pressing `key` until `probe()` changes (the app's own work, not Pilot's wait
    for every worker and timer to go idle)."""
    before = probe()
    t = time.perf_counter()
    task = asyncio.create_task(pilot.press(key))
    await until(lambda: probe() != before)  # noqa: B023
    took = time.perf_counter() - t
    await task
    return took


async def run(root: Path, size: tuple[int, int]) -> dict:
    out: dict = {}
    launched = time.perf_counter()
    v = Vault(root, clock=parse_as_of(AS_OF))  # not loaded: the app loads it in the background
    app = make_app(v, config=fixed_config())

    async with app.run_test(size=size) as pilot:
        await app.screen.wait_for_refresh()
        out["first_paint_s"] = round(time.perf_counter() - launched, 3)
        out["first_paint_since_process_start_s"] = round(time.perf_counter() - PROCESS_T0, 3)
        out["indexing_visible_at_first_paint"] = "index" in app.status.parts
        await until(lambda: v.wait_ready(0), timeout=120, step=0.05)
        await app.settle(timeout=60)
        out["index_loaded_s"] = round(time.perf_counter() - launched, 2)
        out["rows"] = len(app.active_list.rows)
        if v.entry_cache is not None:  # the core writes its cache after a cold load: let it finish
            t = time.perf_counter()
            await asyncio.to_thread(v.entry_cache.wait_flushed, 120)
            out["cache_flush_wait_s"] = round(time.perf_counter() - t, 2)
        await app.settle(timeout=60)

        # filter keystrokes: each key re-runs the core query over every note
        doclist = app.active_list
        await pilot.press("slash")
        samples = []
        for ch in "vault 12":
            samples.append(await timed_key(pilot, ch if ch != " " else "space", lambda: doclist.updates))
            await app.settle(timeout=60)
        out["filter_keystroke_to_list_updated"] = stats(samples)
        out["filter_rows_after"] = len(doclist.rows)
        samples = []
        for text in ("status:deprecated", "stale:true", "", "tag:craft", "path:Projects/**", ""):
            before = doclist.updates
            t = time.perf_counter()
            app.query_one("#filter-input").value = text
            await until(lambda b=before: doclist.updates != b)
            samples.append(time.perf_counter() - t)
        out["filter_set_whole_text_to_list_updated"] = stats(samples)
        await app.settle(timeout=60)
        await pilot.press("escape")

        # scrolling: render every visible line after each page move (cold line cache)
        doclist = app.active_list
        frames, keys = [], []
        height = doclist.size.height
        for _ in range(40):
            keys.append(await timed_key(pilot, "pagedown", lambda: doclist.cursor, settle=False))
            t = time.perf_counter()
            doclist._lines.clear()
            for y in range(height):
                doclist.render_line(y)
            frames.append(time.perf_counter() - t)
        out["scroll_page_render"] = stats(frames)
        out["scroll_pagedown_key_to_cursor_moved"] = stats(keys)
        t = time.perf_counter()
        await pilot.press("end")
        out["jump_to_end_ms"] = round((time.perf_counter() - t) * 1000, 1)
        out["cursor_at"] = doclist.cursor

        # agent calls -> activity rows (published from another thread, as the MCP server does)
        activity = app.query_one(ActivityList)
        paths = tuple(e.path for e in doclist.rows[:100])
        samples = []
        for i in range(30):
            event = AgentAccess(agent="bench-agent/1", session="s1", tool="list_documents" if i % 2 else "read",
                                summary="bench", paths=paths if i % 2 else paths[:1], result_count=len(paths),
                                duration_ms=1.0, at=time.time())
            t = time.perf_counter()
            threading.Thread(target=v.bus.publish, args=(event,)).start()
            await until(lambda n=i: len(activity.rows) > n)
            await app.screen.wait_for_refresh()
            samples.append(time.perf_counter() - t)
            await asyncio.sleep(0.02)
        out["agent_call_to_row_painted"] = stats(samples)

        out["rss_mb"] = round(rss_mb(), 1)
        out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        await pilot.press("q")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--vault", default=None, help="an existing vault instead of a vaultgen one")
    args = parser.parse_args()
    root = Path(args.vault) if args.vault else vault(args.notes)[0]
    result = {"bench": "tui", "vault": str(root), "notes": args.notes, "cpus": os.cpu_count()}
    result.update(asyncio.run(run(root, (160, 50))))
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
