"""A client presented under the name the person gave it: `mcp-config --agent NAME` writes a bridge
command that carries the name, and the server knows the client by it (the name the person's agent
rules use), whatever the client calls itself."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH, serving
from mcp_types import Implementation


def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*VAULTWATCH, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, **kwargs)


def test_mcp_config_writes_the_agent_name_into_the_bridge_command(tmp_path, sock_dir):
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(sock_dir)}
    out = run("mcp-config", str(tmp_path), "--client", "cursor", "--agent", "scribe", env=env)
    assert out.returncode == 0, out.stderr
    args = json.loads(out.stdout)["mcpServers"]["vaultwatch"]["args"]
    assert args[-5:] == ["bridge", "--vault", str(tmp_path.resolve()), "--agent", "scribe"]
    code = run("mcp-config", str(tmp_path), "--client", "claude-code", "--agent", "scribe", env=env)
    assert code.returncode == 0 and code.stdout.rstrip().endswith("--agent scribe")
    bad = run("mcp-config", str(tmp_path), "--client", "cursor", "--agent", "a/b", env=env)
    assert bad.returncode != 0 and "--agent 'a/b'" in bad.stderr
    url = run("mcp-config", str(tmp_path), "--client", "cursor", "--agent", "x", "--http", "127.0.0.1:8765", env=env)
    assert url.returncode != 0 and "cannot carry it" in url.stderr


async def test_the_server_knows_a_bridged_client_by_its_given_name(demo, sock_dir):
    async with serving(demo, sock_dir / "v.sock") as host:
        params = StdioServerParameters(
            command=VAULTWATCH[0],
            args=[*VAULTWATCH[1:], "bridge", "--socket", str(host.socket_path), "--agent", "scribe"],
            cwd=str(ROOT),
            env=dict(os.environ),  # the session's cache and state folders (the SDK passes only a few names on)
        )
        for mode in ("legacy", "auto"):  # 2025-11-25 (initialize) and 2026-07-28 (each request's _meta)
            client = Client(params, mode=mode, client_info=Implementation(name="cursor", version="3"))
            async with client:
                listing = await client.call_tool("list_documents", {"limit": 1})
                assert not listing.is_error
                agents = [agent for agent, _ in host.agents()]
                assert agents and all(a == "scribe/3" for a in agents), agents
            for _ in range(200):
                if not host.agents():
                    break
                await asyncio.sleep(0.02)


async def test_an_agent_named_like_the_person_never_reads_as_the_person(tmp_path) -> None:
    """The name is the client's claim: an agent calling itself `human:<login>` (the label the person's
    own edits carry) is shown as an agent in `vaultwatch changes`, never as the person."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("# A\n")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    params = StdioServerParameters(
        command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", str(root), "--stdio"], cwd=str(ROOT), env=env
    )
    async with Client(params, mode="legacy", client_info=Implementation(name="human:root", version="")) as client:
        done = await client.call_tool("write", {"path": "b.md", "content": "# B\n"})
        assert not done.is_error, done.content
    listed = run("changes", str(root), "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    [row] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["agent"] == "human:root", row  # (a person's own change has no agent)
    text = run("changes", str(root), env=env).stdout
    assert "agent human:root" in text, text
