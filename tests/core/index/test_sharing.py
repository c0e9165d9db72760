"""Equal values across a load's entries are one object (core.index.sharing): the same `status:`
or `created:` in many notes, the same link written in many notes, whether the index came from
parsing (sequentially or in worker processes) or from the entry cache's buckets."""

from __future__ import annotations

import os

import pytest

from tests.core.index.conftest import backdate
from vaultwatch.core.index import parsepool
from vaultwatch.core.index.entrycache import BUCKETS
from vaultwatch.core.index.scan import ScanConfig
from vaultwatch.core.index.sharing import frozen, interned, worth_interning
from vaultwatch.core.vault import Vault

N = 240  # notes: more than the cache's buckets, so a value is stored in many of them
TITLES = [f"Note number {i}" for i in range(N)]


def notes() -> dict[str, str]:
    return {
        f"d{i % 9}/n{i}.md": (
            f"---\ntitle: {TITLES[i]}\nstatus: draft\ncreated: 2024-03-0{i % 3 + 1}\n"
            f"tags: [project/beta]\nverified: [human:ann]\n"
            f"scores: [{'1' if i % 2 else 'true'}, 2]\n---\n"
            f"# N{i}\nsee [[Shared target]] and [[n{(i + 1) % N}]]\n"
        )
        for i in range(N)
    }


pytestmark = pytest.mark.usefixtures("xdg_cache")


def distinct(values) -> int:
    """How many objects hold `values` (equal or not)."""
    return len({id(v) for v in values})


def assert_shared(vault: Vault, lists: int = 1) -> None:
    """Equal strings and links are one object each; equal lists are `lists` objects at most."""
    entries = [e for e in vault.snapshot.entries if e.kind == "note"]
    assert len(entries) == N
    fm = [e.frontmatter for e in entries]
    assert {f["status"] for f in fm} == {"draft"} and distinct(f["status"] for f in fm) == 1
    assert distinct(f["created"] for f in fm) == 3  # three dates, one object each
    assert distinct(f["tags"][0] for f in fm) == 1
    assert distinct(f["verified"][0] for f in fm) == 1
    assert all(f["tags"] == ["project/beta"] and f["verified"] == ["human:ann"] for f in fm)
    assert distinct(f["tags"] for f in fm) <= lists and distinct(f["verified"] for f in fm) <= lists
    assert distinct(f["scores"] for f in fm) <= 2 * lists  # [1, 2] is not [true, 2]:
    for e in entries:
        odd = int(e.path.rsplit("n", 1)[1][:-3]) % 2
        assert type(e.frontmatter["scores"][0]) is (int if odd else bool)
    assert distinct(t for e in entries for t in e.tags) == 1
    shared = [link for e in entries for link in e.links if link.target == "Shared target"]
    assert len(shared) == N and distinct(shared) == 1
    # a title stays the entry's own string, the very one its frontmatter holds
    assert all(e.title == TITLES[int(e.path.rsplit("n", 1)[1][:-3])] for e in entries)
    assert all(e.frontmatter["title"] is e.title for e in entries)


def test_a_sequential_cold_load_shares_equal_values(make_vault, clock) -> None:
    vault = Vault(make_vault(notes()), clock=clock, cache=False)
    vault.load()
    assert_shared(vault)


def test_a_cold_load_in_worker_processes_shares_across_their_chunks(make_vault, clock, monkeypatch) -> None:
    root = make_vault(notes())
    monkeypatch.setattr(parsepool, "PARALLEL_MIN_FILES", 20)  # the process pool on a small vault
    monkeypatch.setattr(parsepool, "CHUNK", 16)  # 15 chunks, each unpickled apart
    monkeypatch.setattr(parsepool, "WORKERS_CHUNK", 16)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    entries, _ = parsepool.scan(os.path.realpath(root), ScanConfig(), workers=2)
    vault = Vault(root, clock=clock, cache=False)
    vault.load()
    assert_shared(vault)
    parsed = [e for e in entries if e.kind == "note"]
    assert distinct(e.frontmatter["status"] for e in parsed) == 1
    assert distinct(link for e in parsed for link in e.links if link.target == "Shared target") == 1


def test_a_warm_start_shares_values_across_the_cache_buckets(make_vault, clock) -> None:
    root = make_vault(notes())
    backdate(root)
    first = Vault(root, clock=clock)
    first.load()
    first.stop()
    warm = Vault(root, clock=clock)
    warm.load()
    assert warm.entry_cache.last_stats.reused == N  # every entry came from the cache's buckets
    assert N > BUCKETS
    assert_shared(warm, lists=BUCKETS)  # lists are shared within a bucket (marshal cannot intern them)
    assert [e for e in warm.snapshot.entries] == [e for e in first.snapshot.entries]


def test_frozen_tells_types_apart_and_refuses_the_unknown() -> None:
    assert frozen([1, "a", None]) == frozen([1, "a", None])
    assert frozen([1]) != frozen([True]) and frozen([1]) != frozen([1.0])
    assert frozen({"by": "x", "at": [1]}) != frozen({"at": [1], "by": "x"})  # order is kept in JSON
    assert frozen([object()]) is None and frozen({"k": [b"bytes"]}) is None


def test_interning_keeps_values_and_spares_the_title() -> None:
    title = "".join(["My ", "title"])  # built at run time: not interned by the compiler
    value = {"title": title, "tags": ["a", {"k": "".join(["v", "1"])}], "n": 3, "long": "x" * 65}
    out = interned(value, title)
    assert out == value
    assert out["title"] is title
    assert out["tags"][1]["k"] is interned({"k": "".join(["v", "1"])}, title)["k"]
    assert not worth_interning("x" * 65, title) and not worth_interning(title, title)
