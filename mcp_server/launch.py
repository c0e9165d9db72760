"""Find, trust and, when none runs, start the server a bridge relays to. No SDK imports: the
bridge must be up in a fraction of a second.

- Finding: the vault's lock (core/disk/vaultlock.py) names the process serving it from any
  environment; its record in the state folder names its socket, and when the record is not
  ours to read (the server runs with another XDG_STATE_HOME) the socket is read from
  /proc (the listening Unix sockets of the holder's pid). Otherwise the default socket path.
- Trusting: a socket is used only when its folder belongs to this user and nobody else may
  enter it (mode 0700), the socket is ours, and the process listening on it runs as this user
  (SO_PEERCRED), checked before a single byte is relayed.
- Starting: `vaultwatch serve VAULT --headless` (the installed distribution's console script,
  `vaultwatch_command`) detached from the bridge (its own session,
  stdin/stdout closed, stderr appended to `<state>/logs/<vault-key>.log`), shared by every
  bridge of the vault, exiting by itself after `--idle-exit` seconds without clients. Bridges
  racing to start one are harmless: the vault lock lets one serve, the others exit at once.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat as stat_mod
import subprocess
import sys
import time
from collections.abc import Sequence

from vaultwatch.core import platform
from vaultwatch.core.disk.private import private_folder
from vaultwatch.core.disk.vaultlock import Holder, VaultNested, holder, nested_server, state_dir, vault_key

IDLE_EXIT_DEFAULT = 600.0  # seconds a headless server waits without clients before it exits
START_TIMEOUT = 15.0
POLL = 0.01


class BridgeError(Exception):
    """The bridge cannot reach a server (another user's socket, a stdio-only server, a failed start...)."""


class NotListening(Exception):
    """Nothing accepts connections on the socket yet (or any more)."""


def check_folder(path: str) -> None:
    """Refuse a socket whose folder another user owns or may write to (they could have put an
    impostor there): the folder must be ours and mode 0700, the socket ours too."""
    folder = os.path.dirname(os.path.abspath(path)) or "/"
    try:
        st = os.lstat(folder)
    except OSError as exc:
        raise NotListening(f"{folder}: {exc.strerror}") from None
    uid = os.getuid()
    if not stat_mod.S_ISDIR(st.st_mode) or st.st_uid != uid:
        raise BridgeError(
            f"refusing {path}: its folder {folder} belongs to uid {st.st_uid}, not to you (uid {uid}); "
            "another user may have put it there. Remove the folder, or set XDG_RUNTIME_DIR (or "
            "--socket) to a private folder"
        )
    if st.st_mode & 0o077:
        raise BridgeError(
            f"refusing {path}: its folder {folder} is mode {stat_mod.S_IMODE(st.st_mode):o}, so other "
            "users may put sockets there; run `chmod 700 " + folder + "` or use a private folder"
        )
    try:
        sst = os.lstat(path)
    except FileNotFoundError:
        raise NotListening(f"no socket at {path}") from None
    if not stat_mod.S_ISSOCK(sst.st_mode):
        raise BridgeError(f"{path} is not a socket; remove it or pass another --socket")
    if sst.st_uid != uid:
        raise BridgeError(f"refusing {path}: the socket belongs to uid {sst.st_uid}, not to you (uid {uid})")


def _vault_above(root_real: str) -> str | None:
    """Why a headless server of `root_real` would refuse to start inside, or holding, a vault the
    person has rules for (core.review.nestedvault), or None. Imported here only: the journal's module is no
    part of a bridge's quick path to a running server."""
    from vaultwatch.core.review.guardenv import settings_path  # noqa: PLC0415
    from vaultwatch.core.review.nestedvault import refusal  # noqa: PLC0415

    return refusal(root_real, settings_path())


def _nested_said(nested: VaultNested) -> str:
    """The refusal a headless server of `nested.root` would give with another served above or below
    it, never advising to quit that one and serve a folder that would then be refused too."""
    from vaultwatch.core.review.guardenv import settings_path  # noqa: PLC0415
    from vaultwatch.core.review.nestedvault import server_refusal  # noqa: PLC0415

    return server_refusal(nested, settings_path(), allow_nested=False)


def peer(sock: socket.socket) -> tuple[int | None, int | None]:
    """(pid, uid) of the process on the other end of a connected Unix socket, when the OS tells."""
    return platform.peer_credentials(sock)


def connect_trusted(path: str) -> int | None:
    """Check the socket's folder and owner, connect, and check the listener runs as this user.
    Returns the server's pid. NotListening when nothing accepts there (yet); BridgeError on an impostor."""
    check_folder(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(2.0)
    try:
        try:
            sock.connect(path)
        except (ConnectionRefusedError, FileNotFoundError):
            raise NotListening(f"{path} is a leftover of a server that stopped") from None
        except PermissionError:
            raise BridgeError(f"cannot connect to {path}: permission denied (it belongs to another user)") from None
        except OSError as exc:
            raise NotListening(f"cannot connect to {path}: {exc.strerror or exc}") from None
        pid, uid = peer(sock)
        if uid is not None and uid != os.getuid():
            raise BridgeError(
                f"refusing {path}: the process serving it (pid {pid}) runs as uid {uid}, not as you "
                f"(uid {os.getuid()}); nothing was sent to it"
            )
        return pid
    finally:
        sock.close()


def listening_sockets(pid: int) -> list[str]:
    """The paths of the Unix sockets process `pid` listens on ([] where the system cannot tell)."""
    return [p for p in platform.listening_unix_sockets(pid) if p.startswith("/") and p.endswith(".sock")]


def holder_socket(h: Holder) -> str | None:
    if h.socket:
        return h.socket
    if h.pid:
        found = listening_sockets(h.pid)
        return found[0] if found else None
    return None


def log_path(root_real: str) -> str:
    folder = private_folder(os.path.join(state_dir(), "logs"))
    return os.path.join(folder, vault_key(root_real) + ".log")


_ENTRY = re.compile(r"^([A-Za-z_][\w.]*):([A-Za-z_]\w*)$")


def vaultwatch_command() -> list[str]:
    """The `vaultwatch` command, as the installed distribution's console script names it.

    The headless server is the whole program (the TUI's command line serves it), which
    mcp_server may not import: the dependency goes through the distribution's declared entry
    point instead of a module name hidden in this file. -P: the working folder never joins the
    import path (a file there could shadow a module)."""
    from importlib.metadata import entry_points  # noqa: PLC0415  (kept off the bridge's start)

    found = list(entry_points(group="console_scripts", name="vaultwatch"))
    match = _ENTRY.match(found[0].value) if found else None
    if match is None:
        raise BridgeError(
            "cannot start a vaultwatch server: the vaultwatch distribution's `vaultwatch` command is "
            "not installed in this Python; install vaultwatch into it (see the README) or start "
            "`vaultwatch serve VAULT` yourself"
        )
    module, func = match.groups()
    return [sys.executable, "-P", "-c", f"import sys; from {module} import {func}; sys.exit({func}())"]


def spawn_headless(
    root_real: str,
    socket_path: str,
    idle_exit: float,
    wait_lock: float | None = None,
    serve_args: Sequence[str] = (),
    *,
    by_bridge: bool = False,
    by_tui: bool = False,
) -> subprocess.Popen:
    """Start `vaultwatch serve ROOT --headless` detached from this process (see module doc).
    `by_bridge`: started for a bridge's client, so in that client's environment (mcp_server/sameenv.py);
    `by_tui`: the TUI handing the vault back as it quits (the log says which)."""
    log = log_path(root_real)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    who = (
        f"the TUI (pid {os.getpid()}) is quitting and hands the vault to a headless server for agents"
        if by_tui
        else f"an agent's bridge (pid {os.getpid()}) starts a headless server: no vaultwatch served the vault"
    )
    try:
        os.write(fd, f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {who}\n".encode())
        return subprocess.Popen(
            [
                *vaultwatch_command(),
                "serve",
                root_real,
                "--headless",
                "--socket",
                socket_path,
                "--idle-exit",
                f"{idle_exit:g}",
                *(["--wait-lock", f"{wait_lock:g}"] if wait_lock else []),
                *(["--started-by-bridge"] if by_bridge else []),
                *serve_args,
            ],
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(fd)


def _log_tail(root_real: str, lines: int = 5) -> str:
    with contextlib.suppress(OSError):
        with open(log_path(root_real), encoding="utf-8", errors="replace") as fh:
            tail = [ln.rstrip() for ln in fh.readlines()[-lines:] if ln.strip()]
        return " | ".join(tail)
    return ""


def locate(
    root_real: str,
    default_socket: str | None,
    *,
    spawn: bool = True,
    idle_exit: float = IDLE_EXIT_DEFAULT,
    grace: float = 0.0,
    timeout: float = START_TIMEOUT,
    refusal: str | None = None,
) -> tuple[str, int | None]:
    """The (socket, pid) of the server of `root_real`, started headless when none runs (after
    `grace` seconds without any holder: a TUI taking the vault over holds it within that).
    `default_socket` None: the runtime folder cannot be trusted (`refusal` says why), so only a
    server found through the vault's lock is used and none is started."""
    deadline = time.monotonic() + timeout
    free_since: float | None = None
    child: subprocess.Popen | None = None
    starts = 0
    failed: Exception | None = None  # the last start that raised (no process, fd limits, a start race)
    while True:
        now = time.monotonic()
        h = holder(root_real)
        if h is not None:
            free_since = None
            if h.info.get("kind") == "stdio":
                raise BridgeError(
                    f"{h.describe(root_real)}: a stdio server serves only the client that started "
                    "it; stop it, or configure that client with `vaultwatch bridge` too"
                )
            path = holder_socket(h)
            if path:
                with contextlib.suppress(NotListening):
                    return path, connect_trusted(path)
        elif default_socket is None:
            raise BridgeError(refusal or "no socket folder can be trusted")
        else:
            with contextlib.suppress(NotListening):  # a server that takes no vault lock (an older vaultwatch)
                return default_socket, connect_trusted(default_socket)
            free_since = now if free_since is None else free_since
            if spawn and now - free_since >= grace and (child is None or child.poll() is not None):
                nested = nested_server(root_real)
                if nested is not None:  # it would refuse to start: say why at once
                    raise BridgeError(_nested_said(VaultNested(root_real, *nested)))
                above = _vault_above(root_real)
                if above is not None:  # so would it inside a vault the person has rules for
                    raise BridgeError(above)
                if starts >= 3:
                    if failed is not None:
                        raise BridgeError(
                            f"the headless server for {root_real} could not be started: "
                            f"{type(failed).__name__}: {failed}; "
                            f"start it by hand with `vaultwatch serve {root_real} --headless`"
                        )
                    raise BridgeError(
                        f"the headless server for {root_real} did not start; its log "
                        f"{log_path(root_real)} says: {_log_tail(root_real) or 'nothing'}"
                    )
                starts += 1
                try:
                    child = spawn_headless(root_real, default_socket, idle_exit, by_bridge=True)
                except (OSError, ValueError, subprocess.SubprocessError) as exc:
                    # a start that raised (e.g. ValueError('bad value(s) in fds_to_keep'), as a worker
                    # start did in the TUI) is a failed start: tried again, then said to the client
                    child, failed = None, exc
        if now > deadline:
            what = "started a headless server that did not answer" if child is not None else "found no server"
            raise BridgeError(f"{what} for {root_real} within {timeout:g} s; see {log_path(root_real)}")
        time.sleep(POLL)
