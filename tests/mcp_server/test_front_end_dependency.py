"""mcp_server depends on the TUI only through the installed distribution, never by a module name.

The import contract (pyproject.toml) sees imports, not strings: a `python -m vaultwatch.tui...`
written into mcp_server would be a dependency on the TUI it cannot see. The headless server is
started through the distribution's `vaultwatch` console script (launch.vaultwatch_command, see
test_platform_peercred.py), and the command written into clients' configurations is that
script or the distribution's package (`python -m vaultwatch`).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from vaultwatch.mcp_server import config

MCP_SERVER = Path(__file__).resolve().parents[2] / "mcp_server"


def code_strings(tree: ast.Module) -> list[ast.Constant]:
    """The string constants of a module, its docstrings (prose) left out."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_mcp_server_names_no_tui_module_in_its_code() -> None:
    found = [
        f"{path.relative_to(MCP_SERVER.parent)}:{node.lineno}: {node.value!r}"
        for path in sorted(MCP_SERVER.rglob("*.py"))
        for node in code_strings(ast.parse(path.read_text(encoding="utf-8")))
        if "vaultwatch.tui" in node.value
    ]
    assert found == [], "mcp_server names a TUI module the import contract cannot see:\n" + "\n".join(found)


def test_the_clients_command_without_the_console_script_starts_vaultwatch(monkeypatch) -> None:
    """Where no `vaultwatch` script sits beside the interpreter, the configuration names the
    distribution's package; that command is the whole program."""
    script = os.path.join(os.path.dirname(sys.executable), "vaultwatch")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if path == script else real_access(path, mode))
    command = config.command()
    assert command[0] == sys.executable and not any("tui" in part for part in command), command
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0 and done.stdout.startswith("vaultwatch "), done
