"""The write tools over the real server on a real Unix socket, driven by the real `mcp` client."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_testing import serving, uds_client

from vaultwatch.core.events import AgentAccess, DocumentsChanged
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import sdk
from vaultwatch.mcp_server.results import tabled
from vaultwatch.mcp_server.server import build_server
from vaultwatch.mcp_server.write_tools import WRITE_TOOLS

PLAN = "---\ntitle: Plan\nstatus: draft  # lifecycle\ntags: [a]\n---\n# Plan\n## Tasks\n- one\n"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "v"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text(PLAN)
    (root / "Home.md").write_text("See [[Plan]] and [p](Projects/Plan.md).\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.json").write_text("{}")
    v = Vault(root)
    v.load()
    return v


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def disk(vault: Vault, rel: str) -> bytes:
    return (Path(vault.root) / rel).read_bytes()


async def call(client, tool: str, **arguments):
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""
    return result, text


async def test_write_tools_are_listed_with_annotations_schemas_and_descriptions(vault, sock_dir):
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in WRITE_TOOLS:
        tool = tools[name]
        ann = tool.annotations
        assert ann.read_only_hint is False and ann.open_world_hint is False
        assert tool.output_schema and "etag" in tool.output_schema["properties"]
        assert "\nUse it" in tool.description and "Errors:" in tool.description, name
        assert "ctx" not in tool.input_schema["properties"]
    assert tools["delete"].annotations.destructive_hint and not tools["delete"].annotations.idempotent_hint
    assert tools["write"].annotations.destructive_hint and tools["write"].annotations.idempotent_hint
    assert tools["rename"].annotations.destructive_hint  # it removes the old path and rewrites the linking notes
    assert tools["list_documents"].annotations.read_only_hint  # the read side is still there


async def test_read_only_server_offers_no_write_tools(vault, sock_dir):
    async with serving(vault, sock_dir / "s.sock", read_only=True) as host, uds_client(host.socket_path) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert not names & set(WRITE_TOOLS) and "read" in names
        with pytest.raises(MCPError) as refused:  # a protocol error, as the spec has it for an unknown tool
            await call(client, "write", path="x.md", content="x")
        assert refused.value.code == -32602 and "Unknown tool: 'write'" in refused.value.message
    server, _ = build_server(vault, read_only=True)
    assert not {t.name for t in sdk.tools(server)} & set(WRITE_TOOLS)


async def test_read_then_write_with_if_match_and_a_stale_etag_conflicts(vault, sock_dir, events):
    seen = events(vault)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="claude-test") as client:
        read, _ = await call(client, "read", path="Projects/Plan.md")
        etag = read.structured_content["etag"]
        assert etag == sha(disk(vault, "Projects/Plan.md"))
        result, _ = await call(client, "write", path="Projects/Plan.md", content="# Rewritten\n", if_match=etag)
        assert not result.is_error
        out = result.structured_content
        assert out["etag"] == sha(b"# Rewritten\n") and out["previous_etag"] == etag and out["changed"]
        result, text = await call(client, "write", path="Projects/Plan.md", content="# Again\n", if_match=etag)
        assert result.is_error and text.startswith("Error: revision conflict") and out["etag"] in text
        result, text = await call(client, "write", path="Projects/Plan.md", content="# Again\n")
        assert result.is_error and f"if_match='{out['etag']}'" in text
        listed, _ = await call(client, "list_documents", folder="Projects")
        assert [r["title"] for r in listed.structured_content["result"]] == [
            "Plan"
        ]  # the file name (a heading is never the title)
    assert disk(vault, "Projects/Plan.md") == b"# Rewritten\n"
    access = [e for e in seen if isinstance(e, AgentAccess) and e.tool == "write"]
    assert access[0].write and access[0].agent.startswith("claude-test") and access[0].error is None
    assert access[0].diff_summary == "+1 -8 lines" and access[0].paths == ("Projects/Plan.md",)
    assert access[1].error and access[1].error.startswith("Error: revision conflict")
    changed = [e for e in seen if isinstance(e, DocumentsChanged) and e.source != "disk"]
    assert changed and changed[0].source == "agent:claude-test"


async def test_edit_by_text_and_by_heading(vault, sock_dir):
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result, _ = await call(client, "edit", path="Projects/Plan.md", heading="Tasks", mode="append", text="- two")
        assert not result.is_error and result.structured_content["operation"] == "edit_section"
        result, _ = await call(client, "edit", path="Projects/Plan.md", old_text="- one", new_text="- first")
        assert not result.is_error
        result, text = await call(client, "edit", path="Projects/Plan.md", old_text="- ", new_text="* ")
        assert result.is_error and "matches 2 times" in text
        result, text = await call(client, "edit", path="Projects/Plan.md", heading="Nope", mode="append", text="x")
        assert result.is_error and "heading not found" in text and "## Tasks" in text
        result, text = await call(client, "edit", path="Projects/Plan.md", old_text="a", heading="Tasks")
        assert result.is_error and "not both" in text
        result, text = await call(client, "edit", path="Projects/Plan.md", heading="Tasks", mode="append")
        assert result.is_error and "missing: text" in text
        result, text = await call(client, "edit", path="Projects/Plan.md", heading="Tasks", mode="upsert", text="x")
        assert result.is_error and text.startswith("Error: ")
    assert disk(vault, "Projects/Plan.md").decode() == PLAN.replace("- one\n", "- first\n- two\n")


async def test_update_frontmatter_is_surgical_and_agents_cannot_attest_human_review(vault, sock_dir):
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="bot") as client:
        result, _ = await call(
            client,
            "update_frontmatter",
            path="Projects/Plan.md",
            set={"status": "stable", "stale_after": "2026-09-01"},
            append={"verified": {"by": "agent:bot", "at": "2026-03-01T10:00:00Z"}},
        )
        assert not result.is_error
        assert disk(vault, "Projects/Plan.md").decode() == PLAN.replace("status: draft", "status: stable").replace(
            "tags: [a]\n",
            "tags: [a]\nstale_after: 2026-09-01\nverified:\n  - by: agent:bot\n    at: '2026-03-01T10:00:00Z'\n",
        )
        before = disk(vault, "Projects/Plan.md")
        for args in (
            {"append": {"verified": {"by": "human:alice"}}},
            {"set": {"verified": [{"by": "human:alice"}]}},
            {"set": {"verified": {"by": "human:alice", "at": "2026-01-01"}}},
        ):
            result, text = await call(client, "update_frontmatter", path="Projects/Plan.md", **args)
            assert result.is_error and "agents cannot attest human review" in text
        result, text = await call(client, "write", path="Sneaky.md", content="---\nverified:\n  - by: human:a\n---\n")
        assert result.is_error and "agents cannot attest human review" in text
        assert disk(vault, "Projects/Plan.md") == before and not (Path(vault.root) / "Sneaky.md").exists()
        result, text = await call(client, "update_frontmatter", path="Projects/Plan.md")
        assert result.is_error and "give set, delete or append" in text
    assert vault.snapshot.get("Projects/Plan.md").okf_trust == "machine-confirmed"


async def test_rename_rewrites_links_and_delete_uses_the_trash(vault, sock_dir):
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result, _ = await call(client, "rename", path="Projects/Plan.md", new_path="Archive/Roadmap.md")
        out = result.structured_content
        assert not result.is_error and out["moved_to"] == "Archive/Roadmap.md" and "Home.md" in out["changed_paths"]
        assert disk(vault, "Home.md") == b"See [[Roadmap]] and [p](Archive/Roadmap.md).\n"
        result, text = await call(client, "rename", path="Home.md", new_path="Archive/Roadmap.md")
        assert result.is_error and "destination exists" in text
        result, text = await call(client, "delete", path="Archive/Roadmap.md", permanent=True)
        assert result.is_error and "confirm_path='Archive/Roadmap.md'" in text
        result, _ = await call(client, "delete", path="Archive/Roadmap.md")
        assert result.structured_content["moved_to"] == ".trash/Roadmap.md"
        assert "Home.md" in result.structured_content["warnings"][0]
        result, text = await call(client, "delete", path="Archive/Roadmap.md")
        assert result.is_error and "not found" in text
        result, _ = await call(client, "delete", path="Home.md", permanent=True, confirm_path="Home.md")
        assert not result.is_error and not (Path(vault.root) / "Home.md").exists()
        listed, _ = await call(client, "list_documents")
        assert listed.structured_content["total"] == 0


async def test_a_rename_into_a_name_links_cannot_hold_is_refused_with_what_to_do(vault, sock_dir):
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result, text = await call(client, "rename", path="Projects/Plan.md", new_path="Projects/Plan %% v2.md")
        assert result.is_error and "unsafe name" in text and "%% as a comment" in text, text
        assert disk(vault, "Home.md") == b"See [[Plan]] and [p](Projects/Plan.md).\n"
        assert disk(vault, "Projects/Plan.md") == PLAN.encode()


HOSTILE = [
    "../x.md",
    "/etc/passwd",
    ".git/config",
    ".obsidian/app.json",
    ".trash/x.md",
    "a/../../x.md",
    "x\x00.md",
    "C:\\x.md",
    "~/x.md",
    "Projects/.secret.md",
]


async def test_hostile_paths_for_every_write_tool(vault, sock_dir):
    before = {p: p.read_bytes() for p in Path(vault.root).rglob("*") if p.is_file()}
    attempts = {
        "write": lambda p: {"path": p, "content": "pwned", "overwrite": True},
        "edit": lambda p: {"path": p, "old_text": "[core]", "new_text": "pwned"},
        "update_frontmatter": lambda p: {"path": p, "set": {"x": 1}},
        "rename": lambda p: {"path": "Home.md", "new_path": p},
        "delete": lambda p: {"path": p, "permanent": True, "confirm_path": p},
    }
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        for tool, args in attempts.items():
            for path in HOSTILE:
                result, text = await call(client, tool, **args(path))
                assert result.is_error and text.startswith("Error: "), (tool, path, text)
                assert "Traceback" not in text and "internal error" not in text, (tool, path, text)
        result, text = await call(client, "rename", path=".git/config", new_path="config.md")
        assert result.is_error and "hidden path blocked" in text
    after = {p: p.read_bytes() for p in Path(vault.root).rglob("*") if p.is_file()}
    assert after == before


async def test_concurrent_agents_with_if_match_lose_no_update(vault, sock_dir):
    async with serving(vault, sock_dir / "s.sock") as host:
        async with contextlib.AsyncExitStack() as stack:
            clients = [
                await stack.enter_async_context(uds_client(host.socket_path, name=f"agent{i}")) for i in range(5)
            ]

            async def attempt(c, etag):
                result, text = await call(
                    c,
                    "edit",
                    path="Projects/Plan.md",
                    heading="Tasks",
                    mode="append",
                    text=f"- by {id(c)}",
                    if_match=etag,
                )
                return not result.is_error

            for _ in range(4):
                etag = sha(disk(vault, "Projects/Plan.md"))
                wins = await asyncio.gather(*(attempt(c, etag) for c in clients))
                assert sum(wins) == 1
    lines = disk(vault, "Projects/Plan.md").decode().splitlines()
    assert len([ln for ln in lines if ln.startswith("- by ")]) == 4


async def test_results_are_json_text_too(vault, sock_dir):
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result, text = await call(client, "write", path="New.md", content="hello\n")
        assert json.loads(text) == tabled(result.structured_content) and result.structured_content["created"]


async def test_a_link_to_a_missing_heading_is_broken_in_get_links_and_triage(vault, sock_dir):
    """get_links' description: a link to a heading or block the target lacks is broken, and
    triage(category="broken_links") lists the vault's broken links."""
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result, _ = await call(
            client, "write", path="Links.md", content="[[Plan#Tasks]] [[Plan#No Such Heading]] [[Plan#^nope]]\n"
        )
        assert not result.is_error
        links, _ = await call(client, "get_links", path="Links.md")
        assert {b["heading"] for b in links.structured_content["broken"]} == {"No Such Heading", "^nope"}
        triage, _ = await call(client, "triage", category="broken_links")
        rows = [r for r in triage.structured_content["result"] if r["path"] == "Links.md"]
        assert len(rows) == 1
        assert {(b["heading"], b["missing"]) for b in rows[0]["broken_links"]} == {
            ("No Such Heading", "heading"),
            ("^nope", "block"),
        }


