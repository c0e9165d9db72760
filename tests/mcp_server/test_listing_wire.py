"""list_documents' short way out: rows cached as JSON per entry (core.serialize.RowCache) and
spliced onto the socket's wire (mcp_server/splice.py). A cached row must never outlive what it
was made from (an edit, another as-of date, the vault ceasing to be an OKF bundle), and the
spliced answer must be exactly what the SDK's own pipeline gives."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

import httpx2
import pytest
from mcp import Client
from mcp_testing import serving, uds_client

from vaultwatch.core.clock import FixedClock
from vaultwatch.core.model import make_entry
from vaultwatch.core.query.listing import Query
from vaultwatch.core.serialize import RowCache, entry_json, row_bytes
from vaultwatch.mcp_server import sdk, splice
from vaultwatch.mcp_server.results import tabled
from vaultwatch.mcp_server.server import build_server

TRICKY = 'Quote " back\\slash, tab\t, newline\\n, café ✓ 🦊'
FILES = {
    "index.md": '---\nokf_version: "0.2"\ntitle: Index\n---\n# Index\n',
    "a.md": "---\ntitle: Alpha\nstatus: draft\nstale_after: 2026-12-01\n---\n# Alpha\n",
    "b.md": "---\nstatus: stable\nstale_after: 2026-11-01\ntags: [x]\n---\n# Bravo\n",
    "c.md": "# Charlie without frontmatter\n",
    "d.md": "---\nstale_after: 2026-11-29T12:00:00+00:00\n---\n# Delta\n",
    "e.md": "---\ntitle: " + json.dumps(TRICKY, ensure_ascii=False) + '\nnote: "multi\\nline \\\\ value"\n---\nbody\n',
    "Sub/f.md": "---\nstatus: deprecated\n---\n# Foxtrot\n",
}


@pytest.fixture(autouse=True, params=["fast-path", "sdk-path"])
def path_taken(request, monkeypatch) -> str:
    """Every test here runs twice: with the fast path (mcp_server/sdk.py) and with it switched off,
    where every call takes the SDK's ordinary path. The answers must be the same."""
    if request.param == "sdk-path":
        monkeypatch.setenv(sdk.ENV_SWITCH, "0")
    else:
        monkeypatch.delenv(sdk.ENV_SWITCH, raising=False)
    assert sdk.fast_path_enabled() is (request.param == "fast-path")
    return request.param


@dataclass
class MovableClock:
    """A clock the test moves (as the system clock moves past midnight)."""

    instant: dt.datetime

    def now(self) -> dt.datetime:
        return self.instant

    def today(self) -> dt.date:
        return self.instant.date()


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


async def listing(client, **args) -> dict:
    result = await client.call_tool("list_documents", args)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == tabled(result.structured_content)  # the same data, rows as a table
    return result.structured_content


def rows_by_path(out: dict) -> dict[str, dict]:
    return {r["path"]: r for r in out["result"]}


def expected(vault, *, frontmatter: bool = False) -> list[dict]:
    snap = vault.snapshot
    return [entry_json(e, vault.clock, snap.is_bundle, frontmatter=frontmatter) for e in vault.list(Query()).entries]


# -- over the real socket ----------------------------------------------------------------


