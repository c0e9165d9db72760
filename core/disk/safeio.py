"""Resolve-and-open in one step, relative to the vault's directory descriptor.

Every disk operation on a caller's path (read, write, edit, frontmatter, rename, delete,
trash, attachment reads) goes through `locate`, which returns an open descriptor on the
folder that holds the entry plus the entry's name in it. Nothing is re-resolved by path
string afterwards: the caller opens, stats, renames and unlinks relative to that
descriptor (`os.open(name, dir_fd=...)`, `os.replace(..., src_dir_fd=..., dst_dir_fd=...)`).

How the folder is reached:

- `openat2(root_fd, parent, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`
  (Linux >= 5.6, through core.platform) for the common path without any symlink: one
  system call, and the kernel refuses anything that would leave the vault.
- Otherwise a walk, one component at a time, each opened with `O_NOFOLLOW | O_DIRECTORY`
  relative to the previous descriptor. A symlink met on the way is read with `readlinkat`,
  its target resolved against the vault (an absolute target must lie under the vault, a
  relative one may not climb above it), and the walk continues from the vault's
  descriptor with the target's components. So an in-vault symlink keeps working while a
  link (or a folder swapped for a link by another process) that leads outside is never
  followed: nothing outside is opened, read, hashed, stat'ed or written.

Missing folders (`make_dirs`) are made one at a time with `mkdirat` relative to their parent's
descriptor and opened at once with `O_NOFOLLOW`; each one made is listed with its device and
inode (`Loc.created`, `Loc.created_ids`). A walk that fails after making some removes exactly
those again (`remove_created`: only while empty and still the same folder), so a refused or
failed call leaves no folder of its own behind. Making a folder is not a retry: a new path is
as deep as its length allows (core.disk.paths.MAX_PATH_CHARS), while a path whose folders keep
being swapped or removed midway still ends in `path_changed` after `MAX_SYMLINKS` retries.

The vault-relative path the walk ended at (`Loc.canon`) is the entry's canonical path:
it has no symlinks and is what `read` and the index accept. The final component is opened
by the caller with O_NOFOLLOW; if it became a symlink since the walk, that open fails and
the caller reports `path_changed` (nothing is done).
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from dataclasses import dataclass, field

from vaultwatch.core import platform
from vaultwatch.core.errors import HiddenPathError, PathChangedError, SymlinkEscapeError

__all__ = [
    "Loc",
    "locate",
    "open_at",
    "fd_inside",
    "fd_is",
    "has_openat2",
    "MAX_SYMLINKS",
    "remove_created",
    "vault_fd",
]

MAX_SYMLINKS = 40  # as the kernel's own limit on a path's symlinks
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# O_RDONLY rather than O_PATH: the same descriptor is fsynced after a replace or a rename.
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC


def has_openat2() -> bool:
    """True when the kernel's openat2 (RESOLVE_BENEATH) is used for symlink-free paths."""
    return platform.available("openat2")


def _changed(rel: str) -> PathChangedError:
    return PathChangedError(
        f"{rel!r} changed on disk while it was being resolved (a folder or symlink on the way "
        "was moved, removed or replaced); nothing was done: try again"
    )


def _escape(rel: str) -> SymlinkEscapeError:
    return SymlinkEscapeError(f"symlink escapes vault: {rel!r} resolves outside the vault and is never followed")


@dataclass
class Loc:
    """An open descriptor on the folder holding an entry, and the entry's name in it.

    `name` is "" for the vault root itself. `canon` is the entry's canonical vault-relative
    path (no symlinks; "" for the root). `created` lists folders made on the way (make_dirs),
    parents first, and `created_ids` their (st_dev, st_ino), so that `remove_created` undoes
    exactly them.
    Close it (or use it as a context manager) when done.
    """

    dir_fd: int
    name: str
    canon: str
    created: list[str] = field(default_factory=list)
    missing: bool = False  # missing_ok and a folder on the way is missing: `name` is the rest of the path
    created_ids: dict[str, tuple[int, int]] = field(default_factory=dict)  # (st_dev, st_ino) of each made folder

    def close(self) -> None:
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1

    def __enter__(self) -> Loc:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def parent(self) -> str:
        return self.canon.rpartition("/")[0]

    def lstat(self) -> os.stat_result | None:
        """The entry's own stat (a symlink is not followed), or None when nothing is there."""
        if self.missing:
            return None
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENAMETOOLONG, errno.ENOTDIR):  # nothing can be there
                return None
            raise

    def open(self, flags: int, mode: int = 0o666) -> int:
        """Open the entry itself (never through a symlink) relative to its folder's descriptor."""
        return open_at(self.dir_fd, self.name, flags, mode, rel=self.canon)


