"""Pattern listings answered through the joined-path substring search agree with a plain
per-path regex match, whatever the paths, folders and literal hints."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultwatch.core.clock import parse_as_of
from vaultwatch.core.index.snapshot import Index
from vaultwatch.core.model import NOTE, make_entry
from vaultwatch.core.query.glob import compile_glob
from vaultwatch.core.query.listing import Query, run_query

CLOCK = parse_as_of("2026-11-29")
_segs = st.sampled_from(["meetings", "meet", "a", "ab", "notes", "x-meetings", "Meetings", "m"])
_paths = st.lists(
    st.lists(_segs, min_size=1, max_size=4).map(lambda s: "/".join(s) + ".md"), min_size=0, max_size=40, unique=True
)
_patterns = st.sampled_from(
    [
        "**/meetings/*.md",
        "**/*meet*",
        "meetings/**",
        "**/a/**/*.md",
        "*/ab.md",
        "**/x-meetings.md",
        "a/**/meetings.md",
        "**/Meetings/**",
        "**/notes.md",
        "meet*/**/*.md",
    ]
)


def _snapshot(paths: list[str]):
    index = Index()
    return index.load([make_entry(p, NOTE, 1, 0, p) for p in paths])


@settings(max_examples=300, deadline=None)
@given(_paths, _patterns, st.sampled_from([None, "a", "meetings", "a/meetings"]), st.booleans())
def test_pattern_listing_matches_a_per_path_regex(
    paths: list[str], pattern: str, folder: str | None, recursive: bool
) -> None:
    snap = _snapshot(paths)
    got = [e.path for e in run_query(snap, Query(pattern=pattern, folder=folder, recursive=recursive), CLOCK).entries]
    rx = compile_glob(pattern)
    inside = [p for p in sorted(paths) if not folder or p.startswith(folder + "/")]
    if not recursive:  # only what lies directly in the folder (the vault root for None)
        inside = [p for p in inside if "/" not in p[len(folder) + 1 if folder else 0 :]]
    assert got == [p for p in inside if rx.fullmatch(p)]


def test_a_path_holding_the_hint_twice_is_listed_once() -> None:
    snap = _snapshot(["meetings/meetings/x.md", "meetings/y.md", "z.md"])
    got = [e.path for e in run_query(snap, Query(pattern="**/meetings/*.md"), CLOCK).entries]
    assert got == ["meetings/meetings/x.md", "meetings/y.md"]