async def test_edits_and_the_clock_never_meet_a_stale_cached_row(make_vault, open_vault, sock_dir):
    root = make_vault(FILES)
    clock = MovableClock(at("2026-11-29T11:00:00"))
    vault = open_vault(root, clock=clock)
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        first = await listing(client)
        assert first["result"] == expected(vault) and first["okf_bundle"] is True
        assert await listing(client) == first  # served from the cache: same answer
        rows = rows_by_path(first)
        assert (rows["a.md"]["stale"], rows["b.md"]["stale"], rows["d.md"]["stale"]) == (False, True, False)
        assert rows["e.md"]["title"] == TRICKY
        fm = await listing(client, include_frontmatter=True)
        assert fm["result"] == expected(vault, frontmatter=True)
        assert rows_by_path(fm)["e.md"]["frontmatter"]["note"] == "multi\nline \\ value"

        # an edit makes a new Entry: its row is made again, with and without frontmatter
        (root / "a.md").write_text("---\ntitle: Alpha 2\nstatus: deprecated\nstale_after: 2026-12-01\n---\nx\n")
        vault.refresh_paths(["a.md"])
        edited = await listing(client)
        assert rows_by_path(edited)["a.md"]["title"] == "Alpha 2"
        assert rows_by_path(edited)["a.md"]["status"] == "deprecated" and edited["result"] == expected(vault)
        fm = await listing(client, include_frontmatter=True)
        assert rows_by_path(fm)["a.md"]["frontmatter"]["status"] == "deprecated"

        # the clock moves past an instant (d.md), then past a date (a.md), then back
        clock.instant = at("2026-11-29T13:00:00")
        assert rows_by_path(await listing(client))["d.md"]["stale"] is True
        clock.instant = at("2026-12-01T00:00:00")
        later = await listing(client)
        assert rows_by_path(later)["a.md"]["stale"] is True and later["result"] == expected(vault)
        assert rows_by_path(await listing(client, include_frontmatter=True))["a.md"]["stale"] is True
        clock.instant = at("2026-11-29T11:00:00")
        back = rows_by_path(await listing(client))
        assert (back["a.md"]["stale"], back["d.md"]["stale"]) == (False, False)

        # the vault stops being an OKF bundle: no row keeps its OKF fields
        (root / "index.md").write_text("---\ntitle: Index\n---\n# Index\n")
        vault.refresh_paths(["index.md"])
        plain = await listing(client)
        assert plain["okf_bundle"] is False and plain["result"] == expected(vault)
        # OKF fields are null off a bundle, status too (read says null; the raw value stays in frontmatter)
        assert all(r["status"] is None and r["stale"] is None and r["trust_tier"] is None for r in plain["result"])
        full = rows_by_path(await listing(client, include_frontmatter=True))
        assert full["a.md"]["status"] is None and full["a.md"]["frontmatter"]["status"] == "deprecated"

        # a deleted note leaves every listing
        (root / "b.md").unlink()
        vault.refresh_paths(["b.md"])
        assert "b.md" not in rows_by_path(await listing(client))


async def test_paged_and_filtered_listings_share_the_cache_correctly(make_vault, open_vault, sock_dir):
    vault = open_vault(make_vault(FILES))
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        whole = (await listing(client))["result"]
        page = await listing(client, limit=2)
        rest = await listing(client, limit=100, cursor=page["next_cursor"])
        assert page["result"] + rest["result"] == whole and page["total"] == rest["total"] == len(whole)
        assert page["returned"] == 2 and rest["next_cursor"] is None
        deprecated = await listing(client, filters={"status": "deprecated"})
        assert [r["path"] for r in deprecated["result"]] == ["Sub/f.md"] and deprecated["total"] == 1
        empty = await listing(client, folder="Nowhere")
        assert empty == {"result": [], "total": 0, "returned": 0, "next_cursor": None, "okf_bundle": True}
        attachments = await listing(client, include_attachments=True, limit=1)
        assert attachments["returned"] == 1


async def test_the_spliced_wire_is_well_formed_json_with_the_right_length(demo, sock_dir, path_taken):
    """A raw HTTP client sees one JSON document: no placeholder left, Content-Length exact
    (the demo vault has non-ASCII titles, so bytes and characters differ)."""
    async with serving(demo, sock_dir / "v.sock") as host:
        async with httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=host.socket_path)) as http:
            headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
            r = await http.post(
                "http://localhost/mcp",
                headers=headers,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                },
            )
            headers |= {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            await http.post(
                "http://localhost/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            r = await http.post(
                "http://localhost/mcp",
                headers=headers,
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "list_documents", "arguments": {"include_frontmatter": True}},
                },
            )
            await http.delete("http://localhost/mcp", headers=headers)
        # the rows, the text and the resource_link blocks went out pre-serialised (on the fast path only)
        assert host.splice.filled == (3 if path_taken == "fast-path" else 0)
    assert r.status_code == 200 and int(r.headers["content-length"]) == len(r.content)
    assert b"vaultwatch-splice" not in r.content
    reply = json.loads(r.content)
    assert reply["id"] == 2 and reply["result"]["isError"] is False
    structured = reply["result"]["structuredContent"]
    assert json.loads(reply["result"]["content"][0]["text"]) == tabled(structured)
    assert structured["result"] == expected(demo, frontmatter=True)
    assert any(not row["path"].isascii() for row in structured["result"])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_socket_answers_equal_the_sdk_pipeline(demo, sock_dir, mode, path_taken):
    """The spliced answer over the socket (handshake era and 2026-07-28 era) is what an
    in-memory client gets from the SDK's ordinary pipeline, where nothing is spliced."""
    calls = [
        {},
        {"include_frontmatter": True},
        {"limit": 5},
        {"filters": {"status": "deprecated"}},
        {"folder": "Projects", "include_attachments": True},
    ]
    server, _ = build_server(demo, extra_tools=[])
    async with Client(server, mode=mode) as memory:
        ordinary = [await listing(memory, **args) for args in calls]
    async with serving(demo, sock_dir / "v.sock") as host, uds_client(host.socket_path, mode=mode) as client:
        spliced = [await listing(client, **args) for args in calls]
        assert host.splice.filled == (3 * len(calls) if path_taken == "fast-path" else 0)
    assert spliced == ordinary
    assert ordinary[0]["result"] == expected(demo)


