"""An agent's `write` of a note whose frontmatter does not parse is written (the person may
fix it), but the answer says so: it came back with `"warnings": []` while the note's status,
tags and aliases were silently lost to the index. Through the real server and `mcp` client."""

from __future__ import annotations

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.core.vault import Vault

pytestmark = pytest.mark.asyncio

BROKEN = "---\ntitle: Plan\nstatus: [draft\ntags: a, b]\n---\n# Plan\n"


async def test_a_write_of_invalid_frontmatter_warns(tmp_path, sock_dir):
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("---\nstatus: draft\n---\n# Plan\n")
    vault = Vault(root)
    vault.load()
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        read = await client.call_tool("read", {"path": "Plan.md"})
        etag = read.structured_content["etag"]
        result = await client.call_tool("write", {"path": "Plan.md", "content": BROKEN, "if_match": etag})
        assert not result.is_error, result.content[0].text
        warnings = result.structured_content["warnings"]
        assert len(warnings) == 1 and "frontmatter does not parse" in warnings[0] and "Plan.md" in warnings[0]
        good = await client.call_tool(
            "write",
            {
                "path": "Plan.md",
                "content": "---\nstatus: draft\n---\n# Plan\n",
                "if_match": result.structured_content["etag"],
            },
        )
        assert not good.is_error and good.structured_content["warnings"] == []
    assert (root / "Plan.md").read_text() == "---\nstatus: draft\n---\n# Plan\n"
