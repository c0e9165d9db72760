"""Who may be asked through an agent's client, and what they are shown, in both protocol forms:
"legacy" (a 2025 session: `elicitation/create` during the call) and "auto" (2026-07-28: the call
answers InputRequiredResult and the client retries with the answer).

- The client that answers is the agent's own: a hostile agent's client answers its own question.
  So it is asked only where the person's settings say so (`[approve] ask_client`, off unless
  turned on; per agent `[agents.NAME] ask_client`, matched by the name the agent's changes are
  journaled under); otherwise the change waits as a pending change.
- The question shows the whole change (every effect, every hunk, every line, with characters a
  client would act on shown as escapes); a change that does not fit in one waits as a pending
  change, and the agent is told why.
- The journal says how each change was approved.

Real parts: the Python `mcp` client with an elicitation callback runs the bridge command
`mcp-config` writes; the bridge starts the headless server, which reads settings.toml from disk;
the person's `vaultwatch pending / approve / changes` run as processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_pending
from mcp import Client
from mcp_types import ElicitResult, Implementation
from test_pending import NOTE, bridged, pending_id, tree, vaultwatch

place = test_pending.place

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
BY_CLIENT = "[approved through the agent's own client (MCP elicitation)]"
BY_COMMAND = "[approved by the person with `vaultwatch approve`]"


def settings(env: dict[str, str], text: str) -> None:
    (Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml").write_text(text)


def answering(seen: list[str], action: str = "accept", content: dict | None = None):
    async def callback(context, params) -> ElicitResult:
        seen.append(params.message)
        return ElicitResult(action=action, content={"approve": True} if content is None else content)

    return callback


def journaled(env: dict[str, str], root: Path, path: str) -> list[dict]:
    out = vaultwatch(env, "changes", str(root), "--json", "--path", path)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if '"kind"' in line]


def change_line(env: dict[str, str], root: Path, change_id: int) -> str:
    out = vaultwatch(env, "changes", str(root))
    assert out.returncode == 0, out.stderr
    [line] = [line for line in out.stdout.splitlines() if line.split()[:1] == [str(change_id)]]
    return line


@MODES
async def test_the_agents_client_is_not_asked_unless_the_person_lets_it(place, mode) -> None:
    """`[approve] mode = "writes"` alone: a client that declares elicitation and would approve
    anything is never asked; the change waits for the person, who approves it by command."""
    root, env = place
    seen: list[str] = []
    wanted = "# Plan\r\nrewritten by the agent\r\n"
    async with Client(bridged(root, env), mode=mode, elicitation_callback=answering(seen)) as client:
        got = await client.call_tool("write", {"path": "Notes/plan.md", "content": wanted, "overwrite": True})
    pid = pending_id(got)
    assert seen == []
    assert "not put to the person through your client" in got.content[0].text, got.content[0].text
    assert "[approve] ask_client" in got.content[0].text, got.content[0].text
    assert (root / "Notes" / "plan.md").read_bytes() == NOTE.encode()

    done = vaultwatch(env, "approve", str(pid), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "Notes" / "plan.md").read_bytes() == wanted.encode()
    [row] = journaled(env, root, "Notes/plan.md")
    assert row["approved_via"] == "approve-command", row
    assert BY_COMMAND in change_line(env, root, row["id"])


@MODES
async def test_an_agents_own_rule_lets_its_client_ask_and_the_journal_says_so(place, mode) -> None:
    """Asking is off for the vault and on for the agent `trusted` only. Its client is asked and its
    yes applies the change, journaled as approved through the agent's client and left unreviewed.
    A client the bridge names `scribe` is not asked, whatever name and version it sends itself."""
    root, env = place
    settings(env, '[approve]\nmode = "writes"\n[agents.trusted]\nask_client = true\n')
    seen: list[str] = []
    wanted = "# Plan\r\nwritten after the trusted client's yes\r\n"
    async with Client(bridged(root, env, "trusted"), mode=mode, elicitation_callback=answering(seen)) as client:
        done = await client.call_tool("write", {"path": "Notes/plan.md", "content": wanted, "overwrite": True})
        assert not done.is_error, done.content[0].text
    assert len(seen) == 1 and "The agent trusted/" in seen[0], seen
    assert (root / "Notes" / "plan.md").read_bytes() == wanted.encode()
    [row] = journaled(env, root, "Notes/plan.md")
    assert (row["approved_via"], row["reviewed"]) == ("agent-client", False), row
    assert BY_CLIENT in change_line(env, root, row["id"])

    claimed = Implementation(name="trusted", version="1/trusted")  # the bridge names it scribe
    async with Client(
        bridged(root, env, "scribe"), mode=mode, elicitation_callback=answering(seen), client_info=claimed
    ) as client:
        got = await client.call_tool("edit", {"path": "Notes/plan.md", "old_text": "# Plan", "new_text": "# Mine"})
    pending_id(got)
    assert len(seen) == 1, seen  # scribe's client was not asked
    assert (root / "Notes" / "plan.md").read_bytes() == wanted.encode()


@MODES
async def test_an_agents_own_rule_keeps_its_client_from_asking_where_the_vault_allows_it(place, mode) -> None:
    root, env = place
    settings(env, '[approve]\nmode = "writes"\nask_client = true\n[agents.scribe]\nask_client = false\n')
    seen: list[str] = []
    for name in ("scribe", "scribe/2"):  # its rule, whatever its client calls itself behind the bridge
        claimed = Implementation(name=name, version="1/x")
        async with Client(
            bridged(root, env, "scribe"), mode=mode, elicitation_callback=answering(seen), client_info=claimed
        ) as client:
            got = await client.call_tool("write", {"path": "Notes/plan.md", "content": "# Mine\n", "overwrite": True})
        pending_id(got)
        assert '[agents."scribe"] sets ask_client = false' in got.content[0].text, got.content[0].text
    assert seen == []
    assert (root / "Notes" / "plan.md").read_bytes() == NOTE.encode()
    async with Client(bridged(root, env, "helper"), mode=mode, elicitation_callback=answering(seen)) as client:
        done = await client.call_tool("write", {"path": "Notes/plan.md", "content": "# Helper\r\n", "overwrite": True})
        assert not done.is_error, done.content[0].text
    assert len(seen) == 1  # another agent's client, under the vault's setting
    assert (root / "Notes" / "plan.md").read_bytes() == b"# Helper\r\n"


PLAN = (
    "Teh plan\n"
    + "".join(f"line {i}\n" for i in range(2, 60))
    + "Wire transfers go to account CH-111 only.\n"
    + "".join(f"line {i}\n" for i in range(61, 80))
)


@MODES
async def test_the_question_shows_every_hunk_of_the_change(place, mode) -> None:
    """A typo fixed in the first hunk, an account number changed in a later one and a line that
    tries to erase the line above it on a terminal: the person sees all three, the escape as text."""
    root, env = place
    settings(env, '[approve]\nmode = "writes"\nask_client = true\n')
    (root / "Notes" / "plan.md").write_text(PLAN)
    new = PLAN.replace("Teh plan", "The plan").replace("CH-111", "XX-999")
    new = new.replace("line 30\n", "line 30 \x1b[1A\x1b[2K\u202eevil\n")
    seen: list[str] = []
    async with Client(
        bridged(root, env), mode=mode, elicitation_callback=answering(seen, "decline", {"reason": "no"})
    ) as client:
        got = await client.call_tool("write", {"path": "Notes/plan.md", "content": new, "overwrite": True})
    assert got.is_error and "the person declined this change: no" in got.content[0].text, got.content
    [asked] = seen
    lines = asked.splitlines()
    for shown in (
        "-Teh plan",
        "+The plan",
        "-Wire transfers go to account CH-111 only.",
        "+Wire transfers go to account XX-999 only.",
        "-line 30",
        "+line 30 \\u001b[1A\\u001b[2K\\u202eevil",
    ):
        assert shown in lines, asked
    assert sum(line.startswith("@@ ") for line in lines) == 3, asked
    assert "\x1b" not in asked and "\u202e" not in asked
    assert "+3 -3, in 3 hunks, all shown" in asked, asked
    assert (root / "Notes" / "plan.md").read_text() == PLAN


@MODES
async def test_a_change_too_long_for_a_question_waits_whole_for_the_person(place, mode) -> None:
    """Forty hunks are more than a question shows: the client is not asked at all (not even about
    a part), the agent is told why, and `vaultwatch pending` shows every hunk."""
    root, env = place
    settings(env, '[approve]\nmode = "writes"\nask_client = true\n')
    before = "".join(f"line {i}: unchanged words\n" for i in range(1, 401))
    (root / "Notes" / "long.md").write_text(before)
    after = "".join(
        f"line {i}: {'CHANGED' if i % 10 == 5 else 'unchanged'} words\n" for i in range(1, 401)
    )  # every tenth line: forty hunks
    seen: list[str] = []
    async with Client(bridged(root, env), mode=mode, elicitation_callback=answering(seen)) as client:
        got = await client.call_tool("write", {"path": "Notes/long.md", "content": after, "overwrite": True})
    pid = pending_id(got)
    assert seen == []
    assert "longer than a question shows" in got.content[0].text, got.content[0].text
    assert (root / "Notes" / "long.md").read_text() == before

    listed = vaultwatch(env, "pending", str(root), "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["id"] == pid
    assert all(f"+line {i}: CHANGED words" in row["diff"] for i in range(5, 401, 10)), row["diff"]
    done = vaultwatch(env, "approve", str(pid), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "Notes" / "long.md").read_text() == after
    [change] = journaled(env, root, "Notes/long.md")
    assert change["approved_via"] == "approve-command", change


async def test_changes_that_needed_no_approval_say_none(place) -> None:
    root, env = place
    settings(env, '[approve]\nmode = "deletes"\nask_client = true\n')
    before = tree(root)
    async with Client(bridged(root, env), mode="legacy", elicitation_callback=answering([])) as client:
        done = await client.call_tool("write", {"path": "Notes/new.md", "content": "# New\n"})
        assert not done.is_error, done.content[0].text
    assert set(tree(root)) - set(before) == {"Notes/new.md"}
    [row] = journaled(env, root, "Notes/new.md")
    assert row["approved_via"] is None and "[approved" not in change_line(env, root, row["id"])


async def test_ask_client_follows_the_settings_file_as_it_is_now(place) -> None:
    """One running server (the bridge's): the person turns `ask_client` on in settings.toml, and the
    next gated change is asked through the client; the person turns it off again while a question
    waits for its answer, and the client's yes applies nothing."""
    root, env = place
    seen: list[str] = []
    taking_back: list[bool] = []

    async def callback(context, params) -> ElicitResult:
        seen.append(params.message)
        if taking_back:
            settings(env, '[approve]\nmode = "writes"\nask_client = false\n')
        return ElicitResult(action="accept", content={"approve": True})

    async with Client(bridged(root, env), mode="legacy", elicitation_callback=callback) as client:
        settings(env, '[approve]\nmode = "writes"\nask_client = true\n')
        first = await client.call_tool("write", {"path": "Notes/plan.md", "content": "# One\n", "overwrite": True})
        assert not first.is_error, first.content[0].text
        assert len(seen) == 1 and (root / "Notes" / "plan.md").read_text() == "# One\n"
        taking_back.append(True)
        second = await client.call_tool("write", {"path": "Notes/plan.md", "content": "# Two\n", "overwrite": True})
        assert second.is_error, second.content
        assert "no longer let an agent's client approve" in second.content[0].text, second.content[0].text
    assert len(seen) == 2 and (root / "Notes" / "plan.md").read_text() == "# One\n"
