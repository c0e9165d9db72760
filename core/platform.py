"""Every operating-system call that only some systems have, behind one module.

vaultwatch runs on Linux and macOS. A few of its guards use calls that only Linux (or only
glibc) offers; each has a fallback that keeps the guard's promise with portable calls, and
this module is the one place that decides which is taken:

- `openat2`: the kernel's `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` (Linux >= 5.6).
  Fallback: core.disk.safeio's component-by-component walk with O_NOFOLLOW.
- `proc`: `/proc/self/fd/N` (the name the kernel gives an open file), `/proc/locks` (who
  holds the vault's flock), `/proc/self/statm` (resident memory) and the file watcher's inotify
  descriptors (what the kernel still holds for them, `FIONREAD`). Fallback: no name (the
  callers' descriptor walks stand alone), a probe of the lock itself, 0 bytes, and no count
  (an exit's drain gives the OS a fixed moment instead: core.live.watch).
- `peercred`: `SO_PEERCRED` (the uid and pid on the other end of a Unix socket). Fallback:
  no peer credentials; the socket's folder mode and owner checks stand alone.
- `renameat2`: glibc's `renameat2(RENAME_NOREPLACE)`, and `RENAME_EXCHANGE` for a write's switch
  (which then holds exactly what it replaced). Fallback: link + unlink for files, a
  check-then-rename for folders, a plain replace for a switch (core.edit.atomic).
- `glibc`: glibc's `mallopt` and `malloc_trim` (core.memory). Fallback: do nothing.
- `rlimit`: `setrlimit(RLIMIT_DATA)`, a cap on a worker process's memory (Linux counts the
  heap and every private writable mapping in it). Fallback: no cap.

Each capability has one switch that `force` (or VAULTWATCH_PLATFORM_OFF) turns off, so a test on Linux runs the very
fallback a Mac runs, and a counter (`fallbacks`) that proves the fallback was taken.

One behaviour of the file system is forced the other way, on: `folds_case`, a file system
that compares names without case (macOS's APFS and HFS+ by default, FAT, Windows shares).
vaultwatch probes it per vault (core.edit.effects.form_of, core.edit.atomic.folds_case);
`force(folds_case=True)` (or VAULTWATCH_PLATFORM_FOLDS_CASE=1 for a whole process) makes the
probes answer "folds" on a case-sensitive test machine, where no such file system can be
mounted (a kernel without CONFIG_UNICODE refuses ext4 and tmpfs casefold).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import socket
import struct
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "CAPABILITIES",
    "available",
    "fallback",
    "fallbacks",
    "force",
    "folds_case_forced",
    "open_beneath",
    "fd_path",
    "can_name_locks",
    "flock_holder_pid",
    "flock_holders",
    "flock_holders_of",
    "peer_credentials",
    "renameat2_exchange",
    "renameat2_noreplace",
    "glibc_function",
    "statm_resident_pages",
    "listening_unix_sockets",
    "process_cmdline",
    "pid_alive",
    "inotify_fds",
    "queued_event_bytes",
    "limit_data_memory",
]

CAPABILITIES = ("openat2", "proc", "peercred", "renameat2", "glibc", "rlimit")


def _off_from_env() -> set[str]:
    from vaultwatch.core import settings  # noqa: PLC0415

    raw = settings.env("VAULTWATCH_PLATFORM_OFF") or ""
    return {name.strip() for name in raw.split(",") if name.strip() in CAPABILITIES}


def _folds_case_from_env() -> bool:
    from vaultwatch.core import settings  # noqa: PLC0415

    return bool(settings.env("VAULTWATCH_PLATFORM_FOLDS_CASE"))


# Capabilities turned off: by VAULTWATCH_PLATFORM_OFF for a whole process (a test's server or
# bridge), by `force` for a block of a test.
_off: set[str] = _off_from_env()
_folds_case: list[bool] = [_folds_case_from_env()]  # forced on (see the module doc)
_lock = threading.Lock()
# How often each capability's fallback was taken; a test reads it to prove it ran the fallback.
fallbacks: Counter[str] = Counter()


@contextmanager
def force(*, folds_case: bool | None = None, **caps: bool) -> Iterator[None]:
    """Turn capabilities off (`force(openat2=False)`) for the block, as on a system without them;
    `folds_case=True`: the vault's file system is taken to compare names without case."""
    for name in caps:
        if name not in CAPABILITIES:
            raise ValueError(f"unknown platform capability {name!r}; known: {', '.join(CAPABILITIES)}")
    with _lock:
        before = set(_off)
        folded = _folds_case[0]
        for name, on in caps.items():
            if on:
                _off.discard(name)
            else:
                _off.add(name)
        if folds_case is not None:
            _folds_case[0] = folds_case
    try:
        yield
    finally:
        with _lock:
            _off.clear()
            _off.update(before)
            _folds_case[0] = folded


def folds_case_forced() -> bool:
    """True when `force(folds_case=True)` or VAULTWATCH_PLATFORM_FOLDS_CASE says the file system folds case."""
    return _folds_case[0]


def fallback(name: str) -> None:
    """Record that `name`'s fallback was taken (callers whose fallback lives beside their logic)."""
    fallbacks[name] += 1


