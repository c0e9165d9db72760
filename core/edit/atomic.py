"""Disk primitives of the write path: read a note's bytes, write them atomically, rename without clobbering.

Everything here works relative to an open folder descriptor (a core.disk.safeio Loc), never
by path string, so no call can leave the vault through a swapped folder:

- `read_file(loc, rel)`: the (bytes, mode) of a regular, singly linked file (a hard-linked one,
  a folder, a FIFO or a file over MAX_EDIT_BYTES is refused with WriteRefused);
- `write_temp(loc, data)` then `TempFile.commit(name)`: a synced temporary file in the same
  folder, then a replace (or a no-clobber link for a create) and an fsync of the folder: a
  crash leaves the old or the new bytes, never a mix. Two steps, so that a change waiting for
  the person's approval has its bytes on disk before the key (`TempFile.discard` when declined);
  the folder's fsync may run in the background (`FolderSyncs`) while the caller does work that
  needs no durability, and is waited for before the caller answers;
- `rename_noreplace`: renameat2(RENAME_NOREPLACE), with a link+unlink fallback;
- `fsync_dir`, `os_error` (an OSError as a WriteFailed that says why and what to do),
  `clean_temp_files` (what a killed run left), `folds_case`, `same_entry`.

The write rules (etags, attestation, link rewriting, journaling) live in core.edit.writes.
"""

from __future__ import annotations

import errno
import fcntl
import os
import queue
import re
import secrets
import stat as stat_mod
import threading
import time
from collections.abc import Callable, Collection
from types import TracebackType
from typing import TYPE_CHECKING

from vaultwatch.core import platform
from vaultwatch.core.disk.fileopen import read_all  # not disk.reader: it loads the note parser
from vaultwatch.core.disk.safeio import Loc
from vaultwatch.core.disk.walk import fwalk
from vaultwatch.core.edit.hooks import moved_while_waiting
from vaultwatch.core.errors import VaultError
from vaultwatch.core.rests import Rests

if TYPE_CHECKING:
    from vaultwatch.core.vault import Vault

__all__ = [
    "MAX_EDIT_BYTES",
    "NAME_MAX",
    "TEMP_PREFIX",
    "TEMP_SUFFIX",
    "FolderSyncs",
    "Hook",
    "TempFile",
    "WriteFailed",
    "WriteRefused",
    "clean_temp_files",
    "clean_temp_files_soon",
    "sweep_temp_files",
    "folds_case",
    "fsync_dir",
    "hardlink_refusal",
    "moved_away",
    "os_error",
    "read_file",
    "rename_noreplace",
    "same_entry",
    "write_temp",
]

NAME_MAX = 255  # bytes per file or folder name on Linux file systems
MAX_EDIT_BYTES = 64 * 1024 * 1024  # notes larger than the scanner indexes are not edited
TEMP_PREFIX, TEMP_SUFFIX = ".vaultwatch-", ".tmp"  # the write path's own temporary files (see clean_temp_files)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class WriteRefused(VaultError):
    """The write breaks a rule (not a note, too large, NUL bytes, overwrite without if_match...)."""

    code = "write_refused"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class WriteFailed(VaultError):
    """The file system refused the write (disk full, read-only, permissions); nothing changed."""

    code = "write_failed"


def os_error(exc: OSError, rel: str, unchanged: str = "is unchanged") -> WriteFailed:
    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        why = "disk full (no space left on the device)"
        fix = "free some space and retry"
    elif code == errno.EFBIG:
        why = "the file is larger than the file system or process allows"
        fix = "write less content"
    elif code == errno.EROFS:
        why = "the vault is on a read-only file system"
        fix = "make it writable first"
    elif code in (errno.EACCES, errno.EPERM):
        why = "permission denied"
        fix = "check the permissions of the note and its folder"
    elif code == errno.ENAMETOOLONG:
        long = [p for p in rel.split("/") if len(p.encode("utf-8", "surrogateescape")) > NAME_MAX]
        if long:
            part = long[0]
            which = "file" if part == rel.rsplit("/", 1)[-1] else "folder"
            short = part[:20] + "..." if len(part) > 20 else part
            why = (
                f"the {which} name {short!r} is {len(part.encode('utf-8', 'surrogateescape'))} bytes, over the "
                f"file system's limit of {NAME_MAX} bytes per name"
            )
            fix = f"use a shorter {which} name"
        else:
            why = "the path is too long for the file system"
            fix = "use fewer or shorter folder names"
    else:
        why = exc.strerror or str(exc)
        fix = "check the vault folder and retry"
    return WriteFailed(f"write failed: {why}; {rel!r} {unchanged}; {fix}")


