"""A ranked OR that holds a common word (in more than half the notes) or a word no note has, at
any vault size: FTS5's bm25 runs over the other words' matches only (a common word's part of
bm25 is its clamped IDF, ~1e-6, times its frequency), so a half-typed word beside a common one
(`vault soc`, the TUI's search keystrokes) does not score every note. (Before: 200-400 ms at
100,000 notes for `("vault" OR "soc")`, most of a search keystroke's time.)"""

from __future__ import annotations

import re

import pytest

from vaultwatch.core.vault import Vault


@pytest.fixture
def searched(make_vault, clock):
    opened: list[Vault] = []

    def open_(files: dict) -> Vault:
        v = Vault(make_vault(files), clock=clock)
        v.load()
        assert v.wait_search_ready(20)
        opened.append(v)
        return v

    yield open_
    for v in opened:
        v.stop()


def files() -> dict[str, str]:
    out = {f"notes/n{i:03d}.md": f"# Note {i}\n\nThe vault holds item {i} and words {i % 7}.\n" for i in range(40)}
    out["a/Zebra crossing.md"] = "# Zebra crossing\n\nA zebra in the vault, one zebra more.\n"
    out["b/Socket zebra.md"] = "# Socket zebra\n\nthe vault socket and a zebra\n"
    out["c/Far.md"] = "# Far\n\nno common word here but zebra once\n"
    return out


def scored(v: Vault, text: str):
    """The search's result and the ranked OR expressions ("any" mode) FTS5's bm25() ran over."""
    with v._search._reader() as reader:  # given back to the pool: the search borrows it next
        con = reader.con
    seen: list[str] = []
    con.set_trace_callback(seen.append)
    try:
        res = v.search(text, limit=50)
    finally:
        con.set_trace_callback(None)
    ranked = [
        m.group(1)
        for s in seen
        if "bm25(" in s
        for m in [re.search(r"MATCH '([^']*)'", s)]
        if m and m.group(1).startswith("(")
    ]
    return res, ranked


def test_a_common_word_beside_a_word_no_note_has_is_not_scored_note_by_note(searched):
    v = searched(files())
    res, ranked = scored(v, "vault qqxz")
    assert res.match == "any" and res.total == 42  # every note with "vault"
    assert ranked == []  # before: bm25 over ("vault" OR "qqxz"), every note's match
    assert "notes/n000.md" in {h.path for h in res.hits} and len(res.hits) == 42


def test_a_common_word_beside_rare_ones_ranks_by_the_rare_ones(searched):
    v = searched(files())
    res, ranked = scored(v, "vault zebra qqxz")
    assert res.match == "any" and res.total == 43
    assert ranked and all('"vault"' not in m for m in ranked), ranked  # before: ("vault" OR "zebra" OR "qqxz")
    top = [h.path for h in res.hits[:3]]
    # the notes with both words first, then the one with the rare word alone, then the many with
    # only the common word (the same order and scores, to 4 places, as bm25 over all three words gave)
    assert set(top[:2]) == {"a/Zebra crossing.md", "b/Socket zebra.md"} and top[2] == "c/Far.md", top
    assert res.hits[2].score > res.hits[3].score and len(res.hits) == 43


def test_excluded_words_still_exclude_on_the_rare_words_path(searched):
    v = searched(files())
    res, _ = scored(v, "vault zebra qqxz -socket")
    assert "b/Socket zebra.md" not in {h.path for h in res.hits} and res.total == 42


def test_a_prefix_word_is_checked_against_the_candidates_in_one_pass(searched):
    """Which candidates hold a prefix word (a ranked OR's coverage, proximity, the unsure check)
    is asked with `+rowid IN (...)`: with `rowid IN`, SQLite hands FTS5 one rowid at a time and a
    prefix term rebuilds its merged matches for each (at 100,000 notes `zebra budg*` took 2 s,
    `zebra s*` 52 s). The answer is the same: the note holding both words first."""
    v = searched({**files(), "d/Plain.md": "# Plain\n\nthe crossing by the sockets\n"})
    with v._search._reader() as reader:  # given back to the pool: the search borrows it next
        con = reader.con
    seen: list[str] = []
    con.set_trace_callback(seen.append)
    try:
        res = v.search("crossing soc* quagga", limit=50)
    finally:
        con.set_trace_callback(None)
    assert res.match == "any"
    hits = [h.path for h in res.hits]
    assert hits[0] == "d/Plain.md" and sorted(hits[1:]) == ["a/Zebra crossing.md", "b/Socket zebra.md"]
    narrowed = [s for s in seen if re.search(r"MATCH '[^']*\* *[^']*'.* AND \+?rowid IN \(", s)]
    assert narrowed  # the presence check of `soc*` ran
    assert all(" AND +rowid IN (" in s for s in narrowed), narrowed
