"""core.query.complete against the rule it implements, written the slow, obvious way: on a generated vault
with shuffled modification times, for prefixes from none to one note's, every answer equals the brute-force
ranking (exact prefix, then ignoring case, then by file name; most recent first; the total of all three)."""

from __future__ import annotations

import os
import random

import pytest

from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE
from vaultwatch.core.query.complete import complete_folder, complete_path


def brute(snapshot, typed: str, kinds, by_recency: bool, limit: int = 100):
    typed = typed.lstrip("/")
    folded = typed.casefold()
    entries = [e for e in snapshot.entries if e.kind in kinds]
    exact = [e for e in entries if e.path.startswith(typed)]
    loose = [e for e in entries if not e.path.startswith(typed) and e.path.casefold().startswith(folded)]
    named = [
        e
        for e in entries
        if not e.path.casefold().startswith(folded) and e.path.casefold().rsplit("/", 1)[-1].startswith(folded)
    ]
    place = {e.path: i for i, e in enumerate(entries)}
    key = (lambda e: (-e.mtime_ns, place[e.path])) if by_recency else (lambda e: place[e.path])
    ranked = sorted(exact, key=key) + sorted(loose, key=key) + sorted(named, key=key)
    return [e.path for e in ranked[:limit]], len(ranked)


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from bench.vaultgen import generate
    from vaultwatch.core.vault import Vault

    root = tmp_path_factory.mktemp("complete") / "v"
    generate(root, 3000, seed=11)
    rng = random.Random(5)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            os.utime(path, ns=(rng.randrange(10**18, 2 * 10**18),) * 2)
    v = Vault(root, cache=False)
    v.load()
    return v


def test_every_completion_is_the_brute_force_ranking(vault):
    snap = vault.snapshot
    notes = [e.path for e in snap.entries if e.kind == NOTE]
    prefixes = ["", "/", "a", "A", "n", "P", "proj", "Projects/", "index", "zz", notes[1234][:-5], notes[7].upper()]
    prefixes += [n.rsplit("/", 1)[-1][:4] for n in notes[::600]]
    for typed in prefixes:
        got = complete_path(snap, typed)
        assert (list(got.values), got.total) == brute(snap, typed, {NOTE, ATTACHMENT}, True), typed
        got = complete_folder(snap, typed)
        assert (list(got.values), got.total) == brute(
            snap, typed.rstrip("/") if typed.strip("/") else "", {FOLDER}, False
        ), typed
