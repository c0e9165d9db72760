"""On a disk that folds case (macOS's; here tests/foldingdisk.py's FUSE passthrough) an agent may name
a note in any case: `areas/plan.md` is `Areas/Plan.md`. Its change is named by the stored spelling
everywhere: the journal's row (so the note's history shows it, and the triage views count the note as
changed by an agent and not reviewed), and the watcher's event for the note is taken for that row,
never for a change "outside vaultwatch". A rename's new name keeps the case given.

Real parts: the real server on a real socket, the real `mcp` client, the real watcher.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from foldingdisk import folding_disk
from killed_cli import disk_events
from mcp_testing import ROOT, VAULTWATCH, serving, uds_client
from waiting import await_until, wait_until

from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault

PLAN = "---\nverified:\n  - by: human:ann\n---\n# Plan\nthe person's text\n"


@pytest.mark.asyncio
async def test_an_agents_change_is_journaled_by_the_notes_stored_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    with folding_disk(tmp_path) as (backing, mounted):
        (backing / "Areas").mkdir()
        (backing / "Areas" / "Plan.md").write_text(PLAN)
        (backing / "Areas" / "Other.md").write_text("# Other\n")
        vault = Vault(mounted)
        vault.load()
        folder = tempfile.mkdtemp(prefix="vwf", dir="/tmp")
        try:
            async with serving(vault, folder + "/s.sock") as host, uds_client(host.socket_path) as agent:
                seen = disk_events(vault)
                vault.start_watching()
                edited = await agent.call_tool(
                    "edit", {"path": "areas/PLAN.md", "old_text": "the person's text", "new_text": "the agent's"}
                )
                assert not edited.is_error, edited.content[0].text
                moved = await agent.call_tool("rename", {"path": "AREAS/other.md", "new_path": "areas/Moved.md"})
                assert not moved.is_error, moved.content[0].text
                # a note written here after the agent's calls: once its disk event is in, the journal
                # (subscribed before) has handled the events of the agent's changes, which came first
                (mounted / "Marker.md").write_text("# Marker\n")
                await await_until(lambda: "Marker.md" in seen, what="the marker's disk event")
                journal = journal_for(vault)
                assert journal is not None
                rows = [(c.operation, c.path) for c in journal.changes()]
                by_note = [c.operation for c in journal.changes(path="Areas/Plan.md")]
                unreviewed = set(journal.unreviewed_paths())
        finally:
            vault.stop()
            os.rmdir(folder) if os.path.isdir(folder) and not os.listdir(folder) else None
    assert ("edit", "Areas/Plan.md") in rows and ("rename", "Areas/Moved.md") in rows, rows
    assert by_note == ["edit"], by_note  # the note's history holds the agent's edit, and no outside row
    assert [r for r in rows if r[0] == "outside"] == [("outside", "Marker.md")], rows
    assert "Areas/Plan.md" in unreviewed, unreviewed
    assert sorted(p.name for p in (backing / "Areas").iterdir()) == ["Moved.md", "Plan.md"]


def test_a_vault_named_in_another_case_is_the_same_vault(tmp_path: Path) -> None:
    """`vaultwatch serve mnt/vault` while `mnt/Vault` is served: refused as the same vault's second
    server (it started, with a second journal the person's `vaultwatch changes mnt/Vault` never reads)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
    }
    (tmp_path / "run").mkdir(mode=0o700)
    with folding_disk(tmp_path) as (backing, mounted):
        (backing / "Vault" / "Notes").mkdir(parents=True)
        (backing / "Vault" / "Notes" / "a.md").write_text("# A\n")
        first_socket = tmp_path / "first.sock"
        first = subprocess.Popen(
            [*VAULTWATCH, "serve", str(mounted / "Vault"), "--socket", str(first_socket)],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until(lambda: first_socket.exists() or first.poll() is not None, what="the first server's socket")
            assert first.poll() is None, first.stderr.read() if first.stderr else ""
            second_socket = tmp_path / "second.sock"
            second = subprocess.Popen(
                [*VAULTWATCH, "serve", str(mounted / "vault"), "--socket", str(second_socket)],
                env=env,
                cwd=tmp_path,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                wait_until(lambda: second.poll() is not None or second_socket.exists(), what="the second server")
                served = second.poll() is None
            finally:
                if second.poll() is None:
                    second.terminate()
                said = second.communicate(timeout=30)[1]
        finally:
            first.terminate()
            first.wait(30)
        assert not served and "already serves" in said, said
        changes = subprocess.run(
            [*VAULTWATCH, "changes", str(mounted / "vault")], env=env, cwd=tmp_path, capture_output=True, text=True
        )
    assert changes.returncode == 0, changes.stderr
    journals = sorted(p.name for p in (tmp_path / "state" / "vaultwatch" / "journal").glob("*.sqlite3"))
    assert len(journals) == 1 and journals[0].startswith("Vault-"), journals