@pytest.mark.long
async def test_a_big_rename_reports_progress_to_a_client_that_asked(make_vault, open_vault, sock_dir, monkeypatch):
    """A rename that rewrites the links of many notes runs for seconds: through the real server on its
    socket, a client that sent a progress token hears that it is still working (mcp_server/progress.py's
    heartbeat, each value higher than the last), then gets the normal answer; so does a call without a token."""
    from vaultwatch.mcp_server import progress

    # the heartbeat every 20 ms instead of every second: a rename of 300 notes (not one of 2,000
    # that lasts seconds) runs through several beats
    monkeypatch.setattr(progress, "HEARTBEAT", 0.02)
    notes = 300
    files = {
        f"Links/Note {i:04d}.md": f"# Note {i}\n\nSee [[Target]] and [[Target#Part|the target]].\n"
        for i in range(notes)
    }
    files["Target.md"] = "# Target\n\n## Part\n"
    vault = open_vault(make_vault(files))
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool(
            "rename", {"path": "Target.md", "new_path": "Moved/Renamed.md"}, progress_callback=on_progress
        )
        quiet = await client.call_tool("rename", {"path": "Moved/Renamed.md", "new_path": "Target.md"})
    assert not result.is_error, result.content[0].text
    # the old path, the new one, the folder made for it, each linking note
    assert (
        len(result.structured_content["changed_paths"]) == notes + 3
        and "Moved" in result.structured_content["changed_paths"]
    )
    assert heard, f"no progress notification during a rename of {notes} links"
    assert [p for p, _, _ in heard] == sorted({p for p, _, _ in heard})  # strictly increasing
    assert all("working" in (message or "") for _, _, message in heard)
    assert not quiet.is_error and len(quiet.structured_content["changed_paths"]) == notes + 2
