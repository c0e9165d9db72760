"""The write tools (write, edit, update_frontmatter, rename, delete): thin adapters over core.writes.

Every rule lives in core.writes.Writer, the one write path the TUI uses too: path safety,
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

from core.vault import Vault
from core.writes import MAX_WRITE_BYTES, WriteResult, Writer

from .activity import current_call
from .results import fail, ok, vault_errors

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


_PATH_ERRORS = ('"absolute path blocked" / "path traversal blocked" / "hidden path blocked": the path starts at the '
                'filesystem root, escapes the vault with "..", or is hidden (dot-prefixed, like .obsidian, .git, '
                '.trash): vaultwatch never writes there; pass a vault-relative path outside hidden folders. '
                '"symlink escapes vault": a folder on the path links outside the vault; write elsewhere')
_CONFLICT = ('"revision conflict" (the note changed since you read it; the message carries the current etag): read '
             'it again, re-apply your change to the new content and retry with the new etag')
_RETURNS = ('Returns: {"operation", "path" (after the call), "etag" (SHA-256 of the new bytes, use it as the next '
            'if_match; null after delete), "previous_etag", "created", "changed" (false when the note already was '
            'as asked), "changed_paths" (every path written, moved or removed, incl. notes whose links were '
            'rewritten), "diff_summary", "warnings", "moved_to" (rename target or trash location)}.')

WRITE = f"""Create a Markdown note, or replace an existing note's whole content.

