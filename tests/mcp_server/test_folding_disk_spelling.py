"""On a disk that folds case (macOS's; here tests/foldingdisk.py's FUSE passthrough) an agent may name
a note in any case: `areas/plan.md` is `Areas/Plan.md`. Its change is named by the stored spelling
everywhere: the journal's row (so the note's history shows it, and the triage views count the note as
changed by an agent and not reviewed), and the watcher's event for the note is taken for that row,
never for a change "outside vaultwatch". A rename's new name keeps the case given.

Real parts: the real server on a real socket, the real `mcp` client, the real watcher.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from foldingdisk import folding_disk
from killed_cli import disk_events
from mcp_testing import serving, uds_client
from waiting import await_until

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
