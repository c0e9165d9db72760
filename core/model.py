"""Immutable records the index holds and queries return."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

NOTE = "note"
ATTACHMENT = "attachment"
FOLDER = "folder"


@lru_cache(maxsize=65536)
def _iso_utc(seconds: int) -> str:
    # a listing of 10k rows formats few distinct seconds: cached, this was half the row cost
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Link:
    """One outgoing link as written in a note."""

    target: str  # the linked name or path, without heading, block or alias
    kind: str  # "wiki", "embed" or "markdown"
    heading: str | None = None
    alias: str | None = None

    def __reduce__(self):  # positional pickling: 2x faster than the dataclass default (parse workers)
        return (Link, (self.target, self.kind, self.heading, self.alias))


@dataclass(frozen=True, slots=True)
class Entry:
    """A note, an attachment or a folder, as of one index generation.

    `frontmatter` is JSON-safe and must be treated as read-only: entries are shared by
    every snapshot that contains them.
    """

    path: str
    kind: str
    size_bytes: int
    mtime_ns: int
    title: str
    inode: int = 0
    frontmatter: dict[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    content_chars: int = 0
    frontmatter_error: str | None = None
    decode_error: bool = False
    mime_type: str | None = None
    okf_status: str = "stable"
    okf_trust: str = "unverified"
    stale_date: dt.date | None = None
    stale_instant: dt.datetime | None = None

    def __reduce__(self):  # positional pickling: parse workers ship 100k entries to the parent
        return (Entry, tuple([getattr(self, name) for name in _ENTRY_FIELDS]))

    @property
    def folder(self) -> str:
        """The containing folder's vault-relative path ("" at the root)."""
        cut = self.path.rfind("/")
        return self.path[:cut] if cut >= 0 else ""

    @property
    def name(self) -> str:
        """The last path segment (file or folder name)."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def modified_at(self) -> str:
        """Last modification as ISO 8601 UTC, second precision."""
        return _iso_utc(self.mtime_ns // 1_000_000_000)


_ENTRY_FIELDS = tuple(f.name for f in fields(Entry))


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file the scanner could not index, with the reason."""

    path: str
    reason: str
