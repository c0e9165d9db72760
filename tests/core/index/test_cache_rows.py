"""What the entry cache keeps beside each entry for a front end (`Vault.keep_rows`), and what a warm load hands
back (`Vault.kept_rows`): only to a vault that asked before its load, once per path, with the Entry that load
made of it, so that a row kept for an older version of a file is never taken for the new one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.core.index.conftest import backdate
from vaultwatch.core.model import ATTACHMENT, FOLDER
from vaultwatch.core.vault import Vault

pytestmark = pytest.mark.usefixtures("xdg_cache")

NOTES = {
    "Alpha.md": "---\ntitle: Alpha\ntags: [a]\n---\nbody\n",
    "Projects/Beta.md": "# Beta\n",
    "Inbox/broken.md": "---\ntitle: [unclosed\n---\nbody\n",
    "Resources/diagram.png": b"\x89PNG fake",
}


def kept_by(entry) -> tuple[str, int]:
    """A row of the test's own, marshal-able, saying which entry it was made of."""
    return ("row", entry.path, entry.size_bytes)


def reopened(root: Path, clock, row_of=kept_by) -> Vault:
    """The vault loaded again, asking for its kept rows before the load (unless `row_of` is None)."""
    v = Vault(root, clock=clock)
    if row_of is not None:
        v.keep_rows(row_of)
    v.load()
    return v


def written(root: Path, clock, row_of=kept_by) -> None:
    """A first load that keeps rows (unless `row_of` is None), its cache written."""
    v = reopened(root, clock, row_of)
    v.flush_cache_soon(0.0)
    v.entry_cache.wait_flushed()
    v.stop()


def taken(v: Vault, path: str):
    """The kept row of `path` as a listing takes it (handed over: gone from the vault after)."""
    return v.kept_rows().pop(path, None)


def test_a_warm_load_hands_back_each_kept_row_once_with_its_entry(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    written(root, clock)
    v = reopened(root, clock)
    assert v.entry_cache.last_stats.parsed == 0
    files = [e for e in v.snapshot.entries if e.kind != FOLDER]
    assert {e.kind for e in files} >= {ATTACHMENT, "note"}
    for e in files:
        entry, row = taken(v, e.path)
        assert entry is e  # the very Entry the index serves: its file's stat matched
        assert row == ("row", e.path, e.size_bytes)
        assert taken(v, e.path) is None  # handed over, not kept
    assert taken(v, "Projects") is None  # folders are not in the cache
    v.stop()


def test_nothing_is_handed_back_to_a_vault_that_did_not_ask_before_its_load(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    written(root, clock)
    v = reopened(root, clock, None)
    v.keep_rows(kept_by)  # too late: the load kept nothing for it
    assert taken(v, "Alpha.md") is None
    v.stop()


def test_a_file_changed_since_the_write_gets_no_row_of_its_old_version(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root, 120)
    written(root, clock)
    (root / "Alpha.md").write_text("---\ntitle: Alpha again\n---\nlonger body now\n")
    past = time.time() - 60
    os.utime(root / "Alpha.md", (past, past))
    v = reopened(root, clock)
    now = v.snapshot.get("Alpha.md")
    assert now.title == "Alpha again"
    got = taken(v, "Alpha.md")
    assert got is None or got[0] is not now  # a row kept for the old entry is never the new one's
    entry, row = taken(v, "Projects/Beta.md")
    assert entry is v.snapshot.get("Projects/Beta.md")
    v.stop()


def test_a_row_maker_that_fails_costs_that_row_only(make_vault, clock):
    def broken(entry):
        if entry.path == "Alpha.md":
            raise RuntimeError("a bug in the front end")
        return kept_by(entry)

    root = make_vault(NOTES)
    backdate(root)
    written(root, clock, broken)
    v = reopened(root, clock)
    assert v.entry_cache.last_stats.parsed == 0  # every entry was written all the same
    assert taken(v, "Alpha.md") is None
    assert taken(v, "Projects/Beta.md")[1] == kept_by(v.snapshot.get("Projects/Beta.md"))
    v.stop()


def test_the_first_row_maker_asked_for_is_the_one_kept(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    v = Vault(root, clock=clock)
    v.keep_rows(kept_by)
    v.keep_rows(lambda entry: "another")
    v.load()
    v.flush_cache_soon(0.0)
    v.entry_cache.wait_flushed()
    v.stop()
    w = reopened(root, clock)
    assert taken(w, "Alpha.md")[1] == kept_by(w.snapshot.get("Alpha.md"))
    w.stop()


def test_a_cache_written_without_rows_hands_none_back(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    written(root, clock, None)
    v = reopened(root, clock)
    assert v.entry_cache.last_stats.parsed == 0
    assert taken(v, "Alpha.md") is None
    v.stop()
