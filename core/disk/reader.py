"""Read one vault file for a caller: a note whole, its frontmatter only, one section or a
line range, or an attachment's metadata (and bytes up to a cap).

Every read goes through the path resolver and `Vault.disk_path` (so hidden paths and
symlink escapes are refused) and reads the bytes fresh from disk: the `etag` (SHA-256 of
the file's bytes) always describes exactly the bytes the content came from. Long content
is paged by characters; a result that stops early says where the next page starts.

The safe open (core.disk.fileopen: note_bytes, editor_path, read_all, re-exported here for the
front ends that import them from the reader) and the result's shape (core.disk.readresult) are
modules of their own; this one chooses the selection and pages it.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultwatch.core.disk import textmap
from vaultwatch.core.disk.fileopen import MAX_READ_BYTES, editor_path, note_bytes, open_within, read_all  # noqa: F401 (re-exported)
from vaultwatch.core.disk.paths import normalize
from vaultwatch.core.disk.readresult import ReadError, ReadResult
from vaultwatch.core.errors import NotFoundError
from vaultwatch.core.markdown import okf
from vaultwatch.core.markdown.parse import decode, parse_note
from vaultwatch.core.markdown.sections import SectionError, find_heading
from vaultwatch.core.model import ATTACHMENT, FOLDER, Entry

if TYPE_CHECKING:
    from vaultwatch.core.clock import Clock
    from vaultwatch.core.markdown.parse import NoteFacts
    from vaultwatch.core.vault import Vault

DEFAULT_MAX_CHARS = 40_000
MAX_CHARS_LIMIT = 1_000_000
ATTACHMENT_CAP_BYTES = 1024 * 1024
SELECTIONS = ("whole", "frontmatter", "section", "lines")
# Notes this big are read through a page map (core.disk.textmap): each call hashes the bytes and
# decodes only the page asked for, instead of decoding and parsing the whole note.
WINDOWED_MIN_BYTES = 1024 * 1024
WINDOW_MISSES = 0  # answers that had to decode every chunk because the plan missed one (tests expect 0)
_MAPS = textmap.MapCache()


def _section_span(text: str, all_lines: list[str], wanted: str) -> tuple[int, int]:
    """1-based inclusive line span of the section under heading `wanted` (heading line and
    child headings included, trailing blank lines dropped). Headings are resolved exactly as
    section edits resolve them (core.markdown.sections.find_heading: text, '## Text' or 'Parent#Text')."""
    try:
        head = find_heading(text, wanted)
    except SectionError as exc:
        listed = "; ".join(exc.candidates) or "the note has no headings"
        if exc.code == "heading_not_found":
            raise ReadError(
                f"section not found: no heading {wanted!r} ({listed}); pass one of these headings, "
                "or read the note whole or by lines"
            ) from None
        if exc.code == "ambiguous_heading":
            raise ReadError(
                f"section is ambiguous: {wanted!r} matches several headings ({listed}); name one as "
                "'Parent#Heading' or with its level as '### Heading', or read by lines"
            ) from None
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
        hits = [
            p
            for p, e in entries.items()
            if e.kind != FOLDER and p.rsplit("/", 1)[-1].casefold() in (name, stem + ".md")
        ]
    hits = sorted(hits)[:3]
    return f" (did you mean {', '.join(repr(h) for h in hits)}?)" if hits else ""


@dataclass(frozen=True, slots=True)
class _Ask:
    """What the caller asked for, validated as far as it can be without the note's text."""

    section: str | None
    lines: tuple[int, int] | None
    frontmatter_only: bool
    offset: int
    max_chars: int


def _line_range(lines: object) -> tuple[int, int]:
    try:
        first, last = (int(lines[0]), int(lines[1]))  # type: ignore[index]
    except (TypeError, ValueError, IndexError):
        raise ReadError("lines must be [start, end], 1-based and inclusive, e.g. [1, 40]") from None
    if first < 1 or last < first:
        raise ReadError(f"lines [{first}, {last}] is not a range: use 1 <= start <= end, e.g. [1, 40]")
    return first, last


def _lines_within(lines: object, rel: str, total_lines: int) -> tuple[int, int]:
    """The asked line range, its end clipped to the note's `total_lines` (a start past them is an error)."""
    first, last = _line_range(lines)
    if first > total_lines:
        raise ReadError(
            f"lines start at {first} but {rel!r} has {total_lines} lines: "
            f"pick a start between 1 and {max(total_lines, 1)}"
        )
    return first, min(last, total_lines)


