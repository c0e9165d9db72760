"""The bridge's HTTP client: HTTP/1.1 over the server's Unix socket, on the standard library.

`vaultwatch bridge` is spawned by MCP clients, which wait for its first answer, so it imports
neither the SDK nor an HTTP library (httpx2 alone took ~0.1 s to import). It needs only a little
of HTTP: one request per connection (`Connection: close`; a refused connect then proves the
request was never sent), a body read whole or line by line (an SSE stream), Content-Length,
chunked or read-to-close bodies. The surface is the part of httpx's the bridge used:
`AsyncClient(path).post/stream/delete/aclose`, `Response.status_code/headers/json/aread/aiter_lines`,
and the errors `HTTPError` > `ConnectError` (nothing was sent) / `TransportError` (cut off after).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 300.0
_LINE_END = re.compile(r"\r\n|\n|\r")


class HTTPError(Exception):
    """Any failure to get an answer."""


class ConnectError(HTTPError):
    """The connection could not be made: the request was never sent."""


class ConnectTimeout(ConnectError):
    """The connection was not made in time: the request was never sent."""


class TransportError(HTTPError):
    """The connection broke (or timed out, or spoke no HTTP) after the request may have been sent."""


class UnsendableRequest(HTTPError, ValueError):
    """A header or the path holds what HTTP cannot carry (a line break among it): nothing was sent."""


# RFC 9110's field name (a token) and field value (visible ASCII, space, tab; what this client
# writes is ASCII). A line break in either would end the header early and let the rest of the
# value be read as headers, or as a request of its own, by the server.
_FIELD_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FIELD_VALUE = re.compile(r"[\x20-\x7e\t]*")
_TARGET = re.compile(r"[\x21-\x7e]*")


def _check_sendable(method: str, path: str, host: str, headers: dict[str, str]) -> None:
    if not _FIELD_NAME.fullmatch(method) or not _TARGET.fullmatch(path) or not _FIELD_VALUE.fullmatch(host):
        raise UnsendableRequest(f"the request line cannot carry {method!r} {path!r}")
    for name, value in headers.items():
        if not _FIELD_NAME.fullmatch(name) or not _FIELD_VALUE.fullmatch(value):
            raise UnsendableRequest(f"an HTTP header cannot carry {name!r}: {value[:80]!r}")


class Response:
    """An answer: status and headers read; the body read on demand (`aread`, `aiter_lines`)."""

    def __init__(
        self, status_code: int, headers: dict[str, str], reader: asyncio.StreamReader, read_timeout: float | None
    ) -> None:
        self.status_code = status_code
        self.headers = headers  # names in lower case
        self._reader = reader
        self._timeout = read_timeout
        self._content: bytes | None = None
        length = headers.get("content-length")
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self._left = int(length) if length is not None and length.strip().isdigit() and not self._chunked else None
        self._done = status_code in (204, 304) or self._left == 0

    async def _read(self, op: Any) -> bytes:
        try:
            return await asyncio.wait_for(op, self._timeout)
        except TimeoutError:
            raise TransportError("timed out reading vaultwatch's answer") from None
        except asyncio.IncompleteReadError:
            raise TransportError("vaultwatch closed the connection in the middle of its answer") from None
        except (OSError, ValueError, asyncio.LimitOverrunError) as exc:
            raise TransportError(str(exc) or type(exc).__name__) from None

    async def _chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives."""
        if self._content is not None:
            if self._content:
                yield self._content
            return
        while not self._done:
            if self._chunked:
                size_line = await self._read(self._reader.readline())
                if not size_line:
                    raise TransportError("vaultwatch closed the connection in the middle of its answer")
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise TransportError("vaultwatch sent a malformed chunk") from None
                if size == 0:
                    while (await self._read(self._reader.readline())).strip():
                        pass  # trailers
                    self._done = True
                    return
                data = await self._read(self._reader.readexactly(size + 2))
                yield data[:-2]
            elif self._left is not None:
                data = await self._read(self._reader.read(min(self._left, 1 << 16)))
                if not data:
                    raise TransportError("vaultwatch closed the connection in the middle of its answer")
                self._left -= len(data)
                self._done = self._left <= 0
                yield data
            else:  # the body ends with the connection
                data = await self._read(self._reader.read(1 << 16))
                if not data:
                    self._done = True
                    return
                yield data

    async def aread(self) -> bytes:
        """The whole body."""
        if self._content is None:
            self._content = b"".join([chunk async for chunk in self._chunks()])
        return self._content

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise RuntimeError("the body was not read (aread)")
        return self._content

    def json(self) -> Any:
        return json.loads(self.content)

    async def aiter_lines(self) -> AsyncIterator[str]:
        """The body's lines as they arrive, without their ends (\\r\\n, \\n or \\r)."""
        buf = ""
        async for chunk in self._chunks():
            buf += chunk.decode("utf-8", "replace")
            start = 0
            for match in _LINE_END.finditer(buf):
                if match.group() == "\r" and match.end() == len(buf):
                    break  # maybe the first half of \r\n: wait for the next chunk
                yield buf[start : match.start()]
                start = match.end()
            buf = buf[start:]
        if buf:
            yield buf.rstrip("\r")

    async def aiter_messages(self) -> AsyncIterator[Any]:
        """An SSE body's JSON messages as they arrive (the data lines of each event joined; an
        event whose data is not JSON is skipped)."""
        data: list[str] = []
        async for line in self.aiter_lines():
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif line == "" and data:
                text, data = "\n".join(data), []
                try:
                    message = json.loads(text)
                except ValueError:
                    continue
                yield message


