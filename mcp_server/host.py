"""Serve the MCP server on a Unix domain socket (and optionally loopback HTTP) inside an
asyncio loop the caller owns: the TUI's, or `vaultwatch serve`'s.

    host = McpHost(vault)                 # socket path: default_socket_path(vault.root_real)
    ready = asyncio.Event()
    task = asyncio.create_task(host.run(ready))
    await ready.wait()                    # bound: agents can connect to host.socket_path
    host.stop()                           # from any thread; run() returns within 1 s
    await task

The SDK has no Unix-socket transport, so this serves its streamable-HTTP app with uvicorn
on a socket bound here: mode 0600 (set before listen(), so nobody else can ever connect)
inside a 0700 directory. One vaultwatch per socket: an exclusive flock on `<socket>.lock`,
held while serving, tells a live instance (HostError naming its pid) from a stale socket
left by a crash (removed and re-bound). `<socket>.json` records who serves what.

Over the project's 500-line guideline, with a second job not split out yet: besides the host's lifecycle
(lock, bind, serve, hand-over, idle exit, shutdown) it carries the connection policy of its
HTTP listeners (LoopbackGuard, SessionEnd, _Counting, _GuardedH11, _BodyDeadline), which could
move to a module of their own as a pure move.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import hmac
import json
import os
import socket
import stat as stat_mod
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from uvicorn.protocols.http.h11_impl import H11Protocol

from vaultwatch.core.disk.vaultlock import VaultBusy, VaultLock, VaultNested
from vaultwatch.core.review import approval
from vaultwatch.core.review.guardenv import settings_path
from vaultwatch.core.review.idlesessions import IdleSessions
from vaultwatch.core.review.nestedvault import refusal as nested_refusal
from vaultwatch.core.review.nestedvault import server_refusal as nested_server_refusal
from vaultwatch.core.vault import Vault

if TYPE_CHECKING:
    from vaultwatch.core.events import IndexProblem

from . import guardflags
from .activity import Activity, AuditLog
from .config import serve_args
from .guardflags import Guard
from .handover import hand_back, take_over
from .locations import (
    MAX_UNIX_PATH,
    HostError,
    default_socket_path,
    find_socket,
    http_token,
    parse_http,
    read_info,
    runtime_dir,
    token_path,
    write_private,
)
from .persondesk import PersonDesk
from .requestguard import MAX_REQUEST_BYTES, RequestGuard
from .sameenv import SameGuardEnvironment
from .server import ToolRegistrar, build_server
from .splice import Splice
from .streaming import JsonUnlessStreaming
from .wire import MCP_PATH, SESSION_HEADER

STOP_BUDGET = 0.8  # seconds run() may spend shutting down before it cancels what is left
SOCKET_CHECK_SECONDS = 0.25  # how often the socket file's presence is checked (one lstat)
PRUNE_SECONDS = 30.0
MAX_HTTP_CONNECTIONS = 64  # loopback HTTP connections open at once (each costs a file descriptor)
HEADER_TIMEOUT = 10.0  # seconds a loopback HTTP connection may take to send its request head
BODY_TIMEOUT = 30.0  # seconds a request body may stall
STALE_AGENT_SECONDS = 1800.0  # an agent silent this long no longer keeps a headless server up
# s after the last request during which agents count as still calling: the entry cache's write and a
# first search build rest while they do (Vault.answering), as they do for `serve --stdio`'s client
ANSWERING_QUIET_S = 0.3
UDS_HOSTS = ["localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*"]


class LoopbackGuard:
    """ASGI wrapper for the loopback HTTP listener: exact Host, same-origin Origin, bearer token."""

    def __init__(self, app: Any, token: str, host: str, port: int) -> None:
        self.app = app
        self._auth = f"Bearer {token}".encode()
        names = ["localhost", "[::1]" if ":" in host else host]
        self.hosts = {f"{n}:{port}".encode() for n in names}
        self.origins = {f"http://{n}:{port}".encode() for n in names}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        if headers.get(b"host") not in self.hosts:
            return await _plain(send, 421, "Invalid Host header: use the loopback address vaultwatch printed")
        origin = headers.get(b"origin")
        if origin is not None and origin not in self.origins:
            return await _plain(send, 403, "Cross-origin requests are refused")
        if not hmac.compare_digest(headers.get(b"authorization", b""), self._auth):
            return await _plain(
                send,
                401,
                "Missing or wrong bearer token: send 'Authorization: Bearer <token>' "
                "with the token from `vaultwatch mcp-config --http`",
                [(b"www-authenticate", b'Bearer realm="vaultwatch"')],
            )
        return await self.app(scope, receive, send)


async def _plain(send: Any, status: int, text: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SessionEnd:
    """ASGI wrapper: a DELETE naming only a bridge session (2026-07-28 clients have no MCP session)
    ends that agent's presence; everything else goes to the MCP app."""

    def __init__(self, app: Any, activity: Activity) -> None:
        self.app = app
        self.activity = activity
        self._header = SESSION_HEADER.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") == "DELETE":
            headers = dict(scope.get("headers") or [])
            bridge = headers.get(self._header)
            if bridge and b"mcp-session-id" not in headers:
                self.activity.forget(bridge.decode("latin-1")[:80])
                return await _plain(send, 204, "")
        return await self.app(scope, receive, send)