def _split_lines(text: str) -> list[str]:
    """The text's lines, without the empty one after a final newline."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _past_end(offset: int, total: int) -> ReadError:
    return ReadError(
        f"offset {offset} is past the end of the selection ({total} characters): start again from offset=0"
    )


def _common(facts: NoteFacts, bundle: bool, clock: Clock) -> dict[str, Any]:
    return dict(
        frontmatter=facts.frontmatter,
        frontmatter_error=facts.frontmatter_error,
        decode_error=facts.decode_error,
        status=facts.okf_status if bundle else None,
        stale=okf.is_stale(facts.stale_date, facts.stale_instant, clock) if bundle else None,
        stale_after=facts.frontmatter.get("stale_after"),
        trust_tier=facts.okf_trust if bundle else None,
        tags=facts.tags,
    )


def read(
    vault: Vault,
    path: object,
    *,
    section: str | None = None,
    lines: tuple[int, int] | None = None,
    frontmatter_only: bool = False,
    offset: int = 0,
    max_chars: int = DEFAULT_MAX_CHARS,
    attachment_content: bool = True,
    attachment_cap: int = ATTACHMENT_CAP_BYTES,
) -> ReadResult:
    """Read the file at a caller-supplied vault path.

    At most one of `section` (a heading's text, optionally with its `#` level), `lines`
    (1-based, inclusive (start, end) of the file as an editor numbers it; end past the
    last line is clamped) and `frontmatter_only` may be given; none means the whole note.
    `offset`/`max_chars` page the selected content by characters. Attachments return
    metadata plus base64 bytes when `attachment_content` and no larger than `attachment_cap`.

    A note of WINDOWED_MIN_BYTES or more is never decoded whole per call: the bytes are
    streamed for the etag and only the page asked for is decoded (see core.disk.textmap).

    Raises PathError (absolute, traversal, hidden, symlink escape), NotFoundError and
    ReadError, each with a message that says what to do instead.
    """
    chosen = [
        name
        for name, on in (
            ("section", section is not None),
            ("lines", lines is not None),
            ("frontmatter_only", frontmatter_only),
        )
        if on
    ]
    if len(chosen) > 1:
        raise ReadError(f"{' and '.join(chosen)} cannot be combined: pick one way to select part of the note")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise ReadError("offset must be a whole number >= 0 (the next_offset of a previous read)")
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or not 1 <= max_chars <= MAX_CHARS_LIMIT:
        raise ReadError(f"max_chars must be between 1 and {MAX_CHARS_LIMIT}")
    rel = normalize(path)
    snap = vault.snapshot
    entry = snap.get(rel)
    if entry is None:
        # an unindexed path: symlink escapes and hidden targets fail loudly, not as "not found" (an
        # indexed one gets the same checks from open_within's descriptor walk: one walk, not two)
        vault.disk_path(rel)
        snap = vault.refresh_paths([rel])  # created moments ago and not yet seen by the watcher?
        entry = snap.get(rel)
    if entry is None:
        skipped = next((s for s in (snap.skipped or ()) if s.path == rel), None)
        if skipped is not None:  # on disk, but not a note vaultwatch can serve: say why, not "not found"
            raise ReadError(f"cannot read {rel!r}: {skipped.reason}; vaultwatch does not index or read it")
        raise NotFoundError(
            f"not found: {rel!r} is not in the vault{_suggest(snap.by_path, rel)}; "
            "paths are case-sensitive and vault-relative; list_documents shows what exists"
        )
    if entry.kind == FOLDER:
        raise ReadError(f"{rel!r} is a folder: list its notes with list_documents(folder={rel!r})")
    fd, st = open_within(vault.root_real, rel)
    try:
        if (st.st_size, st.st_mtime_ns) != (entry.size_bytes, entry.mtime_ns):
            vault.refresh_paths([rel])  # the index lags the disk: bring it up to date for everyone
        modified = Entry(rel, entry.kind, st.st_size, st.st_mtime_ns, "").modified_at
        if entry.kind == ATTACHMENT:
            if section is not None or lines is not None or frontmatter_only:
                raise ReadError(
                    f"{rel!r} is an attachment ({entry.mime_type}): section, lines and "
                    "frontmatter_only apply to notes only; read it without them"
                )
            return _attachment(fd, st, rel, entry, modified, snap.is_bundle, attachment_content, attachment_cap)
        ask = _Ask(section, lines, frontmatter_only, offset, max_chars)
        stem = rel.rsplit("/", 1)[-1]
        stem = stem[:-3] if stem.endswith(".md") else stem
        if st.st_size >= WINDOWED_MIN_BYTES:
            return _note_windowed(vault, fd, st, rel, stem, entry.kind, modified, snap.is_bundle, ask)
        return _note_whole(vault, read_all(fd), rel, stem, entry.kind, modified, snap.is_bundle, ask)
    finally:
        os.close(fd)


def _attachment(
    fd: int, st: os.stat_result, rel: str, entry: Entry, modified: str, bundle: bool, want: bool, cap: int
) -> ReadResult:
    b64 = omitted = None
    if not want or st.st_size > cap:  # only the etag is needed: stream the bytes through the hash
        etag, size, _ = textmap.stream(fd, textmap.CHUNK, ())
    else:
        data = read_all(fd)
        etag, size = hashlib.sha256(data).hexdigest(), len(data)
    if not want:
        omitted = "content not requested"
    elif size > cap:
        omitted = (
            f"attachment is {size} bytes, above the {cap}-byte cap for inline "
            "content; open it from the vault folder instead"
        )
    else:
        b64 = base64.b64encode(data).decode("ascii")
    return ReadResult(
        rel,
        ATTACHMENT,
        etag,
        size,
        modified,
        entry.title,
        "whole",
        bundle,
        mime_type=entry.mime_type,
        content_base64=b64,
        content_omitted=omitted,
    )


def _note_whole(
    vault: Vault, data: bytes, rel: str, stem: str, kind: str, modified: str, bundle: bool, ask: _Ask
) -> ReadResult:
    """A note read whole: decode and parse all of its bytes (small notes)."""
    etag = hashlib.sha256(data).hexdigest()
    facts = parse_note(data, stem)
    text, _ = decode(data)
    common = _common(facts, bundle, vault.clock)
    if ask.frontmatter_only:
        return ReadResult(rel, kind, etag, len(data), modified, facts.title, "frontmatter", bundle, **common)
    all_lines = _split_lines(text)
    total_lines = len(all_lines)
    if ask.section is not None:
        if not isinstance(ask.section, str):
            raise ReadError("section must be a heading's text, e.g. 'Setup'")
        first, last = _section_span(text, all_lines, ask.section)
        selection = "section"
    elif ask.lines is not None:
        first, last = _lines_within(ask.lines, rel, total_lines)
        selection = "lines"
    else:
        first, last, selection = (1 if total_lines else 0), total_lines, "whole"
    if selection == "whole":
        chosen_text = text
    else:
        chosen_text = "\n".join(all_lines[first - 1 : last]) + "\n"
    offset = ask.offset
    if offset > len(chosen_text):
        raise _past_end(offset, len(chosen_text))
    piece, next_offset = _page(chosen_text, offset, ask.max_chars)
    if next_offset is not None or offset:
        first_shown = first + chosen_text.count("\n", 0, offset)
        last_shown = first_shown + max(piece.count("\n") - (1 if piece.endswith("\n") else 0), 0)
        first, last = first_shown, min(last_shown, last)
    return ReadResult(
        rel,
        kind,
        etag,
        len(data),
        modified,
        facts.title,
        selection,
        bundle,
        **common,
        content=piece,
        start_line=first,
        end_line=last,
        total_lines=total_lines,
        offset=offset,
        total_chars=len(chosen_text),
        next_offset=next_offset,
    )


def _note_windowed(
    vault: Vault, fd: int, st: os.stat_result, rel: str, stem: str, kind: str, modified: str, bundle: bool, ask: _Ask
) -> ReadResult:
    """A big note: stream its bytes through the hash, decode only the chunks the page needs.

    One pass over the file both hashes it and keeps the chunks the answer is decoded from,
    so the etag and the content come from the same bytes even if the file changes meanwhile
    (a map whose etag no longer matches is rebuilt, at most three times)."""
    global WINDOW_MISSES
    if ask.section is not None and not isinstance(ask.section, str):
        raise ReadError("section must be a heading's text, e.g. 'Setup'")
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    tmap = _MAPS.get(key)
    everything = False
    for _attempt in range(4):
        if tmap is None:
            tmap = textmap.build(fd)
        plan = None if everything else _plan(tmap, rel, ask)
        etag, size, get = textmap.stream(fd, tmap.chunk, plan if plan is not None else range(len(tmap.points)))
        if etag != tmap.etag:
            tmap = None  # changed since the map was made (or since it was cached)
            continue
        _MAPS.put(key, tmap)
        try:
            return _answer(vault, tmap, get, plan is None, etag, size, rel, stem, kind, modified, bundle, ask)
        except textmap.Missing:
            WINDOW_MISSES += 1  # a planning gap: correct, but answer from every chunk
            everything = True
    raise ReadError(f"cannot read {rel!r}: it kept changing while it was being read; read it again")


def _plan(tmap: textmap.TextMap, rel: str, ask: _Ask) -> set[int] | None:
    """The chunks the answer is decoded from, or None for all of them (first section read, facts
    that need the whole text). Raises the line-range errors that need only the map."""
    if tmap.facts("x") is None:
        return None
    if ask.frontmatter_only:
        return set()
    first = last = 0
    if ask.section is not None:
        span = tmap.sections.get(ask.section)
        if span is None:
            return None
        if isinstance(span, str):
            raise ReadError(span)
        first, last = span
    elif ask.lines is not None:
        first, last = _lines_within(ask.lines, rel, tmap.total_lines)
    need: set[int] = set()
    if first:
        a_lo, a_hi = tmap.line_bounds(first)
        need.update(tmap.span(a_lo, a_hi))
        b_lo, b_hi = tmap.line_bounds(last + 1) if last < tmap.total_lines else (tmap.total_chars,) * 2
        need.update(tmap.span(b_lo, b_hi))
        need.update(tmap.span(min(a_lo + ask.offset, b_lo), a_hi + ask.offset + ask.max_chars))
    else:
        need.update(tmap.span(ask.offset, ask.offset + ask.max_chars))
    return need


def _answer(
    vault: Vault,
    tmap: textmap.TextMap,
    get: Callable[[int], bytes],
    have_all: bool,
    etag: str,
    size: int,
    rel: str,
    stem: str,
    kind: str,
    modified: str,
    bundle: bool,
    ask: _Ask,
) -> ReadResult:
    facts = tmap.facts(stem)
    if facts is None:  # rare: a note whose facts depend on more than its head (see core.disk.textmap)
        facts = parse_note(b"".join(get(k) for k in range(len(tmap.points))), stem)
    common = _common(facts, bundle, vault.clock)
    if ask.frontmatter_only:
        return ReadResult(rel, kind, etag, size, modified, facts.title, "frontmatter", bundle, **common)
    total_lines = tmap.total_lines
    if ask.section is not None:
        span = tmap.sections.get(ask.section)
        if span is None:  # first read of this heading in this version: find it in the whole text
            text, _ = tmap.window(get, 0, tmap.total_chars)
            all_lines = _split_lines(text)
            try:
                span = _section_span(text, all_lines, ask.section)
            except ReadError as exc:
                span = exc.message
            del text, all_lines
            if len(tmap.sections) >= 64:
                tmap.sections.clear()
            tmap.sections[ask.section] = span
        if isinstance(span, str):
            raise ReadError(span)
        first, last = span
        selection = "section"
    elif ask.lines is not None:
        first, last = _lines_within(ask.lines, rel, total_lines)
        selection = "lines"
    else:
        first, last, selection = 1, total_lines, "whole"
    if selection == "whole":
        a, b, synthetic = 0, tmap.total_chars, False
    else:
        a = tmap.line_start(get, first)
        if last < total_lines:
            b, synthetic = tmap.line_start(get, last + 1), False
        else:
            b, synthetic = tmap.total_chars, not tmap.ends_with_lf
    length = b - a + synthetic
    offset, max_chars = ask.offset, ask.max_chars
    if offset > length:
        raise _past_end(offset, length)
    stop = min(offset + max_chars, length)
    got, newlines = tmap.window(get, a + min(offset, b - a), a + min(stop, b - a))
    if synthetic and stop > b - a:
        got += "\n"
    before = newlines - (first - 1) + (1 if synthetic and offset > b - a else 0)  # LFs of the selection before offset
    if offset >= length:
        piece, next_offset = "", None
    elif offset + max_chars >= length:
        piece, next_offset = got, None
    else:
        cut = got.rfind("\n", max_chars // 2)
        end = offset + cut + 1 if cut >= 0 and offset + cut > 0 else offset + max_chars
        piece, next_offset = got[: end - offset], end
    if next_offset is not None or offset:
        first_shown = first + before
        last_shown = first_shown + max(piece.count("\n") - (1 if piece.endswith("\n") else 0), 0)
        first, last = first_shown, min(last_shown, last)
    return ReadResult(
        rel,
        kind,
        etag,
        size,
        modified,
        facts.title,
        selection,
        bundle,
        **common,
        content=piece,
        start_line=first,
        end_line=last,
        total_lines=total_lines,
        offset=offset,
        total_chars=length,
        next_offset=next_offset,
    )
