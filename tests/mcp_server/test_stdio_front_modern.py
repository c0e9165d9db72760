"""A 2026-07-28-era client (the Python SDK's default, `Client(mode="auto")`) has no handshake: it asks
`server/discover`, then sends each request with its protocol version and clientInfo in `_meta`. The stdio
front (mcp_server/stdiofront.py) answers it as it answers a handshake session: discover from
mcp_server/handshake.py, a plain tools/list from the cache of the SDK's own answer, and the calls
EarlyCalls takes, all before the SDK is imported and with the SDK's bytes."""

from __future__ import annotations

import json
import sys

import pytest
from test_stdio_front import EARLY, FIRST_STARTS, by_id, exchange, sdk_answers

from vaultwatch.mcp_server import earlycalls

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "modern-agent", "version": "2.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(request_id, method: str, **params) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": META}}


DISCOVER = request("d", "server/discover")
TOOLS = request("t", "tools/list")


def listing(request_id, name: str = "list_documents", **arguments) -> dict:
    return request(request_id, "tools/call", name=name, arguments=arguments)


def early(vault, *options: str) -> list[str]:
    return [sys.executable, "-c", EARLY, "serve", str(vault), "--stdio", *options]


@pytest.mark.parametrize(("options", "built"), [(o, b) for o, b, _ in FIRST_STARTS], ids=[v for *_, v in FIRST_STARTS])
def test_discover_is_answered_before_the_sdk_with_the_sdks_bytes(demo_vault_ro, env, options, built):
    """No cache yet: the front's discover answer (handshake.discover_result) is what the SDK writes for
    the same server, byte for byte, for every option that changes it; it comes before the SDK's import."""
    reference = sdk_answers(demo_vault_ro, built, DISCOVER)
    lines, err = exchange(early(demo_vault_ro, *options), env, DISCOVER)
    assert "early=1 before_sdk=1" in err
    assert by_id(lines)["d"] == reference["d"]


def test_a_modern_session_is_answered_by_the_front_with_the_sdks_bytes(demo_vault, env):
    """A first start (no cache) answers discover, the tools/list (shipped with the package, toollist.py)
    and the listings before the SDK is imported, and so does the next start, with the bytes the SDK
    writes (the listings compared with a run where the front takes no call)."""
    messages = (DISCOVER, listing("c1", limit=2), TOOLS, listing("c2", folder="Projects"))
    first_lines, first_err = exchange(early(demo_vault), env, *messages)
    assert "early=4 before_sdk=4" in first_err  # the SDK was never imported
    first = by_id(first_lines)
    warm_lines, warm_err = exchange(early(demo_vault), env, *messages)
    assert "early=4 before_sdk=4" in warm_err
    warm = by_id(warm_lines)
    assert warm == first
    sdk_off = by_id(exchange(early(demo_vault), {**env, earlycalls.ENV_SWITCH: "0"}, *messages)[0])
    assert warm == sdk_off  # the SDK's own answers to the same calls
    reference = sdk_answers(demo_vault, {}, DISCOVER, TOOLS)
    assert warm["d"] == reference["d"] and warm["t"] == reference["t"]
    result = json.loads(warm["c1"])["result"]
    assert result["resultType"] == "complete" and result["structuredContent"]["returned"] == 2
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "vaultwatch"


def test_without_a_shipped_list_a_modern_tools_list_waits_for_the_sdk_and_fills_the_cache(demo_vault, env):
    """toollist.json made for another SDK: the first start's tools/list is the SDK's (the listing behind it
    waits for it, in order), and its answer fills the cache, which the next start answers from."""
    from test_stdio_front import serve_unshipped

    messages = (DISCOVER, listing("c1", limit=2), TOOLS, listing("c2", folder="Projects"))
    first = by_id(exchange(serve_unshipped(demo_vault), env, *messages)[0])
    again = by_id(exchange(serve_unshipped(demo_vault), env, *messages)[0])
    assert first == again
    assert first["t"] == sdk_answers(demo_vault, {}, DISCOVER, TOOLS)["t"]


def test_a_connection_keeps_the_era_its_first_request_opened_as_the_sdk_does(demo_vault, env):
    """The SDK serves a connection in the era of its first request and refuses a request of the other:
    an enveloped call on a handshake connection, an initialize (and then a handshake call) on a
    2026-07-28 one, and an envelope without the capabilities key. The front answers each as the SDK does
    (the same bytes as with every call left to the SDK): a client that handshook as one agent never has
    a call run as another named in an envelope, nor a handshake after a front-answered first call."""
    from test_stdio_front import INIT, INITIALIZED

    bare = {k: v for k, v in META.items() if k != "io.modelcontextprotocol/clientCapabilities"}
    handshake_first = (INIT, INITIALIZED, listing("c1", limit=2), listing("c2", limit=2))
    init = {**INIT, "id": "i"}
    modern_first = (
        listing("c1", limit=2),
        init,
        INITIALIZED,
        {**listing("c2", limit=2), "params": {"name": "list_documents", "arguments": {"limit": 2}}},
        {**listing("c3", limit=1), "params": {"name": "list_documents", "arguments": {"limit": 1}, "_meta": bare}},
    )
    for messages in (handshake_first, modern_first):
        front = by_id(exchange(early(demo_vault), env, *messages)[0])
        sdk_off = by_id(exchange(early(demo_vault), {**env, earlycalls.ENV_SWITCH: "0"}, *messages)[0])
        assert front == sdk_off
        assert "error" in json.loads(front["c2"])
    assert "error" in json.loads(front["i"]) and "error" in json.loads(front["c3"])
    assert "error" not in json.loads(front["c1"])
