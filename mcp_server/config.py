"""Command-line configuration: the `--compat` sets, and ready-to-paste MCP client
configuration for a vault (`vaultwatch mcp-config`).

stdio clients get `vaultwatch bridge --vault VAULT`, which relays to the running app's
socket; URL clients get the loopback HTTP endpoint with its bearer token.
"""
from __future__ import annotations

import json
import os
import shlex
import sys

COMPAT_SETS = ("vault-cortex", "obsidian-mcp")
CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode")
WHERE = {
    "claude-desktop": ("Claude Desktop: merge into claude_desktop_config.json (macOS: ~/Library/Application Support/"
                       "Claude/, Linux: ~/.config/Claude/), then restart Claude Desktop"),
    "claude-code": "Claude Code: run this command in your project (add --scope user for every project)",
    "cursor": "Cursor: merge into ~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
    "vscode": "VS Code: merge into .vscode/mcp.json in your workspace (or the user mcp.json)",
}


def parse_compat(spec: str | None) -> frozenset[str]:
    """Parse `--compat a,b` into a set of known compatibility sets; ValueError names the known ones."""
    if not spec:
        return frozenset()
    names = {part.strip().lower() for part in spec.split(",") if part.strip()}
    unknown = names - set(COMPAT_SETS)
    if unknown:
        raise ValueError(f"unknown --compat set {', '.join(sorted(unknown))}: use {', '.join(COMPAT_SETS)}")
    return frozenset(names)


def check_prefix(prefix: str) -> str:
    """Validate `--tool-prefix`; ValueError says what is accepted."""
    if prefix and (len(prefix) > 32 or not prefix.isascii() or not prefix.replace("_", "").replace("-", "").isalnum()):
        raise ValueError(f"--tool-prefix {prefix!r}: use up to 32 ASCII letters, digits, '_' or '-' (e.g. vault_)")
    return prefix


def command() -> list[str]:
    """How a client should start vaultwatch: the absolute path of the console script when installed."""
    script = os.path.join(os.path.dirname(sys.executable), "vaultwatch")
    if os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "tui.cli"]


def snippet(client: str, vault_root: str, *, http_url: str | None = None, token: str | None = None) -> str:
    """The configuration text for `client`: JSON for the editors and Claude Desktop, a command for Claude Code."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: use one of {', '.join(CLIENTS)}")
    cmd = command()
    args = [*cmd[1:], "bridge", "--vault", vault_root]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if client == "claude-code":
        if http_url:
            return shlex.join(["claude", "mcp", "add", "--transport", "http", "vaultwatch", http_url,
                               "--header", f"Authorization: Bearer {token}"])
        return shlex.join(["claude", "mcp", "add", "vaultwatch", "--", cmd[0], *args])
    if client == "vscode":
        entry = ({"type": "http", "url": http_url, "headers": headers} if http_url
                 else {"type": "stdio", "command": cmd[0], "args": args})
        return json.dumps({"servers": {"vaultwatch": entry}}, indent=2)
    if http_url and client == "cursor":
        entry = {"url": http_url, "headers": headers}
    else:  # Claude Desktop spawns commands only: always the bridge
        entry = {"command": cmd[0], "args": args}
    return json.dumps({"mcpServers": {"vaultwatch": entry}}, indent=2)
