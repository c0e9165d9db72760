"""The user's own files: everything vaultwatch keeps under the user's cache, state and config
folders (entry cache, full-text index, vectors, handshake answers, journals, logs, records,
settings) is the user's alone: folders 0700, files 0600, whatever the umask.

A vault may be private (0700) while `~/.cache` is world-readable: the full-text index holds
whole note texts and `vault.txt` the vault's path, so a 0644 file there hands a private vault
to every local user. Every writer under those folders goes through this module instead of
chmod-ing on its own, and the first writer of a process tightens what older versions (or a
loose umask) left behind.

SQLite creates its `-wal`, `-shm` and `-journal` files with the database file's mode, so a
database made private with `private_file` before its first connection keeps them private too.
"""

from __future__ import annotations

import os
import stat
import threading

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _base(var: str, *default: str) -> str:
    base = os.environ.get(var, "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.environ.get("HOME") or os.path.expanduser("~"), *default)
    return base


def user_folders() -> list[str]:
    """vaultwatch's folders under the user's cache, state and config folders (XDG rules: an unset
    or relative variable means the default under the home folder)."""
    return [
        os.path.join(_base("XDG_CACHE_HOME", ".cache"), "vaultwatch"),
        os.path.join(_base("XDG_STATE_HOME", ".local", "state"), "vaultwatch"),
        os.path.join(_base("XDG_CONFIG_HOME", ".config"), "vaultwatch"),
    ]


def _tighten_one(path: str, st: os.stat_result, mode: int) -> None:
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, stat.S_IMODE(st.st_mode) & mode, follow_symlinks=False)


def tighten_tree(top: str) -> int:
    """Make `top` and everything beneath it private (folders 0700, files 0600); returns how many
    entries were changed. Only the user's own entries; symlinks are neither followed nor changed.
    The walk is iterative (a deep tree cannot exhaust the stack); errors are skipped (it is
    housekeeping: every writer still creates its own files private)."""
    changed = 0
    stack = [top]
    while stack:
        path = stack.pop()
        try:
            st = os.lstat(path)
        except OSError:
            continue
        is_dir = stat.S_ISDIR(st.st_mode)
        if not (is_dir or stat.S_ISREG(st.st_mode) or stat.S_ISSOCK(st.st_mode)):
            continue
        try:
            before = st.st_mode
            _tighten_one(path, st, FOLDER_MODE if is_dir else FILE_MODE)
            changed += os.lstat(path).st_mode != before
        except OSError:
            continue
        if is_dir:
            try:
                with os.scandir(path) as it:
                    stack.extend(e.path for e in it)
            except OSError:
                continue
    return changed


_tightened = False
_tighten_lock = threading.Lock()


def tighten_user_folders() -> None:
    """Once per process: tighten vaultwatch's cache, state and config folders (see `tighten_tree`)."""
    global _tightened
    with _tighten_lock:
        if _tightened:
            return
        _tightened = True
    for top in user_folders():
        tighten_tree(top)


def private_folder(path: str | os.PathLike[str]) -> str:
    """Create `path` and any missing parents as 0700 folders whatever the umask, tighten `path`
    if it exists looser, and return it. OSError when it cannot be made."""
    tighten_user_folders()
    target = os.fspath(path)
    missing = []
    cur = target
    while not os.path.isdir(cur):
        missing.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, FOLDER_MODE)  # mkdir's mode passes through the umask
    _tighten_one(target, os.stat(target), FOLDER_MODE)
    return target


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """`os.open(path, flags | O_CREAT)` as a 0600 file whatever the umask (an existing looser file
    of the user's is tightened). Symlinks are not followed. Returns the descriptor."""
    private_folder(os.path.dirname(os.path.abspath(path)))
    fd = os.open(path, flags | os.O_CREAT | _NOFOLLOW | _CLOEXEC, FILE_MODE)
    try:
        st = os.fstat(fd)
        if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def private_file(path: str | os.PathLike[str]) -> str:
    """Make sure `path` exists as a private file (0600), creating its folders private: call it
    before SQLite first opens a database, whose side files then take the same mode."""
    os.close(open_private(path, os.O_RDONLY))
    return os.fspath(path)


def write_private(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Replace `path`'s contents with `data` (a str is written as UTF-8) in a 0600 file."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "wb") as fh:
        fh.write(raw)
