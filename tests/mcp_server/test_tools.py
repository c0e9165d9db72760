"""Every native tool over the real Unix socket with the real `mcp` client, on the demo vault.

One server and one client serve the whole module (they only read); the vault is the
session-wide demo vault with its clock at 2026-11-29.
"""

from __future__ import annotations

import base64
import hashlib
import json
import tempfile

import pytest
import pytest_asyncio
from mcp_testing import in_own_task, serving, uds_client

from vaultwatch.core.query.listing import Query, run_query
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server.results import tabled

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOOLS = {
    "list_documents",
    "search",
    "read",
    "triage",
    "list_folders",
    "list_tags",
    "get_links",
    "vault_list_notes",
    "obsidian_list_notes",
}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def agent(demo: Vault):
    sock = tempfile.mkdtemp(prefix="vw", dir="/tmp") + "/t.sock"
    async with serving(demo, sock) as host:
        async with in_own_task(uds_client(host.socket_path, name="tools-agent")) as client:
            yield client


async def call(client, name: str, args: dict | None = None):
    result = await client.call_tool(name, args or {})
    return result


async def ok(client, name: str, args: dict | None = None) -> dict:
    result = await call(client, name, args)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == tabled(result.structured_content)  # the same data, rows as a table
    return result.structured_content


async def error(client, name: str, args: dict | None = None) -> str:
    result = await call(client, name, args)
    assert result.is_error, result.structured_content
    text = result.content[0].text
    assert text.startswith("Error: ") and "Traceback" not in text
    return text


# -- the tool list ------------------------------------------------------------------------


async def test_tools_have_annotations_schemas_and_descriptions(agent):
    tools = {t.name: t for t in (await agent.list_tools()).tools}
    assert TOOLS <= set(tools)
    for tool in (tools[name] for name in TOOLS):
        a = tool.annotations
        # destructive/idempotent hints are "meaningful only when readOnlyHint == false" (MCP spec): left out
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (True, None, None, False)
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema and tool.output_schema["type"] == "object"
        for prop in tool.input_schema.get("properties", {}).values():
            assert prop.get("description"), f"{tool.name}: a parameter has no description"
        text = tool.description
        if not tool.name.startswith(("vault_", "obsidian_")):  # the compat tools keep their peers' layout
            assert "\nUse it" in text and "Returns:" not in text, tool.name  # structure: test_tool_list.py
        assert text.split(".")[0].split()[0] in {"List", "Read", "Count", "Show", "Search"}, tool.name


# -- list_documents ------------------------------------------------------------------------


async def test_listing_is_complete_without_limit(agent, demo):
    out = await ok(agent, "list_documents")
    paths = [r["path"] for r in out["result"]]
    assert out["total"] == out["returned"] == len(paths) == 43 and out["next_cursor"] is None
    assert paths == [e.path for e in demo.list(Query()).entries]
    assert paths == sorted(paths)  # code-point order: uppercase first
    assert not any(p.startswith(".") or "/." in p for p in paths)


async def test_listing_meta_reports_index_freshness(agent):
    result = await call(agent, "list_documents", {"limit": 1, "wait_for_pending_writes": True})
    assert result.meta["index_stale"] is False


@pytest.mark.parametrize(
    "folder, expect",
    [
        ("Projects", {"Projects/Atlas Migration.md", "Projects/Archive/Legacy Deploy Script.md"}),
        ("ProjectsOld", {"ProjectsOld/Kanban Experiment.md"}),
        ("", {"index.md", "Getting Started.md", "Café notes.md"}),
    ],
)
async def test_listing_folder_boundary_and_root(agent, folder, expect):
    rows = (await ok(agent, "list_documents", {"folder": folder}))["result"]
    paths = {r["path"] for r in rows}
    assert expect <= paths
    if folder == "Projects":
        assert not any(p.startswith("ProjectsOld/") for p in paths)
    if folder == "":
        assert all("/" not in p for p in paths)


async def test_listing_nonexistent_folder_is_empty(agent):
    out = await ok(agent, "list_documents", {"folder": "No Such Folder"})
    assert out["result"] == [] and out["total"] == 0


