"""mcp_server/unixhttp.py, the bridge's HTTP client on the standard library, against a raw Unix-socket
server that answers with exactly the bytes each test gives it (the bridge tests run it against vaultwatch)."""

from __future__ import annotations

import asyncio
import json

import pytest

from vaultwatch.mcp_server import unixhttp


async def serve_bytes(path: str, answer: list[bytes], seen: list[bytes], *, pause: float = 0.0):
    """A server that reads one request and writes the parts of `answer` (with `pause` between), then closes."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        seen.append(head + await reader.readexactly(length))
        for part in answer:
            writer.write(part)
            await writer.drain()
            await asyncio.sleep(pause)
        writer.close()

    return await asyncio.start_unix_server(handle, path)


def run(coro):
    return asyncio.run(coro)


def test_a_json_answer_with_content_length_and_the_request_as_sent(tmp_path):
    path = str(tmp_path / "s.sock")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"é": 1}}).encode()

    async def go():
        seen: list[bytes] = []
        server = await serve_bytes(
            path,
            [
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Mcp-Session-Id: abc\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            ],
            seen,
        )
        async with server:
            resp = await unixhttp.AsyncClient(path).post(
                "http://localhost/mcp", content=b'{"x":1}', headers={"accept": "application/json"}
            )
        return resp, seen

    resp, seen = run(go())
    assert resp.status_code == 200 and resp.headers["mcp-session-id"] == "abc"
    assert resp.json() == {"jsonrpc": "2.0", "id": 1, "result": {"é": 1}}
    request = seen[0]
    assert request.startswith(b"POST /mcp HTTP/1.1\r\n") and b"host: localhost\r\n" in request
    assert b"connection: close\r\n" in request and b"accept: application/json\r\n" in request
    assert request.endswith(b'\r\n\r\n{"x":1}')


def test_an_sse_answer_in_chunks_line_by_line_even_with_a_line_end_split_between_chunks(tmp_path):
    path = str(tmp_path / "s.sock")
    events = b'event: message\r\ndata: {"id":1}\r\n\r\ndata: {"id":2}\r\n\r\n'
    parts = [events[:20], events[20:31], events[31:32], events[32:]]  # the second ends in the \r of a \r\n
    chunks = [b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"]
    chunks += [f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts] + [b"0\r\n\r\n"]

    async def go():
        server = await serve_bytes(path, chunks, [], pause=0.01)
        async with server:
            async with unixhttp.AsyncClient(path).stream("POST", "http://localhost/mcp", content=b"{}") as resp:
                return [line async for line in resp.aiter_lines()]

    assert run(go()) == ["event: message", 'data: {"id":1}', "", 'data: {"id":2}', ""]


def test_a_body_that_ends_with_the_connection(tmp_path):
    path = str(tmp_path / "s.sock")

    async def go():
        server = await serve_bytes(path, [b"HTTP/1.1 500 Internal Server Error\r\n\r\n", b"bro", b"ken"], [])
        async with server:
            return await unixhttp.AsyncClient(path).post("http://localhost/mcp", content=b"{}")

    resp = run(go())
    assert resp.status_code == 500 and resp.content == b"broken"


def test_no_server_is_a_connect_error_and_a_cut_answer_a_transport_error(tmp_path):
    path = str(tmp_path / "s.sock")

    async def go():
        with pytest.raises(unixhttp.ConnectError):  # the request was never sent
            await unixhttp.AsyncClient(path).post("http://localhost/mcp", content=b"{}")
        server = await serve_bytes(path, [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this"], [])
        async with server:
            with pytest.raises(unixhttp.TransportError):  # sent, cut off: maybe applied
                await unixhttp.AsyncClient(path).post("http://localhost/mcp", content=b"{}")
        silent = await serve_bytes(path + "2", [], [], pause=0)
        async with silent:
            with pytest.raises(unixhttp.TransportError):
                await unixhttp.AsyncClient(path + "2").post("http://localhost/mcp", content=b"{}")

    run(go())
    assert not issubclass(unixhttp.TransportError, unixhttp.ConnectError)


@pytest.mark.parametrize(
    "headers",
    [
        {"mcp-protocol-version": "2026-07-28\r\ncontent-length: 0\r\n\r\nPOST /vaultwatch/person HTTP/1.1"},
        {"mcp-method": "tools/list\nx-injected: 1"},
        {"x-ok": "fine", "bad\r\nname": "v"},
        {"mcp-name": "nul\x00byte"},
    ],
)
def test_a_header_that_would_break_its_line_is_never_sent(tmp_path, headers):
    """The bridge copies values of the client's message into headers: a line break among them
    would end the header and make the rest headers, or a request of their own, to the server."""
    path = str(tmp_path / "s.sock")

    async def go():
        seen: list[bytes] = []
        connections = []

        async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connections.append(await reader.read())
            writer.close()

        server = await asyncio.start_unix_server(count, path)
        async with server:
            with pytest.raises(unixhttp.UnsendableRequest):
                await unixhttp.AsyncClient(path).post("http://localhost/mcp", content=b"{}", headers=headers)
            await asyncio.sleep(0.05)
        return seen, connections

    seen, connections = run(go())
    assert connections == []  # not a byte: the check comes before the connection
