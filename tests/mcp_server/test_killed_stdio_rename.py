"""A folder rename killed (SIGKILL) midway in a real `serve --stdio` process: the person sees the
half-done rename in `vaultwatch changes` (what will happen, how to finish it), and the next start
rolls it back whatever its client asks, even a client the stdio front answers on its own (a listing
only, so the MCP SDK is never imported), within a bounded wait; `vaultwatch changes --finish` does
the same without a server. Two starts at once never both roll back the same rename.

Real parts: `vaultwatch serve --stdio` processes on raw JSON-RPC lines (the rename goes through the
SDK, as an agent's would), SIGKILL, and `vaultwatch changes` as a process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from killed_cli import cli, tree
from mcp_testing import ROOT
from test_early_calls import call
from test_front_calls import Lines, spawn
from test_stdio_front import INIT, INITIALIZED

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import Journal, journal_for, journal_path
from vaultwatch.core.review.resume import resume_interrupted
from vaultwatch.core.vault import Vault

INSIDE = [f"Proj/n{i:03}.md" for i in range(120)]
OUTSIDE = [f"Links/l{i:03}.md" for i in range(200)]
RESUME_WAIT_S = 60.0  # bound on the roll-back after a restart (it takes about a second here)


def make_vault(root: Path) -> None:
    (root / "Proj").mkdir(parents=True)
    (root / "Links").mkdir()
    for i, rel in enumerate(INSIDE):
        (root / rel).write_text(f"# n{i:03}\nnext [[Proj/n{(i + 1) % len(INSIDE):03}]]\n" + "filler\n" * 20)
    for i, rel in enumerate(OUTSIDE):
        (root / rel).write_text(f"# l{i:03}\nsee [[Proj/n{i % len(INSIDE):03}]] and more\n" + "filler\n" * 20)


def rewritten(root: Path) -> int:
    """How many of the outside notes link into the folder's new place now."""
    n = 0
    for rel in OUTSIDE:
        try:
            n += "[[Moved/Proj2/" in (root / rel).read_text()
        except OSError:
            pass
    return n


def killed_rename(root: Path, env: dict) -> dict[str, bytes]:
    """Serve `root` on stdio, have the agent rename Proj to Moved/Proj2 and SIGKILL the server once
    part of the link rewrites is on disk. Returns the vault's files from before the rename."""
    make_vault(root)
    before = tree(root)
    proc = spawn(root, env)
    try:
        lines = Lines(proc)
        lines.send(INIT, INITIALIZED, call(2, {"limit": 1, "wait_for_pending_writes": True}))
        lines.until(2)
        lines.send(call(3, {"path": "Proj", "new_path": "Moved/Proj2"}, name="rename"))
        deadline = time.monotonic() + 120
        while rewritten(root) < 10 and proc.poll() is None:
            assert time.monotonic() < deadline, "the rename never got under way"
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
        proc.stdin.close()
        proc.stdout.close()
    n = rewritten(root)
    assert (root / "Moved" / "Proj2").is_dir() and not (root / "Proj").exists(), "the kill did not land after the move"
    assert 10 <= n < len(OUTSIDE), f"the rename was not cut off midway ({n} notes rewritten)"
    return before


def settled_tree(root: Path) -> dict[str, bytes] | None:
    """The vault's files, or None while a move under way takes a folder from under the walk."""
    try:
        return tree(root)
    except FileNotFoundError:
        return None


