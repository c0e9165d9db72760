"""Shared helpers for the benchmarks: generated vaults (bench/vaultgen.py), timing, JSON output."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench.vaultgen import TODAY, VERSION, generate, manifest_path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(os.environ.get("VAULTWATCH_BENCH_DIR", ROOT / "bench" / "out"))
AS_OF = TODAY.isoformat()  # the generator's manifest counts stale notes as of this day


def vault(notes: int, *, realistic: bool = False) -> tuple[Path, dict]:
    """A generated vault of `notes` notes (generated once, then reused) and its manifest."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"vault-{notes}{'-realistic' if realistic else ''}"
    manifest = manifest_path(path)
    if manifest.exists():
        m = json.loads(manifest.read_text(encoding="utf-8"))
        if m.get("generator") == f"bench.vaultgen {VERSION}":
            return path, m
    shutil.rmtree(path, ignore_errors=True)
    return path, generate(path, notes, realistic=realistic)


def timed(fn: Callable[[], object], repeat: int = 15) -> dict[str, float]:
    """Run fn `repeat` times; first-call and median/p95 milliseconds."""
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    ordered = sorted(samples)
    return {
        "first_ms": round(samples[0], 2),
        "p50_ms": round(statistics.median(samples), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 2),
    }


SAVE_ENV = "VAULTWATCH_BENCH_SAVE"  # a file to save the result in, with its machine and date


def emit(data: dict) -> None:
    """Print one JSON document (the benchmark's result) on stdout; when VAULTWATCH_BENCH_SAVE names a
    file (`python -m bench.run_all --save` sets it), also save it there as a record (`record`)."""
    print(json.dumps(data, indent=1, ensure_ascii=False))
    target = os.environ.get(SAVE_ENV)
    if target:
        path = Path(target)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record(data), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def record(data: dict) -> dict:
    """A result as bench/report.py reads it: what ran, on which machine, on which day (UTC)."""
    return {
        "command": " ".join(["python", *(_relative(a) for a in sys.argv)]),
        "date": dt.datetime.now(dt.UTC).date().isoformat(),
        "machine": machine(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "result": data,
    }


def machine() -> dict:
    """The figures' machine: CPUs (count and model), Python, OS and RAM."""
    return {
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "ram_gib": _ram_gib(),
    }


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")  # Linux; elsewhere the platform module's answer (often empty)
    lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines() if cpuinfo.exists() else []
    models = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return models[0] if models else platform.processor() or "unknown"


def _ram_gib() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None  # a system without these sysconf names


def _relative(arg: str) -> str:
    """An argument as the repository knows it (a script's path from the root, not this checkout's)."""
    try:
        return Path(arg).resolve().relative_to(ROOT).as_posix() if arg.endswith(".py") else arg
    except ValueError:
        return arg


def descendants_rss(root: int, without: frozenset[int] | set[int] = frozenset()) -> dict[int, tuple[int, int]]:
    """Every process below `root` (children, theirs, ...) with its parent and resident pages, from one
    pass over /proc (Linux): what the tree-RSS samplers of bench_peers and bench_start read. The
    processes in `without` and those below them are left out: a sampler passes what was already
    running when it started (a server of the run before, still exiting, once counted in the next
    one's peak)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()  # after the name, which may hold spaces
        except OSError:  # gone since the listing
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(fields[21])
    tree: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier and p not in tree and p not in without}
        tree |= frontier
    return {p: (parents[p], rss[p]) for p in tree}
