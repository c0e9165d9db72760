"""A snippet's parts (marked text, plain text, match spans) come out exactly as the per-character
definition gives them, over a corpus of excerpts: FTS5's own snippets of generated realistic notes
(frontmatter, callouts, tables, links, code), and random excerpts mixing Markdown, every kind of
Unicode whitespace, CJK, accents, emoji, and markers placed anywhere (unbalanced, nested, empty).

The definition is kept here as it was written first (walk the excerpt a character at a time, table
every offset): core.search.snippets and core.markdown.readable now walk the markers and the words
and map offsets from the markup's edits only when asked, which must change no snippet."""

from __future__ import annotations

import random
import sqlite3
import sys

import pytest

from bench.vaultgen import generate
from vaultwatch.core.markdown import readable as readable_module
from vaultwatch.core.markdown.readable import readable
from vaultwatch.core.search.notetext import TOKENIZER
from vaultwatch.core.search.snippets import snippet_parts

OPEN, CLOSE = "\x02", "\x03"  # the markers page_snippets asks FTS5 for


def reference_maps(text: str) -> tuple[str, list[int], list[int]]:
    """readable's text and its offset tables (source offset -> shown offset for a span's start and
    end), one entry per offset, as first written."""
    n = len(text)
    edits = readable_module._edits(text)  # the markup readable() removes: the same edits, tabled here
    if not edits:
        return text, list(range(n + 1)), list(range(n + 1))
    out: list[str] = []
    starts = [0] * (n + 1)
    ends = [0] * (n + 1)
    pos = shown = 0
    for a, z, r in [*edits, (n, n, "")]:
        for p in range(pos, a + 1):
            starts[p] = ends[p] = shown + (p - pos)
        out.append(text[pos:a])
        shown += a - pos
        for p in range(a + 1, z):
            starts[p] = shown
            ends[p] = shown + len(r)
        out.append(r)
        shown += len(r)
        pos = z
    return "".join(out), starts, ends


def reference_collapse(text: str) -> tuple[str, list[int]]:
    out: list[str] = []
    at: list[int] = []
    space = False
    for ch in text:
        if ch.isspace():
            at.append(len(out))
            space = bool(out)
            continue
        if space:
            out.append(" ")
            space = False
        at.append(len(out))
        out.append(ch)
    at.append(len(out))
    return "".join(out), [min(a, len(out)) for a in at]


def reference_parts(raw: str) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    source: list[str] = []
    found: list[tuple[int, int]] = []
    start = None
    for ch in raw:
        if ch == OPEN:
            start = len(source)
        elif ch == CLOSE:
            if start is not None and len(source) > start:
                found.append((start, len(source)))
            start = None
        else:
            source.append(ch)
    text, starts, ends = reference_maps("".join(source))
    shown_spans = []
    for a, z in sorted((starts[a], ends[z]) for a, z in found):
        shown_spans.append((a, z) if z > a else (a, a))
    joined: list[tuple[int, int]] = []
    for a, z in shown_spans:  # spans_after's rule: touching (or space-apart) runs are one mark
        if z <= a:
            continue
        if joined and (a <= joined[-1][1] or not text[joined[-1][1] : a].strip()):
            joined[-1] = (joined[-1][0], max(joined[-1][1], z))
        else:
            joined.append((a, z))
    plain, at = reference_collapse(text)
    spans = tuple((at[a], at[z]) for a, z in joined if at[z] > at[a])
    pieces: list[str] = []
    pos = 0
    for a, z in spans:
        pieces += [plain[pos:a], "**", plain[a:z], "**"]
        pos = z
    pieces.append(plain[pos:])
    return "".join(pieces), plain, spans


SPACES = [
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\u00a0",
    "\u2003",
    "\u3000",
    "\x1c",
    "\x1f",
    "\u2028",
    "\u0085",
    "\x0b",
]
WORDS = [
    "harbour",
    "Tide",
    "café",
    "naïve",
    "東京",
    "検索エンジン",
    "日本語の文",
    "😀",
    "ß",
    "İstanbul",
    "x",
    "42",
    "—",
    "…",
]
MARKUP = [
    "# ",
    "## ",
    "- ",
    "- [ ] ",
    "1. ",
    "> ",
    "> [!tip] ",
    "> [!note]",
    "**",
    "*",
    "==",
    "~~",
    "__",
    "`",
    "```",
    "[[",
    "]]",
    "|",
    "#",
    "![[",
    "[",
    "](",
    ")",
    "](https://example.org/a b)",
    "![alt](http",
    "^b1d",
    " ^b1d",
    "%%",
    "<br>",
    "</span>",
    "<b>",
    "---",
    "***",
    "| a | b |",
    "|---|---|",
    "    ",
    "…",
]


def random_raw(rnd: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rnd.randint(0, 40)):
        roll = rnd.random()
        if roll < 0.35:
            word = rnd.choice(WORDS)
            parts.append(OPEN + word + CLOSE if rnd.random() < 0.3 else word)
        elif roll < 0.6:
            parts.append(rnd.choice(SPACES))
        elif roll < 0.9:
            parts.append(rnd.choice(MARKUP))
        else:
            parts.append(rnd.choice([OPEN, CLOSE, OPEN + CLOSE, OPEN + OPEN, CLOSE + OPEN]))
    return "".join(parts)


def fts5_raws(root) -> list[str]:
    """FTS5's snippets (as page_snippets asks for them) of every note under `root`, for words of many kinds."""
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZER}')")
    notes = sorted(root.rglob("*.md"))
    con.executemany("INSERT INTO t (body) VALUES (?)", [(p.read_text(encoding="utf-8"),) for p in notes])
    raws = []
    for query in (
        '"status"',
        '"link"',
        '"tags" "title"',
        '"verified" OR "review"',
        '"cod" *',
        '"note" "the"',
        '"caf"*',
    ):
        raws += [
            r
            for (r,) in con.execute(
                f"SELECT snippet(t, 0, '{OPEN}', '{CLOSE}', '…', 24) FROM t WHERE t MATCH ?", (query,)
            )
        ]
    return raws


@pytest.fixture(scope="module")
def realistic_raws(tmp_path_factory) -> list[str]:
    root = tmp_path_factory.mktemp("snip") / "vault"
    generate(root, 120, realistic=True)
    return fts5_raws(root)


def test_fts5_snippets_of_realistic_notes_give_the_parts_the_definition_gives(realistic_raws):
    assert len(realistic_raws) > 300
    assert sum(OPEN in r for r in realistic_raws) > 300  # matches, not only leads
    for raw in realistic_raws:
        assert snippet_parts(raw) == reference_parts(raw), raw


def test_random_excerpts_give_the_parts_the_definition_gives():
    rnd = random.Random(34)
    for _ in range(4000):
        raw = random_raw(rnd)
        assert snippet_parts(raw) == reference_parts(raw), raw


def test_every_source_span_lands_where_the_offset_tables_put_it():
    rnd = random.Random(17)
    for _ in range(300):
        source = random_raw(rnd).replace(OPEN, "").replace(CLOSE, "")[:80]
        shown = readable(source)
        text, starts, ends = reference_maps(source)
        assert shown.text == text
        for a in range(len(source) + 1):
            for z in range(a, len(source) + 1):
                want = (starts[a], ends[z]) if ends[z] > starts[a] else (starts[a], starts[a])
                assert shown.span(a, z) == want, (source, a, z)


def test_whitespace_is_what_str_isspace_says_in_every_code_point():
    """The collapse splits with str.split; the definition tests str.isspace: the same characters."""
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        assert (len(f"a{ch}b".split()) == 2) == ch.isspace(), hex(cp)
