"""The folders vaultwatch keeps a change journal for, listed beside the journals.

A journal's file name holds its vault folder's name and a digest of its path: enough to find the
journal of a given folder, not to list the folders. core.review.nestedvault needs that list (a folder
about to be served may hold a vault of the person's, whose rules would not apply from above), and
walking every folder of the vault at each start to find one costs most on the largest vaults. So each
journal opened for a vault adds its folder to ROOTS in the journal folder (one JSON string a line,
appended, in a private file), and nestedvault reads it. A journal an older vaultwatch made is listed
from its next opening on; until then nestedvault looks for the journals the list does not name.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat

from vaultwatch.core.disk.private import open_private

ROOTS = "roots"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _listing(path: str, flags: int) -> int:
    """A descriptor on the list at `path`, only when it is a regular file: a FIFO there (opened
    without O_NONBLOCK) would hold every start that looks for vaults below its folder, and a link
    (to a device that never ends) is not followed. OSError otherwise."""
    fd = os.open(path, flags | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def recorded(folder_of_journals: str) -> list[str]:
    """The vault folders listed in `folder_of_journals` (none when there is no list, or it cannot be
    read: also when it is no regular file); a line that is not a JSON string (a write cut off) is
    skipped."""
    try:
        with os.fdopen(_listing(os.path.join(folder_of_journals, ROOTS), os.O_RDONLY), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    roots: list[str] = []
    for line in lines:
        with contextlib.suppress(ValueError):
            root = json.loads(line)
            if isinstance(root, str) and root not in roots:
                roots.append(root)
    return roots


def record(folder_of_journals: str, root_real: str) -> None:
    """List `root_real` (a vault whose journal is in `folder_of_journals`) unless it is listed. One
    short line appended at once, so processes recording side by side never mix their lines; a list
    that cannot be written leaves nestedvault to look for the journal as before."""
    if root_real in recorded(folder_of_journals):
        return
    line = (json.dumps(root_real, ensure_ascii=True) + "\n").encode("ascii")
    with contextlib.suppress(OSError):
        fd = open_private(os.path.join(folder_of_journals, ROOTS), os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO with a reader: nothing is written to it
                return
            os.write(fd, line)
        finally:
            os.close(fd)


__all__ = ["ROOTS", "record", "recorded"]
