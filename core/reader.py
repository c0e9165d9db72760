"""Read one vault file for a caller: a note whole, its frontmatter only, one section or a
line range, or an attachment's metadata (and bytes up to a cap).

Every read goes through the path resolver and `Vault.disk_path` (so hidden paths and
symlink escapes are refused) and reads the bytes fresh from disk: the `etag` (SHA-256 of
the file's bytes) always describes exactly the bytes the content came from. Long content
is paged by characters; a result that stops early says where the next page starts.
"""
from __future__ import annotations

import base64
import hashlib
import os
import stat as stat_mod
from dataclasses import dataclass, field
from typing import Any

from . import okf
from .errors import NotFoundError, VaultError
from .model import ATTACHMENT, FOLDER, Entry
from .parse import decode, parse_note
from .paths import normalize
from .sections import SectionError, find_heading

DEFAULT_MAX_CHARS = 40_000
MAX_CHARS_LIMIT = 1_000_000
ATTACHMENT_CAP_BYTES = 1024 * 1024
MAX_READ_BYTES = 64 * 1024 * 1024
SELECTIONS = ("whole", "frontmatter", "section", "lines")



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
        return (f"[vaultwatch: truncated: showing characters {self.offset}-{end} of {self.total_chars} "
                f"of {self.path!r}; call read again with the same arguments and offset={self.next_offset} "
                "for the next part]")

    def as_json(self) -> dict[str, Any]:
        """The JSON shape agents receive (fields that do not apply are left out)."""
        out: dict[str, Any] = {
            "path": self.path, "kind": self.kind, "title": self.title, "etag": self.etag,
            "size_bytes": self.size_bytes, "modified_at": self.modified_at, "selection": self.selection,
        }
        if self.kind == ATTACHMENT:
            out["mime_type"] = self.mime_type
            if self.content_base64 is not None:
                out["content_base64"] = self.content_base64
            if self.content_omitted is not None:
                out["content_omitted"] = self.content_omitted
            return out
        out.update(
            okf_bundle=self.okf_bundle, status=self.status, stale=self.stale, stale_after=self.stale_after,
            trust_tier=self.trust_tier, tags=list(self.tags), frontmatter=self.frontmatter,
        )
        if self.frontmatter_error is not None:
            out["frontmatter_error"] = self.frontmatter_error
        if self.decode_error:
            out["decode_error"] = True
        if self.selection != "frontmatter":
            out.update(content=self.content, start_line=self.start_line, end_line=self.end_line,
                       total_lines=self.total_lines, offset=self.offset, total_chars=self.total_chars,
                       truncated=self.truncated, next_offset=self.next_offset)
        return out


def _section_span(text: str, all_lines: list[str], wanted: str) -> tuple[int, int]:
    """1-based inclusive line span of the section under heading `wanted` (heading line and
    child headings included, trailing blank lines dropped). Headings are resolved exactly as
    section edits resolve them (core.sections.find_heading: text, '## Text' or 'Parent#Text')."""
    try:
        head = find_heading(text, wanted)
    except SectionError as exc:
        listed = "; ".join(exc.candidates) or "the note has no headings"
        if exc.code == "heading_not_found":
            raise ReadError(f"section not found: no heading {wanted!r} ({listed}); pass one of these headings, "
                            "or read the note whole or by lines") from None
        if exc.code == "ambiguous_heading":
            raise ReadError(f"section is ambiguous: {wanted!r} matches several headings ({listed}); name one as "
                            "'Parent#Heading' or with its level as '### Heading', or read by lines") from None
        raise ReadError(f"invalid section: {exc.message}") from None
    first = head.line
    last = text.count("\n", 0, head.end)
    if head.end >= len(text) and not text.endswith("\n"):
        last += 1
    last = max(first, min(last, len(all_lines)))
    while last > first and not all_lines[last - 1].strip():
        last -= 1
    return first, last


