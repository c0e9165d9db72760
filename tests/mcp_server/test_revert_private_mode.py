"""A private note an agent deletes for good comes back private when the person reverts the delete:
the journal keeps the permission bits of a file it removes (never more than those: no setuid,
setgid or sticky bit), and `vaultwatch revert` re-creates the note with them, alone, as part of
a session's batch, and when a revert killed midway is finished later. A journal from before it
kept them still opens, and its rows revert as before (the usual mode).

Real parts: the real server on a real socket, the real `mcp` client, real `vaultwatch` processes."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from killed_cli import cli
from mcp_testing import ROOT, serving, uds_client

from tests.waiting import within
from vaultwatch.core.review.journal import journal_for, journal_path
from vaultwatch.core.vault import Vault

BANK = "Notes/bank.md"
BYTES = b"# Bank\nthe PIN is 4711\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("VAULTWATCH_SEMANTIC", "0")
    root = tmp_path / "v"
    (root / "Notes").mkdir(parents=True)
    (root / BANK).write_bytes(BYTES)
    (root / "Notes" / "plan.md").write_text("# Plan\n- one\n")
    return root


def cli_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def usual_mode() -> int:
    """The mode a new file gets here (0666 less the umask, which the `vaultwatch` processes inherit)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def closed(vault: Vault) -> None:
    """The server's vault done with: its journal closed, as when its process ends."""
    vault.stop()
    journal = journal_for(vault)
    if journal is not None:
        journal.close()


async def deleted_for_good(root: Path, sock_dir: Path, rel: str) -> int:
    """An agent deletes `rel` for good through the real server; the journal's id of that change."""
    vault = Vault(root)
    vault.load()
    try:
        async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="cleaner") as agent:
            r = await agent.call_tool("delete", {"path": rel, "permanent": True, "confirm_path": rel})
            assert not r.is_error, r.content[0].text
            return journal_for(vault).changes()[0].id
    finally:
        closed(vault)


@pytest.mark.parametrize(("mode", "back"), [(0o600, 0o600), (0o640, 0o640), (0o4700, 0o700)], ids=oct)
async def test_a_note_an_agent_deleted_for_good_comes_back_with_its_mode(root, sock_dir, mode, back):
    """0600 and 0640 come back as they were; a setuid bit is never put back, only the permission bits."""
    (root / BANK).chmod(mode)
    cid = await deleted_for_good(root, sock_dir, BANK)
    assert not (root / BANK).exists()
    done = cli("revert", str(cid), str(root), env=cli_env())
    assert done.returncode == 0, done.stderr
    assert (root / BANK).read_bytes() == BYTES
    assert mode_of(root / BANK) == back, oct(mode_of(root / BANK))


async def test_a_sessions_batch_revert_brings_a_private_note_back_private(root, sock_dir):
    (root / BANK).chmod(0o600)
    vault = Vault(root)
    vault.load()
    try:
        async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="cleaner") as agent:
            for tool, arguments in [
                ("edit", {"path": "Notes/plan.md", "old_text": "- one", "new_text": "- uno"}),
                ("delete", {"path": BANK, "permanent": True, "confirm_path": BANK}),
            ]:
                r = await agent.call_tool(tool, arguments)
                assert not r.is_error, r.content[0].text
            session = journal_for(vault).changes()[0].session
            assert session
    finally:
        closed(vault)
    done = cli("revert", "--session", session, str(root), "--yes", env=cli_env())
    assert done.returncode == 0, done.stderr
    assert "reverted 2 changes" in done.stdout, done.stdout
    assert (root / BANK).read_bytes() == BYTES
    assert mode_of(root / BANK) == 0o600, oct(mode_of(root / BANK))
    assert (root / "Notes" / "plan.md").read_text() == "# Plan\n- one\n"


# `vaultwatch revert` held at one point of its run (it says so in a file), to be killed there
HELD_REVERT = """
import os, sys, time
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import Journal
owner = {"write": Writer, "record_revert": Journal}[sys.argv[2]]
original = getattr(owner, sys.argv[2])
def held(self, *args, **kwargs):
    open(sys.argv[1], "w").close()
    time.sleep(600)
setattr(owner, sys.argv[2], held)
from vaultwatch.tui.commands.cli import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.parametrize("killed", ["write", "record_revert"], ids=["before_the_note_is_back", "before_its_row"])
async def test_a_revert_killed_midway_and_finished_later_brings_the_note_back_private(root, sock_dir, tmp_path, killed):
    """kill -9 before the revert re-created the note, or after (before its row): running the same
    revert again finishes it, and the note is back 0600 with its bytes either way."""
    (root / BANK).chmod(0o600)
    cid = await deleted_for_good(root, sock_dir, BANK)
    held = tmp_path / "held"
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD_REVERT, str(held), killed, "revert", str(cid), str(root)],
        cwd=ROOT,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        within(lambda: held.exists() or proc.poll() is not None, 60)
        assert proc.poll() is None, proc.communicate()[1]
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    assert (root / BANK).exists() == (killed == "record_revert")
    again = cli("revert", str(cid), str(root), env=cli_env())
    assert again.returncode == 0, again.stderr
    assert "finished an interrupted revert" in again.stdout, again.stdout
    assert (root / BANK).read_bytes() == BYTES
    assert mode_of(root / BANK) == 0o600, oct(mode_of(root / BANK))


async def test_a_journal_from_before_modes_were_kept_opens_and_reverts_as_before(root, sock_dir):
    """A permanent delete journaled by a vaultwatch that kept no modes reverts with the usual mode
    (the journal cannot know better); the journal gains the column on open, and a delete journaled
    since comes back private."""
    (root / BANK).chmod(0o600)
    old = await deleted_for_good(root, sock_dir, BANK)
    path = journal_path(os.path.realpath(root))
    with sqlite3.connect(path) as con:  # as an older vaultwatch wrote it
        if "before_modes" in {r[1] for r in con.execute("PRAGMA table_info(changes)")}:
            con.execute("ALTER TABLE changes DROP COLUMN before_modes")
    con.close()
    done = cli("revert", str(old), str(root), env=cli_env())
    assert done.returncode == 0, done.stderr
    assert (root / BANK).read_bytes() == BYTES
    assert mode_of(root / BANK) == usual_mode(), oct(mode_of(root / BANK))
    (root / BANK).chmod(0o600)
    new = await deleted_for_good(root, sock_dir, BANK)
    done = cli("revert", str(new), str(root), env=cli_env())
    assert done.returncode == 0, done.stderr
    assert (root / BANK).read_bytes() == BYTES
    assert mode_of(root / BANK) == 0o600, oct(mode_of(root / BANK))
