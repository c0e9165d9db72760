"""The answer budget counts the whole message a client receives: the text content (a JSON string, so
escaped) and the structured content, which clients that pass structured content to the model pay for too.

Through the real server on its socket, each read tool's default answer (no limit, no max_chars) is posted
as a raw tools/call and its response body measured, byte for byte, against the server's budget."""

from __future__ import annotations

import json

import httpx2
import pytest
from mcp_testing import serving
from test_tool_list import raw_session

from vaultwatch.mcp_server import budget

NOTES = 1500


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    import datetime as dt

    from vaultwatch.core.clock import FixedClock
    from vaultwatch.core.vault import Vault

    root = tmp_path_factory.mktemp("msg") / "vault"
    for i in range(NOTES):
        path = root / f"Area {i % 9}" / f"Part {i % 600}" / f'Note {i:04d} "quoted".md'
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'---\ntitle: Harbour note {i} "with quotes" and \\\\ backslashes ✓\nstatus: draft\n'
            f"tags: [topic-{i}-of-the-harbour-log, harbour]\n---\n# Note {i}\n\nThe harbour log {i}. See [[index]] and [[Missing {i}]].\n",
            encoding="utf-8",
        )
    body = "\n".join(f'- [[Note {i:04d} "quoted"]] says "harbour" \\ {i}' for i in range(NOTES))
    (root / "index.md").write_text(f"---\ntitle: Index\n---\n# Index\n\n{body}\n", encoding="utf-8")
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    vault.load()
    assert vault.wait_search_ready(120)
    return vault


CALLS = {
    "list_documents": {"include_frontmatter": True},
    "list_folders": {},
    "list_tags": {},
    "triage": {"category": "broken_links"},
    "read": {"path": "index.md"},
    "get_links": {"path": "index.md"},
    "search": {"query": "harbour"},
}


# the tools whose default page only the budget bounds (triage and search stop at 50 and 20 rows first)
BOUND = ("list_documents", "list_folders", "list_tags", "read", "get_links")


@pytest.mark.parametrize("room", [8 * 1024, budget.DEFAULT_ANSWER_BYTES], ids=["8KiB", "64KiB"])
async def test_a_default_answer_is_a_message_within_the_budget(vault, sock_dir, room):
    sizes = {}
    async with serving(vault, sock_dir / "v.sock", max_answer_bytes=room) as host:
        async with httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=host.socket_path)) as http:
            headers, _ = await raw_session(http)
            for i, (name, arguments) in enumerate(CALLS.items()):
                r = await http.post(
                    "http://localhost/mcp",
                    headers=headers,
                    json={
                        "jsonrpc": "2.0",
                        "id": 10 + i,
                        "method": "tools/call",
                        "params": {"name": name, "arguments": arguments},
                    },
                )
                message = json.loads(r.content)
                result = message["result"]
                assert not result["isError"], (name, result["content"][0]["text"])
                out = result["structuredContent"]
                sizes[name] = len(r.content)
                if name in BOUND or room < budget.DEFAULT_ANSWER_BYTES:
                    # cut by the budget, not by running out: something is left for the next page
                    assert out.get("next_cursor") or out.get("truncated"), name
            await http.delete("http://localhost/mcp", headers=headers)
    print(f"\nmessage bytes at a budget of {room:,}: {sizes}")
    assert all(size <= room for size in sizes.values()), sizes
    assert all(sizes[name] > room // 2 for name in BOUND), sizes  # and the budget is used, not wasted
