"""Issue 13: the transport's answers tell the truth (the real server on a real socket)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from reliability_helpers import McpSession  # noqa: E402

from vaultwatch.core.vault import Vault  # noqa: E402

MAX_REQUEST_BYTES = 40 << 20  # mcp_server.requestguard: 4 x the 10 MiB write cap

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _session_headers(http) -> dict:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    r = http.post("/mcp", json=init, headers=HEADERS)
    assert r.status_code == 200, r.text
    headers = dict(HEADERS, **{"mcp-protocol-version": "2025-06-18"})
    if r.headers.get("mcp-session-id"):
        headers["mcp-session-id"] = r.headers["mcp-session-id"]
    http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def test_oversize_requests_and_object_ids_get_truthful_answers(tmp_path):
    (tmp_path / "a.md").write_text("# a\n")
    vault = Vault(tmp_path, cache=False)
    vault.load()
    with McpSession(vault) as s:
        http = httpx2.Client(transport=httpx2.HTTPTransport(uds=s.socket_path), base_url="http://localhost", timeout=60)
        headers = _session_headers(http)
        # a 5 MiB note: over the SDK's 4 MiB default, under write's documented 10 MiB cap -> written
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "write", "arguments": {"path": "five.md", "content": "x" * (5 << 20)}},
        }
        r = http.post("/mcp", content=json.dumps(call), headers=headers)
        assert r.status_code == 200, r.text[:300]
        assert (tmp_path / "five.md").stat().st_size == 5 << 20
        # an 11 MiB note: the tool's own refusal with its own cap, not a transport error
        call["params"]["arguments"] = {"path": "eleven.md", "content": "x" * (11 << 20)}
        r = http.post("/mcp", content=json.dumps(call), headers=headers)
        assert r.status_code == 200 and "10 MiB write cap" in r.text, r.text[:300]
        # over the request limit: 413 with a JSON-RPC error naming the limits
        r = http.post("/mcp", content=b"{" + b" " * (MAX_REQUEST_BYTES + 10) + b"}", headers=headers)
        assert r.status_code == 413
        message = r.json()["error"]["message"]
        assert "request limit" in message and "10 MiB" in message
        # an id that is an object: an Invalid Request error, not HTTP 202 and silence
        r = http.post("/mcp", content=b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', headers=headers)
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32600 and "id must be a string or a number" in r.json()["error"]["message"]
        # ordinary ids still work
        r = http.post("/mcp", content=b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}', headers=headers)
        assert r.status_code == 200 and "read" in r.text
