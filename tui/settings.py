"""The person's settings file: `$XDG_CONFIG_HOME/vaultwatch/settings.toml` (the same file whose
`[approve]` table core.approval reads).

    [tui]
    theme = "textual-light"        # kept up to date when a theme is picked (ctrl+p › Theme)
    vault = "~/Notes"              # the vault `vaultwatch` opens when none is named
    tree_width = 32                # the folder tree's width, kept when it is resized (< and >)

    [keymap]                       # binding id = keys (comma-separated), as Textual's set_keymap
    "list.sort" = "S"
    "app.filter" = "slash,ctrl+f"

Binding ids are listed in the help screen (`?`) and the README. Reading never fails: a file
that does not parse, a value of the wrong type or an unknown binding id is reported and the
rest is used. Writing the theme (or the tree's width) changes only that line of `[tui]`
(comments, other tables and their order stay as they are), checks the result parses, and
replaces the file atomically.
"""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, field

from vaultwatch.core.disk.private import private_folder
from vaultwatch.core.review.approval import settings_path

_TABLE = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")
TREE_WIDTHS = (12, 80)  # the folder tree's narrowest and widest


@dataclass(frozen=True, slots=True)
class Settings:
    """What the file says (absent keys: None or empty) and what was wrong in it."""

    path: str
    theme: str | None = None
    vault: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    tree_width: int | None = None


def load(path: str | None = None) -> Settings:
    """Read the settings file (absent: all defaults). Never raises."""
    path = path or settings_path()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return Settings(path)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return Settings(path, problems=(f"{path} is not used: {exc}; fix or remove it",))
    problems: list[str] = []
    tui = data.get("tui", {})
    if not isinstance(tui, dict):
        problems.append("[tui] must be a table")
        tui = {}
    theme, vault = tui.get("theme"), tui.get("vault")
    for name, value in (("theme", theme), ("vault", vault)):
        if value is not None and not (isinstance(value, str) and value.strip()):
            problems.append(f"[tui] {name} must be a non-empty string")
    theme = theme if isinstance(theme, str) and theme.strip() else None
    vault = os.path.expanduser(vault) if isinstance(vault, str) and vault.strip() else None
    tree_width = tui.get("tree_width")
    if tree_width is not None and not (
        isinstance(tree_width, int)
        and not isinstance(tree_width, bool)
        and TREE_WIDTHS[0] <= tree_width <= TREE_WIDTHS[1]
    ):
        problems.append(f"[tui] tree_width must be a whole number from {TREE_WIDTHS[0]} to {TREE_WIDTHS[1]}")
        tree_width = None
    keymap: dict[str, str] = {}
    table = data.get("keymap", {})
    if not isinstance(table, dict):
        problems.append('[keymap] must be a table of binding id = "keys"')
        table = {}
    for binding_id, keys in table.items():
        if isinstance(keys, str) and keys.strip():
            keymap[binding_id] = keys.replace(" ", "")
        else:
            problems.append(f'[keymap] {binding_id} must be keys in a string, e.g. "ctrl+f"')
    return Settings(path, theme, vault, keymap, tuple(f"{path}: {p}" for p in problems), tree_width)


def with_theme(text: str, theme: str) -> str:
    """`text` (a settings file) with `[tui] theme` set to `theme`, everything else unchanged."""
    return with_tui(text, "theme", _quote(theme))


def with_tui(text: str, name: str, value: str) -> str:
    """`text` (a settings file) with `[tui] name` set to `value` (a TOML literal), everything
    else unchanged."""
    line = f"{name} = {value}"
    key = re.compile(rf"^\s*{re.escape(name)}\s*=")
    lines = text.splitlines(keepends=True)
    table = None
    for i, raw in enumerate(lines):
        m = _TABLE.match(raw)
        if m:
            if table is not None:  # [tui] had no theme line: add one at its end
                return "".join(lines[: _end_of(lines, table, i)] + [line + "\n"] + lines[_end_of(lines, table, i) :])
            table = i if m.group(1).strip() == "tui" else None
            continue
        if table is not None and key.match(raw):
            lines[i] = line + ("\n" if raw.endswith("\n") else "")
            return "".join(lines)
    if table is not None:
        end = "" if not text or text.endswith("\n") else "\n"
        return text + end + line + "\n"
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}[tui]\n{line}\n"


def _end_of(lines: list[str], start: int, next_table: int) -> int:
    """Where a new line of the table at `start` goes: after its last non-blank line."""
    end = next_table
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1
    return end


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def save_theme(theme: str, path: str | None = None) -> str | None:
    """Persist the theme; None when written, else why not (the file is left as it was)."""
    return save_tui("theme", _quote(theme), path)


def save_tree_width(width: int, path: str | None = None) -> str | None:
    """Persist the folder tree's width; None when written, else why not."""
    return save_tui("tree_width", str(int(width)), path)


def save_tui(name: str, value: str, path: str | None = None) -> str | None:
    """Persist `[tui] name = value` (a TOML literal); None when written, else why not (the file
    is left as it was)."""
    path = path or settings_path()
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path} cannot be read: {exc}"
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return f"{path} does not parse ({exc}): the {name.replace('_', ' ')} was not saved"
    new = with_tui(text, name, value)
    if new == text:
        return None
    try:
        tomllib.loads(new)
        folder = os.path.dirname(path)
        private_folder(folder)
        fd, tmp = tempfile.mkstemp(prefix=".settings.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(new)
                fh.flush()
                os.fsync(fh.fileno())
            if os.path.exists(path):
                os.chmod(tmp, os.stat(path).st_mode & 0o600)  # the person's own, never other users'
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return f"{path} cannot be written: {exc}"
    return None


def binding_ids() -> set[str]:
    """Every binding id the app's screens, widgets and dialogs declare (for checking a keymap)."""
    from textual.dom import DOMNode  # noqa: PLC0415

    from vaultwatch.tui.flows import review  # noqa: F401, PLC0415  (the lazily loaded dialogs declare theirs too)
    from vaultwatch.tui.screens import asof, help, triage  # noqa: F401, PLC0415

    ids: set[str] = set()
    todo = [DOMNode]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("vaultwatch.tui."):
            ids.update(b.id for b in getattr(cls, "BINDINGS", ()) if getattr(b, "id", None))
    return ids
