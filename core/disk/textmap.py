"""A big note's text without holding it: the page map of one version of a file.

Reading page N of a 50 MB note must not decode the whole note on every call. `build`
streams the file once in CHUNK-sized pieces (bounded memory): it hashes the bytes (the
etag), decodes them exactly as `core.markdown.parse.decode` does the whole note (a UTF-8 BOM
stripped, invalid bytes replaced, CRLF and lone CR folded to LF), and keeps a checkpoint
at the start of every chunk: the decoder's pending bytes, whether a folded CR may still
swallow the next LF, and how many characters and line breaks came before it. Any span of
the text is then decoded from the checkpoint before it: `TextMap.window`.

`stream` is the pass every later read makes: it hashes the whole file again (the etag must
describe the bytes the content came from) and keeps only the chunks `TextMap.chunks_for_*`
said the read needs, so the etag and the content always come from the same bytes.

The map also holds the note's facts (frontmatter, title, tags, OKF fields), computed from
the frontmatter block and the first MAX_SCAN_CHARS characters of the body, which is all
`core.markdown.parse.parse_note` looks at; links and content_chars are left out.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import threading
import uuid
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import NamedTuple

from vaultwatch.core.markdown.parse import (
    MAX_FRONTMATTER_CHARS,
    MAX_SCAN_CHARS,
    NoteFacts,
    parse_note,
    split_frontmatter,
)

CHUNK = 256 * 1024  # bytes per read and between checkpoints
BOM = b"\xef\xbb\xbf"
_STEM = f"\x00vaultwatch-stem-{uuid.uuid4().hex}"  # stands for the file name in cached facts


class Checkpoint(NamedTuple):
    """Decoder state at the start of a chunk."""

    byte: int  # file offset where decoding resumes (after the BOM for the first chunk)
    pending: bytes  # bytes of an incomplete UTF-8 sequence carried over from the previous chunk
    skip_lf: bool  # the previous text ended with CR: an LF at the start of this chunk is swallowed
    char: int  # characters of folded text before this point
    line: int  # LF characters of folded text before this point


def _fold(s: str, skip_lf: bool) -> tuple[str, bool]:
    """Fold CRLF and lone CR to LF in one decoded piece, carrying a trailing CR to the next piece."""
    if not s:
        return s, skip_lf
    if skip_lf and s[0] == "\n":
        s = s[1:]
        if not s:
            return s, False
    skip_lf = s[-1] == "\r"
    if "\r" in s:
        s = s.replace("\r\n", "\n").replace("\r", "\n")
    return s, skip_lf


def _decoder(errors: str = "replace", pending: bytes = b"") -> codecs.IncrementalDecoder:
    dec = codecs.getincrementaldecoder("utf-8")(errors)
    if pending:
        dec.setstate((pending, 0))
    return dec


def _pread_full(fd: int, n: int, at: int) -> bytes:
    """n bytes at offset `at` (fewer only at the end of the file)."""
    out = os.pread(fd, n, at)
    if len(out) < n and out:
        parts = [out]
        got = len(out)
        while got < n:
            more = os.pread(fd, n - got, at + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        out = b"".join(parts)
    return out


class _Head:
    """Finds the frontmatter block and the body's start while the folded text streams by, keeping
    only what `parse_note` would look at: the block (up to its size cap) and the body's head."""

    FIRST, BLOCK, BODY, NONE = range(4)

    def __init__(self) -> None:
        self.pos = 0
        self.state = self.FIRST
        self.prefix: list[str] = []  # text[:MAX_SCAN_CHARS], for a note without a block
        self.prefix_len = 0
        self.line_start = 0
        self.line_head = ""  # the current line's first (up to) three characters
        self.line_ok = True  # the current line can still open or close the block
        self.block_start: int | None = None
        self.block: list[str] = []
        self.block_len = 0
        self.fence_start = 0
        self.body_start: int | None = None
        self.body: list[str] = []
        self.body_len = 0

    def _line_part(self, seg: str) -> None:
        if not self.line_ok or not seg:
            return
        need = 3 - len(self.line_head)
        rest = seg
        if need > 0:
            self.line_head += seg[:need]
            rest = seg[need:]
            h = self.line_head
            if not ("---".startswith(h) or (self.state == self.BLOCK and "...".startswith(h))):
                self.line_ok = False
                return
        if rest:
            # the opening line: text[3:first_end].strip() == ""; a closing line: [ \t]* then the end
            ok = rest.isspace() if self.state == self.FIRST else not rest.strip(" \t")
            if not ok:
                self.line_ok = False

    def _fence_line(self) -> bool:
        if not self.line_ok or len(self.line_head) < 3:
            return False
        return self.line_head == "---" or (self.state == self.BLOCK and self.line_head == "...")

    def _line_end(self, at: int) -> None:
        fence = self._fence_line()
        if self.state == self.FIRST:
            if fence:
                self.state, self.block_start = self.BLOCK, at + 1
            else:
                self.state = self.NONE
        elif fence:  # BLOCK: the first closing line ends it
            self.state, self.fence_start, self.body_start = self.BODY, self.line_start, at + 1
        self.line_start, self.line_head, self.line_ok = at + 1, "", True

    def feed(self, s: str) -> None:
        base = self.pos
        self.pos += len(s)
        if self.prefix_len < MAX_SCAN_CHARS:
            take = s[: MAX_SCAN_CHARS - self.prefix_len]
            self.prefix.append(take)
            self.prefix_len += len(take)
        i = 0
        while self.state in (self.FIRST, self.BLOCK) and i <= len(s):
            nl = s.find("\n", i)
            self._line_part(s[i:nl] if nl >= 0 else s[i:])
            if nl < 0:
                break
            self._line_end(base + nl)
            i = nl + 1
        if self.block_start is not None and self.block_len <= MAX_FRONTMATTER_CHARS:
            take = s[max(self.block_start - base, 0) :][: MAX_FRONTMATTER_CHARS + 1 - self.block_len]
            self.block.append(take)
            self.block_len += len(take)
        if self.body_start is not None and self.body_len < MAX_SCAN_CHARS:
            take = s[max(self.body_start - base, 0) :][: MAX_SCAN_CHARS - self.body_len]
            self.body.append(take)
            self.body_len += len(take)
            self.prefix, self.prefix_len = [], MAX_SCAN_CHARS  # only a note without a block needs it

    def finish(self) -> str | None:
        """The text `parse_note` needs to find the same facts, or None if only the whole text will do."""
        if self.state == self.BLOCK and self._fence_line():  # `$` also matches at the very end
            self.state, self.fence_start, self.body_start = self.BODY, self.line_start, self.pos + 1
        if self.state != self.BODY:
            head = "".join(self.prefix)
            # a line cut at MAX_SCAN_CHARS could look like a closing line that is not one
            return head if split_frontmatter(head)[0] is None else None
        assert self.block_start is not None  # a body follows a frontmatter block
        size = self.fence_start - self.block_start
        if size <= MAX_FRONTMATTER_CHARS:
            block = "".join(self.block)[:size]
        else:  # too big to parse: any block over the cap gets the same error
            block = "x" * (MAX_FRONTMATTER_CHARS + 1) + "\n"
        return "---\n" + block + "---\n" + "".join(self.body)


