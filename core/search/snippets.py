"""Snippets for a page of hits: the matched terms marked in a one-line excerpt of each note."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence

from vaultwatch.core.markdown.readable import readable, spans_after
from vaultwatch.core.search.notetext import COLUMNS, TOKENIZER
from vaultwatch.core.search.terms import Term

SNIPPET_SCAN_BYTES = 256 * 1024  # hits in notes larger than this get a snippet from one scan, not FTS5's snippet()
_OPEN, _CLOSE = "\x02", "\x03"  # snippet markers inside SQLite; replaced before they leave this module
_MARKER = re.compile("[\x02\x03]")


def _scanned_snippet(body: str, wanted: Iterable[Term], before: int = 80, after: int = 120) -> str:
    """A snippet (FTS5's markers around the first hit) from one regex scan of `body`: the first
    occurrence of any wanted term as a whole word (a prefix term: a word start), case-folded."""
    alts = []
    for t in wanted:
        words = [re.escape(w) for w in t.text.split()]
        if not words:
            continue
        alts.append(r"(?<![^\W_])" + r"\s+".join(words) + ("" if t.prefix else r"(?![^\W_])"))
    m = re.search("|".join(alts), body, re.IGNORECASE) if alts else None
    if m is None:
        return body[: before + after] + ("…" if len(body) > before + after else "")
    start, end = max(0, m.start() - before), min(len(body), m.end() + after)
    return (
        ("…" if start else "")
        + body[start : m.start()]
        + _OPEN
        + m.group(0)
        + _CLOSE
        + body[m.end() : end]
        + ("…" if end < len(body) else "")
    )


def snippet_parts(raw: str) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """(marked, plain, spans) from an FTS5 snippet with internal markers: the text as a reader
    sees it (core.markdown.readable: no link syntax, no emphasis marks), whitespace collapsed,
    the matches as spans of it and as `**` marks around them (one mark per run of matched
    words: never nested, never doubled)."""
    source, found = _unmarked(raw)
    shown = readable(source)
    plain, at = _collapse(shown.text)
    spans = tuple((a, z) for a, z in (_both(at, span) for span in spans_after(shown, found)) if z > a)
    pieces: list[str] = []
    pos = 0
    for a, z in spans:
        pieces += [plain[pos:a], "**", plain[a:z], "**"]
        pos = z
    pieces.append(plain[pos:])
    return "".join(pieces), plain, spans


def _both(at: Callable[[int], int], span: tuple[int, int]) -> tuple[int, int]:
    return at(span[0]), at(span[1])


def _unmarked(raw: str) -> tuple[str, list[tuple[int, int]]]:
    """`raw` without the snippet markers, and the spans they enclosed in it (an opening marker
    again before a closing one restarts the span; an empty or unopened span is none). Walks
    the markers, not the characters: a snippet holds a few of them in a few hundred characters."""
    if _OPEN not in raw and _CLOSE not in raw:
        return raw, []
    parts: list[str] = []
    found: list[tuple[int, int]] = []
    pos = size = 0
    start = None
    for m in _MARKER.finditer(raw):
        i = m.start()
        parts.append(raw[pos:i])
        size += i - pos
        pos = i + 1
        if m.group() == _OPEN:
            start = size
        else:
            if start is not None and size > start:
                found.append((start, size))
            start = None
    parts.append(raw[pos:])
    return "".join(parts), found


def _collapse(text: str) -> tuple[str, Callable[[int], int]]:
    """`text` with each run of whitespace one space and none at either end, and where an old offset
    (0 to len(text)) lands in it: inside a word, on the same character; in whitespace, just after
    the word before (0 before the first word). Worked out when asked (a snippet's few match ends),
    not per character; str.split's whitespace is str.isspace's."""

    def at(offset: int) -> int:
        before = " ".join(text[:offset].split())
        if before and offset < len(text) and text[offset - 1].isspace() and not text[offset].isspace():
            return len(before) + 1  # a word's first character: after the one space before it
        return len(before)

    return " ".join(text.split()), at


def page_snippets(
    con: sqlite3.Connection,
    match: str,
    ids: dict[int, str],
    big: Collection[str] = frozenset(),
    wanted: Sequence[Term] = (),
) -> dict[str, tuple[str, str, tuple]]:
    """Snippets for a page of hits: from the body when it matches, else from the best column.

    The page's notes are copied into a small temp FTS5 table and the snippets taken there: in
    the big index a prefix or phrase would be looked up across every note again for each hit.
    Notes over SNIPPET_SCAN_BYTES (`big`) get theirs from one scan of the body instead: FTS5's
    snippet() scores every hit of a note, and a 2 MB body of one repeated word took minutes."""
    if not ids:
        return {}
    rows = con.execute(
        f"SELECT id, {', '.join(COLUMNS)} FROM content WHERE id IN ({','.join(str(int(i)) for i in ids)})"
    ).fetchall()
    out = {}
    body_at = 1 + COLUMNS.index("body")
    small = []
    for row in rows:
        if ids[row[0]] in big:
            out[ids[row[0]]] = snippet_parts(_scanned_snippet(row[body_at] or "", wanted))
        else:
            small.append(row)
    if not small:
        return out
    con.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_snip USING fts5({', '.join(COLUMNS)}, tokenize='{TOKENIZER}')"
    )
    # touches only the temp database, and is always rolled back: the page's notes are gone again without
    # FTS5 tokenizing each one a second time to delete it from the table's index
    con.execute("BEGIN")
    try:
        con.executemany(f"INSERT INTO temp.vw_snip (rowid, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)", small)
        raws = con.execute(
            f"SELECT rowid, snippet(vw_snip, 5, '{_OPEN}', '{_CLOSE}', '…', 24), "
            f"snippet(vw_snip, -1, '{_OPEN}', '{_CLOSE}', '…', 24) FROM temp.vw_snip "
            f"WHERE vw_snip MATCH ?",
            (match,),
        ).fetchall()
    finally:
        con.execute("ROLLBACK")
    for rowid, body, best in raws:
        out[ids[rowid]] = snippet_parts(body if body and _OPEN in body else (best or ""))
    return out
