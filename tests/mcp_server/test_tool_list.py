"""The tool list an agent pays for at the start of every session: its size is pinned, shared facts are
said once (in the server instructions), and the descriptions keep the rubric's structure
(purpose first, when to use it and what instead, no "Returns:" restating the output schema,
parameter facts only in the parameters)."""
from __future__ import annotations

import json
import re

import httpx2

from mcp_server.descriptions import INSTRUCTIONS

from mcp_testing import serving

NATIVE = ("list_documents", "search", "read", "triage", "list_folders", "list_tags", "get_links",
          "write", "edit", "update_frontmatter", "rename", "delete")
NATIVE_LIMIT = 25_600  # about 6k tokens for the 12 native tools (issue 15; it was 53,343)
ALL_LIMIT = 48_000  # every tool a default server offers, whatever tools others add


async def raw_session(http: httpx2.AsyncClient) -> tuple[dict, dict]:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    r = await http.post("http://localhost/mcp", headers=headers, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    headers |= {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    await http.post("http://localhost/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers, json.loads(r.content)["result"]


async def tools_list_wire(demo, sock_dir) -> tuple[bytes, dict]:
    async with serving(demo, sock_dir / "v.sock", compat=frozenset()) as host:
        async with httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=host.socket_path)) as http:
            headers, init = await raw_session(http)
            r = await http.post("http://localhost/mcp", headers=headers,
                                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            await http.delete("http://localhost/mcp", headers=headers)
    assert r.status_code == 200
    return r.content, init


def compact(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


async def test_the_tool_list_is_small(demo, sock_dir):
    body, _ = await tools_list_wire(demo, sock_dir)
    tools = json.loads(body)["result"]["tools"]
    native = [t for t in tools if t["name"] in NATIVE]
    assert len(native) == 12
    size = compact(native)
    print(f"\ntools/list: 12 native tools {size:,} bytes; whole answer {len(body):,} bytes ({len(tools)} tools)")
    assert size <= NATIVE_LIMIT, f"the 12 native tools take {size:,} bytes, over {NATIVE_LIMIT:,}: say shared facts in INSTRUCTIONS"
    assert len(body) <= ALL_LIMIT


async def test_descriptions_say_their_own_facts_once(demo, sock_dir):
    body, init = await tools_list_wire(demo, sock_dir)
    assert init["instructions"] == INSTRUCTIONS
    tools = {t["name"]: t for t in json.loads(body)["result"]["tools"] if t["name"] in NATIVE}
    sentences: dict[str, str] = {}
    for name, tool in tools.items():
        text = tool["description"]
        first = text.split("\n")[0]
        assert re.match(r"[\w-]+", first)[0] in {"List", "Read", "Count", "Show", "Search", "Create", "Change", "Set",
                                    "Rename", "Delete"}, name  # purpose first, with its verb
        assert re.search(r"^Use it\b", text, re.M), f"{name}: no usage line"
        assert any(other in text for other in NATIVE if other != name), f"{name} names no alternative"
        for banned in ("Returns:", "Parameters:", "Parameters (", "absolute path blocked"):
            assert banned not in text, (name, banned)  # the schema and the instructions say these
        for prop, schema in tool["inputSchema"].get("properties", {}).items():
            assert schema.get("description"), (name, prop)
            assert schema["description"] not in text, (name, prop)  # a parameter's fact lives in the parameter
        for sentence in re.split(r"(?<=[.;:])\s+", text):
            if len(sentence) >= 60:
                assert sentence not in sentences, f"{name} repeats {sentences.get(sentence)}: {sentence!r}"
                sentences[sentence] = name
    for fact in ("vault-relative", "hidden path blocked", "next_cursor", "okf_version", "if_match",
                 '"" or "/"', "never follow instructions"):
        assert fact.lower() in INSTRUCTIONS.lower(), fact
