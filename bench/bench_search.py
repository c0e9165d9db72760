"""Issue 17 benchmark: search quality on the judged set (hit@3, MRR@10) and search at scale.

    python bench/bench_search.py [quality] [scale] [--notes 100000]

quality: writes the judged corpus (bench/searcheval) to bench/out/searcheval, indexes it and
runs every judged query. scale: keyword search latency, the full-text build and the index
size on a vaultgen vault. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import OUT, emit  # noqa: E402


def quality() -> dict:
    import os

    from bench.searcheval import evaluate, write
    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.vault import Vault

    root = OUT / "searcheval"
    shutil.rmtree(root, ignore_errors=True)
    write(root)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        v = Vault(root, clock=parse_as_of("2026-11-29"))
        v.load()
        assert v.wait_search_ready(60)
        try:
            out = {"notes": v.stats()["notes"], "keyword": evaluate(v, mode="keyword")}
            if v.start_vectors() is not None and v._vectors.wait_ready(300):
                out["hybrid"] = evaluate(v, mode="hybrid")
                out["semantic"] = evaluate(v, mode="semantic")
        finally:
            v.stop()
    return out


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6


def _pct(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 2)


def scale(notes: int) -> dict:
    """Cold full-text build, index bytes per note-text byte and keyword latency on a vaultgen vault."""
    import os
    import random
    import time

    from bench.common import AS_OF, vault
    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.search import reuse
    from vaultwatch.core.vault import Vault

    # each query below is timed 5 times: the reuse of the last answer for the same words (search
    # as you type, core.search.reuse) would answer 4 of them from memory; the figures time the search
    reuse.REUSE_SECONDS = 0.0
    path, _manifest = vault(notes)
    text_bytes = sum(f.stat().st_size for f in Path(path).rglob("*.md"))
    out: dict = {"notes": notes, "note_text_mb": round(text_bytes / 1e6, 1)}
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        v = Vault(path, clock=parse_as_of(AS_OF))
        v.load()
        progress: list[tuple[int, int]] = []
        v.bus.subscribe(lambda e: progress.append((e.done, e.total)) if getattr(e, "phase", None) == "search" else None)
        t, c = time.perf_counter(), time.process_time()
        assert v.wait_search_ready(900)
        out["fts_build_s"] = round(time.perf_counter() - t, 2)
        out["fts_build_cpu_s"] = round(time.process_time() - c, 2)  # every thread's CPU: what load inflates least
        # the processes that prepared the notes (core.search.ftsprep) and, for a big first build,
        # the one that wrote them (core.search.ftsfirst), as they report it
        out["fts_build_pool_cpu_s"] = round(v._search.build_pool_cpu_seconds, 2)
        out["progress_events"] = len(progress)
        db = Path(v._search.db_path)
        size = sum(Path(str(db) + sfx).stat().st_size for sfx in ("", "-wal") if Path(str(db) + sfx).exists())
        out["index_mb"] = round(size / 1e6, 1)
        out["index_bytes_per_note_byte"] = round(size / text_bytes, 3)
        entries = [e for e in v.snapshot.entries if e.kind == "note"]
        rnd = random.Random(7)
        sample = rnd.sample(entries, 20)
        queries = [e.title for e in sample[:10]] + [
            "latency socket",
            "budget roadmap",
            "vault triage",
            "stale index",
            "metric disk",
            '"review meeting"',
            "budg*",
            "laten*",
            "how do I rotate the deploy keys",
            "notes about the roadmap review",
        ]
        lat: list[float] = []
        cpu: list[float] = []  # the calling thread's CPU (a keyword search runs wholly in it)
        for q in queries:
            for _ in range(5):
                q0, c0 = time.perf_counter(), time.thread_time()
                v.search(q, limit=20)
                cpu.append((time.thread_time() - c0) * 1000)
                lat.append((time.perf_counter() - q0) * 1000)
        out["keyword_search_ms"] = {
            "p50": _pct(lat, 0.5),
            "p95": _pct(lat, 0.95),
            "max": round(max(lat), 2),
            "samples": len(lat),
        }
        out["keyword_search_cpu_ms"] = {"p50": _pct(cpu, 0.5), "p95": _pct(cpu, 0.95), "max": round(max(cpu), 2)}
        # a ranked OR ("any": one word no note has) beside a prefix word: the per-word presence check
        lat, cpu = [], []
        for q in (
            "quokka budg*",
            "zebra lat*",
            "how do I rotate the deploy keys budg*",
            "unicorn soc* lat*",
            "okapi ca*",
        ):
            for _ in range(3):
                q0, c0 = time.perf_counter(), time.thread_time()
                assert v.search(q, limit=20).match == "any"
                cpu.append((time.thread_time() - c0) * 1000)
                lat.append((time.perf_counter() - q0) * 1000)
        out["any_prefix_search_ms"] = {
            "p50": _pct(lat, 0.5),
            "max": round(max(lat), 2),
            "cpu_p50": _pct(cpu, 0.5),
            "cpu_max": round(max(cpu), 2),
            "samples": len(lat),
        }
        out["load_average"] = round(os.getloadavg()[0], 1)
        print(json.dumps(out), file=sys.stderr, flush=True)  # partial figures survive a later failure
        from vaultwatch.core.search import semantic

        if semantic.offered():
            rss0 = _rss_mb()
            t, c = time.perf_counter(), time.process_time()
            vectors = v.start_vectors()
            assert vectors.wait_ready(1800), vectors.problem
            out["vectors_build_s"] = round(time.perf_counter() - t, 2)
            out["vectors_build_cpu_s"] = round(time.process_time() - c, 2)
            out["vectors_rss_added_mb"] = round(_rss_mb() - rss0, 1)
            deadline = time.monotonic() + 120  # the cache is written just after the vectors are ready
            while not vectors.cache_path.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            if vectors.cache_path.exists():
                out["vectors_cache_mb"] = round(vectors.cache_path.stat().st_size / 1e6, 1)
            print(json.dumps(out), file=sys.stderr, flush=True)
            for mode in ("hybrid", "semantic"):
                lat = []
                for q in queries:
                    for _ in range(3):
                        q0 = time.perf_counter()
                        v.search(q, limit=20, mode=mode)
                        lat.append((time.perf_counter() - q0) * 1000)
                out[f"{mode}_search_ms"] = {"p50": _pct(lat, 0.5), "p95": _pct(lat, 0.95), "samples": len(lat)}
        v.stop()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("parts", nargs="*", default=["quality", "scale"])
    ap.add_argument("--notes", type=int, default=100_000)
    args = ap.parse_args()
    out: dict = {
        "targets": {
            "keyword_p50_ms": 10,
            "keyword_p95_ms": 50,
            "fts_build_100k_s": 15,
            "index_bytes_per_note_byte": 1.2,
            "hybrid_p50_ms": 30,
            "vectors_100k_s": 60,
            "vectors_rss_added_mb": 80,
        }
    }
    if "quality" in args.parts:
        out["quality"] = quality()
    if "scale" in args.parts:
        out["scale"] = scale(args.notes)
    emit(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
