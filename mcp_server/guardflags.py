"""The guard the person set on a vault's server outlives that server: whichever server takes the
vault over next (the TUI's hand-back, a bridge's restart) serves under the same guard or a
stricter one, never a looser one.

The guard is what the person chose on the command line (or in the TUI) about what agents may do:
`--read-only` (no tools that change the vault), the approval mode chosen over the settings file's
(`--approve MODE`, or the TUI's `g`) and `--audit-log PATH` (every agent call kept where the
person reads it). The settings file's rules and the guard's environment variables are read by
every server from its own environment (core/review/guardenv.py, mcp_server/sameenv.py).

- Kept: every socket server, once it holds the vault's lock, writes the guard it serves under to
  `<state>/guards/<vault-key>.json` (0600 in a 0700 folder), and again whenever its approval
  mode changes. Only the lock's holder writes it and nobody removes it, so it outlives its
  writer, one killed with -9 included: the lock tells who serves, this file what the last
  server allowed.
- Applied: a headless server (the TUI's hand-back, a bridge's start, `serve --headless`) reads
  it once it holds the lock and serves under the stricter of its own options and the kept guard.
  A server the person starts (the TUI, `vaultwatch serve`) serves under its own options: they
  are the person's newest word, and replace the kept guard.
- Trusted as the servers' records are (core/disk/vaultlock.py): a regular file of this user in
  a folder of this user's, neither writable by anyone else. A record that is there but cannot be
  trusted or read stands for the strictest guard (read-only), said on stderr: a looser guard is
  never made up from a file someone else may have written. A vault never served has none.

`serve --stdio` takes no part: it serves only the client that started it, as that client's
configuration says, and nobody takes the vault over from it.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat as stat_mod
from dataclasses import dataclass, replace
from typing import Any

from vaultwatch.core.disk.private import private_folder
from vaultwatch.core.disk.vaultlock import state_dir, vault_key
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review.approval import load_rules

# approval modes by what waits for the person: nothing, deletes, every change
STRICTNESS = {"none": 0, "deletes": 1, "writes": 2}


@dataclass(frozen=True)
class Guard:
    """What a server lets agents do, as its options say."""

    read_only: bool = False
    approve: str | None = None  # the mode chosen over the settings file's; None: the file's applies
    audit_log: str | None = None  # an absolute path

    @classmethod
    def of(cls, read_only: bool, approve: str | None, audit_log: str | None) -> Guard:
        """From a command line's options (a relative audit log is made absolute where it was given)."""
        return cls(
            bool(read_only), approve or None, os.path.abspath(os.path.expanduser(audit_log)) if audit_log else None
        )

    def stricter(self, other: Guard) -> Guard:
        """The guard that keeps both: read-only when either is, the stricter chosen mode (a mode
        chosen over none chosen: the person's word is kept over the settings file's), and this
        guard's audit log, else the other's."""
        if self.approve is None or other.approve is None:
            approve = self.approve or other.approve
        else:
            approve = max(self.approve, other.approve, key=STRICTNESS.__getitem__)
        return Guard(self.read_only or other.read_only, approve, self.audit_log or other.audit_log)

    def serve_args(self) -> list[str]:
        """The `serve` options that start a server under this guard."""
        return [
            *(["--read-only"] if self.read_only else []),
            *(["--approve", self.approve] if self.approve else []),
            *(["--audit-log", self.audit_log] if self.audit_log else []),
        ]

    def describe(self) -> str:
        said = [
            *(["read-only"] if self.read_only else []),
            *([f"--approve {self.approve}"] if self.approve else []),
            *([f"--audit-log {self.audit_log}"] if self.audit_log else []),
        ]
        return ", ".join(said) or "no guard options"

    def plainly(self) -> str:
        """What agents may do under this guard, in the person's words (a headless server's log)."""
        if self.read_only:
            said = "read-only: agents can read the vault but change nothing"
        elif self.approve is None:
            said = "agents' changes wait for your approval as your settings file's rules say"
        else:
            said = {
                "writes": "approval mode writes: every change an agent makes waits for your approval",
                "deletes": "approval mode deletes: an agent's delete waits for your approval",
                "none": "approval mode none: agents' changes are written without asking you",
            }.get(self.approve, f"approval mode {self.approve}")
        if not self.read_only and self.approve != "none":
            said += " (`vaultwatch pending` lists what waits)"
        if self.audit_log:
            said += f"; every agent call is recorded in {self.audit_log}"
        return said


