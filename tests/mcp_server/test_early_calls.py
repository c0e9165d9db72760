"""`serve --stdio` answers a first listing before the MCP SDK is imported (mcp_server/earlycalls.py), with
the bytes the SDK's own tool gives: real processes, raw JSON-RPC lines (the front's answers beside the SDK's
to the same calls later in the session), the real `mcp` argument model, and the TypeScript SDK client."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_testing import CLIENT_DIR
from test_stdio_front import EARLY, INIT, INITIALIZED, by_id, exchange

PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}  # only the SDK answers it: the session is the SDK's after it

# list_documents calls the front answers, each also sent after the ping (the SDK answers those)
CALLS = [
    {},
    {"folder": "Projects", "limit": 2},
    {"filters": {"status": "deprecated"}, "include_frontmatter": True},
    {"pattern": "*.md", "include_attachments": True, "wait_for_pending_writes": True},
    {"folder": "../outside"},  # a tool error: the same text both ways
    {"cursor": "not-a-cursor"},
]


def call(request_id, arguments: dict, name: str = "list_documents") -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def result_bytes(line: bytes) -> bytes:
    """The answer line without its id (the same answer to another request)."""
    message = json.loads(line)
    prefix = b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode() + b',"result":'
    assert line.startswith(prefix), line[:200]
    return line[len(prefix) :]


def early_serve(vault: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", EARLY, "serve", str(vault), "--stdio", *extra]


def test_first_listings_are_answered_before_the_sdk_with_the_sdks_bytes(demo_vault, env, tmp_path):
    audit = tmp_path / "audit.jsonl"
    early = [call(10 + i, args) for i, args in enumerate(CALLS)]
    later = [call(20 + i, args) for i, args in enumerate(CALLS)]
    lines, err = exchange(
        early_serve(demo_vault, "--audit-log", str(audit)), env, INIT, INITIALIZED, *early, PING, *later
    )
    assert f"early={1 + len(CALLS)} " in err, err[-2000:]  # initialize and every listing before the ping
    answers = by_id(lines)
    for i, args in enumerate(CALLS):
        front, sdk = answers[10 + i], answers[20 + i]
        assert result_bytes(front) == result_bytes(sdk), args
    assert json.loads(answers[14])["result"]["isError"]  # the error is the tool's, both ways
    assert not json.loads(answers[11])["result"]["isError"]
    logged = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    assert [e["tool"] for e in logged] == ["list_documents"] * (2 * len(CALLS))
    assert {e["session"] for e in logged} == {logged[0]["session"]} and {e["agent"] for e in logged} == {"raw/1"}
    seen = sorted(
        (json.dumps(e["arguments"], sort_keys=True), e["paths"], e["result_count"], e["error"]) for e in logged
    )  # the front's calls (in parallel, in any order) and the SDK's, the same twice over
    assert seen[::2] == seen[1::2] and len({s[0] for s in seen}) == len(CALLS)


def test_a_call_after_a_request_waiting_for_the_sdk_is_left_to_the_sdk(demo_vault, env):
    """Answers never overtake an earlier request of the client (it may be a write the listing should see)."""
    lines, err = exchange(early_serve(demo_vault), env, INIT, INITIALIZED, PING, call(3, {}))
    assert "early=1 " in err  # the initialize only
    assert not json.loads(by_id(lines)[3])["result"]["isError"]


def test_calls_the_front_cannot_answer_exactly_as_the_sdk_go_to_the_sdk(demo_vault, env):
    odd = [
        call(3, {"limit": "2"}),  # the SDK parses a JSON string argument: its answer
        call(4, {"folder": "null"}),  # ... and this one is None
        call(5, {"limit": 0}),  # out of range: the SDK's message
        call(6, {"colour": "red"}),  # an unknown argument: the server names the ones it takes
        call(7, {}, name="triage"),  # another tool
        {**call(8, {}), "params": {"name": "list_documents", "arguments": {}, "_meta": {"progressToken": 1}}},
    ]
    lines, err = exchange(early_serve(demo_vault), env, INIT, {**INIT, "id": 2}, *odd)
    assert "early=1 " in err  # no notifications/initialized yet: not even a plain call would be answered
    lines, err = exchange(early_serve(demo_vault), env, INIT, INITIALIZED, *odd)
    assert "early=1 " in err
    answers = {k: json.loads(v) for k, v in by_id(lines).items()}
    assert answers[3]["result"]["structuredContent"]["returned"] == 2
    assert not answers[4]["result"]["isError"]  # the whole vault's listing
    assert answers[5]["result"]["isError"] and "limit" in answers[5]["result"]["content"][0]["text"]
    assert answers[6]["result"]["isError"] and "colour" in answers[6]["result"]["content"][0]["text"]
    assert not answers[7]["result"]["isError"] and not answers[8]["result"]["isError"]


def test_a_burst_of_calls_is_answered_by_the_front_in_order(demo_vault, env):
    """A client paging through a big listing right after spawn: every page is the front's (one worker
    thread, not a thread per call, so no cap), answered in the order asked."""
    burst = [call(100 + i, {"limit": 1}) for i in range(40)]
    lines, err = exchange(early_serve(demo_vault), env, INIT, INITIALIZED, *burst)
    assert f"early={1 + len(burst)} " in err, err[-2000:]
    answers = [json.loads(line) for line in lines]
    assert [a["id"] for a in answers] == [1, *(100 + i for i in range(len(burst)))]
    assert all(a["result"]["structuredContent"]["returned"] == 1 for a in answers[1:])


def test_plain_arguments_are_the_ones_the_sdks_argument_model_passes_unchanged(demo_vault_ro):
    """In-process: whatever plain_arguments (plain_read_arguments) accepts, the SDK's validation of
    list_documents' (read's) arguments
    gives back unchanged, types included (with the defaults); what it leaves to the SDK, the SDK may change
    (a JSON string argument is parsed) or reject."""
    from pydantic import ValidationError

    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server import sdk
    from vaultwatch.mcp_server.earlycalls import plain_arguments, plain_read_arguments
    from vaultwatch.mcp_server.server import build_server

    cases = [
        None,
        {},
        {"folder": "A"},
        {"folder": None},
        {"folder": "/"},
        {"folder": "12"},
        {"folder": "true"},
        {"folder": '"quoted"'},
        {"folder": "null"},
        {"folder": "[1]"},
        {"folder": '{"a": 1}'},
        {"folder": 3},
        {"pattern": "*.md"},
        {"cursor": "x" * 4096},
        {"cursor": "x" * 4097},
        {"limit": 1},
        {"limit": 100_000},
        {"limit": 0},
        {"limit": 100_001},
        {"limit": 2.0},
        {"limit": True},
        {"limit": "3"},
        {"limit": None},
        {"include_frontmatter": True},
        {"include_frontmatter": "true"},
        {"include_frontmatter": 1},
        {"include_attachments": None},
        {"wait_for_pending_writes": False},
        {"filters": {"status": "x", "n": 1, "b": False}},
        {"filters": {"f": 1.5}},
        {"filters": {"l": [1]}},
        {"filters": '{"status": "x"}'},
        {"filters": None},
        {"other": 1},
        [1],
    ]
    vault = Vault(demo_vault_ro)
    try:
        server, _ = build_server(vault)
        metadata = sdk.tool(server, "list_documents").fn_metadata
        defaults = metadata.validate_arguments({})
        accepted = [a for a in cases if plain_arguments(a) is not None]
        for args in accepted:  # the same values, of the same types
            assert repr(metadata.validate_arguments(dict(args or {}))) == repr({**defaults, **plain_arguments(args)})
        assert len(accepted) == 17
        # what the front leaves to the SDK because the SDK would change it
        assert metadata.validate_arguments({"folder": "null"})["folder"] is None
        assert metadata.validate_arguments({"limit": "3"})["limit"] == 3
        assert metadata.validate_arguments({"include_frontmatter": "true"})["include_frontmatter"] is True
        assert metadata.validate_arguments({"filters": '{"status": "x"}'})["filters"] == {"status": "x"}
        for args in ({"limit": 0}, {"folder": "[1]"}, {"include_attachments": None}, {"cursor": "x" * 4097}):
            with pytest.raises(ValidationError):
                metadata.validate_arguments(args)
        read = sdk.tool(server, "read").fn_metadata
        read_defaults = read.validate_arguments({"path": "a.md"})
        read_cases = [
            {"path": "a.md"},
            {"path": "x" * 1024},
            {"path": "x" * 1025},
            {"path": ""},
            {"path": "null"},
            {"path": "[1]"},
            {"path": 3},
            {},
            None,
            {"path": "a.md", "section": "Intro"},
            {"path": "a.md", "section": "null"},
            {"path": "a.md", "section": '{"a": 1}'},
            {"path": "a.md", "section": "x" * 1025},
            {"path": "a.md", "section": None},
            {"path": "a.md", "lines": [1, 3]},
            {"path": "a.md", "lines": [1]},
            {"path": "a.md", "lines": [1, True]},
            {"path": "a.md", "lines": "[1, 3]"},
            {"path": "a.md", "frontmatter_only": True},
            {"path": "a.md", "frontmatter_only": 1},
            {"path": "a.md", "offset": 5},
            {"path": "a.md", "offset": -1},
            {"path": "a.md", "offset": "5"},
            {"path": "a.md", "max_chars": 1},
            {"path": "a.md", "max_chars": 0},
            {"path": "a.md", "max_chars": None},
            {"path": "a.md", "max_chars": 1_000_001},
            {"path": "a.md", "include_attachment_content": None},
            {"path": "a.md", "include_attachment_content": "yes"},
            {"path": "a.md", "colour": "red"},
        ]
        read_accepted = [a for a in read_cases if plain_read_arguments(a) is not None]
        for args in read_accepted:
            assert repr(read.validate_arguments(dict(args))) == repr({**read_defaults, **plain_read_arguments(args)})
        assert len(read_accepted) == 12
        for args in ({"path": ""}, {"path": "a.md", "lines": [1]}, {"path": "a.md", "offset": -1}):
            with pytest.raises(ValidationError):
                read.validate_arguments(args)
    finally:
        vault.stop()


def test_plain_search_arguments_are_the_ones_the_sdks_argument_model_passes_unchanged(demo_vault_ro):
    """In-process, as for list_documents and read: whatever plain_search_arguments accepts, the SDK's
    validation of search's arguments gives back unchanged, types included (with the defaults)."""
    from pydantic import ValidationError

    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server import sdk
    from vaultwatch.mcp_server.earlycalls import plain_search_arguments
    from vaultwatch.mcp_server.server import build_server

    cases = [
        {"query": "a"},
        {"query": "x" * 1024},
        {"query": "x" * 1025},
        {"query": ""},
        {"query": "null"},
        {"query": "[1]"},
        {"query": 3},
        {},
        None,
        {"query": "a", "folder": "A"},
        {"query": "a", "folder": None},
        {"query": "a", "folder": "null"},
        {"query": "a", "folder": "[1]"},
        {"query": "a", "pattern": "*.md"},
        {"query": "a", "pattern": "12"},
        {"query": "a", "cursor": "x" * 4096},
        {"query": "a", "cursor": "x" * 4097},
        {"query": "a", "limit": 1},
        {"query": "a", "limit": 1000},
        {"query": "a", "limit": 0},
        {"query": "a", "limit": 1001},
        {"query": "a", "limit": True},
        {"query": "a", "limit": 2.0},
        {"query": "a", "limit": "3"},
        {"query": "a", "limit": None},
        {"query": "a", "filters": {"status": "x", "n": 1, "b": False}},
        {"query": "a", "filters": {"f": 1.5}},
        {"query": "a", "filters": '{"status": "x"}'},
        {"query": "a", "mode": "keyword"},
        {"query": "a", "mode": None},
        {"query": "a", "mode": "semantic"},
        {"query": "a", "mode": "Keyword"},
        {"query": "a", "mode": '"keyword"'},
        {"query": "a", "colour": "red"},
        [1],
    ]
    vault = Vault(demo_vault_ro)
    try:
        server, _ = build_server(vault)
        metadata = sdk.tool(server, "search").fn_metadata
        defaults = metadata.validate_arguments({"query": "a"})
        accepted = [a for a in cases if plain_search_arguments(a) is not None]
        for args in accepted:  # the same values, of the same types
            assert repr(metadata.validate_arguments(dict(args))) == repr({**defaults, **plain_search_arguments(args)})
        assert len(accepted) == 16
        # what the front leaves to the SDK because the SDK would change it, or refuse it
        assert metadata.validate_arguments({"query": "a", "limit": "3"})["limit"] == 3
        assert metadata.validate_arguments({"query": "a", "folder": "null"})["folder"] is None
        for args in ({"query": ""}, {"query": "a", "limit": 1001}, {"query": "a", "mode": "Keyword"}):
            with pytest.raises(ValidationError):
                metadata.validate_arguments(args)
    finally:
        vault.stop()