class Missing(Exception):
    """A window needed a chunk the read did not keep (a planning bug: the caller re-reads all)."""


class TextMap:
    """Where the characters and lines of one file version lie (see the module docstring)."""

    def __init__(
        self,
        etag: str,
        size: int,
        chunk: int,
        points: list[Checkpoint],
        total_chars: int,
        total_newlines: int,
        ends_with_lf: bool,
        bad: bool,
        facts: NoteFacts | None,
    ) -> None:
        self.etag, self.size, self.chunk = etag, size, chunk
        self.points = points  # one per chunk, at its start
        self.chars = [p.char for p in points] + [total_chars]
        self.lines = [p.line for p in points] + [total_newlines]
        self.total_chars, self.total_newlines = total_chars, total_newlines
        self.ends_with_lf = ends_with_lf
        self.bad = bad
        self._facts = facts
        self.sections: dict[str, tuple[int, int] | str] = {}  # heading -> (first, last) line, or an error

    @property
    def total_lines(self) -> int:
        """Lines as the reader counts them: `text.split("\\n")` without a trailing empty one."""
        return self.total_newlines + (0 if self.ends_with_lf else 1)

    def facts(self, stem: str) -> NoteFacts | None:
        """The note's facts for a file named `stem` (None when they need the whole text)."""
        f = self._facts
        if f is not None and f.title == _STEM:
            f = f._replace(title=stem)
        return f

    # planning: which chunks a window decodes --------------------------------------------------
    def span(self, lo: int, hi: int) -> range:
        """The chunks `window(get, lo, hi)` decodes (a wider [lo, hi) needs a superset)."""
        n = len(self.points)
        end = max(min(hi, self.total_chars), lo)
        if n == 0 or lo >= self.total_chars:
            return range(0)
        k0 = min(max(bisect_right(self.chars, lo) - 1, 0), n - 1)
        t = bisect_left(self.chars, end, k0 + 1)
        return range(k0, max(min(t, n), k0 + 1))

    def line_bounds(self, line: int) -> tuple[int, int]:
        """Character bounds [lo, hi] that hold the start of 1-based `line` (decode [lo, hi) to find it)."""
        k = line - 1
        if k <= 0:
            return 0, 0
        if k > self.total_newlines:
            return self.total_chars, self.total_chars
        j = bisect_left(self.lines, k)  # the k-th line break is made by chunk j - 1
        return self.chars[j - 1], self.chars[j]

    # decoding ---------------------------------------------------------------------------------
    def window(self, get: Callable[[int], bytes], lo: int, hi: int) -> tuple[str, int]:
        """(text[lo:hi], the number of LFs in text[:lo]), decoding only the chunks `span` names;
        `get(k)` returns chunk k's bytes (b"" past the end)."""
        if lo >= self.total_chars or not self.points:
            return "", self.total_newlines
        hi = min(hi, self.total_chars)
        end = max(hi, lo)
        rng = self.span(lo, hi)
        k = rng.start
        p = self.points[k]
        dec = _decoder("replace", p.pending)
        skip, pos, newlines = p.skip_lf, p.char, p.line
        parts: list[str] = []
        while pos < end:
            data = get(k)
            if k == rng.start and p.byte > k * self.chunk:
                data = data[p.byte - k * self.chunk :]  # the first chunk starts after a BOM
            s, skip = _fold(dec.decode(data, final=not data), skip)
            if pos < lo:
                newlines += s.count("\n", 0, lo - pos)
            a, b = max(lo - pos, 0), min(hi - pos, len(s))
            if b > a:
                parts.append(s[a:b])
            pos += len(s)
            k += 1
            if not data:
                break
        return "".join(parts), newlines

    def line_start(self, get: Callable[[int], bytes], line: int) -> int:
        """Character offset where 1-based `line` starts (the end of the text past the last break)."""
        lo, hi = self.line_bounds(line)
        if hi <= lo:
            return lo
        text, before = self.window(get, lo, hi)
        at = -1
        for _ in range(line - 1 - before):
            at = text.find("\n", at + 1)
        return lo + at + 1


