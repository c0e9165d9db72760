"""What the entry cache keeps beside each entry for a front end (`Vault.keep_rows`), and what a warm load hands
back (`Vault.stored_row`): only to a vault that asked before its load, once per path, with the Entry that load
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


def written(root: Path, clock, row_of=kept_by) -> None:
    """A first load that keeps rows, its cache written."""
    v = Vault(root, clock=clock)
    if row_of is not None:
        v.keep_rows(row_of)
    v.load()
    v.flush_cache_soon(0.0)
    v.entry_cache.wait_flushed()
    v.stop()


def test_a_warm_load_hands_back_each_kept_row_once_with_its_entry(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    written(root, clock)
    v = Vault(root, clock=clock)
    v.keep_rows(kept_by)
    v.load()
    assert v.entry_cache.last_stats.parsed == 0
    files = [e for e in v.snapshot.entries if e.kind != FOLDER]
    assert {e.kind for e in files} >= {ATTACHMENT, "note"}
    for e in files:
        entry, row = v.stored_row(e.path)
        assert entry is e  # the very Entry the index serves: its file's stat matched
        assert row == ("row", e.path, e.size_bytes)
        assert v.stored_row(e.path) is None  # handed over, not kept
    assert v.stored_row("Projects") is None  # folders are not in the cache
    v.stop()


def test_nothing_is_handed_back_to_a_vault_that_did_not_ask_before_its_load(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    written(root, clock)
    v = Vault(root, clock=clock)
    v.load()
    v.keep_rows(kept_by)  # too late: the load kept nothing for it
    assert v.stored_row("Alpha.md") is None
    v.stop()


def test_a_file_changed_since_the_write_gets_no_row_of_its_old_version(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root, 120)
    written(root, clock)
    (root / "Alpha.md").write_text("---\ntitle: Alpha again\n---\nlonger body now\n")
    past = time.time() - 60
    os.utime(root / "Alpha.md", (past, past))
    v = Vault(root, clock=clock)
    v.keep_rows(kept_by)
    v.load()
    now = v.snapshot.get("Alpha.md")
    assert now.title == "Alpha again"
    got = v.stored_row("Alpha.md")
    assert got is None or got[0] is not now  # a row kept for the old entry is never the new one's
    entry, row = v.stored_row("Projects/Beta.md")
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
    v = Vault(root, clock=clock)
    v.keep_rows(kept_by)
    v.load()
    assert v.entry_cache.last_stats.parsed == 0  # every entry was written all the same
    assert v.stored_row("Alpha.md") is None
    assert v.stored_row("Projects/Beta.md")[1] == kept_by(v.snapshot.get("Projects/Beta.md"))
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
    w = Vault(root, clock=clock)
    w.keep_rows(kept_by)
    w.load()
    assert w.stored_row("Alpha.md")[1] == kept_by(w.snapshot.get("Alpha.md"))
    w.stop()


def test_a_cache_written_without_rows_hands_none_back(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    written(root, clock, None)
    v = Vault(root, clock=clock)
    v.keep_rows(kept_by)
    v.load()
    assert v.entry_cache.last_stats.parsed == 0
    assert v.stored_row("Alpha.md") is None
    v.stop()
