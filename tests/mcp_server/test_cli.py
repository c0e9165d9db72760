"""The MCP subcommands as a user runs them: `serve` (socket and --stdio), `mcp-config`."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH


def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*VAULTWATCH, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, **kwargs)


def test_serve_prints_the_socket_and_stops_on_sigterm(sock_dir, tmp_path, demo_vault):
    sock = sock_dir / "s.sock"
    audit = tmp_path / "audit.jsonl"
    proc = subprocess.Popen(
        [*VAULTWATCH, "serve", str(demo_vault), "--socket", str(sock), "--audit-log", str(audit)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("vaultwatch: serving ") and str(sock) in line
        assert sock.is_socket()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        proc.kill()
    assert not sock.exists()
    assert "stopped" in proc.stderr.read()


def test_serve_refuses_a_second_instance_and_bad_options(sock_dir, demo_vault):
    sock = sock_dir / "s.sock"
    first = subprocess.Popen(
        [*VAULTWATCH, "serve", str(demo_vault), "--socket", str(sock)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert str(sock) in first.stdout.readline()
        second = run("serve", str(demo_vault), "--socket", str(sock))
        assert second.returncode == 2 and f"(pid {first.pid}) already serves" in second.stderr
    finally:
        first.send_signal(signal.SIGINT)
        assert first.wait(10) == 0
    bad = run("serve", "--compat", "cortex")
    assert bad.returncode == 2 and "vault-cortex, obsidian-mcp" in bad.stderr
    public = run("serve", "--socket", str(sock), "--http", "0.0.0.0:8080")
    assert public.returncode == 2 and "only listens on loopback" in public.stderr


def test_serve_with_a_vault_that_fails_to_open_is_a_clear_error(sock_dir, demo_vault):
    """A start that fails before the vault is open (here a bad --as-of) says why, with no traceback."""
    got = run("serve", str(demo_vault), "--socket", str(sock_dir / "s.sock"), "--as-of", "nonsense")
    assert got.returncode != 0
    assert "invalid as-of date 'nonsense'" in got.stderr and "Traceback" not in got.stderr, got.stderr


async def test_serve_stdio_is_a_plain_stdio_server(tmp_path, demo_vault):
    audit = tmp_path / "a.jsonl"
    params = StdioServerParameters(
        command=VAULTWATCH[0],
        cwd=str(ROOT),
        args=[
            *VAULTWATCH[1:],
            "serve",
            str(demo_vault),
            "--stdio",
            "--compat",
            "obsidian-mcp",
            "--as-of",
            "2026-11-29",
            "--audit-log",
            str(audit),
        ],
        env=dict(os.environ),  # the session's cache and state folders (the SDK passes only a few names on)
    )
    async with Client(params, mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"list_documents", "obsidian_list_notes"} <= names and "vault_list_notes" not in names
        triage = await client.call_tool("triage", {})
        assert triage.structured_content["counts"]["stale"] == 8
    (line,) = audit.read_text().splitlines()
    assert json.loads(line)["tool"] == "triage"


# Each client's documented format (read 2026-12-01):
#   Claude Desktop  claude_desktop_config.json {"mcpServers": {name: {command, args, env}}} (stdio only)
#   Claude Code     `claude mcp add [--env K=V] NAME -- CMD ARGS`; HTTP `--transport http NAME URL --header H`
#   Cursor          mcp.json {"mcpServers": {name: {command, args, env} | {url, headers}}}, ${env:NAME} expanded
#   VS Code         mcp.json {"servers": {name: {"type": "stdio"|"http", ...}}, "inputs": [promptString...]}
#   Codex CLI       config.toml [mcp_servers.NAME] command/args/env, startup_timeout_sec (default 10);
#                   HTTP url + bearer_token_env_var (developers.openai.com/codex/mcp)
#   Gemini CLI      settings.json {"mcpServers": {name: {command, args, env, timeout} | {httpUrl, headers}}},
#                   $VAR expanded in strings (geminicli.com/docs/tools/mcp-server)
#   Windsurf        mcp_config.json {"mcpServers": {name: {command, args, env} | {serverUrl, headers}}},
#                   ${env:NAME} expanded (docs.windsurf.com/windsurf/cascade/mcp)
#   Zed             settings.json {"context_servers": {name: {command, args, env} | {url, headers}}} (zed.dev/docs/ai/mcp)
STDIO_JSON = {
    "claude-desktop": "mcpServers",
    "cursor": "mcpServers",
    "vscode": "servers",
    "gemini": "mcpServers",
    "windsurf": "mcpServers",
    "zed": "context_servers",
}


@pytest.mark.parametrize("client", sorted(STDIO_JSON))
def test_mcp_config_json_runs_the_bridge_in_each_clients_format(client, tmp_path, sock_dir):
    env = {
        "PATH": "/usr/bin:/bin",
        "XDG_RUNTIME_DIR": str(sock_dir),
        "XDG_STATE_HOME": str(tmp_path / "st"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "VAULTWATCH_JOURNAL_MAX_CHANGES": "500",
        "VAULTWATCH_SEMANTIC": "0",  # not a rule: left to the client
    }
    out = run("mcp-config", str(tmp_path), "--client", client, env=env)
    assert out.returncode == 0, out.stderr
    config = json.loads(out.stdout)
    assert list(config) == [STDIO_JSON[client]]
    entry = config[STDIO_JSON[client]]["vaultwatch"]
    assert entry["args"][-3:] == ["bridge", "--vault", str(tmp_path.resolve())]
    assert entry["command"].startswith("/")
    # clients trim the environment they spawn with: what the bridge needs is pinned in the entry, and
    # so is what names your rules (the settings file, the journal's limits) for a server it starts
    assert entry["env"] == {
        "XDG_RUNTIME_DIR": str(sock_dir),
        "XDG_STATE_HOME": str(tmp_path / "st"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "VAULTWATCH_JOURNAL_MAX_CHANGES": "500",
    }
    if client == "vscode":
        assert entry["type"] == "stdio"
    if client == "gemini":
        assert entry["timeout"] >= 30000


def test_mcp_config_codex_is_toml_with_a_startup_timeout(tmp_path, sock_dir):
    import tomllib

    out = run(
        "mcp-config",
        str(tmp_path),
        "--client",
        "codex",
        env={"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(sock_dir), "HOME": str(tmp_path / "home")},
    )
    entry = tomllib.loads(out.stdout)["mcp_servers"]["vaultwatch"]
    assert entry["args"][-3:] == ["bridge", "--vault", str(tmp_path.resolve())]
    assert entry["startup_timeout_sec"] > 10  # Codex's default 10 s is less than a big vault's cold start
    # unset folders are pinned as this environment resolves them: a client that gives its bridge
    # folders of its own would else read no rules of yours
    assert entry["env"] == {
        "XDG_RUNTIME_DIR": str(sock_dir),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "XDG_STATE_HOME": str(tmp_path / "home" / ".local" / "state"),
    }
    http = run(
        "mcp-config",
        str(tmp_path),
        "--client",
        "codex",
        "--http",
        "127.0.0.1:8765",
        env={"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "st")},
    )
    entry = tomllib.loads(http.stdout)["mcp_servers"]["vaultwatch"]
    assert entry == {"url": "http://127.0.0.1:8765/mcp", "bearer_token_env_var": "VAULTWATCH_TOKEN"}


HTTP_KEYS = {
    "cursor": ("mcpServers", "url", "Bearer ${env:VAULTWATCH_TOKEN}"),
    "windsurf": ("mcpServers", "serverUrl", "Bearer ${env:VAULTWATCH_TOKEN}"),
    "gemini": ("mcpServers", "httpUrl", "Bearer $VAULTWATCH_TOKEN"),
    "zed": ("context_servers", "url", None),
}


@pytest.mark.parametrize("client", sorted(HTTP_KEYS))
def test_mcp_config_http_forms_keep_the_token_out_of_the_file(client, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "st")}
    out = run("mcp-config", str(tmp_path), "--client", client, "--http", "127.0.0.1:8765", env=env)
    token = run("mcp-config", str(tmp_path), "--http", "127.0.0.1:8765", "--show-token", env=env).stdout.strip()
    assert len(token) >= 32
    top, url_key, header = HTTP_KEYS[client]
    entry = json.loads(out.stdout)[top]["vaultwatch"]
    assert entry[url_key] == "http://127.0.0.1:8765/mcp"
    if header is None:  # Zed documents no variable expansion: the token is in (a user settings file)
        assert entry["headers"]["Authorization"] == f"Bearer {token}"
    else:
        assert entry["headers"]["Authorization"] == header and token not in out.stdout
        assert "export VAULTWATCH_TOKEN=" in out.stderr
        inline = run(
            "mcp-config", str(tmp_path), "--client", client, "--http", "127.0.0.1:8765", "--inline-token", env=env
        )
        assert json.loads(inline.stdout)[top]["vaultwatch"]["headers"]["Authorization"] == f"Bearer {token}"


def test_mcp_config_claude_code_vscode_and_claude_desktop_with_http(tmp_path, sock_dir):
    env = {"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "st"), "XDG_CONFIG_HOME": str(tmp_path / "c")}
    out = run("mcp-config", str(tmp_path), "--client", "claude-code", env=env)
    assert out.stdout.startswith(
        f"claude mcp add --env XDG_CONFIG_HOME={tmp_path / 'c'} --env XDG_STATE_HOME={tmp_path / 'st'} vaultwatch -- /"
    )
    assert "bridge --vault" in out.stdout
    code = run("mcp-config", str(tmp_path), "--client", "claude-code", "--http", "127.0.0.1:8765", env=env)
    assert code.stdout.strip() == (
        "claude mcp add --transport http vaultwatch http://127.0.0.1:8765/mcp --header "
        '"Authorization: Bearer $VAULTWATCH_TOKEN"'
    )
    http = run("mcp-config", str(tmp_path), "--client", "vscode", "--http", "127.0.0.1:8765", env=env)
    config = json.loads(http.stdout)
    entry = config["servers"]["vaultwatch"]
    assert entry["type"] == "http" and entry["url"] == "http://127.0.0.1:8765/mcp"
    assert entry["headers"]["Authorization"] == "Bearer ${input:vaultwatch-token}"  # VS Code asks once
    assert config["inputs"][0]["id"] == "vaultwatch-token" and config["inputs"][0]["password"] is True
    desktop = run("mcp-config", str(tmp_path), "--client", "claude-desktop", "--http", "127.0.0.1:8765", env=env)
    entry = json.loads(desktop.stdout)["mcpServers"]["vaultwatch"]
    assert "bridge" in entry["args"]  # Claude Desktop spawns commands only...
    assert "Claude Desktop starts commands only" in desktop.stderr  # ...and says so, not silently
    everything = run("mcp-config", str(tmp_path), env=env)
    assert everything.stdout.count("\n# ") + everything.stdout.startswith("# ") == 8
