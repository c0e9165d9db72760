"""The stdio front makes the next listing page's rows while the client reads a page (earlycalls.py): the
rows are only kept, each checked against the index again when its page is made, so every page is what
a server that makes nothing ahead answers, also when a note of the next page changed in between; and
making them ahead stops as soon as a call comes."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import threading
import time
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp_testing import ROOT
from test_listing_page_cost import make_vault

from vaultwatch.core.query.listing import Query
from vaultwatch.core.serialize import RowCache
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import answers, earlycalls, readcalls, splice
from vaultwatch.mcp_server.activity import Activity
from vaultwatch.mcp_server.earlycalls import EarlyCalls

BUDGET = 4096  # a small answer budget: the test vault's listing is many pages


def made_now(vault, arguments: dict) -> dict:
    """The page as a front that makes nothing ahead answers it now: a fresh row cache, the same functions."""
    parked: dict = {}
    token = splice.enable(parked)
    try:
        answer = readcalls.list_documents(vault, RowCache(), BUDGET, answers.listing_answer, **arguments)
    finally:
        splice.reset(token)
    return json.loads(splice.fill(answers.wire_json(answers.wire_result(answer)).encode(), parked))


def until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_the_next_page_is_made_ahead_and_checked_again_when_it_is_served(tmp_path):
    vault = make_vault(tmp_path / "vault", seed=7)
    try:
        calls = EarlyCalls(vault, Activity(vault.bus, session="s"), max_answer_bytes=BUDGET)
        page = walker(calls)
        first = page(0, {})
        assert first == made_now(vault, {})
        cursor = first["structuredContent"]["next_cursor"]
        until(lambda: calls.made_ahead == 1)  # nothing waits: the worker made the next page, rows first
        rows_before = len(calls.row_cache)
        assert rows_before >= len(first["structuredContent"]["result"]) + calls.warmed

        # a note of the next page changes after its row was made ahead, before the client asks for the page
        ahead = vault.list(Query(limit=5, cursor=cursor)).entries[0]
        assert ahead.kind == "note"
        disk = tmp_path / "vault" / ahead.path
        disk.write_text("---\ntitle: changed after it was made ahead\n---\nnew body\n", encoding="utf-8")
        os.utime(disk, (time.time() + 5, time.time() + 5))  # another mtime, whatever the clock's grain
        vault.refresh_paths([ahead.path])
        second = page(1, {"cursor": cursor})
        assert second == made_now(vault, {"cursor": cursor})
        row = second["structuredContent"]["result"][0]
        assert row["path"] == ahead.path and row["title"] == "changed after it was made ahead"

        assert calls.served_ahead == 0  # the page made ahead was not the answer any more

        # the rest of the walk, frontmatter too: every page as made now
        for frontmatter in (False, True):
            arguments: dict = {"include_frontmatter": frontmatter}
            for i in range(2, 200):
                got = page(i, arguments)
                assert got == made_now(vault, arguments)
                cursor = got["structuredContent"].get("next_cursor")
                if not cursor:
                    break
                arguments = {"include_frontmatter": frontmatter, "cursor": cursor}
            else:
                raise AssertionError("the walk never ended")
        assert calls.idle.wait(5)
        assert calls.served_ahead > 0  # nothing changed in between: pages made ahead were served
    finally:
        vault.stop()


class Clock:
    """A clock the test moves."""

    def __init__(self, at: dt.datetime) -> None:
        self.at = at

    def now(self) -> dt.datetime:
        return self.at

    def today(self) -> dt.date:
        return self.at.date()


def bundle(root: Path, notes: int) -> None:
    """An OKF bundle whose notes go stale at instants a minute apart, from noon on 2026-11-29."""
    root.mkdir(parents=True)
    (root / "index.md").write_text('---\nokf_version: "0.2"\n---\n# Index\n', encoding="utf-8")
    for i in range(notes):
        at = dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC) + dt.timedelta(minutes=i)
        text = f"---\nstatus: stable\nstale_after: {at.strftime('%Y-%m-%dT%H:%M:%SZ')}\n---\n# n{i}\n" + "x" * 300
        (root / f"n{i:03d}.md").write_text(text, encoding="utf-8")


def walker(calls: EarlyCalls, audit: list | None = None):
    """`page(i, arguments)`: a list_documents call taken by `calls` as request `i`, and its answer (once its
    AgentAccess event is in `audit`, when one is given)."""
    sent: list[dict] = []
    answered = threading.Semaphore(0)

    def send(_id_text: str, data: bytes) -> None:
        sent.append(json.loads(data))
        answered.release()

    def page(i: int, arguments: dict) -> dict:
        assert calls.take({"name": "list_documents", "arguments": arguments}, str(i), "agent/1", send, id)
        assert answered.acquire(timeout=30)
        if audit is not None:
            until(lambda: len(audit) > i)  # published before the next call is taken
        return sent[-1]

    return page


def test_a_page_made_ahead_is_not_served_once_a_note_on_it_went_stale(tmp_path):
    """In an OKF bundle a row says whether its note is stale as of the clock: a page made ahead is served
    only while no note of it has passed its stale instant; then it is made again. Every call is published
    with the paths its page listed, whether it was made ahead or not."""
    from vaultwatch.core.events import AgentAccess

    bundle(tmp_path / "vault", 60)
    clock = Clock(dt.datetime(2026, 11, 29, 0, tzinfo=dt.UTC))
    vault = Vault(tmp_path / "vault", clock=clock, cache=False)
    vault.load()
    assert vault.snapshot.is_bundle
    audit: list[AgentAccess] = []
    vault.bus.subscribe(lambda e: audit.append(e) if isinstance(e, AgentAccess) else None)
    try:
        calls = EarlyCalls(vault, Activity(vault.bus, session="s"), max_answer_bytes=BUDGET)
        page = walker(calls, audit)
        first = page(0, {})
        assert not any(r["stale"] for r in first["structuredContent"]["result"])
        cursor = first["structuredContent"]["next_cursor"]
        until(lambda: calls.made_ahead == 1)
        second = page(1, {"cursor": cursor})
        assert calls.served_ahead == 1 and second == made_now(vault, {"cursor": cursor})
        assert audit[1].paths == tuple(r["path"] for r in second["structuredContent"]["result"])
        assert audit[1].result_count == len(second["structuredContent"]["result"])

        # the clock passes the stale instant of the next page's first note before the client asks for it
        cursor = second["structuredContent"]["next_cursor"]
        until(lambda: calls.made_ahead == 2)
        ahead = vault.list(Query(limit=1, cursor=cursor)).entries[0]
        clock.at = ahead.stale_instant
        third = page(2, {"cursor": cursor})
        assert calls.served_ahead == 1  # made again
        assert third == made_now(vault, {"cursor": cursor})
        assert third["structuredContent"]["result"][0]["path"] == ahead.path
        assert third["structuredContent"]["result"][0]["stale"] is True
        assert audit[2].paths == tuple(r["path"] for r in third["structuredContent"]["result"])
    finally:
        vault.stop()


def test_filtered_listings_and_waits_for_writes_are_never_served_ahead(tmp_path):
    """A filter may read the clock, and a wait for pending writes waits when the call comes: such pages
    are made when they are asked for (their rows may still be made ahead)."""
    bundle(tmp_path / "vault", 60)
    vault = Vault(tmp_path / "vault", clock=Clock(dt.datetime(2026, 11, 29, tzinfo=dt.UTC)), cache=False)
    vault.load()
    try:
        calls = EarlyCalls(vault, Activity(vault.bus, session="s"), max_answer_bytes=BUDGET)
        page = walker(calls)
        for i, arguments in enumerate(({"filters": {"status": "stable"}}, {"wait_for_pending_writes": True})):
            got = page(10 * i, arguments)
            while got["structuredContent"].get("next_cursor"):
                until(lambda: calls.idle.is_set() and calls.warmed > 0)
                time.sleep(0.05)  # time to make the whole page ahead after its rows, were it allowed
                arguments = dict(arguments, cursor=got["structuredContent"]["next_cursor"])
                got = page(10 * i + 1, arguments)
                assert got == made_now(vault, arguments)
        assert calls.made_ahead == calls.served_ahead == 0 and calls.warmed > 0
    finally:
        vault.stop()


def test_making_rows_ahead_stops_when_a_call_comes(tmp_path):
    vault = make_vault(tmp_path / "vault", seed=3)
    try:
        res = vault.list(Query(include_attachments=True, limit=1000))
        assert len(res.entries) > 128
        kw = dict(budget_bytes=BUDGET, explicit=True, frontmatter=False)
        waiting = iter([False, True])  # a call comes after the first chunk
        cache = RowCache()
        done = answers.warm_rows(cache, res, vault.clock, stop=lambda: next(waiting), **kw)
        assert done == 128
        assert answers.warm_rows(RowCache(), res, vault.clock, stop=lambda: False, **kw) == len(res.entries)
        # a default page makes rows only until its budget is full
        default = dict(kw, explicit=False)
        made = answers.warm_rows(RowCache(), res, vault.clock, stop=lambda: False, **default)
        assert 0 < made < len(res.entries)
    finally:
        vault.stop()


COUNTING = """
import sys
from vaultwatch.mcp_server import stdiofront
front = stdiofront.start(sys.argv[2:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as fh:
    fh.write(f"warmed={front.calls.warmed if front.calls else 0} answered={front.calls.answered if front.calls else 0}")
sys.exit(code)
"""


async def walk(vault: Path, report: Path, env: dict) -> list[str]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", COUNTING, str(report), "serve", str(vault), "--stdio", "--max-answer-bytes", str(BUDGET)],
        env=env,
        cwd=str(ROOT),
    )
    pages: list[str] = []
    async with Client(params, mode="legacy") as client:
        for arguments in ({}, {"include_frontmatter": True}, {"limit": 40}):
            cursor = None
            while True:
                args = dict(arguments, **({"cursor": cursor} if cursor else {}))
                result = await client.call_tool("list_documents", args)
                assert not result.is_error, result.content[0].text
                blocks = [b.model_dump(mode="json", exclude_none=True) for b in result.content]
                pages.append(json.dumps([blocks, result.structured_content], ensure_ascii=False))
                cursor = result.structured_content.get("next_cursor")
                if not cursor:
                    break
    return pages


async def test_a_walk_through_the_real_client_is_the_sdks_walk(tmp_path, env):
    """`serve --stdio` with the real `mcp` client: the front, making pages ahead, answers every page of three
    walks exactly as the SDK does with the front off."""
    vault = make_vault(tmp_path / "vault", seed=11)
    vault.stop()
    front, sdk_only = tmp_path / "front.txt", tmp_path / "sdk.txt"
    with_front = await walk(tmp_path / "vault", front, env)
    without = await walk(tmp_path / "vault", sdk_only, {**env, earlycalls.ENV_SWITCH: "0"})
    assert len(with_front) > 10
    assert with_front == without
    said = dict(part.split("=") for part in front.read_text().split())
    assert int(said["answered"]) == len(with_front) and int(said["warmed"]) > 0
    assert sdk_only.read_text() == "warmed=0 answered=0"
