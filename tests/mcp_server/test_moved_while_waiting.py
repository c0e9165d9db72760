"""A change decided on its paths lands there or nowhere. While an agent's gated change waits for the
person's answer (MCP elicitation), the person's file manager moves a folder the change is in: into
another folder, out of the vault, or into the vault's trash. The rules and the gate decided on the
old path, so the change is refused and nothing lands where the folder went; the journal has no row
that names a path where nothing is.

Real parts: the Python `mcp` client with an elicitation callback runs the bridge command
`mcp-config` writes; the bridge starts the headless server, which reads `[approve]` from
settings.toml; the folder is moved with os.rename, as a file manager does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import test_pending
from mcp import Client
from mcp_types import ElicitResult
from test_pending import NOTE, bridged, tree, vaultwatch

place = test_pending.place  # Notes/plan.md and Notes/other.md (linking to it), `[approve] mode = "writes"`


@pytest.fixture
def asking(place: tuple[Path, dict[str, str]]) -> tuple[Path, dict[str, str]]:
    """test_pending's vault, with the person's settings asking through the agent's client
    (`ask_client`): the wait is the person's answer."""
    root, env = place
    (Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml").write_text(
        '[approve]\nmode = "writes"\nask_client = true\n'
    )
    return root, env


MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


def moving(src: Path, dst: Path, asked: list[str]):
    """An elicitation callback that moves `src` to `dst` (the person's file manager) once, then
    approves: the change was decided before the move."""

    async def callback(context, params) -> ElicitResult:
        asked.append(params.message)
        if src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.rename(src, dst)
        return ElicitResult(action="accept", content={"approve": True})

    return callback


def agent_rows(root: Path, env: dict[str, str]) -> list[dict]:
    import json

    done = vaultwatch(env, "changes", str(root), "--json")
    assert done.returncode == 0, done.stderr
    return [r for r in map(json.loads, done.stdout.splitlines()) if r.get("agent")]


async def call(root: Path, env: dict[str, str], mode: str, callback, tool: str, arguments: dict):
    async with Client(bridged(root, env), mode=mode, elicitation_callback=callback) as client:
        return await client.call_tool(tool, arguments)


@MODES
@pytest.mark.parametrize("where", ["Private/Notes", "out of the vault", ".trash/Notes"])
async def test_a_write_waiting_for_the_person_never_lands_where_its_folder_went(
    asking, tmp_path: Path, mode: str, where: str
) -> None:
    root, env = asking
    dst = tmp_path / "elsewhere" / "Notes" if where == "out of the vault" else root / where
    asked: list[str] = []
    got = await call(
        root,
        env,
        mode,
        moving(root / "Notes", dst, asked),
        "write",
        {"path": "Notes/plan.md", "content": "# Agent\n", "overwrite": True},
    )
    assert got.is_error, got.content
    assert asked, "the change was not put to the person"
    assert (dst / "plan.md").read_bytes() == NOTE.encode()
    assert agent_rows(root, env) == []


@MODES
@pytest.mark.parametrize("where", ["Private/Notes", "out of the vault", ".trash/Notes"])
async def test_a_create_waiting_for_the_person_never_lands_where_its_folder_went(
    asking, tmp_path: Path, mode: str, where: str
) -> None:
    root, env = asking
    dst = tmp_path / "elsewhere" / "Notes" if where == "out of the vault" else root / where
    asked: list[str] = []
    got = await call(
        root, env, mode, moving(root / "Notes", dst, asked), "write", {"path": "Notes/new.md", "content": "# New\n"}
    )
    assert asked, "the change was not put to the person"
    assert not (dst / "new.md").exists()
    if got.is_error:
        assert agent_rows(root, env) == []
    else:  # a retry (2026-07-28) decided anew on Notes/new.md, gone: it made the folder again there
        assert mode == "auto" and (root / "Notes" / "new.md").read_text() == "# New\n", got.content
        assert [r["path"] for r in agent_rows(root, env)] == ["Notes/new.md"]


@MODES
async def test_a_rename_waiting_for_the_person_never_lands_where_its_destination_went(asking, mode: str) -> None:
    root, env = asking
    (root / "Out").mkdir()
    (root / "Out" / "keep.md").write_text("# Keep\n")
    before = tree(root)
    asked: list[str] = []
    got = await call(
        root,
        env,
        mode,
        moving(root / "Out", root / "Private" / "Out", asked),
        "rename",
        {"path": "Notes/plan.md", "new_path": "Out/plan.md"},
    )
    assert got.is_error, got.content
    assert asked, "the change was not put to the person"
    moved = {k.replace("Out/", "Private/Out/", 1) if k.startswith("Out/") else k: v for k, v in before.items()}
    assert tree(root) == moved  # the note, and the note linking to it, as they were
    assert agent_rows(root, env) == []


@MODES
async def test_a_delete_waiting_for_the_person_never_takes_a_note_from_where_its_folder_went(asking, mode: str) -> None:
    root, env = asking
    asked: list[str] = []
    got = await call(
        root, env, mode, moving(root / "Notes", root / "Archive" / "Notes", asked), "delete", {"path": "Notes/plan.md"}
    )
    assert got.is_error, got.content
    assert asked, "the change was not put to the person"
    assert (root / "Archive" / "Notes" / "plan.md").read_bytes() == NOTE.encode()
    assert not (root / ".trash").exists() or not any((root / ".trash").rglob("plan.md"))
    assert agent_rows(root, env) == []
