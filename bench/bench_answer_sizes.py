"""What agents pay per answer: bytes and estimated tokens (bytes / 4) per listed row, per search hit,
and for tools/list, on a generated vault, through an in-process client (the answers are the same as
on the socket). Also the default page of list_documents and its share of the answer budget.

`*_json_*` figures are the text as it was before the table rendering (the structured content
again, as compact JSON), `*_text_*` the text content now (its rows as a table); `*_wire_*` both
copies of an answer as they travel (the text escaped inside the JSON-RPC message).

    python bench/bench_answer_sizes.py [--notes 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client  # noqa: E402

from bench.common import emit, vault  # noqa: E402
from vaultwatch.core.clock import FixedClock  # noqa: E402
from vaultwatch.core.vault import Vault  # noqa: E402

try:
    from vaultwatch.mcp_server import budget  # noqa: E402
except ImportError:
    budget = None
from vaultwatch.mcp_server.server import build_server  # noqa: E402


def size(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def per_row(name: str, result, n: int) -> dict:
    """Bytes and estimated tokens per row of one answer: its text now, the JSON copy it replaced, the wire."""
    text = len(result.content[0].text.encode())
    as_json = size(result.structured_content)
    wire = len(json.dumps(result.content[0].text, ensure_ascii=False).encode()) + as_json
    wire_before = (
        len(
            json.dumps(
                json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False), ensure_ascii=False
            ).encode()
        )
        + as_json
    )
    return {
        f"{name}_json_bytes": round(as_json / n, 1),
        f"{name}_json_tokens": round(as_json / n / 4, 1),
        f"{name}_text_bytes": round(text / n, 1),
        f"{name}_text_tokens": round(text / n / 4, 1),
        f"{name}_wire_bytes_before": round(wire_before / n, 1),
        f"{name}_wire_bytes": round(wire / n, 1),
    }


async def measure(root: Path) -> dict:
    import datetime as dt

    v = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    v.load()
    v.wait_search_ready(120) if hasattr(v, "wait_search_ready") else None
    server, _ = build_server(v)
    async with Client(server, mode="legacy") as c:
        tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in (await c.list_tools()).tools]
        native = [t for t in tools if t["name"] in NATIVE]
        out: dict = {
            "tools_list_bytes_12_native": size(native),
            "tools_list_bytes_all": size(tools),
            "tools": len(tools),
        }
        out["tools_list_tokens_12_native"] = out["tools_list_bytes_12_native"] // 4
        page = await c.call_tool("list_documents", {"limit": 200})
        rows = page.structured_content["result"]
        out.update(per_row("listed_row", page, len(rows)))
        default = await c.call_tool("list_documents", {})
        out["default_page_rows"] = default.structured_content["returned"]
        out["default_page_text_bytes"] = len(default.content[0].text.encode())
        out["answer_budget_bytes"] = budget.DEFAULT_ANSWER_BYTES if budget else None
        hits = await c.call_tool("search", {"query": "project", "limit": 20})
        if not hits.is_error and hits.structured_content["result"]:
            out.update(per_row("search_hit", hits, len(hits.structured_content["result"])))
    return out


NATIVE = {
    "list_documents",
    "search",
    "read",
    "triage",
    "list_folders",
    "list_tags",
    "get_links",
    "write",
    "edit",
    "update_frontmatter",
    "rename",
    "delete",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=2000)
    args = ap.parse_args()
    root, manifest = vault(args.notes)
    emit({"bench": "answer_sizes", "notes": manifest.get("notes", args.notes), **asyncio.run(measure(root))})


if __name__ == "__main__":
    main()