STRICTEST = Guard(read_only=True, approve="writes")


def _folder() -> str:
    return private_folder(os.path.join(state_dir(), "guards"))


def guard_path(root_real: str) -> str:
    return os.path.join(_folder(), f"{vault_key(root_real)}.json")


def _parsed(data: Any) -> Guard | None:
    if not isinstance(data, dict):
        return None
    read_only, approve, audit_log = data.get("read_only"), data.get("approve"), data.get("audit_log")
    if not isinstance(read_only, bool):
        return None
    if approve is not None and approve not in STRICTNESS:
        return None
    if audit_log is not None and not (isinstance(audit_log, str) and os.path.isabs(audit_log)):
        return None
    return Guard(read_only, approve, audit_log)


def _foreign(st: os.stat_result, regular: bool) -> bool:
    kind_ok = stat_mod.S_ISREG(st.st_mode) if regular else stat_mod.S_ISDIR(st.st_mode)
    return not kind_ok or st.st_uid != os.getuid() or bool(st.st_mode & 0o022)


def kept(root_real: str) -> tuple[Guard, str | None]:
    """The guard kept for the vault, and why it is STRICTEST instead when its record cannot be
    believed (None when it can, or when there is none: the vault was never served)."""
    try:
        path = guard_path(root_real)
        folder = os.path.dirname(path)
        if _foreign(os.lstat(folder), regular=False):
            return STRICTEST, f"{folder} is not a private folder of yours"
        st = os.lstat(path)
    except FileNotFoundError:
        return Guard(), None
    except OSError as exc:
        return STRICTEST, f"cannot read the guard kept for {root_real}: {exc.strerror or exc}"
    if _foreign(st, regular=True):
        return STRICTEST, f"{path} is not a private file of yours (another user may have written it)"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            if _foreign(os.fstat(fh.fileno()), regular=True):  # replaced since the lstat
                return STRICTEST, f"{path} is not a private file of yours (another user may have written it)"
            data = json.loads(fh.read(65536))
    except (OSError, ValueError) as exc:
        return STRICTEST, f"cannot read {path}: {exc}"
    guard = _parsed(data)
    if guard is None:
        return STRICTEST, f"{path} does not say a guard vaultwatch knows"
    if guard.approve is not None and data.get("file_mode", "") != file_mode():
        # as in a running server: once the person edits the settings file's mode, it wins over a
        # mode chosen earlier (`--approve`, `g`), so a mode kept from before the edit is dropped
        guard = replace(guard, approve=None)
    return guard, None


def file_mode() -> str | None:
    """The settings file's approval mode now (None: the file sets none, or cannot be read)."""
    try:
        return load_rules()[0]
    except (OSError, ValueError, VaultError):
        return None


def keep(root_real: str, guard: Guard, **about: Any) -> None:
    """Write `guard` as the vault's (the caller holds the vault's lock, so no other process writes
    it meanwhile). `about`: informative keys for a person reading the file. OSError when it cannot."""
    path = guard_path(root_real)
    tmp = f"{path}.tmp"  # one writer at a time (the lock's holder); a killed one's leftover goes first
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    body = {
        "read_only": guard.read_only,
        "approve": guard.approve,
        "audit_log": guard.audit_log,
        "file_mode": file_mode(),  # the settings file's mode the chosen one was kept over
        "vault": root_real,
        "pid": os.getpid(),
        **about,
    }
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.write(fd, json.dumps(body).encode())
        os.fsync(fd)  # the guard must outlive a crash of the machine too, not only of the process
    finally:
        os.close(fd)
    os.replace(tmp, path)


__all__ = ["STRICTEST", "Guard", "guard_path", "keep", "kept"]
