"""Snippets for a page of hits: a passage of each note's readable text, the matched terms marked.

FTS5 says where a note's body matches (`highlight()`: each match, stemmed and folded as the index
folds words); which of those a reader can see, and the passage around the best of them, is worked
out here a line at a time. A match inside a link's address or an HTML tag's attributes still finds
the note (people search for a URL or a domain, and Obsidian's search finds them in the raw
Markdown), but it is no place for a snippet: nothing of it is shown. A row of images (badges) is
shown only when nothing else of the body matched. A body with no match a reader can see gives
the property values that matched, else its first readable lines, else the best column's snippet.
"""

from __future__ import annotations

import re
import sqlite3
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Sequence
from itertools import islice

from vaultwatch.core.markdown.lines import is_image
from vaultwatch.core.markdown.readable import readable, spans_after
from vaultwatch.core.search.notetext import COLUMNS, TOKENIZER
from vaultwatch.core.search.terms import Term

SNIPPET_SCAN_BYTES = 256 * 1024  # hits in notes larger than this get their matches from one scan, not FTS5
_OPEN, _CLOSE = "\x02", "\x03"  # match markers inside SQLite; replaced before they leave this module
_MARKER = re.compile("[\x02\x03]")
BODY = COLUMNS.index("body")
PROPS = COLUMNS.index("props")
MAX_MATCHES = 64  # a note's first matches looked at: a passage wants the first good ones
MAX_LINES = 16  # lines holding matches read (each through `readable`) before the best is taken
READ_CHARS = 200  # source characters a passage is read from (its text is cut to WIDTH): a longer line in a piece
BEFORE = 60  # shown characters kept before a passage's first match
WIDTH = 160  # shown characters of a passage at most
LOOK_BACK = 1024  # characters before a match looked at for the link address or tag it may be in
LEAD_SCAN = 8192  # body characters a note's first readable lines are looked for in
_IMAGE_ROW_CHARS = 4096  # a longer line is taken for text, not a row of images
_IMAGE = re.compile(r"!\[\[([^\]\n|#]*)[^\]\n]*\]\]|!\[[^\]\n]*\]\([^)\n]*\)|<img\b[^>\n]*>", re.IGNORECASE)
# what is left of a row of images once they are taken out: the links around them, tags, separators
_AROUND_IMAGES = re.compile(r"\[\s*\]\([^)\n]*\)|</?[A-Za-z][^<>\n]*>|[\s|>*+-]")
# link addresses, HTML tags, a wiki link's brackets and the target its alias stands for: no text shown
_MARKUP = re.compile(r"\]\([^)\n]*\)|</?[A-Za-z][^<>\n]*>|\[\[(?:[^\]|\n]*\|)?|\]\]")
# a tag's name ends at a space, a slash or its `>`: `<https://…>` is an autolink, shown as its address
_TAG_START = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|$)")
_BLOCK_START = re.compile(r"[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|>|#|\|)")  # a line no earlier line is part of
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
Parts = tuple[str, str, tuple[tuple[int, int], ...]]


def _scanned_matches(body: str, wanted: Iterable[Term]) -> list[tuple[int, int]]:
    """The first MAX_MATCHES occurrences of any wanted term in `body` as a whole word (a prefix
    term: a word start), case-folded, from one regex scan: for a note too big for FTS5's
    `highlight()` to be asked of it."""
    alts = []
    for t in wanted:
        words = [re.escape(w) for w in t.text.split()]
        if not words:
            continue
        alts.append(r"(?<![^\W_])" + r"\s+".join(words) + ("" if t.prefix else r"(?![^\W_])"))
    if not alts:
        return []
    return [m.span() for m in islice(re.finditer("|".join(alts), body, re.IGNORECASE), MAX_MATCHES)]