class _Counting:
    """ASGI wrapper: counts HTTP requests in flight and notes the last one (for idle exit)."""

    def __init__(self, app: Any, host: McpHost) -> None:
        self.app = app
        self.host = host
        self._bridge_header = SESSION_HEADER.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope.get("method") == "GET":  # a session's standalone stream: open while its client is, not a call
            return await self.app(scope, receive, send)
        self.host._inflight += 1
        self.host._last_request = time.monotonic()
        for key, value in scope.get("headers") or ():
            if key == self._bridge_header:  # a bridge: it can follow the vault to the next server
                if scope.get("method") == "DELETE":
                    self.host._bridges.pop(value, None)
                else:
                    self.host._bridges[value] = time.monotonic()
                break
        try:
            return await self.app(scope, receive, send)
        finally:
            self.host._inflight -= 1
            self.host._last_request = time.monotonic()


def _idle_problem(seconds: float) -> IndexProblem:
    from vaultwatch.core.events import IndexProblem

    return IndexProblem(
        f"no MCP client for {seconds:g} s: this headless server stops (a bridge starts it again)", "info"
    )


class _Uvicorn(uvicorn.Server):
    """uvicorn without signal capture: the loop's owner (TUI or `serve`) owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # noqa: D102
        yield


class _GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol for the loopback listener, with the limits a local server needs
    against a process that opens connections and never finishes a request: at most
    MAX_HTTP_CONNECTIONS at once (more get 503 and are closed), and HEADER_TIMEOUT seconds for a
    new connection's request headers. (Anyone on the machine can connect before the token is checked.)"""

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_HTTP_CONNECTIONS:
            body = b"Too many connections to vaultwatch's loopback HTTP; retry shortly"
            transport.write(
                b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body)
            )
            transport.close()
            return
        self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._headers_late)

    def _headers_late(self) -> None:
        if self.cycle is None and not self.transport.is_closing():
            self.transport.close()  # no complete request head within HEADER_TIMEOUT

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)


