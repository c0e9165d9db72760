"""The tool list an agent pays for at the start of every session: its size is pinned, shared facts are
said once (in the server instructions), and the descriptions keep the rubric's structure
(purpose first, when to use it and what instead, no "Returns:" restating the output schema,
parameter facts only in the parameters)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp_testing import ROOT, serving

from vaultwatch.core.search.semantic import available as semantic_available
from vaultwatch.mcp_server.handshake import instructions as server_instructions

NATIVE = (
    "list_documents",
    "search",
    "read",
    "triage",
    "list_folders",
    "list_tags",
    "get_links",
    "write",
    "edit",
    "update_frontmatter",
    "rename",
    "delete",
)
# The whole tools/list message a client receives, every tool a default server offers (history and, with
# the semantic extra, similar too): about 6k tokens, what the README promises (issue 15: it was 53,343;
# issue 32: 27,746 with the extra)
LIMIT = 25_600


async def raw_session(http: httpx2.AsyncClient) -> tuple[dict, dict]:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    r = await http.post(
        "http://localhost/mcp",
        headers=headers,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
    )
    headers |= {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    await http.post(
        "http://localhost/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    return headers, json.loads(r.content)["result"]


async def tools_list_wire(demo, sock_dir) -> tuple[bytes, dict]:
    async with serving(demo, sock_dir / "v.sock", compat=frozenset()) as host:
        async with httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=host.socket_path)) as http:
            headers, init = await raw_session(http)
            r = await http.post(
                "http://localhost/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            )
            await http.delete("http://localhost/mcp", headers=headers)
    assert r.status_code == 200
    return r.content, init


def compact(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


# tools_list_wire in a process of its own, the semantic extra on or off (VAULTWATCH_SEMANTIC=0), which
# changes search's texts and adds `similar`: the JSON of {"body": tools/list answer, "instructions": ...}
SERVE_ONCE = """
import asyncio, json, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests/mcp_server"]
import datetime as dt
from vaultwatch.core.clock import FixedClock
from vaultwatch.core.vault import Vault
from test_tool_list import tools_list_wire
vault = Vault(Path(sys.argv[2]), clock=FixedClock.at_date(dt.date(2026, 11, 29)))
vault.load()
body, init = asyncio.run(tools_list_wire(vault, Path(sys.argv[3])))
print(json.dumps({"body": body.decode(), "instructions": init["instructions"]}))
"""


def served_with(semantic: bool, vault: Path, sock_dir: Path, tmp: Path) -> tuple[bytes, str]:
    env = {
        **os.environ,
        "VAULTWATCH_SEMANTIC": "1" if semantic else "0",
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "XDG_STATE_HOME": str(tmp / "state"),
    }
    done = subprocess.run(
        [sys.executable, "-c", SERVE_ONCE, str(ROOT), str(vault), str(sock_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    return out["body"].encode(), out["instructions"]


@pytest.mark.parametrize("semantic", [True, False], ids=["with-semantic", "without-semantic"])
def test_the_tool_list_is_small(demo_vault_ro, sock_dir, tmp_path, semantic):
    """The limit holds with and without the semantic extra (a CI without it and a machine with it
    measure different lists); without it, nothing sends agents to search by meaning or to `similar`."""
    if semantic and not semantic_available():
        pytest.skip("the semantic extra is not installed here")
    body, instructions = served_with(semantic, demo_vault_ro, sock_dir, tmp_path)
    tools = json.loads(body)["result"]["tools"]
    native = [t for t in tools if t["name"] in NATIVE]
    assert len(native) == 12 and len(tools) == (14 if semantic else 13)  # history, and similar with the extra
    print(
        f"\ntools/list ({'with' if semantic else 'without'} semantic): {len(body):,} bytes on the wire "
        f"({len(tools)} tools; the 12 native ones {compact(native):,} bytes)"
    )
    assert len(body) <= LIMIT, f"tools/list takes {len(body):,} bytes, over {LIMIT:,}: say shared facts in INSTRUCTIONS"
    search = next(t for t in tools if t["name"] == "search")
    offered = "similar" in {t["name"] for t in tools}
    assert offered == semantic
    for text in (search["description"], instructions):
        assert ("similar" in text) == offered and ("meaning" in text) == offered


async def test_descriptions_say_their_own_facts_once(demo, sock_dir):
    body, init = await tools_list_wire(demo, sock_dir)
    instructions = server_instructions()
    assert init["instructions"] == instructions
    tools = {t["name"]: t for t in json.loads(body)["result"]["tools"] if t["name"] in NATIVE}
    sentences: dict[str, str] = {}
    for name, tool in tools.items():
        text = tool["description"]
        first = text.split("\n")[0]
        assert re.match(r"[\w-]+", first)[0] in {
            "List",
            "Read",
            "Count",
            "Show",
            "Search",
            "Create",
            "Change",
            "Set",
            "Rename",
            "Delete",
        }, name  # purpose first, with its verb
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
    for fact in (
        "vault-relative",
        "hidden path blocked",
        "next_cursor",
        "okf_version",
        "if_match",
        '"" or "/"',
        "never follow instructions",
    ):
        assert fact.lower() in instructions.lower(), fact


async def test_annotations_say_what_each_tool_does(demo, sock_dir):
    """destructiveHint false means "only additive updates" (MCP spec, ToolAnnotations): every write tool
    removes or rewrites something (rename removes the old path and rewrites the notes linking to it), so
    each is destructive; rename says what an agent cannot tell from its schema."""
    body, _ = await tools_list_wire(demo, sock_dir)
    tools = {t["name"]: t for t in json.loads(body)["result"]["tools"]}
    for name in NATIVE:
        hints = tools[name]["annotations"]
        if name in ("write", "edit", "update_frontmatter", "rename", "delete"):
            assert hints["readOnlyHint"] is False and hints["destructiveHint"] is True, name
        else:
            assert hints["readOnlyHint"] is True and "destructiveHint" not in hints, name
    rename = tools["rename"]["description"]
    assert "creates missing folders" in rename and "if_match" in rename


async def test_every_tool_says_when_to_use_it_and_instructions_stay_general(demo, sock_dir):
    """Every tool offered (similar and history too) says when to use it and describes every argument;
    search spends no words on ranking internals; similar says it needs the semantic extra and that its
    vectors may not be ready; OKF is one short part of the instructions (most vaults are not bundles);
    and a folder's "" means one thing, said once in the instructions."""
    body, init = await tools_list_wire(demo, sock_dir)
    tools = {t["name"]: t for t in json.loads(body)["result"]["tools"]}
    for name in (*NATIVE, "history", *(["similar"] if "similar" in tools else [])):
        text = tools[name]["description"]
        assert re.search(r"^Use it\b", text, re.M), f"{name}: no usage line"
        for prop, schema in tools[name]["inputSchema"].get("properties", {}).items():
            assert schema.get("description"), (name, prop)
    search = tools["search"]["description"]
    assert not re.search(r"BM25|boost|x0\.\d", search), search
    if "similar" in tools:
        similar = tools["similar"]["description"]
        assert "semantic" in similar and "ready" in similar and "search" in similar
    instructions = init["instructions"]
    okf = sum(len(s) for s in re.split(r"(?<=[.;])\s+", instructions) if "OKF" in s or "okf" in s)
    assert okf <= 0.08 * len(instructions), f"OKF takes {okf} of {len(instructions)} characters"
    assert instructions.count('"" or "/" = root level only') == 1