def _highlighted(text: str) -> tuple[str, list[tuple[int, int]]]:
    """(the text without markers, its first MAX_MATCHES marked spans) of FTS5's `highlight()`."""
    if _OPEN not in text:
        return text.replace(_CLOSE, ""), []
    spans: list[tuple[int, int]] = []
    pos = removed = 0
    while len(spans) < MAX_MATCHES:
        a = text.find(_OPEN, pos)
        z = text.find(_CLOSE, a + 1) if a >= 0 else -1
        if z < 0:
            break
        removed += text.count(_OPEN, pos, a) + text.count(_CLOSE, pos, a)  # a marker the note holds
        inner = text.count(_OPEN, a + 1, z)
        if z > a + 1 + inner:
            spans.append((a - removed, z - removed - 1 - inner))
        removed += 2 + inner
        pos = z + 1
    return text.replace(_OPEN, "").replace(_CLOSE, ""), spans


def _image_row(line: str) -> bool:
    """Whether a line shows images and nothing else (a row of badges), whatever links wrap them. A
    wiki embed is an image by its file's extension: an embedded note or base shows its content."""
    if "!" not in line and "<" not in line:
        return False
    images = 0

    def gone(m: re.Match[str]) -> str:
        nonlocal images
        if m.group(1) is not None and not is_image(m.group(1)):
            return m.group(0)
        images += 1
        return ""

    rest = _IMAGE.sub(gone, line)
    return images > 0 and not _AROUND_IMAGES.sub("", rest)


def _line_end(body: str, start: int) -> int:
    end = body.find("\n", start)
    return len(body) if end < 0 else end


def _in_tag(body: str, start: int, at: int) -> int:
    """The `<` of the HTML tag `at` is inside (looked for from `start`), or -1."""
    lt = body.rfind("<", start, at)
    if lt < 0 or body.find(">", lt, at) >= 0:
        return -1
    return lt if _TAG_START.match(body, lt, at) else -1


def _hidden(body: str, start: int, at: int) -> bool:
    """Whether offset `at` of a line starting at `start` is plainly in markup no reader sees: a
    Markdown link's address or inside an HTML tag (a quick look, to spare reading lines whose every
    match is there; `readable` decides for the rest)."""
    paren = body.rfind("](", start, at)
    if paren >= 0 and body.find(")", paren + 2, at) < 0:
        return True
    return _in_tag(body, start, at) >= 0


def _cut(body: str, start: int, end: int, focus: int, size: int = READ_CHARS) -> tuple[int, int]:
    """The piece of the line body[start:end] read when it is over `size` characters: from a little
    before `focus`, cut between words and outside HTML tags (empty when all of it is in a tag)."""
    if end - start <= size:
        return start, end
    a = max(start, focus - BEFORE - 20)
    z = min(end, a + size)
    if a > start:
        space = body.find(" ", a, min(focus, a + 40))
        a = space + 1 if space >= 0 else a
        if _in_tag(body, max(start, a - 400), a) >= 0:
            gt = body.find(">", a, focus)
            a = gt + 1 if gt >= 0 else a
        a = _link_start(body, max(start, a - 400), a, focus)
    if z < end:
        space = body.rfind(" ", max(a, z - 40), z)
        z = space if space > focus else z
        lt = _in_tag(body, max(a, z - 400), z)
        z = lt if lt >= a else z
    return a, z


def _link_start(body: str, start: int, at: int, focus: int) -> int:
    """Where a piece starting at `at` starts instead when that is inside a link: at the link (a
    wiki link's target or a Markdown link's text, which readable() reads whole), or after it
    (a Markdown link's address, where nothing shown is lost)."""
    wiki = body.rfind("[[", start, at)
    if wiki >= 0 and body.find("]]", wiki, at) < 0:
        return wiki - 1 if body[wiki - 1 : wiki] == "!" else wiki
    address = body.rfind("](", start, at)
    if address >= 0 and body.find(")", address, at) < 0:
        close = body.find(")", at, focus)
        return close + 1 if close >= 0 else at
    text = body.rfind("[", start, at)
    if text >= 0 and body.find("]", text, at) < 0:
        return text - 1 if body[text - 1 : text] == "!" else text
    return at


