"""The folders a write or a rename makes on the way to a new path: made only after the agent's
rules and the gate let the change through, made at the approved place only, journaled with the
change, and removed again (exactly those, never a folder that was there) when the change fails.

Real parts: a vault on disk, the Writer and core.disk.safeio; faults are injected by replacing
one system call or the gate's hook for the duration of a call."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from vaultwatch.core.disk import safeio
from vaultwatch.core.disk.safeio import locate
from vaultwatch.core.edit import writes
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.errors import PathChangedError, SymlinkEscapeError, VaultError
from vaultwatch.core.vault import Vault

DEEP = 60  # deeper than the walk's retry budget (safeio.MAX_SYMLINKS), within the path length cap


def folders(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir() and not p.is_symlink()}


def files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir() or p.is_symlink()}


def disk_full_at_third_folder(monkeypatch) -> list[str]:
    """Make the walk's third mkdir fail as a full disk would; returns the folder names it asked for."""
    real_mkdir = os.mkdir
    calls: list[str] = []

    def full_disk(name, mode=0o777, *, dir_fd=None):
        if dir_fd is not None:  # the walk's own mkdirs (the journal makes its folders by path)
            calls.append(name)
            if len(calls) == 3:
                raise OSError(errno.ENOSPC, "no space left on device")
        return real_mkdir(name, mode, dir_fd=dir_fd)

    monkeypatch.setattr(safeio.os, "mkdir", full_disk)
    return calls


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "vault"
    (root / "Old" / "keep").mkdir(parents=True)
    (root / "Secret").mkdir()
    (root / "a.md").write_text("# A\n")
    v = Vault(root)
    v.load()
    return v


def test_a_deep_new_path_is_made_and_each_folder_listed(vault: Vault) -> None:
    # every mkdir used to count as a retry: past MAX_SYMLINKS new folders the walk gave up as
    # "changed on disk", leaving the folders it had made
    rel = "/".join(["d"] * DEEP) + "/n.md"
    with locate(vault.root_real, rel, make_dirs=True, follow_last=False) as loc:
        assert loc.canon == rel and loc.name == "n.md"
        assert loc.created == ["/".join(["d"] * i) for i in range(1, DEEP + 1)]
        assert set(loc.created_ids) == set(loc.created)
    result = Writer(vault).write("/".join(["e"] * DEEP) + "/n.md", "x\n", actor="agent:a")
    assert result.created and (Path(vault.root).joinpath(*["e"] * DEEP) / "n.md").read_text() == "x\n"


def test_a_walk_that_fails_midway_removes_only_the_folders_it_made(vault: Vault, monkeypatch) -> None:
    root = Path(vault.root)
    before = folders(root)
    calls = disk_full_at_third_folder(monkeypatch)
    with pytest.raises(OSError):
        locate(vault.root_real, "Old/keep/x/y/z/w/n.md", make_dirs=True, follow_last=False)
    monkeypatch.undo()
    assert calls == ["x", "y", "z"]
    assert folders(root) == before  # x and y went; Old and Old/keep, which were there, stay


def test_a_second_walk_does_not_claim_folders_another_made(vault: Vault) -> None:
    with locate(vault.root_real, "N/m/n.md", make_dirs=True, follow_last=False) as first:
        assert first.created == ["N", "N/m"]
    with locate(vault.root_real, "N/m/o.md", make_dirs=True, follow_last=False) as second:
        assert second.created == []
        assert safeio.remove_created(vault.root_real, second.created, second.created_ids) == []
    assert (Path(vault.root) / "N" / "m").is_dir()
    # the first walk's record no longer matches once the folder was replaced by another one
    os.rmdir(Path(vault.root) / "N" / "m")
    os.rmdir(Path(vault.root) / "N")
    (Path(vault.root) / "N").mkdir()
    (Path(vault.root) / "N" / "keep.md").write_text("x\n")
    assert safeio.remove_created(vault.root_real, first.created, first.created_ids) == []
    assert (Path(vault.root) / "N" / "keep.md").exists()


def test_a_create_whose_folders_fail_midway_leaves_none(vault: Vault, monkeypatch) -> None:
    # the folders are made inside the write's commit: a failure there used to skip the clean-up
    root = Path(vault.root)
    before = folders(root), files(root)
    calls = disk_full_at_third_folder(monkeypatch)
    with pytest.raises(VaultError):
        Writer(vault).write("Old/keep/new/sub/deeper/n.md", "x\n", actor="agent:a")
    monkeypatch.undo()
    assert calls == ["new", "sub", "deeper"]
    assert (folders(root), files(root)) == before


def test_the_gate_decides_before_any_folder_exists(vault: Vault, monkeypatch) -> None:
    root = Path(vault.root)
    seen = []

    def gate(effects, old=None, new=None, temp=None, *, relinks=None, old_mode=None):
        seen.append(([(e.path, e.change) for e in effects.effects], folders(root)))
        raise VaultError("declined")

    monkeypatch.setattr(writes._journal, "approve", gate)
    before = folders(root)
    with pytest.raises(VaultError, match="declined"):
        Writer(vault).write("New/sub/n.md", "x\n", actor="agent:a")
    (asked, on_disk) = seen[0]
    # the gate is asked about the note and every folder the write would make, and none exists yet
    assert asked == [("New/sub/n.md", "create"), ("New", "create"), ("New/sub", "create")]
    assert on_disk == before and folders(root) == before
    seen.clear()
    with pytest.raises(VaultError, match="declined"):
        Writer(vault).rename("a.md", "Moved/deep/a.md", actor="agent:a")
    assert ("Moved", "create") in seen[0][0] and ("Moved/deep", "create") in seen[0][0]
    assert folders(root) == before and (root / "a.md").exists()


@pytest.mark.parametrize("outside", [False, True])
def test_a_folder_swapped_for_a_link_after_the_gate_puts_nothing_anywhere(
    vault: Vault, monkeypatch, tmp_path: Path, outside: bool
) -> None:
    """The gate approved New/sub/n.md; before the folders are made, another process puts a link at
    New that leads to Secret (or out of the vault). Nothing may land where nobody approved."""
    root = Path(vault.root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere if outside else root / "Secret"
    real = writes._journal.approve

    def swap(effects, old=None, new=None, temp=None, *, old_mode=None):
        real(effects, old, new, temp, old_mode=old_mode)
        (root / "New").symlink_to(target)

    monkeypatch.setattr(writes._journal, "approve", swap)
    with pytest.raises((PathChangedError, SymlinkEscapeError)):
        Writer(vault).write("New/sub/n.md", "x\n", actor="agent:a")
    assert list(target.iterdir()) == []


def test_a_failed_rename_removes_the_folders_it_made(vault: Vault, monkeypatch) -> None:
    root = Path(vault.root)
    before = folders(root), files(root)

    def taken(*args, **kwargs):
        raise FileExistsError(errno.EEXIST, "exists")

    monkeypatch.setattr(writes, "rename_noreplace", taken)
    with pytest.raises(VaultError):
        Writer(vault).rename("a.md", "Old/keep/x/y/a.md", actor="agent:a")
    assert (folders(root), files(root)) == before


def test_a_rename_to_a_deep_new_folder_names_the_folders_it_made(vault: Vault) -> None:
    dst = "/".join(["r"] * DEEP) + "/a.md"
    result = Writer(vault).rename("a.md", dst, actor="agent:a")
    made = ["/".join(["r"] * i) for i in range(1, DEEP + 1)]
    assert set(made) <= set(result.changed_paths)
    assert (Path(vault.root) / dst).read_text() == "# A\n"
