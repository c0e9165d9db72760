"""The list of vaults with a journal (core/review/vaultroots.py): written when a vault's journal opens,
private, and what lets nestedvault find a vault inside a folder without walking the folder's tree."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from vaultwatch.core.review import nestedvault, vaultroots
from vaultwatch.core.review.journal import journal_path
from vaultwatch.core.vault import Vault


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def opened(root: Path) -> None:
    """Open the vault's journal, as any vaultwatch command on it does."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "note.md").write_text("# note\n")
    vault = Vault(root)
    vault.load()
    try:
        assert vault.journal is not None
    finally:
        vault.stop()


def test_opening_a_vaults_journal_lists_its_folder_once_in_a_private_file(state: Path) -> None:
    inner = (state / "home" / "vault").resolve()
    opened(inner)
    opened(inner)
    folder = os.path.dirname(journal_path(str(inner)))
    assert vaultroots.recorded(folder) == [str(inner)]
    listed = Path(folder) / vaultroots.ROOTS
    assert stat.S_IMODE(listed.stat().st_mode) == 0o600
    with listed.open("a") as fh:
        fh.write('"/cut off\n')  # a write cut off: skipped
    assert vaultroots.recorded(folder) == [str(inner)]


def test_a_listed_vault_inside_a_folder_is_found_without_walking_the_folder(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = (state / "home").resolve()
    inner = home / "deep" / "er" / "vault"
    opened(inner)
    opened(state / "elsewhere")  # another vault's journal: without the list, a reason to walk home
    settings = str(state / "config" / "vaultwatch" / "settings.toml")

    def no_walk(*_args, **_kwargs):
        raise AssertionError("walked the folder's tree")

    monkeypatch.setattr(os, "scandir", no_walk)
    below = nestedvault.vault_below(str(home), settings)
    assert below is not None and below.known.folder == str(inner)
    assert nestedvault.vault_below(str(state / "elsewhere"), settings) is None


def test_a_list_that_is_no_regular_file_is_read_as_none_and_never_waited_on(state: Path) -> None:
    """The list is read at every start that looks below a folder: a FIFO in its place (no writer) held
    that start forever, and a link was followed (to a device that never ends, say). Neither is read,
    nor written to; the journals are then looked for as without a list."""
    inner = (state / "home" / "vault").resolve()
    opened(inner)
    folder = Path(os.path.dirname(journal_path(str(inner))))
    listed = folder / vaultroots.ROOTS
    elsewhere = state / "elsewhere-roots"
    listed.rename(elsewhere)
    listed.symlink_to(elsewhere)
    assert vaultroots.recorded(str(folder)) == []
    listed.unlink()
    os.mkfifo(listed, 0o600)
    assert vaultroots.recorded(str(folder)) == []
    vaultroots.record(str(folder), str(state / "other"))  # no reader: not waited on, nothing written
    settings = str(state / "config" / "vaultwatch" / "settings.toml")
    assert "holds the vault" in (nestedvault.refusal(str(state / "home"), settings) or "")
    assert stat.S_ISFIFO(listed.lstat().st_mode)


def test_a_folder_holding_a_vault_that_holds_another_advises_serving_neither(state: Path) -> None:
    """A folder holding a vault that holds a vault of its own (served once with --allow-nested): the
    refusal named whichever journal was listed first, the inner one too, and advised serving it, where
    fewer of the person's rules apply; or it advised serving a vault whose own start is refused."""
    home = (state / "home").resolve()
    vault = home / "vault"
    work = vault / "Work"
    opened(work)  # listed first: the walk meets it before the vault around it
    opened(vault)
    settings = str(state / "config" / "vaultwatch" / "settings.toml")
    below = nestedvault.vault_below(str(home), settings)
    assert below is not None and below.known.folder == str(vault)
    said = nestedvault.refusal(str(home), settings) or ""
    assert f"{home} holds the vault {vault} (it was served on its own before" in said, said
    assert f"Serving {vault} itself is refused too: it holds the vault {work}" in said, said
    assert "Serve " not in said, said  # no folder it names would start
    assert nestedvault.refusal(str(vault), settings) is not None  # as said
