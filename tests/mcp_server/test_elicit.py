"""Approval with no TUI open, for a client that can ask its person (MCP elicitation), in both
forms: "legacy" (a 2025 session: the headless server sends `elicitation/create` during the gated
call) and "auto" (the client negotiates 2026-07-28: the call answers InputRequiredResult and the
client retries with the person's answer). The question carries the change's summary; the
change is applied or declined on the answer.

Real parts: the Python `mcp` client with an elicitation callback runs the bridge command
`mcp-config` writes; the bridge starts the headless server, which reads `[approve]` from
settings.toml, where the person lets agents' clients ask (`ask_client = true`: off by default,
test_elicit_guard.py)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
import test_pending
from mcp import Client
from mcp_testing import CLIENT_DIR
from mcp_types import ElicitResult
from test_pending import NOTE, bridged, tree

place = test_pending.place  # the same vault, settings and environment as the pending-change tests


@pytest.fixture
def asking(place) -> tuple[Path, dict[str, str]]:
    """The pending-change tests' place, where the person lets an agent's client ask them."""
    root, env = place
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text('[approve]\nmode = "writes"\nask_client = true\n')
    return root, env


MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


def answering(action: str, content: dict | None, seen: list[str]):
    async def callback(context, params) -> ElicitResult:
        seen.append(params.message)
        return ElicitResult(action=action, content=content)

    return callback


@MODES
async def test_accept_through_the_client_applies_the_change_byte_exact(asking, mode) -> None:
    root, env = asking
    wanted = "# Plan\r\nkeep these bytes: é\r\nadded by the agent\r\n"
    seen: list[str] = []
    callback = answering("accept", {"approve": True}, seen)
    async with Client(bridged(root, env), mode=mode, elicitation_callback=callback) as client:
        done = await client.call_tool("write", {"path": "Notes/plan.md", "content": wanted, "overwrite": True})
        assert not done.is_error, done.content[0].text
    assert (root / "Notes" / "plan.md").read_bytes() == wanted.encode()
    [asked] = seen
    # the person reads what the change touches, its lines added and removed, and its hunk
    assert "rewrites Notes/plan.md" in asked and "lines: +1 -0" in asked, asked
    assert "+added by the agent" in asked and "@@" in asked, asked
    # the journal says how: through the agent's own client, which is no review by the person
    out = test_pending.vaultwatch(env, "changes", str(root), "--json", "--path", "Notes/plan.md")
    [row] = [json.loads(line) for line in out.stdout.splitlines()]
    assert (row["approved_via"], row["reviewed"]) == ("agent-client", False), row


@MODES
async def test_the_question_says_what_the_agent_asked_for_in_words(asking, mode) -> None:
    """A frontmatter update is a write of the note on disk, but the person is asked about what the
    agent asked for, in the words the TUI's dialog uses, not the tool's name or the bytes' kind."""
    root, env = asking
    seen: list[str] = []
    callback = answering("accept", {"approve": False}, seen)
    async with Client(bridged(root, env), mode=mode, elicitation_callback=callback) as client:
        got = await client.call_tool("update_frontmatter", {"path": "Notes/plan.md", "set": {"status": "done"}})
        assert got.is_error
    [asked] = seen
    assert "asks to change the properties of Notes/plan.md;" in asked.splitlines()[0], asked


@MODES
async def test_decline_through_the_client_changes_nothing_and_quotes_the_reason(asking, mode) -> None:
    root, env = asking
    before = tree(root)
    seen: list[str] = []
    callback = answering("accept", {"approve": False, "reason": "not this week"}, seen)
    async with Client(bridged(root, env), mode=mode, elicitation_callback=callback) as client:
        got = await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"})
        assert got.is_error and "the person declined this change: not this week" in got.content[0].text, got.content
        plain = await client.call_tool("delete", {"path": "Notes/plan.md"})
        assert plain.is_error
    assert tree(root) == before
    assert "may rewrite links in Notes/other.md" in seen[0], seen[0]  # every effect, not only the path the agent named
    assert len(seen) == 2