def _shows(body: str, start: int, end: int) -> int:
    """About how many characters body[start:end] shows: less its link addresses and HTML tags."""
    size = end - start
    if body.find("](", start, end) >= 0 or body.find("<", start, end) >= 0 or body.find("[[", start, end) >= 0:
        size -= sum(len(m) for m in _MARKUP.findall(body, start, end))
    return size


def _block(body: str, start: int, end: int, focus: int, lead: bool = False) -> list[tuple[int, int, bool, bool]]:
    """The source a passage is read from: the line body[start:end] (or its piece around `focus`) and
    the lines after it up to the next heading after some text, rows of images and blank lines left out, until they
    would show about READ_CHARS characters, 3 x READ_CHARS of source or LEAD_SCAN looked at. Each
    as (start, end, cut before, cut after). `lead`: from the body's start (`end` unused), a title
    heading before any text passed over."""
    out: list[tuple[int, int, bool, bool]] = []
    room, source = READ_CHARS, 3 * READ_CHARS
    text = False  # a line of text taken, not only headings: the next heading ends the passage
    if not lead:
        a, z = _cut(body, start, end, focus)
        cut = a > start
        # a hard-wrapped paragraph: the lines of it before the match's give it its context, as far
        # as the passage would show them; "…" where it starts further back
        while not cut and a > 0 and not _BLOCK_START.match(body, a):
            prev = body.rfind("\n", 0, a - 1) + 1
            line = body[prev : a - 1]
            if not line.strip() or _HEADING.match(line) or _image_row(line):
                break
            if focus - prev > 2 * BEFORE + 40:
                cut = True
                break
            a = prev
        out.append((a, z, cut, z < end))
        room -= _shows(body, a, z)
        source -= z - a
        text = not _HEADING.match(body, start)
        start = end + 1
    limit = min(len(body), start + LEAD_SCAN)
    pos = start
    while pos < limit and room >= 60 and source > 0:  # less of a line than this is not worth reading
        end = _line_end(body, pos)
        heading = _HEADING.match(body, pos) is not None
        if heading and (text or (lead and not out and body.startswith("# ", pos))):
            if text:
                break
        elif body[pos:end].strip() and not _image_row(body[pos:end]):
            a, z = _cut(body, pos, end, pos, min(source, 2 * room))
            if z > a:
                out.append((a, z, False, z < end))
                room -= _shows(body, a, z)
                source -= z - a
                text = text or not heading
        pos = end + 1
    if (
        out
        and (room < 60 or source <= 0)
        and body[pos : _line_end(body, pos)].strip()
        and not _HEADING.match(body, pos)
    ):
        out[-1] = (*out[-1][:3], True)  # the paragraph goes on past what was read
    return out


def _read(body: str, block: list[tuple[int, int, bool, bool]], spans: Sequence[tuple[int, int]]) -> Parts:
    """The parts of a `_block` read together (one `readable` call), `spans` (body offsets) marked;
    "…" where a line was cut (readable() reads a link cut there as text)."""
    pieces: list[str] = []
    starts = [s for s, _e in spans]
    for a, z, before, after in block:
        if pieces:
            pieces.append("\n")
        if before:
            pieces.append("…")
        pos = a
        for s, e in spans[bisect_left(starts, a) : bisect_left(starts, z)]:
            if e <= z:
                pieces += [body[pos:s], _OPEN, body[s:e], _CLOSE]
                pos = e
        pieces.append(body[pos:z])
        if after:
            pieces.append("…")
    return snippet_parts("".join(pieces))


