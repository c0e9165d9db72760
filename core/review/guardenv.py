"""The parts of a process's environment that decide how the guard judges agents' changes.

A vault has one server, and every bridge of the vault shares it, whichever client started it.
The rules it applies come from the settings file its environment names, its journal and pending
changes live in the state folder its environment names, and a few `VAULTWATCH_*` variables turn
the journal off or move its limits. A bridge whose own environment names other ones would put its
agent under rules the person did not write for it: the server refuses such a bridge
(mcp_server/sameenv.py) instead of serving it quietly under its own.

Standard library and core.settings only: the bridge, which must start fast, computes its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from vaultwatch.core import settings

# what the guard reads from the environment besides the two folders (the journal's switch and
# limits, the pending store's limits, and the platform switches that change how names compare)
GUARD_VARIABLES = (
    "VAULTWATCH_JOURNAL",
    "VAULTWATCH_JOURNAL_MAX_CHANGES",
    "VAULTWATCH_JOURNAL_MAX_MB",
    "VAULTWATCH_JOURNAL_KEEP_DAYS",
    "VAULTWATCH_JOURNAL_AGENT_SHARE",
    "VAULTWATCH_PENDING_MAX_CHANGES",
    "VAULTWATCH_PENDING_MAX_MB",
    "VAULTWATCH_PENDING_AGENT_SHARE",
    "VAULTWATCH_PLATFORM_OFF",
    "VAULTWATCH_PLATFORM_FOLDS_CASE",
)

SETTINGS_FILE = "settings file"
STATE_FOLDER = "state folder"
HOME_FOLDER = "home folder"  # what `~` in the settings file's `[vaults."~/..."]` tables means

# which variables move each folder, for the person reading a refusal
_MOVED_BY = {SETTINGS_FILE: "XDG_CONFIG_HOME or HOME", STATE_FOLDER: "XDG_STATE_HOME or HOME", HOME_FOLDER: "HOME"}


def settings_path() -> str:
    """`$XDG_CONFIG_HOME/vaultwatch/settings.toml` (default `~/.config/vaultwatch/settings.toml`)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "vaultwatch", "settings.toml")


def state_dir() -> str:
    """`$XDG_STATE_HOME/vaultwatch`, or `~/.local/state/vaultwatch` when unset or relative."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "vaultwatch")


def guard_environment() -> dict[str, str]:
    """This process's guard environment: the two folders by their real paths (two spellings of one
    folder are one), each variable by its parsed value (unset and its default are one)."""
    found = {
        SETTINGS_FILE: os.path.realpath(settings_path()),
        STATE_FOLDER: os.path.realpath(state_dir()),
        HOME_FOLDER: os.path.realpath(os.path.expanduser("~")),
    }
    for name in GUARD_VARIABLES:
        value = settings.env(name)
        found[name] = (
            ("on" if value else "off") if isinstance(value, bool) else "default" if value is None else str(value)
        )
    return found


def encoded(environment: Mapping[str, str]) -> str:
    """The environment as an HTTP header value can carry it (ASCII JSON, keys sorted)."""
    return json.dumps(dict(environment), ensure_ascii=True, sort_keys=True, separators=(",", ":"))


def decoded(text: str) -> dict[str, str] | None:
    """The environment `encoded` wrote, or None when `text` is not one."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return None
    return value


def differences(server: Mapping[str, str], client: Mapping[str, str]) -> list[str]:
    """What differs between the server's guard environment and a client's, one phrase each. A key
    only one side knows (another vaultwatch version) is not a difference."""
    said = []
    for key in sorted(server.keys() & client.keys()):
        if server[key] != client[key]:
            moved = f" ({_MOVED_BY[key]})" if key in _MOVED_BY else ""
            said.append(f"{key}{moved}: {server[key]!r} in the server, {client[key]!r} for this client")
    return said
