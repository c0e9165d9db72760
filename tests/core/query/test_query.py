"""The one query function's mechanics: paging with cursors, sorts, kinds, text, exclude,
problems, filter values and argument errors."""

from __future__ import annotations

import os

import pytest

from vaultwatch.core.errors import PathError, QueryError
from vaultwatch.core.query.listing import Query, pairs
from vaultwatch.core.vault import Vault

FILES = {
    "index.md": '---\nokf_version: "0.2"\ntitle: Home\n---\n',
    "b/Banana.md": "---\ntitle: banana split\nstatus: draft\nlist: [x, 3, true]\nn: 3\nf: 1.5\nz: null\n---\n",
    "b/apple.md": "---\ntitle: Apple pie\nstatus: deprecated\nstale_after: 2026-01-01\ntags: [Fruit]\n---\n",
    "a/cherry.md": "---\ntitle: cherry\nstale_after: 2026-11-01\npublished: false\n---\n#fruit #inline\n",
    "a/date.md": "---\ntitle: Date\nstale_after: 2026-11-20\n---\n",
    "a/deep/elder.md": "---\ntitle: [broken\n---\n# Elder\n",
    "fig.md": "# Fig\n",
    "a/pic.png": b"\x89PNG" + b"\0" * 100,
}
MTIMES = {  # a fixed modification order, unlike the write order
    "index.md": 1_700_000_005,
    "b/Banana.md": 1_700_000_003,
    "b/apple.md": 1_700_000_001,
    "a/cherry.md": 1_700_000_006,
    "a/date.md": 1_700_000_002,
    "a/deep/elder.md": 1_700_000_004,
    "fig.md": 1_700_000_000,
    "a/pic.png": 1_700_000_007,
}
NOTES = ["a/cherry.md", "a/date.md", "a/deep/elder.md", "b/Banana.md", "b/apple.md", "fig.md", "index.md"]


@pytest.fixture
def vault(make_vault, open_vault) -> Vault:
    root = make_vault(FILES)
    for rel, t in MTIMES.items():
        os.utime(root / rel, (t, t))
    return open_vault(root)


def listed(vault: Vault, **kw) -> list[str]:
    return [e.path for e in vault.list(Query(**kw)).entries]


# --- sorting --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sort", "descending", "expected"),
    [
        ("path", False, NOTES),
        ("path", True, NOTES[::-1]),
        (
            "modified",
            False,
            ["fig.md", "b/apple.md", "a/date.md", "b/Banana.md", "a/deep/elder.md", "index.md", "a/cherry.md"],
        ),
        (
            "modified",
            True,
            ["a/cherry.md", "index.md", "a/deep/elder.md", "b/Banana.md", "a/date.md", "b/apple.md", "fig.md"],
        ),
        # titles compare case-insensitively: Apple pie, banana split, cherry, Date, Elder, Fig, Home
        (
            "title",
            False,
            ["b/apple.md", "b/Banana.md", "a/cherry.md", "a/date.md", "a/deep/elder.md", "fig.md", "index.md"],
        ),
        (
            "title",
            True,
            ["index.md", "fig.md", "a/deep/elder.md", "a/date.md", "a/cherry.md", "b/Banana.md", "b/apple.md"],
        ),
        # most overdue first; not-stale notes after, by path
        (
            "overdue",
            False,
            ["b/apple.md", "a/cherry.md", "a/date.md", "a/deep/elder.md", "b/Banana.md", "fig.md", "index.md"],
        ),
    ],
)
def test_sorts(vault: Vault, sort: str, descending: bool, expected: list[str]) -> None:
    assert listed(vault, sort=sort, descending=descending) == expected


def test_size_sort_and_ties_break_by_path(make_vault, open_vault) -> None:
    vault = open_vault(make_vault({"b.md": "xx", "a.md": "xx", "c.md": "x", "d.md": "xxx"}))
    assert listed(vault, sort="size") == ["c.md", "a.md", "b.md", "d.md"]
    for e in vault.list(Query()).entries:
        os.utime(vault.disk_path(e.path), (1_700_000_000, 1_700_000_000))
    vault.load()
    assert listed(vault, sort="modified") == ["a.md", "b.md", "c.md", "d.md"]


def test_unknown_sort_is_an_error(vault: Vault) -> None:
    with pytest.raises(QueryError, match="sort 'name' is unknown"):
        vault.list(Query(sort="name"))


# --- paging ---------------------------------------------------------------------------------------


