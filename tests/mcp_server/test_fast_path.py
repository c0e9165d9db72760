"""The read tools' short way onto the wire gives exactly what the SDK's own pipeline would."""

from __future__ import annotations

import pytest
from mcp_types import SERVER_INFO_META_KEY, CallToolResult, TextContent
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from vaultwatch.mcp_server import results, sdk
from vaultwatch.mcp_server.answers import Answer, note_link
from vaultwatch.mcp_server.server import build_server


def sdk_wire(server, result: CallToolResult, version: str) -> dict:
    """What mcp.server.runner does with a handler's CallToolResult (dump, sieve, stamp)."""
    dumped = serialize_server_result(
        "tools/call", version, result.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    if version in MODERN_PROTOCOL_VERSIONS:
        dumped.setdefault("resultType", "complete")
        dumped["_meta"] = {**(dumped.get("_meta") or {}), SERVER_INFO_META_KEY: sdk.server_info_stamp(server)}
    return dumped


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS])
@pytest.mark.parametrize(
    "result",
    [
        CallToolResult(
            content=[TextContent(type="text", text='{"result":[]}')],
            structured_content={"result": [{"path": "a.md", "kind": "note", "tags": ["x"], "stale": None}], "total": 1},
            _meta={"index_stale": False, "generation": 3},
        ),
        CallToolResult(content=[TextContent(type="text", text="Error: path traversal blocked")], is_error=True),
        CallToolResult(content=[TextContent(type="text", text="[]")], structured_content={"result": []}),
    ],
    ids=["listing", "error", "no-meta"],
)
def test_fast_wire_equals_the_sdk_pipeline(demo, version, result):
    server, _ = build_server(demo, extra_tools=[])
    assert server._wire(result, version) == sdk_wire(server, result, version)


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS])
@pytest.mark.parametrize("meta", [{"untrusted": "result[].title"}, None], ids=["meta", "no-meta"])
def test_a_result_kept_as_its_plain_answer_goes_on_the_wire_as_the_sdk_would_write_it(demo, version, meta):
    """In the fast path a tool's result leaves out its resource_link blocks and the plain answer is written
    instead: the same wire as the SDK's pipeline makes of the whole result."""
    server, _ = build_server(demo, extra_tools=[])
    entries = [e for e in demo.snapshot.entries if e.kind == "note"][:3]
    answer = Answer(
        '{"result":{"columns":["path"],"rows":[["a \\"b\\".md"]]}}',
        {"result": [{"path": e.path, "title": e.title} for e in entries], "total": 3},
        meta,
        links=tuple(note_link(e) for e in entries),
    )
    whole = results.result_of(answer)  # outside the fast path: every content block as the SDK's model
    kept: dict = {}
    token = results.keep_answers(kept)
    try:
        lean = results.result_of(answer)
    finally:
        results.forget_answers(token)
    assert len(whole.content) == 4 and len(lean.content) == 1
    assert results.answer_of(lean, kept) is answer and results.answer_of(whole, kept) is None
    assert server._wire(lean, version, results.answer_of(lean, kept)) == sdk_wire(server, whole, version)


def test_only_read_tools_take_the_fast_path(demo):
    def register(server, env):
        server.add_tool(lambda: "x", name="custom", description="A test tool.")

    server, _ = build_server(demo, compat={"vault-cortex"}, extra_tools=[register])
    assert {"list_documents", "read", "triage", "vault_list_notes"} <= server.fast_tools
    assert "custom" not in server.fast_tools


def test_the_switch_and_the_sdk_version_turn_the_fast_path_off(demo, monkeypatch):
    server, _ = build_server(demo, extra_tools=[])
    assert sdk.INSTALLED_SDK == sdk.TESTED_SDK and server.fast_path in server.middleware
    monkeypatch.setenv(sdk.ENV_SWITCH, "0")
    server, _ = build_server(demo, extra_tools=[])
    assert server.fast_path not in server.middleware
    monkeypatch.delenv(sdk.ENV_SWITCH)
    monkeypatch.setattr(sdk, "FAST_PATH_PROBLEM", "mcp 9.9 is installed but ...")
    server, _ = build_server(demo, extra_tools=[])
    assert server.fast_path not in server.middleware  # another SDK version: the ordinary path only


def test_an_sdk_without_the_internals_the_server_needs_is_a_clear_error(demo):
    server, _ = build_server(demo, extra_tools=[])
    del server._tool_manager
    with pytest.raises(RuntimeError, match="_tool_manager"):
        sdk.check(server)


def test_no_other_module_touches_the_sdk_internals():
    import pathlib
    import re

    root = pathlib.Path(sdk.__file__).parent
    private = re.compile(r"\._(tool_manager|lowlevel_server|subscriptions|connection)\b|\"_connection\"")
    offenders = [p.name for p in root.glob("*.py") if p.name != "sdk.py" and private.search(p.read_text())]
    assert offenders == []
