"""A vault's change journal lives as long as the vault: the vault holds it (Vault.journal), so a
vault that goes away takes its journal, its SQLite connection and its files with it."""

from __future__ import annotations

import gc
import os
import weakref
from pathlib import Path

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault


def open_fds(under: Path) -> int:
    """This process's descriptors on files under `under` (other tests in the process open and
    close their own meanwhile)."""
    fd_dir = f"/proc/{os.getpid()}/fd"
    if not os.path.isdir(fd_dir):
        return 0
    n = 0
    for fd in os.listdir(fd_dir):
        try:
            n += os.readlink(os.path.join(fd_dir, fd)).startswith(str(under))
        except OSError:
            continue  # closed meanwhile
    return n


def test_a_vault_that_goes_away_takes_its_journal_with_it(make_vault, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = make_vault({"a.md": "# A\n"})
    gc.collect()
    before = open_fds(tmp_path)
    gone = []
    for i in range(5):
        vault = Vault(root, cache=False)
        vault.load()
        Writer(vault).write("a.md", f"# A {i}\n".encode(), overwrite=True, actor="human")
        journal = journal_for(vault)
        assert journal is not None and journal is vault.journal and len(journal.changes()) == i + 1
        gone += [weakref.ref(vault), weakref.ref(journal)]
        del vault, journal
    gc.collect()
    assert [ref for ref in gone if ref() is not None] == []
    assert open_fds(tmp_path) <= before
