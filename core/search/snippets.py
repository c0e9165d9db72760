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
BODY = COLUMNS.index("body")


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
    *,
    index: str | None = None,
) -> dict[str, tuple[str, str, tuple]]:
    """Snippets for a page of hits: from the body when it matches, else from the best column.

    `index`: the FTS5 table `match` was run in, to take the snippets there, each hit looked up by
    its row id; only for a match without prefix terms (under `rowid IN` FTS5 rebuilds a prefix's
    postings across every note for each hit). Otherwise the page's notes are copied into a small
    temp FTS5 table and the snippets taken there. Both give the same snippets: the same text (the
    index's external content is the text it indexed, which its own deletes rely on), tokenizer,
    columns and match. Notes over SNIPPET_SCAN_BYTES (`big`) get theirs from one scan
    of the body instead: FTS5's snippet() scores every hit of a note, and a 2 MB body of one
    repeated word took minutes."""
    if not ids:
        return {}
    out = {}
    inlist = ",".join(str(int(i)) for i, path in ids.items() if path in big)
    if inlist:
        for rowid, body in con.execute(f"SELECT id, body FROM content WHERE id IN ({inlist})"):
            out[ids[rowid]] = snippet_parts(_scanned_snippet(body or "", wanted))
    small = [i for i, path in ids.items() if path not in big]
    if not small:
        return out
    if index is not None:
        raws = _snippets(con, index, f"{index} MATCH ? AND rowid IN ({','.join(str(int(i)) for i in small)})", match)
    else:
        raws = _copied_snippets(con, match, small)
    for rowid, raw in raws.items():
        out[ids[rowid]] = snippet_parts(raw)
    return out


def _copied_snippets(con: sqlite3.Connection, match: str, rowids: list[int]) -> dict[int, str]:
    """`_snippets` of the notes `rowids` from a temp FTS5 table of their own."""
    rows = con.execute(
        f"SELECT id, {', '.join(COLUMNS)} FROM content WHERE id IN ({','.join(str(int(i)) for i in rowids)})"
    ).fetchall()
    con.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_snip USING fts5({', '.join(COLUMNS)}, tokenize='{TOKENIZER}')"
    )
    # touches only the temp database, and is always rolled back: the page's notes are gone again without
    # FTS5 tokenizing each one a second time to delete it from the table's index
    con.execute("BEGIN")
    try:
        con.executemany(
            f"INSERT INTO temp.vw_snip (rowid, {', '.join(COLUMNS)}) VALUES ({', '.join('?' * (1 + len(COLUMNS)))})",
            rows,
        )
        return _snippets(con, "temp.vw_snip", "vw_snip MATCH ?", match)
    finally:
        con.execute("ROLLBACK")


def _snippets(con: sqlite3.Connection, table: str, where: str, match: str) -> dict[int, str]:
    """{row id: FTS5's snippet with the internal markers} of the rows of `table` that `where` finds:
    from the body where it matches, else from the best column, which is asked only of those rows
    (each snippet() call tokenizes the text it looks at again)."""
    name = table.rpartition(".")[2]
    snippet = f"snippet({name}, {{}}, '{_OPEN}', '{_CLOSE}', '…', 24)"
    out: dict[int, str] = {}
    elsewhere = []
    for rowid, body in con.execute(f"SELECT rowid, {snippet.format(BODY)} FROM {table} WHERE {where}", (match,)):
        if body and _OPEN in body:
            out[rowid] = body
        else:
            elsewhere.append(rowid)
    if elsewhere:
        for rowid, best in con.execute(
            f"SELECT rowid, {snippet.format(-1)} FROM {table} WHERE {name} MATCH ? "
            f"AND rowid IN ({','.join(str(int(i)) for i in elsewhere)})",
            (match,),
        ):
            out[rowid] = best or ""
    return out
