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

from vaultwatch.core.review.guardenv import GUARD_VARIABLES, settings_path, state_dir

COMPAT_SETS = ("vault-cortex", "obsidian-mcp")
CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode", "codex", "gemini", "windsurf", "zed")
TOKEN_ENV = "VAULTWATCH_TOKEN"  # where the URL forms read the bearer token from (kept out of config files)
CODEX_STARTUP_TIMEOUT = 30  # seconds; Codex CLI's default is 10, less than a cold start of a big vault
WHERE = {
    "claude-desktop": (
        "Claude Desktop: merge into claude_desktop_config.json (macOS: ~/Library/Application Support/"
        "Claude/, Linux: ~/.config/Claude/), then restart Claude Desktop"
    ),
    "claude-code": "Claude Code: run this command in your project (add --scope user for every project)",
    "cursor": "Cursor: merge into ~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
    "vscode": "VS Code: merge into .vscode/mcp.json in your workspace (or the user mcp.json)",
    "codex": "Codex CLI: append to ~/.codex/config.toml (or .codex/config.toml in a trusted project)",
    "gemini": "Gemini CLI: merge into ~/.gemini/settings.json (or .gemini/settings.json in a project)",
    "windsurf": "Windsurf: merge into ~/.codeium/windsurf/mcp_config.json, then refresh the MCP servers",
    "zed": "Zed: merge into your settings.json (zed: open settings file)",
}
# HTTP forms that read the token from the environment (TOKEN_ENV) instead of holding it, per client docs:
# VS Code prompts once (`inputs`); Cursor and Windsurf expand ${env:NAME}; Gemini CLI expands $NAME in
# settings strings; Codex reads bearer_token_env_var; Claude Code's shell expands $NAME at `claude mcp add`.
# Zed documents no expansion: its form holds the token (Zed's settings.json is a user file, not a project's).
ENV_TOKEN_CLIENTS = frozenset({"vscode", "cursor", "windsurf", "gemini", "codex", "claude-code"})


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


def check_agent(name: str) -> str:
    """Validate `--agent`: the name the person's agent rules know this client by."""
    if name and (len(name) > 64 or not name.isprintable() or "/" in name or name != name.strip()):
        raise ValueError(f"--agent {name!r}: use up to 64 printable characters without '/' or surrounding spaces")
    return name


def serve_args(options: dict) -> list[str]:
    """The `serve` arguments that give a server started later (a hand-back) the same options."""
    from .budget import DEFAULT_ANSWER_BYTES

    out = []
    if options.get("tool_prefix"):
        out += ["--tool-prefix", options["tool_prefix"]]
    if options.get("max_answer_bytes", DEFAULT_ANSWER_BYTES) != DEFAULT_ANSWER_BYTES:
        out += ["--max-answer-bytes", str(options["max_answer_bytes"])]
    return out


def command() -> list[str]:
    """How a client should start vaultwatch: the absolute path of the console script when installed,
    else the distribution's package (`python -m vaultwatch`, the same command line). Never a TUI
    module by name: mcp_server may not depend on the TUI but through the distribution."""
    script = os.path.join(os.path.dirname(sys.executable), "vaultwatch")
    if os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "vaultwatch"]


