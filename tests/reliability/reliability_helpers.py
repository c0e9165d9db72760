"""Helpers for the reliability tests: tree fingerprints, a file-access audit, bounded calls,
child processes with measured memory, and an MCP session usable from synchronous code.

Nothing here stands in for vaultwatch's own code: the tests drive the real core, the real
server on a real Unix socket and the real `mcp` client; these helpers only observe.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "mcp_server"))  # the MCP engineer's helpers (serving, uds_client)

from mcp_testing import ALL_COMPAT, in_own_task, serving, uds_client  # noqa: E402

__all__ = [
    "ALL_COMPAT",
    "Audit",
    "McpSession",
    "bounded",
    "child",
    "in_own_task",
    "gated_server",
    "serving",
    "short_dir",
    "tree_state",
    "uds_client",
]


# --- what a tree looks like ---------------------------------------------------------------------


def tree_state(root: str | os.PathLike[str], *, skip: Callable[[str], bool] | None = None) -> dict[str, tuple]:
    """Every entry under `root` (hidden ones included, symlinks not followed) with its kind,
    bytes' SHA-256, size and mtime: compare two of these to prove nothing changed."""
    out: dict[str, tuple] = {}
    base = os.fspath(root)
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, base)
            if skip is not None and skip(rel):
                continue
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir",)
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                out[rel] = ("file", digest, st.st_size, st.st_mtime_ns)
            else:
                out[rel] = ("other", stat.S_IFMT(st.st_mode))
    return out