async def test_listing_pattern_levels(agent):
    top = {r["path"] for r in (await ok(agent, "list_documents", {"pattern": "Projects/*.md"}))["result"]}
    deep = {r["path"] for r in (await ok(agent, "list_documents", {"pattern": "Projects/**/*.md"}))["result"]}
    everywhere = (await ok(agent, "list_documents", {"pattern": "**/*.md"}))["total"]
    assert top and all(p.count("/") == 1 for p in top)
    assert top < deep and "Projects/Archive/Retired/Q3 2024 Roadmap.md" in deep
    assert everywhere == 43  # ** matches no folder at all too


async def test_listing_okf_filters(agent, demo):
    deprecated = await ok(agent, "list_documents", {"filters": {"status": "deprecated"}})
    assert deprecated["total"] == 7 and all(r["status"] == "deprecated" for r in deprecated["result"])
    stale = await ok(agent, "list_documents", {"filters": {"stale": "true"}})
    assert stale["total"] == 8 and all(r["stale"] is True for r in stale["result"])
    assert (await ok(agent, "list_documents", {"filters": {"stale": True}}))["total"] == 8
    human = await ok(agent, "list_documents", {"filters": {"trust_tier": "human-reviewed"}})
    assert human["total"] == 12
    both = await ok(
        agent, "list_documents", {"filters": {"status": "deprecated", "tags": "archive"}, "folder": "Projects"}
    )
    assert (
        both["total"]
        == len(
            run_query(
                demo.snapshot,
                Query(folder="Projects", filters=(("status", "deprecated"), ("tags", "archive"))),
                demo.clock,
            ).entries
        )
        > 0
    )


async def test_listing_attachments_and_filters_exclude_them(agent):
    rows = (await ok(agent, "list_documents", {"include_attachments": True}))["result"]
    attachments = [r for r in rows if r["kind"] == "attachment"]
    assert {a["path"] for a in attachments} == {
        "Resources/attachments/architecture-diagram.png",
        "Resources/attachments/reading-list.pdf",
    }
    assert {a["mime_type"] for a in attachments} == {"image/png", "application/pdf"}
    filtered = await ok(agent, "list_documents", {"include_attachments": True, "filters": {"status": "stable"}})
    assert all(r["kind"] == "note" for r in filtered["result"])


