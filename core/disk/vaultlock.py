"""One server per vault on this machine, whatever the environment: an exclusive `flock` on the
vault directory itself, held while a process serves the vault (the TUI, `serve`, `serve --stdio`).

The lock belongs to the vault, not to a socket path or an environment variable: two servers
started with different XDG_RUNTIME_DIR (or one on stdio) still meet on the same directory
inode. The kernel drops the lock when the holder dies (even by SIGKILL), so a crash leaves no
stale lock behind. Who holds it is found two ways:

- `/proc/locks` names the pid holding an flock on the vault's (device, inode), from any
  environment of this user;
- the holder's record (`<state>/servers/<dev>-<ino>.<pid>.json`, mode 0600, in the user's state
  folder) says what it serves: socket path, HTTP URL, headless or TUI.

One server per vault means per folder tree, too: a server is refused for a folder inside a vault
another vaultwatch serves, or for one holding a served folder (`nested_server`). The person's
folder rules are paths from the root they serve, which name nothing from a folder below it, and
that vault's watcher would file the other server's agents' changes as outside edits.

The lock is the truth and a record only describes it: each holder writes its own record (named
by its pid, so no holder ever removes or replaces another's), publishes it only once it holds
the lock and removes it only after letting go. A record left by a holder killed with -9 names
a process that holds nothing: the next holder removes it, and a reader without /proc/locks
believes only the record of a process still alive.

Nothing is ever written into the vault.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import pwd
import stat as stat_mod
from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core import platform
from vaultwatch.core.disk.private import private_folder


class VaultBusy(Exception):
    """Another process already serves this vault; `holder` says which (pid, socket...)."""

    def __init__(self, root: str, holder: Holder) -> None:
        self.root = root
        self.holder = holder
        super().__init__(holder.describe(root))


class VaultNested(Exception):
    """Another vaultwatch serves a folder holding this vault, or one inside it (see module doc)."""

    def __init__(self, root: str, other: str, holder: Holder, *, alone_refused: bool = False) -> None:
        self.root = root
        self.other = other
        self.holder = holder
        # set by a caller that knows `root` served alone would be refused too once that server quits
        # (core.review.nestedvault, a layer above): then quitting it is no way to serve `root`
        self.alone_refused = alone_refused
        kind = {"tui": ", in its TUI", "headless": ", headless", "stdio": ", on stdio"}.get(
            str(holder.info.get("kind")), ""
        )
        who = f"pid {holder.pid}{kind}"
        why = (
            "the settings' folder rules are paths from the vault's root, so from another root they "
            "name other folders, and the vault's journal would list the other server's agents' "
            "changes as outside edits"
        )
        if _inside(root, other):
            rel = root[len(other) :].strip("/")
            said = (
                f"another vaultwatch ({who}) serves {other}, which holds {root}: no second server "
                f"starts on a folder inside a served vault ({why}). Let agents use that server "
                f"(`vaultwatch bridge --vault {other}`) and keep an agent to this folder with "
                f'`[agents.NAME] write = ["{rel}/**"]` in settings.toml; '
                + (
                    f"{root} alone is refused too, even once that server quits (it lies inside a vault of "
                    f"yours): only if it is a vault of its own, quit that server and start {root} with "
                    "--allow-nested"
                    if alone_refused
                    else f"or quit it and serve {root}"
                )
            )
        else:
            rel = other[len(root) :].strip("/")
            said = (
                f"another vaultwatch ({who}) serves {other}, a folder inside {root}: no server starts on "
                f"a folder holding a served one ({why}). "
                + (
                    f"Keep serving {other} alone: {root} holds a vault of yours, so it is refused even once "
                    f"that server quits; only if {root} is meant as a vault with {other} in it under "
                    f"{root}'s rules, quit that server and start {root} with --allow-nested"
                    if alone_refused
                    else f"Quit it first (its agents can then use this vault's server, kept to that folder "
                    f'with `[agents.NAME] write = ["{rel}/**"]`), or keep serving {other} alone'
                )
            )
        super().__init__(said)


@dataclass(frozen=True)
class Holder:
    """The process serving a vault, as far as it can be known."""

    pid: int | None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def socket(self) -> str | None:
        value = self.info.get("socket")
        return value if isinstance(value, str) else None

    def describe(self, root: str) -> str:
        who = f"pid {self.pid}" if self.pid else "another process"
        kind = self.info.get("kind")
        what = (
            {"tui": " in its TUI", "headless": " headless", "stdio": " on stdio"}.get(kind, "")
            if isinstance(kind, str)
            else ""
        )
        where = f" on {self.socket}" if self.socket else ""
        http = f" and {self.info['http']}" if isinstance(self.info.get("http"), str) else ""
        return f"another vaultwatch ({who}) already serves {root}{what}{where}{http}"


def home_dir() -> str:
    """The user's home from the password database ($HOME when it is not known there)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return os.path.expanduser("~")