def _fitted(parts: Parts) -> Parts:
    """The passage with its first match at most BEFORE characters in and at most WIDTH characters
    long, each cut between words and shown as "…" (a match is never cut)."""
    _marks, plain, spans = parts
    if spans and spans[0][0] > BEFORE + 20:
        cut = spans[0][0] - BEFORE
        space = plain.find(" ", cut, spans[0][0])
        cut = space + 1 if space >= 0 else cut
        if plain[cut - 1 : cut] != "…":
            plain = "…" + plain[cut:]
            spans = tuple((s - cut + 1, e - cut + 1) for s, e in spans)
    if len(plain) > WIDTH:
        end = plain.rfind(" ", WIDTH // 2, WIDTH)
        end = WIDTH if end < 0 else end
        for s, e in spans:
            if s < end < e:
                end = e
        plain = plain[:end].rstrip() + ("…" if end < len(plain) else "")
        spans = tuple((s, e) for s, e in spans if e <= end)
    return _marked(plain, spans)


def _marked(plain: str, spans: Iterable[tuple[int, int]]) -> Parts:
    """(marked, plain, spans): matches apart by spaces only joined, one `**` mark around each run."""
    runs: list[tuple[int, int]] = []
    for s, e in spans:
        if e <= s:
            continue
        if runs and (s <= runs[-1][1] or not plain[runs[-1][1] : s].strip()):
            runs[-1] = (runs[-1][0], max(runs[-1][1], e))
        else:
            runs.append((s, e))
    return _with_marks(plain, runs), plain, tuple(runs)


def _with_marks(plain: str, spans: Iterable[tuple[int, int]]) -> str:
    """`plain` with a `**` mark around each of `spans` (in order, apart)."""
    pieces: list[str] = []
    pos = 0
    for a, z in spans:
        pieces += [plain[pos:a], "**", plain[a:z], "**"]
        pos = z
    pieces.append(plain[pos:])
    return "".join(pieces)


def _passage(body: str, spans: list[tuple[int, int]], terms: int) -> Parts | None:
    """A passage of `body` from its best line with a match a reader sees (`spans`: the matches, in
    order), or None: the line with the most distinct matched words, the first of them; a row of
    images only when no other line will do.

    Lines are ranked by their source (matches plainly in markup left out, see `_hidden`), which
    costs no `readable` call; the passage of the best is read, and if every match in it was in
    markup after all (`readable` knows more of it: a wiki link's target, an image's size), the
    next best, at most MAX_LINES of them."""
    lines: list[tuple[bool, int, int, int, int]] = []
    i = 0
    while i < len(spans):
        start = body.rfind("\n", 0, spans[i][0]) + 1
        end = _line_end(body, spans[i][0])
        j = i
        while j < len(spans) and spans[j][0] < end:
            j += 1
        found = [(s, e) for s, e in spans[i:j] if not _hidden(body, max(start, s - LOOK_BACK), s)]
        if found:
            line = body[start:end] if end - start <= _IMAGE_ROW_CHARS else ""
            words = len({body[s:e].casefold() for s, e in found})
            lines.append((_image_row(line), -min(words, terms), start, end, found[0][0]))
            if words >= terms and not lines[-1][0]:
                break  # no line after it ranks higher
        i = j
    lines.sort()
    for _image, _words, start, end, focus in lines[:MAX_LINES]:
        parts = _read(body, _block(body, start, end, focus), spans)
        if parts[2]:
            return _fitted(parts)
    return None


def lead(body: str) -> Parts | None:
    """The first readable lines of a body: a title heading before them, rows of images and lines that
    show nothing left out, to WIDTH characters (looked for in its first LEAD_SCAN characters)."""
    parts = _read(body, _block(body, 0, 0, 0, lead=True), ())
    return _fitted(parts) if parts[1] else None


def snippet_parts(raw: str) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """(marked, plain, spans) from an FTS5 snippet with internal markers: the text as a reader
    sees it (core.markdown.readable: no link syntax, no emphasis marks), whitespace collapsed,
    the matches as spans of it and as `**` marks around them (one mark per run of matched
    words: never nested, never doubled)."""
    source, found = _unmarked(raw)
    shown = readable(source)
    plain, at = _collapse(shown.text)
    spans = tuple((a, z) for a, z in (_both(at, span) for span in spans_after(shown, found)) if z > a)
    return _with_marks(plain, spans), plain, spans


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
) -> dict[str, Parts]:
    """Snippets for a page of hits (see the module doc); a hit left out has none (its title will do).

    `index`: the FTS5 table `match` was run in, to find the matches there, each hit looked up by
    its row id; only for a match without prefix terms (under `rowid IN` FTS5 rebuilds a prefix's
    postings across every note for each hit). Otherwise the page's notes are copied into a small
    temp FTS5 table and the matches found there. Both give the same snippets: the same text (the
    index's external content is the text it indexed, which its own deletes rely on), tokenizer,
    columns and match. Notes over SNIPPET_SCAN_BYTES (`big`) get their matches from one scan
    of the body instead: FTS5 scores every hit of a note, and a 2 MB body of one repeated word took
    minutes. `wanted`: the query's words; a line holding as many distinct ones ends the search for
    a better line."""
    if not ids:
        return {}
    terms = len(wanted) or MAX_LINES
    out: dict[str, Parts] = {}
    inlist = ",".join(str(int(i)) for i, path in ids.items() if path in big)
    if inlist:
        for rowid, body in con.execute(f"SELECT id, body FROM content WHERE id IN ({inlist})"):
            text = body or ""
            parts = _passage(text, _scanned_matches(text, wanted), terms) or lead(text)
            if parts is not None:
                out[ids[rowid]] = parts
    small = [i for i, path in ids.items() if path not in big]
    if not small:
        return out
    if index is not None:
        where = f"{index} MATCH ? AND rowid IN ({','.join(str(int(i)) for i in small)})"
        found = _snippets(con, index, where, match, terms)
    else:
        found = _copied_snippets(con, match, small, terms)
    for rowid, parts in found.items():
        out[ids[rowid]] = parts
    return out


