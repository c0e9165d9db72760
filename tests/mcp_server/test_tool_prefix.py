"""--tool-prefix beyond `serve`: per client in `vaultwatch bridge` (and so in mcp-config's output), and
for the TUI's server (and the headless server it hands the vault back to).

The bridge renames in transit, so a client configured with a prefix keeps its tool names whichever
server (TUI or headless, with or without a prefix of its own) serves the vault."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import CLIENT_DIR, ROOT, VAULTWATCH, serving

from vaultwatch.mcp_server.config import snippet


@pytest.fixture
def vault(make_vault, open_vault):
    return open_vault(make_vault({"index.md": "# Home\n", "Projects/Plan.md": "# Plan\n"}))


def bridge(socket_path: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0],
        cwd=str(ROOT),
        args=[*VAULTWATCH[1:], "bridge", "--socket", socket_path, *extra],
        env=dict(os.environ),  # the session's cache and state folders (the SDK passes only a few names on)
    )


async def test_the_bridge_shows_its_client_every_tool_under_the_prefix(vault, sock_dir):
    async with serving(vault, sock_dir / "v.sock", compat=frozenset()) as host:
        async with Client(bridge(host.socket_path, "--tool-prefix", "vault_"), mode="legacy") as client:
            instructions = client.instructions
            names = [t.name for t in (await client.list_tools()).tools]
            read = await client.call_tool("vault_read", {"path": "index.md"})
            write = await client.call_tool("vault_write", {"path": "New.md", "content": "# New\n"})
        served = sorted(t.name for t in await host.server.list_tools())
    assert names and all(n.startswith("vault_") for n in names)
    assert sorted(n.removeprefix("vault_") for n in names) == served  # the server itself is unprefixed
    assert not read.is_error and read.structured_content["path"] == "index.md"
    assert not write.is_error and (Path(vault.root) / "New.md").read_text() == "# New\n"
    assert "Every tool name here starts with 'vault_'" in instructions


async def test_a_bridge_prefix_over_a_prefixed_server_is_not_doubled(vault, sock_dir):
    async with serving(vault, sock_dir / "v.sock", compat=frozenset(), tool_prefix="vault_") as host:
        async with Client(bridge(host.socket_path, "--tool-prefix", "vault_"), mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            read = await client.call_tool("vault_read", {"path": "index.md"})
    assert "vault_read" in names and not any(n.startswith("vault_vault_") for n in names)
    assert not read.is_error


async def test_typescript_sdk_client_pages_under_the_prefix(ts_sdk, vault, sock_dir):  # noqa: F811
    async with serving(vault, sock_dir / "v.sock", compat=frozenset()) as host:
        proc = await asyncio.create_subprocess_exec(
            str(ts_sdk),
            "page_loop.mjs",
            "vault_list_documents",
            '{"limit": 1}',
            *VAULTWATCH,
            "bridge",
            "--socket",
            host.socket_path,
            "--tool-prefix",
            "vault_",
            cwd=str(CLIENT_DIR),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    report = json.loads(out)
    assert report["ok"], report.get("error") or err.decode()[-2000:]
    assert report["paths"] == ["Projects/Plan.md", "index.md"] and report["pages"] == 2


def test_mcp_config_puts_the_prefix_on_the_bridge_command(tmp_path):
    for client in ("claude-desktop", "cursor", "vscode", "zed", "gemini"):
        text = snippet(client, str(tmp_path), tool_prefix="vault_")
        entry = next(iter(next(iter(json.loads(text).values())).values()))
        assert entry["args"][-4:] == ["--vault", str(tmp_path), "--tool-prefix", "vault_"], client
    assert "--tool-prefix vault_" in snippet("claude-code", str(tmp_path), tool_prefix="vault_")
    assert "'--tool-prefix', 'vault_'" in snippet("codex", str(tmp_path), tool_prefix="vault_").replace('"', "'")
    assert "--tool-prefix" not in snippet("cursor", str(tmp_path))
    done = subprocess.run(
        [*VAULTWATCH, "mcp-config", str(tmp_path), "--client", "cursor", "--tool-prefix", "vault_"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["mcpServers"]["vaultwatch"]["args"][-2:] == [
        "--tool-prefix",
        "vault_",
    ]
    bad = subprocess.run(
        [*VAULTWATCH, "bridge", "--socket", "/nonexistent.sock", "--tool-prefix", "no spaces!"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert bad.returncode == 2 and "--tool-prefix" in bad.stderr


def test_the_tui_takes_the_server_options_and_hands_them_back(demo_vault, tmp_path):
    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server.host import McpHost
    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.commands.cli import build_parser
    from vaultwatch.tui.config import AppConfig

    parser, _ = build_parser()
    args = parser.parse_args(["tui", str(demo_vault), "--tool-prefix", "vault_", "--max-answer-bytes", "8192"])
    from vaultwatch.mcp_server.cli import server_options

    options = server_options(args)
    assert options == {"tool_prefix": "vault_", "max_answer_bytes": 8192}
    vault = Vault(demo_vault)
    app = make_app(
        vault,
        config=AppConfig(
            server_options=options, socket_path=str(tmp_path / "s.sock"), watch=False, tick=None, animate=False
        ),
    )
    host = app.services.host_factory()
    assert isinstance(host, McpHost)
    names = [t.name for t in asyncio.run(host.server.list_tools())]
    assert names and all(n.startswith("vault_") for n in names)
    assert host.serve_args == ["--tool-prefix", "vault_", "--max-answer-bytes", "8192"]
    done = subprocess.run(
        [*VAULTWATCH, "tui", str(demo_vault), "--tool-prefix", "no spaces!"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "--tool-prefix" in done.stderr
