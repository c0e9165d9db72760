"""`vaultwatch changes` and `vaultwatch revert` as real processes over a real journal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import Caller, calling, journal_for
from vaultwatch.core.vault import Vault

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def agent_changed(make_vault, tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    root = make_vault({"Plan.md": "# Plan\n", "Home.md": "[[Plan]]\n"})
    vault = Vault(root)
    vault.load()
    writer = Writer(vault)
    with calling(Caller("claude/1", "sess-1", "write")):
        writer.write("Plan.md", "# Plan v2\n", overwrite=True, actor="agent:claude")
    with calling(Caller("cursor/2", "sess-2", "rename")):
        writer.rename("Plan.md", "Old/Plan.md", actor="agent:cursor")
    journal = journal_for(vault)
    ids = [c.id for c in journal.changes()]  # newest first, as `changes` lists them (its own test checks that)
    journal.close()
    env = {**os.environ, "XDG_STATE_HOME": str(state), "PYTHONPATH": str(ROOT)}
    return root, env, ids


def test_changes_lists_newest_first_filters_by_agent_and_prints_json(agent_changed):
    root, env, ids = agent_changed
    out = run("changes", str(root), "--json", env=env)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["tool"] for r in rows] == ["rename", "write"] and [r["id"] for r in rows] == ids
    assert rows[0]["src"] == "Plan.md" and rows[0]["path"] == "Old/Plan.md" and rows[1]["session"] == "sess-1"
    only = run("changes", str(root), "--agent", "claude", env=env)
    assert only.returncode == 0 and "claude/1" in only.stdout and "cursor" not in only.stdout
    assert run("changes", str(root), "--since", "1d", "--json", env=env).stdout.count("\n") == 2
    bad = run("changes", str(root), "--since", "someday", env=env)
    assert bad.returncode == 2 and "--since 'someday'" in bad.stderr


def test_revert_by_id_restores_the_files_and_is_itself_listed(agent_changed):
    root, env, ids = agent_changed
    out = run("revert", str(ids[0]), str(root), env=env)
    assert out.returncode == 0, out.stderr
    assert (root / "Plan.md").read_bytes() == b"# Plan v2\n" and (root / "Home.md").read_bytes() == b"[[Plan]]\n"
    again = run("revert", str(ids[0]), str(root), env=env)
    assert again.returncode == 1 and "already reverted" in again.stderr
    listed = [json.loads(line) for line in run("changes", str(root), "--json", env=env).stdout.splitlines()]
    assert listed[0]["kind"] == "revert" and listed[0]["revert_of"] == ids[0]


def test_revert_refused_after_an_outside_edit_prints_the_reason_and_the_versions(agent_changed):
    root, env, ids = agent_changed
    run("revert", str(ids[0]), str(root), env=env)  # undo the rename first
    (root / "Plan.md").write_bytes(b"# edited in Obsidian\n")
    out = run("revert", str(ids[1]), str(root), "--show-versions", env=env)
    assert out.returncode == 1 and "changed after it" in out.stderr
    assert "--- before ---\n# Plan\n" in out.stderr and "# edited in Obsidian" in out.stderr
    assert (root / "Plan.md").read_bytes() == b"# edited in Obsidian\n"


def test_revert_all_of_an_agent_needs_yes(agent_changed):
    root, env, _ = agent_changed
    out = run("revert", "--agent", "cursor", str(root), env=env)
    assert out.returncode == 2 and "needs --yes" in out.stderr
    out = run("revert", "--agent", "cursor", str(root), "--yes", env=env)
    assert out.returncode == 0, out.stderr
    assert (root / "Plan.md").read_bytes() == b"# Plan v2\n"


def test_a_redo_is_listed_with_tool_redo_not_revert(agent_changed):
    root, env, ids = agent_changed
    assert run("revert", str(ids[1]), str(root), env=env).returncode == 0  # the write
    revert = json.loads(run("changes", str(root), "--json", env=env).stdout.splitlines()[0])
    assert revert["tool"] == "revert"
    done = run("redo", str(revert["id"]), str(root), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "redid 1 change", done.stdout  # no batch id for one change
    redo = json.loads(run("changes", str(root), "--json", env=env).stdout.splitlines()[0])
    assert redo["revert_of"] == revert["id"] and redo["tool"] == "redo", redo
    assert "  redo  " in run("changes", str(root), env=env).stdout.splitlines()[0]
    # the edit is back: its row says so, and the revert says it was undone (finding: both read as reverted)
    lines = {int(line.split()[0]): line for line in run("changes", str(root), env=env).stdout.splitlines()}
    write, undone = ids[1], revert["id"]
    assert f"(reverted by {undone}, redone by {redo['id']})" in lines[write], lines[write]
    assert f"(reverts {write}; undone by {redo['id']} (redo))" in lines[undone], lines[undone]
    assert f"(redoes {write} (reverts {undone}))" in lines[redo["id"]], lines[redo["id"]]
