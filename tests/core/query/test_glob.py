"""The glob matcher: a table of the documented semantics, and properties against a simple
reference implementation (segment by segment with fnmatchcase, `**` as zero or more levels)."""

from __future__ import annotations

import time
from fnmatch import fnmatchcase

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultwatch.core.errors import QueryError
from vaultwatch.core.query.glob import MAX_PATTERN_CHARS, MAX_WILDCARDS, compile_glob, glob_match

TABLE = [
    # `*` stays within one level
    ("*.md", "plan.md", True),
    ("*.md", "Projects/plan.md", False),
    ("Projects/*.md", "Projects/plan.md", True),
    ("Projects/*.md", "Projects/Archive/old.md", False),
    ("Projects/*", "Projects/Archive", True),
    ("*", "a/b", False),
    # `**` spans any depth, including none
    ("**/*.md", "plan.md", True),
    ("**/*.md", "a/b/c/plan.md", True),
    ("**/session-log.md", "session-log.md", True),
    ("**/session-log.md", "Projects/session-log.md", True),
    ("**/session-log.md", "Projects/my-session-log.md", False),
    ("Projects/**/*.md", "Projects/plan.md", True),
    ("Projects/**/*.md", "Projects/Archive/Deep/x.md", True),
    ("Projects/**/*.md", "ProjectsOld/x.md", False),
    ("Projects/**", "Projects/Archive/x.md", True),
    ("Projects/**", "Projects", False),
    ("**", "anything/at/all.md", True),
    ("a/**/b/**/c.md", "a/b/c.md", True),
    ("a/**/b/**/c.md", "a/x/y/b/z/c.md", True),
    ("a/**/**/**/c.md", "a/c.md", True),
    ("**/meeting*.md", "Inbox/meeting 2026.md", True),
    ("**/meeting*.md", "meetings/other.md", False),
    ("**/*session-log*.md", "Journal/2026 session-log v2.md", True),
    # `?` is one character within a level
    ("?.md", "a.md", True),
    ("?.md", "ab.md", False),
    ("a?b", "a/b", False),
    # classes
    ("[abc].md", "b.md", True),
    ("[!abc].md", "d.md", True),
    ("[!abc].md", "a.md", False),
    ("[a-c]*.md", "beta.md", True),
    ("[A-Z]*.md", "beta.md", False),
    ("a[!x]b", "a/b", False),  # a negated class never matches '/'
    ("a[+-0]b", "a/b", False),  # nor does a range that spans '/'
    ("a[+-0]b", "a,b", True),
    ("[!]x].md", "a.md", True),  # ']' first in a class is literal
    ("[!]x].md", "].md", False),
    ("[]x].md", "].md", True),
    ("[z-a].md", "b.md", False),  # an empty range matches nothing (as fnmatch)
    ("[[]x", "[x", True),
    ("[a&&b]", "&", True),
    ("[", "[", True),  # an unclosed bracket is literal
    ("a[b", "a[b", True),
    # case-sensitive, anchored, regex characters literal
    ("**/Plan.md", "Projects/plan.md", False),
    ("projects/*.md", "Projects/plan.md", False),
    ("plan.md", "plan.mdx", False),
    ("plan.md", "xplan.md", False),
    ("a+b (1).md", "a+b (1).md", True),
    ("a.md", "aXmd", False),
    ("$^.md", "$^.md", True),
    ("Café*", "Café notes.md", True),
    # leading/trailing slashes in the pattern are ignored
    ("/Projects/*.md", "Projects/plan.md", True),
    ("Projects/", "Projects", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), TABLE)
def test_glob_table(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "phrase"),
    [
        ("", "non-empty"),
        ("x" * (MAX_PATTERN_CHARS + 1), "longer than"),
        ("a\x00b", "NUL"),
        ("*" + "/*" * MAX_WILDCARDS, "wildcards"),
        ("?" * (MAX_WILDCARDS + 1), "wildcards"),
    ],
)
def test_bad_patterns_are_query_errors(pattern: str, phrase: str) -> None:
    with pytest.raises(QueryError, match=phrase):
        compile_glob(pattern)


@pytest.mark.parametrize("pattern", [None, 5, b"*.md"])
def test_non_string_patterns_are_query_errors(pattern: object) -> None:
    with pytest.raises(QueryError):
        compile_glob(pattern)  # type: ignore[arg-type]


@pytest.mark.timing
def test_glob_bomb_is_collapsed_and_fast() -> None:
    bomb = "/".join(["**"] * 100) + "/x.md"
    rx = compile_glob(bomb)
    path = "/".join(["a"] * 60) + "/y.md"
    started = time.perf_counter()
    assert rx.fullmatch(path) is None
    assert rx.fullmatch("a/b/x.md") is not None
    assert time.perf_counter() - started < 0.5


