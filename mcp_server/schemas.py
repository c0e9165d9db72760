"""Output shapes of the MCP tools (they become each tool's published output schema)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import WithJsonSchema
from typing_extensions import TypedDict

ROW_FIELDS = (
    "path, kind, title, folder, size_bytes, modified_at; notes: status, stale, trust_tier, tags, "
    "frontmatter (when asked), frontmatter_error/decode_error; attachments: mime_type"
)
TRIAGE_ROW_FIELDS = (
    "list_documents' rows; on the stale page also overdue_days, on broken_links broken_links "
    "(as get_links' broken, with line)"
)

# Rows are described, not checked: any per-row subschema (even {"type": "object"}) makes every
# client that validates results walk each row (the Python SDK's jsonschema: ~6 us a row, 60 ms
# at 10k rows, and ~15 us with per-field schemas); and the server's own check of its output is
# skipped for them (`Any`: they come straight from core, and reach the wire pre-serialised).
Rows = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "array",
            "description": "Rows in order: " + ROW_FIELDS,
        }
    ),
]
HIT_FIELDS = (
    "path, title, folder, score, snippet (matches in **), modified_at, status, stale, trust_tier, tags, duplicates?"
)
LINK_FIELDS = "target, kind (wiki|embed|markdown), heading, alias, resolved (the path, or null)"
CHANGE_FIELDS = (
    "id, at, kind (change|revert|outside), who, tool, path, summary, session?, src? (a rename's source), "
    "etag?, previous_etag?, reverted_by?, revert_of? (change ids)"
)


def described(what: str) -> WithJsonSchema:
    """An array whose items are described, not typed: the tool list stays small (every client pays for it at
    the start of each session) and a validating client does not walk every row (see Rows)."""
    return WithJsonSchema({"type": "array", "description": what})


Hits = Annotated[Any, described("Hits, best first: " + HIT_FIELDS)]
LinkRows = Annotated[Any, described("Links: " + LINK_FIELDS)]
BrokenLinkRows = Annotated[Any, described("Links: " + LINK_FIELDS + ", missing: file|heading|block, problem")]
ChangeRows = Annotated[Any, described("Changes, newest first: " + CHANGE_FIELDS)]
FolderRows = Annotated[Any, described("Folders: path, notes, subfolders, modified_at")]
TagRows = Annotated[Any, described("Tags: tag, count")]
SkippedRows = Annotated[Any, described("Files not indexed: path, reason")]
TriageRows = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "array",
            "description": "Rows in order: " + TRIAGE_ROW_FIELDS,
        }
    ),
]


class DocumentList(TypedDict):
    """A (page of a) listing: rows in order, the total match count and the cursor for the next page."""

    result: Rows
    total: int
    returned: int
    next_cursor: str | None
    okf_bundle: bool


class SearchHit(TypedDict):  # a row of SearchResults.result (described there, not typed: Hits)
    path: str
    title: str
    folder: str
    score: float
    snippet: str
    modified_at: str
    status: str | None
    stale: bool | None
    trust_tier: str | None
    tags: list[str]
    duplicates: NotRequired[list[str]]


class SearchResults(TypedDict):
    """Hits best first; total counts every match (core's SearchResult.total is always counted)."""

    result: Hits
    total: int
    returned: int
    next_cursor: str | None
    okf_bundle: bool
    match: Literal["all", "any"]
    mode: Literal["keyword", "semantic", "hybrid"]


class ReadOutput(TypedDict):
    """A note (whole, one section, a line range or frontmatter only) or an attachment."""

    path: str
    kind: Literal["note", "attachment"]
    title: str
    etag: str
    size_bytes: int
    modified_at: str
    selection: Literal["whole", "frontmatter", "section", "lines"]
    okf_bundle: NotRequired[bool]
    status: NotRequired[str | None]
    stale: NotRequired[bool | None]
    stale_after: NotRequired[str | None]
    trust_tier: NotRequired[str | None]
    tags: NotRequired[list[str]]
    frontmatter: NotRequired[Annotated[dict[str, Any], WithJsonSchema({"type": "object"})]]
    frontmatter_error: NotRequired[str]
    decode_error: NotRequired[bool]
    content: NotRequired[str | None]
    start_line: NotRequired[int | None]
    end_line: NotRequired[int | None]
    total_lines: NotRequired[int | None]
    offset: NotRequired[int]
    total_chars: NotRequired[int]
    truncated: NotRequired[bool]
    next_offset: NotRequired[int | None]
    notice: NotRequired[str]
    mime_type: NotRequired[str | None]
    content_base64: NotRequired[str]
    content_omitted: NotRequired[str]


class TriageCounts(TypedDict):  # TriageOutput.counts (described there: Counts)
    notes: int
    deprecated: int
    stale: int
    unverified: int
    machine_confirmed: int
    human_reviewed: int
    broken_frontmatter: int
    undecodable: int
    skipped_files: int
    broken: int
    broken_by_kind: dict[str, int]
    unwritten_links: int
    by_status: dict[str, int]


Counts = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "object",
            "description": "notes, deprecated, stale, unverified, machine_confirmed, human_reviewed, by_status; "
            "broken (the Broken tab's: bad links, broken_frontmatter, undecodable, skipped_files), broken_by_kind, "
            "unwritten_links",
        }
    ),
]


class SkippedFile(TypedDict):  # a row of TriageOutput.skipped (described there)
    path: str
    reason: str


TriageRuleLines = Annotated[
    dict[str, str],
    WithJsonSchema(
        {
            "type": "object",
            "description": "Each group's rule",
        }
    ),
]


