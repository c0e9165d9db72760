"""Call one tool of the vaultwatch already serving a vault (its Unix socket), for the CLI.

`vaultwatch search` asks the running app or headless server when there is one, so a query
costs a round trip instead of a start-up and an index load. Standard library only (no SDK
import): one MCP session of three POSTs (initialize, initialized, tools/call) and a DELETE.
"""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

from .locations import find_socket
from .wire import DESK_PATH, MCP_PATH, SESSION_HEADER

PROTOCOL = "2025-06-18"


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class RemoteError(Exception):
    """The running vaultwatch answered with an error (its message is for the user)."""


def _message(body: bytes, ctype: str) -> Any:
    if ctype.startswith("text/event-stream"):
        data = [line[5:].strip() for line in body.decode("utf-8", "replace").splitlines() if line.startswith("data:")]
        for chunk in data:
            try:
                msg = json.loads(chunk)
            except ValueError:
                continue
            if isinstance(msg, dict) and ("result" in msg or "error" in msg):
                return msg
        return None
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def call_tool(vault_root_real: str, tool: str, arguments: dict[str, Any], timeout: float = 30.0) -> dict | None:
    """The structured result of `tool` from the vaultwatch serving the vault, or None when none
    runs (no socket, or nobody listening). Raises RemoteError for a tool error."""
    path = find_socket(vault_root_real)
    if path is None:
        return None
    conn = _UnixConnection(path, timeout)
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        SESSION_HEADER: "vaultwatch-cli",
    }

    def post(payload: dict) -> Any:
        conn.request("POST", MCP_PATH, body=json.dumps(payload), headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        if payload.get("method") == "initialize":
            sid = resp.getheader("mcp-session-id")
            if sid:
                headers["mcp-session-id"] = sid
        if resp.status >= 400:
            raise RemoteError(f"vaultwatch answered HTTP {resp.status}: {body[:200].decode('utf-8', 'replace')}")
        return _message(body, (resp.getheader("content-type") or "").lower())

    try:
        init = post(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "vaultwatch-cli", "version": "1"},
                },
            }
        )
        if not isinstance(init, dict) or "result" not in init:
            return None
        headers["mcp-protocol-version"] = str(init["result"].get("protocolVersion") or PROTOCOL)
        post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = post(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        )
        try:
            conn.request("DELETE", MCP_PATH, headers=headers)
            conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            pass
    except (OSError, http.client.HTTPException):
        return None  # a stale socket, or the app went away: answer locally
    finally:
        conn.close()
    if not isinstance(reply, dict):
        return None
    if "error" in reply:
        raise RemoteError(str(reply["error"].get("message", reply["error"])))
    result = reply.get("result") or {}
    if result.get("isError"):
        text = " ".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))
        raise RemoteError(text.removeprefix("Error: ") or "the search failed")
    return result.get("structuredContent")


def person_decides(vault_root_real: str, request: dict[str, Any], timeout: float = 600.0) -> dict | None:
    """Hand the person's decision on a pending change (mcp_server/persondesk.py) to the vaultwatch
    serving the vault; its answer, or None when none runs there (or it serves from another state
    folder, or predates the desk): then the caller decides in its own process."""
    from .launch import BridgeError, NotListening, connect_trusted  # noqa: PLC0415  (the bridge's socket checks)

    path = find_socket(vault_root_real)
    if path is None:
        return None
    try:
        connect_trusted(path)  # a listener running as this user, in a folder of this user's
    except (NotListening, BridgeError):
        return None
    conn = _UnixConnection(path, timeout)
    try:
        conn.request("POST", DESK_PATH, body=json.dumps(request), headers={"content-type": "application/json"})
        resp = conn.getresponse()
        body = resp.read()
    except (OSError, http.client.HTTPException):
        return None  # a stale socket, or the server went away: decide locally
    finally:
        conn.close()
    try:
        answer = json.loads(body)
    except ValueError:
        return None  # not a desk (an older server answered its MCP app's 404)
    if not isinstance(answer, dict) or "ok" not in answer or answer.get("code") == "other_store":
        return None
    return answer