def serve_process(root: Path, sock: str) -> subprocess.Popen:
    """A real `vaultwatch serve` process on `sock` (entry cache off), returned once its socket exists."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), VAULTWATCH_CACHE="0")
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "serve", str(root), "--socket", sock],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(ROOT),
    )
    end = time.monotonic() + 60
    while not os.path.exists(sock):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "serve did not start"
        time.sleep(0.05)
    return proc


def short_dir(prefix: str = "vwr") -> str:
    """A short private folder under /tmp (AF_UNIX socket paths hold ~107 bytes)."""
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")


@contextlib.contextmanager
def gated_server(
    monkeypatch: Any, prefix: str, settings: str, make_vault: Callable[[Path], None], **env: str
) -> Iterator[str]:
    """A real headless `vaultwatch serve` process on a vault `make_vault` fills, with `settings`
    as its settings.toml (and `env` set): yields its socket, and on the way out, once the server
    stopped, asserts the vault is byte for byte as it was."""
    base = Path(short_dir(prefix))
    try:
        root = base / "v"
        root.mkdir()
        make_vault(root)
        config = base / "config" / "vaultwatch"
        config.mkdir(parents=True)
        (config / "settings.toml").write_text(settings)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
        monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        sock = str(base / "s.sock")
        before = tree_state(root)
        proc = serve_process(root, sock)
        try:
            yield sock
        finally:
            proc.terminate()
            proc.communicate(timeout=30)
        assert tree_state(root) == before  # nothing changed: no byte, no name, nothing in the trash
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- file access audit --------------------------------------------------------------------------

_PATH_EVENTS = {
    "open": (0,),
    "os.rename": (0, 1),
    "os.remove": (0,),
    "os.mkdir": (0,),
    "os.link": (0, 1),
    "os.rmdir": (0,),
    "os.chmod": (0,),
    "os.truncate": (0,),
    "os.symlink": (0, 1),
    "os.scandir": (0,),
    "os.listdir": (0,),
    "os.utime": (0,),
    "os.chown": (0,),
}
_WRITE_EVENTS = {
    "os.rename",
    "os.remove",
    "os.mkdir",
    "os.link",
    "os.rmdir",
    "os.chmod",
    "os.truncate",
    "os.symlink",
    "os.utime",
    "os.chown",
}


@dataclass
class Access:
    event: str
    path: str
    write: bool


class Audit:
    """Records file-system accesses (Python audit events) made by this process while active.

    One hook is installed per process (hooks cannot be removed); it costs one attribute
    check while no Audit is recording. Paths given relative to a directory descriptor are
    recorded as they are (a bare name).
    """

    _active: Audit | None = None
    _installed = False
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.accesses: list[Access] = []

    @classmethod
    def _install(cls) -> None:
        with cls._lock:
            if not cls._installed:
                sys.addaudithook(cls._hook)
                cls._installed = True

    @classmethod
    def _hook(cls, event: str, args: tuple) -> None:
        audit = cls._active
        if audit is None:
            return
        where = _PATH_EVENTS.get(event)
        if where is None:
            return
        for i in where:
            if i >= len(args):
                continue
            p = args[i]
            if isinstance(p, int) or p is None:
                continue
            try:
                p = os.fsdecode(p)
            except TypeError:
                continue
            write = event in _WRITE_EVENTS
            if event == "open" and len(args) > 2 and isinstance(args[2], int):
                write = bool(args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
            elif event == "open" and len(args) > 1 and isinstance(args[1], str):
                write = any(c in args[1] for c in "wax+")
            audit.accesses.append(Access(event, p, write))

    @contextlib.contextmanager
    def recording(self) -> Iterator[Audit]:
        self._install()
        Audit._active = self
        try:
            yield self
        finally:
            Audit._active = None

    def violations(self, base_real: str, vault_real: str, forbidden: tuple[str, ...] = ()) -> list[str]:
        """Accesses to anything under `base_real` outside the vault, to hidden paths of the vault
        (except the write path's own temporary files and its .trash moves), or to `forbidden` paths."""
        out = []
        for a in self.accesses:
            p = a.path
            if not os.path.isabs(p):
                if "/" in p or p in ("..", "."):
                    out.append(f"{a.event} {p!r}: a relative path with folders")
                continue
            norm = os.path.normpath(p)
            if any(norm == f or norm.startswith(f.rstrip("/") + "/") for f in forbidden):
                out.append(f"{a.event} {p!r}: a forbidden absolute path")
                continue
            if norm == vault_real or norm.startswith(vault_real + "/"):
                rel = norm[len(vault_real) + 1 :]
                segs = [s for s in rel.split("/") if s]
                hidden = [s for s in segs if s.startswith(".")]
                if not hidden:
                    continue
                if segs and segs[-1].startswith(".vaultwatch-") and len(hidden) == 1:
                    continue  # the write path's temporary file, beside its note
                if segs[0] == ".trash" and len(hidden) == 1 and (a.write or a.event == "open" and len(segs) == 1):
                    continue  # delete moves into the vault's .trash (and fsyncs that folder)
                out.append(f"{a.event} {p!r}: hidden path inside the vault ({'write' if a.write else 'read'})")
            elif norm == base_real or norm.startswith(base_real + "/"):
                out.append(f"{a.event} {p!r}: outside the vault ({'write' if a.write else 'read'})")
        return out


# --- bounded calls ------------------------------------------------------------------------------


def bounded(fn: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Run fn() in a thread of its own; raise TimeoutError if it takes longer than `timeout` s
    (the thread is left behind, so a hang fails the test instead of freezing the run). The thread
    is a daemon: a pool's threads are not, and the interpreter's exit joined them (the session's
    end waited for the idle ones, and would wait for a hung one forever)."""
    result: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run() -> None:
        try:
            result.set_result(fn())
        except BaseException as exc:  # the caller's to see, as a pool's future would give it
            result.set_exception(exc)

    threading.Thread(target=run, name="bounded", daemon=True).start()
    return result.result(timeout)


# --- child processes ----------------------------------------------------------------------------


def child(
    code: str,
    *args: str,
    timeout: float = 120,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    cwd: str | None = None,
) -> tuple[int, dict | None, str]:
    """Run `code` in a fresh interpreter with the project importable. The child prints one JSON
    document as its last stdout line. Returns (exit code, that document or None, stderr)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("VAULTWATCH_CACHE", "0")
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        preexec_fn=preexec_fn,
        cwd=cwd or str(ROOT),
    )
    doc = None
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if lines:
        with contextlib.suppress(ValueError):
            doc = json.loads(lines[-1])
    return proc.returncode, doc, proc.stderr


# --- an MCP session for synchronous code (hypothesis) -------------------------------------------


@dataclass
class CallOutcome:
    """What one tool call came back with: a result, or a protocol-level error (never a crash)."""

    is_error: bool
    text: str
    structured: Any = None
    protocol_error: str | None = None
    seconds: float = 0.0
    meta: dict = field(default_factory=dict)


def _outcome(result, started: float) -> CallOutcome:
    text = "".join(getattr(b, "text", "") for b in result.content)
    meta = getattr(result, "meta", None) or {}
    return CallOutcome(
        bool(result.is_error), text, result.structured_content, None, time.perf_counter() - started, dict(meta)
    )


class McpSession:
    """The real server (McpHost) on a real Unix socket and a real `mcp` client session, both in
    one background event loop, called synchronously: `session.call(name, args)`."""

    def __init__(self, vault, *, socket_path: str | None = None, name: str = "reliability-agent", **options) -> None:
        self.vault = vault
        self._own_dir = None if socket_path else short_dir()
        self.socket_path = socket_path or os.path.join(self._own_dir, "s.sock")
        self.name = name
        self.options = options
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="mcp-session", daemon=True)
        self._stop: asyncio.Event | None = None
        self._task: concurrent.futures.Future | None = None
        self.client = None

    def __enter__(self) -> McpSession:
        self._thread.start()
        ready: concurrent.futures.Future = concurrent.futures.Future()

        async def main() -> None:
            self._stop = asyncio.Event()
            try:
                async with serving(self.vault, self.socket_path, **self.options) as host:
                    self.host = host
                    async with uds_client(host.socket_path, name=self.name) as client:
                        self.client = client
                        ready.set_result(True)
                        await self._stop.wait()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                if not ready.done():
                    ready.set_exception(exc)
                raise

        self._task = asyncio.run_coroutine_threadsafe(main(), self.loop)
        ready.result(60)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        if self._task is not None:
            with contextlib.suppress(Exception):
                self._task.result(15)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)

    async def acall(self, name: str, args: Any, timeout: float = 30.0) -> CallOutcome:
        """`call` for coroutines running in this session's loop (see `run`)."""
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(self.client.call_tool(name, args), timeout)
        except TimeoutError:
            raise TimeoutError(f"{name} did not answer within {timeout} s") from None
        except Exception as exc:  # noqa: BLE001 - the SDK's way of reporting a JSON-RPC error
            return CallOutcome(True, str(exc), None, f"{type(exc).__name__}: {exc}", time.perf_counter() - started)
        return _outcome(result, started)

    def run(self, coro, timeout: float = 600.0) -> Any:
        """Run a coroutine in this session's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, name: str, args: Any, timeout: float = 30.0) -> CallOutcome:
        """Call a tool; a protocol-level error (the SDK raises) comes back as `protocol_error`."""
        started = time.perf_counter()

        async def go():
            return await self.client.call_tool(name, args)

        fut = asyncio.run_coroutine_threadsafe(go(), self.loop)
        try:
            result = fut.result(timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise TimeoutError(f"{name} did not answer within {timeout} s") from None
        except Exception as exc:  # noqa: BLE001 - the SDK's way of reporting a JSON-RPC error
            return CallOutcome(True, str(exc), None, f"{type(exc).__name__}: {exc}", time.perf_counter() - started)
        return _outcome(result, started)
