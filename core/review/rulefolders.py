"""Rules that name folders the vault does not have: said, never mended.

    named = named_folders(applied.folders, applied.agents)   # (folder, rule) for every rule's literal folder
    missing(root_real, named, form)                           # {folder: [rule, ...]} for those not on disk
    FolderWatch(...).look(moved=True)                          # says a rule's folder that went away since

A rule is a glob over paths (core.review.policy, core.review.agentrules): it names a folder by its
path, so when the person renames that folder (in Obsidian, with `mv`), the rule goes on naming the
old path and quietly matches nothing: a "never" folder is open again, an agent's only folder is
closed to it. Rules do not follow a rename by themselves: the settings file is the person's, and a
rule rewritten behind their back could widen or narrow what an agent may do without their word (and
a folder moved away and another made under its old name would take its protection). So a rule whose
literal folder part (the path segments before the first glob character, e.g. `Templates` of
`Templates/**`) names no folder of the vault is reported instead: as a settings notice when the
rules are read, and at once when a folder a rule names goes away while vaultwatch runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping

from vaultwatch.core.edit.effects import PathForm
from vaultwatch.core.review.agentrules import AgentRules

GLOB_CHARS = frozenset("*?[\\")

Named = tuple[str, str]  # (a rule's literal folder, the rule as the person wrote it)


def literal_folder(pattern: str) -> str | None:
    """The folder a glob names literally: its segments before the first one with a glob character,
    less the last segment (a file name or a pattern); None when it names none (`**/x`, `x.md`).
    Empty levels and `.` are passed over, as the rules read them (`./X/**` and `/X/**` name `X`)."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if part in ("", "."):
            continue
        if part == ".." or GLOB_CHARS.intersection(part):
            break
        literal.append(part)
    return "/".join(literal) or None


def named_folders(
    folders: Iterable[tuple[str, str]], agents: AgentRules, skip: Collection[str] = frozenset()
) -> list[Named]:
    """Every (literal folder, rule) of the folder rules and of each agent's `write` and `deny`;
    none for a pattern in `skip` (one spelled amiss, said as such: core.review.rulespelling)."""
    out: list[Named] = []
    for pattern, mode in folders:
        folder = None if pattern in skip else literal_folder(pattern)
        if folder:
            out.append((folder, f'rule "{pattern}" = "{mode}"'))
    for rule in agents.rules.values():
        where = rule.source or f'[agents."{rule.name}"]'
        for key, patterns in (("write", rule.write or ()), ("deny", rule.deny)):
            for pattern in patterns:
                folder = None if pattern in skip else literal_folder(pattern)
                if folder:
                    out.append((folder, f'{where} {key} "{pattern}"'))
    return out


def folder_exists(root: str, folder: str, form: PathForm) -> bool:
    """Whether `folder` is a folder of the vault at `root`, its name compared as the vault's file
    system compares (any Unicode form; any case where it folds case), as the rules match it."""
    here = root
    for part in folder.split("/"):
        exact = os.path.join(here, part)
        if os.path.isdir(exact):
            here = exact
            continue
        key = form.key(part)
        try:
            names = os.listdir(here)
        except OSError:
            return False
        found = next((n for n in names if form.key(n) == key and os.path.isdir(os.path.join(here, n))), None)
        if found is None:
            return False
        here = os.path.join(here, found)
    return True


def missing(root: str, named: Iterable[Named], form: PathForm) -> dict[str, list[str]]:
    """{folder: the rules naming it} for each named folder the vault does not have (none at all
    while the vault folder itself is gone: that is said elsewhere, and every rule would be named)."""
    if not os.path.isdir(root):
        return {}
    out: dict[str, list[str]] = {}
    known: dict[str, bool] = {}
    for folder, rule in named:
        key = form.key(folder)
        if key not in known:
            known[key] = folder_exists(root, folder, form)
        if not known[key]:
            out.setdefault(folder, []).append(rule)
    return out


def start_notices(
    gone: Mapping[str, list[str]], origin: str = "settings file", here: Collection[str] | None = None
) -> list[str]:
    """One notice per named folder the vault does not have, for where settings problems are said.
    `here`: the folders known to have been this vault's (None: all). Only for those is a rename
    the likely cause: a global rule naming a folder this vault never had is another vault's, and
    the advice to remove it would drop that vault's protection; it is said as such instead."""
    out = []
    for folder, rules in gone.items():
        matches = "it matches" if len(rules) == 1 else "they match"
        if here is None or folder in here:
            out.append(
                f"{origin}: {', '.join(rules)} names the folder {folder!r}, which this vault does not have: "
                f"{matches} nothing (rules do not follow a renamed folder: edit the rule to the folder's new "
                "name, or remove it)"
            )
        else:
            out.append(
                f"{origin}: {', '.join(rules)} names the folder {folder!r}, which this vault has never had: "
                f"{matches} nothing here (rules in [approve.folders] and [agents] apply in every vault, each "
                "to the folders it has; if the name is misspelt, correct it)"
            )
    return out


def own_rule(rule: str) -> bool:
    """Whether a rule as named_folders says it is written in this vault's own `[vaults."PATH"]`
    table (its folders are this vault's, so a missing one is renamed or misspelt here)."""
    return rule.startswith("[vaults.")


def gone_notice(folder: str, rules: list[str]) -> str:
    """The notice when a folder a rule names went away while vaultwatch runs."""
    return (
        f"{folder} was moved or removed: rules naming it match nothing now: {', '.join(rules)} "
        "(rules do not follow a renamed folder: edit settings.toml to its new name)"
    )


class FolderWatch:
    """Remembers which folders named by the rules were missing; `look` says those missing since.
    `named()` gives the rules as they are now; `say(message)` tells the person."""

    def __init__(
        self,
        root: str,
        form: PathForm,
        named: Callable[[], list[Named]],
        say: Callable[[str], None],
        here: Callable[[Mapping[str, list[str]]], Collection[str]] | None = None,
    ):
        self.root, self.form, self.named, self.say = root, form, named, say
        self.here = here  # of the missing folders, those known to have been this vault's (None: all)
        self.gone: Mapping[str, list[str]] = missing(root, named(), form)  # as of the last look
        self._missing = frozenset(self._keys(self.gone))

    def names_gone(self, pattern: str) -> bool:
        """Whether the literal folder of `pattern` was missing at the last look (the rule matches nothing)."""
        folder = literal_folder(pattern)
        return folder is not None and self.form.key(folder) in self._missing

    def _keys(self, gone: Mapping[str, list[str]]) -> set[str]:
        return {self.form.key(folder) for folder in gone}

    def look(self, *, moved: bool) -> list[str]:
        """Say each folder named by a rule that is missing now and was not before: `moved`, the
        vault changed (a folder went away); else the rules changed (a rule names no folder)."""
        gone = missing(self.root, self.named(), self.form)
        said = []
        new = {folder: rules for folder, rules in gone.items() if self.form.key(folder) not in self._missing}
        if moved:  # (seen going while watched: this vault's folder, whatever the journal holds)
            said = [gone_notice(folder, rules) for folder, rules in new.items()]
        elif new:
            said = start_notices(new, here=None if self.here is None else self.here(new))
        self.gone = gone
        self._missing = frozenset(self._keys(gone))
        for message in said:
            self.say(message)
        return said


__all__ = [
    "FolderWatch",
    "Named",
    "folder_exists",
    "gone_notice",
    "literal_folder",
    "missing",
    "named_folders",
    "own_rule",
    "start_notices",
]
