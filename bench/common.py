"""Shared helpers for the benchmarks: generated vaults (bench/vaultgen.py), timing, JSON output."""

from __future__ import annotations

import json
import os
import shutil
import statistics
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


def emit(data: dict) -> None:
    """Print one JSON document (the benchmark's result) on stdout."""
    print(json.dumps(data, indent=1, ensure_ascii=False))
