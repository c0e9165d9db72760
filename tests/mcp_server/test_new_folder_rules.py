"""New folders on the way to a new note, end to end: an agent's rules (read_only, deny) and the
approval gate decide before any folder is made, a refused or declined change leaves none, and
the folders a change makes are journaled as that agent's change, not as an outside edit.

Real parts: `vaultwatch serve --stdio` on a vault on disk with a settings file, the Python `mcp`
client (with an elicitation callback for the gated case), and `vaultwatch changes --json`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH
from mcp_types import ElicitResult, Implementation

SETTINGS = """
[approve]
mode = "none"
ask_client = true
[approve.folders]
"Gated/**" = "writes"

[agents."ro"]
read_only = true

[agents."scribe"]
deny = ["Secret/**"]
"""

DEEP = 60  # more new folders than the walk's retry budget (40): what used to leave 41 behind


def deep(top: str, name: str = "x") -> str:
    return top + "/" + "/".join([name] * DEEP) + "/n.md"


def everything(root: Path) -> set[str]:
    """Every file and folder in the vault (folders too: a refused write once left only folders)."""
    return {str(p.relative_to(root)) + ("/" if p.is_dir() else "") for p in root.rglob("*")}


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path / "vault"
    (root / "Secret").mkdir(parents=True)
    (root / "Gated").mkdir()
    (root / "a.md").write_text("# A\n")
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text(SETTINGS)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(sock_dir),
        "VAULTWATCH_SEMANTIC": "0",
    }
    yield root, env


def stdio(root: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env, cwd=str(ROOT)
    )


def journal(root: Path, env: dict[str, str]) -> list[dict]:
    out = subprocess.run(
        [*VAULTWATCH, "changes", str(root), "--json"], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


async def test_a_refused_write_or_rename_leaves_no_folder(place) -> None:
    root, env = place
    before = everything(root)
    refused = {
        "ro": [
            ("write", {"path": deep("RO"), "content": "x\n"}),
            ("write", {"path": "RO/one/n.md", "content": "x\n"}),
            ("rename", {"path": "a.md", "new_path": deep("Moved")}),
        ],
        "scribe": [
            ("write", {"path": deep("Secret"), "content": "x\n"}),
            ("rename", {"path": "a.md", "new_path": deep("Secret", "m")}),
        ],
    }
    for agent, calls in refused.items():
        async with Client(stdio(root, env), client_info=Implementation(name=agent, version="1")) as client:
            for tool, arguments in calls:
                for _ in range(2):  # a second try used to go deeper still
                    got = await client.call_tool(tool, arguments)
                    assert got.is_error, (agent, tool, arguments)
                    assert f'[agents."{agent}"]' in got.content[0].text, got.content[0].text
    assert everything(root) == before
    assert journal(root, env) == []  # nothing changed, so nothing to journal (no "outside" row either)


async def test_a_deep_new_note_is_written_and_its_folders_journaled_as_the_agents(place) -> None:
    root, env = place
    async with Client(stdio(root, env), client_info=Implementation(name="scribe", version="1")) as client:
        got = await client.call_tool("write", {"path": deep("Open"), "content": "x\n"})
        assert not got.is_error, got.content[0].text
        moved = await client.call_tool("rename", {"path": "a.md", "new_path": deep("Far", "f")})
        assert not moved.is_error, moved.content[0].text
        await asyncio.sleep(1.5)  # the watcher's echo of the new folders, and its recheck, come meanwhile
    assert (root / deep("Open")).read_text() == "x\n" and (root / deep("Far", "f")).exists()
    rows = journal(root, env)
    assert [r["kind"] for r in rows] == ["change", "change"], rows
    assert all(r["actor"] == "agent:scribe" and not r["reviewed"] for r in rows)
    for top, name, row in (("Open", "x", rows[-1]), ("Far", "f", rows[0])):
        made = {"/".join([top, *[name] * i]) for i in range(DEEP + 1)}
        assert made <= set(row["paths"]), row["paths"]


async def test_a_gated_create_makes_no_folder_while_the_person_is_asked(place) -> None:
    root, env = place
    seen: dict[str, object] = {}

    async def person(context, params) -> ElicitResult:
        await asyncio.sleep(0.5)  # the question is on the person's screen
        seen["folder while asked"] = (root / "Gated" / "new").exists()
        seen["every entry while asked"] = everything(root)
        return ElicitResult(action="decline")

    before = everything(root)
    async with Client(
        stdio(root, env),
        mode="legacy",
        client_info=Implementation(name="scribe", version="1"),
        elicitation_callback=person,
    ) as client:
        got = await client.call_tool("write", {"path": "Gated/new/sub/n.md", "content": "x\n"})
        assert got.is_error and "declined" in got.content[0].text, got.content[0].text
    assert seen == {"folder while asked": False, "every entry while asked": before}
    assert everything(root) == before
    assert journal(root, env) == []


def test_concurrent_writes_into_the_same_new_folders_all_land(place) -> None:
    """Several agents' writes make the same deep new folders at once (a folder another one made
    meanwhile is opened, not a retry): each write lands."""
    root, env = place
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.vault import Vault

    vault = Vault(root)
    vault.load()
    writer = Writer(vault)
    errors: list[BaseException] = []
    shared = "Shared/" + "/".join(["s"] * DEEP)

    def one(i: int) -> None:
        try:
            writer.write(f"{shared}/n{i}.md", f"{i}\n", actor=f"agent:a{i}")
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(p.name for p in (root / shared).iterdir()) == sorted(f"n{i}.md" for i in range(8))
