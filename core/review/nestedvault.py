"""Whether a folder about to be served lies inside a vault the person has rules for.

The rules of the settings file (`[approve.folders]`, an agent's `write` and `deny`) are globs on
paths from the root of the vault served. Served from a folder inside that vault, they name other
paths: `"Finance/**" = "never"` covers nothing of `Vault/Finance` served on its own, and an agent
given that folder writes there unasked. A server already running above is refused by the vault
lock (core.disk.vaultlock.nested_server); this is the same refusal when none runs.

A folder above counts as a vault of the person's only where vaultwatch has something of it: a
change journal in the state folder (vaultwatch served or opened it), or a `[vaults."FOLDER"]`
table in the settings file. A `.obsidian` folder alone does not count (Obsidian's own vault
holds no vaultwatch rules), nor does a home folder or a repository that was never served, so a
vault in a home folder, the demo vault in an installed package and a test's temporary folder
start as before.

The person says a folder is a vault of its own by a `[vaults."FOLDER"]` table for it (an empty
one will do: it is read before any server starts, so bridges' headless servers follow it too),
or for one start by `--allow-nested`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from vaultwatch.core.disk.vaultkeys import same_folder, vault_folder
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review.journal import journal_path

ALLOW_FLAG = "--allow-nested"


@dataclass(frozen=True, slots=True)
class VaultAbove:
    """The vault `folder` holding the folder to serve, and what shows it is one of the person's."""

    root: str
    folder: str
    evidence: str

    def refusal(self) -> str:
        rel = self.root[len(self.folder) :].strip("/")
        return (
            f"{self.root} lies inside the vault {self.folder} ({self.evidence}): the settings' folder "
            f"rules and agents' write and deny lists are paths from {self.folder}, so served from "
            f"{self.root} they would name other folders and not apply. Serve {self.folder} instead and "
            f'keep an agent to this folder with `[agents.NAME] write = ["{rel}/**"]` in settings.toml; '
            f"or, if {self.root} is a vault of its own, start it with {ALLOW_FLAG} (or give it a "
            f'[vaults."{self.root}"] table in settings.toml)'
        )


def _tables(settings_file: str) -> list[tuple[str, str]]:
    """(key, real folder) of every `[vaults."FOLDER"]` table; none when the file is absent or does
    not parse (the rules' own reading reports that, and refuses agents' changes meanwhile)."""
    import tomllib  # noqa: PLC0415  (only where a server starts)

    try:
        with open(settings_file, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return []
    vaults = data.get("vaults")
    if not isinstance(vaults, dict):
        return []
    found = []
    for key in vaults:
        try:
            found.append((str(key), vault_folder(key, settings_file)))
        except VaultError:
            continue  # a relative key: the rules' reading says so
    return found


def vault_above(root_real: str, settings_file: str) -> VaultAbove | None:
    """The nearest folder above `root_real` that is a vault of the person's (see module doc), or
    None: also when the settings file gives `root_real` a table of its own."""
    tables = _tables(settings_file)
    if any(same_folder(root_real, theirs) for _, theirs in tables):
        return None
    folder = root_real
    while (parent := os.path.dirname(folder)) != folder:
        folder = parent
        for key, theirs in tables:
            if same_folder(folder, theirs):
                return VaultAbove(root_real, folder, f'settings.toml has a [vaults."{key}"] table for it')
        journal = journal_path(folder)
        if os.path.exists(journal):
            return VaultAbove(root_real, folder, f"vaultwatch keeps its change journal {journal}")
    return None


__all__ = ["ALLOW_FLAG", "VaultAbove", "vault_above"]