class _BodyDeadline:
    """ASGI wrapper: a request body that stalls for BODY_TIMEOUT seconds counts as a disconnect."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def timed_receive() -> dict:
            try:
                return await asyncio.wait_for(receive(), BODY_TIMEOUT)
            except TimeoutError:
                return {"type": "http.disconnect"}

        return await self.app(scope, timed_receive, send)


def _uvicorn(app: Any, *, http: bool = False) -> _Uvicorn:
    extra: dict[str, Any] = {"http": _GuardedH11} if http else {}
    # timeout_graceful_shutdown is typed int but used as seconds by asyncio.wait_for: 0.3 s is meant
    config = uvicorn.Config(
        _BodyDeadline(app) if http else app,
        lifespan="off",
        log_config=None,
        access_log=False,
        timeout_keep_alive=30,
        ws="none",
        **extra,
        timeout_graceful_shutdown=0.3,  # type: ignore[arg-type]
    )
    return _Uvicorn(config)


class McpHost:
    """The MCP server of one vault, served on its Unix socket (see module doc)."""

    def __init__(
        self,
        vault: Vault,
        *,
        socket_path: str | None = None,
        compat: Iterable[str] = frozenset(),
        read_only: bool = False,
        audit_log: str | None = None,
        http: str | None = None,
        extra_tools: Sequence[ToolRegistrar] | None = None,
        kind: str = "serve",
        vault_lock: VaultLock | None = None,
        idle_exit: float | None = None,
        started_by_bridge: bool = False,
        allow_nested: bool = False,
        **server_options: Any,
    ) -> None:
        self.vault = vault
        self.allow_nested = allow_nested  # serve even inside a vault the person has rules for (nestedvault.py)
        if allow_nested:  # and keep its journal, which makes it a vault of its own from now on
            vault.nested_allowed = True
        self.kind = kind  # "tui", "serve" or "headless": recorded for whoever finds the vault busy
        self._vault_lock = vault_lock  # taken by the caller already (serve takes it before importing the SDK)
        self.idle_exit = idle_exit  # stop after this many seconds without clients (headless servers)
        # a server a bridge started runs in that client's environment, not the person's: it serves
        # only bridges whose environment names the same rules (sameenv.py)
        self.started_by_bridge = started_by_bridge
        self._inflight = 0
        self._last_request = time.monotonic()
        self._bridges: dict[bytes, float] = {}  # bridges seen (their session header) and when last
        self.socket_path = os.path.abspath(socket_path) if socket_path else default_socket_path(vault.root_real)
        if len(os.fsencode(self.socket_path)) > MAX_UNIX_PATH:
            raise HostError(
                f"socket path is too long for a Unix socket ({len(self.socket_path)} > "
                f"{MAX_UNIX_PATH} bytes): {self.socket_path}; pass a shorter --socket"
            )
        self.http = parse_http(http) if http else None
        self.http_url: str | None = None
        self.audit_log_path = audit_log
        self.read_only = read_only
        # one write of the kept guard at a time (bus events come from any thread); reentrant: reading the
        # gate's mode may read the settings file again, whose change is published to the same writer
        self._guard_kept = threading.RLock()
        self._keeping_guard = False  # while this server holds the vault's lock
        self.activity = Activity(vault.bus, foreground=vault.foreground, sessions=IdleSessions(vault.clock))
        self.serve_args = serve_args(server_options)  # a hand-back server starts with the same options
        try:  # server_options: build_server's own (max_answer_bytes, tool_prefix)
            self.server, _ = build_server(
                vault,
                compat=compat,
                read_only=read_only,
                activity=self.activity,
                extra_tools=extra_tools,
                **server_options,
            )
        except ValueError as exc:
            raise HostError(str(exc)) from None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._stop_requested = False
        self._guard = threading.Lock()
        self.splice: Splice | None = None  # the layer that puts pre-serialised listings on the wire
        self.streaming: JsonUnlessStreaming | None = None  # the layer that answers JSON unless a call streams
        self.answering_quiet_s = ANSWERING_QUIET_S
        vault.answering = self.answering  # (`serve --stdio`, which has no host, tells it from its front)

    def answering(self) -> bool:
        """Whether agents are calling: a request in flight, or one within `answering_quiet_s`."""
        return self._inflight > 0 or time.monotonic() - self._last_request < self.answering_quiet_s

    def agents(self) -> list[tuple[str, str]]:
        """Connected (agent name, session id) pairs."""
        return self.activity.agents()

    @property
    def calls_in_flight(self) -> int:
        """Agents' requests being answered now (a session's standalone stream is not one)."""
        return self._inflight

    def stop(self) -> None:
        """Ask run() to finish (thread-safe, idempotent; run() returns within 1 s)."""
        with self._guard:
            self._stop_requested = True
            loop, event = self._loop, self._stop
        if loop is not None and event is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

    async def _lock_vault(self) -> VaultLock:
        """The vault's own lock (core/disk/vaultlock.py): one server per vault whatever the socket path.
        The TUI takes the vault over from a headless server (handover.py): the headless one stops
        accepting, finishes its calls in flight and releases the lock; bridges follow the vault."""
        if self._vault_lock is not None and self._vault_lock.held:
            lock, self._vault_lock = self._vault_lock, None
            lock.publish(self._record())
            return lock
        lock = VaultLock(self.vault.root_real)
        try:
            try:
                lock.acquire(record=self._record())
            except VaultBusy as busy:
                if self.kind != "tui" or not await take_over(lock, busy, self._record()):
                    raise
        except VaultBusy as busy:
            reach = (
                f"vaultwatch bridge --socket {busy.holder.socket}"
                if busy.holder.socket
                else f"vaultwatch bridge --vault {self.vault.root_real}"
            )
            raise HostError(f"{busy}; quit it first, or let agents use that one ({reach})") from None
        except VaultNested as nested:
            raise HostError(nested_server_refusal(nested, settings_path(), self.allow_nested)) from None
        except OSError as exc:
            raise HostError(f"cannot lock the vault folder {self.vault.root_real}: {exc.strerror or exc}") from None
        refused = None if self.allow_nested else nested_refusal(self.vault.root_real, settings_path())
        if refused is not None:
            lock.release()
            raise HostError(refused)
        return lock

    def guard(self) -> Guard:
        """What this server lets agents do now (the approval mode as chosen by then: `g` in the TUI)."""
        gate = approval.gate_for(self.vault)
        return Guard.of(self.read_only, gate.chosen if gate is not None else None, self.audit_log_path)

    def _keep_guard(self) -> Callable[[], None]:
        """Keep this server's guard for the servers that take the vault over after it (guardflags.py),
        now and whenever its approval mode changes; returns what stops it, called before the lock goes."""
        from vaultwatch.core.events import IndexProblem

        def keep(event: object = None) -> None:
            if event is not None and not isinstance(event, (approval.ApprovalModeChanged, approval.RulesChanged)):
                return
            with self._guard_kept:
                if not self._keeping_guard:
                    return
                guard = self.guard()
                try:
                    guardflags.keep(self.vault.root_real, guard, kind=self.kind)
                except OSError as exc:
                    self.vault.bus.publish(
                        IndexProblem(
                            f"cannot keep this server's guard ({guard.describe()}) for the server that takes "
                            f"{self.vault.root_real} over after it: {exc.strerror or exc}; a server an agent's "
                            "bridge starts later may not apply it",
                            "error",
                        )
                    )

        with self._guard_kept:
            self._keeping_guard = True
        keep()
        unsubscribe = self.vault.bus.subscribe(keep)

        def stop() -> None:
            unsubscribe()
            with self._guard_kept:
                self._keeping_guard = False

        return stop

    def _record(self) -> dict[str, Any]:
        return {"kind": self.kind, "socket": self.socket_path, "http": self.http_url, "started_at": time.time()}

    def _lock(self) -> int:
        try:
            fd = os.open(
                self.socket_path + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600
            )
        except OSError as exc:
            raise HostError(
                f"cannot create {self.socket_path}.lock: {exc.strerror or exc}; pass a --socket in a folder of your own"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise HostError(f"cannot lock {self.socket_path}.lock: {exc.strerror}") from None
            info = read_info(self.socket_path) or {}
            who = f"pid {info['pid']}" if info.get("pid") else "another process"
            vault = info.get("vault", "this vault")
            raise HostError(
                f"another vaultwatch ({who}) already serves {vault} on {self.socket_path}; quit it "
                "first, or let agents use that one (vaultwatch bridge --socket "
                f"{self.socket_path})"
            ) from None
        return fd

    def _bind(self) -> socket.socket:
        path = self.socket_path
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            pass
        else:
            if not stat_mod.S_ISSOCK(st.st_mode):
                raise HostError(f"{path} exists and is not a socket; remove it or pass another --socket")
            os.unlink(path)  # we hold the lock, so this socket is a leftover of a crashed run
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
            os.chmod(path, 0o600)  # before listen(): until then nobody can connect at all
            sock.listen(128)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise HostError(f"cannot listen on {path}: {exc.strerror or exc}") from None
        return sock

    def _bind_http(self) -> socket.socket:
        assert self.http is not None
        host, port = self.http
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when the listener's
        # proto says TCP; without it half the answers waited for the client's delayed ACK
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind((host, port))
            sock.listen(128)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise HostError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another port") from None
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        self.http_url = f"http://{shown}:{sock.getsockname()[1]}{MCP_PATH}"
        return sock

    async def run(self, ready: asyncio.Event | None = None) -> None:
        """Bind, set `ready`, serve until stop(); unlinks the socket on the way out."""
        with self._guard:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            if self._stop_requested:
                self._stop.set()
        vault_lock = await self._lock_vault()
        stop_keeping_guard = self._keep_guard()
        # the vault is this server's now: what a killed run left half done is finished or rolled back
        # (core: once per vault, in the background after the first index; `serve` asked already)
        self.vault.finish_interrupted_soon()
        try:
            lock_fd = self._lock()
        except BaseException:
            stop_keeping_guard()
            vault_lock.release()
            raise
        audit: AuditLog | None = None
        sockets: list[socket.socket] = []
        servers: list[_Uvicorn] = []
        self._servers = servers  # (for tests: the HTTP listener's open connections)
        tasks: list[asyncio.Task] = []
        created: list[str] = []  # only what this run made is removed: never a file that was in the way
        try:
            sockets.append(self._bind())
            created += [self.socket_path, self.socket_path + ".json"]
            if self.http:
                sockets.append(self._bind_http())
            if self.audit_log_path:
                audit = AuditLog(self.audit_log_path).attach(self.vault.bus)
            hosts = list(UDS_HOSTS)
            origins: list[str] = []
            if self.http:
                port = sockets[1].getsockname()[1]
                hosts += [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
                origins += [f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}"]
            app: Any = self.server.streamable_http_app(
                streamable_http_path=MCP_PATH,
                json_response=False,
                max_request_body_size=MAX_REQUEST_BYTES,
                transport_security=TransportSecuritySettings(
                    enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
                ),
            )
            # SSE only for calls that stream (streaming.py)
            app = self.streaming = JsonUnlessStreaming(app, self.activity.tool_prefix)
            app = RequestGuard(app)  # vaultwatch's own 413 and bad-id answers (mcp_server/requestguard.py)
            self.splice = Splice(app)
            app = _Counting(SessionEnd(self.splice, self.activity), self)
            # the person's decisions on pending changes (`vaultwatch approve`): on the Unix socket only
            desk: Any = PersonDesk(SessionEnd(self.splice, self.activity), self.vault)
            if self.started_by_bridge:  # (bridges only reach the Unix socket)
                desk = SameGuardEnvironment(desk, self.vault.root_real)
            servers.append(_uvicorn(_Counting(desk, self)))
            if self.http:
                token = http_token(self.vault.root_real)
                servers.append(
                    _uvicorn(LoopbackGuard(app, token, self.http[0], sockets[1].getsockname()[1]), http=True)
                )
            vault_lock.publish(self._record())  # now with the HTTP URL
            info = json.dumps(
                {
                    "pid": os.getpid(),
                    "vault": self.vault.root_real,
                    "socket": self.socket_path,
                    "http": self.http_url,
                    "kind": self.kind,
                    "started_at": time.time(),
                }
            )
            with contextlib.suppress(OSError):  # informative only: never a reason not to serve
                write_private(self.socket_path + ".json", info)
            manager_up = asyncio.Event()

            async def own_sessions() -> None:
                async with self.server.session_manager.run():
                    manager_up.set()
                    await self._stopping.wait()

            tasks.append(asyncio.create_task(own_sessions(), name="vaultwatch-mcp-sessions"))
            await manager_up.wait()
            for srv, sock in zip(servers, sockets, strict=True):
                tasks.append(asyncio.create_task(srv.serve(sockets=[sock]), name="vaultwatch-mcp-uvicorn"))
            while not all(s.started for s in servers):
                failed = [t for t in tasks if t.done() and not t.cancelled() and t.exception() is not None]
                if failed:
                    raise HostError(f"the MCP server failed to start: {failed[0].exception()!r}")
                if any(t.done() for t in tasks):
                    break
                await asyncio.sleep(0.005)
            pruner = asyncio.create_task(self._prune_idle_agents(), name="vaultwatch-mcp-agents")
            idler = asyncio.create_task(self._exit_when_idle(), name="vaultwatch-mcp-idle") if self.idle_exit else None
            keeper = asyncio.create_task(
                self._keep_socket(servers[0].config.app, servers, sockets, tasks), name="vaultwatch-mcp-socket"
            )
            if ready is not None:
                ready.set()
            try:
                await self._stop.wait()
            finally:
                pruner.cancel()
                keeper.cancel()
                if idler is not None:
                    idler.cancel()
        finally:
            try:
                for leftover in created:  # first, so clients (and bridges) see the app leaving at once
                    with contextlib.suppress(OSError):
                        os.unlink(leftover)
                await self._shutdown(servers, tasks)
            finally:
                for sock in sockets:
                    sock.close()
                if audit is not None:
                    audit.close()
                now = time.monotonic()
                bridges = any(now - seen < STALE_AGENT_SECONDS for seen in self._bridges.values())
                self.activity.disconnect_all()
                os.close(lock_fd)
                stop_keeping_guard()  # the next holder's guard is its own to keep
                if self.kind == "tui" and bridges:  # before the lock goes, under this server's guard
                    hand_back(self.vault.root_real, self.socket_path, [*self.serve_args, *self.guard().serve_args()])
                vault_lock.release()

    async def _keep_socket(self, app: Any, servers: list, sockets: list, tasks: list) -> None:
        """Notice the socket file being removed (a tmp cleaner, a stray `rm`) and listen again at the
        same path, so new agents can still connect; report it on the bus. Sessions already open are
        unaffected either way. A file someone else put at the path is left alone and reported."""
        from vaultwatch.core.events import IndexProblem

        def inode() -> int | None:
            try:
                st = os.lstat(self.socket_path)
            except OSError:
                return None
            return st.st_ino if stat_mod.S_ISSOCK(st.st_mode) else -1

        bound = inode()
        reported_foreign = False
        while not self._stopping.is_set():
            await asyncio.sleep(SOCKET_CHECK_SECONDS)
            now = inode()
            if now == bound:
                continue
            if now is not None:  # something else took the path: never clobber it
                if not reported_foreign:
                    reported_foreign = True
                    self.vault.bus.publish(
                        IndexProblem(
                            f"the MCP socket {self.socket_path} was replaced by another file; new agents cannot "
                            "connect until vaultwatch restarts",
                            "error",
                        )
                    )
                continue
            try:
                os.makedirs(os.path.dirname(self.socket_path), mode=0o700, exist_ok=True)
                sock = self._bind()
            except (OSError, HostError) as exc:
                self.vault.bus.publish(
                    IndexProblem(
                        f"the MCP socket {self.socket_path} was removed and could not be re-created ({exc}); new "
                        "agents cannot connect until vaultwatch restarts",
                        "error",
                    )
                )
                bound = None
                continue
            srv = _uvicorn(app)
            servers.append(srv)
            sockets.append(sock)
            tasks.append(asyncio.create_task(srv.serve(sockets=[sock]), name="vaultwatch-mcp-uvicorn"))
            bound = inode()
            self.vault.bus.publish(
                IndexProblem(
                    f"the MCP socket {self.socket_path} was removed while serving; listening there again "
                    "(agents already connected were not affected)",
                    "warning",
                )
            )

    @property
    def _stopping(self) -> asyncio.Event:
        """The stop event of the running host (set by `stop()`)."""
        assert self._stop is not None, "the host is not running"
        return self._stop

    async def _exit_when_idle(self) -> None:
        """Stop once no client has been connected (and no request in flight) for idle_exit seconds.
        An agent whose bridge died without a goodbye stops counting after STALE_AGENT_SECONDS."""
        assert self.idle_exit
        idle_since = time.monotonic()
        while not self._stopping.is_set():
            await asyncio.sleep(min(1.0, self.idle_exit / 4))
            now = time.monotonic()
            agents = bool(self.activity.agents()) and now - self._last_request < STALE_AGENT_SECONDS
            if self._inflight or agents:
                idle_since = now
            elif now - idle_since >= self.idle_exit:
                self.vault.bus.publish(_idle_problem(self.idle_exit))
                self.stop()
                return

    async def _prune_idle_agents(self) -> None:
        while not self._stopping.is_set():
            await asyncio.sleep(PRUNE_SECONDS)
            self.activity.prune()

    async def _shutdown(self, servers: list[_Uvicorn], tasks: list[asyncio.Task]) -> None:
        if self._stop is not None:
            self._stop.set()  # ends the session manager: every session is cancelled
        for srv in servers:
            srv.should_exit = True
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=STOP_BUDGET)
        if pending:
            for srv in servers:
                srv.force_exit = True
            for t in pending:
                t.cancel()
            await asyncio.wait(pending, timeout=0.15)


__all__ = ["HostError", "McpHost", "default_socket_path", "find_socket", "read_info", "runtime_dir", "token_path"]