def hardlink_refusal(rel: str, nlink: int) -> WriteRefused:
    return WriteRefused(
        f"{rel!r} is hard-linked ({nlink} names on disk, which may include a file outside the "
        "vault), so vaultwatch neither reads nor rewrites it; replace it with a plain copy "
        "(e.g. cp it to a new name and move that over it), or rename or delete it",
        "hard_linked",
    )


def read_file(loc: Loc, rel: str) -> tuple[bytes, int] | None:
    """(bytes, mode) of the regular file `loc` names, or None when nothing is there."""
    if loc.missing:
        return None
    try:
        fd = loc.open(os.O_RDONLY | O_NONBLOCK)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise WriteRefused(f"{rel!r} is a folder, not a note", "is_a_folder") from None
    except OSError as exc:
        raise os_error(exc, rel, "was not changed") from None
    try:
        st = os.fstat(fd)
        if stat_mod.S_ISDIR(st.st_mode):
            raise WriteRefused(f"{rel!r} is a folder, not a note", "is_a_folder")
        if not stat_mod.S_ISREG(st.st_mode):
            raise WriteRefused(
                f"{rel!r} is not a regular file (a FIFO or device?); vaultwatch only writes regular files",
                "not_a_regular_file",
            )
        if st.st_nlink > 1:
            raise hardlink_refusal(rel, st.st_nlink)
        if st.st_size > MAX_EDIT_BYTES:
            raise WriteRefused(
                f"{rel!r} is larger than {MAX_EDIT_BYTES // 2**20} MiB; vaultwatch does not rewrite notes that large",
                "too_large",
            )
        return read_all(fd), stat_mod.S_IMODE(st.st_mode)
    finally:
        os.close(fd)


