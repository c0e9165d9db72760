"""The write tools (write, edit, update_frontmatter, rename, delete): thin adapters over core.edit.writes.

Every rule lives in core.edit.writes.Writer, the one write path the TUI uses too: path safety,
atomic replace, `if_match` conflicts, surgical frontmatter, link rewriting, the trash, and
the refusal of agent-made human attestations. These functions translate arguments, name
the calling agent as the writer (`agent:<client name>`), mark the call as a write with its
diff summary for the activity panel, and shape the result.

`register(server, env)` is the hook mcp_server.server calls; it adds nothing when the server
runs read-only (`--read-only`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

from vaultwatch.core.edit.writes import Writer, WriteResult
from vaultwatch.core.vault import Vault

from . import descriptions as d
from . import writecalls
from .results import fail, result_of, vault_errors

JsonValue = Any

WRITE_TOOLS = ("write", "edit", "update_frontmatter", "rename", "delete")


class WriteOutput(TypedDict):
    """What every write tool returns."""

    operation: str
    path: str
    etag: str | None
    previous_etag: str | None
    created: bool
    changed: bool
    changed_paths: list[str]
    diff_summary: str
    warnings: list[str]
    moved_to: str | None


def _annotations(title: str, *, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def agent_name(ctx: Context | None) -> str:
    """`agent:<client name>` from the MCP handshake (or `agent:unknown`)."""
    try:
        info = ctx.request_context.session.client_params.client_info  # type: ignore[union-attr]
        name = info.name
    except Exception:  # no handshake info on this transport: still an agent, never the human
        name = None
    return writecalls.actor(name)


def _result(result: WriteResult) -> CallToolResult:
    return result_of(writecalls.write_answer(result))


def _start() -> None:
    writecalls.started()


def register(server: MCPServer, env: Any) -> None:
    """The hook mcp_server.server calls: add the write tools unless the server is read-only."""
    if getattr(env, "read_only", False):
        return
    register_write_tools(server, env.vault, getattr(env, "writer", None) or Writer(env.vault))


def register_write_tools(server: MCPServer, vault: Vault, writer: Writer) -> None:
    """Add write, edit, update_frontmatter, rename and delete to `server`, all writing through `writer`."""

    @vault_errors
    def write(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_W_PATH)],
        content: Annotated[str, Field(description=d.P_CONTENT)],
        ctx: Context,
        if_match: Annotated[str | None, Field(max_length=128, description=d.P_IF_MATCH)] = None,
        overwrite: Annotated[bool, Field(description=d.P_OVERWRITE)] = False,
        create_only: Annotated[bool, Field(description=d.P_CREATE_ONLY)] = False,
    ) -> Annotated[CallToolResult, WriteOutput]:
        return result_of(  # the stdio front answers plain writes with it too (earlycalls.py)
            writecalls.write(
                writer,
                path=path,
                content=content,
                if_match=if_match,
                overwrite=overwrite,
                create_only=create_only,
                actor=agent_name(ctx),
            )
        )

    server.add_tool(
        write,
        name="write",
        title="Write Note",
        description=d.WRITE,
        annotations=_annotations("Write Note", destructive=True, idempotent=True),
    )

    @vault_errors
    def edit(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_W_PATH)],
        ctx: Context,
        old_text: Annotated[str | None, Field(description=d.P_OLD_TEXT)] = None,
        new_text: Annotated[str | None, Field(description=d.P_NEW_TEXT)] = None,
        replace_all: Annotated[bool, Field(description=d.P_REPLACE_ALL)] = False,
        heading: Annotated[str | None, Field(max_length=1024, description=d.P_HEADING)] = None,
        mode: Annotated[Literal["append", "prepend", "replace"] | None, Field(description=d.P_EDIT_MODE)] = None,
        text: Annotated[str | None, Field(description=d.P_TEXT)] = None,
        if_match: Annotated[str | None, Field(max_length=128, description=d.P_IF_MATCH)] = None,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        by_text = old_text is not None or new_text is not None
        by_heading = heading is not None or mode is not None or text is not None
        if by_text and by_heading:
            return fail("give either old_text + new_text, or heading + mode + text, not both")
        if by_heading:
            if heading is None or mode is None or text is None:
                missing = [n for n, v in (("heading", heading), ("mode", mode), ("text", text)) if v is None]
                return fail(f"a section edit needs heading, mode and text; missing: {', '.join(missing)}")
            return _result(writer.edit_section(path, heading, mode, text, if_match=if_match, actor=agent_name(ctx)))
        if old_text is None or new_text is None:
            return fail("give old_text and new_text (exact replacement), or heading, mode and text (section edit)")
        return _result(
            writer.edit(path, old_text, new_text, replace_all=replace_all, if_match=if_match, actor=agent_name(ctx))
        )

    server.add_tool(
        edit,
        name="edit",
        title="Edit Note",
        description=d.EDIT,
        annotations=_annotations("Edit Note", destructive=True, idempotent=False),
    )

    @vault_errors
    def update_frontmatter(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_W_PATH)],
        ctx: Context,
        set: Annotated[dict[str, JsonValue] | None, Field(description=d.P_SET)] = None,
        delete: Annotated[list[str] | None, Field(max_length=1000, description=d.P_DELETE)] = None,
        append: Annotated[dict[str, JsonValue] | None, Field(description=d.P_APPEND)] = None,
        if_match: Annotated[str | None, Field(max_length=128, description=d.P_IF_MATCH)] = None,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        return _result(
            writer.update_frontmatter(
                path, set=set, delete=delete, append=append, if_match=if_match, actor=agent_name(ctx)
            )
        )

    server.add_tool(
        update_frontmatter,
        name="update_frontmatter",
        title="Update Frontmatter",
        description=d.UPDATE_FRONTMATTER,
        annotations=_annotations("Update Frontmatter", destructive=True, idempotent=False),
    )

    @vault_errors
    def rename(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_SRC)],
        new_path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_DST)],
        ctx: Context,
        update_links: Annotated[bool, Field(description=d.P_UPDATE_LINKS)] = True,
        if_match: Annotated[str | None, Field(max_length=128, description=d.P_IF_MATCH)] = None,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        return _result(
            writer.rename(path, new_path, update_links=update_links, if_match=if_match, actor=agent_name(ctx))
        )

    server.add_tool(
        rename,
        name="rename",
        title="Rename or Move",
        description=d.RENAME,
        annotations=_annotations("Rename or Move", destructive=True, idempotent=False),
    )

    @vault_errors
    def delete(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=d.P_DEL_PATH)],
        ctx: Context,
        permanent: Annotated[bool, Field(description=d.P_PERMANENT)] = False,
        confirm_path: Annotated[str | None, Field(max_length=1024, description=d.P_CONFIRM)] = None,
        if_match: Annotated[str | None, Field(max_length=128, description=d.P_IF_MATCH)] = None,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        return _result(
            writer.delete(
                path, permanent=permanent, confirm_path=confirm_path, if_match=if_match, actor=agent_name(ctx)
            )
        )

    server.add_tool(
        delete,
        name="delete",
        title="Delete Note",
        description=d.DELETE,
        annotations=_annotations("Delete Note", destructive=True, idempotent=False),
    )


__all__ = ["WRITE_TOOLS", "WriteOutput", "agent_name", "register", "register_write_tools"]
