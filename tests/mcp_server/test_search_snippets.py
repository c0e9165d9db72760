"""The MCP `search` tool's snippets, through the real server and the real `mcp` client: the
note's text as a reader sees it, with one well-formed `**` mark per run of matched words
(an Obsidian help note's `**Linking** to a **heading**` came back `****Linking** to a **heading**...`)."""

from __future__ import annotations

import asyncio

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.core.vault import Vault

pytestmark = pytest.mark.asyncio

NOTE = """# Internal links

**Linking** to a **heading** in another note: [[Internal links#Link to a heading|link to a heading]].
Badge: ![GitHub all releases](https://img.shields.io/github/downloads/x/y/total) and ==highlighted== *words*.
"""


async def test_search_snippets_are_readable_through_the_real_client(tmp_path, sock_dir):
    root = tmp_path / "v"
    root.mkdir()
    (root / "Internal links.md").write_text(NOTE)
    vault = Vault(root, cache=False)
    vault.load()
    vault.start_search()
    try:
        assert await asyncio.to_thread(vault.wait_search_ready, 60)
        async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
            for query, expected in (
                ("linking heading", "Linking** to a **heading** in another note: **link** to a **heading**."),
                ("releases", "GitHub all **releases**"),
            ):
                result = await client.call_tool("search", {"query": query})
                assert not result.is_error, result.content[0].text
                snippet = result.structured_content["result"][0]["snippet"]
                assert expected in snippet, snippet
                assert "****" not in snippet and "](" not in snippet and "[[" not in snippet
                assert "==" not in snippet and "![" not in snippet
    finally:
        vault.stop()


BADGES = """![GitHub all releases](https://img.shields.io/github/downloads/keeper/obsidian-lantern/total)
![GitHub stars](https://img.shields.io/github/stars/keeper/obsidian-lantern)

# Lantern

Links: [GitHub repository](https://github.com/keeper/obsidian-lantern)

Lights the way through fog.

# This note in GitHub

<span class="git-footer">[Edit In GitHub](https://github.dev/hub/blob/main/lantern.md "git-hub-edit-note")</span>
"""


async def test_search_snippets_show_the_text_where_the_words_are_not_badges_or_addresses(tmp_path, sock_dir):
    """obsidian-hub's plugin notes: the query's word in every badge's and link's address. The tool's
    snippet is the note's text with the word where the reader sees it; a note found only by an
    address (still searchable) shows its first readable lines."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "lantern.md").write_text(BADGES)
    vault = Vault(root, cache=False)
    vault.load()
    vault.start_search()
    try:
        assert await asyncio.to_thread(vault.wait_search_ready, 60)
        async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
            for query, expected in (
                ("lantern", "**Lantern** Links: GitHub repository Lights the way through fog."),
                ("shields", "Links: GitHub repository Lights the way through fog."),
            ):
                result = await client.call_tool("search", {"query": query})
                assert not result.is_error, result.content[0].text
                hits = result.structured_content["result"]
                assert [h["path"] for h in hits] == ["lantern.md"], (query, hits)
                assert hits[0]["snippet"] == expected, (query, hits[0]["snippet"])
    finally:
        vault.stop()
