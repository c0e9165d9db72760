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


def test_recursive_and_annotated_refs_are_kept():
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
    assert schemas.compact(annotated) == annotated
    folded = schemas.compact(
        {
            "type": "object",
            "properties": {
                "a": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "A", "default": None},
                "b": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]},
            },
        }
    )
    assert folded["properties"]["a"] == {"type": ["string", "null"], "default": None}
    assert folded["properties"]["b"] == {"type": ["string", "null"], "minLength": 1}  # minLength binds strings only
    kept = {"anyOf": [{"type": "string", "const": "x"}, {"type": "null"}]}
    assert schemas.compact({"type": "object", "properties": {"c": kept}})["properties"]["c"] == kept
