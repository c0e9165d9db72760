"""Immutable records the index holds and queries return."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, NamedTuple

NOTE = "note"
ATTACHMENT = "attachment"
FOLDER = "folder"


@lru_cache(maxsize=65536)
def _iso_utc(seconds: int) -> str:
    # a listing of 10k rows formats few distinct seconds: cached, this was half the row cost
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")


class Link(NamedTuple):
    """One outgoing link as written in a note.

    A named tuple rather than a dataclass: immutable all the same, and a 100k-note vault holds
    ~300k of them, which are built two to three times faster this way on every load.
    """

    target: str  # the linked name or path, without heading, block or alias
    kind: str  # "wiki", "embed" or "markdown"
    heading: str | None = None
    alias: str | None = None


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
    # a note's headings (text) and block ids ("^id"), one a line: what `[[Note#Heading]]` and
    # `[[Note#^id]]` can point at (one string per note: cheap to pickle, cache and hold)
    anchors: str = ""

    def __reduce__(
        self,
    ) -> tuple[
        Callable[..., Entry], tuple[Any, ...]
    ]:  # positional pickling: parse workers ship 100k entries to the parent
        return (make_entry, tuple([getattr(self, name) for name in _ENTRY_FIELDS]))

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


class _EntryUnderConstruction(Entry):
    """Entry's slot layout with ordinary attribute assignment; `make_entry` fills one, then
    turns it into a (frozen) Entry by switching its class."""

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


def make_entry(
    path: str,
    kind: str,
    size_bytes: int,
    mtime_ns: int,
    title: str,
    inode: int = 0,
    frontmatter: dict[str, Any] | None = None,
    tags: tuple[str, ...] = (),
    links: tuple[Link, ...] = (),
    content_chars: int = 0,
    frontmatter_error: str | None = None,
    decode_error: bool = False,
    mime_type: str | None = None,
    okf_status: str = "stable",
    okf_trust: str = "unverified",
    stale_date: dt.date | None = None,
    stale_instant: dt.datetime | None = None,
    anchors: str = "",
) -> Entry:
    """An Entry, built ~7x faster than `Entry(...)`.

    A frozen dataclass's __init__ sets each field through object.__setattr__ (2.2 us for 17
    fields); a load builds 100k entries, in the parse workers and again in the parent. The
    result is an ordinary, frozen Entry.
    """
    e: Any = _new(_EntryUnderConstruction)  # fields set one by one, then it becomes an Entry
    e.path = path
    e.kind = kind
    e.size_bytes = size_bytes
    e.mtime_ns = mtime_ns
    e.title = title
    e.inode = inode
    e.frontmatter = {} if frontmatter is None else frontmatter
    e.tags = tags
    e.links = links
    e.content_chars = content_chars
    e.frontmatter_error = frontmatter_error
    e.decode_error = decode_error
    e.mime_type = mime_type
    e.okf_status = okf_status
    e.okf_trust = okf_trust
    e.stale_date = stale_date
    e.stale_instant = stale_instant
    e.anchors = anchors
    e.__class__ = Entry
    return e


_new = object.__new__


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file the scanner could not index, with the reason."""

    path: str
    reason: str
