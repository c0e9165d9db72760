"""Agents' changes that did not happen are kept for the person after the TUI is gone: refused by a
rule (through the real bridge and the headless server it starts, with no TUI open), declined by the
person at the gate (the real server on its socket, the real `mcp` client), and listed by the real
`vaultwatch refusals` process; the record is private (0600) and bounded per agent and in all."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

from killed_cli import cli
from mcp import Client
from mcp_testing import ROOT, serving, uds_client
from test_agent_rules import configured, place  # noqa: F401  (the fixture: a vault, rules, a bridge's env)

from vaultwatch.core.review import approval, refusals
from vaultwatch.core.review.approval import ApprovalGate, ApprovalRequested
from vaultwatch.core.vault import Vault


async def test_a_refusal_by_rule_with_no_tui_open_is_listed_later(place) -> None:  # noqa: F811
    root, env = place
    async with Client(configured(root, env, "scribe")) as client:
        inside = await client.call_tool("write", {"path": "Inbox/new.md", "content": "# New\n"})
        assert not inside.is_error, inside.content[0].text
        outside = await client.call_tool("edit", {"path": "Notes/a.md", "old_text": "# A", "new_text": "# B"})
        assert outside.is_error
    listed = cli("refusals", str(root), env=env)
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    assert "scribe" in line and "refused" in line and "edit" in line and "Notes/a.md" in line, line
    assert '[agents."scribe"]' in line and "Inbox/**" in line, line  # the rule that refused it
    as_json = cli("refusals", str(root), "--json", env=env)
    [row] = [json.loads(x) for x in as_json.stdout.splitlines()]
    assert row["kind"] == "refused" and row["paths"] == ["Notes/a.md"] and row["session"]
    # the session as `vaultwatch changes` shows it, so that it pastes into `changes --session`
    changes = cli("changes", str(root), "--json", env=env)
    [change] = [json.loads(x) for x in changes.stdout.splitlines()]
    assert change["session"] == row["session"]  # the same agent run
    state = Path(env["XDG_STATE_HOME"]) / "vaultwatch" / "refusals"
    [kept] = [p for p in state.iterdir() if p.suffix == ".jsonl"]
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(state.stat().st_mode) == 0o700


async def test_a_decline_at_the_gate_is_listed_with_its_reason(tmp_path: Path, sock_dir, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n- one\n")
    vault = Vault(root)
    vault.load()
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    gate.attend()

    def person(event) -> None:  # declines in the TUI's dialog, with a reason
        if isinstance(event, ApprovalRequested):
            threading.Thread(target=gate.decide, args=(event.pending.id, False, "not now, maybe next week")).start()

    vault.bus.subscribe(person)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="ts-helper") as agent:
        r = await agent.call_tool("write", {"path": "Notes/Weekly plan.md", "content": "# Week\n"})
        assert r.is_error and "not now, maybe next week" in r.content[0].text
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(tmp_path / "state")}
    listed = cli("refusals", str(root), "--declined", env=env)
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    assert "ts-helper" in line and "declined" in line and "Notes/Weekly plan.md" in line, line
    assert "not now, maybe next week" in line
    assert cli("refusals", str(root), "--refused", env=env).stdout == ""


def test_a_flooding_agent_drops_only_its_own_oldest_records(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = str(tmp_path / "v")

    def one(agent: str, i: int) -> refusals.Refusal:
        return refusals.Refusal(float(i), refusals.REFUSED, agent, "s", "write", "write", [f"N{i}.md"], "x" * 2000)

    refusals.note(root, refusals.Refusal(0.0, refusals.DECLINED, "person-asked", "t", "edit", "edit", ["P.md"], "no"))
    for i in range(1, 200):
        refusals.note(root, one("flooder", i), max_records=40, agent_share=0.5)
    kept = refusals.kept(root)
    assert len(kept) <= 40
    assert [r.agent for r in kept].count("flooder") == 20 and kept[0].paths == ["N199.md"]  # its newest stay
    assert any(r.agent == "person-asked" for r in kept)  # the other agent's record is not pushed out
    assert all(len(r.reason) <= refusals.MAX_TEXT for r in kept)


def test_an_agent_flooding_under_many_versions_or_names_drops_its_own_records_first(
    tmp_path: Path, monkeypatch
) -> None:
    """The version a client sends (and its name) is its own claim: a share per `name/version` label let
    one agent, connected under three versions, push every other agent's refusals out of the record."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = str(tmp_path / "v")

    def one(agent: str, i: int) -> refusals.Refusal:
        return refusals.Refusal(float(i), refusals.REFUSED, agent, "s", "write", "write", [f"N{i}.md"], "x")

    refusals.note(root, one("victim/1.0", 0), max_records=40, agent_share=0.5)
    for i in range(1, 200):  # one agent, another version every call
        refusals.note(root, one(f"flooder/{i % 3}", i), max_records=40, agent_share=0.5)
    kept = refusals.kept(root)
    assert [r.agent for r in kept].count("victim/1.0") == 1, [r.agent for r in kept]
    assert len(refusals.kept(root, agent="flooder")) == 20  # its share, every version counted as it
    for i in range(200, 400):  # one agent under ten names: past the cap, the biggest holders give way
        refusals.note(root, one(f"flood{i % 10}/1", i), max_records=40, agent_share=0.5)
    kept = refusals.kept(root)
    assert len(kept) == 40
    assert [r.agent for r in kept].count("victim/1.0") == 1, [r.agent for r in kept]


def test_refusals_of_one_agent_are_its_own_never_those_of_a_name_it_starts(tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(state)}
    root = tmp_path / "v"
    root.mkdir()
    old = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(state)
    try:
        for at, agent in enumerate(["scribe/1.0", "scribe/2.0", "scribe/evil/1"]):
            refusals.note(
                os.path.realpath(root),
                refusals.Refusal(float(at), refusals.REFUSED, agent, "s", "write", "write", [f"{at}.md"], "no"),
            )
    finally:
        if old is None:
            del os.environ["XDG_STATE_HOME"]
        else:
            os.environ["XDG_STATE_HOME"] = old

    def listed(agent: str) -> list[str]:
        done = cli("refusals", str(root), "--agent", agent, "--json", env=env)
        assert done.returncode == 0, done.stderr
        return sorted(json.loads(line)["agent"] for line in done.stdout.splitlines())

    assert listed("scribe") == ["scribe/1.0", "scribe/2.0"]  # every version of scribe, not scribe/evil
    assert listed("scribe/evil") == ["scribe/evil/1"]
    assert listed("scribe/2.0") == ["scribe/2.0"]  # a whole label as shown


def test_the_listing_shows_an_agents_name_as_an_agents_however_it_is_spelled(tmp_path: Path, monkeypatch) -> None:
    """An agent's name is its client's claim: `vaultwatch refusals` shows it as `vaultwatch changes` and
    the TUI do (shown_agent: `agent <name>`, invisible characters written out), so `scribe` with a zero
    width space is never read as scribe, nor a name as the person's own."""
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    root = tmp_path / "v"
    root.mkdir()
    for at, agent in enumerate(["scribe\u200b/1", "human:ann"]):
        refusals.note(
            os.path.realpath(root),
            refusals.Refusal(float(at), refusals.REFUSED, agent, None, "write", "write", [f"{at}.md"], "no"),
        )
    done = cli("refusals", str(root), env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[2:4] == ["agent", "human:ann"], lines
    assert lines[1].split()[2:4] == ["agent", "scribe\\u200b/1"], lines
