"""Search snippets are the same whichever way a page's matches were found: in the index itself, hit by
hit (a match without prefix terms), or in a temp FTS5 table the page's notes are copied into; and a
search's hits carry them. Checked over a corpus: generated realistic notes, and notes made for the
edges (frontmatter, a match as the first or the last word, sentence starts, repeated words far
apart, accents, CJK, emoji, a match only in the title, a note over the scan threshold), for single
words, several words, phrases, prefixes, exclusions and the any-word fallback."""

from __future__ import annotations

import sqlite3

import pytest

from bench.vaultgen import generate
from vaultwatch.core.search.notetext import register_functions
from vaultwatch.core.search.snippets import SNIPPET_SCAN_BYTES, page_snippets
from vaultwatch.core.search.terms import parse_query, quote_term, wanted_terms
from vaultwatch.core.vault import Vault

FILLER = " ".join(f"filler{i % 37}" for i in range(400))

EDGE_NOTES = {
    "edges/Front matter.md": "---\ntitle: Harbour log\ntags: [sea, tide]\n---\nHarbour opens at dawn. " + FILLER,
    "edges/Last word.md": FILLER + " and at the very end the lighthouse",
    "edges/First word.md": "lighthouse " + FILLER,
    "edges/Sentences.md": "Intro words here. The keeper: lighthouse lamps. "
    + FILLER
    + ". Later, lighthouse and keeper lighthouse keeper again.",
    "edges/Far apart.md": "keeper " + FILLER + " lighthouse " + FILLER + " keeper lighthouse keeper",
    "edges/Unicode.md": "# Café naïve\n\nLe café naïve résumé à Straße 😀 then 東京タワー and 検索エンジン. "
    + FILLER
    + " café",
    "edges/Title only zanzibar.md": "Nothing here names the island. " + FILLER,
    "edges/Markup.md": "> [!tip] Lighthouse **keeper** notes\n\n- [ ] see [[Far apart|the far note]] and "
    "![img](http://x/y.png) ==lighthouse== `code lighthouse` %% hidden lighthouse %%\n" + FILLER,
    "edges/Big.md": "lighthouse keeper " + "word " * (SNIPPET_SCAN_BYTES // 5 + 10),
}

QUERIES = [
    "lighthouse",
    "keeper lighthouse",
    '"lighthouse keeper"',
    "harbour",
    "cafe",
    "café naïve",
    "東京タワー",
    "検索エンジン",
    "zanzibar",
    "light*",
    "caf*",
    "lighthouse -keeper",
    "keeper -zebra",
    "lighthouse keeper unicorn",
    "owner",
    "roadmap*",
    "step uses",
    "review meeting",
    "link tags",
    "budget roadmap",
    "note",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("snippets") / "vault"
    generate(root, 150, realistic=True)
    for rel, text in EDGE_NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    v = Vault(root, cache=False)
    v.load()
    index = v.start_search()
    try:
        assert v.wait_search_ready(120)
        con = sqlite3.connect(index.db_path, isolation_level=None)
        register_functions(con)
        yield v, con
        con.close()
    finally:
        v.stop()


def matches_of(query: str) -> tuple[str, str]:
    """(every word, any word): the MATCH expressions a search runs, from the query's terms."""
    terms = parse_query(query)
    wanted = wanted_terms(terms)
    neg = "".join(" NOT " + quote_term(t) for t in terms if t.exclude)
    return (
        " ".join(quote_term(t) for t in wanted) + neg,
        "(" + " OR ".join(quote_term(t) for t in wanted) + ")" + neg,
    )


@pytest.mark.parametrize("query", QUERIES)
def test_snippets_in_the_index_and_in_a_copy_are_the_same(corpus, query):
    v, con = corpus
    ids = dict(con.execute("SELECT id, path FROM docs"))
    big = {p for p in ids.values() if p == "edges/Big.md"}
    terms = parse_query(query)
    wanted = wanted_terms(terms)
    prefix = any(t.prefix for t in terms)
    checked = 0
    for match in matches_of(query):
        found = [r for (r,) in con.execute("SELECT rowid FROM fts WHERE fts MATCH ? LIMIT 80", (match,))]
        page = {r: ids[r] for r in found + [r for r in ids if r not in found][:5]}  # and some that do not match
        copied = page_snippets(con, match, page, big, wanted)
        matching = con.execute(
            f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({','.join(map(str, page))})", (match,)
        )
        # every matching note of the page has a snippet (each has a body), and a big note one whether or not
        assert set(copied) - big == {ids[r] for (r,) in matching} - big
        if not prefix:
            indexed = page_snippets(con, match, page, big, wanted, index="fts")
            assert indexed == copied
        checked += len(found)
    assert checked, f"{query!r} found nothing: the corpus no longer covers it"
    # and a search's hits carry them, whichever way it took them
    res = v.search(query, limit=50)
    match = matches_of(query)[0 if res.match == "all" else 1]
    rowid = {p: r for r, p in ids.items()}
    want = page_snippets(con, match, {rowid[h.path]: h.path for h in res.hits}, big, wanted)
    for hit in res.hits:
        assert (hit.snippet, hit.snippet_plain, hit.highlights) == want[hit.path], (query, hit.path)


def test_the_corpus_reaches_the_edges(corpus):
    """The cases above are there: a hit whose body has no match (its snippet the body's first words),
    a match as a note's first and last word, and CJK and accented matches."""
    v, con = corpus
    title_only = v.search("zanzibar").hits
    assert [h.path for h in title_only] == ["edges/Title only zanzibar.md"]
    assert title_only[0].snippet.startswith("Nothing here names the island. filler0")
    assert title_only[0].highlights == ()
    hits = {h.path: h.snippet for h in v.search("lighthouse", limit=50).hits}
    assert hits["edges/First word.md"].startswith("**lighthouse**")
    assert hits["edges/Last word.md"].endswith("**lighthouse**")
    assert "**東京タワー**" in v.search("東京タワー").hits[0].snippet
    assert "**café**" in v.search("cafe").hits[0].snippet
