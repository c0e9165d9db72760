"""What `core.disk.reader.read` answers, and its error: the result's fields, the truncation marker
and the JSON shape agents receive (kept apart from the read itself so front ends and the MCP tools
can name the shape without the disk code)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core.errors import VaultError
from vaultwatch.core.model import ATTACHMENT


class ReadError(VaultError):
    """A read that cannot be answered as asked (bad section, line range, offset, file type)."""

    code = "invalid_read"


@dataclass(frozen=True, slots=True)
class ReadResult:
    """What `read` returns. `content` is None for frontmatter-only reads and attachments."""

    path: str
    kind: str
    etag: str
    size_bytes: int
    modified_at: str
    title: str
    selection: str
    okf_bundle: bool
    frontmatter: dict[str, Any] = field(default_factory=dict)
    frontmatter_error: str | None = None
    decode_error: bool = False
    status: str | None = None
    stale: bool | None = None
    stale_after: Any = None
    trust_tier: str | None = None
    tags: tuple[str, ...] = ()
    content: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    total_lines: int | None = None
    offset: int = 0
    total_chars: int = 0
    next_offset: int | None = None
    mime_type: str | None = None
    content_base64: str | None = None
    content_omitted: str | None = None

    @property
    def truncated(self) -> bool:
        """True when the content stops before the end of the selection (see `next_offset`)."""
        return self.next_offset is not None

    def marker(self) -> str | None:
        """A one-line note saying which part was returned and how to get the rest, or None."""
        if self.next_offset is None:
            return None
        end = self.offset + len(self.content or "")
        return (
            f"[vaultwatch: truncated: showing characters {self.offset}-{end} of {self.total_chars} "
            f"of {self.path!r}; call read again with the same arguments and offset={self.next_offset} "
            "for the next part]"
        )

    def as_json(self) -> dict[str, Any]:
        """The JSON shape agents receive (fields that do not apply are left out)."""
        out: dict[str, Any] = {
            "path": self.path,
            "kind": self.kind,
            "title": self.title,
            "etag": self.etag,
            "size_bytes": self.size_bytes,
            "modified_at": self.modified_at,
            "selection": self.selection,
        }
        if self.kind == ATTACHMENT:
            out["mime_type"] = self.mime_type
            if self.content_base64 is not None:
                out["content_base64"] = self.content_base64
            if self.content_omitted is not None:
                out["content_omitted"] = self.content_omitted
            return out
        out.update(
            okf_bundle=self.okf_bundle,
            status=self.status,
            stale=self.stale,
            stale_after=self.stale_after,
            trust_tier=self.trust_tier,
            tags=list(self.tags),
            frontmatter=self.frontmatter,
        )
        if self.frontmatter_error is not None:
            out["frontmatter_error"] = self.frontmatter_error
        if self.decode_error:
            out["decode_error"] = True
        if self.selection != "frontmatter":
            out.update(
                content=self.content,
                start_line=self.start_line,
                end_line=self.end_line,
                total_lines=self.total_lines,
                offset=self.offset,
                total_chars=self.total_chars,
                truncated=self.truncated,
                next_offset=self.next_offset,
            )
        return out
