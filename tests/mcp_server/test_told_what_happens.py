"""What the person is told of an agent's change is what it does, wherever it is shown with no TUI
open: a rename without link rewriting (update_links=false) says how many notes link to what moves
and that their links will point at nothing; a permanent delete says it deletes for good, not to
the trash. In `vaultwatch pending`, in the question through the agent's client (MCP elicitation),
in the agent's answer and in the journal's row.

Real parts: the Python `mcp` client runs the bridge command `mcp-config` writes, the bridge starts
the headless server, and the person runs `vaultwatch pending / approve / changes` as processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_pending
from mcp import Client
from mcp_types import ElicitResult
from test_pending import bridged, pending_id, vaultwatch

from vaultwatch.core.edit.effects import stranded_words

place = test_pending.place  # the pending-change tests' vault: Notes/other.md links to [[plan]]

STRANDED = stranded_words(2)
FOR_GOOD = "deleted for good (not to the trash)"


def with_top(root: Path) -> None:
    """A second note linking to Notes/plan.md, by its path."""
    (root / "Top.md").write_text("# Top\nsee [[Notes/plan]]\n")


async def test_pending_says_which_links_a_rename_leaves_and_that_a_delete_is_for_good(place) -> None:
    root, env = place
    with_top(root)
    async with Client(bridged(root, env)) as client:
        rename = pending_id(
            await client.call_tool(
                "rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md", "update_links": False}
            )
        )
        linked = pending_id(await client.call_tool("rename", {"path": "Top.md", "new_path": "Head.md"}))
        gone = pending_id(
            await client.call_tool("delete", {"path": "Top.md", "permanent": True, "confirm_path": "Top.md"})
        )
        trash = pending_id(await client.call_tool("delete", {"path": "Notes/other.md"}))
    listed = vaultwatch(env, "pending", str(root))
    assert listed.returncode == 0, listed.stderr
    shown = {int(part.split()[0]): part for part in listed.stdout.split("pending change ")[1:]}
    assert STRANDED in shown[rename], shown[rename]
    assert FOR_GOOD in shown[gone], shown[gone]
    for other in (linked, trash):  # links rewritten, or a delete to the trash: nothing to say
        assert "point at nothing" not in shown[other] and FOR_GOOD not in shown[other], shown[other]
    rows = {r["id"]: r for r in map(json.loads, vaultwatch(env, "pending", str(root), "--json").stdout.splitlines())}
    assert rows[rename]["cautions"] == [STRANDED] and rows[gone]["cautions"] == [FOR_GOOD]
    assert rows[trash]["cautions"] == []

    assert vaultwatch(env, "approve", str(gone), str(root)).returncode == 0
    assert not (root / "Top.md").exists() and not (root / ".trash").exists()  # what it said is what happened
    assert vaultwatch(env, "approve", str(rename), str(root)).returncode == 0
    assert (root / "Notes" / "other.md").read_text() == "# Other\nsee [[plan]]\n"  # left pointing at nothing
    changes = vaultwatch(env, "changes", str(root)).stdout
    assert "deleted Top.md for good (not to the trash)" in changes, changes
    assert "links in 1 note not rewritten (now broken)" in changes, changes  # Top.md went meanwhile


@pytest.fixture
def asking(place) -> tuple[Path, dict[str, str]]:
    """The pending-change tests' place, where the person lets an agent's client ask them."""
    root, env = place
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text('[approve]\nmode = "writes"\nask_client = true\n')
    return root, env


async def test_the_question_and_the_answer_say_what_the_change_does(asking) -> None:
    root, env = asking
    with_top(root)
    seen: list[str] = []

    async def approve(context, params) -> ElicitResult:
        seen.append(params.message)
        return ElicitResult(action="accept", content={"approve": True})

    async with Client(bridged(root, env), mode="legacy", elicitation_callback=approve) as client:
        moved = await client.call_tool(
            "rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md", "update_links": False}
        )
        assert not moved.is_error, moved.content
        gone = await client.call_tool("delete", {"path": "Top.md", "permanent": True, "confirm_path": "Top.md"})
        assert not gone.is_error, gone.content
    asked_rename, asked_delete = seen
    assert f"{STRANDED[0].upper()}{STRANDED[1:]}." in asked_rename, asked_rename
    assert "Deleted for good (not to the trash)." in asked_delete, asked_delete
    answer = moved.content[0].text
    assert f"{STRANDED} (update_links is false" in answer, answer
    assert "Notes/other.md" in answer and "Top.md" in answer, answer
    assert "deleted Top.md for good (not to the trash)" in gone.content[0].text, gone.content
    assert not (root / "Top.md").exists() and not (root / ".trash").exists()


async def test_a_moved_notes_own_relative_links_count_and_links_that_still_resolve_do_not(place) -> None:
    """A note moved to another folder without link rewriting breaks its own relative Markdown links
    (`../Top.md`, `./other.md` read from the new folder name nothing), while its wiki links by name
    or by path and its link from the vault's root still reach their notes (core.links' resolution,
    as Obsidian's). The count says so in `vaultwatch pending`, and in the agent's answer once the
    person approves, and the approved move leaves exactly those links pointing at nothing."""
    root, env = place
    with_top(root)
    (root / "Notes" / "rel.md").write_text("# Rel\nup [t](../Top.md) and [o](./other.md)\n")
    (root / "Notes" / "fine.md").write_text("# Fine\n[[other]] [[Notes/plan]] [t](/Top.md)\n")
    async with Client(bridged(root, env)) as client:
        rel = pending_id(
            await client.call_tool(
                "rename", {"path": "Notes/rel.md", "new_path": "Archive/Deep/rel.md", "update_links": False}
            )
        )
        fine = pending_id(
            await client.call_tool(
                "rename", {"path": "Notes/fine.md", "new_path": "Old/Deep/fine.md", "update_links": False}
            )
        )
    rows = {r["id"]: r for r in map(json.loads, vaultwatch(env, "pending", str(root), "--json").stdout.splitlines())}
    assert rows[rel]["cautions"] == [stranded_words(1)], rows[rel]
    assert rows[fine]["cautions"] == [], rows[fine]
    approved = vaultwatch(env, "approve", str(rel), str(root))
    assert approved.returncode == 0, approved.stderr
    assert f"{stranded_words(1)} (update_links is false): Notes/rel.md" in approved.stdout + approved.stderr, (
        approved.stdout + approved.stderr
    )
    assert vaultwatch(env, "approve", str(fine), str(root)).returncode == 0
    for note, broken in (("Archive/Deep/rel.md", ["../Top.md", "./other.md"]), ("Old/Deep/fine.md", [])):
        links = json.loads(vaultwatch(env, "links", str(root), note, "--json").stdout)
        assert [b["target"] for b in links["broken"]] == broken, links  # what it said is what happened