def open_at(dir_fd: int, name: str, flags: int, mode: int = 0o666, *, rel: str = "") -> int:
    """os.open(name, dir_fd=...) with O_NOFOLLOW: a symlink that appeared there is path_changed."""
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _changed(rel or name) from None
        raise


def vault_fd(root_real: str) -> int:
    """A descriptor on the vault folder itself."""
    return os.open(root_real, _DIR_FLAGS)


def _lexical(base: list[str], target: str, rel: str) -> list[str]:
    out = list(base)
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise _escape(rel)
            out.pop()
        else:
            out.append(part)
    return out


def locate(
    root_real: str,
    rel: str,
    *,
    follow_last: bool = True,
    make_dirs: bool = False,
    allow_hidden: bool = False,
    missing_ok: bool = False,
) -> Loc:
    """Walk to the folder holding the canonical vault path `rel` (see the module doc).

    follow_last: an in-vault symlink as the last component is followed too (the entry is its
    target); otherwise the link itself is the entry. make_dirs: missing folders on the way
    are created (relative to their parent's descriptor) and listed in `Loc.created`; when the
    walk raises after making some, they are removed again before the error reaches the caller.
    Raises SymlinkEscapeError (a link leads outside), HiddenPathError (a link leads into a
    hidden folder), PathChangedError (the path kept changing), FileNotFoundError (a folder
    on the way is missing; with missing_ok a Loc on the deepest existing folder is returned
    instead, `missing` set and `name` holding the rest) and NotADirectoryError (a file on the way).
    """
    if not rel:
        return Loc(vault_fd(root_real), "", "")
    parts = rel.split("/")
    root = vault_fd(root_real)
    try:
        if not make_dirs:
            loc = _fast(root, parts, rel, follow_last)
            if loc is not None:
                return loc
        return _walk(root, root_real, parts, rel, follow_last, make_dirs, allow_hidden, missing_ok)
    finally:
        os.close(root)


def _fast(root: int, parts: list[str], rel: str, follow_last: bool) -> Loc | None:
    """openat2 for a path without symlinks; None when the walk must decide (a symlink, or missing)."""
    parent = "/".join(parts[:-1]) or "."
    try:
        fd = platform.open_beneath(root, parent, _DIR_FLAGS)
    except OSError:
        return None
    if fd is None:  # no openat2 here: the walk decides
        return None
    loc = Loc(fd, parts[-1], rel)
    if follow_last:
        try:
            st = loc.lstat()
        except OSError:
            st = None
        if st is not None and stat_mod.S_ISLNK(st.st_mode):
            loc.close()
            return None
    return loc


