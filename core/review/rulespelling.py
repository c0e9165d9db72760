"""Rules spelled so that they cover nothing (or not what they plainly mean): said, never mended.

    spelled = rules_of(applied.folders, applied.agents)   # (pattern, rule as written, grants) for every rule
    notices(spelled, root_real, origin)                    # one notice per rule spelled amiss

A rule is a glob over vault paths, which are relative to the vault's top folder and separated by
`/` (core.review.rulereach). Some spellings can never match such a path, and so protect (or grant)
nothing without a word: a Windows path (`Templates\\**`), a path climbing out of the vault
(`../Templates/**`), the vault's own absolute path (`/home/me/Vault/Templates/**`), spaces around
the rule (`"Templates/** "`). An empty rule covers the whole vault, which is seldom what was meant.
Each is reported, with the spelling meant where it is plain, as core.review.rulefolders reports a
rule naming a folder the vault lacks. The rule itself is left as the person wrote it: a rule
rewritten behind their back could widen or narrow what an agent may do. (A restricting rule is
also applied as plainly meant, rulereach.readings, so it never covers less than written.)
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from vaultwatch.core.review import rulereach
from vaultwatch.core.review.agentrules import AgentRules

Spelled = tuple[str, str, bool]  # (the pattern, the rule as the person wrote it, whether it grants)


def rules_of(folders: Iterable[tuple[str, str]], agents: AgentRules) -> list[Spelled]:
    """Every rule with a glob: the folder rules and each agent's `write` (grants) and `deny`."""
    out: list[Spelled] = [(pattern, f'rule "{pattern}" = "{mode}"', mode == "none") for pattern, mode in folders]
    for rule in agents.rules.values():
        where = rule.source or f'[agents."{rule.name}"]'
        for key, patterns in (("write", rule.write or ()), ("deny", rule.deny)):
            out.extend((pattern, f'{where} {key} "{pattern}"', key == "write") for pattern in patterns)
    return out


def _levels(pattern: str) -> tuple[list[str], int]:
    """The pattern's levels as rulereach reads them (empty levels and `.` dropped, `..` taking back
    the level before it), and how many `..` climb above the vault's top folder."""
    levels: list[str] = []
    above = 0
    for level in pattern.split("/"):
        if level in ("", "."):
            continue
        if level == "..":
            if levels:
                levels.pop()
            else:
                above += 1
            continue
        levels.append(level)
    return levels, above


def _inside(pattern: str, root: str) -> str | None:
    """For an absolute pattern naming a path inside the vault at `root`: that path relative to the
    vault ("" for the vault itself); else None (`/Templates/**` is the vault's own `Templates`)."""
    levels, _ = _levels(pattern)
    literal: list[str] = []
    for level in levels:
        if any(c in level for c in "*?["):
            break
        literal.append(level)
    if not literal or not root:
        return None
    absolute = os.path.realpath(os.path.join(os.sep, *literal))
    if absolute != root and not absolute.startswith(root.rstrip(os.sep) + os.sep):
        return None
    rest = os.path.relpath(absolute, root).replace(os.sep, "/")
    return "/".join([*([] if rest == "." else [rest]), *levels[len(literal) :]])


def _outside(pattern: str, root: str) -> bool:
    """Whether an absolute pattern plainly names a folder outside the vault: its first level is no
    name in the vault but a folder at the top of the file system (`/home`, `/Users`)."""
    levels, _ = _levels(pattern)
    if not levels or any(c in levels[0] for c in "*?["):
        return False
    first = levels[0]
    return not os.path.lexists(os.path.join(root, first)) and os.path.isdir(os.path.join(os.sep, first))


def problem(pattern: str, grants: bool, root: str) -> str | None:
    """What is amiss with a rule's spelling, and what to write instead, or None when nothing is.
    `root`: the vault's real path ("" when unknown: absolute paths are then not judged)."""
    if pattern == "":
        return 'names no folder, so it covers the whole vault: write "**" if that is meant, or remove it'
    meant = rulereach.plain(pattern)
    if "\\" in pattern:
        said = 'covers nothing as written: a vault path\'s folders are separated by "/", not "\\"'
        if meant and not grants:
            said += f' (it is applied as "{meant}" too, so it protects no less)'
        return said + (f': write it as "{meant}"' if meant else "")
    if meant is not None:
        said = "covers only names that begin or end with a space, which is seldom meant"
        if not grants:
            said += f' (it is applied as "{meant}" too, so it protects no less)'
        return said + f': write it as "{meant}"'
    levels, above = _levels(pattern)
    if above:
        fixed = "/".join(levels) or "**"
        return (
            'covers nothing: ".." climbs out of the vault, and rules are paths from its top folder: '
            f'write it as "{fixed}"'
        )
    if pattern.startswith("/") and root:
        inside = _inside(pattern, root)
        if inside is not None:
            fixed = inside or "**"
            return f'covers nothing: rules are paths from the vault\'s top folder, not absolute paths: write it as "{fixed}"'
        if _outside(pattern, root):
            return "covers nothing: it names a path outside this vault (rules are paths from the vault's top folder)"
    return None


def notices(spelled: Iterable[Spelled], root: str, origin: str = "settings file") -> list[str]:
    """One notice per rule spelled amiss, for where settings problems are said."""
    out = []
    for pattern, rule, grants in spelled:
        said = problem(pattern, grants, root)
        if said is not None:
            out.append(f"{origin}: {rule} {said}")
    return out


def amiss(spelled: Iterable[Spelled], root: str) -> frozenset[str]:
    """The patterns spelled amiss (their folder is not judged again: core.review.rulefolders)."""
    return frozenset(pattern for pattern, _, grants in spelled if problem(pattern, grants, root) is not None)


__all__ = ["Spelled", "amiss", "notices", "problem", "rules_of"]
