"""Structures indexed by note position follow notes added and removed by a patch (bisection and
runs of moved positions), not a rebuild: after any mix of adds, removes and edits they equal a
fresh build, and the patch looks at the changed notes only (the first listing or filter after an
outside create costs the change, not a pass over the vault)."""

from __future__ import annotations

import datetime as dt
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultwatch.core.clock import parse_as_of
from vaultwatch.core.index.snapshot import Index, Snapshot
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE, Entry, make_entry
from vaultwatch.core.query import listing, postings

CLOCK = parse_as_of("2026-11-29")
NAMES = [f"{d}n{i:02d}.md" for d in ("", "a/", "b/", "b/c/") for i in range(0, 40, 3)]
EXTRA = [f"{d}n{i:02d}.md" for d in ("", "a/", "b/", "b/c/", "d/") for i in range(1, 40, 7)]  # between them
NOTES_ONLY = frozenset({NOTE})
ALL_KINDS = frozenset({NOTE, ATTACHMENT, FOLDER})

_note = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["draft", "stable"]),
        "tags": st.lists(st.sampled_from(["x", "y", "y/z"]), max_size=2),
        "stale": st.sampled_from([None, dt.date(2026, 1, 1), dt.date(2027, 1, 1)]),
        "title": st.sampled_from(["alpha", "beta"]),
        "broken": st.booleans(),
    }
)


def _entry(path: str, d: dict) -> Entry:
    return make_entry(
        path,
        NOTE,
        10,
        0,
        d["title"],
        frontmatter={"status": d["status"], "tags": list(d["tags"])},
        tags=tuple(d["tags"]),
        frontmatter_error="bad" if d["broken"] else None,
        okf_status=d["status"],
        stale_date=d["stale"],
    )


def _structures(snap: Snapshot) -> dict:
    """Every position-indexed structure a listing or filter reads, as plain values."""
    postings.stale_positions(snap, CLOCK)
    dated, timed = snap.cached("stale", lambda: None)  # memoized by the call above
    notes = postings.notes(snap)
    return {
        "notes": notes,
        "all": listing._by_kinds(snap, ALL_KINDS),
        "attachments+notes": postings.subset(snap, frozenset({NOTE, ATTACHMENT})),
        "tags": postings._tag_index(snap),
        "status": postings._field_index(snap, "status"),
        "stale": (list(dated.keys), list(dated.positions), list(timed.keys)),
        "problems": postings.problems(snap),
        "hay": listing._hay(snap, NOTES_ONLY, *notes),
    }


class Counting:
    """Counts how many notes the structures' builders and patches look at."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen = 0
        self.subset_builds = 0
        for module, name in (
            (postings, "_tag_tokens"),
            (postings, "_tokens"),
            (postings, "_is_problem"),
            (postings, "_day"),
            (listing, "fold"),
        ):
            monkeypatch.setattr(module, name, self._counted(getattr(module, name)))
        real = postings.compress

        def compress(*args: object) -> object:
            self.subset_builds += 1
            return real(*args)  # type: ignore[call-overload]

        monkeypatch.setattr(postings, "compress", compress)

    def _counted(self, fn):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.seen += 1
            return fn(*args, **kwargs)

        return run


_step = st.tuples(
    st.sampled_from(["edit", "add", "remove", "mixed"]),
    st.lists(st.tuples(st.sampled_from(NAMES + EXTRA), _note), min_size=1, max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_note, min_size=len(NAMES), max_size=len(NAMES)), st.lists(_step, min_size=1, max_size=8))
def test_added_and_removed_notes_are_patched_in_and_equal_a_fresh_build(initial: list[dict], steps: list) -> None:
    with pytest.MonkeyPatch.context() as mp:
        index = Index()
        entries: dict[str, Entry] = {p: _entry(p, d) for p, d in zip(NAMES, initial, strict=True)}
        entries["a/pic.png"] = make_entry("a/pic.png", ATTACHMENT, 5, 0, "pic.png")
        entries["a"] = make_entry("a", FOLDER, 0, 0, "a")
        index.load(entries.values())
        _structures(index.snapshot)  # built once, so that later generations patch
        counting = Counting(mp)
        for op, items in steps:
            ups: dict[str, Entry] = {}
            gone: list[str] = []
            for k, (p, d) in enumerate(items):
                if op == "remove" or (op == "mixed" and k % 2 == 1):
                    if p in entries and p not in gone:
                        gone.append(p)
                elif op != "edit" or p in entries:
                    ups[p] = _entry(p, d)
            for p in gone:  # as Index.apply: the removals, then the upserts
                entries.pop(p)
            entries.update(ups)
            index.apply(upserts=ups.values(), removals=gone)
            counting.seen = counting.subset_builds = 0
            live = _structures(index.snapshot)
            # each structure looks at the changed notes only (a few calls each), never at every note
            assert counting.subset_builds == 0
            assert counting.seen <= 12 * (len(ups) + len(gone)) + 4
            mp.undo()
            fresh = Index()
            fresh.load(entries.values())
            assert live == _structures(fresh.snapshot)
            counting = Counting(mp)


def test_moves_map_positions_and_arrays_alike() -> None:
    # old notes 0..9; 2 and 7 removed; new notes at new positions 0, 4 and 10
    moves = postings.Moves([2, 7], [0, 4, 10], 10)
    mapped = [moves.position(i) for i in range(10)]
    assert mapped == [1, 2, None, 3, 5, 6, 7, None, 8, 9]
    everything = array("i", range(10))
    assert list(moves.array(everything)) == [m for m in mapped if m is not None]
    assert list(moves.array(array("i", [7]))) == []
    untouched = postings.Moves([], [], 10)
    same = array("i", [1, 2])
    assert untouched.array(same) is same


def test_a_listing_after_an_outside_create_patches_the_subset(monkeypatch: pytest.MonkeyPatch) -> None:
    index = Index()
    index.load([make_entry(f"n{i:03d}.md", NOTE, 1, 0, f"t{i}") for i in range(300)])
    listing.run_query(index.snapshot, listing.Query(folder="new"), CLOCK)
    index.apply(upserts=[make_entry("new/one.md", NOTE, 1, 0, "one")])
    index.apply(removals=["n007.md"])
    counting = Counting(monkeypatch)
    result = listing.run_query(index.snapshot, listing.Query(folder="new"), CLOCK)
    assert [e.path for e in result.entries] == ["new/one.md"]
    assert counting.subset_builds == 0
    paths, entries = postings.notes(index.snapshot)
    assert len(paths) == 300 and "n007.md" not in paths and paths[-1] == "new/one.md"
    assert [e.path for e in entries] == list(paths)
