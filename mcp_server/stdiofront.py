"""`serve --stdio` answers the handshake before the MCP SDK is imported.

A client that spawns `vaultwatch serve --stdio` waits for the answer to its `initialize` (and
then to `tools/list`) before it does anything, and importing the MCP SDK alone takes ~0.9 s.
So the stdio server has a front, started with the process (tui/entry.py) on the standard
library only:

- It owns the process's stdin and stdout: the real descriptors are kept private, fd 0 reads
  the null device and fd 1 goes to stderr (as the SDK's own stdio transport arranges), so a
  stray print never corrupts the wire.
- Until the SDK server is built it reads the client's lines itself. Nothing is answered before
  the server may serve (`serve`: it holds the vault's lock, its options are parsed); a server
  that may not (`refuse`: another one holds the vault) answers every request with an error that
  names the running server and the bridge that reaches it, until the client hangs up.
- `initialize` is answered from mcp_server/handshake.py, which the SDK's server is built from
  too (so also on a first start), and a plain `tools/list` from a cache of the SDK's own earlier
  answers, byte for byte (the result text the SDK wrote, with the client's id), or on a first
  start (no cache) from the list shipped with the package for this server's variant
  (toollist.py, generated from the SDK's answers). The cache
  (`$XDG_CACHE_HOME/vaultwatch/handshake/`) is keyed by the command line, the VAULTWATCH_*
  environment, the vaultwatch sources and the installed SDK (size and mtime of each file), and
  by the protocol version.
- A 2026-07-28-era client (the Python SDK's default `Client`) has no handshake: it asks
  `server/discover`, then names its protocol version and itself in each request's `_meta`. The
  front answers discover from handshake.py, a plain tools/list from the cache of the SDK's answer at
  that version, and the tool calls EarlyCalls takes, as in a handshake session (`_answer_modern`);
  a request whose `_meta` carries anything more (a progress token, a log level) is the SDK's. As in
  the SDK, the client's first request fixes the connection's era: a request of the other era is
  the SDK's to refuse, and the SDK is given a request of the era in place of a first call the front took.
- A `tools/call` the server's EarlyCalls can answer (earlycalls.py: a plain list_documents, read,
  search by words or write) is answered by the front's worker thread, never passed to the SDK, once
  the session's initialize was the front's, the client said `notifications/initialized`, and no
  earlier request of the client is still waiting for the SDK (so an answer never overtakes an
  earlier request whose effects it could miss). Before the SDK, everything else waits, in order,
  for it; the server imports it once such a request came (`wait_before_sdk`), and a session that
  never sends one never imports it (a client that hangs up with every request answered ends the
  process without it). Only when the front has no tools/list to give (no shipped list for this
  variant or SDK) does the import start as soon as a cold load's parse begins (no answer can be
  given before the parse ends, and the client's first tools/list would wait for the SDK after it).
- Then the SDK server takes over (`run`): every line read so far, the client's `initialize`
  included, goes to it in order, and so does every later line, except the tool calls the front
  still answers itself (the same rules: the SDK owes the client no answer at that moment, and the
  client set no log level, for which the SDK's path would send log lines) and a
  `notifications/cancelled` of one of them (its answer is dropped). A request waits for the SDK
  from the line that carries it until the SDK writes its answer, or its handler ends cancelled.
  The SDK's replies to the replayed `initialize` and to a `tools/list` the front answered are
  compared with what the front sent and never sent twice (a difference updates the cache and is
  logged). A cache miss is filled from the SDK's answer as it passes.
- SIGTERM, SIGINT and SIGHUP (`stop_on_signals`, installed with the front) end the session as the
  client closing stdin does: the front reads no more lines (it stops taking requests), a call
  under way is finished, the vault is stopped (its watcher drained: an outside change made just
  before is journaled) and the process exits as a socket `serve` does on SIGTERM. The handler
  only wakes the front's reader, so it takes no lock the interrupted thread may hold; a second
  such signal finds the default action again and ends the process at once. An answer the client
  takes none of for STOPPED_WRITE_WAIT_S after the signal is dropped (the client stopped reading),
  so the call that owes it ends and the exit goes on; the answers after it that find no room are
  dropped at once, so the exit waits that long once, not once per answer.
- The front writes the SDK's lines (`_Out`): the placeholders of JSON the server's fast path parked
  for this line (a listing's cached rows and text, splice.LineParking) are filled as it leaves, and
  the line is written at once while the pipe has room (the descriptor is made non-blocking at the
  start when it is a pipe or socket); only the rest of a line the client has not made room for yet is handed to a
  thread, which waits for the pipe. The lines go out whole and in the SDK's order either way.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import select
import stat
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vaultwatch.core.disk.private import open_private

if TYPE_CHECKING:  # imported once the SDK runs (`run`): the front answers before it on the standard library
    import asyncio

log = logging.getLogger("vaultwatch.stdio")

CACHE_FILES_KEPT = 16
# a message's bytes at most, as the socket's request limit (requestguard.MAX_REQUEST_BYTES, which
# this module does not import: it stays on the standard library); a longer line is answered, never
# read whole
MAX_LINE_BYTES = 40 * 2**20
_ID = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_HEAD_ID = re.compile(rb'\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*' + _ID)
_TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID + rb"\s*\}\s*$")
_TAKEN = b""  # in place of a line the front answers itself and the SDK never sees
REFUSED = -32000  # a JSON-RPC server error: this server does not serve (another one holds the vault)
QUIET_S = 0.3  # s without calls after which a client has paused (background work may start: calls_paused)
# s between two looks for that pause: each look takes the interpreter from the thread answering the client
QUIET_POLL_S = 0.05
# s a line waits, once a stop signal came, for a client that takes none of its bytes: the process is
# leaving, and a client that stopped reading would otherwise hold its exit until the calls' bound
STOPPED_WRITE_WAIT_S = 2.0
_front: StdioFront | None = None


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vaultwatch", "handshake")


def _code_roots() -> list[str]:
    """vaultwatch's packages and the installed SDK's (their files decide what the SDK answers)."""
    import importlib.util

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = [os.path.join(here, "mcp_server"), os.path.join(here, "core")]
    for name in ("mcp", "mcp_types", "pydantic", "pydantic_core", "wordllama"):  # wordllama: the semantic extra
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.origin:
                roots.append(spec.origin)  # its __init__.py: replaced by every install
    return roots


def signature(argv: Sequence[str]) -> str:
    """The key of the cached answers: what could change them."""
    digest = hashlib.sha256()
    env = {k: v for k, v in os.environ.items() if k.startswith("VAULTWATCH_")}
    digest.update(json.dumps({"argv": list(argv), "env": sorted(env.items())}).encode())
    for root in _code_roots():
        if os.path.isfile(root):
            st = os.stat(root)
            digest.update(f"{root}:{st.st_size}:{st.st_mtime_ns}\n".encode())
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "demo_vault"))
            for name in sorted(files):
                if name.endswith(".py"):
                    with contextlib.suppress(OSError):
                        st = os.stat(os.path.join(folder, name))
                        digest.update(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def _id_text(request_id: Any) -> str | None:
    """The id as the SDK writes it (int or string), or None for ids the front leaves to the SDK."""
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    return json.dumps(request_id, ensure_ascii=False)


def _plain_initialize(params: Any) -> str | None:
    """The requested protocol version of an initialize the SDK would accept as it is, else None."""
    if not isinstance(params, dict) or set(params) - {"protocolVersion", "capabilities", "clientInfo", "_meta"}:
        return None
    version = params.get("protocolVersion")
    if not isinstance(version, str) or not _plain_client(params.get("clientInfo"), params.get("capabilities")):
        return None
    return version


def _plain_client(info: Any, caps: Any) -> bool:
    """Whether a client's clientInfo and capabilities are as the SDK takes them unchanged."""
    return (
        isinstance(caps, dict)
        and all(isinstance(v, dict) for v in caps.values())
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


# what every 2026-07-28-era request carries in its `_meta` (no handshake: each request says who asks, at
# which protocol version); a request whose `_meta` holds anything else (a progress token, a log level) is
# the SDK's
_MODERN_VERSION = "io.modelcontextprotocol/protocolVersion"
_MODERN_CLIENT = "io.modelcontextprotocol/clientInfo"
_MODERN_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_MODERN_META = frozenset({_MODERN_VERSION, _MODERN_CLIENT, _MODERN_CAPABILITIES})


def _plain_modern(params: Any) -> tuple[str, dict[str, Any]] | None:
    """(protocol version, clientInfo) of a 2026-07-28-era request whose `_meta` holds only what every such
    request carries, at a version the installed SDK serves; None for any other request."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or set(meta) - _MODERN_META:
        return None
    from . import handshake  # noqa: PLC0415  (the standard library only)

    version, info = meta.get(_MODERN_VERSION), meta.get(_MODERN_CLIENT)
    if not isinstance(version, str) or version not in handshake.modern_versions():
        return None
    # (the SDK refuses a request without the capabilities key: INVALID_PARAMS, whatever else it holds)
    if (
        not isinstance(info, dict)
        or _MODERN_CAPABILITIES not in meta
        or not _plain_client(info, meta[_MODERN_CAPABILITIES])
    ):
        return None
    return version, info


def _enveloped(method: Any, params: Any) -> bool:
    """Whether a request opens a 2026-07-28-era connection, as the SDK decides it (mcp/server/runner.py:
    a request other than `initialize` whose `_meta` names a protocol version, well formed or not)."""
    if method == "initialize" or not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and _MODERN_VERSION in meta


_REPLY = '{"jsonrpc":"2.0","id":'
_decoder = json.JSONDecoder()


def _reply_id(line: str) -> str | None:
    """The id (as `_id_text`) of an SDK line that answers a request (a result or an error), else None;
    read from the line's start without parsing the rest (a listing's answer is big)."""
    if not line.startswith(_REPLY):
        return None
    try:
        value, end = _decoder.raw_decode(line, len(_REPLY))
    except ValueError:
        return None
    if not line.startswith((',"result":', ',"error":'), end):
        return None
    return _id_text(value)


def _result_text(line: str, id_text: str) -> str | None:
    """The result part of the SDK's reply line to `id_text`, or None when it is not a plain result."""
    prefix = '{"jsonrpc":"2.0","id":' + id_text + ',"result":'
    body = line.rstrip("\n")
    return body[len(prefix) : -1] if body.startswith(prefix) and body.endswith("}") else None


