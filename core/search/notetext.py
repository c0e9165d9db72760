"""The text of a note as the full-text index stores it: headings and body (code and comments
left out), file-name words, aliases, property values, FTS5's own tokens of the fields, and the
zlib'd body."""

from __future__ import annotations

import re
import sqlite3
import zlib
from typing import BinaryIO

from vaultwatch.core.markdown import mdlex
from vaultwatch.core.markdown.parse import decode, split_frontmatter
from vaultwatch.core.model import Entry
from vaultwatch.core.search import ranking

SCHEMA_VERSION = 5
TOKENIZER = "porter unicode61 remove_diacritics 2"
COLUMNS = ("path", "name", "title", "aliases", "headings", "props", "body")
FIELD_COLUMNS = ("name", "title", "aliases", "headings")  # also in `ftsf`, whose postings are the fields' only
COMPRESS_LEVEL = 1
MAX_BODY_CHARS = 2_000_000  # text beyond this (per note) is not searchable


def read_capped(f: BinaryIO, expected: int, cap: int) -> bytes:
    """Up to `cap` bytes of an open file whose stat said `expected` bytes (read(cap) would
    allocate the whole cap up front for every note)."""
    data = f.read(min(cap, expected + 1))
    if len(data) > expected and len(data) < cap:
        data += f.read(cap - len(data))
    return data


def note_text(data: bytes, headings: str | None = None) -> tuple[str, str]:
    """(headings, body) of a note's bytes, for the full-text index, read by core.markdown.mdlex as the
    link index reads them: ATX and setext headings outside code and HTML blocks, one a line; the body without
    its code (fenced, indented, code spans) and comments (`%% %%`, `<!-- -->`). `headings`, when
    the caller has them (the same lexer's answer for these bytes), are taken as they are."""
    text, _ = decode(data)
    _, body = split_frontmatter(text)
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS]
    hidden = mdlex.hidden_ranges(body, html=False)  # HTML blocks' text is read, so it is searched
    if headings is None:  # as the link index reads them (Entry.anchors): an HTML block holds no heading
        scan = mdlex.masked(body, hidden if "<" not in body else mdlex.hidden_ranges(body))
        headings = "\n".join(mdlex.heading_texts(scan, body))
    return headings, mdlex.visible(body, hidden)


def _inflate(blob: bytes | None) -> str | None:
    if blob is None:
        return None
    try:
        return zlib.decompress(blob).decode("utf-8")
    except (zlib.error, UnicodeDecodeError):
        return ""


def register_functions(con: sqlite3.Connection) -> None:
    con.create_function("vw_inflate", 1, _inflate, deterministic=True)


FIELD_SEP = "\x1f"
MAX_FIELD_TERMS = 400


def _tokeniser(con: sqlite3.Connection) -> None:
    """The temp FTS5 table (the index's tokenizer) whose vocabulary tables `tokens_of` and `distinct_tokens`
    read, made once per connection. Touches only `temp`."""
    con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_tok USING fts5(x, tokenize='{TOKENIZER}')")
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_tok_v USING fts5vocab(temp, vw_tok, instance)")
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_tok_r USING fts5vocab(temp, vw_tok, row)")


def tokens_of(con: sqlite3.Connection, texts: list[str]) -> list[list[str]]:
    """FTS5's own tokens of each text (stemmed, folded), in order, through a temp FTS5 table on `con`.

    The ranking compares these with a note's stored field tokens (core.search.ftsprep.FieldTokens),
    so "creates" in a title and "create" in a query agree exactly as they do inside the index.
    Touches only `temp`.
    """
    if not texts:
        return []
    _tokeniser(con)
    own = not con.in_transaction
    if own:
        con.execute("BEGIN")
    try:
        con.executemany("INSERT INTO temp.vw_tok (rowid, x) VALUES (?, ?)", enumerate(texts))
        out: list[list[str]] = [[] for _ in texts]
        for doc, term in con.execute("SELECT doc, term FROM temp.vw_tok_v ORDER BY doc, offset"):
            out[doc].append(term)
        con.execute("DELETE FROM temp.vw_tok")
    except BaseException:
        if own:
            con.execute("ROLLBACK")
        raise
    if own:
        con.execute("COMMIT")
    return out


