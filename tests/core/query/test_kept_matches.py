"""A filtered or matched listing finds and sorts its matches once per snapshot, not once per page: its next
pages take them from the snapshot (`listing._kept`). A new generation finds them again, a query whose
matches depend on the clock finds them every time, and every page says what the listing says in one piece."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultwatch.core.query import listing, postings
from vaultwatch.core.query.listing import Query
from vaultwatch.core.vault import Vault


def _files() -> dict[str, str]:
    files = {}
    for i in range(60):
        status = "draft" if i % 3 else "stable"
        files[f"{'ab'[i % 2]}/note {i:02d}.md"] = f"---\ntitle: Note {i}\nstatus: {status}\ntags: [t{i % 4}]\n---\n"
    return files


@pytest.fixture
def vault(make_vault, open_vault) -> Vault:
    v = open_vault(make_vault(_files()))
    yield v
    v.stop()


def _walk(vault: Vault, **kw) -> tuple[list[str], int]:
    """Every path of the listing through its cursor, and how many pages it took."""
    paths: list[str] = []
    cursor, pages = None, 0
    while True:
        res = vault.list(Query(limit=4, cursor=cursor, **kw))
        paths += [e.path for e in res.entries]
        pages += 1
        cursor = res.next_cursor
        if not cursor:
            return paths, pages


def _counting(monkeypatch, module, name: str) -> list[object]:
    calls: list[object] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


QUERIES = [
    {"filters": (("status", "draft"),)},  # pages by position: the chosen positions are kept
    {"filters": (("status", "draft"),), "exclude": (("tags", "t1"),)},
    {"pattern": "a/*"},  # the path stages: the matched entries are kept
    {"filters": (("status", "draft"),), "sort": "title", "descending": True},
    {"text": "a/", "words": ("note",), "sort": "modified"},
]


@pytest.mark.parametrize("kw", QUERIES)
def test_a_listings_pages_find_its_matches_once_per_snapshot(vault, monkeypatch, kw):
    whole = [e.path for e in vault.list(Query(**kw)).entries]  # in one piece (no cursor)
    positions = _counting(monkeypatch, postings, "positions")
    globs = _counting(monkeypatch, listing, "compile_glob")
    folds = _counting(monkeypatch, listing, "fold")
    paths, pages = _walk(vault, **kw)
    assert paths == whole and pages > 3
    # once for the whole walk (the listing in one piece above was another query: its limit differs, not
    # its matches, so it may have kept them already)
    assert len(positions) <= len(kw.get("filters", ())) + len(kw.get("exclude", ()))
    assert len(globs) <= 1 and len(folds) <= 1


def test_a_new_generation_finds_the_matches_again(vault, monkeypatch):
    first, _ = _walk(vault, filters=(("status", "draft"),))
    first_pattern, _ = _walk(vault, pattern="a/*")
    (Path(vault.root) / "a" / "note 99.md").write_text("---\ntitle: New\nstatus: draft\n---\n", encoding="utf-8")
    (Path(vault.root) / "a" / "note 00.md").write_text("---\ntitle: Was stable\nstatus: draft\n---\n", encoding="utf-8")
    vault.refresh_paths(["a/note 99.md", "a/note 00.md"])
    positions = _counting(monkeypatch, postings, "positions")
    again, _ = _walk(vault, filters=(("status", "draft"),))
    assert len(positions) == 1
    assert again == sorted([*first, "a/note 00.md", "a/note 99.md"])
    again_pattern, _ = _walk(vault, pattern="a/*")
    assert again_pattern == sorted([*first_pattern, "a/note 99.md"])


def test_matches_that_depend_on_the_clock_are_found_every_time(vault, monkeypatch):
    positions = _counting(monkeypatch, postings, "positions")
    _paths, pages = _walk(vault, filters=(("status", "draft"),), sort="overdue")
    assert pages > 3 and len(positions) == pages
