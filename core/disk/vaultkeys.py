"""Which vault a `[vaults."FOLDER"]` table of the person's settings file is for: the one key
resolution the agent rules (core.review.agentrules) and the triage rules (core.query.triagerules)
share, so both read the same table as meaning the same folder, and refuse the same keys.

A key names the served vault when it is the same folder, however it is spelled: the person types
keys in NFC while a vault synced from macOS stores its folder names in NFD, and on a file system
that folds case `~/notes` is `~/Notes`. So two paths are compared in NFC first, then by the
folders' identity (device and inode) where they exist: the served vault always does, and so do
its parents, so a parent or a child named in another form or case is found too. (The vault's
`PathForm` from core.edit.effects is not used: it is the vault's own file system's answer,
probed inside the vault, while a key's folders above the vault may lie on other file systems;
the identity answers for each folder on its own.)
"""

from __future__ import annotations

import os
import unicodedata

from vaultwatch.core import platform
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


def same_folder(mine: str, theirs: str) -> bool:
    """Whether the real paths `mine` and `theirs` name one folder: equal in NFC (case folded where
    the file system is forced to fold it), or the same existing folder (device and inode)."""
    if _form(mine) == _form(theirs):
        return True
    found = _identity(mine)
    return found is not None and found == _identity(theirs)


def nesting(mine: str, theirs: str) -> str | None:
    """How the served vault `mine` and another table's folder `theirs` (both real paths, not the
    same folder) overlap, in the words a settings problem says it: "lies inside" (mine is inside
    theirs), "holds" (theirs is inside mine), or None when neither holds the other."""
    if _inside(mine, theirs):
        return "lies inside"
    if _inside(theirs, mine):
        return "holds"
    return None


def one_table(origin: str, mine: str, first: str, second: str, part: str) -> VaultError:
    """The settings problem of two `[vaults."..."]` keys that both name the served vault (say in
    NFC and NFD, or in two cases on a file system that folds case): applying one, or both in the
    file's order, would be a guess at which the person meant, so neither is applied."""
    nfc = [unicodedata.normalize("NFC", os.path.expanduser(k)) for k in (first, second)]
    if nfc[0] == nfc[1]:
        how = "in two Unicode forms that look the same (NFC and NFD)"
    elif nfc[0].casefold() == nfc[1].casefold():
        how = "in two cases"
    else:
        how = "by two paths"
    return VaultError(
        f'{origin}: [vaults."{first}"{part}] and [vaults."{second}"{part}] both name this vault ({mine}), '
        f"{how}: keep one table for it, with the rules of both"
    )


def _form(path: str) -> str:
    nfc = path if path.isascii() else unicodedata.normalize("NFC", path)
    return nfc.casefold() if platform.folds_case_forced() else nfc


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # absent, unreadable, or a NUL in the key
        return None
    return (st.st_dev, st.st_ino)


def _inside(inner: str, outer: str) -> bool:
    """Whether `inner` lies strictly inside `outer`: by their NFC spelling, or because one of
    `inner`'s existing parents is `outer`'s folder (a child named in another form or case)."""
    if _form(inner).startswith(_form(outer).rstrip(os.sep) + os.sep):
        return True
    target = _identity(outer)
    if target is None:
        return False
    walk = inner
    while (parent := os.path.dirname(walk)) != walk:
        walk = parent
        if _identity(walk) == target:
            return True
    return False


__all__ = ["nesting", "one_table", "same_folder", "vault_folder"]
