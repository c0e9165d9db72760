"""`vaultwatch bridge`: relay an MCP client's stdio to the vaultwatch serving a vault, starting
one when none runs, and following the vault when another server takes it over.

Clients such as Claude Desktop, Cursor or VS Code spawn a command and talk JSON-RPC on its
stdin/stdout; vaultwatch serves streamable HTTP on a socket. The bridge POSTs each stdin
line, unchanged, to the socket and writes each JSON-RPC message that comes back (a JSON
body or the events of an SSE body) to stdout, one per line. It keeps the session id the
server assigns at `initialize`, sends the negotiated version as MCP-Protocol-Version, gives
2026-07-28 requests the routing headers that era requires, and DELETEs the session on EOF.
It imports no MCP SDK and no HTTP library (unixhttp.py speaks the little HTTP it needs), so clients
get it running in a fraction of a second.

- Finding the server (launch.py): the vault's lock names the process serving it; when none
  does, the bridge starts a headless `vaultwatch serve --headless` (shared by every bridge of
  the vault, exiting by itself when idle). Sockets are trusted only in a folder of this user's
  with mode 0700 and with a listener running as this user (SO_PEERCRED), before any byte.
- The server goes away (TUI quit, TUI taking over from a headless server, a crash, `kill -9`):
  the bridge finds (or starts) the vault's server again, re-initializes with the client's
  original `initialize` (the client keeps its session and never sees a new handshake), and
  goes on. A request that never reached the old server is sent again; a read cut off in flight
  is retried; a write cut off in flight is answered with an error saying it may have been
  applied (never sent twice). Each request uses its own connection, so "not sent" is known.
- `notifications/cancelled` is forwarded and the cancelled request's reply is dropped.
- Server-initiated messages: a call's own (progress) come in its SSE answer; the rest (a
  subscribed resource's updates, list_changed) on the session's GET stream, which the bridge
  opens once the session is initialized and relays line by line; after a switch it opens one on
  the new server and subscribes the client's resources there again.
- stdin reaches EOF: answers still due are awaited (at most 5 s, VAULTWATCH_BRIDGE_DRAIN; not open
  subscription streams), the session is closed, exit 0. SIGTERM/SIGINT/SIGHUP close the session and
  exit 0 at once.
- `--tool-prefix vault_`: the client sees every tool as `vault_<name>` (tools/list, and a line in
  the instructions); its calls reach the server under the server's names. Per client, so it
  holds whichever server (TUI or headless) serves the vault.
- `--socket` without `--vault` (bridge_cli.py): the vault is read from the `.json` a crashed server
  left beside the socket; without one there is nothing to start, so each call is answered with an
  error saying so (and naming `--vault`), and a server that comes to that socket later is used.

Over 500 lines for one job: the relay is one state machine (the client's session, the
upstream generation, requests in flight, cancellations, subscriptions, the switch-over's replay
and retry rules) whose parts read and change the same state; finding servers (launch.py), the
command line (bridge_cli.py) and HTTP (unixhttp.py) are out already.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import os
import re
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"  # where 2026-07-28 requests carry the client's name
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"  # what marks a request as 2026-07-28

from vaultwatch.core import settings
from vaultwatch.core.review.guardenv import encoded, guard_environment

from . import unixhttp
from .launch import BridgeError, NotListening, connect_trusted
from .wire import GUARD_ENV_HEADER, MCP_PATH, SESSION_HEADER

APP_GONE = "vaultwatch stopped serving this vault (the app was closed or crashed) and no server could be reached again"
MAYBE_APPLIED = (
    "vaultwatch changed servers (the TUI was opened or quit, or the server restarted) while this "
    "call was in flight; it may or may not have been applied: check the note before retrying"
)
INTERNAL_ERROR = -32603
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
DRAIN_SECONDS = float(settings.env("VAULTWATCH_BRIDGE_DRAIN"))  # how long EOF waits for answers still due
WATCH_INTERVAL = 0.05
RETRIES = 4
URL = f"http://localhost{MCP_PATH}"
MODERN_META_KEY = "io.modelcontextprotocol/protocolVersion"
NAME_KEYS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
LONG_LIVED = frozenset({"subscriptions/listen"})  # open streams: EOF does not wait for them
READ_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "tools/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "server/discover",
        "subscriptions/listen",
    }
)
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")

Locate = Callable[[float], "tuple[str, int | None]"]  # grace seconds -> (socket, pid); raises BridgeError


class _Lost(Exception):
    """The server went away under a request; `sent` says whether it may have seen the request."""

    def __init__(self, sent: bool) -> None:
        self.sent = sent


def _say(message: str) -> None:
    print(f"vaultwatch bridge: {message}", file=sys.stderr, flush=True)


def _header_value(value: str) -> str:
    """The Mcp-Name encoding of the 2026-07-28 wire: printable ASCII as is, else =?base64?...?=."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def probe(path: str, vault_hint: str | None = None) -> int | None:
    """Check that a vaultwatch of this user listens on `path`; returns its pid when the OS tells it.

    Raises BridgeError saying what to do when nothing (or an impostor) listens there.
    """
    what = f"for {vault_hint}" if vault_hint else f"on {path}"
    start = "start it with `vaultwatch VAULT` (or `vaultwatch serve VAULT` without the TUI), then retry"
    if not os.path.lexists(path):
        raise BridgeError(f"no vaultwatch is running {what} (no socket at {path}); {start}")
    try:
        return connect_trusted(path)
    except NotListening:
        raise BridgeError(
            f"no vaultwatch is running {what}: {path} is a leftover of one that stopped; {start}"
        ) from None


