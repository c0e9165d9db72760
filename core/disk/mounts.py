"""The other paths a folder is reachable at through the mounts (Linux's /proc/self/mountinfo).

A real path names one place in the tree of mounts, not one folder: `mount --bind VAULT/Private
/mnt/p` shows the folder `VAULT/Private` at `/mnt/p` too, and `os.path.realpath` keeps each path as
it is. A check that compares real paths (core.review.nestedvault: is this folder inside a vault of
the person's?) sees `/mnt/p` as a folder of its own. So this module reads the mounts: each line of
mountinfo says which folder of its filesystem (`root`) a mount shows where (`mount point`), and
mounts of one filesystem share its `major:minor`; a folder's path within its filesystem then gives
its path under every other mount of that filesystem that shows it.

Where there is no mountinfo (not Linux, or /proc not mounted) there are no other paths, and a
check sees what it saw before. Every path given is one that opens the same folder (device and
inode), so a mount stacked over another, or a folder of the filesystem a mount does not show, is
never given.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

MOUNTINFO = "/proc/self/mountinfo"

# mountinfo writes a space, a tab, a newline and a backslash in a path as \040, \011, \012 and \134
_ESCAPE = re.compile(rb"\\([0-7]{3})")


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of mountinfo: the folder `root` of the filesystem `device` shown at `point`."""

    device: str  # "major:minor"
    root: str
    point: str


@dataclass(frozen=True, slots=True)
class Alias:
    """`path` opens the folder `of`: `of` lies on the mount at `here`, `path` on the one at `there`."""

    path: str
    of: str
    here: str
    there: str

    def said(self) -> str:
        return (
            f"{self.of} and {self.path} are one folder, reached through two mounts of one filesystem "
            f"(at {self.here} and at {self.there})"
        )


def _unescape(field: bytes) -> str:
    return os.fsdecode(_ESCAPE.sub(lambda m: bytes([int(m.group(1), 8) & 0xFF]), field))


def parse_line(line: bytes) -> Mount | None:
    """The mount one line of mountinfo describes, or None for a line not in its form. The fields:
    mount id, parent id, major:minor, root, mount point, options, then any number of optional fields
    (`shared:1`, `master:2`, ...) up to a lone `-`, then the filesystem's type, source and options."""
    fields = line.rstrip(b"\n").split(b" ")
    try:
        separator = fields.index(b"-", 6)
    except ValueError:
        return None
    if len(fields) < separator + 3 or b":" not in fields[2]:
        return None
    return Mount(fields[2].decode("ascii", "replace"), _unescape(fields[3]), _unescape(fields[4]))


def read(path: str = MOUNTINFO) -> tuple[Mount, ...]:
    """The mounts of this process's namespace, in mountinfo's order (one mounted later over another
    comes after it); none where mountinfo cannot be read."""
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")  # not splitlines: mountinfo leaves a carriage return in a path as it is
    except OSError:
        return ()
    return tuple(m for m in map(parse_line, lines) if m is not None)


def _below(path: str, top: str) -> str | None:
    """`path` relative to `top` ("" for `top` itself), or None when it does not lie in `top`."""
    if path == top:
        return ""
    prefix = top if top.endswith("/") else top + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _join(top: str, rel: str) -> str:
    return os.path.join(top, rel) if rel else top


def _holding(path: str, mounts: tuple[Mount, ...]) -> Mount | None:
    """The mount `path` lies on: the deepest mount point holding it, the last mounted of equals."""
    best: Mount | None = None
    for mount in mounts:
        if _below(path, mount.point) is not None and (best is None or len(mount.point) >= len(best.point)):
            best = mount
    return best


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def aliases(path_real: str, mounts: tuple[Mount, ...]) -> list[Alias]:
    """Every other path at which the folder `path_real` (a real, absolute path) is reachable through
    `mounts` (from `read`); none when it is reachable at one path only."""
    here = _holding(path_real, mounts)
    if here is None:
        return []
    rel = _below(path_real, here.point)
    assert rel is not None  # _holding chose a mount point holding it
    inside = _join(here.root, rel)  # the folder's path within its filesystem
    candidates: list[tuple[str, Mount]] = []
    for mount in mounts:
        if mount is here or mount.device != here.device:
            continue
        within = _below(inside, mount.root)
        if within is None:
            continue
        path = _join(mount.point, within)
        if path != path_real and all(path != seen for seen, _ in candidates):
            candidates.append((path, mount))
    if not candidates:  # the common case: no other mount shows the folder, and nothing is stat'ed
        return []
    target = _identity(path_real)
    if target is None:
        return []
    return [Alias(path, path_real, here.point, mount.point) for path, mount in candidates if _identity(path) == target]


__all__ = ["MOUNTINFO", "Alias", "Mount", "aliases", "parse_line", "read"]
