"""Approval with no TUI open, for a client that cannot be asked (no elicitation): the gated change
becomes a pending change the person decides later from the command line.

Real parts only: the Python `mcp` client runs the bridge command `mcp-config` writes, the bridge
starts the headless server (which reads `[approve] mode = "writes"` from settings.toml), and
the person runs `vaultwatch pending / approve / decline` as processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH, stop_headless_servers

NOTE = "# Plan\r\nkeep these bytes: é\r\n"


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path / "vault"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "plan.md").write_bytes(NOTE.encode())
    (root / "Notes" / "other.md").write_text("# Other\nsee [[plan]]\n")
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text('[approve]\nmode = "writes"\n')
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(sock_dir),
    }
    yield root, env
    stop_headless_servers(root)  # the one the bridge started


def vaultwatch(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*VAULTWATCH, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def bridged(root: Path, env: dict[str, str], agent: str = "scribe") -> StdioServerParameters:
    out = vaultwatch(env, "mcp-config", str(root), "--client", "cursor", "--agent", agent)
    assert out.returncode == 0, out.stderr
    entry = json.loads(out.stdout)["mcpServers"]["vaultwatch"]
    return StdioServerParameters(command=entry["command"], args=entry["args"], env={**env, **entry.get("env", {})})


def pending_id(result) -> int:
    assert result.is_error, "a change that was not applied must not read as done"
    text = result.content[0].text
    found = re.search(r"pending change (\d+)", text)
    assert found and "awaits the person" in text, text
    return int(found.group(1))


async def history_of(client: Client, path: str) -> dict:
    got = await client.call_tool("history", {"path": path})
    assert not got.is_error, got.content
    return got.structured_content


async def test_a_gated_write_waits_and_the_person_approves_it_byte_exact(place) -> None:
    root, env = place
    wanted = "# Plan\r\nrewritten by the agent: ü\r\n\r\n"
    async with Client(bridged(root, env)) as client:
        before = tree(root)
        pid = pending_id(
            await client.call_tool("write", {"path": "Notes/plan.md", "content": wanted, "overwrite": True})
        )
        assert tree(root) == before  # nothing written while it waits
        seen = (await history_of(client, "Notes/plan.md"))["pending"]
        assert [(p["id"], p["state"], p["agent"].split("/")[0]) for p in seen] == [(pid, "pending", "scribe")]

        listed = vaultwatch(env, "pending", str(root), "--json")
        assert listed.returncode == 0, listed.stderr
        rows = [json.loads(line) for line in listed.stdout.splitlines()]
        assert [(r["id"], r["path"], r["agent"].split("/")[0], r["tool"]) for r in rows] == [
            (pid, "Notes/plan.md", "scribe", "write")
        ]
        assert "-keep these bytes: é" in rows[0]["diff"] and "+rewritten by the agent: ü" in rows[0]["diff"]

        done = vaultwatch(env, "approve", str(pid), str(root))
        assert done.returncode == 0, done.stderr
        assert (root / "Notes" / "plan.md").read_bytes() == wanted.encode()

        row = (await history_of(client, "Notes/plan.md"))["pending"][0]
        assert row["state"] == "approved" and row["change_ids"], row
        assert vaultwatch(env, "approve", str(pid), str(root)).returncode != 0  # one approval, once
    changes = vaultwatch(env, "changes", str(root), "--json")
    journaled = [json.loads(line) for line in changes.stdout.splitlines()]
    assert [(c["id"], c["agent"].split("/")[0], c["tool"]) for c in journaled if c["id"] in row["change_ids"]] == [
        (row["change_ids"][0], "scribe", "write")
    ]


async def test_an_outside_edit_in_between_makes_the_approval_refuse(place) -> None:
    root, env = place
    async with Client(bridged(root, env)) as client:
        pid = pending_id(
            await client.call_tool("edit", {"path": "Notes/plan.md", "old_text": "# Plan", "new_text": "# Agent"})
        )
        outside = b"# Plan\nthe person edited this meanwhile\n"
        (root / "Notes" / "plan.md").write_bytes(outside)
        before = tree(root)
        refused = vaultwatch(env, "approve", str(pid), str(root))
        assert refused.returncode == 1
        assert "Notes/plan.md changed since the change was proposed" in refused.stderr, refused.stderr
        assert tree(root) == before
        row = (await history_of(client, "Notes/plan.md"))["pending"][0]
        assert row["state"] == "refused" and "changed since" in row["reason"], row


async def test_decline_leaves_every_byte_and_the_agent_sees_the_reason(place) -> None:
    root, env = place
    async with Client(bridged(root, env)) as client:
        before = tree(root)
        # a rename: its effects reach the note whose link it would rewrite
        pid = pending_id(await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"}))
        listed = vaultwatch(env, "pending", str(root))
        assert "links Notes/other.md" in listed.stdout, listed.stdout
        out = vaultwatch(env, "decline", str(pid), str(root), "--reason", "keep the name")
        assert out.returncode == 0, out.stderr
        assert tree(root) == before
        row = (await history_of(client, "Notes/plan.md"))["pending"][0]
        assert (row["state"], row["reason"]) == ("declined", "keep the name")
        assert vaultwatch(env, "pending", str(root)).stdout == ""


async def test_a_pending_rename_approved_moves_and_relinks(place) -> None:
    root, env = place
    async with Client(bridged(root, env)) as client:
        pid = pending_id(await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"}))
    done = vaultwatch(env, "approve", str(pid), str(root))  # the server has gone: the CLI applies it
    assert done.returncode == 0, done.stderr
    assert (root / "Notes" / "done.md").read_bytes() == NOTE.encode()
    assert not (root / "Notes" / "plan.md").exists()
    assert (root / "Notes" / "other.md").read_text() == "# Other\nsee [[done]]\n"
