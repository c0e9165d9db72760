"""core/ never imports textual, mcp or the front ends: the import-linter contracts, a fresh
interpreter's sys.modules after importing every core module, and the source's import statements."""

from __future__ import annotations

import ast
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import vaultwatch.core as core

ROOT = Path(__file__).resolve().parents[2]
CORE = Path(core.__file__).resolve().parent
FORBIDDEN = ("textual", "mcp", "vaultwatch.mcp_server", "vaultwatch.tui", "uvicorn", "starlette")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def core_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages([str(CORE)], prefix="vaultwatch.core."))


def test_core_has_modules() -> None:
    mods = core_modules()
    assert {
        "vaultwatch.core.disk.paths",
        "vaultwatch.core.query.glob",
        "vaultwatch.core.query.listing",
        "vaultwatch.core.index.scan",
        "vaultwatch.core.vault",
    } <= set(mods)


def test_every_package_is_in_the_wheel() -> None:
    """pyproject lists the packages by name: a subpackage missing there installs as nothing."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(("vaultwatch", *p.parent.relative_to(ROOT).parts))
        for top in ("core", "mcp_server", "tui")
        for p in (ROOT / top).rglob("__init__.py")
        if "demo_vault" not in p.parts
    }
    assert found - listed == set()


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed in this environment")
def test_import_linter_contracts_are_kept() -> None:
    proc = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "core never imports textual, mcp or the front ends KEPT" in output
    assert "core's layers import only the layers below them KEPT" in output
    assert "broken" in output and " 0 broken" in output


def test_fresh_interpreter_importing_core_loads_no_front_end() -> None:
    script = (
        "import importlib, json, sys\n"
        f"mods = {core_modules()!r}\n"
        "for m in mods:\n"
        "    importlib.import_module(m)\n"
        f"bad = sorted(n for n in sys.modules if any(n == f or n.startswith(f + '.') for f in {FORBIDDEN!r}))\n"
        "print(json.dumps({'imported': len(mods), 'bad': bad}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    import json

    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["imported"] == len(core_modules())
    assert result["bad"] == []


def _imported_names(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):  # every import, including lazy ones inside functions
        if isinstance(node, ast.Import):
            names.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.append((node.lineno, str(node.args[0].value)))
    return names


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_core_source_never_names_a_front_end(path: Path) -> None:
    bad = [(line, name) for line, name in _imported_names(path) if _forbidden(name)]
    assert bad == [], f"{path.name} imports {bad}"


def test_the_ast_check_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f():\n    import textual.app\n    from mcp import types\n"
        "    importlib.import_module('vaultwatch.tui.app')\n"
    )
    names = [n for _, n in _imported_names(sample)]
    assert names == ["textual.app", "mcp", "vaultwatch.tui.app"]
    assert all(_forbidden(n) for n in names)