class AsyncClient:
    """Requests to the HTTP server on the Unix socket `path` (see module doc), one connection each."""

    def __init__(self, path: str, *, timeout: float = CONNECT_TIMEOUT, read: float | None = READ_TIMEOUT) -> None:
        self.path = path
        self.connect_timeout = timeout
        self.read_timeout = read
        self._writers: set[asyncio.StreamWriter] = set()

    async def _open(
        self, method: str, url: str, content: bytes | None, headers: dict[str, str] | None, read_timeout: float | None
    ) -> tuple[Response, asyncio.StreamWriter]:
        connect_timeout = self.connect_timeout if read_timeout is None else min(self.connect_timeout, read_timeout)
        target = url.split("://", 1)[-1]
        host, _, path = target.partition("/")
        _check_sendable(method, path, host, headers or {})
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(self.path, limit=1 << 24), connect_timeout
            )
        except TimeoutError:
            raise ConnectTimeout(f"no connection to {self.path} in {connect_timeout:g} s") from None
        except OSError as exc:
            raise ConnectError(f"cannot connect to {self.path}: {exc.strerror or exc}") from None
        self._writers.add(writer)
        try:
            lines = [f"{method} /{path} HTTP/1.1", f"host: {host or 'localhost'}", "connection: close"]
            lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
            if content is not None or method in ("POST", "PUT"):
                lines.append(f"content-length: {len(content or b'')}")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (content or b""))
            await asyncio.wait_for(writer.drain(), read_timeout)
            status_line = await asyncio.wait_for(reader.readline(), read_timeout)
            parts = status_line.decode("latin-1").split(None, 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
                raise TransportError(f"vaultwatch did not answer in HTTP ({status_line[:60]!r})")
            response_headers: dict[str, str] = {}
            while True:
                raw = await asyncio.wait_for(reader.readline(), read_timeout)
                if not raw:
                    raise TransportError("vaultwatch closed the connection in the middle of its headers")
                if raw in (b"\r\n", b"\n"):
                    break
                name, _, value = raw.decode("latin-1").partition(":")
                response_headers[name.strip().lower()] = value.strip()
            return Response(int(parts[1]), response_headers, reader, read_timeout), writer
        except HTTPError:
            self._close(writer)
            raise
        except (TimeoutError, OSError, ValueError, asyncio.LimitOverrunError) as exc:
            self._close(writer)
            raise TransportError(str(exc) or type(exc).__name__) from None
        except BaseException:
            self._close(writer)
            raise

    def _close(self, writer: asyncio.StreamWriter) -> None:
        self._writers.discard(writer)
        with contextlib.suppress(Exception):
            writer.close()

    @contextlib.asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: Any = ...,
    ) -> AsyncIterator[Response]:
        """The answer, its body still to be read (`aread`, `aiter_lines`); the connection closes after.
        `timeout`: seconds a read may wait (None: for ever), default the client's."""
        response, writer = await self._open(
            method, url, content, headers, self.read_timeout if timeout is ... else timeout
        )
        try:
            yield response
        finally:
            self._close(writer)

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: Any = ...,
    ) -> Response:
        """The answer with its body read."""
        async with self.stream(method, url, content=content, headers=headers, timeout=timeout) as response:
            await response.aread()
            return response

    async def post(
        self, url: str, *, content: bytes, headers: dict[str, str] | None = None, timeout: Any = ...
    ) -> Response:
        return await self.request("POST", url, content=content, headers=headers, timeout=timeout)

    async def delete(self, url: str, *, headers: dict[str, str] | None = None, timeout: Any = ...) -> Response:
        return await self.request("DELETE", url, headers=headers, timeout=timeout)

    async def aclose(self) -> None:
        """Close every connection still open."""
        for writer in list(self._writers):
            self._close(writer)
