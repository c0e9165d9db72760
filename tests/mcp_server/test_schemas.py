"""Published output schemas are compacted (schemas.compact) without changing what they accept."""

from __future__ import annotations

import copy

import pytest
from jsonschema.validators import validator_for
from mcp import Client
from pydantic import TypeAdapter

from vaultwatch.mcp_server import schemas, sdk
from vaultwatch.mcp_server.server import build_server

CALLS = [
    ("list_documents", {"limit": 3}),
    ("read", {"path": "index.md"}),
    ("read", {"path": "index.md", "frontmatter_only": True}),
    ("triage", {}),
    ("triage", {"category": "stale", "limit": 2}),
    ("triage", {"category": "broken"}),
    ("list_folders", {}),
    ("list_tags", {"limit": 3}),
    ("get_links", {"path": "index.md"}),
    ("search", {"query": "migration", "limit": 2}),
]


def spoiled(instance: dict) -> list[dict]:
    """Variants of a valid result that a strict schema refuses (or may accept: both must agree)."""
    out = []
    for key, value in instance.items():
        for bad in (None, 7, "x", [1], {"a": 1}):
            if bad != value:
                out.append({**instance, key: bad})
        shorter = dict(instance)
        del shorter[key]
        out.append(shorter)
        if isinstance(value, dict):
            for inner in list(value)[:3]:
                out.append({**instance, key: {**value, inner: None}})
                out.append({**instance, key: {**value, inner: "x"}})
    return out


def model_schemas() -> dict[str, dict]:
    return {
        name: TypeAdapter(getattr(schemas, name)).json_schema()
        for name in (
            "DocumentList",
            "ReadOutput",
            "TriageOutput",
            "FolderList",
            "TagList",
            "Links",
            "SearchResults",
            "PathList",
            "TextResult",
        )
    }


@pytest.mark.parametrize("name", sorted(model_schemas()))
def test_compact_schema_is_valid_and_self_contained(name):
    original = model_schemas()[name]
    compacted = schemas.compact(copy.deepcopy(original))
    validator_for(compacted).check_schema(compacted)
    assert "$defs" not in compacted and "$ref" not in repr(compacted)
    assert compacted["type"] == "object" and compacted["required"] == original["required"]
    assert original == model_schemas()[name]  # the input is not changed


async def test_compacted_schemas_accept_and_refuse_the_same_results(demo):
    server, _ = build_server(demo, extra_tools=[])
    published = {t.name: t.output_schema for t in sdk.tools(server)}
    originals = {t.name: t.fn_metadata.output_model for t in sdk.tools(server)}
    async with Client(server) as client:
        results = [(name, (await client.call_tool(name, args)).structured_content) for name, args in CALLS]
    checked = 0
    for name, instance in results:
        assert instance is not None, name
        original = TypeAdapter(originals[name]).json_schema()
        before, after = validator_for(original)(original), validator_for(published[name])(published[name])
        assert before.is_valid(instance) and after.is_valid(instance), name
        for variant in spoiled(instance):
            assert before.is_valid(variant) == after.is_valid(variant), (name, variant)
            checked += 1
    assert checked > 400


def test_recursive_refs_are_kept_and_annotated_ones_inlined():
    recursive = {
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "$ref": "#/$defs/Node",
    }
    assert schemas.compact(recursive) == recursive
    annotated = {
        "$defs": {"Row": {"type": "object"}},
        "type": "object",
        "properties": {"row": {"$ref": "#/$defs/Row", "description": "one row"}},
    }
    assert schemas.compact(annotated)["properties"]["row"] == {"type": "object", "description": "one row"}
    checked = {"$defs": {"Row": {"type": "object"}}, "properties": {"row": {"$ref": "#/$defs/Row", "minProperties": 1}}}
    assert schemas.compact(checked) == checked  # a sibling that validates keeps the $ref
    folded = schemas.compact(
        {
            "type": "object",
            "properties": {
                "a": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "A", "default": None},
                "b": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]},
            },
        }
    )
    # nullable stays anyOf: a list of types is what single-type dialects refuse
    assert folded["properties"]["a"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert folded["properties"]["b"] == {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}
    numbers = schemas.compact({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]})
    assert numbers == {"anyOf": [{"type": "string"}, {"type": "number"}]}  # integers are numbers
    kept = {"anyOf": [{"type": "string", "const": "x"}, {"type": "null"}]}
    assert schemas.compact({"type": "object", "properties": {"c": kept}})["properties"]["c"] == kept


def single_type_problems(node, where: str) -> list[str]:
    """Where a schema leaves a single-type dialect (Gemini's function declarations, OpenAPI 3.0) stuck:
    a list of types, or a property with no type at all (anyOf, enum or const say it in their own way)."""
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("type"), list):
            found.append(f"{where}: type {node['type']}")
        for name, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict) and not {"type", "anyOf", "enum", "const"} & set(sub):
                found.append(f"{where}.{name}: no type")
        for key, value in node.items():
            found += single_type_problems(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += single_type_problems(value, f"{where}[{i}]")
    return found


async def test_every_schema_is_single_typed_and_complete(make_vault, open_vault, sock_dir):
    """tools/list as a client receives it: no property typed as a list of types, none untyped, an output
    schema for every native tool (history's too), and read's stale_after always text or null."""
    from mcp_testing import serving, uds_client

    vault = open_vault(make_vault({"odd.md": "---\nstale_after: 5\n---\n# Odd\n", "ok.md": "# Ok\n"}))
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        tools = (await client.list_tools()).tools
        odd = await client.call_tool("read", {"path": "odd.md"})
        history = await client.call_tool("history", {"path": "ok.md"})
    problems = []
    for tool in tools:
        problems += single_type_problems(tool.input_schema, f"{tool.name}.inputSchema")
        problems += single_type_problems(tool.output_schema or {}, f"{tool.name}.outputSchema")
    assert problems == []
    native = {t.name: t for t in tools if not t.name.startswith(("vault_", "obsidian_"))}
    assert {"read", "history", "write"} <= set(native)
    assert all(t.output_schema for t in native.values()), [n for n, t in native.items() if not t.output_schema]
    published = native["read"].output_schema
    assert odd.structured_content["stale_after"] == "5"
    assert validator_for(published)(published).is_valid(odd.structured_content)
    schema = native["history"].output_schema
    assert not history.is_error and validator_for(schema)(schema).is_valid(history.structured_content)