def test_plain_write_arguments_are_the_ones_the_sdks_argument_model_passes_unchanged(demo_vault_ro):
    """In-process, as for the read calls: whatever plain_write_arguments accepts, the SDK's validation of
    write's arguments gives back unchanged, types included (with the defaults)."""
    from pydantic import ValidationError

    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server import sdk
    from vaultwatch.mcp_server.earlycalls import plain_write_arguments
    from vaultwatch.mcp_server.server import build_server

    note = {"path": "a.md", "content": "x"}
    cases = [
        note,
        {"path": "a.md", "content": ""},
        {"path": "a.md", "content": "null"},  # a plain str field: kept as it is
        {"path": "[1]", "content": "{}"},
        {"path": "x" * 1024, "content": "x"},
        {"path": "x" * 1025, "content": "x"},
        {"path": "", "content": "x"},
        {"path": "a.md"},
        {"content": "x"},
        {"path": "a.md", "content": 3},
        {"path": 3, "content": "x"},
        {**note, "if_match": "abc"},
        {**note, "if_match": None},
        {**note, "if_match": "x" * 128},
        {**note, "if_match": "x" * 129},
        {**note, "if_match": "null"},
        {**note, "if_match": "[1]"},
        {**note, "if_match": 12},
        {**note, "overwrite": True},
        {**note, "overwrite": False, "create_only": True},
        {**note, "overwrite": 1},
        {**note, "overwrite": "true"},
        {**note, "overwrite": None},
        {**note, "create_only": 0},
        {**note, "mode": "append"},
        {**note, "ctx": {}},
        None,
        [1],
    ]
    vault = Vault(demo_vault_ro)
    try:
        server, _ = build_server(vault)
        metadata = sdk.tool(server, "write").fn_metadata
        defaults = metadata.validate_arguments(dict(note))
        accepted = [a for a in cases if plain_write_arguments(a) is not None]
        for args in accepted:  # the same values, of the same types
            assert repr(metadata.validate_arguments(dict(args))) == repr({**defaults, **plain_write_arguments(args)})
        assert len(accepted) == 10
        # what the front leaves to the SDK because the SDK would change it, or refuse it
        assert metadata.validate_arguments({**note, "overwrite": 1})["overwrite"] is True
        assert metadata.validate_arguments({**note, "if_match": "null"})["if_match"] is None
        for args in ({"path": "", "content": "x"}, {**note, "if_match": "x" * 129}, {"path": "a.md"}):
            with pytest.raises(ValidationError):
                metadata.validate_arguments(args)
    finally:
        vault.stop()


