"""The activity panel's Results count of every tool's call, against what the call's answer carries:
the rows of a listing, the note of a read, the links of get_links, the changes of history, the
paths a write changed, and nothing for an answer that carries no rows (triage's overview is
counts: a 0 there read as "found nothing"). Every tool of the server's list is called: a new tool
without a case here fails the test."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_testing import serving, uds_client

from tests.conftest import demo_vault_path
from vaultwatch.core.events import AgentAccess
from vaultwatch.core.vault import Vault

Answer = dict[str, Any]


def returned(answer: Answer) -> int:
    return answer["returned"]


def changed(answer: Answer) -> int:
    return len(answer["changed_paths"])


# each tool's call, in an order that keeps every call valid (the writes make, change, move and
# remove one note), and how many rows its answer carries (None: it carries none)
CASES: list[tuple[str, dict[str, Any], Callable[[Answer], int | None]]] = [
    ("list_documents", {"folder": "Projects"}, returned),
    ("read", {"path": "index.md"}, lambda a: 1),
    ("triage", {}, lambda a: None),
    ("triage", {"category": "stale"}, returned),
    ("triage", {"category": "broken_links"}, returned),
    ("list_folders", {}, returned),
    ("list_tags", {}, returned),
    ("get_links", {"path": "index.md"}, lambda a: len(a["outgoing"]) + len(a["backlinks"])),
    ("search", {"query": "deploy"}, returned),
    ("similar", {"path": "index.md"}, returned),
    ("vault_list_notes", {}, lambda a: len(a["result"])),
    (
        "obsidian_list_notes",
        {"params": {"folder": "Projects", "response_format": "json"}},
        lambda a: json.loads(a["result"])["count"],
    ),
    ("write", {"path": "Inbox/counted.md", "content": "# Counted\n"}, changed),
    ("edit", {"path": "Inbox/counted.md", "old_text": "Counted", "new_text": "Counted twice"}, changed),
    ("update_frontmatter", {"path": "Inbox/counted.md", "set": {"status": "draft"}}, changed),
    ("rename", {"path": "Inbox/counted.md", "new_path": "Inbox/moved.md"}, changed),
    ("history", {"path": "Inbox/moved.md"}, lambda a: len(a["changes"])),
    ("delete", {"path": "Inbox/moved.md"}, changed),
]


async def test_every_tools_results_count_is_what_its_answer_carries(tmp_path: Path, sock_dir: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(demo_vault_path(), root, symlinks=True)
    vault = Vault(root)
    vault.load()
    seen: list[AgentAccess] = []
    vault.bus.subscribe(lambda e: seen.append(e) if isinstance(e, AgentAccess) else None)
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path, name="counter") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert listed == {name for name, _, _ in CASES}, "a tool without a case here: add one"
        wrong = []
        for name, arguments, rows in CASES:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            [event] = seen[-1:]
            assert event.tool == name
            want = rows(result.structured_content)
            if want is not None:
                assert want > 0, (name, "a case must return rows to tell a count from none")
            if event.result_count != want:
                wrong.append((name, arguments, event.result_count, want))
    assert not wrong, wrong
