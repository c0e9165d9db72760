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