def _walk(
    root: int,
    root_real: str,
    parts: list[str],
    rel: str,
    follow_last: bool,
    make_dirs: bool,
    allow_hidden: bool,
    missing_ok: bool = False,
) -> Loc:
    cur = os.dup(root)
    done: list[str] = []
    todo = list(parts)
    links = retries = 0
    created: list[str] = []
    ids: dict[str, tuple[int, int]] = {}
    try:
        while True:
            comp = todo.pop(0)
            last = not todo
            canon = "/".join((*done, comp))
            if not allow_hidden and comp.startswith("."):
                raise HiddenPathError(f"hidden path blocked: {rel!r} leads into a hidden folder through a symlink")
            if last and not follow_last:
                loc, cur = Loc(cur, comp, canon, created, created_ids=ids), -1
                return loc
            try:
                st = os.stat(comp, dir_fd=cur, follow_symlinks=False)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise
                if last:
                    loc, cur = Loc(cur, comp, canon, created, created_ids=ids), -1
                    return loc
                if missing_ok and not make_dirs:
                    loc, cur = Loc(cur, "/".join((comp, *todo)), "/".join((*done, comp, *todo)), created, True, ids), -1
                    return loc
                if not make_dirs:
                    raise
                try:
                    os.mkdir(comp, dir_fd=cur)
                    made = True
                except FileExistsError:  # made meanwhile by another writer: open what is there now
                    made = False
                # straight to the open (O_NOFOLLOW): a folder made here is not a retry, so a deep new
                # path is only bounded by the path's own length (paths.MAX_PATH_CHARS), while a folder
                # swapped for a symlink or removed right after its mkdir still counts as one below
                nxt = _open_dir(cur, comp)
                if nxt is None:
                    retries += 1
                    if retries > MAX_SYMLINKS:
                        raise _changed(rel) from None
                    todo.insert(0, comp)
                    continue
                if made:
                    st = os.fstat(nxt)
                    created.append(canon)
                    ids[canon] = (st.st_dev, st.st_ino)
                os.close(cur)
                cur = nxt
                done.append(comp)
                continue
            if stat_mod.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_SYMLINKS:
                    raise OSError(errno.ELOOP, "too many levels of symbolic links", rel)
                try:
                    target = os.readlink(comp, dir_fd=cur)
                except OSError:  # removed or replaced since the stat a moment ago
                    raise _changed(rel) from None
                if target.startswith("/"):
                    real = os.path.normpath(target)
                    if real == root_real:
                        base: list[str] = []
                    elif real.startswith(root_real.rstrip("/") + "/"):
                        base = real[len(root_real.rstrip("/")) + 1 :].split("/")
                    else:
                        raise _escape(rel)
                    new = _lexical([], "/".join(base), rel)
                else:
                    new = _lexical(done, target, rel)
                todo = new + todo
                os.close(cur)
                cur = os.dup(root)
                done = []
                if not todo:  # the link leads to the vault root itself
                    raise HiddenPathError(
                        f"{rel!r} leads to the vault root itself through a symlink; name the note by its own path"
                    )
                continue
            if last:
                loc, cur = Loc(cur, comp, canon, created, created_ids=ids), -1
                return loc
            if not stat_mod.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a folder", canon)
            nxt = _open_dir(cur, comp)
            if nxt is None:  # swapped since the stat
                retries += 1
                if retries > MAX_SYMLINKS:
                    raise _changed(rel) from None
                todo.insert(0, comp)
                continue
            os.close(cur)
            cur = nxt
            done.append(comp)
    except BaseException:
        if cur >= 0:
            os.close(cur)
            cur = -1
        # refused or failed midway: the folders this walk made go again, and only those
        remove_created(root_real, created, ids)
        raise
    finally:
        if cur >= 0:
            os.close(cur)


def _open_dir(cur: int, comp: str) -> int | None:
    """The folder `comp` under `cur`, opened without following a symlink; None when it was swapped
    or removed since it was looked at (the caller walks that component again)."""
    try:
        return os.open(comp, _DIR_FLAGS, dir_fd=cur)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
            return None
        raise


def remove_created(root_real: str, created: list[str], ids: dict[str, tuple[int, int]]) -> list[str]:
    """rmdir the folders a `locate(make_dirs=True)` made (`Loc.created`, `Loc.created_ids`), deepest
    first, each only while it is empty and still the very folder that was made (its device and
    inode): a folder someone else made or filled in the meantime stays, and so does a pre-existing
    folder that now stands at one of those paths. Returns the folders removed."""
    removed: list[str] = []
    for canon in reversed(created):
        want = ids.get(canon)
        if want is None:
            continue
        try:
            with locate(root_real, canon, follow_last=False, missing_ok=True) as loc:
                if loc.missing:
                    continue
                st = os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False)
                if (st.st_dev, st.st_ino) != want or not stat_mod.S_ISDIR(st.st_mode):
                    continue
                os.rmdir(loc.name, dir_fd=loc.dir_fd)
        except (OSError, PathChangedError, SymlinkEscapeError, HiddenPathError):
            continue  # not empty, gone, or no longer reachable as it was: it stays
        removed.append(canon)
    return removed


def fd_is(fd: int, real: str) -> bool:
    """True when the kernel names the open file `fd` by exactly `real` (a path without symlinks).

    A check made after the open, on the descriptor itself (/proc/self/fd), for the bulk
    readers (the scanner, the search indexer) that open by path string: a folder on the
    way swapped for a symlink between their listing and their open is caught here and
    nothing is read. Without /proc the answer is True (their other checks stand alone).
    """
    where = platform.fd_path(fd)
    return where is None or where == real


def fd_inside(fd: int, root_real: str) -> bool:
    """True when the open file `fd` is, as the kernel names it now, inside the vault and not hidden.

    A check made after the open, on the descriptor itself (/proc/self/fd), for bulk readers
    (the scanner, the search indexer) that open by path: a folder swapped for an outside
    symlink between their listing and their open is caught here and nothing is read.
    Without /proc the answer is True (the caller's own checks stand alone).
    """
    where = platform.fd_path(fd)
    if where is None:
        return True
    prefix = root_real.rstrip("/") + "/"
    if not where.startswith(prefix) or where.endswith(" (deleted)"):
        return False
    return not any(part.startswith(".") for part in where[len(prefix) :].split("/"))