def _page(text: str, offset: int, max_chars: int) -> tuple[str, int | None]:
    """The page of `text` starting at `offset`, cut at a line end when one is near; and the next offset."""
    if offset >= len(text):
        return "", None
    stop = offset + max_chars
    if stop >= len(text):
        return text[offset:], None
    cut = text.rfind("\n", offset + max_chars // 2, stop)
    if cut > 0:
        stop = cut + 1
    return text[offset:stop], stop


def _suggest(entries: dict[str, Entry], rel: str) -> str:
    folded = rel.casefold()
    name = folded.rsplit("/", 1)[-1]
    stem = name[:-3] if name.endswith(".md") else name
    hits = [p for p in entries if p.casefold() == folded or p.casefold() == folded + ".md"]
    if not hits:
        hits = [p for p, e in entries.items() if e.kind != FOLDER and
                p.rsplit("/", 1)[-1].casefold() in (name, stem + ".md")]
    hits = sorted(hits)[:3]
    return f" (did you mean {', '.join(repr(h) for h in hits)}?)" if hits else ""


def _read_bytes(real: str, rel: str) -> tuple[bytes, os.stat_result]:
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise NotFoundError(f"not found: {rel!r} no longer exists on disk; list_documents shows what exists") from None
    except OSError as exc:
        raise ReadError(f"cannot read {rel!r}: {exc.strerror or exc}; check the file's permissions") from None
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise ReadError(f"cannot read {rel!r}: it is not a regular file")
        if st.st_size > MAX_READ_BYTES:
            raise ReadError(f"cannot read {rel!r}: it is {st.st_size // (1024 * 1024)} MiB, "
                            f"above the {MAX_READ_BYTES // (1024 * 1024)} MiB read limit")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read(vault, path: object, *, section: str | None = None, lines: tuple[int, int] | None = None,
         frontmatter_only: bool = False, offset: int = 0, max_chars: int = DEFAULT_MAX_CHARS,
         attachment_content: bool = True, attachment_cap: int = ATTACHMENT_CAP_BYTES) -> ReadResult:
    """Read the file at a caller-supplied vault path.

    At most one of `section` (a heading's text, optionally with its `#` level), `lines`
    (1-based, inclusive (start, end) of the file as an editor numbers it; end past the
    last line is clamped) and `frontmatter_only` may be given; none means the whole note.
    `offset`/`max_chars` page the selected content by characters. Attachments return
    metadata plus base64 bytes when `attachment_content` and no larger than `attachment_cap`.

    Raises PathError (absolute, traversal, hidden, symlink escape), NotFoundError and
    ReadError, each with a message that says what to do instead.
    """
    chosen = [name for name, on in (("section", section is not None), ("lines", lines is not None),
                                    ("frontmatter_only", frontmatter_only)) if on]
    if len(chosen) > 1:
        raise ReadError(f"{' and '.join(chosen)} cannot be combined: pick one way to select part of the note")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise ReadError("offset must be a whole number >= 0 (the next_offset of a previous read)")
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or not 1 <= max_chars <= MAX_CHARS_LIMIT:
        raise ReadError(f"max_chars must be between 1 and {MAX_CHARS_LIMIT}")
    rel = normalize(path)
    real = vault.disk_path(rel)
    snap = vault.snapshot
    entry = snap.get(rel)
    if entry is None:
        snap = vault.refresh_paths([rel])  # created moments ago and not yet seen by the watcher?
        entry = snap.get(rel)
    if entry is None:
        raise NotFoundError(f"not found: {rel!r} is not in the vault{_suggest(snap.by_path, rel)}; "
                            "paths are case-sensitive and vault-relative; list_documents shows what exists")
    if entry.kind == FOLDER:
        raise ReadError(f"{rel!r} is a folder: list its notes with list_documents(folder={rel!r})")
    data, st = _read_bytes(real, rel)
    if (st.st_size, st.st_mtime_ns) != (entry.size_bytes, entry.mtime_ns):
        vault.refresh_paths([rel])  # the index lags the disk: bring it up to date for everyone
    etag = hashlib.sha256(data).hexdigest()
    modified = Entry(rel, entry.kind, st.st_size, st.st_mtime_ns, "").modified_at

    if entry.kind == ATTACHMENT:
        if section is not None or lines is not None or frontmatter_only:
            raise ReadError(f"{rel!r} is an attachment ({entry.mime_type}): section, lines and "
                            "frontmatter_only apply to notes only; read it without them")
        b64 = omitted = None
        if not attachment_content:
            omitted = "content not requested"
        elif len(data) > attachment_cap:
            omitted = (f"attachment is {len(data)} bytes, above the {attachment_cap}-byte cap for inline "
                       "content; open it from the vault folder instead")
        else:
            b64 = base64.b64encode(data).decode("ascii")
        return ReadResult(rel, ATTACHMENT, etag, len(data), modified, entry.title, "whole", snap.is_bundle,
                          mime_type=entry.mime_type, content_base64=b64, content_omitted=omitted)

    stem = rel.rsplit("/", 1)[-1]
    facts = parse_note(data, stem[:-3] if stem.endswith(".md") else stem)
    text, _ = decode(data)
    bundle = snap.is_bundle
    common: dict[str, Any] = dict(
        frontmatter=facts.frontmatter, frontmatter_error=facts.frontmatter_error, decode_error=facts.decode_error,
        status=facts.okf_status if bundle else None,
        stale=okf.is_stale(facts.stale_date, facts.stale_instant, vault.clock) if bundle else None,
        stale_after=facts.frontmatter.get("stale_after"),
        trust_tier=facts.okf_trust if bundle else None, tags=facts.tags,
    )
    if frontmatter_only:
        return ReadResult(rel, entry.kind, etag, len(data), modified, facts.title, "frontmatter", bundle, **common)

    all_lines = text.split("\n")
    if text.endswith("\n"):
        all_lines.pop()
    total_lines = len(all_lines)
    if section is not None:
        if not isinstance(section, str):
            raise ReadError("section must be a heading's text, e.g. 'Setup'")
        first, last = _section_span(text, all_lines, section)
        selection = "section"
    elif lines is not None:
        try:
            first, last = (int(lines[0]), int(lines[1]))
        except (TypeError, ValueError, IndexError):
            raise ReadError("lines must be [start, end], 1-based and inclusive, e.g. [1, 40]") from None
        if first < 1 or last < first:
            raise ReadError(f"lines [{first}, {last}] is not a range: use 1 <= start <= end, e.g. [1, 40]")
        if first > total_lines:
            raise ReadError(f"lines start at {first} but {rel!r} has {total_lines} lines: "
                            f"pick a start between 1 and {max(total_lines, 1)}")
        last = min(last, total_lines)
        selection = "lines"
    else:
        first, last, selection = (1 if total_lines else 0), total_lines, "whole"
    if selection == "whole":
        chosen_text = text
    else:
        chosen_text = "\n".join(all_lines[first - 1:last]) + "\n"
    if offset > len(chosen_text):
        raise ReadError(f"offset {offset} is past the end of the selection ({len(chosen_text)} characters): "
                        "start again from offset=0")
    piece, next_offset = _page(chosen_text, offset, max_chars)
    if next_offset is not None or offset:
        first_shown = first + chosen_text.count("\n", 0, offset)
        last_shown = first_shown + max(piece.count("\n") - (1 if piece.endswith("\n") else 0), 0)
        first, last = first_shown, min(last_shown, last)
    return ReadResult(rel, entry.kind, etag, len(data), modified, facts.title, selection, bundle, **common,
                      content=piece, start_line=first, end_line=last, total_lines=total_lines, offset=offset,
                      total_chars=len(chosen_text), next_offset=next_offset)
