"""Start-up and memory of `vaultwatch serve --stdio`, this checkout against another, alternated.

Spawns the server over stdio with the real Python `mcp` client (as an agent's host does) on its
own copy of a vaultgen vault, cold (a fresh cache folder) then warm (the same folder again), and
per spawn times: the `initialize` answered, the first listing page, the complete listing (every
page through the cursor, checked against the generator's manifest). It then keeps the session
open until `--hold` seconds after the spawn with a keyword search every second (what an agent
does; no query by meaning; the first that answers is `search_ready_s`), while every process
below the client is sampled every 10 ms from /proc: the peak of their summed RSS (the process
tree's), what each kind of process held at that peak, each process's own peak (by what it
runs) and the tree's RSS at the end of the hold. A hold shorter than the full-text build
misses the build's part of the peak.

With `--baseline CHECKOUT` every spawn is run for both checkouts, the order flipping each round,
so both see the same load; the JSON reports medians and the ratios new / baseline, and the load
average. The floor (one process that walks, reads and parses every note) is measured each round.

    python -m bench.bench_start [--notes 10000] [--rounds 3] [--hold 30] [--baseline /work/base]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script by dev.py bench

from mcp import Client, StdioServerParameters  # noqa: E402

from bench.bench_peers import Manifest, floor_s  # noqa: E402
from bench.common import AS_OF, OUT, ROOT, descendants_rss, emit, vault  # noqa: E402

_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
_UNTIL_SEARCH_MAX_S = 900.0
# a child between its fork (a vfork: subprocess's) and its exec: no command line yet, and the
# resident pages /proc shows for it are its parent's
_STARTING = "starting"


def _role(pid: int, server: int | None) -> str:
    """What a process below the client runs: the server itself or a kind of child."""
    if pid == server:
        return "server"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return "gone"
    cmd = b" ".join(argv).decode("utf-8", "replace")
    if not cmd.strip():
        return _STARTING
    if "forkserver" in cmd:
        return "forkserver"
    if "resource_tracker" in cmd:
        return "resource_tracker"
    if "freshproc" in cmd:  # core/index/freshproc.py: a worker started as a fresh interpreter
        try:  # its payload (the last argument, base64 of a pickle) names the module it runs
            payload = base64.b64decode(next(a for a in reversed(argv) if a))
        except (ValueError, StopIteration):
            payload = b""
        for module, role in ((b"ftsfirst", "search-build"), (b"ftsprep", "search-prep"), (b"freshproc", "parse")):
            if module in payload:
                return "fresh-worker:" + role
        return "fresh-worker"
    if "multiprocessing" in cmd or "spawn_main" in cmd:
        return "mp-child"
    return "child:" + cmd[:60]


class Tree:
    """Every process below this one, sampled every 10 ms: summed RSS peak, each role's peak, the last."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self.last_mb = 0.0
        self.roles: dict[str, float] = {}
        self.at_peak: dict[str, float] = {}  # each role's RSS (summed over its processes) when the tree peaked
        self.server_pid: int | None = None
        self.timeline: list[tuple[float, float, int]] = []  # (seconds, tree MB, processes) every 0.5 s
        self._before: set[int] = set()  # already running when sampling starts: another run's, left out
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = time.perf_counter()

    def __enter__(self) -> Tree:
        self._before = set(descendants_rss(os.getpid()))
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = os.getpid()
        next_mark = 0.0
        while not self._stop.wait(0.01):
            below = descendants_rss(me, self._before)
            tree = set(below)
            rss = {p: pages for p, (_parent, pages) in below.items()}
            if self.server_pid is None:
                direct = [p for p, (parent, _pages) in below.items() if parent == me]
                if direct:
                    self.server_pid = min(direct)
            total = 0.0
            parts: dict[str, float] = {}
            for p in tree:
                # named afresh each time: a child seen before its exec shows its parent's command line
                role = _role(p, self.server_pid)
                if role == _STARTING:  # its pages are still its parent's: counting them would count those twice
                    continue
                mb = rss.get(p, 0) * _PAGE_BYTES / 2**20
                total += mb
                self.roles[role] = max(self.roles.get(role, 0.0), mb)
                parts[role] = parts.get(role, 0.0) + mb
            if total > self.peak_mb:
                self.peak_mb, self.at_peak = total, parts
            self.last_mb = total
            now = time.perf_counter() - self._t0
            if now >= next_mark:
                self.timeline.append((round(now, 2), round(total, 1), len(tree)))
                next_mark += 0.5