def state_dir() -> str:
    """The user's vaultwatch state folder: $XDG_STATE_HOME/vaultwatch, else ~/.local/state/vaultwatch.

    It survives logout and reboots (unlike the runtime folder): logs of headless servers, the
    loopback HTTP token and the servers' records live here. Created 0700 when missing."""
    base = os.environ.get("XDG_STATE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.environ.get("HOME") or home_dir(), ".local", "state")
    return private_folder(os.path.join(base, "vaultwatch"))


def vault_key(root_real: str) -> str:
    """`<dev>-<ino>` of the vault directory: the same vault whatever path or environment names it."""
    st = os.stat(root_real)
    return f"{st.st_dev:x}-{st.st_ino:x}"


def _records_folder() -> str:
    return private_folder(os.path.join(state_dir(), "servers"))


def record_path(root_real: str, pid: int) -> str:
    """Where process `pid` publishes what it serves while it holds the vault's lock."""
    return os.path.join(_records_folder(), f"{vault_key(root_real)}.{pid}.json")


def _records(root_real: str) -> list[tuple[int | None, str]]:
    """(pid, path) of every record of this vault, an older vaultwatch's `<key>.json` (pid None) too."""
    key = vault_key(root_real)
    found: list[tuple[int | None, str]] = []
    with contextlib.suppress(OSError):
        folder = _records_folder()
        for name in os.listdir(folder):
            if name == f"{key}.json":
                found.append((None, os.path.join(folder, name)))
            elif name.startswith(f"{key}.") and name.endswith((".json", ".tmp")):
                middle = name[len(key) + 1 :].split(".", 1)[0]
                found.append((int(middle) if middle.isdigit() else None, os.path.join(folder, name)))
    return found


def _read_record(root_real: str, pid: int) -> dict[str, Any]:
    """The record process `pid` published for this vault ({} when it has none)."""
    try:
        return _record_at(record_path(root_real, pid), pid)
    except OSError:
        return {}


def lock_holder_pid(root_real: str) -> int | None:
    """The pid holding an flock on the vault directory, from /proc/locks (None when unknown)."""
    try:
        st = os.stat(root_real)
    except OSError:
        return None
    return platform.flock_holder_pid(st)


def holder(root_real: str) -> Holder | None:
    """Who serves the vault now, or None when nobody holds its lock (never takes the lock where
    /proc/locks can tell, so a server starting at that moment is not disturbed)."""
    if platform.can_name_locks():
        pid = lock_holder_pid(root_real)
        if pid is None:
            return None
        return Holder(pid, _read_record(root_real, pid))
    probe = VaultLock(root_real)
    try:
        probe.acquire(record=None)
    except VaultBusy as busy:
        return busy.holder
    except OSError:
        return None
    probe.release()
    return None


def _busy_holder(root_real: str) -> Holder:
    """Who holds the lock this process was just refused: the pid /proc/locks names, else the
    newest record of a live process (the one that took the lock last: a holder that let go
    removes its record only after, so two may stand for a moment). Holder(None) when nothing
    names one: the lock was let go since, or its holder has not published yet."""
    pid = lock_holder_pid(root_real)
    if pid is not None:
        return Holder(pid, _read_record(root_real, pid))
    newest: tuple[int, int, dict[str, Any]] | None = None
    for other, path in _records(root_real):
        if other is None or not path.endswith(".json") or not platform.pid_alive(other):
            continue
        info = _read_record(root_real, other)
        with contextlib.suppress(OSError):
            written = os.stat(path).st_mtime_ns
            if info and (newest is None or written > newest[0]):
                newest = (written, other, info)
    return Holder(newest[1], newest[2]) if newest else Holder(None, {})


def _inside(inner: str, outer: str) -> bool:
    """Whether the real path `inner` lies strictly inside the real path `outer`."""
    return inner != outer and inner.startswith(outer.rstrip("/") + "/")


def _serves_vaults(pid: int, info: dict[str, Any]) -> bool:
    """Whether process `pid`, holding an flock on a folder, is a vaultwatch serving it: its record
    says so, or its command line (another program may lock a folder for reasons of its own)."""
    if info:
        return True
    cmdline = platform.process_cmdline(pid) or []
    return any(b"vaultwatch" in arg for arg in cmdline)


def nested_server(root_real: str) -> tuple[str, Holder] | None:
    """(folder, holder) of a running vaultwatch that serves a folder holding `root_real` or one
    inside it, or None. Folders above are asked by their lock (/proc/locks names the holder in
    any environment); folders below, and every folder where /proc cannot tell, by the servers'
    records in the state folder."""
    if platform.can_name_locks():
        above: list[str] = []
        folder = root_real
        while (parent := os.path.dirname(folder)) != folder:
            folder = parent
            above.append(folder)
        stats = []
        for folder in above:
            try:
                stats.append((folder, os.stat(folder)))
            except OSError:
                continue
        pids = platform.flock_holders_of([st for _, st in stats])  # /proc/locks read once for them all
        for (folder, _st), pid in zip(stats, pids, strict=True):
            if pid is not None and pid != os.getpid():
                info = _read_record(folder, pid)
                if _serves_vaults(pid, info):
                    return folder, Holder(pid, info)
    with contextlib.suppress(OSError):
        folder_of_records = _records_folder()
        for name in sorted(os.listdir(folder_of_records)):
            pid_text = name.rsplit(".", 2)[1] if name.endswith(".json") and name.count(".") >= 2 else ""
            if not pid_text.isdigit() or int(pid_text) == os.getpid() or not platform.pid_alive(int(pid_text)):
                continue
            info = _record_at(os.path.join(folder_of_records, name), int(pid_text))
            other = info.get("vault")
            if not isinstance(other, str) or not (_inside(root_real, other) or _inside(other, root_real)):
                continue
            if platform.can_name_locks() and lock_holder_pid(other) != int(pid_text):
                continue  # a record of a server that no longer holds that folder
            return other, Holder(int(pid_text), info)
    return None


def _record_at(path: str, pid: int) -> dict[str, Any]:
    """The record at `path` if it is this user's regular file written by `pid` ({} otherwise)."""
    try:
        st = os.lstat(path)
        if not stat_mod.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return {}
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) and data.get("pid") == pid else {}
    except (OSError, ValueError):
        return {}


