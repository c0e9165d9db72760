"""Issue 17 benchmark: search quality on the judged set (hit@3, MRR@10) and search at scale.

    python bench/bench_search.py [quality] [scale] [--notes 100000]

quality: writes the judged corpus (bench/searcheval) to bench/out/searcheval, indexes it and
runs every judged query. scale: keyword search latency, the full-text build and the index
size on a vaultgen vault. Prints JSON.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import OUT, emit  # noqa: E402


def quality() -> dict:
    import os

    from bench.searcheval import evaluate, write
    from core.clock import parse_as_of
    from core.vault import Vault

    root = OUT / "searcheval"
    shutil.rmtree(root, ignore_errors=True)
    write(root)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        v = Vault(root, clock=parse_as_of("2026-11-29"))
        v.load()
        assert v.wait_search_ready(60)
        try:
            out = {"notes": v.stats()["notes"], "keyword": evaluate(v)}
        finally:
            v.stop()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("parts", nargs="*", default=["quality"])
    args = ap.parse_args()
    out: dict = {}
    if "quality" in args.parts:
        out["quality"] = quality()
    emit(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
