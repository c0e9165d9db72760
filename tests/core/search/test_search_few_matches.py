"""A query whose words match few notes, one of them a word most notes hold (a title's common word beside a
rare one): its bm25 is worked out from the few notes' own records (core.search.ftsquery._few_matches)
instead of FTS5's bm25(), whose first step walks every note the common word is in. The numbers must be
FTS5's to the last bit, so the order and the scores of every answer stay as they were: checked against
FTS5's own bm25() over notes made for the edges (a word in every column, repeated, accented, next to
itself, the highlight's marker character in a note's own text) and after notes are changed and removed."""

from __future__ import annotations

import time

import pytest

from vaultwatch.core.search import ftsquery
from vaultwatch.core.search.terms import parse_query, quote_term, wanted_terms
from vaultwatch.core.vault import Vault

WEIGHTS = ", ".join(str(w) for w in ftsquery.WEIGHTS)


def notes() -> dict[str, str]:
    out = {
        f"notes/Entry {i:04d}.md": f"# Entry {i:04d}\n\nThe vault keeps entry {i:04d} and tag t{i % 9}.\n"
        for i in range(320)
    }
    out.update(
        {
            "edges/Vault vault.md": "---\naliases: [vault alias, beacon]\n---\n# Vault beacon\n\n## vault beacon\n\n"
            "vault vault vault beacon beacon, the vault.\n",
            "edges/Marker.md": "# Marker beacon\n\nthe vault \x02 holds \x02beacon\x02 and the marker\x02.\n",
            "edges/Accents.md": "# Café beacon\n\nle café naïve, the vault of the café beacon.\n",
            "beacon/In the path.md": "the vault with nothing else\n",
            "edges/Long beacon.md": "# Long beacon\n\n" + "the vault and its words go on. " * 200 + "beacon\n",
            "edges/Gone beacon.md": "# Gone beacon\n\nthe vault had this beacon once.\n",
            "edges/Changed beacon.md": "# Changed beacon\n\nthe vault beacon, before.\n",
        }
    )
    return out


QUERIES = [
    "vault beacon",
    "beacon vault",  # the same words in the other order: the phrases are summed in the query's order
    "vault 0007",
    "entry 0123",
    "Entry 0042 vault",
    "café beacon",
    "cafe vault",
    "marker vault",
    "beacon",
    "alias vault",
    "vault t3 0030",
    "vault nothingsuch",
    "vault vaults",  # one token twice: left to FTS5
    "vault -beacon",  # an exclusion: left to FTS5
    "vault beac*",  # a prefix: left to FTS5
    '"vault keeps" 0012',  # a phrase of two tokens: left to FTS5
]


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    root = tmp_path_factory.mktemp("few") / "vault"
    for rel, text in notes().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    v = Vault(root, cache=False)
    v.load()
    try:
        assert v.wait_search_ready(120)
        # a change and a removal after the build: FTS5 keeps them as deletes beside the first segment
        (root / "edges/Gone beacon.md").unlink()
        (root / "edges/Changed beacon.md").write_text("# Changed beacon\n\nbeacon beacon vault, after.\n", "utf-8")
        v.refresh_paths(["edges/Gone beacon.md", "edges/Changed beacon.md"])
        deadline = time.monotonic() + 60
        while v.search_status().pending or v.search("gone").total or not v.search("after").total:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        yield v
    finally:
        v.stop()


def fts5_bm25(con, match: str) -> dict[int, float]:
    return dict(con.execute(f"SELECT rowid, -bm25(fts, {WEIGHTS}) FROM fts WHERE fts MATCH ?", (match,)))


def strict_match(query: str) -> tuple[str, list]:
    terms = parse_query(query)
    wanted = wanted_terms(terms)
    return " ".join(quote_term(t) for t in wanted) + "".join(
        " NOT " + quote_term(t) for t in terms if t.exclude
    ), wanted


def test_few_matches_are_scored_exactly_as_fts5_scores_them(searched, monkeypatch):
    monkeypatch.setattr(ftsquery, "IDF_PASS_TOKENS", 0)  # whatever it would cost: every query it may take
    index = searched.start_search()
    taken = []
    with index._reader() as reader:
        for query in QUERIES:
            match, wanted = strict_match(query)
            few = index._few_matches(reader.con, "", match, wanted) if "NOT" not in match else None
            if few is None:
                continue
            taken.append(query)
            want = fts5_bm25(reader.con, match)
            assert few == want, query  # the same doubles, not merely close ones
            assert all(type(s) is float for s in few.values())
    assert taken == QUERIES[:12], taken  # every query of single, different words; none of the others


def test_a_title_query_beside_a_common_word_is_worked_out_here_and_a_long_note_is_fts5s(searched):
    index = searched.start_search()
    with index._reader() as reader:
        for query, taken in (("vault 0007", True), ("entry 0123", True), ("vault beacon", False)):
            match, wanted = strict_match(query)
            few = index._few_matches(reader.con, "", match, wanted)
            assert (few is not None) is taken, query  # "beacon" is in a long note: tokenizing it costs more
            assert few is None or few == fts5_bm25(reader.con, match)


def hits(v: Vault, query: str, **scope) -> tuple:
    res = v.search(query, limit=50, **scope)
    return res.total, res.match, [(h.path, h.score, h.snippet, h.duplicates) for h in res.hits]


@pytest.mark.parametrize("scope", [{}, {"folder": "edges"}, {"pattern": "**/*beacon*"}])
def test_answers_are_fts5s_and_bm25_is_not_asked(searched, scope, monkeypatch):
    from vaultwatch.core.search import reuse

    monkeypatch.setattr(reuse, "REUSE_SECONDS", 0.0)
    index = searched.start_search()
    with index._reader() as reader:  # given back to the pool: the searches borrow it next
        con = reader.con
    seen: list[str] = []
    con.set_trace_callback(seen.append)
    monkeypatch.setattr(ftsquery, "IDF_PASS_TOKENS", 0)  # worked out here wherever it may be
    try:
        got = {q: hits(searched, q, **scope) for q in QUERIES}
        asked = [s for s in seen if "bm25(" in s]
        seen.clear()
        monkeypatch.setattr(ftsquery, "FEW_MATCHES", 0)  # FTS5's bm25() for every query, as before
        want = {q: hits(searched, q, **scope) for q in QUERIES}
    finally:
        con.set_trace_callback(None)
    assert got == want
    assert sum(bool(got[q][2]) for q in QUERIES) >= 8  # the queries find notes here
    for query in QUERIES[:12]:
        match = strict_match(query)[0].replace("'", "''")
        assert not [s for s in asked if f"'{match}'" in s], query
