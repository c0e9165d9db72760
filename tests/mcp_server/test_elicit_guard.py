"""Who may be asked through an agent's client, in both protocol forms: "legacy" (a 2025 session:
`elicitation/create` during the call) and "auto" (2026-07-28: the call answers
InputRequiredResult and the client retries with the answer).

- The client that answers is the agent's own: a hostile agent's client answers its own question.
  So it is asked only where the person's settings say so (`[approve] ask_client`, off unless
  turned on; per agent `[agents.NAME] ask_client`, matched by the name the agent's changes are
  journaled under); otherwise the change waits as a pending change.
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
    assert len(seen) == 1, seen
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
