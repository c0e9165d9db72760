"""triage(category="broken_links") over the real socket and the real `mcp` client, on a vault
shaped like kepano's template vault (tests/template_vault.py): each unresolved link says which
problem it is (the TUI's Broken tab's kinds, core.query.problems) and its line."""

from __future__ import annotations

from pathlib import Path

from mcp_testing import serving, uds_client

from tests.template_vault import EXPECTED, make_template_vault


async def test_broken_links_say_their_problem_and_line(tmp_path: Path, open_vault, sock_dir) -> None:
    vault = open_vault(make_template_vault(tmp_path / "vault"))
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("triage", {"category": "broken_links"})
    assert not result.is_error, result.content[0].text
    rows = {r["path"]: r["broken_links"] for r in result.structured_content["result"]}
    kyoto = [(link["problem"], link["line"]) for link in rows["Trips/Kyoto 2023.md"]]
    want = [(kind, line) for kind, where in EXPECTED.items() for path, line in where if path == "Trips/Kyoto 2023.md"]
    assert sorted(kyoto, key=lambda k: k[1]) == sorted(want, key=lambda k: k[1])
    assert {link["problem"] for link in rows["Trips/Kyoto 2023.md"]} == {"heading", "block", "embed", "unwritten"}


async def test_get_links_says_each_broken_links_problem_as_triage_does(tmp_path: Path, open_vault, sock_dir) -> None:
    """get_links' broken list holds the links to notes not yet written too: each says its problem,
    so an agent can tell them (no breakage) from missing headings, blocks and embeds."""
    vault = open_vault(make_template_vault(tmp_path / "vault"))
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("get_links", {"path": "Trips/Kyoto 2023.md"})
    assert not result.is_error, result.content[0].text
    broken = [(b["target"], b["missing"], b["problem"]) for b in result.structured_content["broken"]]
    assert broken == [
        ("Japan", "file", "unwritten"),
        ("Packing List", "heading", "heading"),
        ("kyoto-temple.jpg", "file", "embed"),
        ("Packing List", "block", "block"),
        ("Osaka", "file", "unwritten"),
        ("Japan", "file", "unwritten"),
    ]