def available(name: str) -> bool:
    """True when the capability is present on this system and not forced off."""
    if name in _off:
        return False
    if name == "openat2":
        return _openat2 is not None
    if name == "proc":
        return os.path.isdir("/proc/self/fd")
    if name == "peercred":
        return hasattr(socket, "SO_PEERCRED")
    if name == "renameat2":
        return _renameat2 is not None
    if name == "glibc":
        return _libc() is not None
    if name == "rlimit":
        return _resource() is not None
    raise ValueError(f"unknown platform capability {name!r}")


# --- openat2 -------------------------------------------------------------------------------

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437, "riscv64": 437, "ppc64le": 437, "s390x": 437}
_PROBE_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _load_openat2() -> Callable[[int, str, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        nr = _SYS_OPENAT2.get(os.uname().machine)
        if nr is None:
            return None
        syscall = ctypes.CDLL(None, use_errno=True).syscall
        syscall.restype = ctypes.c_long
    except (AttributeError, OSError):
        return None

    def openat2(dir_fd: int, path: str, flags: int, resolve: int) -> int:
        how = _OpenHow(flags, 0, resolve)
        fd = syscall(
            ctypes.c_long(nr),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(os.fsencode(path)),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), path)
        return int(fd)

    # Probe once: an old kernel answers ENOSYS, a sandbox may answer EPERM.
    try:
        probe = os.open("/", _PROBE_FLAGS)
    except OSError:
        return None
    try:
        os.close(openat2(probe, ".", _PROBE_FLAGS, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS))
    except OSError:
        return None
    finally:
        os.close(probe)
    return openat2


_openat2 = _load_openat2()


def open_beneath(dir_fd: int, path: str, flags: int) -> int | None:
    """openat2 of `path` under `dir_fd`, refusing any symlink and anything outside; raises OSError
    when the kernel refuses. None when openat2 is unavailable: the caller walks instead."""
    if _openat2 is None or "openat2" in _off:
        fallback("openat2")
        return None
    return _openat2(dir_fd, path, flags, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)


# --- /proc ---------------------------------------------------------------------------------


def fd_path(fd: int) -> str | None:
    """The name the kernel gives the open file `fd` now (with " (deleted)" once unlinked), or
    None where the system cannot tell (no /proc): the caller's own checks then stand alone."""
    if "proc" in _off:
        fallback("proc")
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        fallback("proc")
        return None


def can_name_locks() -> bool:
    """True when `flock_holder_pid` can answer (/proc/locks); otherwise a caller probes the lock."""
    if "proc" in _off or not os.path.exists("/proc/locks"):
        fallback("proc")
        return False
    return True


def flock_holder_pid(st: os.stat_result) -> int | None:
    """The pid holding an flock on the file with this stat's (device, inode), from /proc/locks;
    None when nobody holds one or the system cannot tell."""
    return flock_holders().get(_lock_key(st))


def flock_holders_of(stats: list[os.stat_result]) -> list[int | None]:
    """`flock_holder_pid` of each of `stats`, from one read of /proc/locks (a server's start asks
    of every folder above its vault)."""
    held = flock_holders() if stats else {}
    return [held.get(_lock_key(st)) for st in stats]


def _lock_key(st: os.stat_result) -> str:
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"


def flock_holders() -> dict[str, int]:
    """{"dev:dev:inode": pid} of every flock /proc/locks lists as held ({} when the system cannot tell)."""
    if "proc" in _off:
        fallback("proc")
        return {}
    held: dict[str, int] = {}
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            for line in fh:
                parts = line.split()
                # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2156312 0 EOF" (blocked waiters start with "->")
                if len(parts) >= 6 and parts[1] == "FLOCK" and parts[4].isdigit():
                    held.setdefault(parts[5], int(parts[4]))
    except OSError:
        fallback("proc")
    return held


def listening_unix_sockets(pid: int) -> list[str]:
    """The paths of the Unix sockets process `pid` listens on, from /proc; [] where the system
    cannot tell (the caller then trusts the holder's published record alone)."""
    if "proc" in _off:
        fallback("proc")
        return []
    try:
        inodes = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        paths = []
        with open(f"/proc/{pid}/net/unix", encoding="utf-8", errors="replace") as fh:
            next(fh, None)
            for line in fh:
                parts = line.split(None, 7)
                # Num RefCount Protocol Flags Type St Inode Path; flag 0x10000 = listening
                if len(parts) == 8 and parts[6] in inodes and int(parts[3], 16) & 0x10000:
                    paths.append(parts[7].rstrip("\n"))
        return paths
    except (OSError, ValueError):
        fallback("proc")
        return []


def process_cmdline(pid: int) -> list[bytes] | None:
    """Process `pid`'s command line, from /proc; None where the system cannot tell."""
    if "proc" in _off:
        fallback("proc")
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().split(b"\0")
    except OSError:
        fallback("proc")
        return None


def inotify_fds() -> frozenset[int] | None:
    """This process's inotify descriptors now, from /proc; None where the system cannot tell."""
    if "proc" in _off:
        fallback("proc")
        return None
    found = set()
    try:
        for name in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify":
                    found.add(int(name))
    except OSError:
        fallback("proc")
        return None
    return frozenset(found)


def queued_event_bytes(fds: frozenset[int]) -> int | None:
    """Bytes of events the kernel holds for these inotify descriptors that nobody has read yet
    (FIONREAD); None where the system cannot tell (or a descriptor is gone)."""
    if "proc" in _off or not fds:
        fallback("proc")
        return None
    import array  # noqa: PLC0415
    import fcntl  # noqa: PLC0415
    import termios  # noqa: PLC0415

    total = 0
    for fd in fds:
        count = array.array("i", [0])
        try:
            fcntl.ioctl(fd, termios.FIONREAD, count, True)
        except OSError:
            fallback("proc")
            return None
        total += count[0]
    return total


def pid_alive(pid: object) -> bool:
    """Whether process `pid` (a positive int, else False) still exists: signal 0 works the same
    on every POSIX system; a process of another user answers EPERM and is alive."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def statm_resident_pages() -> int | None:
    """This process's resident pages from /proc/self/statm; None where there is no /proc."""
    if "proc" in _off:
        fallback("proc")
        return None
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        fallback("proc")
        return None


# --- SO_PEERCRED ---------------------------------------------------------------------------


def peer_credentials(sock: socket.socket) -> tuple[int | None, int | None]:
    """(pid, uid) of the process on the other end of a connected Unix socket, when the OS tells;
    (None, None) otherwise, and the caller relies on the socket file's owner and folder."""
    if "peercred" in _off or not hasattr(socket, "SO_PEERCRED"):
        fallback("peercred")
        return None, None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", raw)
    return (pid if pid > 0 else None), uid


# --- renameat2 -----------------------------------------------------------------------------

_RENAME_NOREPLACE = 1
_renameat2: Any
try:
    _renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
except (AttributeError, OSError):  # not glibc >= 2.28 / not Linux
    _renameat2 = None

_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP)


