"""Truthful answers to requests the SDK would refuse mutely.

ASGI wrapper in front of the Streamable HTTP app:

- A POST body over MAX_REQUEST_BYTES is refused with HTTP 413 whose body is a JSON-RPC error
  naming vaultwatch's own limits (the request limit and the write tool's content cap), not
  the SDK's bare "Request body too large". The limit sits above what `write` accepts (its
  10 MiB cap, JSON-escaped), so a write the tool documents is never cut off by the transport:
  an oversize note gets the tool's own refusal.
- A JSON-RPC request whose `id` is neither a string nor a number (an object, a list, a
  boolean) is answered with an Invalid Request error (id null), as JSON-RPC 2.0 says, instead
  of HTTP 202 and no answer at all.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vaultwatch.core.edit.writes import MAX_WRITE_BYTES

# content up to MAX_WRITE_BYTES, JSON-escaped (\uXXXX for non-ASCII can triple it), plus the envelope
MAX_REQUEST_BYTES = 4 * MAX_WRITE_BYTES


_SUSPECT_ID = re.compile(rb'"id"\s*:\s*[\[{tf]')


def _error(message: str, status: int, send_id: Any = None) -> tuple[int, bytes]:
    body = {"jsonrpc": "2.0", "id": send_id, "error": {"code": -32600, "message": message}}
    return status, json.dumps(body).encode()


def _bad_id(doc: Any) -> bool:
    items = doc if isinstance(doc, list) else [doc]
    for item in items:
        if isinstance(item, dict) and "id" in item and "method" in item:
            rid = item["id"]
            if isinstance(rid, bool) or not isinstance(rid, (str, int, float)) and rid is not None:
                return True
    return False


class RequestGuard:
    """See the module doc. Wraps the app the SDK builds (created with a larger body limit)."""

    def __init__(self, app: Any, limit: int = MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        declared = next((v for k, v in scope.get("headers") or () if k.lower() == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await self._answer(send, *self._too_large(int(declared)))
        body = bytearray()
        messages: list[dict] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.limit:
                return await self._answer(send, *self._too_large(len(body), at_least=True))
            if not message.get("more_body", False):
                break
        if _SUSPECT_ID.search(body):  # an unescaped "id" key before an object, list or boolean
            try:
                doc = json.loads(body)
            except (ValueError, RecursionError):
                doc = None  # the SDK answers malformed JSON itself
            if _bad_id(doc):
                return await self._answer(
                    send,
                    *_error(
                        "Invalid Request: a JSON-RPC request id must be a string or a number (or the request a "
                        "notification without an id)",
                        400,
                    ),
                )
        return await self.app(scope, replaying(bytes(body), messages, receive), send)

    def _too_large(self, size: int, at_least: bool = False) -> tuple[int, bytes]:
        mib = self.limit // 2**20
        return _error(
            f"request too large: {'over ' if at_least else ''}{size:,} bytes, over vaultwatch's "
            f"{mib} MiB request limit; the write tool takes notes up to {MAX_WRITE_BYTES // 2**20} MiB: "
            "split the content into several notes",
            413,
        )

    @staticmethod
    async def _answer(send: Any, status: int, body: bytes) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


def replaying(body: bytes, messages: list[dict], receive: Any) -> Any:
    """An ASGI `receive` that hands the app the request body already read (as one message), then
    any non-body message read after it (a disconnect), then goes on with the real `receive`."""
    replay = [{"type": "http.request", "body": body, "more_body": False}]
    if messages and messages[-1]["type"] != "http.request":
        replay.append(messages[-1])

    async def receive_again() -> dict:
        if replay:
            return replay.pop(0)
        return await receive()

    return receive_again