def build(fd: int, chunk: int | None = None) -> TextMap:
    """Stream the whole file once: its etag, checkpoints and facts."""
    chunk = chunk or CHUNK
    if chunk < 4:
        raise ValueError("chunk must be at least 4 bytes (a BOM lies in the first chunk)")
    h = hashlib.sha256()
    dec = _decoder("strict")
    bad = skip = False
    char = line = size = 0
    last = ""
    head = _Head()
    points: list[Checkpoint] = []
    k = 0
    while True:
        data = _pread_full(fd, chunk, k * chunk)
        final = not data
        if data:
            h.update(data)
            size += len(data)
            start = 3 if k == 0 and data.startswith(BOM) else 0
            points.append(Checkpoint(k * chunk + start, dec.getstate()[0], skip, char, line))
            data = data[start:]
        state = dec.getstate()
        try:
            s = dec.decode(data, final=final)
        except UnicodeDecodeError:
            dec.setstate(state)
            dec.errors = "replace"
            bad = True
            s = dec.decode(data, final=final)
        s, skip = _fold(s, skip)
        if s:
            head.feed(s)
            char += len(s)
            line += s.count("\n")
            last = s[-1]
        if final:
            break
        k += 1
    synthetic = head.finish()
    facts = None
    if synthetic is not None:
        facts = parse_note(BOM + synthetic.encode("utf-8"), _STEM)._replace(
            decode_error=bad, links=(), content_chars=-1
        )
    return TextMap(h.hexdigest(), size, chunk, points, char, line, last == "\n", bad, facts)


def stream(fd: int, chunk: int, wanted: Collection[int]) -> tuple[str, int, Callable[[int], bytes]]:
    """Hash the whole file (its etag) keeping only the chunks in `wanted`. Returns (etag, size,
    get) where get(k) is chunk k's bytes, b"" past the end, and raises Missing for a chunk not kept."""
    h = hashlib.sha256()
    kept: dict[int, bytes] = {}
    size = k = 0
    while True:
        data = _pread_full(fd, chunk, k * chunk)
        if not data:
            break
        h.update(data)
        if k in wanted:
            kept[k] = data
        size += len(data)
        k += 1
    count = k

    def get(i: int) -> bytes:
        got = kept.get(i)
        if got is not None:
            return got
        if i >= count:
            return b""
        raise Missing(i)

    return h.hexdigest(), size, get


class MapCache:
    """The page maps of recently read big notes, keyed by the file's identity (device, inode,
    size, mtime, ctime); a map is only trusted once `stream` has confirmed its etag."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._maps: OrderedDict[tuple, TextMap] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> TextMap | None:
        """The map stored under `key`, or None."""
        with self._lock:
            m = self._maps.get(key)
            if m is not None:
                self._maps.move_to_end(key)
            return m

    def put(self, key: tuple, m: TextMap) -> None:
        """Store a map (the least recently used one goes when full)."""
        with self._lock:
            self._maps[key] = m
            self._maps.move_to_end(key)
            while len(self._maps) > self.size:
                self._maps.popitem(last=False)

    def clear(self) -> None:
        """Forget every map."""
        with self._lock:
            self._maps.clear()
