"""The note vectors' cache file (`vectors.npz`, beside the full-text index): written whole, read mapped.

The file is a plain uncompressed NumPy .npz: `version`, `root`, `paths` (the notes' paths as
UTF-8 lines, uint8), `keys` (n x 3 int64: each note's size, mtime_ns and inode) and `vecs`
(n x DIM int8). `load` and `save` hand back a `Mapped`: `keys` and `vecs` are read-only views
of the file's own bytes (mmap), not copies (`load` also the paths, read: the caller compares
them and lets them go).

Why mapped: every query by meaning scans every row, so a copy of the matrix stayed resident in
the process for good (a large share of the app's memory target in a big vault). Mapped, the rows live in
the OS's page cache, and `Mapped.release()` after a scan takes them out of the process again
(MADV_DONTNEED on a read-only file mapping: the pages stay cached, the next scan maps them back
at a small cost per scan). The file is only ever replaced
whole (a temporary file, then os.replace), never changed in place, so a mapping stays valid
whatever happens to the path afterwards (the old file lives on until its mapping is gone).
"""

from __future__ import annotations

import mmap
import os
import struct
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from vaultwatch.core.disk.private import open_private

LOCAL_HEADER = 30  # a zip local file header's fixed part; its name and extra field lengths end it


class Mapped:
    """One cache file mapped: `keys` and `vecs` are views of it."""

    __slots__ = ("keys", "mm", "vecs")

    def __init__(self, mm: mmap.mmap, keys: Any, vecs: Any) -> None:
        self.mm = mm
        self.keys = keys
        self.vecs = vecs

    def release(self) -> None:
        """Take the file's pages out of the process (they stay in the OS's page cache)."""
        release_pages(self.mm)


def release_pages(mm: mmap.mmap) -> None:
    """Take a read-only file mapping's pages out of the process (MADV_DONTNEED: they stay in
    the OS's page cache, and the next read maps them back)."""
    try:
        mm.madvise(mmap.MADV_DONTNEED)
    except (AttributeError, OSError, ValueError):  # no madvise here, or the mapping is closed
        pass


def _member_array(f: BinaryIO, mm: mmap.mmap, info: zipfile.ZipInfo, np: ModuleType) -> Any:
    """A stored (uncompressed) .npy member of the open zip `f` as a view of the mapping `mm`."""
    if info.compress_type != zipfile.ZIP_STORED:
        raise ValueError(f"{info.filename} is compressed")
    f.seek(info.header_offset)
    header = f.read(LOCAL_HEADER)
    if len(header) != LOCAL_HEADER or header[:4] != b"PK\x03\x04":
        raise ValueError(f"{info.filename}: no local header")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    start = info.header_offset + LOCAL_HEADER + name_len + extra_len
    f.seek(start)
    version = np.lib.format.read_magic(f)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read_header(f)
    if fortran or dtype.hasobject:
        raise ValueError(f"{info.filename}: not a plain C-ordered array")
    offset = f.tell()
    count = 1
    for n in shape:
        count *= n
    if offset - start + count * dtype.itemsize != info.file_size:
        raise ValueError(f"{info.filename}: its size does not match its shape")
    return np.frombuffer(mm, dtype=dtype, count=count, offset=offset).reshape(shape)


def _read(f: BinaryIO, np: ModuleType, root: str, version: int) -> tuple[bytes, Mapped] | None:
    """The open file `f`'s paths and the file mapped, or None when it is another version's or
    another vault's."""
    with zipfile.ZipFile(f) as z:
        with z.open("version.npy") as m:
            if int(np.lib.format.read_array(m, allow_pickle=False)) != version:
                return None
        with z.open("root.npy") as m:
            if str(np.lib.format.read_array(m, allow_pickle=False)) != root:
                return None
        with z.open("paths.npy") as m:
            paths = np.lib.format.read_array(m, allow_pickle=False).tobytes()
        keys_info, vecs_info = z.getinfo("keys.npy"), z.getinfo("vecs.npy")
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return paths, Mapped(mm, _member_array(f, mm, keys_info, np), _member_array(f, mm, vecs_info, np))


def load(path: Path, root: str, version: int) -> tuple[bytes, Mapped] | None:
    """(the notes' paths as UTF-8 lines, the file mapped) of the cache file at `path`, or None
    when it is missing, damaged, or not `root`'s `version`."""
    import numpy as np  # noqa: PLC0415  (the semantic extra's)

    try:
        with open(path, "rb") as f:
            return _read(f, np, root, version)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def save(path: Path, root: str, version: int, paths: list[str], keys: Any, vecs: Any) -> Mapped | None:
    """Write the cache file whole (a temporary file, then os.replace) and return it mapped (None
    if the written file could not be read back: the caller keeps its own arrays). OSError when
    it could not be written (nothing is left behind)."""
    import numpy as np  # noqa: PLC0415

    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        with os.fdopen(open_private(tmp, os.O_RDWR | os.O_TRUNC), "w+b") as f:
            np.savez(
                f,
                version=np.array(version),
                root=np.array(root),
                paths=np.frombuffer("\n".join(paths).encode("utf-8"), dtype=np.uint8),
                keys=keys,
                vecs=vecs,
            )
            f.flush()
            try:
                read = _read(f, np, root, version)  # the new file's inode: still the one at `path` after the replace
            except (ValueError, KeyError, EOFError, zipfile.BadZipFile):
                read = None
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return read[1] if read is not None else None
