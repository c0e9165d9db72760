"""Notes as MCP resources, through the real server on its socket with the real Python client: the
template, a paged resources/list (every file once, in path order), resources/read of the bytes on
disk now (after an outside edit too), and the path rules of the tools."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_testing import serving, uds_client

from vaultwatch.mcp_server import resources

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


@pytest.fixture
def vault(make_vault, open_vault):
    files = {f"F{i % 3}/n {i:04d}.md": f"# Note {i}\n" for i in range(resources.RESOURCE_PAGE + 20)}
    files |= {"index.md": "# Home ✓\n", "img/p.png": PNG, ".obsidian/app.json": "{}"}
    return open_vault(make_vault(files))


async def test_notes_are_resources_listed_read_and_fresh_after_an_outside_edit(vault, sock_dir):
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        caps = client.server_capabilities.resources
        templates = (await client.list_resource_templates()).resource_templates
        seen, cursor, pages = [], None, 0
        while True:
            page = await client.list_resources(cursor=cursor) if cursor else await client.list_resources()
            seen += page.resources
            pages += 1
            cursor = page.next_cursor
            if not cursor:
                break
        note = await client.read_resource(resources.uri_of("index.md"))
        image = await client.read_resource(resources.uri_of("img/p.png"))
        (Path(vault.root) / "index.md").write_text("# Home, edited outside\n", encoding="utf-8")
        edited = await client.read_resource(resources.uri_of("index.md"))
        errors = {}
        for uri in (
            resources.uri_of(".obsidian/app.json"),
            resources.uri_of("nope.md"),
            "file:///etc/passwd",
            resources.SCHEME + "../outside.md",
        ):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            errors[uri] = refused.value
    assert caps is not None and caps.subscribe and caps.list_changed  # test_notifications.py: they work
    assert [t.uri_template for t in templates] == ["vault://note/{+path}"]
    paths = [r.name for r in seen]
    assert pages == 2 and paths == sorted(paths) and len(paths) == len(set(paths)) == resources.RESOURCE_PAGE + 22
    assert ".obsidian/app.json" not in paths and "img/p.png" in paths
    assert seen[0].uri == resources.uri_of(seen[0].name) and "%20" in seen[0].uri
    assert note.contents[0].text == "# Home ✓\n" and note.contents[0].mime_type == "text/markdown"
    assert base64.b64decode(image.contents[0].blob) == PNG and image.contents[0].mime_type == "image/png"
    assert edited.contents[0].text == "# Home, edited outside\n"
    codes = [e.code for e in errors.values()]
    assert codes == [-32602, -32002, -32602, -32602]
    assert all(e.error.data == {"uri": uri} for uri, e in errors.items())  # data.uri, as the spec asks
    assert "hidden path blocked" in list(errors.values())[0].message


@pytest.mark.parametrize("swap", ["hard link", "fifo"])
async def test_a_resource_read_opens_as_read_does_never_an_outside_hard_link_or_a_fifo(tmp_path, sock_dir, swap):
    """A note indexed as a plain file and then, on disk, replaced by a hard link to a file outside the
    vault (or by a FIFO): resources/read said the outside file's text (the old read checked a
    realpath, then opened the path by name, never looking at st_nlink) or hung on the FIFO. It now
    opens as the read tool does (core.disk.fileopen), and refuses both, saying why."""
    import asyncio
    import os

    from vaultwatch.core.vault import Vault

    secret = "OUTSIDE-SECRET-TEXT"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text(f"# out\n{secret}\n")
    root = tmp_path / "v"
    root.mkdir()
    (root / "x.md").write_text("# inside\n")
    v = Vault(root, cache=False)
    v.load()
    (root / "x.md").unlink()  # what another local process does after the index saw the note
    if swap == "hard link":
        os.link(outside / "x.md", root / "x.md")
    else:
        os.mkfifo(root / "x.md")
    async with serving(v, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        with pytest.raises(MCPError) as info:
            await asyncio.wait_for(client.read_resource(resources.uri_of("x.md")), 15)
    message = str(info.value)
    assert secret not in message
    assert ("hard-linked" if swap == "hard link" else "not a regular file") in message, message