async def spawn(
    checkout: Path, root: Path, home: Path, cache: Path, manifest: Manifest, hold: float, until_search: bool = False
) -> dict:
    """One spawn of the server: its timings and memory (see module doc)."""
    run = Path(tempfile.mkdtemp(prefix="vwl", dir="/tmp"))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(cache),
        "XDG_RUNTIME_DIR": str(run),
        "XDG_STATE_HOME": str(home / "state"),
        "PYTHONPATH": str(checkout),
    }
    args = ["-m", "vaultwatch.tui.entry", "serve", str(root), "--stdio", "--as-of", AS_OF]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(checkout))
    out: dict = {}
    with Tree() as tree:
        t0 = time.perf_counter()
        async with Client(params, mode="legacy") as c:
            out["initialize_s"] = time.perf_counter() - t0
            while True:  # whole listings until one is complete (a load past the listing's wait says so)
                paths: list[str] = []
                cursor = None
                pages: list[float] = []  # when each page of this listing was answered (s from spawn)
                while True:
                    res = await c.call_tool("list_documents", {"cursor": cursor} if cursor else {})
                    pages.append(round(time.perf_counter() - t0, 4))
                    data = res.structured_content
                    assert data is not None and not res.is_error, res
                    loading = bool((res.meta or {}).get("index_loading"))
                    if "first_page_s" not in out and not loading:
                        out["first_page_s"] = time.perf_counter() - t0
                    paths.extend(r["path"] for r in data["result"])
                    cursor = data.get("next_cursor")
                    if not cursor:
                        break
                problems = manifest.check(paths)
                if not problems or time.perf_counter() - t0 > 300:
                    break
                await asyncio.sleep(0.05)
            out["complete_listing_s"] = time.perf_counter() - t0
            out["pages_s"] = pages  # the complete listing's pages (kept with --timeline)
            out["correct"] = not problems
            if problems:
                out["problems"] = problems
            searches = 0
            while time.perf_counter() - t0 < hold or (
                until_search and "search_ready_s" not in out and time.perf_counter() - t0 < _UNTIL_SEARCH_MAX_S
            ):
                res = await c.call_tool("search", {"query": f"note {searches}", "limit": 5})
                # while a big vault's first full-text build runs, search says so (listing works meanwhile)
                assert not res.is_error or "still building" in res.content[0].text, res
                if not res.is_error and "search_ready_s" not in out:  # to within the second between searches
                    out["search_ready_s"] = round(time.perf_counter() - t0, 2)
                searches += 1
                await asyncio.sleep(1.0)
            out["searches"] = searches
        out["tree_peak_mb"] = round(tree.peak_mb, 1)
        out["tree_end_mb"] = round(tree.last_mb, 1)
        out["roles_peak_mb"] = {k: round(v, 1) for k, v in sorted(tree.roles.items())}
        out["roles_at_tree_peak_mb"] = {k: round(v, 1) for k, v in sorted(tree.at_peak.items())}
        out["timeline"] = tree.timeline
    shutil.rmtree(run, ignore_errors=True)
    return out


async def main(
    notes: int, rounds: int, hold: float, baseline: Path | None, timeline: bool, until_search: bool = False
) -> dict:
    base, m = vault(notes)
    work = OUT / "start"
    shutil.rmtree(work, ignore_errors=True)
    sides = {"new": ROOT} | ({"baseline": baseline} if baseline else {})
    roots = {}
    for name in sides:
        roots[name] = work / name / "vault"
        shutil.copytree(base, roots[name], symlinks=True)
    runs: dict[str, list[dict]] = {name: [] for name in sides}
    floors, loads = [], []
    for rnd in range(rounds):
        floors.append(floor_s(base))
        order = list(sides) if rnd % 2 == 0 else list(reversed(sides))
        for name in order:
            home = work / name / "home"
            home.mkdir(exist_ok=True)
            cache = work / name / f"cache-{rnd}"
            for kind in ("cold", "warm"):
                got = await spawn(sides[name], roots[name], home, cache, Manifest(m), hold, until_search)
                got["kind"], got["round"] = kind, rnd
                if not timeline:
                    got.pop("timeline")
                    got.pop("pages_s")
                runs[name].append(got)
                print(
                    name, kind, rnd, {k: v for k, v in got.items() if k not in ("timeline", "pages_s")}, file=sys.stderr
                )
        loads.append(os.getloadavg())
    summary: dict = {}
    for name, got in runs.items():
        s: dict = {}
        for kind in ("cold", "warm"):
            mine = [g for g in got if g["kind"] == kind]
            for key in ("initialize_s", "first_page_s", "complete_listing_s", "tree_peak_mb", "tree_end_mb"):
                s[f"{kind}_{key}"] = round(statistics.median(g[key] for g in mine), 3)
            ready = [g["search_ready_s"] for g in mine if "search_ready_s" in g]
            if len(ready) == len(mine):  # else some hold ended before the full-text index was ready
                s[f"{kind}_search_ready_s"] = round(statistics.median(ready), 3)
            s[f"{kind}_correct"] = all(g["correct"] for g in mine)
        s["tree_peak_mb_max"] = max(g["tree_peak_mb"] for g in got)
        summary[name] = s
    if baseline:
        summary["ratio_new_to_baseline"] = {
            k: round(summary["new"][k] / summary["baseline"][k], 2)
            for k in summary["new"]
            if isinstance(summary["new"][k], float) and summary["baseline"].get(k)
        }
    floor = statistics.median(floors)
    summary["new_vs_floor"] = {
        "cold": round(summary["new"]["cold_complete_listing_s"] / floor, 2),
        "warm": round(summary["new"]["warm_complete_listing_s"] / floor, 2),
    }
    return {
        "notes": m["notes"],
        "rounds": rounds,
        "hold_s": hold,
        "until_search": until_search,
        "floor_s": [round(f, 3) for f in floors],
        "load_average_after_each_round": [[round(x, 2) for x in la] for la in loads],
        "summary": summary,
        "runs": runs,
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hold", type=float, default=30.0, help="seconds from spawn the session stays open")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout, alternated with this one")
    ap.add_argument(
        "--timeline", action="store_true", help="keep each spawn's tree RSS every 0.5 s, and when each page came"
    )
    ap.add_argument(
        "--until-search",
        action="store_true",
        help="hold each session past --hold until a search answers (the full-text build is done: its peak is in)",
    )
    a = ap.parse_args()
    emit(asyncio.run(main(a.notes, a.rounds, a.hold, a.baseline, a.timeline, a.until_search)))