def test_the_front_takes_a_search_by_words_and_answers_behind_it_while_the_index_builds(
    demo_vault_ro, tmp_path, monkeypatch
):
    """In-process: the front leaves a query by meaning to the SDK (it embeds); a search by words it takes,
    also before the full-text index is built (it waits for the build, as the SDK's path waits for a call
    without a progress token), on a thread of its own: a read taken after it is answered meanwhile. A
    flood of such searches waits aside only up to a bound; past it, on the worker."""
    import threading

    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server import earlycalls
    from vaultwatch.mcp_server.activity import Activity
    from vaultwatch.mcp_server.earlycalls import EarlyCalls

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    vault = Vault(demo_vault_ro)
    vault.load()
    building = threading.Event()
    search = vault.search

    def slow_search(*args, **kwargs):  # the build takes its time: until the read below is answered
        assert building.wait(30)
        return search(*args, **kwargs)

    monkeypatch.setattr(vault, "search", slow_search)
    try:
        calls = EarlyCalls(vault, Activity(vault.bus, session="s"), max_answer_bytes=65536)
        sent, answered = [], threading.Semaphore(0)

        def send(id_text, data) -> None:
            sent.append((id_text, json.loads(data)))
            answered.release()

        def query(**arguments) -> dict:
            return {"name": "search", "arguments": {"query": "project", **arguments}}

        for mode in ("semantic", "hybrid"):
            assert not calls.take(query(mode=mode), "0", "agent/1", send, lambda: None)
        assert not vault.search_ready()
        assert calls.take(query(), "1", "agent/1", send, lambda: None)  # nothing built, nor started
        assert calls.take({"name": "read", "arguments": {"path": "Getting Started.md"}}, "2", "agent/1", send, id)
        assert answered.acquire(timeout=30)
        assert [i for i, _ in sent] == ["2"]  # the read, while the search waits
        # more searches than may wait aside: the one past the bound waits on the worker, holding the read
        for i in range(earlycalls.MAX_ASIDE):
            assert calls.take(query(), f"s{i}", "agent/1", send, lambda: None)
        assert calls.take({"name": "read", "arguments": {"path": "Getting Started.md"}}, "4", "agent/1", send, id)
        assert not answered.acquire(timeout=1)
        building.set()
        for _ in range(earlycalls.MAX_ASIDE + 2):
            assert answered.acquire(timeout=60)
        assert sorted(i for i, _ in sent) == sorted(["1", "2", "4", *(f"s{i}" for i in range(earlycalls.MAX_ASIDE))])
        assert all(a["structuredContent"]["total"] > 0 for i, a in sent if i != "2" and i != "4")
        assert vault.search_ready()
        assert calls.take(query(mode="keyword"), "3", "agent/1", send, lambda: None)
        assert answered.acquire(timeout=30)
        assert sent[-1][0] == "3" and sent[-1][1]["structuredContent"]["total"] > 0
        assert calls.idle.wait(5)
    finally:
        vault.stop()


