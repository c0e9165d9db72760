"""Issue 2 benchmark: cold full index, warm start, peak RSS and in-process query times on vaultgen vaults.

    python bench/bench_core.py [--sizes 10000,100000] [--realistic]

Each size runs in a fresh child process (so peak RSS and the cold index are its own) and
checks its answers against the generator's manifest (bench/vaultgen.py; --realistic: its long,
rich notes). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.common import AS_OF, emit, timed, vault  # noqa: E402

TARGETS = {
    "cold_100k_s": 6.0,
    "cold_10k_s": 0.8,
    "warm_100k_s": 1.0,
    "filtered_query_100k_ms": 30,
    "peak_rss_100k_mb": 300,
}


def warm_start(path: str) -> tuple[float, int]:
    """Seconds for a load with the entry cache written by an earlier load (in a temp cache folder),
    and how many files that load parsed (0 unless the cache was incomplete)."""
    import tempfile

    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.vault import Vault

    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        first = Vault(path, clock=parse_as_of(AS_OF))
        first.load()
        first.stop(timeout=600)  # writes the entry cache (on a busy machine the 100k flush passes the default 5 s)
        t = time.perf_counter()
        v = Vault(path, clock=parse_as_of(AS_OF))
        v.load()
        warm = time.perf_counter() - t
        parsed = v.entry_cache.last_stats.parsed if v.entry_cache and v.entry_cache.last_stats else -1
        v.stop()
    return round(warm, 3), parsed


def child(path: str, manifest_path: str) -> dict:
    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.query.listing import Query, pairs
    from vaultwatch.core.vault import Vault

    manifest = json.loads(open(manifest_path).read())
    t = time.perf_counter()
    v = Vault(path, clock=parse_as_of(AS_OF), cache=False)  # cold: no entry cache
    v.load()
    cold = time.perf_counter() - t
    queries = {
        "all_notes": Query(),
        "one_folder": Query(folder="Projects"),
        "pattern": Query(pattern="**/meetings/*.md"),
        "status_deprecated": Query(filters=pairs({"status": "deprecated"})),
        "stale_true": Query(filters=pairs({"stale": "true"})),
        "with_attachments": Query(include_attachments=True),
        "tag_craft": Query(filters=pairs({"tags": "craft"})),
        "page_of_100": Query(limit=100),
    }
    times = {name: timed(lambda q=q: v.list(q)) for name, q in queries.items()}
    counts = {name: v.list(q).total for name, q in queries.items()}
    s = v.stats()
    expected = {
        "notes": manifest["notes"],
        "attachments": manifest["attachments"],
        "status_deprecated": manifest["status"]["deprecated"],
        "stale_true": manifest["stale_true"],
        "tag_craft": manifest["tag_craft"],
        "frontmatter_errors": manifest["broken_yaml"],
    }
    got = {
        "notes": counts["all_notes"],
        "attachments": counts["with_attachments"] - counts["all_notes"],
        "status_deprecated": counts["status_deprecated"],
        "stale_true": counts["stale_true"],
        "tag_craft": counts["tag_craft"],
        "frontmatter_errors": s["frontmatter_errors"],
    }
    peak = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    v.stop()
    warm, warm_parsed = warm_start(path)
    return {
        "notes": counts["all_notes"],
        "cold_index_s": round(cold, 3),
        "warm_start_s": warm,
        "warm_start_parsed": warm_parsed,  # files the warm load parsed: 0 when the cache was complete
        "peak_rss_mb": peak,
        "queries": {name: {**times[name], "count": counts[name]} for name in queries},
        "counts_match_manifest": got == expected,
        "count_mismatches": {k: [got[k], expected[k]] for k in expected if got[k] != expected[k]},
    }


def into_page_cache(path: str | os.PathLike[str]) -> None:
    """Read every file of the vault once, so that the cold index is timed on files in the page cache (its
    figure is the parse's, as its label says): a vault generated or last read long before may have been
    evicted, and its first load then times the disk."""
    for folder, _dirs, files in os.walk(path):
        for name in files:
            with open(os.path.join(folder, name), "rb") as fh:
                while fh.read(1 << 20):
                    pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--realistic", action="store_true", help="the generator's realistic notes (2-20 KB)")
    ap.add_argument("--child", nargs=2, metavar=("VAULT", "MANIFEST"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(*a.child)))
        return
    results = {}
    for size in [int(s) for s in a.sizes.split(",")]:
        path, _ = vault(size, realistic=a.realistic)
        into_page_cache(path)
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(path), str(path) + ".manifest.json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        results[str(size)] = json.loads(out)
    emit({"benchmark": "core_index", "as_of": AS_OF, "realistic": a.realistic, "targets": TARGETS, "results": results})


if __name__ == "__main__":
    main()