@MODES
async def test_a_renames_question_shows_what_each_rewritten_link_becomes(asking, mode) -> None:
    """The person approves the new link text, not only the names of the notes it is written in."""
    root, env = asking
    seen: list[str] = []
    callback = answering("accept", {"approve": True}, seen)
    async with Client(bridged(root, env), mode=mode, elicitation_callback=callback) as client:
        done = await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"})
        assert not done.is_error, done.content[0].text
    [asked] = seen
    lines = asked.splitlines()
    assert "  may rewrite links in Notes/other.md" in lines, asked
    start = lines.index("Links rewritten in Notes/other.md: +1 -1, in 1 hunk, all shown:")
    assert lines[start + 1 :] == ["@@ -1,2 +1,2 @@", " # Other", "-see [[plan]]", "+see [[done]]"], asked
    assert (root / "Notes" / "other.md").read_text() == "# Other\nsee [[done]]\n"  # what the person saw


@MODES
async def test_a_linking_note_edited_while_the_person_answers_stops_the_rename(asking, mode) -> None:
    """The person approved the link text the question showed: a linking note edited meanwhile would be
    rewritten into text they never saw, so the rename is refused and nothing moves."""
    root, env = asking
    other = root / "Notes" / "other.md"
    edited = "# Other\nsee [[plan]]\nthe person typed this meanwhile: [[plan#Later]]\n"
    asked: list[str] = []

    async def edit_then_accept(context, params) -> ElicitResult:
        asked.append(params.message)
        other.write_text(edited)  # after the question, before the answer
        return ElicitResult(action="accept", content={"approve": True})

    async with Client(bridged(root, env), mode=mode, elicitation_callback=edit_then_accept) as client:
        got = await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"})
    assert got.is_error, got.content
    said = got.content[0].text
    if mode == "legacy":  # the rename waited for the answer; it looks at the linking notes again
        assert "revision conflict" in said and "nothing was moved" in said, said
    else:  # the retry's link rewrites are not the ones the person was asked about
        assert "no longer the one the person was asked about" in said, said
    assert other.read_text() == edited and (root / "Notes" / "plan.md").exists()
    assert not (root / "Notes" / "done.md").exists() and len(asked) == 1


@MODES
async def test_a_rename_whose_link_rewrites_do_not_fit_waits_as_pending(asking, mode) -> None:
    """Every rewritten link counts against the question's bound: past it, the client is not asked at
    all and the rename waits for the person, who sees it whole in `vaultwatch pending`."""
    root, env = asking
    (root / "Notes" / "other.md").write_text("# Other\n" + ("see [[plan]]\n" + "filler\n" * 9) * 12)
    before = tree(root)
    seen: list[str] = []
    callback = answering("accept", {"approve": True}, seen)
    async with Client(bridged(root, env), mode=mode, elicitation_callback=callback) as client:
        got = await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"})
        test_pending.pending_id(got)
        assert "the whole change is longer than a question shows" in got.content[0].text, got.content
    assert seen == [] and tree(root) == before


@MODES
async def test_a_decline_action_declines(asking, mode) -> None:
    root, env = asking
    before = tree(root)
    async with Client(bridged(root, env), mode=mode, elicitation_callback=answering("decline", None, [])) as client:
        got = await client.call_tool("edit", {"path": "Notes/plan.md", "old_text": "# Plan", "new_text": "# X"})
    assert got.is_error and "declined it in the client" in got.content[0].text, got.content
    assert tree(root) == before
    assert NOTE.encode() == (Path(root) / "Notes" / "plan.md").read_bytes()


@MODES
async def test_an_outside_edit_while_the_person_answers_is_not_overwritten(asking, mode) -> None:
    root, env = asking
    note = root / "Notes" / "plan.md"
    outside = b"# Plan\nthe person typed this meanwhile\n"

    asked: list[str] = []

    async def edit_then_accept(context, params) -> ElicitResult:
        asked.append(params.message)
        note.write_bytes(outside)  # the note changes after the question, before the answer
        return ElicitResult(action="accept", content={"approve": True})

    async with Client(bridged(root, env), mode=mode, elicitation_callback=edit_then_accept) as client:
        got = await client.call_tool("write", {"path": "Notes/plan.md", "content": "# Agent\n", "overwrite": True})
    assert got.is_error, got.content
    said = got.content[0].text
    if mode == "legacy":  # the write waited for the answer; its re-check under the lock sees the edit
        assert "revision conflict" in said, said
    else:  # the retry's change (its bytes before) is not the one the person was asked about
        assert "no longer the one the person was asked about" in said, said
    assert note.read_bytes() == outside
    assert len(asked) == 1


