"""list_documents, search and similar answer with a resource_link content block for each row (after the
text), so a host can open or attach the note: through the real server on its socket with the real Python
client, one link per row, in order, whose URI resources/read serves; the links count against the answer
budget (test_message_budget.py measures whole messages)."""

from __future__ import annotations

import pytest
from mcp_testing import serving, uds_client

PNG = b"\x89PNG\r\n\x1a\n" + bytes(32)


@pytest.fixture
def vault(make_vault, open_vault):
    files = {f"Harbour/Note {i:02d}.md": f"# Note {i}\n\nThe harbour log {i}.\n" for i in range(12)}
    files |= {"Harbour/chart one.png": PNG, "index.md": "# Home\n"}
    return open_vault(make_vault(files))


async def test_listed_and_found_notes_come_with_resource_links(vault, sock_dir):
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        listed = await client.call_tool("list_documents", {"folder": "Harbour", "include_attachments": True})
        found = await client.call_tool("search", {"query": "harbour", "limit": 5})
        first = listed.content[1]
        read = await client.read_resource(first.uri)
    rows = listed.structured_content["result"]
    links = listed.content[1:]
    assert listed.content[0].type == "text" and all(link.type == "resource_link" for link in links)
    assert [link.name for link in links] == [row["path"] for row in rows] and len(rows) == 13
    assert str(first.uri) == "vault://note/Harbour/Note%2000.md" and first.mime_type == "text/markdown"
    assert read.contents[0].text == "# Note 0\n\nThe harbour log 0.\n"
    png = next(link for link in links if link.name.endswith(".png"))
    assert png.mime_type == "image/png" and str(png.uri).endswith("chart%20one.png")
    hits = found.structured_content["result"]
    assert [link.name for link in found.content[1:]] == [hit["path"] for hit in hits] and len(hits) == 5
