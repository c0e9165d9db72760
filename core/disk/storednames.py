"""A vault path spelled as the disk stores its names.

A disk that folds case (macOS's, a vfat or exFAT mount, an ext4 casefold folder, a Windows share)
finds `notes/plan.md` as `Notes/Plan.md`, and a Windows share `Notes./Plan.md` too. A change named
by a caller's spelling would be judged by the rules, journaled, locked and matched to its disk event
under a path that is not the file's: the watcher would then record the agent's edit as a change
"outside vaultwatch" under the real name, and the note's history would not show it. So the write
path names every change by the stored spelling of each level that exists:

    stored("/vault", "notes/plan.md", known)             # 'Notes/Plan.md'
    stored("/vault", "notes/New.md", known, last=False)  # 'Notes/New.md': a rename's new name stays

`known(path)`: the index holds `path` (it lists the names the disk stores), so a path spelled as
indexed costs no look at the disk. A level the index does not hold is looked up in its folder's
listing, beneath the vault's descriptor (core.disk.safeio: nothing outside the vault is listed).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

from vaultwatch.core.disk.safeio import locate, vault_fd
from vaultwatch.core.errors import VaultError

_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def stored(root_real: str, rel: str, known: Callable[[str], bool], *, last: bool = True) -> str:
    """`rel` (a normalised vault path) with each existing level spelled as stored (see module doc);
    `last` False leaves the last level as given (a rename's new name, which may differ only in case).
    Anything that cannot be looked at is left as given: the operation itself then says what is wrong."""
    if known(rel):
        return rel
    levels = rel.split("/")
    fixed = len(levels) if last else len(levels) - 1
    done: list[str] = []
    for i, level in enumerate(levels[:fixed]):
        here = "/".join((*done, level))
        if known(here):
            done.append(level)
            continue
        found = _stored_name("/".join(done), level, root_real)
        if found is None:  # not there (or not to be looked at): the rest is new
            return "/".join((*done, *levels[i:]))
        name, link = found
        done.append(name)
        if link:  # what lies beyond a link is its target's: the operation's own walk resolves it
            return "/".join((*done, *levels[i + 1 :]))
    return "/".join((*done, *levels[fixed:]))


def _stored_name(folder: str, name: str, root_real: str) -> tuple[str, bool] | None:
    """The name stored in the vault folder `folder` for the entry `name` finds there, and whether
    that entry is a symbolic link, or None."""
    try:
        fd = _folder_fd(root_real, folder)
    except (OSError, VaultError):
        return None
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        link = stat.S_ISLNK(st.st_mode)
        names = os.listdir(fd)
        if name in names:
            return name, link
        for other in names:
            try:
                ost = os.stat(other, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if (ost.st_dev, ost.st_ino) == (st.st_dev, st.st_ino):
                return other, link
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


def _folder_fd(root_real: str, folder: str) -> int:
    if not folder:
        return vault_fd(root_real)
    with locate(root_real, folder) as loc:
        return loc.open(os.O_RDONLY | _DIRECTORY)


def stored_root(path: str) -> str:
    """`os.path.realpath(path)` with each level spelled as stored: a vault named `~/notes` on a disk
    that folds case is the folder `~/Notes`, and its journal, pending changes and server lock, named
    after the root, must be the ones every spelling finds. A level is listed only where its name in
    another case finds the same folder (a disk that keeps case answers that at once)."""
    real = os.path.realpath(path)
    done = os.sep
    for level in real.split(os.sep):
        if not level:
            continue
        done = os.path.join(done, _stored_level(done, level))
    return done


def _stored_level(parent: str, level: str) -> str:
    other = level.swapcase()
    try:
        st = os.stat(os.path.join(parent, level), follow_symlinks=False)
        if other == level or not _same(os.path.join(parent, other), st):
            return level  # the disk keeps case here: the name as given is the name stored
        names = os.listdir(parent)
    except OSError:
        return level
    if level in names:
        return level
    return next((name for name in names if _same(os.path.join(parent, name), st)), level)


def _same(path: str, st: os.stat_result) -> bool:
    try:
        other = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)