def page_through(vault: Vault, limit: int, **kw) -> tuple[list[list[str]], set[int]]:
    pages, totals, cursor = [], set(), None
    while True:
        res = vault.list(Query(limit=limit, cursor=cursor, **kw))
        pages.append([e.path for e in res.entries])
        totals.add(res.total)
        cursor = res.next_cursor
        if cursor is None:
            return pages, totals
        assert len(pages) < 50, "paging must terminate"


@pytest.mark.parametrize("limit", [1, 2, 3, 6, 7, 100])
@pytest.mark.parametrize(
    ("sort", "descending"),
    [("path", False), ("path", True), ("modified", False), ("modified", True), ("title", False), ("overdue", False)],
)
def test_paging_covers_everything_once_in_order(vault: Vault, limit: int, sort: str, descending: bool) -> None:
    full = listed(vault, sort=sort, descending=descending)
    pages, totals = page_through(vault, limit, sort=sort, descending=descending)
    assert [p for page in pages for p in page] == full
    assert totals == {len(full)}
    assert all(len(page) == limit for page in pages[:-1])
    assert 1 <= len(pages[-1]) <= limit


@pytest.mark.parametrize("limit", [1, 2, 5])
@pytest.mark.parametrize(
    "kw",
    [
        {"filters": (("stale", "false"),)},
        {"exclude": (("status", "draft"),)},
        {"folder": "a"},
        {"folder": "a", "filters": (("stale", "false"),)},
        {"include_attachments": True, "include_folders": True},
    ],
)
def test_paging_filtered_and_scoped_listings(vault: Vault, limit: int, kw: dict) -> None:
    full = listed(vault, **kw)
    assert full  # each case lists something
    pages, totals = page_through(vault, limit, **kw)
    assert [p for page in pages for p in page] == full and totals == {len(full)}


def test_paging_is_stable_across_changes(vault: Vault) -> None:
    first = vault.list(Query(limit=3))
    assert [e.path for e in first.entries] == NOTES[:3]
    # a note added before the cursor and one after it, between two page requests
    for rel in ("a/aaa.md", "zzz.md"):
        with open(os.path.join(vault.root, rel), "w") as f:
            f.write("# new\n")
    vault.refresh_paths(["a/aaa.md", "zzz.md"])
    second = vault.list(Query(limit=3, cursor=first.next_cursor))
    assert [e.path for e in second.entries] == NOTES[3:6]
    assert second.total == len(NOTES) + 2
    third = vault.list(Query(limit=3, cursor=second.next_cursor))
    assert [e.path for e in third.entries] == ["index.md", "zzz.md"]
    assert third.next_cursor is None


def test_cursor_survives_deletion_of_its_last_row(vault: Vault) -> None:
    first = vault.list(Query(limit=2))
    os.unlink(os.path.join(vault.root, "a", "date.md"))  # the last row of page one
    vault.refresh_paths(["a/date.md"])
    second = vault.list(Query(limit=2, cursor=first.next_cursor))
    assert [e.path for e in second.entries] == ["a/deep/elder.md", "b/Banana.md"]


def test_cursor_from_a_different_query_is_rejected(vault: Vault) -> None:
    cursor = vault.list(Query(limit=2)).next_cursor
    assert cursor
    for other in (
        Query(limit=2, cursor=cursor, folder="a"),
        Query(limit=2, cursor=cursor, sort="title"),
        Query(limit=2, cursor=cursor, descending=True),
        Query(cursor=cursor, pattern="**"),
        Query(limit=2, cursor=cursor, filters=(("status", "draft"),)),
    ):
        with pytest.raises(QueryError, match="different query"):
            vault.list(other)
    # the page size is not part of the query: it may change between pages
    assert vault.list(Query(limit=5, cursor=cursor)).entries


@pytest.mark.parametrize("cursor", ["garbage", "!!!", "eyJ4IjogMX0", "WzEsIDJd", "bnVsbA", "W10", "WyJhIiwgMSwgMl0"])
def test_bad_cursor_is_rejected(vault: Vault, cursor: str) -> None:
    with pytest.raises(QueryError, match="cursor"):
        vault.list(Query(limit=2, cursor=cursor))


@pytest.mark.parametrize("limit", [0, -1, 1.5, "3"])
def test_bad_limit_is_rejected(vault: Vault, limit) -> None:
    with pytest.raises(QueryError, match="limit"):
        vault.list(Query(limit=limit))