When to use: to create a new note, or to rewrite one completely. To change part of a note use 'edit' (exact text or a heading's section) and to change frontmatter keys use 'update_frontmatter': both keep every other byte and cannot clobber a concurrent edit elsewhere in the note. Use 'read' first to get the etag of a note you replace.

Parameters:
- path: vault-relative, ending in .md (e.g. "Projects/Plan.md"); missing parent folders are created.
- content: the full note text, frontmatter included (UTF-8, no NUL characters, at most {MAX_WRITE_BYTES // 2**20} MiB).
- if_match: the etag from 'read'; required to replace an existing note unless overwrite is true. The write happens only if the note is still exactly those bytes.
- overwrite: true replaces an existing note without checking its etag (it may discard someone's edit: prefer if_match).
- create_only: true fails instead of replacing anything.

Behavior: atomic (a temporary file in the same folder is synced, then swapped in): readers see the old or the new note, never a mix. A replaced note keeps its file mode, its BOM and its CRLF line breaks. Writing the bytes already there changes nothing (changed=false). The index and the human's screen update at once. An agent may not add a `verified` entry whose `by` starts with "human:": record your own check as by "agent:<name>".

Errors (is_error, text starts "Error: "):
- {_PATH_ERRORS}.
- "... is not a Markdown note": use a path ending in .md.
- "... already exists: to replace it pass if_match=...": read the note, then pass its etag (or overwrite=true).
- {_CONFLICT}; "already exists" with create_only: choose another path.
- "content contains NUL", "over the ... write cap", "agents cannot attest human review": fix the content.
- "write failed: disk full / permission denied / read-only file system": the note is unchanged; fix the cause and retry.

{_RETURNS}"""

EDIT = f"""Change part of a note in place: replace an exact piece of text, or replace, append to or prepend to the content under one heading.

When to use: for targeted changes to a note's body (or its frontmatter text) without resending the whole note. To set or remove frontmatter keys use 'update_frontmatter' (it keeps comments and formatting); to rewrite a note completely use 'write'; to see the text first use 'read'.

Parameters (give either old_text + new_text, or heading + mode + text):
- old_text / new_text: old_text must match the note exactly (whitespace, case and line breaks included) and exactly once; set replace_all=true to replace every occurrence. In a note with CRLF line breaks, text with plain line breaks matches and is written back with CRLF.
- heading: a heading's text ("Tasks"), with its level to pick one of several ("## Tasks"), or under its parent ("Week 1#Notes"). Headings inside code blocks do not count.
- mode: "append" adds text at the end of the heading's own content, "prepend" right below the heading line, "replace" replaces that content. The heading's own content ends at its first sub-heading: child headings and their content are never touched (to edit a child, name the child).
- text: inserted as whole lines (a final line break is added when missing); add a leading or trailing empty line yourself when you want a blank line.
- if_match: the etag from 'read'; when given, the edit happens only if the note is unchanged since.

Behavior: atomic, like write; nothing else in the note changes. An edit that would break the note's frontmatter YAML is refused.

Errors (is_error, text starts "Error: "):
- "old_text not found" (the message says when a match differing only in whitespace exists): read the note again and copy the text exactly. "old_text matches N times (at lines ...)": add surrounding text, or pass replace_all=true.
- "heading not found" (lists the note's headings with line numbers) / "ambiguous heading" (lists every candidate with its line and parent): pass one of them as "Parent#Heading" or "## Heading".
- "this change would break the note's frontmatter": use update_frontmatter.
- "not found": the note does not exist; create it with write. "... is not valid UTF-8": replace it whole with write.
- {_PATH_ERRORS}; {_CONFLICT}; "write failed: ...": the note is unchanged.

{_RETURNS}"""

UPDATE_FRONTMATTER = f"""Set, delete or append to keys of a note's YAML frontmatter, changing only those keys' lines.

When to use: to change properties such as status, tags, stale_after or verified. Unlike 'write' or 'edit', comments, key order, quoting, date formats and the body stay byte-identical. To change body text use 'edit'.

Parameters (at least one of set, delete, append; each key in only one of them):
- set: {{"key": value}}; JSON values (strings, numbers, booleans, null, lists, objects). A new key is added at the end of the block. A string that is an ISO date ("2026-03-01") is written as a YAML date, as Obsidian writes dates; other strings YAML would read as another type ("true", "12") are quoted. Setting the value a key already has changes nothing.
- delete: ["key", ...]; an absent key is ignored.
- append: {{"key": item}} adds one item to a list (creates the list when missing; a single mapping becomes a list of two). Typical: append {{"verified": {{"by": "agent:<your name>", "at": "<ISO datetime>"}}}} after you checked a note (machine-confirmed).
- if_match: the etag from 'read'; when given, the update happens only if the note is unchanged since.

Behavior: atomic, like write. A note without frontmatter gets a new block at the top. The result is re-parsed and must equal exactly the requested change, or nothing is written. Agents cannot attest human review: adding a `verified` entry whose `by` starts with "human:" is refused (only the person at vaultwatch can do that).

Errors (is_error, text starts "Error: "):
- "the frontmatter YAML is malformed ..." / "never closes": the block is broken; fix it with edit or rewrite the note with write (vaultwatch never adds a second block).
- "key ... appears N times", "... flow mapping", "could not be made surgically": edit the block as text with edit instead.
- "cannot append to ...: it holds a ...": use set.
- "agents cannot attest human review": use by "agent:<your name>".
- "not found": create the note with write. {_PATH_ERRORS}; {_CONFLICT}.

{_RETURNS}"""

RENAME = f"""Rename or move a note, an attachment or a folder, and rewrite every link to it across the vault, as Obsidian does.

When to use: to rename or reorganise notes without breaking links. Never re-create a note under a new name with 'write' + 'delete': that breaks every link to it.

Parameters:
- path: the current vault-relative path (a note, an allowlisted attachment, or a folder).
- new_path: the new vault-relative path; it must not exist (missing parent folders are created). A note keeps its .md extension, an attachment its type.
- update_links (default true): rewrite links in other notes (and relative links inside the moved notes).
- if_match: the etag from 'read' (files only): the move happens only if the file is unchanged since.

Behavior: the move itself is atomic and never overwrites. Then each linking note is rewritten atomically on its own: wiki links ([[Name]], [[Name|alias]], [[Name#Heading]], ![[embed]], [[Folder/Name]]), Markdown links ([t](Folder/Name.md), percent-encoded or <...>) and wiki links in frontmatter strings, keeping each link's style (a bare name stays a bare name while unambiguous, relative stays relative) and its heading, alias and title. Links in code are not links. Links that were already ambiguous (two files share the name) are left alone and listed in warnings. Not idempotent: a second call finds no source.

Errors (is_error, text starts "Error: "):
- "destination exists": choose another new_path, or move or delete that file first.
- "a note must keep the .md extension" / "does not have an allowlisted attachment extension": keep the extension.
- "cannot move folder ... into itself"; "is a symbolic link": rename its target instead.
- "not found": check path with list_documents. {_PATH_ERRORS}; {_CONFLICT}.

{_RETURNS}"""

DELETE = f"""Delete a note, attachment or folder by moving it to the vault's .trash/ folder (as Obsidian does), or permanently when explicitly confirmed.

When to use: to remove notes that should go. To retire a note but keep it findable, prefer update_frontmatter with set {{"status": "deprecated"}}; to move it elsewhere use 'rename'.

Parameters:
- path: vault-relative path of the note, attachment or folder.
- permanent (default false): delete for good instead of moving to .trash/. Requires confirm_path.
- confirm_path: must repeat path exactly, character for character, when permanent is true.
- if_match: the etag from 'read' (files only): the delete happens only if the file is unchanged since.

Behavior: the trash keeps the file name; a name already in the trash gets a number ("Plan 1.md"). The human can restore it from .trash/ in Obsidian or a file manager (agents cannot read .trash/: it is hidden). A folder goes to the trash whole; only an empty folder can be deleted permanently. warnings lists notes whose links to the deleted note are now broken. Not idempotent: a second call reports "not found".

Errors (is_error, text starts "Error: "):
- "permanent deletion needs confirm_path=...": repeat the exact path, or omit permanent to use the trash.
- "folder ... is not empty": use the trash, or delete its notes first.
- "not found": check path with list_documents. {_PATH_ERRORS}; {_CONFLICT}.
- "the vault's .trash is not a plain folder": fix .trash, or delete permanently.

{_RETURNS}"""

P_PATH = 'Vault-relative path of the note, ending in .md, e.g. "Projects/Plan.md".'
P_CONTENT = "The complete note text (frontmatter included)."
P_IF_MATCH = "The etag returned by read (SHA-256 hex of the note's bytes); the change happens only if it still matches."
P_OVERWRITE = "Replace an existing note without an etag check (prefer if_match)."
P_CREATE_ONLY = "Fail instead of replacing an existing note."
P_OLD_TEXT = "Exact text to replace; must occur exactly once unless replace_all."
P_NEW_TEXT = "Replacement text."
P_REPLACE_ALL = "Replace every occurrence of old_text."
P_HEADING = 'Heading whose own content to change: "Tasks", "## Tasks" or "Parent#Tasks".'
P_MODE = '"append", "prepend" or "replace" the heading\'s own content (child headings are never touched).'
P_TEXT = "Text for the section edit, inserted as whole lines."
P_SET = 'Keys to set: {"status": "stable", "tags": ["a", "b"]}.'
P_DELETE = 'Keys to remove: ["draft_notes"].'
P_APPEND = 'One item to add to each named list: {"verified": {"by": "agent:me", "at": "2026-03-01T10:00:00Z"}}.'
P_SRC = 'Current vault-relative path of the note, attachment or folder.'
P_DST = 'New vault-relative path; must not exist yet.'
P_UPDATE_LINKS = "Rewrite links to the moved files across the vault (default true)."
P_DEL_PATH = 'Vault-relative path of the note, attachment or folder to delete.'
P_PERMANENT = "Delete for good instead of moving to .trash/ (needs confirm_path)."
P_CONFIRM = "The exact same path again, required when permanent is true."


def _annotations(title: str, *, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=False, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


def agent_name(ctx: Context | None) -> str:
    """`agent:<client name>` from the MCP handshake (or `agent:unknown`)."""
    try:
        info = ctx.request_context.session.client_params.client_info  # type: ignore[union-attr]
        name = info.name or "unknown"
    except Exception:  # no handshake info on this transport: still an agent, never the human
        name = "unknown"
    return "agent:" + str(name)[:80]


def _result(result: WriteResult) -> CallToolResult:
    record = current_call()
    record.listed(result.changed_paths, len(result.changed_paths))
    record.diff_summary = result.diff_summary
    return ok(result.as_dict())


def _start() -> None:
    current_call().write = True


def register(server: MCPServer, env: Any) -> None:
    """The hook mcp_server.server calls: add the write tools unless the server is read-only."""
    if getattr(env, "read_only", False):
        return
    register_write_tools(server, env.vault, getattr(env, "writer", None) or Writer(env.vault))


def register_write_tools(server: MCPServer, vault: Vault, writer: Writer) -> None:
    """Add write, edit, update_frontmatter, rename and delete to `server`, all writing through `writer`."""

    @vault_errors
    def write(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=P_PATH)],
        content: Annotated[str, Field(description=P_CONTENT)],
        ctx: Context,
        if_match: Annotated[str | None, Field(max_length=128, description=P_IF_MATCH)] = None,
        overwrite: Annotated[bool, Field(description=P_OVERWRITE)] = False,
        create_only: Annotated[bool, Field(description=P_CREATE_ONLY)] = False,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        return _result(writer.write(path, content, if_match=if_match, overwrite=overwrite, create_only=create_only,
                                    actor=agent_name(ctx)))

    server.add_tool(write, name="write", title="Write Note", description=WRITE,
                    annotations=_annotations("Write Note", destructive=True, idempotent=True))

    @vault_errors
    def edit(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=P_PATH)],
        ctx: Context,
        old_text: Annotated[str | None, Field(description=P_OLD_TEXT)] = None,
        new_text: Annotated[str | None, Field(description=P_NEW_TEXT)] = None,
        replace_all: Annotated[bool, Field(description=P_REPLACE_ALL)] = False,
        heading: Annotated[str | None, Field(max_length=1024, description=P_HEADING)] = None,
        mode: Annotated[Literal["append", "prepend", "replace"] | None, Field(description=P_MODE)] = None,
        text: Annotated[str | None, Field(description=P_TEXT)] = None,
        if_match: Annotated[str | None, Field(max_length=128, description=P_IF_MATCH)] = None,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        by_text = old_text is not None or new_text is not None
        by_heading = heading is not None or mode is not None or text is not None
        if by_text and by_heading:
            return fail("give either old_text + new_text, or heading + mode + text, not both")
        if by_heading:
            missing = [n for n, v in (("heading", heading), ("mode", mode), ("text", text)) if v is None]
            if missing:
                return fail(f"a section edit needs heading, mode and text; missing: {', '.join(missing)}")
            return _result(writer.edit_section(path, heading, mode, text, if_match=if_match, actor=agent_name(ctx)))
        if old_text is None or new_text is None:
            return fail("give old_text and new_text (exact replacement), or heading, mode and text (section edit)")
        return _result(writer.edit(path, old_text, new_text, replace_all=replace_all, if_match=if_match,
                                   actor=agent_name(ctx)))

    server.add_tool(edit, name="edit", title="Edit Note", description=EDIT,
                    annotations=_annotations("Edit Note", destructive=True, idempotent=False))

    @vault_errors
    def update_frontmatter(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=P_PATH)],
        ctx: Context,
        set: Annotated[dict[str, JsonValue] | None, Field(description=P_SET)] = None,
        delete: Annotated[list[str] | None, Field(max_length=1000, description=P_DELETE)] = None,
        append: Annotated[dict[str, JsonValue] | None, Field(description=P_APPEND)] = None,
        if_match: Annotated[str | None, Field(max_length=128, description=P_IF_MATCH)] = None,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        return _result(writer.update_frontmatter(path, set=set, delete=delete, append=append, if_match=if_match,
                                                 actor=agent_name(ctx)))

    server.add_tool(update_frontmatter, name="update_frontmatter", title="Update Frontmatter",
                    description=UPDATE_FRONTMATTER,
                    annotations=_annotations("Update Frontmatter", destructive=True, idempotent=False))

    @vault_errors
    def rename(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=P_SRC)],
        new_path: Annotated[str, Field(min_length=1, max_length=1024, description=P_DST)],
        ctx: Context,
        update_links: Annotated[bool, Field(description=P_UPDATE_LINKS)] = True,
        if_match: Annotated[str | None, Field(max_length=128, description=P_IF_MATCH)] = None,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        return _result(writer.rename(path, new_path, update_links=update_links, if_match=if_match,
                                     actor=agent_name(ctx)))

    server.add_tool(rename, name="rename", title="Rename or Move", description=RENAME,
                    annotations=_annotations("Rename or Move", destructive=False, idempotent=False))

    @vault_errors
    def delete(
        path: Annotated[str, Field(min_length=1, max_length=1024, description=P_DEL_PATH)],
        ctx: Context,
        permanent: Annotated[bool, Field(description=P_PERMANENT)] = False,
        confirm_path: Annotated[str | None, Field(max_length=1024, description=P_CONFIRM)] = None,
        if_match: Annotated[str | None, Field(max_length=128, description=P_IF_MATCH)] = None,
    ) -> Annotated[CallToolResult, WriteOutput]:
        _start()
        return _result(writer.delete(path, permanent=permanent, confirm_path=confirm_path, if_match=if_match,
                                     actor=agent_name(ctx)))

    server.add_tool(delete, name="delete", title="Delete Note", description=DELETE,
                    annotations=_annotations("Delete Note", destructive=True, idempotent=False))


__all__ = ["WRITE_TOOLS", "WriteOutput", "agent_name", "register", "register_write_tools"]