def fsync_dir(dir_fd: int) -> None:
    """fsync the folder a core.disk.safeio descriptor names."""
    try:
        os.fsync(dir_fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the data itself is synced


def rename_noreplace(src_dir: int, src: str, dst_dir: int, dst: str) -> None:
    """Rename src (in folder descriptor src_dir) to dst (in dst_dir) atomically, failing with
    FileExistsError if dst exists (files or folders). Nothing is resolved by path string."""
    if platform.renameat2_noreplace(src_dir, src, dst_dir, dst):
        return
    st = os.stat(src, dir_fd=src_dir, follow_symlinks=False)
    if stat_mod.S_ISDIR(st.st_mode):
        try:  # best effort where the kernel lacks RENAME_NOREPLACE
            os.stat(dst, dir_fd=dst_dir, follow_symlinks=False)
        except FileNotFoundError:
            os.rename(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
            return
        raise FileExistsError(errno.EEXIST, "File exists", dst)
    os.link(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)  # no-clobber
    os.unlink(src, dir_fd=src_dir)


Hook = Callable[[str], None]


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()  # what a switch replaced, where the system could not tell
Replaced = bytes | None | _Unknown


def _read_taken_out(dir_fd: int, name: str, target: str) -> Replaced:
    """The bytes of the file a switch took out of the note's name `target`, read as `read_file`
    reads a note (never blocking, never through a link). WriteRefused for anything it would refuse
    to write over."""
    try:
        fd = os.open(name, os.O_RDONLY | O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:  # taken by a finish while this process was stopped: the journal has it
        return UNKNOWN
    except OSError:
        raise WriteRefused(
            f"{target!r} was replaced by a link or something unreadable while this write was in progress; "
            "nothing was written",
            "changed_kind",
        ) from None
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise WriteRefused(
                f"{target!r} was replaced by a folder, FIFO or device while this write was in progress; "
                "nothing was written",
                "changed_kind",
            )
        if st.st_nlink > 1:
            raise hardlink_refusal(target, st.st_nlink)
        if st.st_size > MAX_EDIT_BYTES:
            raise WriteRefused(
                f"{target!r} was replaced by a file larger than {MAX_EDIT_BYTES // 2**20} MiB while this write "
                "was in progress; nothing was written",
                "too_large",
            )
        return read_all(fd)
    finally:
        os.close(fd)


SYNC_THREADS = 2  # folder fsyncs of concurrent writes run side by side (the disk may batch them)
_sync_queue: queue.SimpleQueue[tuple[int, threading.Event]] | None = None
_sync_lock = threading.Lock()


def _sync_loop(work: queue.SimpleQueue[tuple[int, threading.Event]]) -> None:
    while True:
        fd, done = work.get()
        try:
            fsync_dir(fd)
        finally:
            os.close(fd)
            done.set()


def _sync_threads() -> queue.SimpleQueue[tuple[int, threading.Event]]:
    """The folder fsyncs' queue, its daemon threads started on first use (a process that exits
    has waited for its writes' fsyncs already: FolderSyncs.wait)."""
    global _sync_queue
    with _sync_lock:
        if _sync_queue is None:
            work: queue.SimpleQueue[tuple[int, threading.Event]] = queue.SimpleQueue()
            for n in range(SYNC_THREADS):
                threading.Thread(target=_sync_loop, args=(work,), name=f"vaultwatch-fsync-{n}", daemon=True).start()
            _sync_queue = work
        return _sync_queue


class FolderSyncs:
    """Folder fsyncs of one operation, run in the background and waited for together.

    A replace is durable only once its folder is fsynced. That fsync (a disk flush, milliseconds)
    does not keep the caller's next steps from being right, only from being durable: the index
    refresh and the answer's fields can be made meanwhile. The caller waits (`wait`, or leaving the
    `with` block, also on an error) before anything that says "done": the answer, the change's
    event and its journal row. Each fsync works on its own duplicate of the folder's descriptor,
    so the caller may close its own.
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: list[threading.Event] = []

    def start(self, dir_fd: int) -> None:
        try:
            fd = os.dup(dir_fd)
        except OSError:  # out of descriptors: sync here, as without `later`
            fsync_dir(dir_fd)
            return
        done = threading.Event()
        self._pending.append(done)
        _sync_threads().put((fd, done))

    def wait(self) -> None:
        """Return once every fsync started so far is done."""
        while self._pending:
            self._pending.pop().wait()

    def __enter__(self) -> FolderSyncs:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.wait()


class TempFile:
    """A synced temporary file beside a note, waiting to become it (`commit`) or to go (`discard`).

    It is made (`write_temp`) before the change may be written, so that a change waiting for
    the person's approval has its bytes on disk already and only the switch remains after the
    key. While it exists its descriptor holds an flock, which `clean_temp_files` (in any
    process) takes as "in use": a waiting change's file is never swept away as a leftover.
    """

    __slots__ = ("dir_fd", "fd", "name")

    def __init__(self, dir_fd: int, name: str, fd: int) -> None:
        self.dir_fd = dir_fd  # the note's folder (not owned: the caller's Loc keeps it open)
        self.name = name
        self.fd: int | None = fd

    def commit(
        self,
        target: str,
        *,
        create: bool,
        precheck: Callable[[], None] | None = None,
        hook: Hook | None = None,
        later: FolderSyncs | None = None,
        placed: Callable[[], bool] | None = None,
        shown: str | None = None,
    ) -> Replaced:
        """Switch the temporary file in as `target` (in the same folder), then fsync the folder
        (in the background with `later`, which the caller waits for before it answers).

        create: no-clobber (FileExistsError if something appeared). precheck runs just before
        the switch (it raises to abort, and the temporary file stays for `discard`); `placed`, just
        before and after it, says whether the folder is still where the change was decided on (when
        not: nothing is written, or the switch is undone). Returns the
        bytes the switch replaced (None: nothing was there), or UNKNOWN where the system cannot
        swap two names (a plain replace then). `shown`: the note's vault path, for the messages."""
        if precheck is not None:
            precheck()
        if hook is not None:
            hook("checked")
        if placed is not None and not placed():
            raise moved_away(shown or target)
        dfd = self.dir_fd
        replaced: Replaced = UNKNOWN
        if create:
            os.link(self.name, target, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
            if placed is not None and not placed():  # moved in the instant before the link
                os.unlink(target, dir_fd=dfd)  # (the link just made: this write's own bytes)
                raise moved_away(shown or target)
            os.unlink(self.name, dir_fd=dfd)
            replaced = None
        elif platform.renameat2_exchange(dfd, self.name, dfd, target):
            # the switch swaps the names: the temporary name now holds the very file the write
            # replaced, whatever reached the note between the last look and the switch (another
            # process's write, an editor's save, a note made anew after a rename). (A note deleted
            # meanwhile: FileNotFoundError, nothing written; the precheck would have refused it.)
            if hook is not None:
                hook("exchanged")
            try:
                replaced = _read_taken_out(dfd, self.name, target)
                if placed is not None and not placed():
                    raise moved_away(shown or target)
            except WriteRefused:
                # not a note the write path writes over (a folder, a FIFO, a link, a hard-linked or
                # huge file swapped in meanwhile), or its folder went where no note is written:
                # put it back, and nothing was written
                platform.renameat2_exchange(dfd, self.name, dfd, target)
                raise
            if replaced is not UNKNOWN:
                os.unlink(self.name, dir_fd=dfd)
        else:
            os.replace(self.name, target, src_dir_fd=dfd, dst_dir_fd=dfd)
        self._close()
        self.name = ""
        if hook is not None:
            hook("replaced")
        if later is not None:
            later.start(dfd)
        else:
            fsync_dir(dfd)
        return replaced

    def discard(self) -> None:
        """Remove the temporary file (nothing when it was committed); safe to call twice."""
        if self.name:
            try:
                os.unlink(self.name, dir_fd=self.dir_fd)
            except OSError:
                pass
            self.name = ""
        self._close()

    def _close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)  # drops the flock


def moved_away(path: str, change: str = "write", done: str = "written") -> WriteRefused:
    """The refusal of a change whose folder moved after it was decided on (the write path's one
    wording of it, for writes here and for renames and deletes in core.edit.writes)."""
    now = moved_while_waiting(path)  # the journal saw where it went: say it, not "look"
    where = f"it is now at {now!r}: read it there and try again" if now else "look where it is now and try again"
    return WriteRefused(
        f"the folder of {path!r} was moved while this {change} was in progress or waited for approval; "
        f"nothing was {done}: {where}",
        "moved_away",
    )


def write_temp(loc: Loc, data: bytes, *, mode: int | None, hook: Hook | None = None) -> TempFile:
    """`data` in a new hidden temporary file in `loc`'s folder, written and fsynced (see TempFile).
    `mode`: the note's own, which it takes before its switch in; `hook("temp_created")` (crash tests)
    runs once it exists, before any byte is in it."""
    dfd = loc.dir_fd
    # Replacing a note: made readable by its owner only, and given the note's mode once written. Made
    # with the usual 0666 (less the umask), a private note's new bytes would lie open to every local
    # user until the chmod, and a descriptor opened meanwhile goes on reading them after it.
    first = 0o600 if mode is not None else 0o666
    for _ in range(50):
        candidate = f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"  # hidden: never indexed
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, first, dir_fd=dfd)
        except FileExistsError:
            continue
        break
    else:
        raise OSError(errno.EEXIST, "could not create a temporary file")
    temp = TempFile(dfd, candidate, fd)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # "in use" for clean_temp_files until it is committed or discarded
        if hook is not None:
            hook("temp_created")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        temp.discard()
        raise
    return temp


def _in_use(name: str, dfd: int) -> bool:
    """True when a live write holds the temporary file's flock (a change waiting for approval)."""
    try:
        fd = os.open(name, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, dir_fd=dfd)
    except PermissionError:
        return False  # a file its note's mode keeps unreadable: the age rule alone decides, as before
    except OSError:
        return True  # cannot look: leave it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


_TEMP_NAME = re.compile(r"\.vaultwatch-[0-9a-f]{16}\.tmp")
_STARTED = time.time()
TEMP_GRACE_S = 2.0  # s: a temporary file this young may be another process's write, between create and flock


def clean_temp_files(
    root_real: str,
    *,
    older_than: float | None = None,
    young: list[float] | None = None,
    keep: Collection[str] = (),
) -> list[str]:
    """Remove the write path's own temporary files left by a killed run; returns their vault paths.

    Only names this module makes (`.vaultwatch-<16 hex>.tmp`, regular files) whose mtime is
    older than `older_than` (default: this process's start, and at least 2 s ago, so a write
    still running in another process is left alone) and whose flock no live write holds (a
    change waiting for the person's approval keeps its file, however old) are removed. The walk works on folder
    descriptors (core.disk.walk: iterative, any depth), skips hidden folders and never follows a symlink.
    `young` gathers the mtimes of the files left alone only for their age and no live write holds.
    The files of `keep` (vault paths: the killed writes nobody has settled yet) are left alone too.
    """
    limit = min(_STARTED, time.time() - TEMP_GRACE_S) if older_than is None else older_than
    removed: list[str] = []
    for dirpath, dirnames, filenames, dfd in fwalk(root_real):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not _TEMP_NAME.fullmatch(name):
                continue
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                rel = os.path.join(dirpath, name)[len(root_real) + 1 :]
                if not stat_mod.S_ISREG(st.st_mode) or rel in keep or _in_use(name, dfd):
                    continue
                if st.st_mtime >= limit:
                    if young is not None:
                        young.append(st.st_mtime)
                    continue
                os.unlink(name, dir_fd=dfd)
                removed.append(rel)
            except OSError:
                continue
    return removed


def sweep_temp_files(root_real: str, keep: Collection[str] = ()) -> list[str]:
    """clean_temp_files, and once more when it left files alone only for their age: a run killed
    just before (a bridge restarts the server at once; `vaultwatch revert` finishes a killed one)
    left files too young to tell from another process's write; once they are old enough, a live
    write holds its file's flock, so only the killed run's go. May wait TEMP_GRACE_S. `keep`: as
    clean_temp_files."""
    young: list[float] = []
    removed = clean_temp_files(root_real, young=young, keep=keep)
    if young:
        time.sleep(max(0.0, max(young) + TEMP_GRACE_S - time.time()) + 0.1)
        removed += clean_temp_files(root_real, older_than=time.time() - TEMP_GRACE_S, keep=keep)
    return removed


SWEEP_AFTER_LOAD_WAIT_S = 120.0  # the sweep waits this long at most for the first index
SWEEP_PAUSE_WAIT_S = 30.0  # then this long at most for a pause in a client's calls
SWEEP_POLL_S = 0.05


def clean_temp_files_soon(vault: Vault) -> threading.Thread:
    """sweep_temp_files in a background thread, reported on the bus as an IndexProblem (info)."""

    def run() -> None:
        from vaultwatch.core.events import IndexProblem

        # after the first index: its walk of every folder would otherwise share the interpreter with the
        # index's own load, which the first answers wait for (a live write holds its file's flock, so a
        # later sweep removes nothing more)
        vault.wait_ready(SWEEP_AFTER_LOAD_WAIT_S)
        # and after the client's first pause: a start's first calls (a whole listing, page after page)
        # come right as the index is ready, and the walk would share the interpreter with them
        Rests().wait_pause(lambda: (busy := vault.answering) is not None and busy(), SWEEP_POLL_S, SWEEP_PAUSE_WAIT_S)
        try:
            # a killed write's own file stays until its intent is settled (Vault.finish_interrupted_soon):
            # it tells whether the write landed
            keep = vault.unsettled_temp_files()
            if keep is None:  # the journal cannot be opened: a killed write's file may be all that tells of it
                return
            removed = sweep_temp_files(vault.root_real, keep=keep)
        except OSError:
            return
        if removed:
            vault.bus.publish(
                IndexProblem(
                    f"removed {len(removed)} temporary file(s) an interrupted write left "
                    f"behind: {', '.join(removed[:5])}",
                    "info",
                )
            )

    thread = threading.Thread(target=run, name="vaultwatch-temp-cleanup", daemon=True)
    thread.start()
    return thread


def folds_case(dir_fd: int, siblings: list[str]) -> bool:
    """True when the folder's file system finds a name in another case (probed on one existing name)."""
    if platform.folds_case_forced():
        return True
    probe = next((n for n in siblings if n.swapcase() != n), None)
    if probe is None:
        return False
    try:
        a = os.stat(probe, dir_fd=dir_fd, follow_symlinks=False)
        b = os.stat(probe.swapcase(), dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def same_entry(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    return a is not None and b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
