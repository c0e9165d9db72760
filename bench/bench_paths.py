"""Issue 13 benchmark: the descriptor-based path code on the hot paths (core.disk.safeio).

    python bench/bench_paths.py [--notes 100000] [--reads 2000]

Loads a vaultgen vault in a fresh child process, then times `core.disk.reader.read` of random
notes (whole note, default page) and Writer.etag (the write path's resolve-and-open), and
one resolve alone (core.disk.paths.to_disk). Prints JSON with p50/p95 per call in microseconds.
Run it on two checkouts (PYTHONPATH) to compare before and after.
"""
from __future__ import annotations

import argparse
import json
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
    return {"p50_us": round(statistics.median(samples) * 1e6, 1),
            "p95_us": round(ordered[int(len(ordered) * 0.95)] * 1e6, 1), "n": len(samples)}


def child(path: str, reads: int) -> dict:
    import core
    from core.disk.paths import to_disk
    from core.disk.reader import read
    from core.vault import Vault
    from core.edit.writes import Writer

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--reads", type=int, default=2000)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], int(a.child[1]))))
        return
    path, _ = vault(a.notes)
    out = subprocess.run([sys.executable, __file__, "--child", str(path), str(a.reads)], check=True,
                         capture_output=True, text=True).stdout
    emit({"benchmark": "paths", "results": json.loads(out)})


if __name__ == "__main__":
    main()
