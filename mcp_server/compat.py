"""Compatibility tools, so an agent set up for another vault server keeps its prompts.

- "vault-cortex": `vault_list_notes` (Vault Cortex): note paths only, folder with a name
  boundary, glob relative to the folder, code-point order.
- "obsidian-mcp": `obsidian_list_notes` (obsidian-mcp): notes and folders of one folder,
  optionally recursive, as Markdown or JSON text; failures as "Error: ..." text.
Both are one `core.query.listing.Query` each, like every other listing.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from mcp.server import MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from vaultwatch.core.disk.paths import normalize_folder
from vaultwatch.core.model import FOLDER
from vaultwatch.core.query.listing import Query

from . import descriptions as d
from . import schemas
from .activity import current_call
from .results import ok, read_only, vault_errors
from .tools import ToolEnv, index_freshness

# These contracts have no cursor (seeds 001 and 003: one array, one text of every entry), so no default page
# cuts them; the hard cap keeps every answer within what MCP clients accept, and past it this says what to do.
NARROW = "narrow it with folder (or glob), or page through it with list_documents"


class ListNotesParams(BaseModel):
    """obsidian_list_notes arguments (one `params` object, as obsidian-mcp takes them)."""

    model_config = ConfigDict(str_strip_whitespace=True)

    folder: str = Field("", max_length=1024, description=d.P_OLN_FOLDER)
    recursive: bool = Field(False, description=d.P_OLN_RECURSIVE)
    response_format: Literal["markdown", "json"] = Field("markdown", description=d.P_OLN_FORMAT)
    vault: str | None = Field(
        None, max_length=256, description="Accepted for compatibility and ignored: vaultwatch serves one vault."
    )


def _markdown(folder: str, rows: list[dict]) -> str:
    where = folder or "/ (vault root)"
    if not rows:
        return f"# {where}\n\nNo notes or folders found."
    lines = [f"# {where}", "", f"{len(rows)} entries (backend: filesystem)", ""]
    for r in rows:
        if r["is_folder"]:
            lines.append(f"- {r['path']}/ (folder)")
        else:
            lines.append(f"- {r['path']} ({r['size_bytes']} bytes, modified {r['modified_at']})")
    return "\n".join(lines)


def register(server: MCPServer, env: ToolEnv) -> None:
    """Register the compatibility tools named in `env.compat`."""
    vault = env.vault
    if "vault-cortex" in env.compat:

        @vault_errors
        def vault_list_notes(
            glob: Annotated[str | None, Field(min_length=1, max_length=512, description=d.P_VLN_GLOB)] = None,
            folder: Annotated[str | None, Field(min_length=1, max_length=1024, description=d.P_VLN_FOLDER)] = None,
        ) -> Annotated[CallToolResult, schemas.PathList]:
            index_freshness(vault)
            res = vault.list(Query(folder=folder, pattern=glob, pattern_base="folder"))
            paths = [e.path for e in res.entries]
            current_call().listed(paths)
            return ok({"result": paths}, text=json.dumps(paths, ensure_ascii=False), too_big=NARROW)

        server.add_tool(
            vault_list_notes,
            name="vault_list_notes",
            title="List Notes",
            description=d.VAULT_LIST_NOTES,
            annotations=read_only("List Notes"),
        )

    if "obsidian-mcp" in env.compat:

        @vault_errors
        def obsidian_list_notes(
            params: Annotated[ListNotesParams, Field(description=d.P_OLN_PARAMS)],
        ) -> Annotated[CallToolResult, schemas.TextResult]:
            index_freshness(vault)
            folder = normalize_folder(params.folder) or ""
            q = Query(
                folder=folder if (folder or not params.recursive) else None,
                recursive=params.recursive,
                include_folders=True,
            )
            res = vault.list(q)
            rows = [
                {
                    "path": e.path,
                    "is_folder": e.kind == FOLDER,
                    "size_bytes": 0 if e.kind == FOLDER else e.size_bytes,
                    "modified_at": e.modified_at,
                }
                for e in res.entries
            ]
            current_call().listed(e.path for e in res.entries)
            if params.response_format == "json":
                text = json.dumps(
                    {"folder": folder, "count": len(rows), "backend": "filesystem", "entries": rows},
                    ensure_ascii=False,
                    separators=(",", ":"),
                )
            else:
                text = _markdown(folder, rows)
            return ok({"result": text}, text=text, too_big=NARROW)

        server.add_tool(
            obsidian_list_notes,
            name="obsidian_list_notes",
            title="List Obsidian Notes",
            description=d.OBSIDIAN_LIST_NOTES,
            annotations=read_only("List Obsidian Notes"),
        )
