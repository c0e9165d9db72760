"""A listing page's two forms, through the real server on its socket and the real client: the text's table
(answers.py) says the same rows as the structured content on every page, with a column for every key any
row has (notes with broken YAML carry `frontmatter_error`, the others do not), after a note changes too;
and a default page makes only the rows it can carry, not every row core returned for it."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.core.clock import FixedClock
from vaultwatch.core.serialize import RowCache
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import answers, budget
from vaultwatch.mcp_server.readcalls import list_documents

NOTES = 600
BROKEN_EVERY = 7  # most pages hold a broken-YAML note, rarely as their first row


def make_vault(root) -> Vault:
    for i in range(NOTES):
        path = root / f"Area {i % 3}" / f"Note {i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        front = "title: [unclosed\n" if i % BROKEN_EVERY == 3 else f'title: Harbour "{i}" \\ log\ntags: [t{i}]\n'
        path.write_text(f"---\n{front}---\n# Note {i}\n\nbody {i}\n", encoding="utf-8")
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    vault.load()
    return vault


def check_page(result) -> list[dict]:
    """The page's rows, once its text's table is checked against them."""
    assert not result.is_error, result.content[0].text
    rows = result.structured_content["result"]
    text = json.loads(result.content[0].text)
    table = text["result"]
    assert table["rows"] == [[row.get(c) for c in table["columns"]] for row in rows]
    for row in rows:
        assert set(row) <= set(table["columns"]), (row["path"], table["columns"])
    assert {k: v for k, v in text.items() if k != "result"} == {
        k: v for k, v in result.structured_content.items() if k != "result"
    }
    return rows


async def whole_listing(client, **arguments) -> tuple[list[dict], int]:
    rows, cursor, pages = [], None, 0
    while True:
        result = await client.call_tool("list_documents", {**arguments, **({"cursor": cursor} if cursor else {})})
        rows.extend(check_page(result))
        pages += 1
        cursor = result.structured_content.get("next_cursor")
        if not cursor:
            return rows, pages


async def test_every_page_says_the_same_rows_in_its_text_and_its_structured_content(tmp_path, sock_dir):
    vault = make_vault(tmp_path / "vault")
    try:
        async with serving(vault, sock_dir / "v.sock", max_answer_bytes=8 * 1024) as host:
            async with uds_client(host.socket_path) as client:
                rows, pages = await whole_listing(client)
    finally:
        vault.stop()
    assert pages > 5
    assert [r["path"] for r in rows] == sorted(r["path"] for r in rows)  # in order, each once
    assert len({r["path"] for r in rows}) == NOTES
    assert sum("frontmatter_error" in r for r in rows) == len(range(3, NOTES, BROKEN_EVERY))


async def test_a_changed_note_is_listed_as_it_is_now_in_both_forms(tmp_path, sock_dir):
    vault = make_vault(tmp_path / "vault")
    try:
        async with serving(vault, sock_dir / "v.sock", max_answer_bytes=8 * 1024) as host:
            async with uds_client(host.socket_path) as client:
                before, _ = await whole_listing(client, folder="Area 1")
                note = "Area 1/Note 0001.md"
                assert next(r for r in before if r["path"] == note)["title"] == 'Harbour "1" \\ log'
                done = await client.call_tool(
                    "write",
                    {"path": note, "content": "---\ntitle: [now broken\n---\nrenamed\n", "overwrite": True},
                )
                assert not done.is_error, done.content[0].text
                after, _ = await whole_listing(client, folder="Area 1", wait_for_pending_writes=True)
    finally:
        vault.stop()
    row = next(r for r in after if r["path"] == note)
    assert row["title"] != 'Harbour "1" \\ log' and "frontmatter_error" in row
    assert [r["path"] for r in after] == [r["path"] for r in before]


@pytest.mark.parametrize("frontmatter", [False, True])
def test_a_default_page_makes_only_the_rows_it_carries(tmp_path, frontmatter):
    vault = make_vault(tmp_path / "vault")
    try:
        cache = RowCache()
        answer = list_documents(
            vault, cache, budget.DEFAULT_ANSWER_BYTES, answers.listing_answer, include_frontmatter=frontmatter
        )
    finally:
        vault.stop()
    returned = answer.structured["returned"]
    assert budget.default_rows(budget.DEFAULT_ANSWER_BYTES) > NOTES  # core returned every note for the page
    assert answer.structured["total"] == NOTES and returned < NOTES // 4
    # rows made: the page's, those of the batch it ends in, and one of each row shape (for the columns)
    assert returned <= len(cache) < NOTES // 2
