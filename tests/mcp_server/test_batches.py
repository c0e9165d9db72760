"""A session's batch of changes reverted as one unit (`vaultwatch revert --session ID`), through the
real server on a real socket, the real `mcp` client and real `vaultwatch` processes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from killed_cli import LINKED, cli, disk_events, kill_once, links_to_t, spawn_cli, tree, write_linked
from mcp_testing import ROOT, serving, uds_client

from vaultwatch.core.review.batch import session_changes
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault


@pytest.fixture
def vault(tmp_path: Path, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n- one\n- two\n")
    (root / "Home.md").write_text("---\ntags: [home]\n---\nSee [[Plan]] and [[Target]].\n")
    (root / "Target.md").write_text("# Target\nbody\n")
    for name in ("A", "B", "C"):
        (root / f"{name}.md").write_text(f"# {name}\nlinks to [[Target]] and [[Target#body]]\n")
    (root / "Old.md").write_text("# Old\nto be deleted\n")
    (root / "Log.md").write_text("# Log\n")
    v = Vault(root)
    v.load()
    return v


async def _twenty_changes(agent) -> None:
    calls = [
        *[("write", {"path": f"new/N{i}.md", "content": f"# N{i}\nnew note {i}\n"}) for i in range(1, 6)],
        ("edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- uno"}),
        ("edit", {"path": "Plan.md", "old_text": "- two", "new_text": "- dos"}),
        ("edit", {"path": "Log.md", "heading": "Log", "mode": "append", "text": "entry 1"}),
        ("edit", {"path": "Log.md", "heading": "Log", "mode": "append", "text": "entry 2"}),
        ("update_frontmatter", {"path": "Home.md", "set": {"status": "draft"}}),
        ("rename", {"path": "Target.md", "new_path": "moved/Moved.md"}),
        ("edit", {"path": "moved/Moved.md", "old_text": "body", "new_text": "body after the move"}),
        ("edit", {"path": "A.md", "old_text": "# A", "new_text": "# A edited"}),
        ("write", {"path": "new/N1.md", "content": "# N1\nrewritten\n", "overwrite": True}),
        ("delete", {"path": "Old.md"}),
        ("edit", {"path": "new/N2.md", "old_text": "new note 2", "new_text": "note two"}),
        ("update_frontmatter", {"path": "new/N3.md", "set": {"n": 3}}),
        ("edit", {"path": "B.md", "old_text": "# B", "new_text": "# B edited"}),
        ("update_frontmatter", {"path": "Home.md", "set": {"status": "done"}}),
        ("edit", {"path": "Plan.md", "old_text": "# Plan", "new_text": "# The plan"}),
    ]
    assert len(calls) == 20
    for tool, arguments in calls:
        r = await agent.call_tool(tool, arguments)
        assert not r.is_error, (tool, arguments, r.content[0].text)


async def test_a_sessions_twenty_changes_are_reverted_as_one_unit_byte_exact(vault, sock_dir):
    root = Path(vault.root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = tree(root)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="batcher") as agent:
        await _twenty_changes(agent)
        journal = journal_for(vault)
        rows = journal.changes(kinds=("change",))
        session = rows[0].session
        assert session and len(rows) == 20 and {c.session for c in rows} == {session}
        after = tree(root)
        assert after != before
        assert any(c.operation == "rename" and len(c.files) >= 3 for c in rows)  # the links rewritten in A, B, C

        # a time range of the session, on the journal's own time: its five newest changes
        times = journal.journal_times(c.id for c in rows)
        assert [c.id for c in session_changes(journal, session, since=times[rows[4].id])] == [c.id for c in rows[:5]]
        assert [c.id for c in session_changes(journal, session, until=times[rows[15].id])] == [c.id for c in rows[15:]]

        listed = cli("changes", str(root), "--session", session[:8], env=env)
        assert listed.returncode == 0, listed.stderr
        # the session as shown: a bare id by its first 8 digits, which start no other session's id
        assert len(listed.stdout.splitlines()) == 20 and f"[{session[:8]}]" in listed.stdout

        without_yes = cli("revert", "--session", session, str(root), env=env)
        assert without_yes.returncode != 0 and "--yes" in without_yes.stderr
        assert tree(root) == after

        done = cli("revert", "--session", session, str(root), "--yes", env=env)
        assert done.returncode == 0, done.stderr
        assert "reverted 20 changes" in done.stdout
        assert tree(root) == before  # every byte, every path
        assert all(journal.get(c.id).reverted_by is not None for c in rows)
        assert journal.open_intents() == []

        some_revert = journal.changes(kinds=("revert",))[7]  # any revert of the batch redoes the batch
        redone = cli("redo", str(some_revert.id), str(root), env=env)
        assert redone.returncode == 0, redone.stderr
        assert "redid 20 changes" in redone.stdout
        assert tree(root) == after  # every change re-applied, byte for byte
        assert journal.open_intents() == []
        again = cli("redo", str(some_revert.id), str(root), env=env)
        assert again.returncode == 1 and "redone already" in again.stderr


async def test_a_batch_with_one_file_changed_outside_since_is_refused_whole(vault, sock_dir):
    root = Path(vault.root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="batcher") as agent:
        await _twenty_changes(agent)
        journal = journal_for(vault)
        session = journal.changes(kinds=("change",))[0].session
        # the person edits a note the batch renamed and then edited: the batch must not revert anything
        (root / "moved" / "Moved.md").write_text("# Target\nthe person's own text\n")
        after = tree(root)
        refused = cli("revert", "--session", session, str(root), "--yes", env=env)
        assert refused.returncode == 1
        assert "moved/Moved.md" in refused.stderr and "Nothing was reverted" in refused.stderr
        assert tree(root) == after
        assert journal.changes(kinds=("revert",)) == []
        assert journal.open_intents() == []


async def test_a_batch_revert_killed_midway_is_finished_by_the_same_command(tmp_path, sock_dir, monkeypatch):
    """A session writes, renames T.md (rewriting [[T]] in 400 notes) and writes again; the person's
    `vaultwatch revert --session` is killed with SIGKILL once part of the rename's restore is on
    disk, while the server watches. The same command again finishes the batch: every byte back,
    and none of the revert's writes journaled as outside edits."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    write_linked(root)
    names = LINKED
    vault = Vault(root)
    vault.load()
    before = tree(root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="renamer") as agent:
        seen = disk_events(vault)
        vault.start_watching()
        for tool, arguments in [
            ("write", {"path": "first.md", "content": "# first\n"}),
            ("edit", {"path": "n000.md", "old_text": "and more", "new_text": "and more, edited"}),
            ("rename", {"path": "T.md", "new_path": "U.md"}),
            ("edit", {"path": "U.md", "old_text": "# T", "new_text": "# U"}),
            ("write", {"path": "last.md", "content": "# last\n"}),
        ]:
            r = await agent.call_tool(tool, arguments)
            assert not r.is_error, r.content[0].text
        journal = journal_for(vault)
        session = journal.changes()[0].session
        proc = spawn_cli("revert", "--session", session, str(root), "--yes", env=env)
        # kill it once part of the rename's restore is on disk
        await kill_once(proc, lambda: links_to_t(root, names) >= 10)
        partial = links_to_t(root, names)
        assert 10 <= partial < len(names), f"the batch revert was not cut off midway ({partial} restored)"
        assert not (root / "last.md").exists() and (root / "first.md").exists()  # midway through the batch

        restored = {p for p in names if "[[T]]" in (root / p).read_text()}
        while not restored <= seen:  # the journal handled each of these disk events before us
            await asyncio.sleep(0.02)
        again = cli("revert", "--session", session, str(root), "--yes", env=env)
        assert again.returncode == 0, again.stderr
        assert "finished an interrupted batch revert" in again.stdout
        assert tree(root) == before
        assert journal.open_intents() == []
        assert all(c.reverted_by is not None for c in journal.changes(kinds=("change",)))
        assert [(c.summary, c.paths[:3]) for c in journal.changes(kinds=("outside",))] == []