async def test_listing_pages_with_limit_and_cursor(agent):
    seen, cursor = [], None
    while True:
        args = {"limit": 10, **({"cursor": cursor} if cursor else {})}
        page = await ok(agent, "list_documents", args)
        assert page["total"] == 43 and page["returned"] == len(page["result"]) <= 10
        seen += [r["path"] for r in page["result"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(set(seen)) and len(seen) == 43


@pytest.mark.parametrize(
    "args, needle",
    [
        ({"folder": "/etc"}, "absolute path blocked"),
        ({"folder": "../outside"}, "path traversal blocked"),
        ({"folder": ".obsidian"}, "hidden path blocked"),
        ({"filters": {"stale": "maybe"}}, "use true or false"),
        ({"filters": {"trust_tier": "gold"}}, "is not a tier"),
        ({"cursor": "garbage!!"}, "cursor is not valid"),
        ({"limit": 0}, "limit: Input should be greater than or equal to 1"),
        ({"limit": "many"}, "limit"),
        ({"filters": "status=deprecated"}, "filters"),
        ({"glob": "*.md"}, "unknown argument 'glob'"),
        ({"pattern": "**/" * 40 + "*.md" + "?" * 30}, "wildcards"),
    ],
)
async def test_listing_bad_arguments_are_tool_errors(agent, args, needle):
    assert needle in await error(agent, "list_documents", args)


async def test_cursor_of_another_query_is_refused(agent):
    page = await ok(agent, "list_documents", {"limit": 5})
    text = await error(agent, "list_documents", {"limit": 5, "folder": "Projects", "cursor": page["next_cursor"]})
    assert "different query" in text


# -- read ---------------------------------------------------------------------------------------


async def test_read_whole_note_with_etag(agent, demo):
    out = await ok(agent, "read", {"path": "index.md"})
    data = demo.root_real + "/index.md"
    raw = open(data, "rb").read()
    assert out["etag"] == hashlib.sha256(raw).hexdigest()
    assert out["content"] == raw.decode() and out["truncated"] is False
    assert out["title"] == "Vault map" and out["status"] == "stable" and out["trust_tier"] == "human-reviewed"
    assert out["frontmatter"]["okf_version"] == "0.2"
    assert (out["start_line"], out["end_line"]) == (1, out["total_lines"])


async def test_read_frontmatter_only_section_and_lines(agent):
    fm = await ok(agent, "read", {"path": "index.md", "frontmatter_only": True})
    assert "content" not in fm and fm["frontmatter"]["title"] == "Vault map"
    section = await ok(agent, "read", {"path": "index.md", "section": "Work"})
    assert section["content"].startswith("## Work\n") and "## Workshop" not in section["content"]
    assert section["selection"] == "section" and section["start_line"] == 25
    lines = await ok(agent, "read", {"path": "index.md", "lines": [1, 3]})
    assert lines["content"] == '---\nokf_version: "0.2"\ntitle: Vault map\n'
    assert (lines["start_line"], lines["end_line"]) == (1, 3)


async def test_read_pages_long_content_with_a_marker(agent):
    whole = (await ok(agent, "read", {"path": "index.md"}))["content"]
    parts, offset = [], 0
    while True:
        page = await ok(agent, "read", {"path": "index.md", "max_chars": 400, "offset": offset})
        parts.append(page["content"])
        if not page["truncated"]:
            assert page["next_offset"] is None and "notice" not in page
            break
        assert f"offset={page['next_offset']}" in page["notice"] and "truncated" in page["notice"]
        offset = page["next_offset"]
    assert "".join(parts) == whole and len(parts) > 2


async def test_read_attachment_returns_base64(agent, demo):
    out = await ok(agent, "read", {"path": "Resources/attachments/architecture-diagram.png"})
    raw = open(demo.root_real + "/Resources/attachments/architecture-diagram.png", "rb").read()
    assert out["kind"] == "attachment" and out["mime_type"] == "image/png"
    assert base64.b64decode(out["content_base64"]) == raw
    assert out["etag"] == hashlib.sha256(raw).hexdigest()


@pytest.mark.parametrize(
    "args, needle",
    [
        ({"path": "/etc/passwd"}, "absolute path blocked"),
        ({"path": "../../etc/passwd"}, "path traversal blocked"),
        ({"path": ".obsidian/app.json"}, "hidden path blocked"),
        ({"path": "Projects/.secret.md"}, "hidden path blocked"),
        ({"path": "projects/atlas migration.md"}, "did you mean 'Projects/Atlas Migration.md'"),
        ({"path": "Getting Started"}, "did you mean 'Getting Started.md'"),
        ({"path": "Projects"}, "is a folder"),
        ({"path": "index.md", "section": "Nowhere"}, "section not found"),
        ({"path": "index.md", "lines": [500, 600]}, "has 56 lines"),
        ({"path": "index.md", "lines": [5, 2]}, "is not a range"),
        ({"path": "index.md", "section": "Work", "lines": [1, 2]}, "cannot be combined"),
        ({"path": "index.md", "offset": 10**6}, "past the end"),
        ({"path": "scratch/tmp note.md"}, "not found"),
        ({"path": ""}, "path"),
        ({"path": "a\x00b.md"}, "control character"),
    ],
)
async def test_read_errors_say_what_to_do(agent, args, needle):
    assert needle in await error(agent, "read", args)


# -- triage, folders, tags, links --------------------------------------------------------


async def test_triage_overview_counts(agent, demo):
    out = await ok(agent, "triage")
    stats = demo.stats()
    assert out["counts"]["deprecated"] == stats["status"]["deprecated"] == 7
    assert out["counts"]["stale"] == 8 and out["counts"]["unverified"] == 21
    assert out["counts"]["broken_frontmatter"] == 1 and out["result"] == [] and out["as_of"] == "2026-11-29"


async def test_triage_stale_is_most_overdue_first_and_as_of_matters(agent):
    page = await ok(agent, "triage", {"category": "stale"})
    overdue = [r["overdue_days"] for r in page["result"]]
    assert page["total"] == 8 and overdue == sorted(overdue, reverse=True) and all(d >= 0 for d in overdue)
    earlier = await ok(agent, "triage", {"category": "stale", "as_of": "2025-01-01"})
    assert earlier["as_of"] == "2025-01-01" and earlier["counts"]["stale"] < 8


async def test_triage_broken_links_lists_notes_with_unresolved_links(agent):
    # Obsidian's "unresolved links": a link whose file does not exist; each row names its links,
    # with the problem each is (the TUI's Broken tab's kinds: here notes not yet written) and its line
    page = await ok(agent, "triage", {"category": "broken_links"})
    assert page["category"] == "broken_links" and page["total"] == 2
    rows = {r["path"]: r["broken_links"] for r in page["result"]}
    link = {"kind": "wiki", "heading": None, "alias": None, "missing": "file", "problem": "unwritten"}
    assert rows == {
        "Projects/Archive/Retired/Q3 2024 Roadmap.md": [{"target": "Quarterly OKRs 2027", **link, "line": 17}],
        "Projects/Atlas Migration.md": [{"target": "Vendor Contracts", **link, "line": 57}],
    }
    first = await ok(agent, "triage", {"category": "broken_links", "limit": 1})
    second = await ok(agent, "triage", {"category": "broken_links", "limit": 1, "cursor": first["next_cursor"]})
    assert [r["path"] for r in first["result"] + second["result"]] == sorted(rows)


async def test_triage_categories_page_through(agent):
    for category, total in [
        ("deprecated", 7),
        ("unverified", 21),
        ("machine-confirmed", 10),
        ("human-reviewed", 11),
    ]:  # OKF reserves index.md: not a note to triage
        first = await ok(agent, "triage", {"category": category, "limit": 5})
        assert first["total"] == total and first["returned"] == min(5, total)
        if first["next_cursor"]:
            second = await ok(agent, "triage", {"category": category, "limit": 5, "cursor": first["next_cursor"]})
            assert {r["path"] for r in second["result"]}.isdisjoint(r["path"] for r in first["result"])
    broken = await ok(agent, "triage", {"category": "broken"})
    assert [r["path"] for r in broken["result"]] == ["Inbox/Broken frontmatter.md"]
    assert broken["result"][0]["frontmatter_error"] and broken["skipped"] == []


@pytest.mark.parametrize(
    "args, needle",
    [
        ({"category": "rotten"}, "category"),
        ({"as_of": "yesterday"}, "invalid as-of date"),
    ],
)
async def test_triage_errors(agent, args, needle):
    assert needle in await error(agent, "triage", args)


async def test_list_folders(agent):
    top = (await ok(agent, "list_folders", {"folder": ""}))["result"]
    by_path = {r["path"]: r for r in top}
    assert "Projects" in by_path and all("/" not in p for p in by_path)
    assert by_path["Projects"]["notes"] == 7 and by_path["Projects"]["subfolders"] == 1
    under = [r["path"] for r in (await ok(agent, "list_folders", {"folder": "Areas", "recursive": False}))["result"]]
    assert under == ["Areas/Craft", "Areas/Engineering", "Areas/Health", "Areas/Team"]
    assert "hidden path blocked" in await error(agent, "list_folders", {"folder": ".git"})


async def test_list_folders_combines_folder_and_recursive_as_its_description_says(agent):
    """list_folders' description: folder="X" gives every folder below X, recursive=false its direct
    subfolders only, "" the top level either way; rows in path order; each path works as a folder."""
    below = [r["path"] for r in (await ok(agent, "list_folders", {"folder": "Areas"}))["result"]]
    assert "Areas/Craft/Woodworking/Projects" in below and "Areas" not in below
    assert all(p.startswith("Areas/") for p in below) and below == sorted(below)
    direct = [r["path"] for r in (await ok(agent, "list_folders", {"folder": "Areas", "recursive": False}))["result"]]
    assert set(direct) < set(below) and all(p.count("/") == 1 for p in direct)
    for recursive in (True, False):
        top = [r["path"] for r in (await ok(agent, "list_folders", {"folder": "", "recursive": recursive}))["result"]]
        assert top and all("/" not in p for p in top) and top == sorted(top)
    listed = await ok(agent, "list_documents", {"folder": below[0]})
    assert listed["result"] and all(r["path"].startswith(below[0] + "/") for r in listed["result"])


async def test_get_links_of_an_attachment_lists_its_backlinks(agent):
    """get_links' path parameter says it takes an attachment too (backlinks only)."""
    out = await ok(agent, "get_links", {"path": "Resources/attachments/reading-list.pdf"})
    assert out["outgoing"] == [] and out["backlinks"] == ["Resources/Reading List.md"]


async def test_list_tags(agent):
    out = await ok(agent, "list_tags")
    counts = [r["count"] for r in out["result"]]
    assert counts == sorted(counts, reverse=True) and out["total"] == len(out["result"])
    ops = await ok(agent, "list_tags", {"prefix": "#ops"})
    assert {r["tag"] for r in ops["result"]} >= {"ops", "ops/oncall"}
    assert all(r["tag"].startswith("ops") for r in ops["result"])
    assert len((await ok(agent, "list_tags", {"limit": 2}))["result"]) == 2


async def test_list_tags_and_list_documents_parameters_do_what_their_descriptions_say(agent):
    """list_tags: ties by name, prefix may start with '#', folder and prefix combine, a nested tag counts
    as itself. list_documents: folder and pattern combine, pattern matching the whole vault-relative path."""
    rows = (await ok(agent, "list_tags"))["result"]
    keys = [(-r["count"], r["tag"]) for r in rows]
    assert keys == sorted(keys)
    notes = (await ok(agent, "list_documents", {"limit": 100000}))["result"]

    def carrying(tag, folder=""):
        return sum(
            1 for n in notes if n["path"].startswith(folder) and tag in {t.casefold() for t in n.get("tags") or ()}
        )

    by_tag = {r["tag"].casefold(): r["count"] for r in rows}
    assert (
        "ops/oncall" in by_tag and by_tag["ops"] == carrying("ops") and by_tag["ops/oncall"] == carrying("ops/oncall")
    )
    assert (await ok(agent, "list_tags", {"prefix": "#ops"}))["result"] == (
        await ok(agent, "list_tags", {"prefix": "ops"})
    )["result"]
    scoped = (await ok(agent, "list_tags", {"folder": "Areas", "prefix": "ops"}))["result"]
    assert scoped
    assert {r["tag"].casefold(): r["count"] for r in scoped} == {
        t: carrying(t, "Areas/") for t in by_tag if t.startswith("ops") and carrying(t, "Areas/")
    }
    both = (await ok(agent, "list_documents", {"folder": "Projects", "pattern": "Projects/Archive/**"}))["result"]
    assert both and all(r["path"].startswith("Projects/Archive/") for r in both)
    assert (await ok(agent, "list_documents", {"folder": "Projects", "pattern": "Archive/**"}))["result"] == []


async def test_get_links(agent):
    out = await ok(agent, "get_links", {"path": "index.md"})
    resolved = {o["target"]: o["resolved"] for o in out["outgoing"]}
    assert resolved["Getting Started"] == "Getting Started.md"
    assert resolved["Atlas Migration"] == "Projects/Atlas Migration.md"
    assert all(b["resolved"] is None for b in out["broken"])
    back = await ok(agent, "get_links", {"path": "Getting Started.md"})
    assert "index.md" in back["backlinks"]
    assert "not found" in await error(agent, "get_links", {"path": "nope.md"})


# -- compatibility tools -----------------------------------------------------------------


async def test_vault_list_notes_contract(agent):
    async def paths(args):
        result = await call(agent, "vault_list_notes", args)
        assert not result.is_error, result.content[0].text
        listed = json.loads(result.content[0].text)
        assert isinstance(listed, list) and result.structured_content == {"result": listed}
        return listed

    everything = await paths({})
    assert len(everything) == 43 and everything == sorted(everything)
    assert everything.index("Café notes.md") < everything.index("index.md")  # uppercase before lowercase
    projects = await paths({"folder": "Projects"})
    assert "Projects/Archive/Legacy Deploy Script.md" in projects
    assert not any(p.startswith("ProjectsOld") for p in projects)
    assert await paths({"folder": "Projects", "glob": "*.md"}) == [
        "Projects/Atlas Migration.md",
        "Projects/Bold Ideas Spec.md",
        "Projects/Onboarding Revamp.md",
        "Projects/Search Relevance v2.md",
    ]
    assert set(await paths({"folder": "Projects", "glob": "**/*.md"})) == set(projects)
    assert await paths({"glob": "**/Weekly Review 47.md"}) == ["Journal/2026/Weekly Review 47.md"]
    assert await paths({"folder": "projects"}) == []  # case-sensitive
    assert await paths({"folder": "Nowhere"}) == []
    assert await paths({"glob": "*.MD"}) == []


@pytest.mark.parametrize(
    "folder, message",
    [
        ("/Projects", "absolute path blocked"),
        ("../vault", "path traversal blocked"),
        (".", "path traversal blocked"),
        (".obsidian", "hidden path blocked"),
    ],
)
async def test_vault_list_notes_path_errors(agent, folder, message):
    assert message in await error(agent, "vault_list_notes", {"folder": folder})


async def test_obsidian_list_notes_json_and_markdown(agent):
    result = await call(agent, "obsidian_list_notes", {"params": {"folder": "Projects", "response_format": "json"}})
    data = json.loads(result.content[0].text)
    assert result.structured_content == {"result": result.content[0].text}
    assert data["folder"] == "Projects" and data["backend"] == "filesystem" and data["count"] == len(data["entries"])
    entries = {e["path"]: e for e in data["entries"]}
    assert entries["Projects/Archive"]["is_folder"] is True and entries["Projects/Archive"]["size_bytes"] == 0
    assert entries["Projects/Atlas Migration.md"]["is_folder"] is False
    assert "Projects/Archive/Legacy Deploy Script.md" not in entries  # not recursive by default
    assert set(entries["Projects/Atlas Migration.md"]) == {"path", "is_folder", "size_bytes", "modified_at"}
    deep = json.loads(
        (
            await call(
                agent,
                "obsidian_list_notes",
                {"params": {"folder": "Projects", "recursive": True, "response_format": "json"}},
            )
        )
        .content[0]
        .text
    )
    assert "Projects/Archive/Retired/Q3 2024 Roadmap.md" in {e["path"] for e in deep["entries"]}
    root = json.loads(
        (await call(agent, "obsidian_list_notes", {"params": {"response_format": "json"}})).content[0].text
    )
    assert {"index.md", "Projects"} <= {e["path"] for e in root["entries"]}
    everything = json.loads(
        (await call(agent, "obsidian_list_notes", {"params": {"recursive": True, "response_format": "json"}}))
        .content[0]
        .text
    )
    assert sum(not e["is_folder"] for e in everything["entries"]) == 43
    markdown = (await call(agent, "obsidian_list_notes", {"params": {"folder": "Projects"}})).content[0].text
    assert markdown.startswith("# Projects") and "- Projects/Archive/ (folder)" in markdown


@pytest.mark.parametrize(
    "params, needle",
    [
        ({"folder": "../x"}, "path traversal blocked"),
        ({"folder": ".trash"}, "hidden path blocked"),
        ({"response_format": "xml"}, "'markdown' or 'json'"),
    ],
)
async def test_obsidian_list_notes_errors_are_error_text(agent, params, needle):
    assert needle in await error(agent, "obsidian_list_notes", {"params": params})


# -- search --------------------------------------------------------------------------------


async def test_search_ranks_with_snippets_and_scopes_like_listing(agent):
    out = await ok(agent, "search", {"query": "Atlas"})
    paths = [h["path"] for h in out["result"]]
    assert paths and paths[0] == "Projects/Atlas Migration.md" and out["returned"] == len(paths)
    assert "**" in out["result"][0]["snippet"] and out["result"][0]["status"] is not None
    # one copy of the snippet per hit: the ** marks are the matches (no plain twin, no offsets)
    assert not {"snippet_plain", "highlights"} & {k for h in out["result"] for k in h}
    scores = [h["score"] for h in out["result"]]
    assert scores == sorted(scores, reverse=True)
    scoped = await ok(agent, "search", {"query": "Atlas", "folder": "Projects"})
    assert scoped["result"] and all(h["path"].startswith("Projects/") for h in scoped["result"])
    deprecated = await ok(agent, "search", {"query": "deploy", "filters": {"status": "deprecated"}})
    assert all(h["status"] == "deprecated" for h in deprecated["result"])


@pytest.mark.parametrize("query", ['"unbalanced', "NEAR(", "*", "'; DROP TABLE notes; --", "a OR", ")(", "tag:x"])
async def test_search_survives_hostile_queries(agent, query):
    result = await call(agent, "search", {"query": query})
    assert "Traceback" not in result.content[0].text and "sqlite" not in result.content[0].text.lower()
    if result.is_error:
        assert result.content[0].text.startswith("Error: ")


async def test_search_errors(agent):
    assert "Error: " in await error(agent, "search", {"query": "-only -excluded"})
    assert "hidden path blocked" in await error(agent, "search", {"query": "x", "folder": ".git"})