def pinned_env() -> dict[str, str]:
    """What the bridge needs from the environment, pinned in the config: clients spawn commands with a
    trimmed environment (no XDG_RUNTIME_DIR), so the socket, the settings file and the state folder
    named here stay the same, and so do the journal's and pending store's switches set here: a server
    the client's bridge starts applies your rules, not the defaults' (core/review/guardenv.py)."""
    pinned = (
        {"XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]}
        if os.path.isabs(os.environ.get("XDG_RUNTIME_DIR", ""))
        else {}
    )
    # the folders as this environment resolves them, defaults included: a client that gives its
    # bridge an XDG_CONFIG_HOME of its own (a sandboxed editor does) would else read no rules of yours
    pinned["XDG_CONFIG_HOME"] = os.path.dirname(os.path.dirname(settings_path()))
    pinned["XDG_STATE_HOME"] = os.path.dirname(state_dir())
    pinned.update({k: os.environ[k] for k in GUARD_VARIABLES if os.environ.get(k, "").strip()})
    return pinned


def _toml(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string is a JSON string for everything we emit
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def snippet(
    client: str,
    vault_root: str,
    *,
    http_url: str | None = None,
    token: str | None = None,
    inline_token: bool = False,
    tool_prefix: str = "",
    agent: str = "",
) -> str:
    """The configuration text for `client` in that client's documented format (JSON, TOML or a
    command line). With `http_url`, the URL form, reading the token from $VAULTWATCH_TOKEN where the
    client can (`inline_token` writes the token itself); Claude Desktop spawns commands only, so it
    always gets the bridge (which reaches the same server). `tool_prefix`: the bridge shows the
    client every tool as `<prefix><name>` (`bridge --tool-prefix`; URL forms need `serve --tool-prefix`).
    `agent`: the bridge presents the client under that name (`bridge --agent`), which the person's
    agent rules in settings.toml name."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: use one of {', '.join(CLIENTS)}")
    cmd = command()
    args = [
        *cmd[1:],
        "bridge",
        "--vault",
        vault_root,
        *(["--tool-prefix", check_prefix(tool_prefix)] if tool_prefix else []),
        *(["--agent", check_agent(agent)] if agent else []),
    ]
    env = pinned_env()
    if http_url and client != "claude-desktop":
        return _http_snippet(client, http_url, token, inline_token)
    if client == "claude-code":
        pins = [part for k, v in env.items() for part in ("--env", f"{k}={v}")]
        return shlex.join(["claude", "mcp", "add", *pins, "vaultwatch", "--", cmd[0], *args])
    if client == "codex":
        lines = [
            "[mcp_servers.vaultwatch]",
            f"command = {_toml(cmd[0])}",
            f"args = {_toml(args)}",
            f"startup_timeout_sec = {CODEX_STARTUP_TIMEOUT}",
        ]
        if env:
            lines += ["", "[mcp_servers.vaultwatch.env]", *(f"{k} = {_toml(v)}" for k, v in env.items())]
        return "\n".join(lines)
    entry: dict[str, object] = {"command": cmd[0], "args": args}
    if env:
        entry["env"] = env
    if client == "vscode":
        return json.dumps({"servers": {"vaultwatch": {"type": "stdio", **entry}}}, indent=2)
    if client == "zed":
        return json.dumps({"context_servers": {"vaultwatch": entry}}, indent=2)
    if client == "gemini":
        entry["timeout"] = 30000
    return json.dumps({"mcpServers": {"vaultwatch": entry}}, indent=2)


def _http_snippet(client: str, url: str, token: str | None, inline_token: bool) -> str:
    from_env = client in ENV_TOKEN_CLIENTS and not inline_token
    literal = f"Bearer {token}"
    if client == "vscode":
        if inline_token:
            return json.dumps(
                {"servers": {"vaultwatch": {"type": "http", "url": url, "headers": {"Authorization": literal}}}},
                indent=2,
            )
        return json.dumps(
            {
                "inputs": [
                    {
                        "type": "promptString",
                        "id": "vaultwatch-token",
                        "password": True,
                        "description": "vaultwatch bearer token (vaultwatch mcp-config --http ... --show-token)",
                    }
                ],
                "servers": {
                    "vaultwatch": {
                        "type": "http",
                        "url": url,
                        "headers": {"Authorization": "Bearer ${input:vaultwatch-token}"},
                    }
                },
            },
            indent=2,
        )
    if client == "claude-code":
        header = f"Authorization: Bearer ${TOKEN_ENV}" if from_env else f"Authorization: {literal}"
        text = shlex.join(["claude", "mcp", "add", "--transport", "http", "vaultwatch", url, "--header", header])
        return text.replace(shlex.quote(header), f'"{header}"') if from_env else text  # let the shell expand it
    if client == "codex":
        lines = ["[mcp_servers.vaultwatch]", f"url = {_toml(url)}"]
        lines.append(
            f"bearer_token_env_var = {_toml(TOKEN_ENV)}"
            if from_env
            else f"http_headers = {{ Authorization = {_toml(literal)} }}"
        )
        return "\n".join(lines)
    value = literal
    if from_env:
        value = "Bearer $" + TOKEN_ENV if client == "gemini" else "Bearer ${env:" + TOKEN_ENV + "}"
    key = {"gemini": "httpUrl", "windsurf": "serverUrl"}.get(client, "url")
    entry = {key: url, "headers": {"Authorization": value}}
    if client == "zed":
        return json.dumps({"context_servers": {"vaultwatch": entry}}, indent=2)
    return json.dumps({"mcpServers": {"vaultwatch": entry}}, indent=2)
