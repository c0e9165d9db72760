"""`vaultwatch bridge`: relay an MCP client's stdio to the running vaultwatch's Unix socket.

Clients such as Claude Desktop, Cursor or VS Code spawn a command and talk JSON-RPC on its
stdin/stdout; vaultwatch serves streamable HTTP on a socket. The bridge POSTs each stdin
line, unchanged, to the socket and writes each JSON-RPC message that comes back (a JSON
body or the events of an SSE body) to stdout, one per line. It keeps the session id the
server assigns at `initialize`, sends the negotiated version as MCP-Protocol-Version, gives
2026-07-28 requests the routing headers that era requires, and DELETEs the session on EOF.
It imports no MCP SDK (only httpx2), so clients get it running in a fraction of a second.

- Nothing listening: it fails at once, before reading stdin, with a message on stderr.
- The app goes away (socket removed or replaced, serving process gone, connection lost):
  every request still in flight is answered with a JSON-RPC error, and the bridge exits 1.
- stdin reaches EOF: answers still due are awaited (at most 5 s), the session is closed, exit 0.
  SIGTERM/SIGINT/SIGHUP close the session and exit 0 at once.

vaultwatch sends nothing unsolicited, so the bridge opens no standalone GET stream.
"""
from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import signal
import socket
import struct
import sys
import threading
import uuid
from typing import Any

import httpx2

from .wire import MCP_PATH, SESSION_HEADER

APP_GONE = ("vaultwatch stopped serving this vault (the app was closed or crashed); "
            "restart vaultwatch, then reconnect this client")
INTERNAL_ERROR = -32603
PARSE_ERROR = -32700
DRAIN_SECONDS = 5.0
WATCH_INTERVAL = 0.2
URL = f"http://localhost{MCP_PATH}"
MODERN_META_KEY = "io.modelcontextprotocol/protocolVersion"
NAME_KEYS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")


class BridgeError(Exception):
    """The bridge cannot start (no vaultwatch listening, a socket of another user...)."""


class _Gone(Exception):
    """The app serving the socket went away."""


def _say(message: str) -> None:
    print(f"vaultwatch bridge: {message}", file=sys.stderr, flush=True)