# -- the row cache ---------------------------------------------------------------------------


def test_cached_rows_are_entry_json_for_every_kind(demo):
    entries = demo.list(Query(include_attachments=True, include_folders=True)).entries
    assert {e.kind for e in entries} == {"note", "attachment", "folder"}
    cache = RowCache()
    for bundle in (True, False):
        for frontmatter in (False, True):
            want = [entry_json(e, demo.clock, bundle, frontmatter=frontmatter) for e in entries]
            for _ in range(2):  # made, then served from the cache
                rows, escaped = cache.rows_escaped(entries, demo.clock, bundle, frontmatter=frontmatter)
                assert [json.loads(r) for r in rows] == want
                assert cache.rows(entries, demo.clock, bundle, frontmatter=frontmatter) == rows
                # escaped: joined and quoted, a JSON string whose value is the joined rows
                assert json.loads(b'"' + b",".join(escaped) + b'"') == b",".join(rows).decode()


def test_the_cache_stays_bounded(demo):
    entries = demo.list(Query()).entries
    cache = RowCache(max_rows=10)
    assert [json.loads(r) for r in cache.rows(entries, demo.clock, True)] == expected(demo)
    assert len(cache) == 0  # a listing bigger than the cache keeps nothing (and flushes nothing)
    cache.rows(entries[:6], demo.clock, True)
    assert len(cache) == 6
    cache.rows(entries[:6], demo.clock, True, frontmatter=True)
    assert len(cache) == 0  # over the bound: forgotten, never grown
    cache.rows(entries[:4], demo.clock, True)
    assert len(cache) == 4
    cache.clear()
    assert len(cache) == 0


def test_a_new_clock_day_and_a_new_entry_make_new_rows(demo):
    entry = demo.entry("Projects/Atlas Migration.md")
    cache = RowCache()
    assert entry.stale_date is not None
    before = FixedClock.at_date(entry.stale_date - dt.timedelta(days=1))
    on_the_day = FixedClock.at_date(entry.stale_date)
    assert json.loads(cache.rows([entry], before, True)[0])["stale"] is False
    assert json.loads(cache.rows([entry], on_the_day, True)[0])["stale"] is True
    assert json.loads(cache.rows([entry], before, True)[0])["stale"] is False
    copy = make_entry(entry.path, entry.kind, entry.size_bytes, entry.mtime_ns, "Another title")
    assert json.loads(cache.rows([copy], before, True)[0])["title"] == "Another title"


def test_rows_with_lone_surrogates_are_still_valid_utf8_json():
    entry = make_entry("x.md", "note", 1, 0, "bad \udc80 name", frontmatter={"k": 'q"\\\n\udcff'})
    raw = row_bytes(entry_json(entry, FixedClock.at_date(dt.date(2026, 11, 29)), False))
    raw.decode("utf-8")  # strict: no lone surrogate reached the bytes
    assert json.loads(raw)["title"] == "bad \udc80 name" and json.loads(raw)["frontmatter"]["k"] == 'q"\\\n\udcff'


# -- the splice layer --------------------------------------------------------------------------


def test_fill_replaces_each_parked_value_once():
    values = {b'"t1"': (b"[1,", b"2]"), b'"t2"': (b'"x"',), b'"unused"': (b"0",)}
    assert splice.fill(b'{"a":"t2","b":"t1"}', values) == b'{"a":"x","b":[1,2]}'
    assert set(values) == {b'"unused"'}
    assert splice.fill(b"{}", values) == b"{}"


