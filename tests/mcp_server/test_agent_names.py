"""A client presented under the name the person gave it: `mcp-config --agent NAME` writes a bridge
command that carries the name, and the server knows the client by it (the name the person's agent
rules use), whatever the client calls itself."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import unicodedata

from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH, serving, uds_client
from mcp_types import Implementation

from vaultwatch.core.vault import Vault


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


# names a client could give to pass for the person (`human:<login>`) or for vaultwatch's label of
# an outside edit: invisible characters in front (zero-width space, soft hyphen, word joiner,
# grapheme joiner), one lookalike letter (Cyrillic һ, о), mixed case, a compatibility form
# (fullwidth ｈ), a trailing invisible, a joiner inside `human`, white space in front, and mixes
PERSON_LIKE = (
    "human:root",
    "\u200bhuman:root",
    "\u00adhuman:root",
    "\u2060human:root",
    "\u034fhuman:root",
    "\u04bbuman:root",
    "\u043eutside vaultwatch",
    "outside vaultwatch",
    "HUMAN:root",
    "Human:Root",
    "\uff48uman:root",
    unicodedata.normalize("NFKD", "human:ro\u00f6t"),
    "human:root\u200b",
    "hu\u200dman",
    "   human:root",
    "\u200b\u04bbUMAN:root\u2060",
    "\u00ad\u043eutside\u00a0vaultwatch",
)
INVISIBLE = dict.fromkeys(map(ord, "\u200b\u00ad\u2060\u034f\u200d"))


async def test_no_agent_named_like_the_person_reads_as_the_person(tmp_path, sock_dir, monkeypatch) -> None:
    """The name is the client's claim: whatever an agent calls itself, `vaultwatch changes` draws
    its changes as an agent's (`agent <name>`, the name's invisible characters escaped), never as
    the person's own (`human:<login>`) or as an outside edit."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("# A\n")
    vault = Vault(root)
    vault.load()
    try:
        async with serving(vault, sock_dir / "s.sock") as host:
            for i, name in enumerate(PERSON_LIKE):
                async with uds_client(host.socket_path, name=name, version="") as client:
                    done = await client.call_tool("write", {"path": f"n{i}.md", "content": "# N\n"})
                    assert not done.is_error, done.content
    finally:
        vault.stop()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    listed = run("changes", str(root), "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {json.loads(line)["path"]: json.loads(line) for line in listed.stdout.splitlines()}
    assert [rows[f"n{i}.md"]["agent"] for i in range(len(PERSON_LIKE))] == list(PERSON_LIKE)  # rules see the name
    person = run("revert", str(rows["n0.md"]["id"]), str(root), "--yes", env=env)
    assert person.returncode == 0, person.stderr
    lines = run("changes", str(root), env=env).stdout.splitlines()
    # the who column as the terminal draws it, invisible characters drawing nothing
    [mine] = [line[29:57].translate(INVISIBLE).strip() for line in lines if " revert " in line]
    assert mine.startswith("human:"), lines
    for i, name in enumerate(PERSON_LIKE):
        [line] = [line for line in lines if f"  n{i}.md  " in line and " revert " not in line]
        assert line[29:57].translate(INVISIBLE).startswith("agent "), (name, line)
