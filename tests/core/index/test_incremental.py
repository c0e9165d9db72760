"""Derived structures patched across in-place edits (Snapshot.cached with a patch) answer
exactly what a structure built from scratch answers, whatever the order of edits and queries."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultwatch.core.clock import parse_as_of
from vaultwatch.core.index.snapshot import Index
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE, make_entry
from vaultwatch.core.query.listing import Query, run_query, stats

CLOCK = parse_as_of("2026-11-29")
PATHS = [f"{d}/n{i}.md" for d in ("a", "b", "a/c") for i in range(6)]
QUERIES = [
    Query(),
    Query(filters=(("status", "deprecated"),)),
    Query(filters=(("stale", "true"),)),
    Query(filters=(("stale", "false"),)),
    Query(filters=(("trust_tier", "human-reviewed"),)),
    Query(filters=(("tags", "x"),)),
    Query(filters=(("type", "howto"),)),
    Query(exclude=(("tags", "y"),)),
    Query(problems_only=True),
    Query(words=("n1",)),
    Query(words=("zeta",)),
    Query(text="alpha"),
    Query(pattern="**/c/*.md"),
    Query(include_attachments=True, include_folders=True, words=("a",)),
    Query(folder="a", filters=(("status", "draft"),)),
]

_note = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["draft", "stable", "deprecated"]),
        "trust": st.sampled_from(["unverified", "machine-confirmed", "human-reviewed"]),
        "tags": st.lists(st.sampled_from(["x", "y", "z"]), max_size=3),
        "type": st.sampled_from([None, "howto", "note"]),
        "stale": st.sampled_from([None, dt.date(2026, 1, 1), dt.date(2026, 11, 29), dt.date(2027, 1, 1)]),
        "title": st.sampled_from(["alpha", "beta", "zeta gamma", "Alpha beta"]),
        "broken": st.booleans(),
    }
)


def _entry(path: str, d: dict):
    fm = {"status": d["status"], "tags": list(d["tags"])}
    if d["type"]:
        fm["type"] = d["type"]
    return make_entry(
        path,
        NOTE,
        10,
        0,
        d["title"],
        frontmatter=fm,
        tags=tuple(d["tags"]),
        frontmatter_error="bad" if d["broken"] else None,
        okf_status=d["status"],
        okf_trust=d["trust"],
        stale_date=d["stale"],
    )


def _answers(snap):
    out = [[e.path for e in run_query(snap, q, CLOCK).entries] for q in QUERIES]
    s = stats(snap, CLOCK)
    s.pop("generation")
    return out, s


_step = st.tuples(
    st.sampled_from(["edit", "edit", "edit", "add", "remove", "query"]),
    st.lists(st.tuples(st.sampled_from(PATHS + ["new/one.md", "new/two.md"]), _note), min_size=1, max_size=4),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_note, min_size=len(PATHS), max_size=len(PATHS)), st.lists(_step, max_size=12))
def test_patched_structures_answer_like_fresh_ones(initial: list[dict], steps: list) -> None:
    index = Index()
    entries = {p: _entry(p, d) for p, d in zip(PATHS, initial, strict=True)}
    entries["index.md"] = make_entry("index.md", NOTE, 1, 0, "Home", frontmatter={"okf_version": "0.2"})
    entries["a/pic.png"] = make_entry("a/pic.png", ATTACHMENT, 5, 0, "pic.png")
    entries["a"] = make_entry("a", FOLDER, 0, 0, "a")
    index.load(entries.values())
    _answers(index.snapshot)  # build every structure once, so later generations patch
    for op, items in steps:
        if op == "query":
            _answers(index.snapshot)
            continue
        if op == "remove":
            gone = list(dict.fromkeys(p for p, _ in items if p in entries and p != "index.md"))
            for p in gone:
                entries.pop(p)
            index.apply(removals=gone)
            continue
        ups = []
        for p, d in items:
            if op == "edit" and p not in entries:
                continue
            e = _entry(p, d)
            entries[p] = e
            ups.append(e)
        index.apply(upserts=ups)
        live = _answers(index.snapshot)
        fresh = Index()
        fresh.load(entries.values())
        assert live == _answers(fresh.snapshot)


def test_an_edit_is_patched_not_rebuilt_and_keeps_one_earlier_generation() -> None:
    index = Index()
    index.load([make_entry(f"n{i}.md", NOTE, 1, 0, f"t{i}", frontmatter={"status": "draft"}) for i in range(50)])
    first = index.snapshot
    run_query(first, Query(filters=(("status", "draft"),)), CLOCK)
    index.apply(upserts=[make_entry("n3.md", NOTE, 2, 0, "t3", frontmatter={"status": "deprecated"})])
    second = index.snapshot
    index.apply(upserts=[make_entry("n4.md", NOTE, 2, 0, "t4", frontmatter={"status": "deprecated"})])
    third = index.snapshot
    assert "__origin__" not in second._cache  # cut: no chain of generations kept alive
    base, changed, in_place = third._cache["__origin__"]
    assert base is first and changed == {"n3.md", "n4.md"} and in_place  # `second` computed nothing
    assert third.in_place(first)
    got = [e.path for e in run_query(third, Query(filters=(("status", "deprecated"),)), CLOCK).entries]
    assert got == ["n3.md", "n4.md"]