def _copied_snippets(con: sqlite3.Connection, match: str, rowids: list[int], terms: int) -> dict[int, Parts]:
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
        return _snippets(con, "temp.vw_snip", "vw_snip MATCH ?", match, terms)
    finally:
        con.execute("ROLLBACK")


def _snippets(con: sqlite3.Connection, table: str, where: str, match: str, terms: int) -> dict[int, Parts]:
    """{row id: snippet} of the rows of `table` that `where` finds: a passage of the body where a
    reader sees a match there; else the property values that matched, the body's first readable
    lines or the best column's snippet, the first there is. FTS5 is asked for the columns
    other than the body only for the rows that need them (each call tokenizes the text it looks at)."""
    name = table.rpartition(".")[2]
    out: dict[int, Parts] = {}
    rest: dict[int, str] = {}
    for rowid, text in con.execute(
        f"SELECT rowid, highlight({name}, {BODY}, '{_OPEN}', '{_CLOSE}') FROM {table} WHERE {where}", (match,)
    ):
        body, spans = _highlighted(text or "")
        parts = _passage(body, spans, terms)
        if parts is None:
            rest[rowid] = body
        else:
            out[rowid] = parts
    for column in (PROPS, -1):
        if not rest:
            break
        snippet = f"snippet({name}, {column}, '{_OPEN}', '{_CLOSE}', '…', 24)"
        for rowid, raw in con.execute(
            f"SELECT rowid, {snippet} FROM {table} WHERE {name} MATCH ? "
            f"AND rowid IN ({','.join(str(int(i)) for i in rest)})",
            (match,),
        ):
            parts = snippet_parts(raw) if raw and _OPEN in raw else None
            if parts is None and column == PROPS:
                parts = lead(rest[rowid])
            if parts is not None and parts[1]:
                out[rowid] = parts
                del rest[rowid]
    return out
