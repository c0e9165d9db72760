"""Shared helpers for the benchmarks: vaultgen vaults, timing, JSON output."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(os.environ.get("VAULTWATCH_BENCH_DIR", ROOT / "bench" / "out"))
AS_OF = "2026-11-29"  # vaultgen's manifest counts stale notes as of this day


def vaultgen_script() -> Path:
    """Where vaultgen.py is: $VAULTGEN, else ../shared/vaultgen.py beside the checkout."""
    env = os.environ.get("VAULTGEN")
    return Path(env) if env else ROOT.parent / "shared" / "vaultgen.py"


def vault(notes: int) -> tuple[Path, dict]:
    """A vaultgen vault of `notes` notes (generated once, then reused) and its manifest."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"vault-{notes}"
    manifest = OUT / f"vault-{notes}.manifest.json"
    if not manifest.exists():
        if path.exists():
            subprocess.check_call(["rm", "-rf", str(path)])
        subprocess.check_call([sys.executable, str(vaultgen_script()), str(path), "--notes", str(notes)],
                              stdout=subprocess.DEVNULL)
    return path, json.loads(manifest.read_text())


def timed(fn: Callable[[], object], repeat: int = 15) -> dict[str, float]:
    """Run fn `repeat` times; first-call and median/p95 milliseconds."""
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    ordered = sorted(samples)
    return {"first_ms": round(samples[0], 2), "p50_ms": round(statistics.median(samples), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 2)}


def emit(data: dict) -> None:
    """Print one JSON document (the benchmark's result) on stdout."""
    print(json.dumps(data, indent=1, ensure_ascii=False))