def changes_json(root: Path, env: dict, *extra: str) -> list[dict]:
    done = cli("changes", str(root), "--json", *extra, env=env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture
def place(tmp_path: Path, env: dict) -> tuple[Path, dict]:
    return tmp_path / "v", {**env, "PYTHONPATH": str(ROOT)}


def test_changes_shows_a_killed_rename_with_what_happens_and_finish_rolls_it_back(place) -> None:
    root, env = place
    before = killed_rename(root, env)

    shown = cli("changes", str(root), env=env)
    assert shown.returncode == 0, shown.stderr
    assert "INTERRUPTED" in shown.stdout and "rename Proj -> Moved/Proj2" in shown.stdout, shown.stdout
    assert "Moved/Proj2 is moved back to Proj" in shown.stdout, shown.stdout
    assert f"vaultwatch changes {root} --finish" in shown.stdout, shown.stdout
    assert "1 interrupted operation not finished" in shown.stderr, shown.stderr
    for extra in ((), ("--unreviewed",)):
        [row] = changes_json(root, env, *extra)
        assert (row["kind"], row["operation"], row["running"]) == ("interrupted", "rename", False), row
        assert row["id"] is None and "rolled back" in row["will"] and "--finish" in row["finish"], row
        assert row["paths"] == ["Proj", "Moved/Proj2"], row

    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert "rolled back an interrupted rename" in finished.stdout, finished.stdout
    assert tree(root) == before  # every note back, byte for byte
    assert not list(root.rglob(".vaultwatch-*.tmp"))  # and the killed writes' temporary files gone
    rows = changes_json(root, env)
    assert [(r["kind"], r["operation"]) for r in rows] == [("revert", "revert"), ("change", "rename")], rows
    again = cli("changes", str(root), "--finish", env=env)
    assert again.returncode == 0 and "nothing interrupted to finish" in again.stdout, (again.stdout, again.stderr)


def test_a_restart_that_only_lists_rolls_a_killed_rename_back(place) -> None:
    """The restarted server's client asks one listing, which the front answers without the SDK,
    and stays connected: the rename is rolled back all the same, while it is up."""
    root, env = place
    before = killed_rename(root, env)
    proc = spawn(root, env)
    lines = Lines(proc)
    lines.send(INIT, INITIALIZED, call(2, {"limit": 1, "wait_for_pending_writes": True}))
    assert lines.until(2)["result"]["structuredContent"]["returned"] == 1
    deadline = time.monotonic() + RESUME_WAIT_S
    while settled_tree(root) != before:
        assert proc.poll() is None, "the server ended"
        assert time.monotonic() < deadline, f"not rolled back within {RESUME_WAIT_S:g} s of the restart"
        time.sleep(0.1)
    journal = Journal(journal_path(os.path.realpath(root)))
    try:
        while journal.open_intents():  # the roll-back's row comes after its last write
            assert time.monotonic() < deadline, "the roll-back was not recorded"
            time.sleep(0.05)
    finally:
        journal.close()
    lines.close()
    rows = changes_json(root, env)
    assert [(r["kind"], r["operation"]) for r in rows] == [("revert", "revert"), ("change", "rename")], [
        (r["kind"], r["summary"], r["paths"][:5], r["at"]) for r in rows
    ]
    assert "interrupted rename Proj -> Moved/Proj2" in rows[1]["summary"]


RENAMER = """
import sys
from vaultwatch.core.vault import Vault
from vaultwatch.core.edit.writes import Writer
vault = Vault(sys.argv[1], cache=False)
vault.load()
print("ready", flush=True)
Writer(vault).rename("Proj", "Moved/Proj2", actor="agent:mover")
"""


def test_two_starts_at_once_roll_a_killed_rename_back_once(tmp_path: Path, monkeypatch) -> None:
    """Two processes' starts (here two vaults, each with its journal connection) finish the same
    journal's interrupted rename at the same moment: one does, the other leaves it to it."""
    root = tmp_path / "v"
    make_vault(root)
    before = tree(root)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    proc = subprocess.Popen(
        [sys.executable, "-c", RENAMER, str(root)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert proc.stdout.readline().strip() == b"ready"
        while rewritten(root) < 10 and proc.poll() is None:
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
        proc.stdout.close()
    assert 10 <= rewritten(root) < len(OUTSIDE)

    vaults = [Vault(root, cache=False) for _ in range(2)]
    journals = []
    for vault in vaults:
        vault.load()
        journals.append(journal_for(vault))
    assert journals[0] is not journals[1]
    gate = threading.Barrier(2)
    outcomes: list = [None, None]

    def start(i: int) -> None:
        gate.wait()
        outcomes[i] = resume_interrupted(Writer(vaults[i]), journals[i])

    threads = [threading.Thread(target=start, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    finished = [o for o in outcomes if o]
    assert len(finished) == 1 and "rolled back" in finished[0][0][1], outcomes
    assert tree(root) == before
    rows = journals[0].changes()
    assert [(c.kind, c.operation) for c in rows] == [("revert", "revert"), ("change", "rename")], [
        (c.kind, c.summary) for c in rows
    ]
    assert journals[0].open_intents() == []
    for vault in vaults:
        vault.stop()
