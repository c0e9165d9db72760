"""The folder's fsync after a write's replace runs while the index takes the change, and the write
answers (its event, its result, its journal row) only once that fsync has returned."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultwatch.core.edit.writes import WriteApplied, Writer
from vaultwatch.core.events import DocumentsChanged, Event
from vaultwatch.core.vault import Vault

WAIT_S = 10.0  # a bound on waiting for the other thread, never a measurement


class FolderFsyncs:
    """Wraps os.fsync: a folder's fsync first waits (bounded) for the index to show `path`, then
    syncs for real; records what was true when it began and when it returned."""

    def __init__(self, vault: Vault, path: str) -> None:
        self.path = path
        self.indexed = threading.Event()
        self.synced = threading.Event()
        self.indexed_while_syncing: list[bool] = []
        self.synced_at_event: list[bool] = []
        vault.bus.subscribe(self._on_event)
        self._real = os.fsync

    def _on_event(self, event: Event) -> None:
        if isinstance(event, DocumentsChanged) and self.path in (*event.added, *event.changed):
            self.indexed.set()
        if isinstance(event, WriteApplied) and event.path == self.path:
            self.synced_at_event.append(self.synced.is_set())

    def fsync(self, fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            self.indexed_while_syncing.append(self.indexed.wait(WAIT_S))
            self._real(fd)
            self.synced.set()
            return
        self._real(fd)


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text("---\nstatus: draft\n---\n# Plan\n")
    v = Vault(root, cache=False)
    v.load()
    yield v
    v.stop()


@pytest.mark.parametrize("operation", ["create", "replace", "update_frontmatter"])
def test_the_index_takes_a_write_while_its_folder_syncs_and_the_answer_waits(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    path = "Projects/New.md" if operation == "create" else "Projects/Plan.md"
    probe = FolderFsyncs(vault, path)
    monkeypatch.setattr(os, "fsync", probe.fsync)
    writer = Writer(vault)
    if operation == "create":
        result = writer.write(path, "# New\n", actor="agent:test")
    elif operation == "replace":
        result = writer.write(path, "# Plan, again\n", overwrite=True, actor="agent:test")
    else:
        result = writer.update_frontmatter(path, set={"status": "stable"}, actor="agent:test")
    assert result.changed
    # the folder's fsync began before the index had the change and waited for it: they overlapped
    assert probe.indexed_while_syncing == [True]
    # and nothing said "done" before that fsync returned: neither the result nor the event
    assert probe.synced.is_set()
    assert probe.synced_at_event == [True]
    assert vault.snapshot.get(path) is not None
    on_disk = (Path(vault.root) / path).read_bytes()
    want = {"create": b"# New\n", "replace": b"# Plan, again\n"}.get(operation)
    assert on_disk == want if want is not None else b"status: stable" in on_disk