def test_result_metadata(vault: Vault) -> None:
    res = vault.list(Query(limit=2))
    assert res.total == len(NOTES) and len(res.entries) == 2 and res.next_cursor
    assert res.is_bundle is True and res.loaded is True
    assert res.generation == vault.snapshot.generation
    res = vault.list(Query(limit=len(NOTES)))
    assert res.next_cursor is None


# --- kinds, folders, text, problems, exclude --------------------------------------------------------


def test_kinds(vault: Vault) -> None:
    assert listed(vault, include_attachments=True, include_notes=False) == ["a/pic.png"]
    assert listed(vault, include_folders=True, include_notes=False) == ["a", "a/deep", "b"]
    assert listed(vault, include_notes=False) == []
    every = listed(vault, include_attachments=True, include_folders=True)
    assert every == sorted(NOTES + ["a/pic.png", "a", "a/deep", "b"])


def test_filters_exclude_folders_and_attachments(vault: Vault) -> None:
    got = listed(vault, include_attachments=True, include_folders=True, filters=(("stale", "false"),))
    assert got == ["a/deep/elder.md", "b/Banana.md", "fig.md", "index.md"]
    got = listed(vault, include_attachments=True, include_folders=True, exclude=(("status", "draft"),))
    assert "a/pic.png" not in got and "a" not in got


def test_root_level_and_recursion(vault: Vault) -> None:
    assert listed(vault, folder="") == ["fig.md", "index.md"]
    assert listed(vault, folder="", recursive=True) == ["fig.md", "index.md"]  # "" is the root level only
    assert listed(vault, folder="a", recursive=False) == ["a/cherry.md", "a/date.md"]
    assert listed(vault, folder="a", recursive=False, include_folders=True, include_attachments=True) == [
        "a/cherry.md",
        "a/date.md",
        "a/deep",
        "a/pic.png",
    ]
    assert listed(vault, folder=None, recursive=False) == ["fig.md", "index.md"]
    assert listed(vault, folder="a/deep") == ["a/deep/elder.md"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("apple", ["b/apple.md"]),
        ("APPLE PIE", ["b/apple.md"]),  # title, case-insensitive
        ("a/de", ["a/deep/elder.md"]),  # path
        ("banana", ["b/Banana.md"]),
        ("nothing", []),
    ],
)
def test_text(vault: Vault, text: str, expected: list[str]) -> None:
    assert listed(vault, text=text) == expected


def test_text_combines_with_filters(vault: Vault) -> None:
    assert listed(vault, text="a", filters=(("status", "draft"),)) == ["b/Banana.md"]


def test_problems_only(vault: Vault) -> None:
    assert listed(vault, problems_only=True) == ["a/deep/elder.md"]


def test_exclude(vault: Vault) -> None:
    assert listed(vault, exclude=(("status", "stable"),)) == ["b/Banana.md", "b/apple.md"]
    assert listed(vault, exclude=(("stale", "true"),)) == ["a/deep/elder.md", "b/Banana.md", "fig.md", "index.md"]
    assert listed(vault, filters=(("status", "stable"),), exclude=(("stale", "true"),)) == [
        "a/deep/elder.md",
        "fig.md",
        "index.md",
    ]


# --- filter values ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("list", "x", ["b/Banana.md"]),  # list membership
        ("list", "3", ["b/Banana.md"]),  # a number in a list
        ("list", "true", ["b/Banana.md"]),  # a boolean in a list
        ("list", "TRUE", ["b/Banana.md"]),
        ("list", "y", []),
        ("n", "3", ["b/Banana.md"]),
        ("n", "3.0", []),
        ("f", "1.5", ["b/Banana.md"]),
        ("published", "false", ["a/cherry.md"]),
        ("published", "FALSE", ["a/cherry.md"]),
        ("published", "0", []),  # booleans match the words true/false only
        ("z", "", ["b/Banana.md"]),  # null matches the empty value
        ("z", "null", ["b/Banana.md"]),
        ("title", "cherry", ["a/cherry.md"]),
        ("title", "Cherry", []),  # string equality is exact
        ("tags", "fruit", ["a/cherry.md", "b/apple.md"]),  # tags: frontmatter and inline, any case
        ("tags", "#inline", ["a/cherry.md"]),
        ("tag", "Fruit", ["a/cherry.md", "b/apple.md"]),
        ("stale_after", "2026-11-01", ["a/cherry.md"]),  # a date compares as its ISO text
        ("missing", "", []),  # a missing key never matches
    ],
)
def test_filter_values(vault: Vault, key: str, value: str, expected: list[str]) -> None:
    assert listed(vault, filters=((key, value),)) == expected


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        (None, ()),
        ({}, ()),
        ({"status": "draft"}, (("status", "draft"),)),
        ({"published": True}, (("published", "true"),)),
        ({"published": False}, (("published", "false"),)),
        ({"rating": 4}, (("rating", "4"),)),
        ({"a": "1", "b": "2"}, (("a", "1"), ("b", "2"))),
    ],
)
def test_pairs(mapping, expected) -> None:
    assert pairs(mapping) == expected


