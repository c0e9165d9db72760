"""Which vault a `[vaults."FOLDER"]` table of the person's settings file is for: the one key
resolution the agent rules (core.review.agentrules) and the triage rules (core.query.triagerules)
share, so both read the same table as meaning the same folder, and refuse the same keys.
"""

from __future__ import annotations

import os

from vaultwatch.core.errors import VaultError


def vault_folder(folder: object, origin: str) -> str:
    """The real path a `[vaults."FOLDER"]` key names (`~` expanded). A relative key raises
    VaultError: it would name another folder for every program that reads the file, depending on
    where each was started (a headless server starts from /)."""
    named = os.path.expanduser(str(folder))
    if not os.path.isabs(named):
        raise VaultError(
            f'{origin}: [vaults."{folder}"]: name the vault by its full path (or one starting '
            "with ~/): a relative one means another folder for every program that reads it"
        )
    return os.path.realpath(named)


def nesting(mine: str, theirs: str) -> str | None:
    """How the served vault `mine` and another table's folder `theirs` (both real paths) overlap,
    in the words a settings problem says it: "lies inside" (mine is inside theirs), "holds" (theirs
    is inside mine), or None when neither holds the other."""
    if mine.startswith(theirs.rstrip(os.sep) + os.sep):
        return "lies inside"
    if theirs.startswith(mine.rstrip(os.sep) + os.sep):
        return "holds"
    return None


__all__ = ["nesting", "vault_folder"]
