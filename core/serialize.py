"""JSON shapes of index records, shared by the CLI and the MCP tools."""
from __future__ import annotations

from typing import Any

from . import okf
from .clock import Clock
from .model import ATTACHMENT, FOLDER, Entry


def entry_json(entry: Entry, clock: Clock, bundle: bool, *, frontmatter: bool = True) -> dict[str, Any]:
    """One listing row: path, kind, title, OKF fields (on a bundle), size, modified time, frontmatter."""
    row: dict[str, Any] = {"path": entry.path, "kind": entry.kind, "title": entry.title, "folder": entry.folder}
    if entry.kind == FOLDER:
        row.update(size_bytes=0, modified_at=entry.modified_at)
        return row
    if entry.kind == ATTACHMENT:
        row.update(size_bytes=entry.size_bytes, modified_at=entry.modified_at, mime_type=entry.mime_type)
        return row
    row["status"] = entry.okf_status if bundle else _raw_str(entry.frontmatter.get("status"))
    row["stale"] = okf.is_stale(entry.stale_date, entry.stale_instant, clock) if bundle else None
    row["trust_tier"] = entry.okf_trust if bundle else None
    row["tags"] = list(entry.tags)
    if frontmatter:
        row["frontmatter"] = entry.frontmatter
    row["size_bytes"] = entry.size_bytes
    row["modified_at"] = entry.modified_at
    if entry.frontmatter_error:
        row["frontmatter_error"] = entry.frontmatter_error
    if entry.decode_error:
        row["decode_error"] = True
    return row


def _raw_str(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