def renameat2_noreplace(src_dir: int, src: str, dst_dir: int, dst: str) -> bool:
    """renameat2(RENAME_NOREPLACE): True when done, FileExistsError (an OSError) when dst exists;
    False when the system or its file system lacks it, and the caller falls back."""
    return _renameat2_with(_RENAME_NOREPLACE, src_dir, src, dst_dir, dst)


_RENAME_EXCHANGE = 2


def renameat2_exchange(src_dir: int, src: str, dst_dir: int, dst: str) -> bool:
    """renameat2(RENAME_EXCHANGE): swap two existing names atomically. True when done; False when
    the system or its file system lacks it, and the caller replaces instead; FileNotFoundError
    (an OSError) when either name is gone."""
    return _renameat2_with(_RENAME_EXCHANGE, src_dir, src, dst_dir, dst)


def _renameat2_with(flags: int, src_dir: int, src: str, dst_dir: int, dst: str) -> bool:
    """renameat2 with `flags`: True when done, the OSError its errno names, or False (recorded as
    a fallback) when the system or its file system lacks it."""
    if _renameat2 is not None and "renameat2" not in _off:
        if _renameat2(src_dir, os.fsencode(src), dst_dir, os.fsencode(dst), flags) == 0:
            return True
        err = ctypes.get_errno()
        if err not in _UNSUPPORTED:
            raise OSError(err, os.strerror(err), dst)
    fallback("renameat2")
    return False


# --- glibc ---------------------------------------------------------------------------------


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: glibc's when linked to it
        libc.mallopt  # noqa: B018  (glibc's, not musl's or another libc's)
    except (OSError, AttributeError):
        return None
    return libc


def glibc_function(name: str) -> Any:
    """glibc's function `name` (a ctypes function), or None where there is no glibc."""
    libc = None if "glibc" in _off else _libc()
    if libc is None:
        fallback("glibc")
        return None
    try:
        return getattr(libc, name)
    except AttributeError:
        fallback("glibc")
        return None


# --- RLIMIT_DATA ---------------------------------------------------------------------------


def _resource() -> Any:
    """The `resource` module where it has RLIMIT_DATA (not on Windows), else None."""
    try:
        import resource  # noqa: PLC0415
    except ImportError:
        return None
    return resource if hasattr(resource, "RLIMIT_DATA") else None


def limit_data_memory(extra: int) -> int | None:
    """Cap this process's data memory at what it holds now plus `extra` bytes (a forked process
    starts with its parent's heap), or lower where a lower cap is set already; the cap now in
    force, None where none can be set (then the process runs without one). A process over its
    cap gets allocation failures (MemoryError in Python), never the machine's memory."""
    resource = _resource() if "rlimit" not in _off else None
    held = _data_bytes() if resource is not None else None
    if resource is None or held is None:
        fallback("rlimit")
        return None
    limit = held + extra
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        return int(soft)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (OSError, ValueError):
        fallback("rlimit")
        return None
    return limit


def _data_bytes() -> int | None:
    """The data memory this process holds (heap, private writable mappings and stack) from
    /proc/self/statm; None where there is no /proc."""
    if "proc" in _off:
        return None
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[5]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