# A refusal that names nobody means the holder let go between the refusal and the look at who
# held it: the lock is asked for again, a few times (a holder that never publishes stays nameless).
_NAMELESS_RETRIES = 3


class VaultLock:
    """The exclusive lock on one vault (see module doc). Not reentrant: a second acquire of the
    same vault, even in this process, is refused like any other."""

    def __init__(self, root_real: str) -> None:
        self.root = root_real
        self._fd: int | None = None
        self._record: str | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, record: dict[str, Any] | None) -> None:
        """Take the lock or raise VaultBusy naming the holder; `record` is published for others to read."""
        for attempt in range(_NAMELESS_RETRIES + 1):
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
            busy = _busy_holder(self.root)
            if busy.pid is not None or busy.info or attempt == _NAMELESS_RETRIES:
                raise VaultBusy(self.root, busy) from None
        self._fd = fd
        self._sweep()
        if record is not None:
            self.publish(record)
            # a server (one that says what it serves) after it is published: of two starting at
            # once on nested folders, the later one sees the other's lock or record
            nested = nested_server(self.root)
            if nested is not None:
                self.release()
                raise VaultNested(self.root, *nested)

    def _sweep(self) -> None:
        """Remove every other record of this vault: while this process holds the lock, none of
        them describes a holder (a killed one's, or one that let go and has not removed it yet)."""
        for pid, path in _records(self.root):
            if pid != os.getpid():
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def publish(self, record: dict[str, Any]) -> None:
        """Replace this holder's record (pid added); informative only, never a reason to fail."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            path = record_path(self.root, os.getpid())
            tmp = f"{path}.tmp"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
            try:
                os.write(fd, json.dumps({**record, "pid": os.getpid(), "vault": self.root}).encode())
            finally:
                os.close(fd)
            os.replace(tmp, path)
            self._record = path

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        # The lock goes first and the record after: a record outliving the lock is stale for a
        # moment (a reader with /proc/locks never believes it; the next holder sweeps it), whereas
        # a lock outliving its record would refuse a taker in nobody's name.
        os.close(fd)  # drops the flock
        if self._record is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._record)  # this process's own record: no other holder writes it
            self._record = None

    def __enter__(self) -> VaultLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
