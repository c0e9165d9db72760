"""A vault path spelled as the disk stores its names (core.disk.storednames), on a disk that folds
case (tests/foldingdisk.py: a FUSE passthrough) and on this one."""

from __future__ import annotations

import os
from pathlib import Path

from foldingdisk import folding_disk

from vaultwatch.core.disk.storednames import stored, stored_root


def nothing_indexed(path: str) -> bool:
    return False


def test_each_existing_level_takes_the_stored_spelling(tmp_path: Path) -> None:
    with folding_disk(tmp_path) as (backing, mounted):
        (backing / "Notes" / "Sub").mkdir(parents=True)
        (backing / "Notes" / "Sub" / "Plan.md").write_text("# Plan\n")
        root = os.path.realpath(mounted)
        assert stored(root, "notes/SUB/plan.md", nothing_indexed) == "Notes/Sub/Plan.md"
        assert stored(root, "NOTES./sub /plan.md", nothing_indexed) == "Notes/Sub/Plan.md"  # a Windows share's
        assert stored(root, "notes/new/x.md", nothing_indexed) == "Notes/new/x.md"  # what is new stays as given
        # a rename's new name stays as given, even one that differs only in case
        assert stored(root, "notes/sub/plan.md", nothing_indexed, last=False) == "Notes/Sub/plan.md"


def test_a_path_the_index_holds_is_taken_as_it_is(tmp_path: Path) -> None:
    with folding_disk(tmp_path) as (backing, mounted):
        (backing / "Notes").mkdir()
        (backing / "Notes" / "Plan.md").write_text("# Plan\n")
        root = os.path.realpath(mounted)
        assert stored(root, "Notes/Plan.md", lambda p: p == "Notes/Plan.md") == "Notes/Plan.md"
        assert stored(root, "Notes/plan.md", lambda p: p == "Notes") == "Notes/Plan.md"


def test_on_a_disk_that_keeps_case_every_path_is_its_own(tmp_path: Path) -> None:
    (tmp_path / "Notes").mkdir()
    (tmp_path / "Notes" / "Plan.md").write_text("# Plan\n")
    (tmp_path / "notes").mkdir()  # another folder here, not another spelling
    root = os.path.realpath(tmp_path)
    assert stored(root, "notes/Plan.md", nothing_indexed) == "notes/Plan.md"
    assert stored(root, "Notes/Plan.md", nothing_indexed) == "Notes/Plan.md"
    assert stored(root, "Gone/x.md", nothing_indexed) == "Gone/x.md"


def test_a_vaults_root_is_spelled_as_stored(tmp_path: Path) -> None:
    with folding_disk(tmp_path) as (backing, mounted):
        (backing / "My Vault" / "Notes").mkdir(parents=True)
        real = os.path.realpath(mounted)
        assert stored_root(str(mounted / "my vault")) == os.path.join(real, "My Vault")
        assert stored_root(str(mounted / "MY VAULT" / "notes")) == os.path.join(real, "My Vault", "Notes")
    (tmp_path / "Kept").mkdir()
    assert stored_root(str(tmp_path / "Kept")) == os.path.join(os.path.realpath(tmp_path), "Kept")
    assert stored_root(str(tmp_path / "kept")) == os.path.join(os.path.realpath(tmp_path), "kept")  # no such folder