def test_put_only_inside_a_spliceable_request():
    assert not splice.active()
    with pytest.raises(RuntimeError):
        splice.put(b"1")
    values: dict = {}
    token = splice.enable(values)
    try:
        assert splice.active()
        placeholder = splice.put(b"[", b"]")
        assert placeholder.startswith("vaultwatch-splice:") and values == {f'"{placeholder}"'.encode(): (b"[", b"]")}
        assert splice.put(b"1") != placeholder
    finally:
        splice.reset(token)
    assert not splice.active()


def test_a_placeholder_asks_the_system_for_no_randomness(monkeypatch):
    """A page parks two placeholders: making one must not call the system's randomness (os.urandom lets go
    of the interpreter, and a busy thread beside the answer, a full-text build, may keep it). Each is still
    unique, starts with the process's secret and is filled, on a line as on a socket's body."""

    def no_urandom(n: int) -> bytes:
        raise AssertionError("a placeholder asked the system for randomness")

    monkeypatch.setattr("os.urandom", no_urandom)
    monkeypatch.setattr("random._urandom", no_urandom)  # what secrets' SystemRandom calls
    parking = splice.LineParking()
    seen: set[str] = set()
    for values in (parking, {}):
        token = splice.enable(values)
        try:
            made = [splice.put(b"[", str(i).encode(), b"]") for i in range(50)]
        finally:
            splice.reset(token)
        assert len(set(made) | seen) == len(made) + len(seen)
        seen |= set(made)
        line = ("{" + ",".join(f'"k{i}":"{p}"' for i, p in enumerate(made)) + "}").encode()
        filled = parking.fill(line) if values is parking else splice.fill(line, values)
        assert json.loads(filled) == {f"k{i}": [i] for i in range(50)}
    monkeypatch.undo()
    secret = {p.removeprefix("vaultwatch-splice:")[:32] for p in seen}
    assert len(secret) == 1 and len(next(iter(secret))) == 32


async def _through_splice(app_messages, parked: bytes) -> list[dict]:
    """Run a minimal ASGI app (the role the SDK's app plays) under Splice; what reached the server."""
    sent: list[dict] = []

    async def app(scope, receive, send):
        placeholder = None
        token = splice.enable(scope[splice.SCOPE_KEY])
        try:
            placeholder = splice.put(parked)
        finally:
            splice.reset(token)
        for message in app_messages(placeholder.encode()):
            await send(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await splice.Splice(app)({"type": "http", "method": "POST", "headers": []}, receive, send)
    return sent


async def test_splice_fixes_the_length_of_a_sized_response_sent_in_chunks():
    def messages(placeholder):
        body = b'{"v":"' + placeholder + b'"}'
        return [
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            },
            {"type": "http.response.body", "body": body[:5], "more_body": True},
            {"type": "http.response.body", "body": body[5:], "more_body": False},
        ]

    start, body = await _through_splice(messages, '["é"]'.encode())
    assert body["body"] == '{"v":["é"]}'.encode() and body["more_body"] is False
    assert dict(start["headers"])[b"content-length"] == str(len(body["body"])).encode()
    assert dict(start["headers"])[b"content-type"] == b"application/json"


async def test_splice_fills_streamed_events_in_place():
    def messages(placeholder):
        return [
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]},
            {
                "type": "http.response.body",
                "body": b'event: message\r\ndata: {"v":"' + placeholder + b'"}\r\n\r\n',
                "more_body": True,
            },
            {"type": "http.response.body", "body": b"", "more_body": False},
        ]

    start, event, end = await _through_splice(messages, b"[1,2]")
    assert start["headers"] == [(b"content-type", b"text/event-stream")]
    assert event["body"] == b'event: message\r\ndata: {"v":[1,2]}\r\n\r\n' and end["body"] == b""


async def test_other_requests_pass_untouched():
    seen = []

    async def app(scope, receive, send):
        seen.append(splice.SCOPE_KEY in scope)
        await send({"type": "http.response.start", "status": 204, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    out = []

    async def send(message):
        out.append(message)

    await splice.Splice(app)({"type": "http", "method": "GET", "headers": []}, None, send)
    await splice.Splice(app)({"type": "http", "method": "POST", "headers": []}, None, send)
    assert seen == [False, True]
    assert out[0]["headers"] == [(b"content-length", b"0")] and out[2]["headers"] == [(b"content-length", b"0")]
