"""Issue 13 benchmark: the descriptor-based path code on the hot paths (core.disk.safeio).

    python bench/bench_paths.py [--notes 100000] [--reads 2000] [--before PYTHON] [--rounds 3]

Loads a vaultgen vault in a fresh child process, then times `core.disk.reader.read` of random
notes (whole note, default page) and Writer.etag (the write path's resolve-and-open), and
one resolve alone (core.disk.paths.to_disk). Prints JSON with p50/p95 per call in microseconds.

--before PYTHON also runs the same child with another interpreter (the python of a virtual
environment where another checkout of vaultwatch is installed), alternating the two `--rounds` times so both see the same machine load, and reports each
side's best-round p50 and after/before ratios (the issue's target: read p50 within 10%).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import emit, vault  # noqa: E402


def _stats(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "p50_us": round(statistics.median(samples) * 1e6, 1),
        "p95_us": round(ordered[int(len(ordered) * 0.95)] * 1e6, 1),
        "n": len(samples),
    }


def child(path: str, reads: int) -> dict:
    import vaultwatch.core as core
    from vaultwatch.core.disk.paths import to_disk
    from vaultwatch.core.disk.reader import read
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.vault import Vault

    v = Vault(path, cache=False)
    t = time.perf_counter()
    v.load()
    cold = time.perf_counter() - t
    notes = [e.path for e in v.snapshot.entries if e.kind == "note"]
    rng = random.Random(13)
    picks = [rng.choice(notes) for _ in range(reads)]
    w = Writer(v)
    out = {"code": str(Path(core.__file__).parent), "notes": len(notes), "cold_index_s": round(cold, 2)}
    for name, fn in (("read", lambda p: read(v, p)), ("etag", w.etag), ("resolve", lambda p: to_disk(v.root_real, p))):
        for p in picks[:50]:
            fn(p)  # warm
        samples = []
        for p in picks:
            s = time.perf_counter()
            fn(p)
            samples.append(time.perf_counter() - s)
        out[name] = _stats(samples)
    return out


def _run(python: str, path: Path, reads: int) -> dict:
    out = subprocess.run(
        [python, __file__, "--child", str(path), str(reads)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--reads", type=int, default=2000)
    ap.add_argument("--before", help="the python of an environment with another vaultwatch installed")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], int(a.child[1]))))
        return
    path, _ = vault(a.notes)
    if a.before is None:
        emit({"benchmark": "paths", "results": _run(sys.executable, path, a.reads)})
        return
    rounds: dict[str, list[dict]] = {"after": [], "before": []}
    for _ in range(a.rounds):  # alternated: both sides see the same load
        rounds["before"].append(_run(a.before, path, a.reads))
        rounds["after"].append(_run(sys.executable, path, a.reads))
    best = {
        side: {op: min(r[op]["p50_us"] for r in runs) for op in ("read", "etag", "resolve")}
        for side, runs in rounds.items()
    }
    ratio = {op: round(best["after"][op] / best["before"][op], 3) for op in ("read", "etag", "resolve")}
    emit(
        {
            "benchmark": "paths",
            "notes": rounds["after"][0]["notes"],
            "best_p50_us": best,
            "after_over_before": ratio,
            "read_within_10_percent": ratio["read"] <= 1.10,
            "load_avg_1m": round(os.getloadavg()[0], 1),
            "cold_index_s": {side: [r["cold_index_s"] for r in runs] for side, runs in rounds.items()},
            "rounds": rounds,
        }
    )


if __name__ == "__main__":
    main()
