"""Every answer fits an agent's budget: on a 20,000-note vault, through the real server on its socket,
with the real Python client and the official TypeScript SDK client (over `vaultwatch bridge`).

- a call that does not size itself (no limit / max_chars) answers at most the server's budget
  of text (default 64 KiB), with `total` and `next_cursor`;
- following next_cursor returns every row exactly once, in code-point order of path (seed 000);
- no answer passes the hard cap (2 MiB of text, far under the TS SDK's 10 MiB message limit),
  whatever the arguments: asking for more is an error that says so.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
import subprocess
import tempfile

import pytest
import pytest_asyncio
from mcp_testing import CLIENT_DIR, VAULTWATCH, in_own_task, serving, uds_client

from vaultwatch.core.clock import FixedClock
from vaultwatch.core.disk.vaultlock import holder
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import budget
from vaultwatch.mcp_server.results import tabled

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("big_vault")]  # one 20k build

NOTES = 20_000
BUDGET = budget.DEFAULT_ANSWER_BYTES


def note_path(i: int) -> str:
    return f"Area {i % 40:02d}/Topic {i % 7}/Note {i:05d}.md"


@pytest.fixture(scope="module")
def big_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, list[str]]:
    """20,000 notes in 280 folders, each linking to index.md, which links to every note."""
    root = tmp_path_factory.mktemp("big") / "vault"
    paths = [note_path(i) for i in range(NOTES)]
    for folder in {p.rsplit("/", 1)[0] for p in paths}:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for i, rel in enumerate(paths):
        (root / rel).write_text(
            f"---\ntitle: Note {i} about café ✓\nstatus: {('draft', 'stable')[i % 2]}\n"
            f"tags: [t{i % 300}, area{i % 40}]\n---\n# Note {i}\n\nSee [[index]].\n",
            encoding="utf-8",
        )
    links = "\n".join(f"- [[{p[:-3]}]]" for p in paths)
    (root / "index.md").write_text(f"---\ntitle: Index\n---\n# Index\n\n{links}\n", encoding="utf-8")
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    vault.load()
    return vault, sorted([*paths, "index.md"])


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def big_server(big_vault):
    folder = tempfile.mkdtemp(prefix="vwb", dir="/tmp")
    try:
        async with serving(big_vault[0], folder + "/v.sock") as host:
            async with in_own_task(uds_client(host.socket_path)) as client:
                yield host, client
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def text_bytes(result) -> int:
    return len(result.content[0].text.encode("utf-8"))


async def test_a_first_search_reports_the_index_build_as_progress(big_vault, tmp_path, env):
    """20,000 notes take seconds to index for full-text search: through `vaultwatch serve --stdio`, a
    client that sent a progress token hears how far the build got (it used to wait in silence, then
    get 'still building'), and a client that set a log level gets the call's log lines.
    (The socket answers plain JSON, which has no room for notifications: see mcp_server/progress.py.)"""
    from mcp import Client, StdioServerParameters
    from mcp_testing import ROOT

    heard: list[tuple[float, float | None, str | None]] = []
    logged: list = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async def on_log(params) -> None:
        logged.append(params)

    # one server per vault: this test comes first in the module, before big_server serves the vault, so
    # the child serves the vault itself (its cache is its own: a first start); a copy of 20,000 notes
    # (many seconds on a busy machine) only when the test runs after big_server started all the same
    root = big_vault[0].root
    if holder(big_vault[0].root_real) is not None:
        root = tmp_path / "copy"
        await asyncio.to_thread(shutil.copytree, big_vault[0].root, root)
    params = StdioServerParameters(
        command=VAULTWATCH[0],
        cwd=str(ROOT),
        args=[*VAULTWATCH[1:], "serve", str(root), "--stdio", "--as-of", "2026-11-29"],
        env=env,  # its cache and state in this test's folders, never the user's
    )
    async with Client(params, mode="legacy", logging_callback=on_log) as client:
        capabilities = client.server_capabilities
        await client.set_logging_level("debug")
        result = await client.call_tool("search", {"query": "café"}, progress_callback=on_progress)
    assert capabilities.logging is not None
    assert heard, "no progress notification during the first search"
    assert [p for p, _, _ in heard] == sorted({p for p, _, _ in heard})  # strictly increasing
    assert any(total == NOTES + 1 and "full-text index" in (message or "") for _, total, message in heard), heard[-8:]
    if result.is_error:
        assert "still building" in result.content[0].text
    else:
        assert result.structured_content["result"]
    assert any("search:" in str(entry.data) and entry.level == "debug" for entry in logged)


async def test_list_documents_default_pages_fit_the_budget_and_cover_every_path_once(big_server, big_vault):
    _, client = big_server
    seen: list[str] = []
    cursor, pages = None, 0
    while True:
        result = await client.call_tool("list_documents", {"cursor": cursor} if cursor else {})
        assert not result.is_error, result.content[0].text
        out = result.structured_content
        assert json.loads(result.content[0].text) == tabled(out)  # the same data, its rows as a table
        assert text_bytes(result) <= BUDGET
        assert out["total"] == NOTES + 1 and out["returned"] == len(out["result"]) > 0
        seen += [row["path"] for row in out["result"]]
        pages += 1
        cursor = out["next_cursor"]
        if cursor is None:
            break
    assert seen == big_vault[1]  # every path exactly once, in code-point order
    assert pages > 20


async def test_a_page_the_caller_sizes_may_pass_the_budget_but_never_the_hard_cap(big_server):
    _, client = big_server
    result = await client.call_tool("list_documents", {"limit": 1000})
    assert not result.is_error and result.structured_content["returned"] == 1000
    assert BUDGET < text_bytes(result) < budget.HARD_ANSWER_BYTES
    result = await client.call_tool("list_documents", {"limit": 20_001, "include_frontmatter": True})
    assert result.is_error
    text = result.content[0].text
    assert "over the 2,097,152 bytes one answer may hold" in text and "10 MiB" in text and "limit=" in text
    fits = int(text.split("pass limit=")[1].split()[0])
    again = await client.call_tool("list_documents", {"limit": fits, "include_frontmatter": True})
    assert not again.is_error and text_bytes(again) <= budget.HARD_ANSWER_BYTES


async def test_every_read_tool_answers_within_the_budget_by_default(big_server):
    _, client = big_server
    calls = {
        "list_documents": {"include_frontmatter": True, "folder": "Area 01"},
        "list_folders": {},
        "list_tags": {},
        "triage": {"category": "broken"},
        "read": {"path": "index.md"},
        "get_links": {"path": "index.md"},
        "search": {"query": "café"},
    }
    assert await asyncio.to_thread(big_server[0].vault.wait_search_ready, 300)  # search answers, not "building"
    for name, args in calls.items():
        result = await client.call_tool(name, args)
        assert not result.is_error, (name, result.content[0].text)
        assert text_bytes(result) <= BUDGET, name
    read = (await client.call_tool("read", {"path": "index.md"})).structured_content
    assert read["truncated"] and read["next_offset"] == len(read["content"])
    links = (await client.call_tool("get_links", {"path": "index.md"})).structured_content
    assert links["truncated"]["backlinks"] == NOTES and 0 < len(links["backlinks"]) < NOTES


async def test_list_tags_and_list_folders_page_with_a_cursor(big_server):
    _, client = big_server
    for tool, key, total in (("list_tags", "tag", 340), ("list_folders", "path", 320)):
        seen, cursor = [], None
        while True:
            out = (
                await client.call_tool(tool, {"limit": 50, **({"cursor": cursor} if cursor else {})})
            ).structured_content
            assert out["total"] == total, tool
            seen += [row[key] for row in out["result"]]
            cursor = out["next_cursor"]
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == total, tool
        whole = (await client.call_tool(tool, {"limit": 1000})).structured_content["result"]
        assert seen == [row[key] for row in whole], tool


async def test_a_compat_listing_keeps_its_unpaged_contract_within_the_hard_cap(big_server, big_vault):
    """The compat tools keep their seeds' contracts (seed 001: one JSON array of every path; seed 003: one
    text of every entry, with its count), which have no cursor: no default page cuts them, and the hard cap
    keeps any answer within what a TS SDK client accepts (past it, an error that names list_documents)."""
    _, client = big_server
    result = await client.call_tool("vault_list_notes", {})
    assert not result.is_error
    assert json.loads(result.content[0].text) == big_vault[1]
    assert text_bytes(result) < budget.HARD_ANSWER_BYTES
    whole = await client.call_tool("obsidian_list_notes", {"params": {"recursive": True, "response_format": "json"}})
    assert whole.is_error  # 2.5 MB of JSON for 20,001 notes and their folders: a clear error, the session lives on
    assert "over the 2,097,152 bytes" in whole.content[0].text and "10 MiB" in whole.content[0].text
    assert "list_documents" in whole.content[0].text
    part = await client.call_tool(
        "obsidian_list_notes", {"params": {"folder": "Area 01", "recursive": True, "response_format": "json"}}
    )
    out = json.loads(part.content[0].text)
    assert [e["path"] for e in out["entries"] if not e["is_folder"]] == [
        p for p in big_vault[1] if p.startswith("Area 01/")
    ]
    assert out["count"] == len(out["entries"]) and text_bytes(part) < budget.HARD_ANSWER_BYTES


async def test_typescript_sdk_client_pages_the_whole_big_vault_through_the_bridge(
    ts_sdk,
    big_server,  # noqa: F811
    big_vault,
):
    host, _ = big_server
    proc = await asyncio.create_subprocess_exec(
        str(ts_sdk),
        "page_loop.mjs",
        "list_documents",
        "{}",
        *VAULTWATCH,
        "bridge",
        "--socket",
        host.socket_path,
        cwd=str(CLIENT_DIR),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert out.strip(), f"the client wrote no report (exit {proc.returncode}): {err.decode()[-2000:]}"
    report = json.loads(out)
    assert report["ok"], report.get("error") or err.decode()[-2000:]
    assert report["paths"] == big_vault[1]
    assert max(report["textBytes"]) <= BUDGET and report["pages"] > 20
    assert set(report["totals"]) == {NOTES + 1}


async def test_the_budget_is_a_server_option_and_bounded_by_the_hard_cap(demo):
    from mcp import Client

    from vaultwatch.mcp_server.server import build_server

    for bad in (100, budget.HARD_ANSWER_BYTES + 1):
        with pytest.raises(ValueError, match="--max-answer-bytes must be between 4096 and 2097152"):
            build_server(demo, max_answer_bytes=bad)
    server, _ = build_server(demo, max_answer_bytes=4096, extra_tools=[])
    async with Client(server) as client:
        whole = (await client.call_tool("list_documents", {"limit": 1000})).structured_content["result"]
        seen, cursor, pages = [], None, 0
        while True:
            result = await client.call_tool("list_documents", {"cursor": cursor} if cursor else {})
            assert text_bytes(result) <= 4096
            out = result.structured_content
            seen += out["result"]
            pages, cursor = pages + 1, out["next_cursor"]
            if cursor is None:
                break
    assert seen == whole and pages > 1


async def test_search_pages_are_cut_to_the_budget_and_resume_at_the_next_hit(make_vault, open_vault):
    """A search the caller does not size is cut to the server's budget with a next_cursor that resumes at the
    next hit: following it gives every hit once, in rank order (the same as one big page the caller sized);
    a page the caller sizes may pass the budget, never the hard cap."""
    from mcp import Client

    from vaultwatch.mcp_server.server import build_server

    files = {
        f"Topic {i % 5}/Note {i:03d}.md": f"---\ntitle: Harbour note {i} {'x' * (i % 40)}\ntags: [t{i % 7}]\n---\n"
        f"# Note {i}\n\nThe harbour {'and the harbour ' * (i % 3)}log, entry {i}, with words about boats.\n"
        for i in range(120)
    }
    vault = open_vault(make_vault(files))
    server, _ = build_server(vault, max_answer_bytes=4096, extra_tools=[])
    async with Client(server) as client:
        whole = await client.call_tool("search", {"query": "harbour", "limit": 1000})
        assert not whole.is_error, whole.content[0].text
        assert text_bytes(whole) > 4096 and whole.structured_content["returned"] == 120
        seen, cursor, pages = [], None, 0
        while True:
            result = await client.call_tool("search", {"query": "harbour", **({"cursor": cursor} if cursor else {})})
            assert not result.is_error, result.content[0].text
            out = result.structured_content
            assert text_bytes(result) <= 4096 and out["returned"] == len(out["result"]) > 0
            assert json.loads(result.content[0].text) == tabled(out) and out["total"] == 120
            seen += [hit["path"] for hit in out["result"]]
            pages, cursor = pages + 1, out["next_cursor"]
            if cursor is None:
                break
        sized = await client.call_tool("search", {"query": "harbour", "limit": 7})
    assert seen == [hit["path"] for hit in whole.structured_content["result"]]  # every hit once, in rank order
    assert pages > 120 // 20  # more pages than 20 hits each would take: the budget cut them
    assert sized.structured_content["returned"] == 7


async def test_serve_refuses_a_budget_past_the_hard_cap(demo_vault):
    done = await asyncio.to_thread(
        subprocess.run,
        [*VAULTWATCH, "serve", str(demo_vault), "--stdio", "--max-answer-bytes", "99999999"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "--max-answer-bytes must be between" in done.stderr


async def test_get_links_of_a_note_of_ten_thousand_links_measures_only_what_fits(tmp_path, sock_dir, monkeypatch):
    """Issue 13 (bounded work per call): the answer of get_links on a note of 10,000 links keeps
    ~400 of them; cutting it measured every link's JSON twice (~20,000 encodings, ~100 ms of the
    interpreter per call, with every other agent waiting for it). It now measures each list only
    until it passes the room, and keeps the same links."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "links.md").write_text("".join(f"[[t{i}]] " for i in range(330_000)))  # indexed: its first 10,000
    vault = Vault(root, cache=False)
    vault.load()
    encodings = []
    real = budget.encoded
    monkeypatch.setattr(budget, "encoded", lambda value: encodings.append(1) or real(value))
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("get_links", {"path": "links.md"})
    links = result.structured_content
    assert not result.is_error and links["truncated"] == {"outgoing": 10_000, "broken": 10_000}
    assert 0 < len(links["outgoing"]) == len(links["broken"]) < 1_000
    assert [row["target"] for row in links["outgoing"][:3]] == ["t0", "t1", "t2"]
    assert len(encodings) < 2_000, f"{len(encodings)} encodings to keep {len(links['outgoing'])} links"
