"""Pre-serialised JSON on the socket's HTTP wire: big tool results skip the SDK's serialisers.

A listing of 10,000 rows is JSON text already (core.serialize.RowCache keeps each row's
text), yet the SDK would turn it into objects and dump them again on the way out, and a
client waits for every pass. Instead, while a read tool is served for an HTTP request,
`put(json_bytes)` parks the finished JSON and returns a placeholder string (a random token)
that the tool puts where the value belongs; the SDK carries the small placeholder through
its pipeline; `Splice`, the ASGI layer under the transport, swaps the placeholder for the
parked bytes as the response leaves, and fixes its Content-Length.

On stdio the same happens a line at a time: the stdio front writes each of the SDK's lines
itself, so the server's fast path parks a stdio call's JSON in the front's `LineParking`, whose
placeholders (`Parked`: a str that carries its JSON) live exactly as long as the result that holds
them, and the front fills them as the line leaves (`LineParking.fill`).

Placeholders exist only for requests that pass through `Splice` or a `LineParking` (the fast
path checks the request's ASGI scope, or that its server serves stdio); everywhere else
(in-memory clients) `active()` is False and tools build ordinary results. Tokens start with a
128-bit secret drawn once per process, so nothing a note contains can collide with one; a count
makes each unique (a token of its own from the system's randomness cost a page a system call that
lets go of the interpreter, and a busy thread beside it, the full-text build, could keep it).
"""

from __future__ import annotations

import contextvars
import itertools
import re
import secrets
import threading
import weakref
from typing import Any

from . import sdk

SCOPE_KEY = "vaultwatch.splice"
_PREFIX = "vaultwatch-splice:"

_SECRET = secrets.token_hex(16)
_COUNT = itertools.count()
_TOKEN = re.compile(rb'"' + _PREFIX.encode() + rb'[0-9a-f]{48}"')


def _token() -> str:
    return f"{_PREFIX}{_SECRET}{next(_COUNT) & 0xFFFFFFFFFFFFFFFF:016x}"


class Parked(str):
    """A placeholder (the token) that carries the JSON it stands for: `parts`, to be joined."""

    parts: tuple[bytes, ...]


class LineParking:
    """Parked JSON for a transport that writes whole lines itself (the stdio front).

    The registry holds each placeholder weakly: the result that carries it keeps it alive until its
    line is written, so a call whose answer is never written (cancelled) leaves nothing behind."""

    def __init__(self) -> None:
        self._live: weakref.WeakValueDictionary[bytes, Parked] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()  # tools park from worker threads; the front fills on the event loop
        self.filled = 0  # placeholders filled so far (diagnostics and tests)

    def park(self, parts: tuple[bytes, ...]) -> Parked:
        token = _token()
        parked = Parked(token)
        parked.parts = parts
        with self._lock:
            self._live[b'"' + token.encode() + b'"'] = parked
        return parked

    def fill(self, line: bytes) -> bytes:
        """`line` with every live placeholder (quotes included) replaced by its JSON."""
        if not self._live:
            return line
        parts: list[bytes] = []
        start = 0
        with self._lock:
            for match in _TOKEN.finditer(line):
                parked = self._live.pop(match.group(), None)
                if parked is None:
                    continue  # a string that only looks like one (note text, escaped): left as it is
                parts.append(line[start : match.start()])
                parts.extend(parked.parts)
                start = match.end()
                self.filled += 1
        if not parts:
            return line
        parts.append(line[start:])
        return b"".join(parts)


_values: contextvars.ContextVar[dict[bytes, tuple[bytes, ...]] | LineParking | None] = contextvars.ContextVar(
    "vaultwatch_splice", default=None
)


def scope_values(request: Any) -> dict[bytes, tuple[bytes, ...]] | None:
    """The parking place `Splice` made for this HTTP request, or None (no Splice on its way out)."""
    scope = sdk.request_scope(request)
    values = scope.get(SCOPE_KEY) if scope is not None else None
    return values if isinstance(values, dict) else None


def enable(values: dict[bytes, tuple[bytes, ...]] | LineParking | None) -> contextvars.Token:
    """Let tools called in this context park JSON in `values` (None: they may not); pass the
    returned token to `reset`."""
    return _values.set(values)


def reset(token: contextvars.Token) -> None:
    """Undo `enable`."""
    _values.reset(token)


def active() -> bool:
    """Whether a tool running now may use `put` (its result leaves through `Splice`)."""
    return _values.get() is not None


def put(*json_parts: bytes) -> str:
    """Park one finished JSON value (the concatenation of `json_parts`, UTF-8); returns the
    placeholder string to put where the value belongs. Only call when `active()`."""
    values = _values.get()
    if values is None:
        raise RuntimeError("splice.put outside a spliceable request")
    if isinstance(values, LineParking):
        return values.park(json_parts)
    token = _token()
    values[b'"' + token.encode() + b'"'] = json_parts
    return token


def fill(body: bytes, values: dict[bytes, tuple[bytes, ...]]) -> bytes:
    """`body` with every parked placeholder (quotes included) replaced by its JSON; the used ones are dropped."""
    found: list[tuple[int, bytes]] = []
    for key in list(values):
        at = body.find(key)
        if at >= 0:
            found.append((at, key))
    if not found:
        return body
    found.sort()
    parts, start = [], 0
    for at, key in found:
        parts.append(body[start:at])
        parts.extend(values.pop(key))
        start = at + len(key)
    parts.append(body[start:])
    return b"".join(parts)


class Splice:
    """ASGI wrapper: give each POST a parking place and fill the placeholders in its response."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.filled = 0  # placeholders filled so far (diagnostics and tests)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        values: dict[bytes, tuple[bytes, ...]] = {}
        scope[SCOPE_KEY] = values
        held: list[dict] = []  # a sized response's start and body chunks, until its last chunk

        async def send_filled(message: dict) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                if any(k.lower() == b"content-length" for k, _ in message.get("headers") or ()):
                    held.append(message)  # its length is fixed once the body is filled
                    return
                return await send(message)
            if kind != "http.response.body":
                return await send(message)
            if not held:  # streamed (SSE): each event is one chunk
                if values and message.get("body"):
                    message = {**message, "body": self._fill(message["body"], values)}
                return await send(message)
            held.append(message)
            if message.get("more_body", False):
                return
            start, chunks = held[0], held[1:]
            held.clear()
            body = b"".join(c.get("body", b"") for c in chunks)
            if values:
                body = self._fill(body, values)
            headers = [(k, v) for k, v in start.get("headers") or () if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body, "more_body": False})

        try:
            await self.app(scope, receive, send_filled)
        finally:
            values.clear()
        if held:  # a start with no last body chunk: pass on what there is
            for message in held:
                await send(message)

    def _fill(self, body: bytes, values: dict[bytes, tuple[bytes, ...]]) -> bytes:
        before = len(values)
        body = fill(body, values)
        self.filled += before - len(values)
        return body