@pytest.mark.timing
def test_many_stars_in_segments_stay_fast() -> None:
    rx = compile_glob("*a*a*a*a*a*a*a*a*a*a*b")
    started = time.perf_counter()
    assert rx.fullmatch("a" * 40) is None
    assert time.perf_counter() - started < 1.0


# --- reference implementation and properties ----------------------------------------------------


def reference_match(pattern: str, path: str) -> bool:
    """Segment-wise glob: fnmatchcase per segment; `**` as a whole segment spans zero or more
    segments (a trailing `**` one or more, so `a/**` is what lies inside `a`)."""
    pat = pattern.strip("/").split("/")
    segs = path.split("/")

    def rec(i: int, j: int) -> bool:
        if i == len(pat):
            return j == len(segs)
        if pat[i] == "**":
            if i == len(pat) - 1:
                return j < len(segs)
            return any(rec(i + 1, k) for k in range(j, len(segs) + 1))
        return j < len(segs) and fnmatchcase(segs[j], pat[i]) and rec(i + 1, j + 1)

    return rec(0, 0)


_NAME_CHARS = st.sampled_from(list("abAB.-_ é(+$") + ["[", "]"])
_names = st.text(_NAME_CHARS, min_size=1, max_size=5).filter(lambda s: s.strip() != "")
_vault_paths = st.lists(_names, min_size=1, max_size=5).map("/".join)

_pattern_tokens = st.sampled_from(
    ["a", "b", "A", ".", "-", "é", "(", "+", "$", "*", "?", "[ab]", "[!a]", "[a-c]", "[A-Z]", "[.]"]
)
_segments = st.one_of(
    st.just("**"),
    st.lists(_pattern_tokens, min_size=1, max_size=4).map("".join),
)
_patterns = (
    st.lists(_segments, min_size=1, max_size=4)
    .map("/".join)
    .filter(lambda p: sum(p.count("*") + p.count("?") for p in p.split("/")) <= 12)
)


@settings(max_examples=600, deadline=None)
@given(_patterns, _vault_paths)
def test_glob_agrees_with_reference(pattern: str, path: str) -> None:
    assert glob_match(pattern, path) == reference_match(pattern, path)


@settings(max_examples=300, deadline=None)
@given(_patterns, st.lists(_names, min_size=1, max_size=4))
def test_glob_agrees_with_reference_on_near_misses(pattern: str, names: list[str]) -> None:
    """Paths built from the pattern's own literal parts hit the interesting cases more often."""
    literal = [
        seg.replace("*", "a")
        .replace("?", "b")
        .replace("[ab]", "a")
        .replace("[!a]", "b")
        .replace("[a-c]", "c")
        .replace("[A-Z]", "Q")
        .replace("[.]", ".")
        for seg in pattern.split("/")
        if seg != "**"
    ] or names
    for path in ("/".join(literal), "/".join(names + literal), "/".join(literal + names)):
        assert glob_match(pattern, path) == reference_match(pattern, path), path


@settings(max_examples=300, deadline=None)
@given(_vault_paths)
def test_double_star_md_matches_every_note_path(path: str) -> None:
    assert glob_match("**/*.md", path + ".md")
    assert glob_match("**", path)


@settings(max_examples=300, deadline=None)
@given(st.lists(_names, min_size=2, max_size=4))
def test_star_never_crosses_a_slash(names: list[str]) -> None:
    path = "/".join(names)
    assert not glob_match("*", path)
    assert not glob_match("?" * len(path), path)  # "?" never matches "/"
    assert glob_match("/".join("*" for _ in names), path)
    assert not glob_match("/".join("*" for _ in names[1:]), path)


@settings(max_examples=200, deadline=None)
@given(_vault_paths)
def test_literal_pattern_matches_only_itself(path: str) -> None:
    escaped = "".join(f"[{c}]" if c in "*?[]" else c for c in path)
    assert glob_match(escaped, path)
    assert not glob_match(escaped, path + "x")
    assert not glob_match(escaped, "x/" + path)


@pytest.mark.timing
@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*a*a*a*a*a*a*a*a*a*a*b", "a" * 60),  # exponential backtracking without atomic groups
        ("**/a/**/a/**/a/**/a/**/a/**/a/**/b", "a/" * 60 + "c"),  # polynomial in the depth
        ("**/a*/**/a*/**/a*/**/a*/**/b", "a/" * 100 + "c"),
        ("*?*?*?*?*?*?*?*?*?*?*b", "x" * 200),
    ],
)
def test_adversarial_patterns_match_in_bounded_time(pattern: str, path: str) -> None:
    rx = compile_glob(pattern)
    started = time.perf_counter()
    assert rx.fullmatch(path) is None
    assert rx.fullmatch(path[:-1] + "b") is not None
    # backtracking would take minutes to forever here; a bound a loaded machine never reaches
    assert time.perf_counter() - started < 1.0, pattern