@pytest.mark.parametrize(
    "mapping",
    [
        ["status", "draft"],
        "status=draft",
        {"": "x"},
        {" ": "x"},
        {1: "x"},
        {"status": None},
        {"status": ["draft"]},
        {"status": {"a": 1}},
    ],
)
def test_pairs_rejects_bad_filters(mapping) -> None:
    with pytest.raises(QueryError):
        pairs(mapping)


# --- argument errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "phrase"),
    [
        ({"folder": "/abs"}, PathError, "absolute path blocked"),
        ({"folder": ".."}, PathError, "path traversal blocked"),
        ({"folder": "."}, PathError, "path traversal blocked"),
        ({"folder": ".obsidian"}, PathError, "hidden path blocked"),
        ({"folder": "a\\b"}, PathError, "backslash"),
        ({"pattern": "?" * 30}, QueryError, "wildcards"),
        ({"pattern": "x" * 600}, QueryError, "longer than"),
        ({"pattern_base": "root"}, QueryError, "pattern_base"),
        ({"filters": (("trust_tier", "gold"),)}, QueryError, "not a tier"),
        ({"filters": (("stale", "soon"),)}, QueryError, "not a boolean"),
        ({"exclude": (("stale", "soon"),)}, QueryError, "not a boolean"),
    ],
)
def test_argument_errors(vault: Vault, kwargs: dict, error: type, phrase: str) -> None:
    with pytest.raises(error, match=phrase):
        vault.list(Query(**kwargs))


def test_pattern_base_folder_with_root_and_none(vault: Vault) -> None:
    assert listed(vault, folder="a", pattern="*.md", pattern_base="folder") == ["a/cherry.md", "a/date.md"]
    assert listed(vault, folder="a", pattern="*.md", pattern_base="vault") == []
    assert listed(vault, folder="a", pattern="a/**", pattern_base="vault") == [
        "a/cherry.md",
        "a/date.md",
        "a/deep/elder.md",
    ]
    assert listed(vault, folder=None, pattern="*.md", pattern_base="folder") == ["fig.md", "index.md"]
    assert listed(vault, folder="", pattern="*.md", pattern_base="folder") == ["fig.md", "index.md"]


def test_queries_are_answered_from_one_snapshot(vault: Vault) -> None:
    snap = vault.snapshot
    from vaultwatch.core.query.listing import run_query

    before = run_query(snap, Query(), vault.clock)
    with open(os.path.join(vault.root, "new.md"), "w") as f:
        f.write("# new\n")
    vault.refresh_paths(["new.md"])
    assert run_query(snap, Query(), vault.clock).entries == before.entries  # an old snapshot never changes
    assert "new.md" in listed(vault)
    assert vault.snapshot.generation > snap.generation


@pytest.mark.parametrize("sort", ["path", "modified", "title", "overdue"])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("forged_key", ["text", None, [1], {"a": 1}, 5])
def test_hand_edited_cursor_is_a_query_error_not_a_crash(vault: Vault, sort: str, descending: bool, forged_key) -> None:
    import base64
    import json

    cursor = vault.list(Query(limit=2, sort=sort, descending=descending)).next_cursor
    fp, key, path = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    if type(forged_key) is type(key):
        return  # a well-typed key is a valid (if odd) position
    forged = base64.urlsafe_b64encode(json.dumps([fp, forged_key, path]).encode()).decode().rstrip("=")
    with pytest.raises(QueryError, match="cursor is not valid"):
        vault.list(Query(limit=2, sort=sort, descending=descending, cursor=forged))


def test_a_query_before_loading_says_so(make_vault, clock) -> None:
    """Never a silent empty list: before the first full scan the result is flagged not loaded."""
    vault = Vault(make_vault({"a.md": "# a\n"}), clock=clock)
    res = vault.list(Query())
    assert res.entries == () and res.loaded is False
    vault.load()
    res = vault.list(Query())
    assert [e.path for e in res.entries] == ["a.md"] and res.loaded is True
