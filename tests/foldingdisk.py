"""A folder on a disk that folds case, for tests of names spelled in another case: a FUSE passthrough
(fusepy, run by the system's python3 in a process of its own) over a backing folder, whose names are
looked up without case as macOS's disk, a vfat mount or an ext4 casefold folder look them up (and
with trailing dots and spaces dropped, as a Windows share does). Linux's own case-folding disks need
a kernel built with Unicode tables and a file system made for it, which a test cannot count on; a
FUSE mount needs /dev/fuse, fusermount and python3-fusepy. Without them the test skips, saying so.

    with folding_disk(tmp_path) as (backing, mounted):
        (backing / "Notes").mkdir()
        os.path.exists(mounted / "notes")   # True
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SYSTEM_PYTHON = "/usr/bin/python3"

PASSTHROUGH = textwrap.dedent("""
    import errno, os, sys
    from fusepy import FUSE, FuseOSError, Operations

    class Folding(Operations):
        def __init__(self, root):
            self.root = root
        def _real(self, path):
            cur = self.root
            for part in (p for p in path.split("/") if p):
                cand = os.path.join(cur, part)
                if not os.path.lexists(cand):
                    with_case = part.rstrip(". ").casefold()
                    try:
                        cand = next((os.path.join(cur, n) for n in sorted(os.listdir(cur)) if n.casefold() == with_case), cand)
                    except OSError:
                        pass
                cur = cand
            return cur
        def getattr(self, path, fh=None):
            st = os.lstat(self._real(path))
            keys = ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid", "st_ino")
            return {k: getattr(st, k) for k in keys}
        def access(self, path, mode):
            if not os.access(self._real(path), mode):
                raise FuseOSError(errno.EACCES)
        def readdir(self, path, fh): return [".", "..", *os.listdir(self._real(path))]
        def readlink(self, path): return os.readlink(self._real(path))
        def chmod(self, path, mode): os.chmod(self._real(path), mode)
        def chown(self, path, uid, gid): os.chown(self._real(path), uid, gid)
        def mkdir(self, path, mode): os.mkdir(self._real(path), mode)
        def rmdir(self, path): os.rmdir(self._real(path))
        def unlink(self, path): os.unlink(self._real(path))
        def symlink(self, name, target): os.symlink(target, self._real(name))
        def rename(self, old, new): os.rename(self._real(old), self._real(new))
        def link(self, target, source): os.link(self._real(source), self._real(target))
        def utimens(self, path, times=None): os.utime(self._real(path), times, follow_symlinks=False)
        def statfs(self, path):
            s = os.statvfs(self._real(path))
            keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")
            return {k: getattr(s, k) for k in keys}
        def open(self, path, flags): return os.open(self._real(path), flags)
        def create(self, path, mode, fi=None): return os.open(self._real(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        def read(self, path, size, offset, fh): return os.pread(fh, size, offset)
        def write(self, path, data, offset, fh): return os.pwrite(fh, data, offset)
        def truncate(self, path, length, fh=None): os.truncate(self._real(path), length)
        def flush(self, path, fh): return 0
        def release(self, path, fh): return os.close(fh)
        def fsync(self, path, datasync, fh): return os.fsync(fh)
        def fsyncdir(self, path, datasync, fh): return 0

    FUSE(Folding(sys.argv[1]), sys.argv[2], foreground=True, nothreads=True, use_ino=True, default_permissions=True)
""")


def _unavailable() -> str | None:
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount") is None:
        return "no FUSE here (/dev/fuse and fusermount)"
    if not os.path.exists(SYSTEM_PYTHON):
        return f"no {SYSTEM_PYTHON} to run the FUSE passthrough"
    found = subprocess.run([SYSTEM_PYTHON, "-c", "import fusepy"], capture_output=True)
    return None if found.returncode == 0 else "python3-fusepy is not installed for the system's python3"


@contextlib.contextmanager
def folding_disk(tmp: Path) -> Iterator[tuple[Path, Path]]:
    """(backing folder, its case-folding mount): fill the first, use the second (see module doc)."""
    why = _unavailable()
    if why is not None:
        pytest.skip(why)
    backing, mounted = tmp / "backing", tmp / "folding"
    backing.mkdir()
    mounted.mkdir()
    script = tmp / "foldingfs.py"
    script.write_text(PASSTHROUGH)
    proc = subprocess.Popen([SYSTEM_PYTHON, str(script), str(backing), str(mounted)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not os.path.ismount(mounted):
            if proc.poll() is not None or time.monotonic() > deadline:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                pytest.skip(f"the FUSE passthrough did not mount: {proc.stderr.read().decode(errors='replace')[-300:]}")
            time.sleep(0.05)
        yield backing, mounted
    finally:
        subprocess.run(["fusermount", "-u", "-z", str(mounted)], capture_output=True)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
