"""No product module touches another vaultwatch module's private names.

ARCHITECTURE.md's rule, checked on the source of core, mcp_server and tui with `ast`:
- `from X import _name` where X is another vaultwatch module (absolute or relative);
- `m._name` where `m` names another vaultwatch module (`import vaultwatch.core.x as m`,
  `from vaultwatch.core.edit import effects as m`);
- `obj._name` on any other object when `_name` is not defined in this module but is defined in
  another vaultwatch module (a private method, attribute or field of its classes), and any
  `obj._name = ...` that sets a private attribute this module does not define.

A module's own names are fine (its functions may use its classes' private members), and so are
`self._x`, `cls._x` and `super()._x` (a class and its subclasses), dunder names, and other
libraries' names (which `mcp_server/sdk.py` alone reaches into, version-checked).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "mcp_server", "tui")


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("vaultwatch", *parts))


def product_files() -> list[Path]:
    files = [p for top in PACKAGES for p in (ROOT / top).rglob("*.py") if "demo_vault" not in p.parts]
    return sorted(files + sorted((ROOT / "vaultwatch").glob("*.py")))


def absolute(module: str | None, level: int, here: str, is_package: bool) -> str:
    """The full name of `from <level dots><module> import ...` written in module `here`."""
    if not level:
        return module or ""
    base = here.split(".")
    base = base[: len(base) - level + (1 if is_package else 0)]
    return ".".join([*base, module] if module else base)


def own_names(tree: ast.Module) -> set[str]:
    """Private names this module defines: its top-level names, its classes' members and fields,
    and the attributes its code sets on `self` or `cls`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return {n for n in names if is_private(n)}


def is_own_object(value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


def module_aliases(tree: ast.Module, here: str, is_package: bool, modules: set[str]) -> dict[str, str]:
    """Local names bound to vaultwatch modules: `import vaultwatch.x as m`, `from pkg import module`."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    out[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = absolute(node.module, node.level, here, is_package)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in modules:
                    out[alias.asname or alias.name] = full
    return out


def violations(sources: dict[Path, str]) -> Iterator[str]:
    """Each use of another module's private name in `sources` ({file under ROOT: its text})."""
    files = sorted(sources)
    trees = {p: ast.parse(sources[p], str(p)) for p in files}
    modules = {module_name(p) for p in files}
    defined: dict[str, set[str]] = {module_name(p): own_names(t) for p, t in trees.items()}
    for path, tree in trees.items():
        here = module_name(path)
        is_package = path.name == "__init__.py"
        mine = defined[here]
        elsewhere = set().union(*(names for mod, names in defined.items() if mod != here)) - mine
        aliases = module_aliases(tree, here, is_package, modules)
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = absolute(node.module, node.level, here, is_package)
                if source.startswith("vaultwatch") and source != here:
                    for alias in node.names:
                        if is_private(alias.name):
                            yield f"{where}:{node.lineno}: from {source} import {alias.name}"
            elif isinstance(node, ast.Attribute) and is_private(node.attr):
                value = node.value
                if isinstance(value, ast.Name) and value.id in aliases:
                    yield f"{where}:{node.lineno}: {value.id}._{node.attr[1:]} ({aliases[value.id]}'s private name)"
                elif isinstance(value, ast.Attribute) and ast.unparse(value) in modules - {here}:
                    yield f"{where}:{node.lineno}: {ast.unparse(node)} (a module's private name)"
                elif is_own_object(value):
                    continue
                elif node.attr in elsewhere:
                    yield f"{where}:{node.lineno}: {ast.unparse(node)} (a private name of another module)"
                elif isinstance(node.ctx, ast.Store | ast.Del) and node.attr not in mine:
                    yield f"{where}:{node.lineno}: {ast.unparse(node)} = ... (sets a private attribute it does not own)"


def test_the_check_sees_every_product_module() -> None:
    names = {module_name(p) for p in product_files()}
    assert {"vaultwatch.core.vault", "vaultwatch.mcp_server.server", "vaultwatch.tui.app"} <= names
    assert not any("demo_vault" in n for n in names)


def test_the_check_finds_each_kind_of_use() -> None:
    owner = ROOT / "core" / "owner_example.py"
    user = ROOT / "core" / "edit" / "user_example.py"
    sources = {
        owner: "_LIMIT = 1\n\nclass Thing:\n    def __init__(self):\n        self._state = 0\n\n    def _step(self):\n"
        "        return self._state\n",
        user: "import vaultwatch.core.owner_example\n"
        "from .. import owner_example as owner\n"
        "from ..owner_example import _LIMIT\n"
        "from vaultwatch.core.owner_example import Thing\n\n"
        "def use(thing: Thing, other):\n"
        "    owner._LIMIT\n"
        "    vaultwatch.core.owner_example._LIMIT\n"
        "    thing._step()\n"
        "    other._mine = 1\n"
        "    thing.__class__\n"
        "    return _Own()._x\n\n"
        "class _Own:\n    _x = 1\n\n    def go(self):\n        return self._x, super()._y\n",
    }
    found = [line.split(": ", 1)[1] for line in violations(sources)]
    assert sorted(found) == sorted(
        [
            "from vaultwatch.core.owner_example import _LIMIT",
            "owner._LIMIT (vaultwatch.core.owner_example's private name)",
            "vaultwatch.core.owner_example._LIMIT (a module's private name)",
            "thing._step (a private name of another module)",
            "other._mine = ... (sets a private attribute it does not own)",
        ]
    )


def test_no_product_module_touches_another_modules_private_names() -> None:
    found = list(violations({p: p.read_text(encoding="utf-8") for p in product_files()}))
    assert found == [], "private names of other modules used:\n" + "\n".join(found)