# the front as tui/entry.py starts it, reporting its counts into the file named first (a client owns stderr)
EARLY_REPORT = EARLY.replace("sys.argv[1:]", "sys.argv[2:]").replace(
    'print(f"early={front.answered_early} before_sdk={front.before_sdk}", file=sys.stderr, flush=True)',
    'open(sys.argv[1], "a").write(f"early={front.answered_early}\\n")',
)


async def test_the_typescript_sdk_client_takes_the_fronts_listing(ts_sdk, demo_vault, tmp_path):
    """The official TS SDK client spawns `serve --stdio` (a warm handshake cache: tools/list is the front's
    too), lists (validated against the tool's output schema by the client) and goes on with the SDK."""
    report = tmp_path / "early.txt"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}  # what the client passes on, with HOME
    runs = []
    for _ in range(2):  # the first start fills the handshake cache (tools/list from the SDK)
        proc = await asyncio.create_subprocess_exec(
            str(ts_sdk),
            "client.mjs",
            sys.executable,
            "-c",
            EARLY_REPORT,
            str(report),
            "serve",
            str(demo_vault),
            "--stdio",
            "--compat",
            "vault-cortex",
            cwd=str(CLIENT_DIR),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        runs.append(json.loads(out))
        assert runs[-1]["ok"], runs[-1].get("error") or err.decode()
    first, second = runs
    counts = [int(line.split("=")[1]) for line in report.read_text().split()]
    assert counts[0] >= 1 and counts[1] >= 3  # initialize (+ listings) / initialize, tools/list and a listing
    for name, got in second["calls"].items():  # every answer the same, whoever gave it (the first start's index
        want = first["calls"][name]  # may still have been settling: meta.index_stale aside)
        assert {**got, "meta": None} == {**want, "meta": None}, name
    listing = second["calls"]["list"]
    assert not listing["isError"] and len(listing["structured"]["result"]) == 3


def test_wire_json_is_what_the_sdk_writes_for_a_result():
    """answers.wire_json (pydantic-core once it is imported; before, json.dumps where it agrees with
    pydantic-core) against the SDK's own serialisation of a JSON-RPC response, value by value."""
    from mcp_types.jsonrpc import JSONRPCResponse

    from vaultwatch.mcp_server.answers import _dumps_wire, wire_json

    values = [
        "",
        "plain",
        "é 😀 ü",
        'quote " backslash \\ slash /',
        "\x00\x01\x1f\x7f\b\f\n\r\t",
        "\u2028\u2029",
        "\ufeff\ud7ff\ue000\uffff",
        0,
        -1,
        2**63,
        10**30,
        True,
        False,
        None,
        [],
        {},
        [1, "a", None, [{}]],
        {"nested": {"k": ["v", 2, False]}},
        1.5,
        1e-05,
        1e16,
        0.1 + 0.2,
        float("inf"),
        float("nan"),
        -0.0,
        {"f": [1, 2.0]},
    ]
    for value in values:
        result = {"content": [{"type": "text", "text": "t"}], "isError": False, "structuredContent": {"v": value}}
        sdk = JSONRPCResponse(jsonrpc="2.0", id=7, result=result).model_dump_json(by_alias=True, exclude_unset=True)
        assert sdk == '{"jsonrpc":"2.0","id":7,"result":' + wire_json(result) + "}", repr(value)
        plain = _dumps_wire(result)  # what a first answer, before pydantic-core is imported, writes
        assert plain is None or sdk == '{"jsonrpc":"2.0","id":7,"result":' + plain + "}", repr(value)


def test_a_read_only_front_takes_no_write_not_even_one_without_a_name(demo_vault):
    """In-process: a read-only server has no write tool, so its front takes no write, whatever the call
    names (a call without a name must not match the write tool it does not have); with writes, a plain
    write is taken and written, attributed to the client's name."""
    import threading

    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server.activity import Activity
    from vaultwatch.mcp_server.earlycalls import EarlyCalls

    vault = Vault(demo_vault)
    vault.load()
    try:
        write = {"path": "Inbox/front.md", "content": "# front\n"}
        read_only = EarlyCalls(vault, Activity(vault.bus, session="s"), max_answer_bytes=65536)
        for params in ({"arguments": write}, {"name": None, "arguments": write}, {"name": "write", "arguments": write}):
            assert not read_only.take(params, "1", "agent/1", lambda *a: None, lambda: None, "agent")
        sent, done = [], threading.Event()
        writes = EarlyCalls(vault, Activity(vault.bus, session="s"), max_answer_bytes=65536, writes=True)
        assert not writes.take({"arguments": write}, "2", "agent/1", lambda *a: None, lambda: None, "agent")
        assert writes.take(
            {"name": "write", "arguments": write},
            "3",
            "agent/1",
            lambda i, d: (sent.append(d), done.set()),
            id,
            "agent",
        )
        assert done.wait(30) and json.loads(sent[0])["structuredContent"]["created"]
    finally:
        vault.stop()
    assert (demo_vault / "Inbox" / "front.md").read_text(encoding="utf-8") == "# front\n"