class TriageOutput(TypedDict):
    """Triage counts, and when a category is asked for, one page of its notes."""

    as_of: str
    okf_bundle: bool
    counts: Counts
    category: str | None
    result: TriageRows
    total: int
    returned: int
    next_cursor: str | None
    skipped: NotRequired[SkippedRows]
    rules: NotRequired[TriageRuleLines]


class FolderRow(TypedDict):  # a row of FolderList.result (described there)
    path: str
    notes: int
    subfolders: int
    modified_at: str


class FolderList(TypedDict):
    result: FolderRows
    total: int
    returned: int
    next_cursor: str | None


class TagRow(TypedDict):  # a row of TagList.result (described there)
    tag: str
    count: int


class TagList(TypedDict):
    result: TagRows
    total: int
    returned: int
    next_cursor: str | None


class OutgoingLink(TypedDict):  # an item of Links' lists (described there: LinkRows)
    target: str
    kind: Literal["wiki", "embed", "markdown"]
    heading: str | None
    alias: str | None
    resolved: str | None


class Links(TypedDict):
    path: str
    outgoing: LinkRows
    backlinks: list[str]
    broken: BrokenLinkRows
    truncated: NotRequired[dict[str, int]]


class ChangeRow(TypedDict):  # a row of History.changes (described there: ChangeRows)
    id: int
    at: str
    kind: Literal["change", "revert", "outside"]
    who: str
    tool: str
    path: str
    summary: str
    session: NotRequired[str]
    src: NotRequired[str]
    etag: NotRequired[str | None]
    previous_etag: NotRequired[str | None]
    reverted_by: NotRequired[int]
    revert_of: NotRequired[int]


class History(TypedDict):
    """A note's journaled changes, newest first."""

    path: str
    changes: ChangeRows


class PathList(TypedDict):
    """vault_list_notes: vault-relative note paths (the text content is the bare JSON array)."""

    result: list[str]


class TextResult(TypedDict):
    """obsidian_list_notes: the Markdown or JSON text, exactly as the text content carries it."""

    result: str


ANNOTATIONS = frozenset({"title", "description", "examples", "deprecated", "readOnly", "writeOnly"})


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """The same JSON schema, cheaper for clients to compile and check: local `$ref`s inlined,
    `title`s dropped, and never a list of types (`"type": ["string", "null"]`): single-type
    dialects (Gemini's function declarations, OpenAPI 3.0 tools) refuse or misread one, so a
    nullable value stays `anyOf` [X, null].

    Validation semantics are unchanged (titles are annotations). It matters to clients that
    validate results with a generic validator: the Python SDK compiles each tool's output schema
    once per session (13 ms for `read`'s before, on this machine) and walks it on every result.
    A schema with a recursive `$ref` is returned as it is.
    """
    defs = schema.get("$defs") or {}
    expanding: list[str] = []

    def walk(node: Any, *, property_schema: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        # a $ref beside annotations only (a parameter's description) is inlined too: many function-calling
        # dialects resolve no $ref at all, and annotations never change what validates
        if (
            isinstance(ref, str)
            and set(node) <= ANNOTATIONS | {"$ref"}
            and ref.startswith("#/$defs/")
            and ref[8:] in defs
        ):
            name = ref[8:]
            if name in expanding:
                raise RecursionError(name)
            expanding.append(name)
            try:
                target = walk(defs[name], property_schema=property_schema)
            finally:
                expanding.pop()
            extra = {k: v for k, v in node.items() if k not in ("$ref", "title")}
            return {**target, **extra} if isinstance(target, dict) else target
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs" or (key == "title" and isinstance(value, str)):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: walk(sub, property_schema=True) for name, sub in value.items()}
            else:
                out[key] = walk(value)
        branches = out.get("anyOf")
        if isinstance(branches, list) and "type" not in out and all(_bare(b) for b in branches):
            kinds = [b["type"] for b in branches]
            if "integer" in kinds and "number" in kinds:  # every integer is a number: the same values
                branches = [b for b in branches if b["type"] != "integer"]
            if len(branches) == 1:
                del out["anyOf"]
                out["type"] = branches[0]["type"]
            else:
                out["anyOf"] = branches
        return out

    try:
        out = walk(schema)
    except RecursionError:
        return schema
    if defs and _has_ref(out):
        out["$defs"] = defs  # a $ref with siblings stays a $ref: keep what it points at
    return out


def compact_input(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's published input schema, compacted like `compact`, without the generated title,
    and with an optional argument whose default is null published as its plain type: leaving
    it out is how to say "none" (the server's own model, which validates every call, still
    accepts an explicit null)."""
    out = compact(schema)
    out.pop("title", None)
    required = set(out.get("required") or ())
    for name, prop in (out.get("properties") or {}).items():
        if not isinstance(prop, dict) or name in required or "default" not in prop or prop["default"] is not None:
            continue
        del prop["default"]
        branches = prop.get("anyOf")
        if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
            typed = branches[0] if branches[1] == {"type": "null"} else branches[1]
            if isinstance(typed, dict) and not set(typed) & (
                set(prop) - {"anyOf"}
            ):  # leave it out rather than send null
                del prop["anyOf"]
                prop.update(typed)
    return out


def _bare(branch: Any) -> bool:
    return isinstance(branch, dict) and set(branch) == {"type"} and isinstance(branch["type"], str)


def _has_ref(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_has_ref(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_ref(v) for v in node)
    return False
