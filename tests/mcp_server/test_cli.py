"""The MCP subcommands as a user runs them: `serve` (socket and --stdio), `mcp-config`."""
from __future__ import annotations

import json
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
    proc = subprocess.Popen([*VAULTWATCH, "serve", str(demo_vault), "--socket", str(sock), "--audit-log", str(audit)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
    first = subprocess.Popen([*VAULTWATCH, "serve", str(demo_vault), "--socket", str(sock)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
    params = StdioServerParameters(command=VAULTWATCH[0], cwd=str(ROOT), args=[
        *VAULTWATCH[1:], "serve", str(demo_vault), "--stdio", "--compat", "obsidian-mcp", "--as-of", "2026-11-29",
        "--audit-log", str(audit)])
    async with Client(params, mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"list_documents", "obsidian_list_notes"} <= names and "vault_list_notes" not in names
        triage = await client.call_tool("triage", {})
        assert triage.structured_content["counts"]["stale"] == 8
    (line,) = audit.read_text().splitlines()
    assert json.loads(line)["tool"] == "triage"


@pytest.mark.parametrize("client", ["claude-desktop", "cursor", "vscode"])
def test_mcp_config_json_runs_the_bridge(client, tmp_path):
    out = run("mcp-config", str(tmp_path), "--client", client)
    assert out.returncode == 0, out.stderr
    config = json.loads(out.stdout)
    entry = (config["servers"] if client == "vscode" else config["mcpServers"])["vaultwatch"]
    assert entry["args"][-3:] == ["bridge", "--vault", str(tmp_path.resolve())]
    assert entry["command"].startswith("/")


def test_mcp_config_claude_code_and_http(tmp_path, monkeypatch, sock_dir):
    out = run("mcp-config", str(tmp_path), "--client", "claude-code")
    assert out.stdout.startswith("claude mcp add vaultwatch -- /") and "bridge --vault" in out.stdout
    http = run("mcp-config", str(tmp_path), "--client", "vscode", "--http", "127.0.0.1:8765",
               env={"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(sock_dir)})
    entry = json.loads(http.stdout)["servers"]["vaultwatch"]
    assert entry["type"] == "http" and entry["url"] == "http://127.0.0.1:8765/mcp"
    assert entry["headers"]["Authorization"].startswith("Bearer ") and len(entry["headers"]["Authorization"]) > 40
    everything = run("mcp-config", str(tmp_path))
    assert everything.stdout.count("# ") == 4
