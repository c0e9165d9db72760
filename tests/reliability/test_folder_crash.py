"""A folder rename with link rewrites, and the revert of one, killed with SIGKILL midway (issue 29):
the next start (or running the same revert again) finishes or rolls it back, with no link left
broken, no file lost or duplicated, and none of its own partial writes journaled as outside edits.

The folder `Folder` holds 120 notes that link to each other by path, and 160 notes outside it
link into it by path, so a rename of the folder rewrites 280 notes after the one move (the kill
lands once 10 of them are rewritten, so the rest leave a wide margin for "midway"). The
rename runs in a real `vaultwatch serve` process on a real socket, asked by the real `mcp`
client; the revert runs as a real `vaultwatch revert` process while a server watches the vault.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from killed_cli import cli, disk_events, spawn_cli
from paused_writer import kill_paused
from reliability_helpers import ROOT, serve_process, serving, uds_client

from vaultwatch.core.events import DocumentsChanged
from vaultwatch.core.review.journal import Journal, journal_for, journal_path
from vaultwatch.core.vault import Vault

INSIDE = [f"Folder/f{i:03}.md" for i in range(120)]
OUTSIDE = [f"o{i:03}.md" for i in range(160)]


def make_vault(root: Path) -> None:
    (root / "Folder").mkdir(parents=True)
    for i, rel in enumerate(INSIDE):
        (root / rel).write_text(f"# f{i:03}\nnext [[Folder/f{(i + 1) % len(INSIDE):03}]]\n" + "filler line\n" * 30)
    for i, rel in enumerate(OUTSIDE):
        (root / rel).write_text(f"# o{i:03}\nsee [[Folder/f{i % len(INSIDE):03}]] and more\n" + "filler line\n" * 30)


def contents(root: Path) -> dict[str, str]:
    """Every file of the vault (the journal's trash apart) by its path, as a digest of its bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".trash"]
        for name in filenames:
            full = os.path.join(dirpath, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def temp_files(root: Path) -> list[str]:
    """The write path's temporary files in the vault (a killed write's, until they are swept)."""
    return [n for _, _, names in os.walk(root) for n in names if n.startswith(".vaultwatch-")]


def linking_to(root: Path, folder: str, names: list[str]) -> int:
    """How many of `names` (paths before the rename) link into `folder` now, wherever they are."""
    n = 0
    for rel in names:
        for where in (rel, rel.replace("Folder/", "Moved/", 1)):
            try:
                if f"[[{folder}/f" in (root / where).read_text():
                    n += 1
                    break
            except OSError:
                pass
    return n


def kill_when(proc: subprocess.Popen, done) -> None:
    """SIGKILL `proc` once `done()` holds (or it ended by itself)."""
    try:
        while not done() and proc.poll() is None:
            time.sleep(0.002)  # a look reads 40 notes: without a pause it took a core from the command
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(30)


def rename_killed_midway(root: Path, sock: str) -> None:
    """A real `vaultwatch serve` on `sock`, asked by an agent to rename Folder to Moved, SIGKILLed once
    the rename has moved the folder and rewritten part of the links."""
    proc = serve_process(root, sock)
    # the agent's call waits in a thread of its own: the server dies under it
    caller = threading.Thread(target=lambda: _quietly(call_rename(sock)), daemon=True)
    caller.start()
    try:
        kill_when(proc, lambda: linking_to(root, "Moved", OUTSIDE[:40]) >= 10)
    finally:
        proc.communicate(timeout=30)
        caller.join(60)
    moved = linking_to(root, "Moved", INSIDE + OUTSIDE)
    assert (root / "Moved").is_dir() and not (root / "Folder").exists(), "the kill did not land after the move"
    assert 10 <= moved < len(INSIDE + OUTSIDE), f"the rename was not cut off midway ({moved} rewritten)"


def no_outside_rows(journal: Journal) -> None:
    rows = [(c.summary, c.paths[:3]) for c in journal.changes(kinds=("outside",))]
    assert rows == [], "the interrupted operation's own writes were taken for outside edits"


def test_a_folder_rename_killed_midway_is_rolled_back_at_the_next_start(tmp_path, sock_dir, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    make_vault(root)
    before = contents(root)
    rename_killed_midway(root, str(sock_dir / "a.sock"))

    second = serve_process(root, str(sock_dir / "b.sock"))  # the next start
    try:
        for _ in range(3000):
            if (root / "Folder").is_dir() and not (root / "Moved").exists():
                break
            assert second.poll() is None, second.communicate()
            time.sleep(0.02)
        journal = Journal(journal_path(os.path.realpath(root)))
        for _ in range(1500):  # the roll-back is journaled once its writes are done
            if not journal.open_intents() and not temp_files(root):
                break  # (the killed writes' temporary files are swept once they are 2 s old)
            time.sleep(0.02)
    finally:
        second.terminate()
        second.communicate(timeout=30)
    assert contents(root) == before  # every file back, byte for byte: none lost, none duplicated
    assert linking_to(root, "Folder", INSIDE + OUTSIDE) == len(INSIDE + OUTSIDE)
    assert journal.open_intents() == []
    revert_row, rename_row = journal.changes(limit=2)
    assert rename_row.operation == "rename" and "interrupted" in rename_row.summary
    assert revert_row.revert_of == rename_row.id
    no_outside_rows(journal)
    journal.close()


def test_an_agents_rename_killed_midway_is_rolled_back_by_the_process_watching(tmp_path, sock_dir, monkeypatch):
    """The person's vault stays open and watching (as the TUI's does) while the agent's server is
    killed midway through its folder rename: the watching process rolls it back within seconds,
    with no restart, and journals none of it as an outside edit."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("VAULTWATCH_CACHE", "0")
    root = tmp_path / "v"
    make_vault(root)
    before = contents(root)
    watching = Vault(root)
    watching.load()
    watching.start_watching()
    try:
        assert watching.wait_watching(30)
        rename_killed_midway(root, str(sock_dir / "a.sock"))
        journal = journal_for(watching)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not journal.open_intents() and not temp_files(root) and contents(root) == before:
                break
            time.sleep(0.05)
        assert contents(root) == before  # rolled back, byte for byte, by the process that watched
        assert journal.open_intents() == []
        revert_row, rename_row = journal.changes(limit=2)
        assert rename_row.operation == "rename" and "interrupted" in rename_row.summary
        assert revert_row.revert_of == rename_row.id
        no_outside_rows(journal)
    finally:
        watching.stop()


async def call_rename(sock: str) -> None:
    async with uds_client(sock, name="mover") as agent:
        await agent.call_tool("rename", {"path": "Folder", "new_path": "Moved"})


def _quietly(coro) -> None:
    try:
        asyncio.run(coro)
    except BaseException:  # the server was killed under the call: its error is expected
        pass


def test_a_killed_write_into_a_killed_renames_folder_is_journaled_where_the_rollback_put_it(
    tmp_path, sock_dir, monkeypatch
):
    """The agent renamed Folder to Moved (killed midway) and created Moved/agent.md (killed after it
    landed). Finishing rolls the rename back first, which takes the new note along to Folder: the
    write is journaled there, as the agent's, and its revert removes it; it is never taken for a
    write that did not land."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    make_vault(root)
    rename_killed_midway(root, str(sock_dir / "a.sock"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    kill_paused(root, env, "create_in_moved", "replaced", "# the agent's note\n")
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert (root / "Folder" / "agent.md").read_text() == "# the agent's note\n", finished.stdout
    journal = Journal(journal_path(os.path.realpath(root)))
    try:
        [write] = [c for c in journal.changes() if c.operation == "write"]
        assert (write.agent, write.path, write.reviewed_at) == ("sneaky", "Folder/agent.md", None), write
        assert "moved the note back to Folder/agent.md" in write.summary, write.summary
    finally:
        journal.close()
    reverted = cli("revert", str(write.id), str(root), "--yes", env=env)
    assert reverted.returncode == 0, (reverted.stdout, reverted.stderr)
    assert not (root / "Folder" / "agent.md").exists()


@pytest.mark.parametrize("finish", ["revert_again", "next_start"])
async def test_a_folder_renames_revert_killed_midway_is_finished(tmp_path, sock_dir, monkeypatch, finish):
    """An agent renames Folder to Moved (280 notes rewritten); the person's `vaultwatch revert` is
    killed once part of the restore is on disk, while the server watches the vault. Running the
    same revert again, or the next start, finishes it: every file back byte for byte."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    make_vault(root)
    before = contents(root)
    vault = Vault(root)
    vault.load()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="mover") as agent:
        seen = disk_events(vault)
        vault.start_watching()
        r = await agent.call_tool("rename", {"path": "Folder", "new_path": "Moved"})
        assert not r.is_error, r.content[0].text
        journal = journal_for(vault)
        rename_id = journal.changes()[0].id
        assert linking_to(root, "Folder", INSIDE + OUTSIDE) == 0
        proc = spawn_cli("revert", str(rename_id), str(root), env=env)
        await asyncio.to_thread(kill_when, proc, lambda: linking_to(root, "Folder", OUTSIDE[-40:]) >= 10)
        partial = linking_to(root, "Folder", INSIDE + OUTSIDE)
        assert 10 <= partial < len(INSIDE + OUTSIDE), f"the revert was not cut off midway ({partial} restored)"
        assert (root / "Moved").is_dir() and not (root / "Folder").exists()
        restored = {
            rel.replace("Folder/", "Moved/", 1)
            for rel in INSIDE + OUTSIDE
            if "[[Folder/" in (root / rel.replace("Folder/", "Moved/", 1)).read_text()
        }
        while not restored <= seen:  # the server saw every note the revert put back
            await asyncio.sleep(0.02)
        no_outside_rows(journal)
        if finish == "revert_again":
            again = cli("revert", str(rename_id), str(root), env=env)
            assert again.returncode == 0, again.stderr
            assert "finished an interrupted revert" in again.stdout
            await _settled(vault, journal, rename_id, seen)
            _all_back(root, before, journal, rename_id)
    if finish == "next_start":
        fresh = Vault(root)
        fresh.load()
        async with serving(fresh, sock_dir / "t.sock"):
            fresh.start_watching()
            journal = journal_for(fresh)
            await _settled(fresh, journal, rename_id)
            _all_back(root, before, journal, rename_id)


async def _settled(vault: Vault, journal: Journal, rename_id: int, seen: set[str] | None = None) -> None:
    """The revert is recorded and the server has seen the folder back where it was (`seen`: the
    disk events of another process's revert reached the server, the journal first)."""
    for _ in range(3000):
        back = all(vault.snapshot.get(rel) is not None for rel in INSIDE) and vault.snapshot.get("Moved") is None
        swept = not temp_files(Path(vault.root))  # the killed writes' temporary files are swept
        if journal.get(rename_id).reverted_by is not None and back and swept and (seen is None or set(INSIDE) <= seen):
            break
        await asyncio.sleep(0.02)


def _all_back(root: Path, before: dict[str, str], journal: Journal, rename_id: int) -> None:
    assert contents(root) == before  # every file back, byte for byte: none lost, none duplicated
    assert journal.get(rename_id).reverted_by is not None
    [row] = journal.changes(kinds=("revert",))
    assert row.revert_of == rename_id
    assert journal.open_intents() == []
    no_outside_rows(journal)


async def test_a_file_put_into_a_folder_just_moved_back_by_another_process_is_an_outside_edit(
    tmp_path, sock_dir, monkeypatch
):
    """The files a folder's move (here `vaultwatch revert` of a folder rename, in its own process)
    takes along are the move's; a file another program puts into that folder right after is not:
    it is journaled as an outside edit, the moved files are not."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    (root / "Folder").mkdir(parents=True)
    names = [f"Folder/f{i:02}.md" for i in range(20)]
    for rel in names:
        (root / rel).write_text(f"# {rel}\n")
    vault = Vault(root)
    vault.load()
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="mover") as agent:
        seen: set[str] = set()
        vault.bus.subscribe(
            lambda e: seen.update(e.added) if isinstance(e, DocumentsChanged) and e.source == "disk" else None
        )
        vault.start_watching()
        r = await agent.call_tool("rename", {"path": "Folder", "new_path": "Moved"})
        assert not r.is_error, r.content[0].text
        journal = journal_for(vault)
        rename_id = journal.changes()[0].id
        done = await asyncio.to_thread(
            cli, "revert", str(rename_id), str(root), env={**os.environ, "PYTHONPATH": str(ROOT)}
        )
        assert done.returncode == 0, done.stderr
        (root / "Folder" / "intruder.md").write_text("# not vaultwatch's\n")
        while not {*names, "Folder/intruder.md"} <= seen:
            await asyncio.sleep(0.02)
        outside = [p for c in journal.changes(kinds=("outside",)) for p in c.paths]
        assert outside == ["Folder/intruder.md"], outside
