"""A `vaultwatch approve` or `vaultwatch redo` killed (SIGKILL) midway through a rename that rewrites
[[T]] in 400 notes is finished or rolled back: by running the same command again, or at the next
start of a server, and none of its writes is ever taken for an outside edit.

Real parts: the agent is the Python `mcp` client on the real server's socket, the person's
commands are real `vaultwatch` processes (killed with SIGKILL), the next start is the real
server's start-up recovery."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import uuid
from pathlib import Path

import pytest
from killed_cli import LINKED, cli, links_to_t, spawn_cli, tree, write_linked
from mcp_testing import ROOT, serving, uds_client
from waiting import await_until

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.batch import revert_session
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault

NAMES = LINKED


@pytest.fixture
def linked(tmp_path: Path, monkeypatch) -> tuple[Path, dict[str, str]]:
    """A vault where T.md is linked from 400 notes, with its own state and settings folders."""
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text('[approve]\nmode = "writes"\n')
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    # a new name each time: pytest reuses a passed test's tmp_path, and the process keeps one
    # pending-changes store open per vault path
    root = tmp_path / f"v{uuid.uuid4().hex[:8]}"
    root.mkdir()
    write_linked(root)
    return root, {**os.environ, "PYTHONPATH": str(ROOT)}


def rewritten(root: Path) -> int:
    """How many of the 400 notes link to U now (no longer to T)."""
    return len(NAMES) - links_to_t(root, NAMES)


async def kill_midway(args: list[str], root: Path, env: dict[str, str]) -> int:
    """Run `vaultwatch ARGS` and SIGKILL it once part of the rename's link rewrites is on disk."""
    proc = spawn_cli(*args, env=env)
    try:
        # the rename moves T.md first and rewrites the links after: until U.md is there, one look at
        # it instead of a read of the 400 notes (which, every 2 ms, took a core from the command)
        while not (root / "U.md").exists() and proc.poll() is None:
            await asyncio.sleep(0.002)
        while True:
            n = rewritten(root)
            if n >= 10 or proc.poll() is not None:
                break
            await asyncio.sleep(0.002)
        assert proc.poll() is None, f"it ended before the kill: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    n = rewritten(root)
    assert 10 <= n < len(NAMES), f"it was not cut off midway ({n} notes rewritten)"
    return n


def relinked_whole(root: Path) -> bool:
    return (
        (root / "U.md").read_text() == "# T\n"
        and not (root / "T.md").exists()
        and all("[[U]]" in (root / n).read_text() and "[[T]]" not in (root / n).read_text() for n in NAMES)
    )


@pytest.mark.parametrize("how", ["approve again", "next start"])
async def test_a_killed_approval_is_finished_or_rolled_back(linked, sock_dir, how) -> None:
    root, env = linked
    vault = Vault(root)
    vault.load()
    approval.configure(vault)  # mode "writes" from settings.toml; nobody attends: the rename waits
    before = tree(root)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="renamer") as agent:
        said = await agent.call_tool("rename", {"path": "T.md", "new_path": "U.md"})
        assert said.is_error and "awaits the person" in said.content[0].text, said.content[0].text
        pid = int(re.search(r"pending change (\d+)", said.content[0].text).group(1))
    store = pending.store_for(vault.root_real)
    session = store.get(pid).session
    assert tree(root) == before

    await kill_midway(["approve", str(pid), str(root)], root, env)  # no server runs: it applies in-process
    assert store.get(pid).state == pending.APPLYING
    journal = journal_for(vault)

    if how == "approve again":
        again = cli("approve", str(pid), str(root), env=env)
        assert again.returncode == 0, again.stderr
        assert relinked_whole(root)
        done = store.get(pid)
        assert done.state == pending.APPROVED and done.change_ids, done
        [row] = [journal.get(i) for i in done.change_ids]
        assert (row.operation, row.agent.split("/")[0], row.session) == ("rename", "renamer", session)
        assert len(row.files) == len(NAMES)  # every link rewrite, in the agent's one change
    else:  # the next start of a server (it watches the vault while it rolls the approval back)
        vault.start_watching()
        async with serving(vault, sock_dir / "s.sock"):
            await await_until(lambda: store.get(pid).state == pending.PENDING, what="the approval rolled back")
            assert tree(root) == before
        # it waits for the person again, and applies whole when approved
        again = cli("approve", str(pid), str(root), env=env)
        assert again.returncode == 0, again.stderr
        assert relinked_whole(root) and store.get(pid).state == pending.APPROVED
    assert journal.open_intents() == []
    assert [c.summary for c in journal.changes(kinds=("outside",))] == []
    vault.stop()


@pytest.mark.parametrize("how", ["redo again", "next start"])
async def test_a_killed_redo_is_finished(linked, sock_dir, how) -> None:
    root, env = linked
    vault = Vault(root)
    vault.load()
    before = tree(root)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="renamer") as agent:
        for tool, arguments in [
            ("write", {"path": "first.md", "content": "# first\n"}),
            ("rename", {"path": "T.md", "new_path": "U.md"}),
            ("write", {"path": "last.md", "content": "# last\n"}),
        ]:
            r = await agent.call_tool(tool, arguments)
            assert not r.is_error, r.content[0].text
    after = tree(root)
    journal = journal_for(vault)
    session = journal.changes()[0].session
    batch = revert_session(Writer(vault), journal, session, actor="human:me")
    assert tree(root) == before
    revert_id = batch.reverted[0].revert.id

    await kill_midway(["redo", str(revert_id), str(root)], root, env)
    assert journal.open_intents(interrupted=True)  # the redo's intent, left open by the kill

    if how == "redo again":
        again = cli("redo", str(revert_id), str(root), env=env)
        assert again.returncode == 0, again.stderr
        assert "finished an interrupted redo" in again.stdout, again.stdout
    else:
        vault.start_watching()
        async with serving(vault, sock_dir / "s.sock"):
            await await_until(lambda: journal.open_intents() == [], what="the redo finished at start")
    assert tree(root) == after
    assert journal.open_intents() == []
    assert [c.summary for c in journal.changes(kinds=("outside",))] == []
    vault.stop()