class Relay:
    """One client's relay (see module doc)."""

    def __init__(
        self,
        path: str,
        pid: int | None,
        locate: Locate | None = None,
        unavailable: str | None = None,
        tool_prefix: str = "",
        agent: str = "",
    ) -> None:
        self.path = path
        self.tool_prefix = tool_prefix
        self.agent = agent  # `--agent`: the client is presented under this name
        self.server_names: dict[str, str] = {}  # the client's tool name -> the server's (with tool_prefix)
        self.pid = pid
        self.locate = locate  # how to find (or start) the server again; None: wait on `path`
        self.session_id: str | None = None
        self.version: str | None = None
        self.inflight: dict[Any, str] = {}
        self.tasks: dict[Any, asyncio.Task] = {}
        self.cancelled: set[Any] = set()
        self.read_only_tools: set[str] = set()
        self.eof = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()
        self.terminated = False
        self.http: unixhttp.AsyncClient | None = None
        self.generation = 0
        self.ready = asyncio.Event()  # set while `http` points at a live server (or it is known unavailable)
        self.unavailable: str | None = unavailable  # why no server can be reached now
        self._reconnecting: asyncio.Task | None = None
        self._socket_id: tuple[int, int] | None = None
        self.init_message: dict | None = None  # the client's initialize, replayed to every new server
        self.switches = 0
        self._chores: set[asyncio.Task] = set()
        self.handshaking = asyncio.Event()  # cleared while the client's initialize is on its way
        self.handshaking.set()
        self._out = threading.Lock()
        self._client_session = "bridge-" + uuid.uuid4().hex[:12]
        # the rules this client's environment names: a server that applies others refuses it (sameenv.py)
        self._guard_env = encoded(guard_environment())
        self.subscribed: set[str] = set()  # resources the client subscribed to (again after a switch)

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
        if request_id in self.cancelled:
            return
        self.emit({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def answered(self, request_id: Any) -> None:
        self.inflight.pop(request_id, None)
        if not any(m not in LONG_LIVED for m in self.inflight.values()):
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

    # -- upstream -----------------------------------------------------------------------
    def _client(self) -> unixhttp.AsyncClient:
        # one connection per request (no keep-alive): a refused connect proves the request was never sent
        return unixhttp.AsyncClient(self.path, timeout=30, read=300)

    def _attach(self, path: str, pid: int | None) -> None:
        self.path, self.pid = path, pid
        self.http = self._client()
        with contextlib.suppress(OSError):
            st = os.stat(path)
            self._socket_id = (st.st_dev, st.st_ino)
        self.generation += 1

    def lost(self, generation: int) -> None:
        """The server of `generation` went away: find the next one (once, whoever notices first)."""
        if generation != self.generation or (self._reconnecting and not self._reconnecting.done()):
            return
        self.ready.clear()
        self._reconnecting = asyncio.create_task(self._reconnect())

    async def _reconnect(self) -> None:
        old, self.http = self.http, None
        if old is not None:
            with contextlib.suppress(Exception):
                await old.aclose()
        try:
            if self.locate is not None:
                path, pid = await asyncio.to_thread(self.locate, 0.3)
            else:
                path, pid = await asyncio.to_thread(_wait_for_socket, self.path, 10.0)
            self._attach(path, pid)
            await self._reinitialize()
            self.unavailable = None
            self.switches += 1
        except (BridgeError, _Lost, unixhttp.HTTPError, OSError) as exc:
            self.http = None
            if self.generation == 0:  # never reached one: only what is wrong now
                self.unavailable = str(exc) or APP_GONE
            else:
                self.unavailable = f"{APP_GONE}: {exc}" if str(exc) else APP_GONE
            _say(self.unavailable)
        finally:
            self.ready.set()

    async def _reinitialize(self) -> None:
        """Replay the client's initialize to the new server, so the client keeps its session."""
        self.session_id = None
        if self.init_message is None or self.http is None:
            return
        message = {**self.init_message, "id": f"vaultwatch-bridge-reinit-{self.generation}"}
        raw = json.dumps(message).encode()
        resp = await self.http.post(URL, content=raw, headers=self.headers_for(message))
        if resp.status_code >= 400:
            raise BridgeError(f"the new server refused initialize: HTTP {resp.status_code}")
        self.session_id = resp.headers.get("mcp-session-id")
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.http.post(URL, content=json.dumps(note).encode(), headers=self.headers_for(note))
        await self._learn_tools(self.http)
        self._background(self._listen(self.http, self.generation))
        for n, uri in enumerate(sorted(self.subscribed)):
            again = {
                "jsonrpc": "2.0",
                "id": f"vaultwatch-bridge-sub-{self.generation}-{n}",
                "method": "resources/subscribe",
                "params": {"uri": uri},
            }
            with contextlib.suppress(unixhttp.HTTPError):
                await self.http.post(URL, content=json.dumps(again).encode(), headers=self.headers_for(again))

    async def _listen(self, http: unixhttp.AsyncClient, generation: int) -> None:
        """Relay the session's GET stream (notifications not tied to a call) while this server serves it."""
        while self.session_id and generation == self.generation and not self.eof.is_set():
            headers = {**self.headers_for({}), "accept": "text/event-stream"}
            try:
                async with http.stream("GET", URL, headers=headers, timeout=None) as resp:
                    if resp.status_code != 200 or not resp.headers.get("content-type", "").startswith(
                        "text/event-stream"
                    ):
                        return  # a server without a standalone stream (or one open already)
                    async for message in resp.aiter_messages():
                        self._deliver(message)
            except unixhttp.HTTPError:
                pass
            await asyncio.sleep(0.2)  # the stream ended: open it again while the session lasts

    async def _learn_tools(self, http: unixhttp.AsyncClient) -> None:
        """Ask the server which tools only read (their calls may be retried across a switch)."""
        message = {"jsonrpc": "2.0", "id": f"vaultwatch-bridge-tools-{self.generation}", "method": "tools/list"}
        with contextlib.suppress(unixhttp.HTTPError, ValueError):
            resp = await http.post(URL, content=json.dumps(message).encode(), headers=self.headers_for(message))
            body = resp.json() if resp.headers.get("content-type", "").startswith("application/json") else None
            if isinstance(body, dict) and isinstance(body.get("result"), dict):
                self._note_read_only(body["result"].get("tools"))

    async def connected(self) -> tuple[unixhttp.AsyncClient, int] | None:
        """The live upstream, waiting through a switch; None when no server can be reached."""
        await self.ready.wait()
        if self.http is None:
            self.lost(self.generation)  # try again for this request
            await self.ready.wait()
        return (self.http, self.generation) if self.http is not None else None

    # -- HTTP ---------------------------------------------------------------------------
    def headers_for(self, message: Any) -> dict[str, str]:
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            SESSION_HEADER: self._client_session,
            GUARD_ENV_HEADER: self._guard_env,
        }
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
            if key and isinstance(params, dict) and isinstance(params.get(key), str):
                headers["mcp-name"] = _header_value(params[key])
        elif self.version and method != "initialize":
            headers["mcp-protocol-version"] = self.version
        return headers

    def _background(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    def retry_safe(self, message: Any) -> bool:
        """May this request be sent again after the server went away with it (a read)?"""
        method = message.get("method") if isinstance(message, dict) else None
        if method == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            return isinstance(name, str) and name in self.read_only_tools
        return method in READ_METHODS

    async def forward(self, raw: bytes, message: Any) -> None:
        """POST one client message (again, after a switch, when that cannot apply it twice)."""
        request_id = message.get("id") if isinstance(message, dict) and "method" in message else None
        is_request = request_id is not None
        if isinstance(message, dict) and message.get("method") == "initialize":
            self.init_message = message
            self.handshaking.clear()
            try:
                return await self._forward(raw, message, request_id, is_request)
            finally:
                self.handshaking.set()
        await self.handshaking.wait()  # a client that does not wait for initialize's answer: its session id first
        await self._forward(raw, message, request_id, is_request)

    async def _forward(self, raw: bytes, message: Any, request_id: Any, is_request: bool) -> None:
        for _attempt in range(RETRIES + 1):
            up = await self.connected()
            if up is None:
                if is_request:
                    self.error(request_id, INTERNAL_ERROR, self.unavailable or APP_GONE)
                    self.answered(request_id)
                return
            http, generation = up
            try:
                await self._post(http, raw, message, request_id)
                if isinstance(message, dict) and message.get("method") == "notifications/initialized":
                    if not self.read_only_tools:
                        self._background(self._learn_tools(http))
                    self._background(self._listen(http, generation))
                return
            except _Lost as lost:
                self.lost(generation)
                if lost.sent and not self.retry_safe(message):
                    if is_request:
                        self.error(request_id, INTERNAL_ERROR, MAYBE_APPLIED)
                        self.answered(request_id)
                    return
                if isinstance(message, dict) and message.get("method") == "notifications/initialized":
                    return  # the new server was initialized by the bridge itself
                if isinstance(message, dict) and message.get("method") == "initialize":
                    return await self._answer_initialize(request_id)
        if is_request:
            self.error(request_id, INTERNAL_ERROR, self.unavailable or APP_GONE)
            self.answered(request_id)

    async def _answer_initialize(self, request_id: Any) -> None:
        """The client's initialize was cut off: the bridge re-initialized the new server with it;
        send it once more for the client's own answer (an initialize twice changes nothing)."""
        up = await self.connected()
        if up is None:
            self.error(request_id, INTERNAL_ERROR, self.unavailable or APP_GONE)
            self.answered(request_id)
            return
        raw = json.dumps(self.init_message).encode()
        with contextlib.suppress(_Lost):
            await self._post(up[0], raw, self.init_message, request_id)
            return
        self.error(request_id, INTERNAL_ERROR, self.unavailable or APP_GONE)
        self.answered(request_id)

    async def _post(self, http: unixhttp.AsyncClient, raw: bytes, message: Any, request_id: Any) -> None:
        is_request = request_id is not None
        try:
            async with http.stream("POST", URL, content=raw, headers=self.headers_for(message)) as resp:
                if isinstance(message, dict) and message.get("method") == "initialize":
                    self.session_id = resp.headers.get("mcp-session-id") or self.session_id
                ctype = resp.headers.get("content-type", "").lower()
                if (
                    resp.status_code == 404
                    and self.session_id
                    and not (isinstance(message, dict) and message.get("method") == "initialize")
                ):
                    raise _Lost(sent=False)  # another server on the socket: this one never saw our session
                if resp.status_code == 202 or not is_request and resp.status_code < 400:
                    return
                if ctype.startswith("text/event-stream") and resp.status_code < 400:
                    await self._relay_sse(resp, request_id)
                    return
                if resp.status_code >= 500 and not await self._still_alive():
                    raise _Lost(sent=True)  # cut off by the server shutting down
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
                    text = body[:200].decode("utf-8", "replace").strip()
                    self.error(request_id, INTERNAL_ERROR, f"vaultwatch answered HTTP {resp.status_code}: {text}")
                    self.answered(request_id)
        except unixhttp.UnsendableRequest as exc:  # the client's own values, which HTTP cannot carry
            if is_request:
                self.error(request_id, INVALID_REQUEST, f"invalid request, not sent to vaultwatch: {exc}")
                self.answered(request_id)
        except unixhttp.ConnectError:
            raise _Lost(sent=False) from None
        except unixhttp.TransportError:
            raise _Lost(sent=True) from None

    async def _still_alive(self) -> bool:
        for _ in range(6):
            if not self.app_alive():
                return False
            await asyncio.sleep(WATCH_INTERVAL)
        return self.app_alive()

    async def _relay_sse(self, resp: unixhttp.Response, request_id: Any) -> None:
        async for message in resp.aiter_messages():
            self._deliver(message)
            if request_id not in self.inflight:
                return
        if request_id in self.inflight:
            if not self.app_alive():
                raise _Lost(sent=True)
            self.error(request_id, INTERNAL_ERROR, "vaultwatch closed the response stream without an answer")
            self.answered(request_id)

    def _deliver(self, message: Any) -> None:
        if isinstance(message, dict) and ("result" in message or "error" in message):
            request_id = message.get("id")
            method = self.inflight.get(request_id)
            result = message.get("result")
            if method == "initialize" and isinstance(result, dict):
                version = result.get("protocolVersion")
                self.version = version if isinstance(version, str) else None
            elif method == "tools/list" and isinstance(result, dict):
                self._note_read_only(result.get("tools"))
            if self.tool_prefix and isinstance(result, dict):
                self._client_view(method, result)
            if request_id in self.cancelled:
                self.cancelled.discard(request_id)
                self.answered(request_id)
                return  # the client cancelled it: it expects no reply
            if request_id is not None and request_id not in self.inflight:
                return  # answered already (a retry's duplicate)
            self.answered(request_id)
        self.emit(message)

    def _forget_task(self, request_id: Any, task: asyncio.Task) -> None:
        if self.tasks.get(request_id) is task:
            self.tasks.pop(request_id, None)

    def _note_read_only(self, tools: Any) -> None:
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                notes = tool.get("annotations")
                if isinstance(notes, dict) and notes.get("readOnlyHint") is True:
                    self.read_only_tools.add(tool["name"])
                else:
                    self.read_only_tools.discard(tool["name"])

    def _server_call(self, message: dict, raw: bytes) -> bytes:
        """A tools/call under the client's (prefixed) name, as the server knows the tool (`--tool-prefix`)."""
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str) or not isinstance(params, dict):
            return raw
        known = self.server_names.get(name)
        if known is None and name.startswith(self.tool_prefix) and name not in self.server_names.values():
            known = name[len(self.tool_prefix) :]  # before tools/list: the prefix alone says it
        if known is None or known == name:
            return raw
        params["name"] = known
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()

    def _client_view(self, method: str | None, result: Any) -> None:
        """Show the client the server's tools under `--tool-prefix` (tools/list; the instructions say it)."""
        prefix = self.tool_prefix
        if method == "tools/list" and isinstance(result.get("tools"), list):
            for tool in result["tools"]:
                name = tool.get("name") if isinstance(tool, dict) else None
                if isinstance(name, str):
                    shown = name if name.startswith(prefix) else prefix + name
                    self.server_names[shown] = name
                    tool["name"] = shown
        elif method == "initialize" and isinstance(result.get("instructions"), str):
            result["instructions"] += (
                f"\n\nEvery tool name here starts with {prefix!r}: {prefix}read is the read tool named above."
            )

    def _note_subscription(self, message: dict) -> None:
        params = message.get("params")
        uri = params.get("uri") if isinstance(params, dict) else None
        if isinstance(uri, str) and message.get("method") == "resources/subscribe":
            self.subscribed.add(uri)
        elif isinstance(uri, str) and message.get("method") == "resources/unsubscribe":
            self.subscribed.discard(uri)

    def _cancel(self, message: dict) -> None:
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if request_id is None or request_id not in self.inflight:
            return
        self.cancelled.add(request_id)
        task = self.tasks.get(request_id)
        if task is not None and not task.done():
            task.cancel()  # closes its stream; the server's answer, if any, is dropped
        self.answered(request_id)

    async def pump(self, queue: asyncio.Queue) -> None:
        """Forward stdin lines: requests concurrently, everything else in order."""
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
            if isinstance(message, dict) and message.get("method") == "initialize":
                self.handshaking.clear()  # now, not when its task starts: `initialized` may be the next line
            if self.tool_prefix and isinstance(message, dict) and message.get("method") == "tools/call":
                raw = self._server_call(message, raw)
            if self.agent and isinstance(message, dict) and "method" in message:
                raw = named_as(message, raw, self.agent)
            if isinstance(message, dict) and "method" in message and message.get("id") is not None:
                request_id = message["id"]
                self._note_subscription(message)
                self.cancelled.discard(request_id)
                self.inflight[request_id] = str(message["method"])
                if message["method"] not in LONG_LIVED:
                    self.idle.clear()
                task = asyncio.create_task(self.forward(raw, message))
                self.tasks[request_id] = task
                task.add_done_callback(functools.partial(self._forget_task, request_id))
            else:
                if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
                    self._cancel(message)
                await self.forward(raw, message)

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
        """Notice the server going away even when no request is in flight, and follow the vault."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            if self.ready.is_set() and self.http is not None and not self.app_alive():
                self.lost(self.generation)

    async def run(self) -> int:
        """Relay until stdin ends (0)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        self.start_stdin(loop, queue)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.add_signal_handler(sig, self._terminate)
        if self.unavailable is None:
            self._attach(self.path, self.pid)
        self.ready.set()
        tasks = [asyncio.create_task(self.watch()), asyncio.create_task(self.pump(queue))]
        await self._eof_then_idle()
        for task in tasks:
            task.cancel()
        for task in list(self.tasks.values()):
            task.cancel()
        if self.http is not None:
            with contextlib.suppress(unixhttp.HTTPError):  # ends the MCP session (or, 2026-07-28, the agent's presence)
                await self.http.delete(URL, headers=self.headers_for({}), timeout=2.0)
            with contextlib.suppress(Exception):
                await self.http.aclose()
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


def _wait_for_socket(path: str, timeout: float) -> tuple[str, int | None]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return path, connect_trusted(path)
        except NotListening:
            if time.monotonic() > deadline:
                raise BridgeError(f"nothing listens on {path} again after {timeout:g} s") from None
            time.sleep(0.02)


def named_as(message: dict, raw: bytes, agent: str) -> bytes:
    """`message` with the client's name set to `agent` wherever the server reads it (initialize's
    clientInfo; on 2026-07-28 requests, the clientInfo of `_meta`); the client's own name is kept as the
    title. The name is put there even when the client left it out or sent something else: a request
    without one would reach the server as an unknown agent, under the default rule instead of the
    person's rule for `agent`."""
    params = message.get("params")
    if not isinstance(params, dict):
        return raw
    changed = False
    if message.get("method") == "initialize":
        params["clientInfo"] = _renamed(params.get("clientInfo"), agent)
        changed = True
    meta = params.get("_meta")
    if isinstance(meta, dict) and (CLIENT_INFO_META in meta or PROTOCOL_VERSION_META in meta):
        meta[CLIENT_INFO_META] = _renamed(meta.get(CLIENT_INFO_META), agent)
        changed = True
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() if changed else raw


def _renamed(info: object, agent: str) -> dict:
    given = info if isinstance(info, dict) else {}
    original = given.get("name")
    out = {**given, "name": agent}
    if not isinstance(out.get("version"), str):
        out["version"] = "0"  # (the SDK requires one)
    if isinstance(original, str) and original != agent:
        out.setdefault("title", original)
    return out


def run_bridge(
    socket_path: str,
    vault_hint: str | None = None,
    *,
    locate: Locate | None = None,
    tool_prefix: str = "",
    agent: str = "",
) -> int:
    """Relay stdio to the vaultwatch on `socket_path` (found or started by `locate` when given) until stdin ends."""
    unavailable = None
    pid = None
    if locate is not None:
        try:
            socket_path, pid = locate(0.0)
        except BridgeError as exc:
            unavailable = str(exc)  # said to the client on each call, not only to a log it never shows
            _say(unavailable)
    else:
        pid = probe(socket_path, vault_hint)
    code = asyncio.run(Relay(socket_path, pid, locate, unavailable, tool_prefix, agent).run())
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)  # the stdin reader thread may still sit in read(); nothing else is left to clean up
