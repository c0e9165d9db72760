"""An outside change made in a server's last moments is journaled by that server: it drains what the
kernel and its watcher already hold before it closes the journal, on every orderly exit (here a
stdio client closing its input, and the person quitting the TUI). An agent's own write made just
before is still the agent's row, never an outside one; the next start journals nothing more.

Real parts: `vaultwatch serve --stdio` driven by the real `mcp` client (or raw JSON-RPC lines), the
TUI in a pseudo-terminal, a folder moved with os.rename by the test (as a
file manager moves it) right before the exit, and the journal read with `vaultwatch changes --json`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from killed_cli import cli
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH, uds_client
from mcp_types import Implementation
from test_handover import Tui
from test_lifecycle import short_dir

MOVED = [f"n{i}.md" for i in range(10)]


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A vault with a folder of ten notes, and the environment of its `vaultwatch` processes."""
    root = tmp_path / "vault"
    (root / "Old").mkdir(parents=True)
    (root / "Notes").mkdir()
    for name in MOVED:
        (root / "Old" / name).write_text(f"# {name}\nsome text\n")
    (root / "Notes" / "keep.md").write_text("# keep\n")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "VAULTWATCH_SEMANTIC": "0",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    env.pop("VAULTWATCH_JOURNAL", None)
    return root, env


def move_folder(root: Path) -> None:
    """What a file manager does: the folder renamed in one call, its notes with it."""
    os.rename(root / "Old", root / "New")


def journaled(root: Path, env: dict[str, str]) -> list[dict]:
    done = cli("changes", str(root), "--json", env=env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def outside_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["kind"] == "outside"]


def assert_the_move_is_one_outside_row(rows: list[dict]) -> None:
    [outside] = outside_rows(rows)
    paths = set(outside["paths"])
    assert {f"Old/{n}" for n in MOVED} | {f"New/{n}" for n in MOVED} <= paths, outside
    assert not any(p.startswith("Notes/") for p in paths), outside  # no agent's echo, no untouched note


async def test_a_folder_moved_just_before_a_stdio_client_closes_is_journaled_and_the_agents_write_is_not(
    place,
) -> None:
    root, env = place
    params = StdioServerParameters(
        command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env, cwd=str(ROOT)
    )
    async with Client(params, client_info=Implementation(name="agent", version="1")) as client:
        listed = await client.call_tool("list_documents", {"limit": 1, "wait_for_pending_writes": True})
        assert not listed.is_error, listed.content
        wrote = await client.call_tool("write", {"path": "Notes/agent.md", "content": "# by the agent\n"})
        assert not wrote.is_error, wrote.content
        move_folder(root)
    rows = journaled(root, env)
    assert_the_move_is_one_outside_row(rows)
    agents = [r for r in rows if r["kind"] != "outside"]
    assert [(r["paths"], r["actor"]) for r in agents] == [(["Notes/agent.md"], "agent:agent")], agents


async def test_a_folder_moved_just_before_the_person_quits_the_tui_is_journaled(place) -> None:
    root, env = place
    folder = short_dir("vwx")
    socket_path = folder / "t.sock"
    tui = Tui([str(root), "--socket", str(socket_path)], {**env, "TERM": "xterm-256color"})
    try:
        while not socket_path.exists():
            assert tui.proc.poll() is None, "the TUI ended before it served"
            tui.drain()
            await asyncio.sleep(0.05)
        async with uds_client(socket_path) as client:  # once it answers, the vault is watched
            listed = await client.call_tool("list_documents", {"limit": 1, "wait_for_pending_writes": True})
            assert not listed.is_error, listed.content
        move_folder(root)
        assert tui.quit() == 0
    finally:
        if tui.proc.poll() is None:
            tui.proc.kill()
        shutil.rmtree(folder, ignore_errors=True)
    assert_the_move_is_one_outside_row(journaled(root, env))


def test_a_warm_start_after_such_an_exit_journals_nothing_more(place) -> None:
    """The next start indexes the moved notes from its own look at the disk and journals nothing:
    it did not watch the move happen (and the server that did has journaled it)."""
    root, env = place
    serve = [*VAULTWATCH, "serve", "--stdio", str(root)]
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}},
    }
    listing = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "list_documents", "arguments": {"limit": 100, "wait_for_pending_writes": True}},
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}

    def session(then=None) -> dict:
        proc = subprocess.Popen(
            serve, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        for message in (init, initialized, listing):
            proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        answer = None
        while answer is None:
            line = proc.stdout.readline()
            assert line, "the server ended without answering"
            got = json.loads(line)
            if got.get("id") == 2:
                answer = got
        if then is not None:
            then()
        proc.stdin.close()
        assert proc.wait(60) == 0
        proc.stdout.close()
        return answer

    session(lambda: move_folder(root))
    first = journaled(root, env)
    assert_the_move_is_one_outside_row(first)
    again = session()
    paths = {d["path"] for d in again["result"]["structuredContent"]["result"]}
    assert {f"New/{n}" for n in MOVED} <= paths and not any(p.startswith("Old/") for p in paths), paths
    assert journaled(root, env) == first