class StdioFront:
    """The stdio front (see module doc). One per process: `start`, then `run` with the built server."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.key = signature(argv)
        self.path = os.path.join(cache_dir(), self.key + ".json")
        self.answers: dict[str, dict[str, str]] = {"initialize": {}, "server/discover": {}, "tools/list": {}}
        with contextlib.suppress(OSError, ValueError, AttributeError):
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
            for method in self.answers:
                self.answers[method].update({k: v for k, v in data.get(method, {}).items() if isinstance(v, str)})
        self._in = os.dup(0)
        # written by the signal handler (`stop_on_signals`), read beside stdin by the reader
        self._wake_r, self._wake_w = os.pipe()
        self.stopped_by: int | None = None  # the signal that ended the session (stdin is read no more)
        self._out = os.dup(1)
        # a pipe or socket (never a terminal's: the shell shares it) is written without blocking, so a
        # line waits in poll, where a stop signal can end the wait (`_write_all`)
        self._nonblocking = _nonblocking_wire(self._out)
        # a line was given up after a stop signal while the client took nothing: the lines after it
        # are given up at once, or each would wait its own STOPPED_WRITE_WAIT_S and the exit with them
        self._given_up = False
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        self._out_lock = threading.Lock()
        self.parking: Any = None  # splice.LineParking, where the fast path parks JSON for the SDK's lines
        self.inline_writes = 0  # SDK lines written at once, on the event loop
        self.thread_writes = 0  # SDK lines finished by a thread (the pipe was full)
        self._route_lock = threading.Lock()
        self.pending: list[bytes | None] = []  # lines for the SDK, in order (None: stdin ended)
        self.version: str | None = None  # the protocol version this session negotiated
        self.swallow: dict[str, tuple[str, str, str]] = {}  # id -> (method, key, what the front sent)
        self.capture: dict[str, tuple[str, str]] = {}  # id -> (method, key): the SDK's answer fills the cache
        self.answered_early = 0  # answers the front sent itself
        self.before_sdk = 0  # of those, sent before the SDK was imported
        self._verify = 0
        # until the server knows it may serve (vault lock held, options parsed) an initialize waits;
        # then "serve" (answer it from handshake.py) or "refuse" (answer every request with an error)
        self.mode = "hold"
        self.tool_prefix = ""
        self.tool_list: Any = None  # toollist.ToolList: the shipped tools/list of this server's variant
        self.refusal = ""
        self.ended = threading.Event()  # stdin ended (a refusing front waits for it)
        self.calls: Any = None  # the server's EarlyCalls (set by `serve`)
        self.client_info: dict[str, Any] | None = None  # the clientInfo of the initialize the front answered
        # the connection's protocol era, "modern" or "handshake", fixed as the SDK fixes it: by the client's
        # first request. The SDK refuses a request of the other era (an enveloped call on a handshake
        # connection, an initialize on a 2026-07-28 one), so the front answers none either: else a client
        # that handshook as one agent would write as another, named in a call's envelope
        self.era: str | None = None
        # whether the SDK has been given a request of this connection: its first decides the SDK's era, so
        # a 2026-07-28 connection whose first request the front answers gives the SDK one in its place
        self._era_told = False
        self.silent: set[str] = set()  # ids of requests of the front's own whose SDK answers are dropped
        self.initialized = False  # the client said notifications/initialized
        self.owed: dict[str, int] = {}  # id -> requests of the client with that id the SDK has not answered
        self.owed_unknown = 0  # requests passed to the SDK whose answer the front cannot tell (an odd id)
        self.client_logs = False  # the client set a log level: the SDK's path logs each call to it
        self.after_sdk = 0  # answers the front sent itself once the SDK ran
        self.need_sdk = threading.Event()  # a request waits for the SDK (or stdin ended)
        self._sdk_answered_at = 0.0  # time.monotonic() when the SDK last answered a request the client owed
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue | None = None
        threading.Thread(target=self._read, name="vaultwatch-stdio-front", daemon=True).start()

    # -- the wire ---------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        with self._out_lock:
            self._write_all(memoryview(data))

    def _write_all(self, view: memoryview) -> None:
        """Write all of `view`, waiting for room (the caller holds the lock). Once a stop signal came,
        the rest of a line the client takes nothing of for STOPPED_WRITE_WAIT_S is dropped."""
        waiting = None
        since = time.monotonic()  # the client last took bytes (or the wait began)
        while view:
            try:
                n = os.write(self._out, view)
            except BlockingIOError:
                if waiting is None:
                    waiting = select.poll()  # not select(): no limit on the descriptor's number
                    waiting.register(self._out, select.POLLOUT)
                if waiting.poll(100):
                    continue
                if self.stopped_by is not None and (self._given_up or time.monotonic() - since >= STOPPED_WRITE_WAIT_S):
                    self._given_up = True
                    return  # the process is leaving and the client reads no more
                continue
            except OSError:
                return  # the client went away; stdin's end stops the server
            view = view[n:]
            since = time.monotonic()
            self._given_up = False  # it reads again

    def _write_now(self, data: bytes) -> tuple[memoryview, bool] | None:
        """Write what the pipe takes now without waiting: None when all of `data` went out, else the rest
        and whether the lock is held for it (then whoever writes the rest releases it)."""
        if not self._nonblocking or not self._out_lock.acquire(blocking=False):
            return memoryview(data), False
        view = memoryview(data)
        try:
            while view:
                try:
                    n = os.write(self._out, view)
                except BlockingIOError:
                    break
                except OSError:
                    view = view[:0]  # the client went away; stdin's end stops the server
                    break
                view = view[n:]
        except BaseException:
            self._out_lock.release()
            raise
        if not view:
            self._out_lock.release()
            self.inline_writes += 1
            return None
        return view, True

    def _write_rest(self, view: memoryview, held: bool) -> None:
        """Finish a line `_write_now` began (on a thread: this may wait for the client to read)."""
        self.thread_writes += 1
        if not held:
            self._write(bytes(view))
            return
        try:
            self._write_all(view)
        finally:
            self._out_lock.release()

    def _send_result(self, id_text: str, result: str | bytes) -> None:
        """Send an answer of the front's own (counted, and whether the SDK was imported by then); `result`
        is the result's JSON, as text or UTF-8."""
        head = ('{"jsonrpc":"2.0","id":' + id_text + ',"result":').encode()
        self._write(b"".join((head, result if isinstance(result, bytes) else result.encode(), b"}\n")))
        self.answered_early += 1
        if self._loop is not None:
            self.after_sdk += 1
        if "mcp" not in sys.modules and "mcp_types" not in sys.modules:
            self.before_sdk += 1

    def _read(self) -> None:
        # the line being read, as the chunks it came in: each chunk is looked through once (a
        # line kept in one buffer was split anew at every chunk, quadratic in a long line)
        pieces: list[bytes] = []
        held = 0
        dropping = False  # a line over MAX_LINE_BYTES: its head and tail kept, the rest skipped
        ready = select.poll()
        ready.register(self._in, select.POLLIN)
        ready.register(self._wake_r, select.POLLIN)
        while True:
            try:
                woken = any(fd == self._wake_r for fd, _ in ready.poll())
            except OSError:
                woken = False
            if woken:  # a stop signal: what the client sends from now on is not taken, a line begun included
                import signal  # noqa: PLC0415  (imported by stop_on_signals)

                name = signal.Signals(self.stopped_by or signal.SIGTERM).name
                print(f"vaultwatch: stopping on {name}", file=sys.stderr, flush=True)
                self._route(None)
                self.need_sdk.set()
                return
            try:
                chunk = os.read(self._in, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                if dropping:
                    self._too_long(pieces)
                elif (rest := b"".join(pieces)).strip():
                    self._route(rest)
                self._route(None)
                self.need_sdk.set()
                return
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                pieces.append(chunk[start:end])
                if dropping:
                    self._too_long(pieces)
                elif (line := b"".join(pieces)).strip():
                    self._route(line)
                pieces, held, dropping = [], 0, False
                start = end + 1
            if start < len(chunk):
                pieces.append(chunk[start:])
                held += len(chunk) - start
                if held > MAX_LINE_BYTES:
                    dropping = True
                    pieces = [pieces[0], pieces[-1]] if len(pieces) > 1 else pieces

    def _too_long(self, pieces: list[bytes]) -> None:
        """Answer a message over MAX_LINE_BYTES, which was never read whole, with the id found at
        its head or its tail (where clients put it), else none."""
        head, tail = pieces[0][:256], b"".join(pieces[-3:])[-256:]
        found = _HEAD_ID.match(head) or _TAIL_ID.search(tail)
        mib = MAX_LINE_BYTES // 2**20
        error = {
            "code": -32600,
            "message": f"request too large: over vaultwatch's {mib} MiB request limit; the write tool takes notes "
            "up to 10 MiB: split the content into several notes",
        }
        id_json = found.group(1).decode() if found else "null"
        self._write(b'{"jsonrpc":"2.0","id":' + id_json.encode() + b',"error":' + json.dumps(error).encode() + b"}\n")

    def _route(self, raw: bytes | None) -> None:
        with self._route_lock:
            if self.mode == "refuse":
                self._refuse(raw)
            elif self._loop is None:
                self._early(raw)
            else:
                assert self._queue is not None
                line = self._answer_line(raw) if self.calls is not None else raw
                if line is not _TAKEN:
                    self._loop.call_soon_threadsafe(self._queue.put_nowait, line)

    # -- before the SDK ---------------------------------------------------------------
    def _early(self, raw: bytes | None) -> None:
        """A client line before the SDK: answered now when the front can, in any case kept for the SDK.
        While the front holds (before `serve`), lines it might answer wait in `pending` for `serve`."""
        if self.mode == "hold":
            self.pending.append(raw)
            return
        line = self._answer_line(raw)
        if line is not _TAKEN:
            self.pending.append(line)

    def _owe(self, id_text: str | None) -> None:
        """A request goes to the SDK: the front answers no call until the SDK has answered it (the caller
        holds the route lock)."""
        if id_text is None:
            self.owed_unknown += 1
        else:
            self.owed[id_text] = self.owed.get(id_text, 0) + 1
        self.need_sdk.set()

    def _settle(self, id_text: str | None) -> None:
        """The SDK answered request `id_text` (or its handler ended cancelled, unanswered)."""
        if id_text is None:
            return
        with self._route_lock:
            self._sdk_answered_at = time.monotonic()
            left = self.owed.get(id_text, 0) - 1
            if left > 0:
                self.owed[id_text] = left
            else:
                self.owed.pop(id_text, None)

    def _answer_line(self, raw: bytes | None) -> bytes | None:
        """Answer `raw` when the front can; returns the line the SDK gets in its place (see module doc)."""
        if raw is None:
            return None  # stdin ended
        message = None
        with contextlib.suppress(ValueError, RecursionError):
            message = json.loads(raw)
        if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0"):
            if self.mode == "serve":
                self._owe(None)  # not a message the front understands: the SDK answers it, after anything before it
            return raw
        id_text = _id_text(message.get("id"))
        method, params = message.get("method"), message.get("params")
        if self.era is None and "method" in message and "id" in message:
            self.era = "modern" if _enveloped(method, params) else "handshake"
        answered = False
        modern = (
            _plain_modern(params) if self.era == "modern" and id_text is not None and isinstance(params, dict) else None
        )
        if modern is not None:
            assert id_text is not None and isinstance(params, dict)
            raw, answered = self._answer_modern(raw, id_text, method, params, *modern)
            if raw is _TAKEN:
                return _TAKEN
        elif method == "initialize":
            first = id_text is not None and self.era == "handshake" and self.version is None and self._loop is None
            requested = _plain_initialize(params) if first else None
            if requested is not None and id_text is not None:
                answered = self._answer_initialize(id_text, requested)
                if answered and isinstance(params, dict):
                    self.client_info = params["clientInfo"]
            else:
                # another handshake: the SDK's session may now name another client (its calls are
                # attributed to the latest), or keep the first; the front cannot tell which, so it
                # takes no more calls on the first one's name
                self.client_info = None
        elif method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            cancelled = _id_text(params.get("requestId")) if isinstance(params, dict) else None
            if cancelled is not None and self.calls is not None and self.calls.cancel(cancelled):
                return _TAKEN  # a call the front took: the SDK never heard of it
        elif method == "logging/setLevel":
            self.client_logs = True
        elif method == "tools/call" and id_text is not None and self._may_answer_call():
            # loaded with the calls' own modules by now; the front's module stays on the standard library
            from vaultwatch.core.review.agentrules import agent_label  # noqa: PLC0415

            info = self.client_info or {}
            agent = agent_label(str(info.get("name")), info.get("version"))
            if self.calls.take(
                params, id_text, agent, self._send_result, lambda: self._give_back(raw, id_text), info.get("name")
            ):
                return _TAKEN
        elif method == "tools/list" and id_text is not None and params in (None, {}) and self._loop is None:
            cached = self._tools_list()
            if cached is not None and id_text not in self.swallow:
                self._send_result(id_text, cached)
                self._verify += 1  # the SDK answers it too, under an id of ours: compared, not sent
                verify_id = f"vaultwatch-front-verify-{self._verify}"
                self.swallow[json.dumps(verify_id)] = ("tools/list", self.version or "", cached)
                raw = json.dumps({"jsonrpc": "2.0", "id": verify_id, "method": "tools/list"}).encode()
                answered = True
            elif cached is None:
                self.capture[id_text] = ("tools/list", "")  # "": the version negotiated by then
        if "method" in message and "id" in message and not answered:
            self._owe(id_text)
        if "method" in message and "id" in message:
            self._era_told = True
        return raw

    def _answer_modern(
        self, raw: bytes, id_text: str, method: Any, params: dict[str, Any], version: str, info: dict[str, Any]
    ) -> tuple[bytes, bool]:
        """A 2026-07-28-era request (`_plain_modern`), which needs no handshake: `server/discover` from
        handshake.py (the cache's when it has none), a plain tools/list from the cache of the SDK's own
        answer, and the tool calls EarlyCalls takes, as in a handshake session. Returns the line the SDK
        gets in its place (_TAKEN: none) and whether the front answered it."""
        bare = set(params) == {"_meta"}
        if method == "server/discover" and bare and id_text not in self.swallow:
            from . import handshake  # noqa: PLC0415  (the standard library only)

            answer = handshake.discover_result(version, tool_prefix=self.tool_prefix)
            answer = answer or self.answers["server/discover"].get(version)
            if answer is None:
                self.capture[id_text] = ("server/discover", version)
                return raw, False
            self._send_result(id_text, answer)
            self.swallow[id_text] = ("server/discover", version, answer)  # the SDK answers it too: compared
            return raw, True
        if method == "tools/list" and bare and self._loop is None:
            cached = self.answers["tools/list"].get(version)
            if cached is None and self.tool_list is not None:
                cached = self.tool_list.result(version)
            if cached is None:
                self.capture[id_text] = ("tools/list", version)
                return raw, False
            if id_text in self.swallow:
                return raw, False
            self._send_result(id_text, cached)
            self._verify += 1  # the SDK answers it too, under an id of ours: compared, not sent
            verify_id = f"vaultwatch-front-verify-{self._verify}"
            self.swallow[json.dumps(verify_id)] = ("tools/list", version, cached)
            return json.dumps(
                {"jsonrpc": "2.0", "id": verify_id, "method": "tools/list", "params": params}
            ).encode(), True
        if method == "tools/call" and self._may_answer_modern_call():
            from vaultwatch.core.review.agentrules import agent_label  # noqa: PLC0415  (loaded with the calls)

            call = {k: v for k, v in params.items() if k != "_meta"}
            give_back = lambda: self._give_back(raw, id_text)  # noqa: E731
            if self.calls.take(
                call,
                id_text,
                agent_label(info["name"], info["version"]),
                self._send_result,
                give_back,
                info["name"],
                True,
            ):
                return (_TAKEN if self._era_told else self._opening(params["_meta"])), True
        return raw, False

    def _opening(self, meta: dict[str, Any]) -> bytes:
        """The request the SDK gets in place of a 2026-07-28 connection's first one, which the front
        answered: a discover with the same envelope (its answer is dropped), so the SDK serves the
        connection in that era, as it would have, and refuses a later initialize as it would have."""
        self._era_told = True
        opening_id = "vaultwatch-front-era"
        self.silent.add(json.dumps(opening_id))
        return json.dumps(
            {"jsonrpc": "2.0", "id": opening_id, "method": "server/discover", "params": {"_meta": meta}}
        ).encode()

    def _may_answer_modern_call(self) -> bool:
        """Whether a 2026-07-28-era tools/call may be answered by the front: as `_may_answer_call`, without
        a handshake (each such request says who asks)."""
        return (
            self.calls is not None
            and self.mode == "serve"
            and not self.owed
            and not self.owed_unknown
            and not self.client_logs
        )

    def _tools_list(self) -> str | None:
        """The tools/list result for this session's protocol version: the cached answer of the SDK, else
        the one shipped with the package (toollist.py); None when neither has one."""
        if not self.version:
            return None
        cached = self.answers["tools/list"].get(self.version)
        if cached is None and self.tool_list is not None:
            cached = self.tool_list.result(self.version)
        return cached

    def _may_answer_call(self) -> bool:
        """Whether a tools/call may be answered before the SDK (see module doc)."""
        return (
            self.calls is not None
            and self.mode == "serve"
            and self.initialized
            and self.client_info is not None
            and self.version is not None
            and not self.owed
            and not self.owed_unknown
            and not self.client_logs
        )

    def _give_back(self, raw: bytes, id_text: str) -> None:
        """A call the front took after all goes to the SDK (EarlyCalls could not write its answer)."""
        with self._route_lock:
            self._owe(id_text)
            if self._loop is None:
                self.pending.append(raw)
            else:
                assert self._queue is not None
                self._loop.call_soon_threadsafe(self._queue.put_nowait, raw)
        self.need_sdk.set()

    def wait_before_sdk(self, now: threading.Event | None = None) -> None:
        """Return when the SDK is wanted: a request the front cannot answer waits for it, or stdin ended,
        or `now` is set (a long first load began, during which the front answers nothing and the
        interpreter is free, and the front has no tools/list of its own: the client's first one would
        wait for the import after the load). The import holds the interpreter and keeps its memory
        for the process's life, so a session whose calls the front answers (listings, reads, searches
        by words, plain writes) never pays for it; the first call that needs it waits for it once."""
        if now is None:
            self.need_sdk.wait()
            return
        while not self.need_sdk.wait(QUIET_POLL_S):
            if now.is_set():
                return

    def stop(self, signum: int) -> None:
        """A stop signal came (`stop_on_signals`): read no more, and end the session as stdin's end
        does. Called from the signal handler, so it takes no lock: the reader does the rest."""
        if self.stopped_by is None:
            self.stopped_by = signum
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"\0")

    def hung_up(self) -> bool:
        """Whether stdin ended (or a stop signal came: `stopped_by`) before the SDK ran."""
        with self._route_lock:
            return self._loop is None and None in self.pending

    def owes_sdk(self) -> bool:
        """Whether a request of the client waits for the SDK's answer."""
        with self._route_lock:
            return bool(self.owed or self.owed_unknown)

    def wait_calls_paused(self, ready: Any, timeout: float) -> None:
        """Return once the index is loaded (`ready(seconds)`), the client has paused its calls the
        front answers for QUIET_S and the SDK owes it no answer, or `timeout` seconds passed: for
        background work that would take the interpreter and the cores from a client paging right
        after spawn (the first full-text build)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready(0.01) and self.calls_paused():
                return
            time.sleep(QUIET_POLL_S)

    def calls_paused(self) -> bool:
        """Whether the client has paused its calls for QUIET_S: the front has answered none in
        that time and has none to answer, and the SDK owes it no answer and sent none in that time
        (no burst of calls under way)."""
        return (
            (self.calls is None or self.calls.quiet(QUIET_S))
            and not self.owed
            and time.monotonic() - self._sdk_answered_at >= QUIET_S
        )

    def _answer_initialize(self, id_text: str, requested: str) -> bool:
        """Answer an initialize now: handshake.py's answer (the cache's when it has none), else leave it
        to the SDK (False)."""
        from . import handshake

        answer = handshake.initialize_result(requested, tool_prefix=self.tool_prefix) or self.answers["initialize"].get(
            requested
        )
        if answer is None:
            self.capture[id_text] = ("initialize", requested)
            return False
        self._send_result(id_text, answer)
        self.version = json.loads(answer).get("protocolVersion")
        self.swallow[id_text] = ("initialize", requested, answer)
        return True

    def serve(self, *, tool_prefix: str = "", calls: Any = None, tool_list: Any = None) -> None:
        """The server may serve (it holds the vault's lock; `tool_prefix` is the option): a waiting
        initialize is answered now, a later one at once; `calls` (earlycalls.EarlyCalls) answers
        the tool calls it can before the SDK runs; `tool_list` (toollist.ToolList, None: there is
        none for this server) answers a plain tools/list the cache cannot."""
        with self._route_lock:
            if self.mode != "hold":
                return
            self.mode, self.tool_prefix, self.calls, self.tool_list = "serve", tool_prefix, calls, tool_list
            if self._loop is None:
                held, self.pending = self.pending, []
                for raw in held:
                    line = self._answer_line(raw)
                    if line is not _TAKEN:
                        self.pending.append(line)

    def refuse(self, message: str) -> None:
        """This server must not serve (another one holds the vault): every request the client sent or
        sends is answered with an error saying `message`, until stdin ends (`ended`)."""
        with self._route_lock:
            self.mode, self.refusal = "refuse", message
            pending, self.pending = self.pending, []
            for raw in pending:
                self._refuse(raw)

    def _refuse(self, raw: bytes | None) -> None:
        if raw is None:
            self.ended.set()
            return
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if isinstance(message, dict) and "method" in message and "id" in message:
            error = {"code": REFUSED, "message": self.refusal}
            self._write(
                (
                    json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}, ensure_ascii=False) + "\n"
                ).encode()
            )

    # -- the SDK ----------------------------------------------------------------------
    async def run(self, server: Any) -> None:
        """Hand the session to the SDK server (mcp_server.sdk.run_stdio) until stdin ends."""
        import asyncio  # noqa: PLC0415

        from . import sdk, splice

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        # the server's fast path parks a listing's JSON here; `_Out` fills it into the line as it leaves
        self.parking = server.line_parking = splice.LineParking()
        with self._route_lock:
            if self.mode == "hold":  # run without serve(): nothing said the handshake may be answered early
                self.mode = "serve"
            for raw in self.pending:
                queue.put_nowait(raw)
            self.pending = []
            self._loop, self._queue = loop, queue
        server.middleware.insert(0, self._settled)
        try:
            await sdk.run_stdio(server, _Lines(self, queue), _Out(self))
        finally:
            if self.calls is not None:
                self.calls.ended()

    async def _settled(self, ctx: Any, call_next: Any) -> Any:
        """Server middleware (outermost): a request the client cancelled ends unanswered (the SDK writes
        nothing for it), so it waits for the SDK no more."""
        import asyncio  # noqa: PLC0415  (imported long before: `run`)

        try:
            return await call_next(ctx)
        except asyncio.CancelledError:
            self._settle(_id_text(ctx.request_id))
            raise

    def _seen(self, raw: bytes) -> None:
        """A client line on its way to the SDK: note what its answer should fill in the cache."""
        if b'"initialize"' not in raw and b'"tools/list"' not in raw:
            return
        with contextlib.suppress(ValueError):
            message = json.loads(raw)
            if not isinstance(message, dict):
                return
            id_text = _id_text(message.get("id"))
            method, params = message.get("method"), message.get("params")
            if id_text is None or id_text in self.swallow:
                return
            modern = _plain_modern(params)
            if method == "initialize" and self.version is None and _plain_initialize(params):
                self.capture[id_text] = ("initialize", _plain_initialize(params) or "")
            elif method == "tools/list" and params in (None, {}) and self.version not in self.answers["tools/list"]:
                self.capture[id_text] = ("tools/list", "")
            elif (
                method == "tools/list"
                and modern is not None
                and isinstance(params, dict)
                and set(params) == {"_meta"}
                and modern[0] not in self.answers["tools/list"]
            ):
                self.capture[id_text] = ("tools/list", modern[0])

    def _outgoing(self, line: str) -> bool:
        """An SDK reply on its way to the client: False when it must not be sent (the front sent it)."""
        if self.owed:
            self._settle(_reply_id(line))
        if not (self.swallow or self.capture or self.silent):
            return True
        try:
            message = json.loads(line)
        except ValueError:
            return True
        id_text = _id_text(message.get("id")) if isinstance(message, dict) and "method" not in message else None
        if id_text is None:
            return True
        if id_text in self.silent:
            self.silent.discard(id_text)
            return False
        if id_text in self.swallow:
            method, key, sent = self.swallow.pop(id_text)
            got = _result_text(line, id_text)
            if got != sent:
                log.warning(
                    "the SDK's %s answer differs from the cached one the client got; the cache is updated", method
                )
                self._store(method, key, got)
            return False
        if id_text in self.capture:
            method, key = self.capture.pop(id_text)
            got = _result_text(line, id_text)
            if got is not None and method == "initialize":
                with contextlib.suppress(ValueError, AttributeError):
                    self.version = json.loads(got).get("protocolVersion")
            key = key or self.version or ""
            if key:
                self._store(method, key, got)
        return True

    def _store(self, method: str, key: str, result: str | None) -> None:
        if result is None:
            self.answers[method].pop(key, None)
        elif self.answers[method].get(key) == result:
            return
        else:
            self.answers[method][key] = result
        try:
            folder = cache_dir()
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as fh:
                json.dump(self.answers, fh, ensure_ascii=False)
            os.replace(tmp, self.path)
            kept = sorted(
                (e for e in os.scandir(folder) if e.name.endswith(".json")),
                key=lambda e: e.stat().st_mtime,
                reverse=True,
            )
            for old in kept[CACHE_FILES_KEPT:]:
                with contextlib.suppress(OSError):
                    os.unlink(old.path)
        except OSError as exc:
            log.warning("cannot keep the handshake cache in %s: %s", cache_dir(), exc)


class _Lines:
    """The client's lines as the SDK's stdio transport reads them (`async for line in stdin`)."""

    def __init__(self, front: StdioFront, queue: asyncio.Queue) -> None:
        self.front, self.queue = front, queue

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        raw = await self.queue.get()
        if raw is None:
            raise StopAsyncIteration
        self.front._seen(raw)
        return raw.decode("utf-8", "replace")


class _Out:
    """Where the SDK's stdio transport writes its lines (`await stdout.write(...)`, `flush()`)."""

    def __init__(self, front: StdioFront) -> None:
        self.front = front

    async def write(self, text: str) -> None:
        front = self.front
        if not front._outgoing(text):
            return
        data = text.encode()
        if front.parking is not None:
            data = front.parking.fill(data)
        rest = front._write_now(data)
        if rest is not None:
            import asyncio  # noqa: PLC0415  (imported long before: `run`)

            await asyncio.to_thread(front._write_rest, *rest)

    async def flush(self) -> None:
        return None


def _nonblocking_wire(fd: int) -> bool:
    """Make `fd` non-blocking when it is a pipe or a socket (never a terminal's: the shell shares it);
    whether it now is."""
    try:
        if not stat.S_ISFIFO(mode := os.fstat(fd).st_mode) and not stat.S_ISSOCK(mode):
            return False
        os.set_blocking(fd, False)
    except OSError:
        return False
    return True


STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")  # each ends the session as the client's closed stdin does


def stop_on_signals(front: StdioFront) -> None:
    """Have SIGTERM, SIGINT and SIGHUP end `front`'s session in order (see module doc). A signal
    this process was started with ignored (nohup) or handled by someone else is left as it is.
    Main thread only (as `signal.signal`); the handler is Python's, so it runs there too."""
    import signal

    owner = os.getpid()
    caught: list[signal.Signals] = []

    def on_signal(signum: int, _frame: Any) -> None:
        if os.getpid() != owner:  # a worker process forked with this handler: the default action ends it
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        for sig in caught:  # the next one ends the process at once, whatever it is doing by then
            signal.signal(sig, signal.SIG_DFL)
        front.stop(signum)

    for name in STOP_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(sig, on_signal)
            caught.append(sig)


def start(argv: Sequence[str]) -> StdioFront:
    """The process's stdio front, started now (once), with its stop signals when this is the main thread."""
    global _front
    if _front is None:
        _front = StdioFront(argv)
        if threading.current_thread() is threading.main_thread():
            stop_on_signals(_front)
    return _front


def current() -> StdioFront | None:
    return _front