def _header_value(value: str) -> str:
    """The Mcp-Name encoding of the 2026-07-28 wire: printable ASCII as is, else =?base64?...?=."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def probe(path: str, vault_hint: str | None = None) -> int | None:
    """Check that a vaultwatch listens on `path`; returns its pid when the OS tells it.

    Raises BridgeError saying what to do when nothing listens there.
    """
    what = f"for {vault_hint}" if vault_hint else f"on {path}"
    start = "start it with `vaultwatch VAULT` (or `vaultwatch serve VAULT` without the TUI), then retry"
    if not os.path.exists(path):
        raise BridgeError(f"no vaultwatch is running {what} (no socket at {path}); {start}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(2.0)
    try:
        sock.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        raise BridgeError(f"no vaultwatch is running {what}: {path} is a leftover of one that stopped; "
                          f"{start}") from None
    except PermissionError:
        raise BridgeError(f"cannot connect to {path}: permission denied (it belongs to another user)") from None
    except OSError as exc:
        raise BridgeError(f"cannot connect to {path}: {exc.strerror or exc}") from None
    try:
        if hasattr(socket, "SO_PEERCRED"):
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid = struct.unpack("3i", raw)[0]
            return pid if pid > 0 else None
        return None
    finally:
        sock.close()


class Relay:
    """One client's relay (see module doc)."""

    def __init__(self, path: str, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        self.session_id: str | None = None
        self.version: str | None = None
        self.inflight: dict[Any, str] = {}
        self.eof = asyncio.Event()
        self.gone = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()
        self.terminated = False
        self._socket_id: tuple[int, int] | None = None
        self._out = threading.Lock()
        self._client_session = "bridge-" + uuid.uuid4().hex[:12]

    # -- stdout -------------------------------------------------------------------------
    def emit(self, message: Any) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        with self._out:
            try:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
            except (BrokenPipeError, ValueError, OSError):
                self.eof.set()

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.emit({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def answered(self, request_id: Any) -> None:
        self.inflight.pop(request_id, None)
        if not self.inflight:
            self.idle.set()

    def answer_inflight(self, message: str) -> None:
        """Tell the client every request still waiting failed, and why."""
        for request_id in list(self.inflight):
            self.error(request_id, INTERNAL_ERROR, message)
        self.inflight.clear()
        self.idle.set()

    # -- stdin --------------------------------------------------------------------------
    def start_stdin(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue) -> None:
        """Read stdin in a thread (it cannot be cancelled; the bridge exits without joining it)."""
        def reader() -> None:
            buf = b""
            while True:
                try:
                    chunk = os.read(0, 1 << 16)
                except OSError:
                    chunk = b""
                if not chunk:
                    if buf.strip():
                        loop.call_soon_threadsafe(queue.put_nowait, buf)
                    loop.call_soon_threadsafe(queue.put_nowait, None)
                    return
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    loop.call_soon_threadsafe(queue.put_nowait, line)

        threading.Thread(target=reader, name="vaultwatch-bridge-stdin", daemon=True).start()

    # -- HTTP ---------------------------------------------------------------------------
    def headers_for(self, message: Any) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                   SESSION_HEADER: self._client_session}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        if not isinstance(message, dict):
            return headers
        method = message.get("method")
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        modern = meta.get(MODERN_META_KEY) if isinstance(meta, dict) else None
        if isinstance(modern, str) and isinstance(method, str):
            headers["mcp-protocol-version"] = modern
            headers["mcp-method"] = method
            key = NAME_KEYS.get(method)
            if key and isinstance(params.get(key), str):
                headers["mcp-name"] = _header_value(params[key])
        elif self.version and method != "initialize":
            headers["mcp-protocol-version"] = self.version
        return headers

    async def forward(self, http: httpx2.AsyncClient, raw: bytes, message: Any) -> None:
        """POST one client message and relay what comes back."""
        request_id = message.get("id") if isinstance(message, dict) and "method" in message else None
        is_request = request_id is not None
        try:
            async with http.stream("POST", URL, content=raw, headers=self.headers_for(message)) as resp:
                if isinstance(message, dict) and message.get("method") == "initialize":
                    self.session_id = resp.headers.get("mcp-session-id") or self.session_id
                ctype = resp.headers.get("content-type", "").lower()
                if resp.status_code == 202 or not is_request and resp.status_code < 400:
                    return
                if ctype.startswith("text/event-stream") and resp.status_code < 400:
                    await self._relay_sse(resp, request_id)
                    return
                if resp.status_code >= 500:
                    # a request cut off by the app shutting down: let the watchdog name it that way
                    if not self.app_alive():
                        self.gone.set()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.gone.wait(), 3 * WATCH_INTERVAL)
                    if self.gone.is_set():
                        return
                body = await resp.aread()
                reply = None
                if ctype.startswith("application/json"):
                    with contextlib.suppress(ValueError):
                        reply = json.loads(body)
                if isinstance(reply, dict) and ("result" in reply or "error" in reply):
                    if is_request and reply.get("id") is None:
                        reply["id"] = request_id  # a refusal before the server parsed the id
                    self._deliver(reply)
                elif is_request:
                    hint = (" (the session expired or vaultwatch restarted: reconnect this client)"
                            if resp.status_code == 404 else "")
                    text = body[:200].decode("utf-8", "replace").strip()
                    self.error(request_id, INTERNAL_ERROR, f"vaultwatch answered HTTP {resp.status_code}{hint}: {text}")
                    self.answered(request_id)
        except httpx2.TransportError:
            self.gone.set()

    async def _relay_sse(self, resp: httpx2.Response, request_id: Any) -> None:
        data: list[str] = []
        async for line in resp.aiter_lines():
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif line == "" and data:
                with contextlib.suppress(ValueError):
                    self._deliver(json.loads("\n".join(data)))
                data = []
                if request_id not in self.inflight:
                    return
        if request_id in self.inflight:
            self.error(request_id, INTERNAL_ERROR, "vaultwatch closed the response stream without an answer")
            self.answered(request_id)

    def _deliver(self, message: Any) -> None:
        if isinstance(message, dict) and ("result" in message or "error" in message):
            method = self.inflight.get(message.get("id"))
            if method == "initialize" and isinstance(message.get("result"), dict):
                version = message["result"].get("protocolVersion")
                self.version = version if isinstance(version, str) else None
            self.answered(message.get("id"))
        self.emit(message)

    async def pump(self, http: httpx2.AsyncClient, queue: asyncio.Queue) -> None:
        """Forward stdin lines: requests concurrently, everything else in order."""
        tasks: set[asyncio.Task] = set()
        while True:
            raw = await queue.get()
            if raw is None:
                self.eof.set()
                return
            raw = raw.strip()
            if not raw:
                continue
            try:
                message = json.loads(raw)
            except ValueError:
                self.error(None, PARSE_ERROR, "Parse error: each stdin line must be one JSON-RPC message")
                continue
            if isinstance(message, dict) and "method" in message and message.get("id") is not None:
                self.inflight[message["id"]] = str(message["method"])
                self.idle.clear()
                task = asyncio.create_task(self.forward(http, raw, message))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            else:
                await self.forward(http, raw, message)

    def app_alive(self) -> bool:
        """True while the socket we connected to is still there and its process still runs."""
        try:
            now = os.stat(self.path)
        except OSError:
            return False
        if self._socket_id is not None and (now.st_dev, now.st_ino) != self._socket_id:
            return False  # removed and bound again: another vaultwatch, whose sessions are not ours
        if self.pid is not None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                pass
        return True

    async def watch(self) -> None:
        """Notice the app going away even when no request is in flight."""
        with contextlib.suppress(OSError):
            st = os.stat(self.path)
            self._socket_id = (st.st_dev, st.st_ino)
        while self.app_alive():
            await asyncio.sleep(WATCH_INTERVAL)
        self.gone.set()

    async def run(self) -> int:
        """Relay until stdin ends (0) or the app goes away (1)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        self.start_stdin(loop, queue)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.add_signal_handler(sig, self._terminate)
        transport = httpx2.AsyncHTTPTransport(uds=self.path)
        async with httpx2.AsyncClient(transport=transport, timeout=httpx2.Timeout(30, read=300)) as http:
            tasks = [asyncio.create_task(self.watch()), asyncio.create_task(self.pump(http, queue))]
            gone = asyncio.create_task(self.gone.wait())
            done_reading = asyncio.create_task(self._eof_then_idle())
            await asyncio.wait([gone, done_reading], return_when=asyncio.FIRST_COMPLETED)
            for task in (*tasks, gone, done_reading):
                task.cancel()
            if self.gone.is_set():
                self.answer_inflight(APP_GONE)
                _say(APP_GONE)
                return 1
            with contextlib.suppress(httpx2.HTTPError):  # ends the MCP session (or, 2026-07-28, the agent's presence)
                await http.delete(URL, headers=self.headers_for({}), timeout=2.0)
            return 0

    def _terminate(self) -> None:
        """The client asked the bridge to go (SIGTERM): close the session and exit without waiting."""
        self.terminated = True
        self.eof.set()

    async def _eof_then_idle(self) -> None:
        await self.eof.wait()
        if self.terminated:
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.idle.wait(), DRAIN_SECONDS)


def run_bridge(socket_path: str, vault_hint: str | None = None) -> int:
    """Relay stdio to the vaultwatch on `socket_path` until stdin ends or the app goes away."""
    pid = probe(socket_path, vault_hint)
    code = asyncio.run(Relay(socket_path, pid).run())
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)  # the stdin reader thread may still sit in read(); nothing else is left to clean up