def distinct_tokens(con: sqlite3.Connection, text: str) -> list[str]:
    """FTS5's own tokens of `text`, each once, in no order (as `tokens_of`, without reading every
    occurrence of a long text into Python): the words a row of the index holds. For a caller inside a
    transaction of its own (the index's writer). Touches only `temp`."""
    _tokeniser(con)
    con.execute("INSERT INTO temp.vw_tok (rowid, x) VALUES (0, ?)", (text,))
    try:
        return [term for (term,) in con.execute("SELECT term FROM temp.vw_tok_r")]
    finally:
        con.execute("DELETE FROM temp.vw_tok")


def deflate(text: str) -> bytes:
    """A note's body text as the index stores it (zlib, COMPRESS_LEVEL)."""
    return zlib.compress(text.encode("utf-8", "surrogatepass"), COMPRESS_LEVEL)


def note_aliases(e: Entry) -> str:
    """A note's frontmatter aliases (`aliases` or `alias`, a list or one string), one per line."""
    fm = e.frontmatter or {}
    out: list[str] = []
    for key in ("aliases", "alias"):
        value = fm.get(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out.extend(str(v) for v in value if isinstance(v, (str, int, float)) and not isinstance(v, bool))
    return "\n".join(out)


# properties whose values the index holds in columns of their own (title, aliases), that only
# style the note in Obsidian (cssclasses), or that record who checked it (OKF's verified: the Trust
# tab and the trust_tier filter ask for it): their words would be counted twice, or are no content
_PROPS_LEFT_OUT = frozenset({"title", "aliases", "alias", "cssclasses", "cssclass", "verified"})
MAX_PROPS_CHARS = 20_000  # property text beyond this (per note) is not searchable
# between two values: no token to the tokenizer, and a snippet of a note found by a property reads
# "Movies · Ridley Scott · 1982" rather than the values run together
PROPS_SEP = " · "
_WIKI_LINK = re.compile(r"\[\[([^\]|#^]*)(?:[#^][^\]|]*)?(?:\|([^\]]*))?\]\]")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")
# a date or a date and time: asked for by filters and sorts, not by words; each is three to six
# terms nearly every note holds another of (created, updated, stale_after...), which the first
# build of a big vault pays for in every note
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")


def _link_text(m: re.Match[str]) -> str:
    """A wiki link as its reader sees it: the note's name (no folder), and the text shown when it differs."""
    name = m.group(1).rsplit("/", 1)[-1].strip()
    shown = (m.group(2) or "").strip()
    return name if not shown or shown == name else f"{name} {shown}"


def note_props(e: Entry) -> str:
    """A note's frontmatter property values, for the full-text index, PROPS_SEP between two: strings, numbers
    and the items of lists (and nested mappings), in property order; a wiki link as its text
    (`[[Ridley Scott]]`: "Ridley Scott"), as Obsidian shows it. The keys are left out: a key names a
    property that most notes of a vault share (`categories`, `created`), so its word would match
    nearly every note, and `--filter key=value` asks for a property by name. Also left out: URLs
    (their words are ids and hosts no one searches for, each a term of its own in the index),
    dates (see _DATE) and the keys in _PROPS_LEFT_OUT. Cut at MAX_PROPS_CHARS."""
    fm = e.frontmatter
    if not fm:
        return ""
    out: list[str] = []
    size = 0
    left_out = _PROPS_LEFT_OUT
    stack: list[object] = [
        v for k, v in reversed(fm.items()) if k not in left_out and str(k).casefold() not in left_out
    ]
    while stack and size < MAX_PROPS_CHARS:
        v = stack.pop()
        if isinstance(v, str):
            # each regex only where its pattern can start: this runs for every note of a first build
            if v[:1].isdigit() and _DATE.fullmatch(v):
                continue
            if "[[" in v:
                v = _WIKI_LINK.sub(_link_text, v)
            if "://" in v:
                v = _URL.sub(" ", v)
            text = v.strip()
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            text = str(v)
        elif isinstance(v, list):
            stack.extend(reversed(v))
            continue
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
            continue
        else:  # true/false and empty values say nothing a search could ask for
            continue
        if text:
            out.append(text)
            size += len(text) + len(PROPS_SEP)
    joined = PROPS_SEP.join(out)
    return joined[:MAX_PROPS_CHARS] if len(joined) > MAX_PROPS_CHARS else joined


def note_name(path: str) -> str:
    """The words of a note's file name (see `ranking.name_words`)."""
    stem = path.rsplit("/", 1)[-1]
    if stem.lower().endswith(".md"):
        stem = stem[:-3]
    return ranking.name_words(stem)
