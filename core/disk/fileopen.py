"""Open one vault file for reading, in one step beneath the vault's descriptor: a regular file
(never a FIFO or a folder), not hard-linked, within the read limit, reached without following a
link out of the vault (core.disk.safeio.locate). `read`, the write path's re-reads and the TUI's
preview and $EDITOR hand-off all open files here, so no path string is re-opened by name after
its check."""

from __future__ import annotations

import os
import stat as stat_mod

from vaultwatch.core import platform
from vaultwatch.core.disk.paths import normalize
from vaultwatch.core.disk.readresult import ReadError
from vaultwatch.core.disk.safeio import fd_inside, locate
from vaultwatch.core.errors import NotFoundError

MAX_READ_BYTES = 64 * 1024 * 1024


def open_within(root_real: str, rel: str) -> tuple[int, os.stat_result]:
    """An open descriptor on a regular file within the read limit, and its stat.

    The file is reached with core.disk.safeio.locate (relative to the vault's descriptor, each
    symlink on the way checked) and opened relative to its folder's descriptor with
    O_NOFOLLOW, so a folder swapped for an outside link meanwhile is never followed.
    """
    try:
        loc = locate(root_real, rel, missing_ok=True)
    except (FileNotFoundError, NotADirectoryError):
        raise NotFoundError(f"not found: {rel!r} no longer exists on disk; list_documents shows what exists") from None
    except OSError as exc:
        raise ReadError(f"cannot read {rel!r}: {exc.strerror or exc}") from None
    try:
        if loc.missing:
            raise NotFoundError(f"not found: {rel!r} no longer exists on disk; list_documents shows what exists")
        fd = loc.open(os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise NotFoundError(f"not found: {rel!r} no longer exists on disk; list_documents shows what exists") from None
    except OSError as exc:
        raise ReadError(f"cannot read {rel!r}: {exc.strerror or exc}; check the file's permissions") from None
    finally:
        loc.close()
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise ReadError(f"cannot read {rel!r}: it is not a regular file")
        if st.st_nlink > 1:
            raise ReadError(
                f"cannot read {rel!r}: it is hard-linked ({st.st_nlink} names on disk, which may "
                "include a file outside the vault), so vaultwatch does not read it; ask the person "
                "to replace it with a plain copy"
            )
        if st.st_size > MAX_READ_BYTES:
            raise ReadError(
                f"cannot read {rel!r}: it is {st.st_size // (1024 * 1024)} MiB, "
                f"above the {MAX_READ_BYTES // (1024 * 1024)} MiB read limit"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_file(root_real: str, rel: str) -> tuple[int, os.stat_result]:
    """An open descriptor (the caller closes it) and the stat of the file at canonical vault path
    `rel`, opened as `read` opens it (see open_within): for readers that stream a file themselves, such
    as the full-text indexer."""
    return open_within(root_real, rel)


def note_bytes(root_real: str, path: str, *, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes (the first `limit` of them, if given) and stat of the file at vault path `path`,
    opened as `read` opens it: in one step beneath the vault's descriptor, never through a link out
    of it, a regular file that is not hard-linked. For front ends that show or compare a note's bytes
    (the TUI's preview, its edit checks): no path string is opened by name after its check."""
    fd, st = open_within(root_real, normalize(path))
    try:
        if limit is None:
            return read_all(fd), st
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def editor_path(root_real: str, path: str) -> str:
    """A file name to hand an external program ($EDITOR), given only after core's check: the note
    is opened as `read` opens it, and the name returned is the one the kernel gives that open file
    (no symlinks on the way), checked to lie inside the vault and outside hidden folders.

    Residual race (documented, not closed): the program opens this name itself, later. A local
    process that swaps a folder on the way for a link out of the vault between this check and the
    editor's own open redirects the editor; vaultwatch cannot hand an editor a descriptor. The
    window is the editor's start-up, and only a process already able to change the vault's folders
    can use it."""
    rel = normalize(path)
    fd, _st = open_within(root_real, rel)
    try:
        where = platform.fd_path(fd)
        if where is None:  # the system cannot name it: the descriptor walk above is the check
            where = os.path.join(root_real, rel)
        if not fd_inside(fd, root_real):
            raise ReadError(
                f"cannot open {rel!r}: it is no longer inside the vault (a folder on the way was "
                "replaced); nothing was opened"
            )
        return where
    finally:
        os.close(fd)


def read_all(fd: int) -> bytes:
    """Everything left to read from an open file descriptor, in 1 MiB reads."""
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
