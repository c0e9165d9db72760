"""Tables and keys of the person's settings file that vaultwatch does not read: said, and where
they would hold a rule, agents' changes refused until they are fixed.

    notices = judge(data, vault_root, origin)   # VaultError for an unknown key where rules are

A misspelt or misplaced table (`[approve.folder]`, `[vaults."~/Notes".approve.folders]`) parses as
TOML, so nothing else notices it, and the person believes a rule protects a folder when none does.
A person who typed a rule meant it: so an unknown table or key under `[approve]`, `[agents]`, this
vault's `[vaults."PATH"]` table, or at the top of the file but nearest a rules table (`[aprove]`,
`mode = ...` above `[approve]`), or at the top holding what reads as a rule whatever its name
(`[never]` with `"Finance/**" = "never"`: `_holds_rule`), refuses agents' changes, as a value of the wrong type there does
(the gate's `problem`), saying what is wrong and the name meant. Anywhere else (`[tui]`, a table
near no rules table) it is only said, where the rules' notices are said. The triage tables check
their own keys (core.query.triagerules), and another vault's `[vaults."PATH"]` table is that
vault's to judge (it is refused there).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from vaultwatch.core import settings
from vaultwatch.core.disk.vaultkeys import same_folder, vault_folder
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review.policy import FOLDER_MODES, NEVER

RULE_TABLES = ("approve", "agents", "vaults")
CHECKED_ELSEWHERE = ("triage",)  # its reader refuses an unknown key itself


class UnknownSetting(VaultError):
    """An unknown table or key where rules are: agents' changes are refused until it is fixed.
    `brief`: the problem in a few words, for a status line (the file parses; saying it does not
    would send the person looking for a syntax error)."""

    def __init__(self, message: str, brief: str) -> None:
        super().__init__(message)
        self.brief = brief


def judge(data: Mapping[str, Any], vault_root: str | None, origin: str) -> tuple[str, ...]:
    """The notices for the unknown tables and keys that hold no rule of this vault; VaultError for
    the first that would (see the module doc)."""
    mine = os.path.realpath(vault_root) if vault_root else None
    notices: list[str] = []
    for found in settings.unknown_keys(data):
        parents = found.parents
        top = parents[0] if parents else None
        if top == "vaults":
            if len(parents) < 2 or not mine or not _is_mine(mine, parents[1], origin):
                continue  # another vault's table (or `[vaults] x = 1`, which the agent rules refuse)
            if len(parents) > 2 and parents[2] in CHECKED_ELSEWHERE:
                continue
            if len(parents) == 2 and found.name == "approve":
                raise UnknownSetting(_per_vault_approve(origin, parents[1]), f"{found.where} is not supported")
            raise UnknownSetting(_refused(origin, found), _brief(found))
        if top in CHECKED_ELSEWHERE:
            continue
        meant_rules = found.meant is not None and found.meant.startswith(tuple(f"[{t}" for t in RULE_TABLES))
        if top in RULE_TABLES or top is None and (meant_rules or _holds_rule(found.name, _value(data, found))):
            raise UnknownSetting(_refused(origin, found), _brief(found))
        notices.append(
            f"{origin}: {found.where} is not a setting vaultwatch knows{_did_you_mean(found)}: it is ignored"
        )
    return tuple(notices)


def _value(data: Mapping[str, Any], found: settings.UnknownKey) -> Any:
    node: Any = data
    for part in (*found.parents, found.name):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _holds_rule(key: str, value: Any, depth: int = 0) -> bool:
    """Whether an unknown key or table holds what reads as a rule the person typed, whatever its name:
    a folder rule (`"Finance/**" = "never"`, a path or glob set to a folder mode, or anything set to
    "never") or an agent's (`deny` or `write` as a list of globs, `read_only = true`). A table named far
    from every rules table (`[never]`, `[protect]`, a folder rule above the file's first table) would
    otherwise only be said, and the person would believe the folder protected. Asked only of what lies
    at the top of the file: an unknown key in a table vaultwatch reads elsewhere (`[tui]`) is only said."""
    if isinstance(value, Mapping):
        return depth < 8 and any(_holds_rule(str(k), v, depth + 1) for k, v in value.items())
    if key in ("deny", "write"):
        return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    if key == "read_only":
        return value is True
    pathlike = any(c in key for c in "/*?")
    return (value == NEVER and (depth > 0 or pathlike)) or (value in FOLDER_MODES and pathlike)


def _is_mine(mine: str, key: str, origin: str) -> bool:
    try:
        return same_folder(mine, vault_folder(key, origin))
    except VaultError:  # a relative key: the agent rules refuse it
        return False


def _brief(found: settings.UnknownKey) -> str:
    return f"unknown {'table' if found.table else 'key'} {found.where}"


def _did_you_mean(found: settings.UnknownKey) -> str:
    return f" (did you mean {found.meant}?)" if found.meant else ""


def _refused(origin: str, found: settings.UnknownKey) -> str:
    where = (
        ""
        if found.meant
        else " (folder rules go in [approve.folders], an agent's in [agents.NAME] or this vault's "
        '[vaults."PATH".agents.NAME])'
    )
    return (
        f"{origin}: {found.where} is not a setting vaultwatch knows{_did_you_mean(found)}, so the rules "
        f"written there are not applied{where}: correct the name, or remove it"
    )


def _per_vault_approve(origin: str, key: str) -> str:
    # folder rules for one vault alone would need their own answer to every question the global
    # ones answer (the mode `g` chooses, the status line, a vault inside another); until then the
    # rules the person wrote there must not be taken as applied
    return (
        f'{origin}: [vaults."{key}".approve] is not supported: approval and folder rules are global '
        "([approve] and [approve.folders] apply in every vault, to the folders each has). Move the folder "
        f'rules to [approve.folders], or keep agents out of a folder of this vault alone with [vaults."{key}"'
        '.agents.NAME] deny = ["Folder/**"] (agents.default: every agent without a table of its own); then '
        f'remove [vaults."{key}".approve]'
    )


__all__ = ["UnknownSetting", "judge"]
