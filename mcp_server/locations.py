"""Where a vault's socket and its companions live, and the loopback HTTP options.

Kept free of SDK imports: `vaultwatch bridge` and `mcp-config` only need these.
Files next to `<hash>.sock`: `.lock` (flock held while serving), `.json` (who serves what).
The bearer token of `--http` lives in the state folder (`token_path`), so it survives reboots.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import os
import secrets
import stat as stat_mod
from typing import Any

MAX_UNIX_PATH = 100  # sun_path holds 108 bytes on Linux (104 on macOS); keep a margin


class HostError(Exception):
    """The server cannot be started as asked (another vaultwatch serves the vault, a bad path...)."""


def _private_dir(path: str) -> str:
    """Create `path` (0700) if needed and check it is a directory we own that nobody else can enter."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        raise HostError(f"cannot create the socket directory {path}: {exc.strerror or exc}") from None
    if not stat_mod.S_ISDIR(st.st_mode):
        raise HostError(f"{path} is not a directory (a symlink or file is in the way); remove it and retry")
    if st.st_uid != os.getuid():
        raise HostError(f"{path} belongs to another user; set XDG_RUNTIME_DIR or pass --socket in a private folder")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def runtime_dir() -> str:
    """Where sockets live: $XDG_RUNTIME_DIR/vaultwatch, else /tmp/vaultwatch-<uid> (short: AF_UNIX paths are small)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg) and os.path.isdir(xdg) and len(xdg) + 32 <= MAX_UNIX_PATH:
        return os.path.join(xdg, "vaultwatch")
    return f"/tmp/vaultwatch-{os.getuid()}"


def _socket_name(vault_root_real: str) -> str:
    return hashlib.sha256(os.fsencode(vault_root_real)).hexdigest()[:16] + ".sock"


def default_socket_path(vault_root_real: str) -> str:
    """The socket of the vaultwatch serving `vault_root_real`: one per vault, in a 0700 directory."""
    return os.path.join(_private_dir(runtime_dir()), _socket_name(vault_root_real))


def find_socket(vault_root_real: str) -> str | None:
    """The socket a running vaultwatch serves `vault_root_real` on, looking in every place it may be.

    Clients spawn the bridge with a trimmed environment (often without XDG_RUNTIME_DIR), so
    besides the current runtime directory this also looks in /run/user/<uid>/vaultwatch and
    the /tmp fallback. None when no socket exists for the vault.
    """
    name = _socket_name(vault_root_real)
    dirs = [runtime_dir(), f"/run/user/{os.getuid()}/vaultwatch", f"/tmp/vaultwatch-{os.getuid()}"]
    for folder in dict.fromkeys(dirs):
        path = os.path.join(folder, name)
        try:
            st = os.lstat(folder)
            if not stat_mod.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
                continue  # a folder another user could have put a socket in: never trusted
            if stat_mod.S_ISSOCK(os.lstat(path).st_mode):
                return path
        except OSError:
            continue
    return None


def read_info(socket_path: str) -> dict[str, Any] | None:
    """What the serving vaultwatch recorded next to its socket (pid, vault, http), or None."""
    try:
        with open(socket_path + ".json", encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def write_private(path: str, text: str) -> None:
    """Write `text` to a new file `path` with mode 0600 (whatever was there, even a symlink, is replaced,
    never written through: --socket may point into a shared folder such as /tmp)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def token_path(vault_root_real: str) -> str:
    """The 0600 file holding the bearer token of `--http` for this vault: in the user's state
    folder (kept across logout and reboots, unlike the runtime folder), in a 0700 `tokens` folder."""
    from vaultwatch.core.disk.vaultlock import state_dir, vault_key

    folder = _private_dir(os.path.join(state_dir(), "tokens"))
    return os.path.join(folder, vault_key(vault_root_real) + ".token")


def http_token(vault_root_real: str) -> str:
    """The bearer token for loopback HTTP (created on first use, kept across restarts and reboots)."""
    path = token_path(vault_root_real)
    try:
        st = os.lstat(path)
        if stat_mod.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077:
            with open(path, encoding="ascii") as fh:
                token = fh.read().strip()
            if len(token) >= 32:
                return token
    except (OSError, UnicodeDecodeError):
        pass
    token = secrets.token_urlsafe(32)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    write_private(path, token + "\n")
    return token


def parse_http(spec: str) -> tuple[str, int]:
    """Parse `--http 127.0.0.1:PORT` (also `localhost:PORT`, `[::1]:PORT`, `PORT`); only loopback is accepted."""
    text = spec.strip()
    host, _, port_text = text.rpartition(":")
    if not _:
        host, port_text = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
        if not 0 < port < 65536:
            raise ValueError
    except ValueError:
        raise HostError(f"--http {spec!r}: give a loopback address and port, e.g. 127.0.0.1:8765") from None
    if host == "localhost":
        host = "127.0.0.1"
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise HostError(
            f"--http {spec!r}: vaultwatch only listens on loopback (127.0.0.1 or ::1), never on "
            "a network address; use 127.0.0.1:PORT"
        )
    return host, port
