"""bench/bench_reliability.py cites earlier tests instead of repeating them (docs/reliability.md counts
them per family): every cited file and test must exist, or the report silently counts fewer tests
than it names (core's reorganisation left 22 cited nodes missing, a renamed bridge test 2 more)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_reliability", ROOT / "bench" / "bench_reliability.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_test_the_reliability_report_cites_exists():
    bench = _bench()
    present, missing = bench.cited_nodes()
    assert not missing, f"bench_reliability.CITED names tests that do not exist (renamed or moved?): {missing}"
    assert present


def test_every_family_file_exists():
    bench = _bench()
    absent = [stem for stem in bench.FAMILIES if not (ROOT / bench.REL / f"{stem}.py").exists()]
    assert not absent, f"bench_reliability.FAMILIES names files missing from {bench.REL}: {absent}"