CHANGED_WHILE_ASKED = [
    # (the call, what changes in the vault after the question and before the answer)
    ({"tool": "rename", "args": {"path": "Notes", "new_path": "Archive"}}, "added"),
    ({"tool": "delete", "args": {"path": "Notes"}}, "added"),
    ({"tool": "delete", "args": {"path": "Notes/other.md"}}, "edited"),
]


@MODES
@pytest.mark.parametrize(("call", "change"), CHANGED_WHILE_ASKED)
async def test_what_changes_while_the_person_answers_is_never_moved_or_deleted_unseen(
    asking, mode, call, change
) -> None:
    """The person approved the files the question listed: a note added to the folder, or the note
    edited, while they answered would otherwise be moved or deleted without having been shown."""
    root, env = asking
    asked: list[str] = []

    async def change_then_accept(context, params) -> ElicitResult:
        asked.append(params.message)
        if change == "added":
            (root / "Notes" / "late.md").write_text("# Late\nwritten while the person answered\n")
        else:
            (root / "Notes" / "other.md").write_text("# Other\nthe person typed this meanwhile\n")
        return ElicitResult(action="accept", content={"approve": True})

    async with Client(bridged(root, env), mode=mode, elicitation_callback=change_then_accept) as client:
        got = await client.call_tool(call["tool"], call["args"])
        after = tree(root)
    assert got.is_error, got.content
    said = got.content[0].text
    if mode == "legacy":  # the call waited for the answer: it looks at what it would touch again
        assert "revision conflict" in said, said
    else:  # the retry's effects or bytes are not the ones the person was asked about
        assert "no longer the one the person was asked about" in said, said
    assert "Notes/late.md" in after or change != "added"
    assert all(path.startswith("Notes/") for path in after) and len(asked) == 1


@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_a_typescript_sdk_client_answers_through_the_bridge(asking, ts_sdk, answer) -> None:
    """The official TypeScript SDK (a client nobody here wrote) declares elicitation and answers."""
    root, env = asking
    before = tree(root)
    wanted = "# Plan\r\nwritten after the TypeScript person said yes: ü\r\n"
    bridge = bridged(root, env)
    arguments = {"path": "Notes/plan.md", "content": wanted, "overwrite": True}
    proc = await asyncio.create_subprocess_exec(
        str(ts_sdk),
        "elicit_client.mjs",
        answer,
        "write",
        json.dumps(arguments),
        bridge.command,
        *bridge.args,
        cwd=str(CLIENT_DIR),
        env=bridge.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    report = json.loads(out)
    assert report["ok"], report.get("error") or err.decode()
    assert len(report["asked"]) == 1 and "rewrites Notes/plan.md" in report["asked"][0], report
    if answer == "accept":
        assert not report["isError"], report["text"]
        assert (root / "Notes" / "plan.md").read_bytes() == wanted.encode()
    else:
        assert report["isError"] and "the person declined this change: the TypeScript person says no" in report["text"]
        assert tree(root) == before


def test_a_write_tool_under_the_servers_prefix_is_gated_on_every_wire():
    """The one check of which calls may wait for the person (elicit.gated): the SDK path's middleware
    asks through the client for them, and the socket's HTTP layer streams them (the question travels
    on the call's stream); under `--tool-prefix` only the prefixed names are the write tools."""
    from vaultwatch.mcp_server.elicit import gated
    from vaultwatch.mcp_server.streaming import wants_stream

    def body(name) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}}).encode()

    assert gated("write") and gated("vault_write", "vault_") and gated("vault_delete", "vault_")
    assert not any(gated(n, "vault_") for n in ("write", "vault_read", "vault_", None, 3))
    assert not gated("read") and not gated("vault_write")
    assert wants_stream(body("write")) and wants_stream(body("vault_write"), "vault_")
    assert not wants_stream(body("vault_write")) and not wants_stream(body("read"), "vault_")
