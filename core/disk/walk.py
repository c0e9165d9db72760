"""The one walk of a folder tree on descriptors that does not recurse: `fwalk`.

`os.fwalk` (before Python 3.13) recurses once per folder level and keeps a descriptor open per
level, so a folder a thousand levels deep raises RecursionError in whatever thread walks it (the
start-up temp-file clean-up, a folder rename) and can exhaust the descriptor limit. This walk keeps
its own stack of names and holds one folder descriptor at a time: it goes down by opening a child
beneath the current folder without following symlinks, and back up through `..`, checked to be
the very folder it came from (device and inode), so a tree moved or swapped for a link while it is
walked ends the walk instead of leading it elsewhere.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def fwalk(top: str, *, dir_fd: int | None = None) -> Iterator[tuple[str, list[str], list[str], int]]:
    """Like `os.fwalk(top, dir_fd=dir_fd)` top-down without following symlinks: yields
    `(dirpath, dirnames, filenames, dirfd)` for `top` and every folder beneath it; the caller may
    prune `dirnames` in place; `dirfd` is valid until the next step. A symlink to a folder is listed
    in `dirnames` (as os.fwalk lists it) but never entered. Unreadable folders are skipped; a `top`
    that is missing or not a folder yields nothing. Iterative: any depth, one descriptor open."""
    try:
        fd = os.open(top, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return
    path = top
    # the folders above the current one: (their path, (st_dev, st_ino), children still to visit)
    above: list[tuple[str, tuple[int, int], list[str]]] = []
    try:
        while True:
            here = os.fstat(fd)
            dirs: list[str] = []
            files: list[str] = []
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        try:
                            is_dir = entry.is_dir()
                        except OSError:
                            is_dir = False
                        (dirs if is_dir else files).append(entry.name)
            except OSError:
                pass
            yield path, dirs, files, fd
            pending = dirs[::-1]
            while True:
                if pending:
                    name = pending.pop()
                    try:
                        child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    except OSError:  # a symlink, gone, or unreadable: not entered
                        continue
                    above.append((path, (here.st_dev, here.st_ino), pending))
                    os.close(fd)
                    fd, path = child, os.path.join(path, name)
                    break
                if not above:
                    return
                path, ident, pending = above.pop()
                try:
                    up = os.open("..", _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    return
                os.close(fd)
                fd = up
                here = os.fstat(fd)
                if not stat.S_ISDIR(here.st_mode) or (here.st_dev, here.st_ino) != ident:
                    return  # the tree moved while it was walked: stop rather than walk elsewhere
    finally:
        os.close(fd)
