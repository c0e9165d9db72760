"""One JSON body per call, or a stream when the call needs one (the socket's HTTP wire).

The socket serves the SDK's Streamable HTTP app in SSE mode, so a call can carry notifications
before its answer: progress for a tools/call that sent a `progressToken`, the events of a
`subscriptions/listen` stream. Most calls need none of that, and one JSON body is what the
bridge, splice.py and plain HTTP clients handle fastest, so `JsonUnlessStreaming`, the ASGI
layer in front of the app, turns the SSE answer of every other request into one
`application/json` body (its JSON-RPC response; notifications of such a call have nowhere to go
and are dropped, as the SDK's JSON mode drops them). A client that accepts only
`application/json` always gets JSON.

A request is streamed when it is a JSON-RPC request whose `params._meta.progressToken` is set,
whose method is `subscriptions/listen`, or that calls a tool whose change may need the person's
approval (with no TUI open, the server may ask the person through the client with an
`elicitation/create` request, which travels on the call's stream), and the client accepts
`text/event-stream`.
"""

from __future__ import annotations

import json
from typing import Any

from .elicit import gated
from .requestguard import replaying

STREAMED_METHODS = frozenset({"subscriptions/listen"})
_SSE = b"text/event-stream"


def wants_stream(body: bytes, tool_prefix: str = "") -> bool:
    """Whether the JSON-RPC message in `body` asks for notifications before its answer (see module doc);
    `tool_prefix`: the server's `--tool-prefix`, which starts its write tools' names."""
    if b"progressToken" not in body and b"subscriptions/listen" not in body and b"tools/call" not in body:
        return False
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if not isinstance(doc, dict) or doc.get("id") is None:
        return False
    if doc.get("method") in STREAMED_METHODS:
        return True
    params = doc.get("params")
    if doc.get("method") == "tools/call" and isinstance(params, dict) and gated(params.get("name"), tool_prefix):
        return True
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("progressToken") is not None


def _response_of(events: bytes) -> bytes | None:
    """The data of the SSE event in `events` that is a JSON-RPC response (result or error), or None."""
    for block in events.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
        if not data:
            continue
        payload = b"\n".join(data)
        head = payload[:100]
        if head.startswith(b'{"jsonrpc":"2.0","id":') and b'"method"' not in head:
            return payload  # how the SDK dumps a response: no need to parse a big answer
        try:
            doc = json.loads(payload)
        except ValueError:
            continue
        if isinstance(doc, dict) and ("result" in doc or "error" in doc) and "method" not in doc:
            return payload
    return None


class JsonUnlessStreaming:
    """ASGI wrapper (see module doc): SSE only for the requests that need a stream."""

    def __init__(self, app: Any, tool_prefix: str = "") -> None:
        self.app = app
        self.tool_prefix = tool_prefix
        self.streamed = 0  # requests answered as a stream (diagnostics and tests)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        messages: list[dict] = []
        body = bytearray()
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        receive_again = replaying(bytes(body), messages, receive)

        headers = list(scope.get("headers") or ())
        accept = b",".join(v for k, v in headers if k.lower() == b"accept").lower()
        if _SSE in accept and wants_stream(bytes(body), self.tool_prefix):
            self.streamed += 1
            return await self.app(scope, receive_again, send)
        if _SSE not in accept:  # the SDK's SSE mode wants both; this client gets JSON either way
            headers = [(k, v) for k, v in headers if k.lower() != b"accept"]
            headers.append((b"accept", (accept + b", " if accept else b"") + b"application/json, text/event-stream"))
            scope = {**scope, "headers": headers}
        await self.app(scope, receive_again, _Collapse(send))


class _Collapse:
    """An ASGI `send` that turns an SSE answer into one JSON body; anything else passes through."""

    def __init__(self, send: Any) -> None:
        self.send = send
        self.start: dict | None = None
        self.buffer = bytearray()
        self.done = False

    async def __call__(self, message: dict) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            ctype = next((v for k, v in message.get("headers") or () if k.lower() == b"content-type"), b"")
            if ctype.lower().startswith(_SSE) and message.get("status", 200) == 200:
                self.start = message
                return
            return await self.send(message)
        if kind != "http.response.body" or self.start is None:
            return await self.send(message)
        if self.done:
            return
        self.buffer += message.get("body", b"")
        answer = _response_of(bytes(self.buffer)) if self.buffer.endswith((b"\n\n", b"\r\n\r\n")) else None
        if answer is None and message.get("more_body", False):
            return
        self.done = True
        if answer is None:  # the stream ended without an answer: as the SDK's JSON mode says it
            answer = (
                b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,'
                b'"message":"Session terminated before the request completed"}}'
            )
            status = 500
        else:
            status = 200
        drop = {b"content-type", b"content-length", b"cache-control", b"connection", b"x-accel-buffering"}
        out = [(k, v) for k, v in self.start.get("headers") or () if k.lower() not in drop]
        out += [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
        await self.send({"type": "http.response.start", "status": status, "headers": out})
        await self.send({"type": "http.response.body", "body": answer, "more_body": False})
