"""Full-text search: ranking, OKF factors, snippets, the safe query syntax, scoping and paging."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vaultwatch.core.errors import QueryError
from vaultwatch.core.events import IndexProblem, IndexProgress
from vaultwatch.core.query.listing import Query
from vaultwatch.core.search.fulltext import SearchNotReady, Term, parse_query, to_fts
from vaultwatch.core.vault import Vault


@pytest.fixture(autouse=True)
def xdg_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return tmp_path / "xdg-cache"


@pytest.fixture
def searchable(clock):
    opened: list[Vault] = []

    def open_(root: Path) -> Vault:
        v = Vault(root, clock=clock)
        v.load()
        assert v.wait_search_ready(10)
        opened.append(v)
        return v

    yield open_
    for v in opened:
        v.stop()


@pytest.fixture
def demo_search(demo_vault, searchable) -> Vault:
    return searchable(demo_vault)


def paths(result) -> list[str]:
    return [h.path for h in result.hits]


# --- query syntax ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, terms",
    [
        ("deploy", [Term("deploy")]),
        ("deploy runbook", [Term("deploy"), Term("runbook")]),
        ('"deploy runbook"', [Term("deploy runbook", phrase=True)]),
        ("runb*", [Term("runb", prefix=True)]),
        ("deploy -staging", [Term("deploy"), Term("staging", exclude=True)]),
        ('deploy -"old script"', [Term("deploy"), Term("old script", phrase=True, exclude=True)]),
        ('"unclosed phrase', [Term("unclosed phrase", phrase=True)]),
        ("NEAR(a b)", [Term("NEAR(a"), Term("b)")]),
        ("well-known", [Term("well-known")]),
        ("a * b", [Term("a"), Term("b")]),
    ],
)
def test_parse_query(text, terms):
    assert list(parse_query(text)) == terms


def test_every_term_reaches_fts_quoted():
    assert to_fts(parse_query('NEAR(a b) OR "x""y" -c* d*')) == '"NEAR(a" "b)" "OR" "x" "y" "d" * NOT "c" *'


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "*",
        "-",
        "--",
        '""',
        "()",
        "-deploy",
        '-"a b"',
        "x" * 501,
        " ".join(["w"] * 33),
        "a\x00b",
        None,
        5,
        ["deploy"],
    ],
)
def test_unsearchable_input_is_a_clear_query_error(text):
    with pytest.raises(QueryError) as exc:
        parse_query(text)
    assert exc.value.message and "sqlite" not in exc.value.message.lower()


HOSTILE = [
    '"',
    '""',
    '"""',
    "'",
    "''",
    "NEAR(",
    "NEAR(deploy",
    "NEAR(deploy runbook, 3)",
    "*",
    "**",
    "deploy*",
    "*deploy",
    "(",
    ")",
    "((deploy)",
    "deploy)",
    "'; DROP TABLE fts; --",
    "'; DROP TABLE docs; --",
    "deploy OR",
    "AND deploy",
    "NOT deploy",
    "deploy NOT",
    "title:deploy",
    "path:Projects",
    "^deploy",
    "deploy + runbook",
    "{deploy runbook}",
    "deploy:",
    ":",
    "\\",
    "%",
    "_",
    "deploy\nrunbook",
    "\t",
    "déploy",
    "ＤＥＰＬＯＹ",
    "🚀 deploy",
    "deploy -",
    "- deploy",
    "a" * 500,
    " ".join(["deploy"] * 32),
    "\u202edeploy",
    "rank",
    "bm25(fts)",
    "1=1",
    "x' OR '1'='1",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_never_reach_sqlite_raw(demo_search, text):
    try:
        res = demo_search.search(text, limit=5)
    except QueryError as exc:
        assert "sqlite" not in exc.message.lower() and "fts5" not in exc.message.lower()
    else:
        assert all(h.entry.kind == "note" for h in res.hits)
    assert paths(demo_search.search("deploy", limit=1)) == ["Areas/Engineering/Deploy Runbook.md"]  # index intact


# --- ranking, snippets -----------------------------------------------------------------------------


def test_title_match_ranks_first_and_snippets_mark_terms(demo_search):
    res = demo_search.search("deploy runbook")
    assert res.hits[0].path == "Areas/Engineering/Deploy Runbook.md"
    scores = [h.score for h in res.hits]
    assert scores == sorted(scores, reverse=True)
    for hit in res.hits:
        assert "**" in hit.snippet and "\n" not in hit.snippet
        assert hit.highlights
        for start, end in hit.highlights:
            # English stemming: "deployed" and "runbooks" match too
            assert hit.snippet_plain[start:end].lower().startswith(("deploy", "runbook"))
        rebuilt, last = [], 0
        for start, end in hit.highlights:
            rebuilt += [hit.snippet_plain[last:start], "**", hit.snippet_plain[start:end], "**"]
            last = end
        assert "".join(rebuilt) + hit.snippet_plain[last:] == hit.snippet


def test_phrase_prefix_and_exclusion(demo_search):
    both = set(paths(demo_search.search("deploy runbook", limit=100)))
    phrase = set(paths(demo_search.search('"deploy runbook"', limit=100)))
    assert phrase and phrase <= both
    assert "Areas/Engineering/Deploy Runbook.md" in paths(demo_search.search("runb*"))
    deploy = paths(demo_search.search("deploy", limit=100))
    excluded = paths(demo_search.search("deploy -script", limit=100))
    script = set(paths(demo_search.search("script", limit=100)))
    assert excluded and len(excluded) < len(deploy)
    assert set(excluded) == set(deploy) - script


def test_diacritics_and_case_fold(demo_search):
    assert "Café notes.md" in paths(demo_search.search("cafe", limit=50))
    assert paths(demo_search.search("DEPLOY", limit=3)) == paths(demo_search.search("deploy", limit=3))


OKF_BODY = "quokka habitat notes: the quokka lives on islands\n"


@pytest.fixture
def okf_vault(make_vault):
    return make_vault(
        {
            # as many property words in each (property values are searched, and a note's length is
            # part of its score): only the OKF factors set their scores apart
            "fresh.md": f"---\nstatus: stable\nreviewed: 2020-01-01\n---\n{OKF_BODY}",
            "old.md": f"---\nstatus: deprecated\nreviewed: 2020-01-01\n---\n{OKF_BODY}",
            "stale.md": f"---\nstatus: stable\nstale_after: 2020-01-01\n---\n{OKF_BODY}",
            "both.md": f"---\nstatus: deprecated\nstale_after: 2020-01-01\n---\n{OKF_BODY}",
            "later.md": f"---\nstatus: stable\nstale_after: 2099-01-01\n---\n{OKF_BODY}",
            **{f"other{i}.md": "nothing to see here\n" for i in range(20)},
        },
        okf=True,
    )


def test_okf_factors_rank_deprecated_and_stale_lower(okf_vault, searchable):
    v = searchable(okf_vault)
    res = v.search("quokka")
    assert paths(res) == ["fresh.md", "later.md", "stale.md", "old.md", "both.md"]
    s = {h.path: h.score for h in res.hits}
    assert s["fresh.md"] == pytest.approx(s["later.md"])
    assert s["stale.md"] / s["fresh.md"] == pytest.approx(0.75, rel=1e-3)
    assert s["old.md"] / s["fresh.md"] == pytest.approx(0.5, rel=1e-3)
    assert s["both.md"] / s["fresh.md"] == pytest.approx(0.375, rel=1e-3)


def test_no_okf_factors_outside_a_bundle(make_vault, searchable):
    root = make_vault(
        {
            "a.md": f"---\nstatus: deprecated\n---\n{OKF_BODY}",
            "b.md": f"---\nstatus: stable\n---\n{OKF_BODY}",
            **{f"other{i}.md": "nothing\n" for i in range(10)},
        }
    )
    s = {h.path: h.score for h in searchable(root).search("quokka").hits}
    assert s["a.md"] == pytest.approx(s["b.md"])


def test_okf_ranking_is_exact_even_beyond_the_first_rows(make_vault, searchable):
    files = {f"dep{i:02}.md": f"---\nstatus: deprecated\n---\n{'wombat ' * 5}\n" for i in range(30)}
    files["plain.md"] = "---\nstatus: stable\n---\nwombat and much more text here to lower the density " * 3
    files.update({f"other{i}.md": "nothing\n" for i in range(40)})
    v = searchable(make_vault(files, okf=True))
    hits = v.search("wombat", limit=3).hits
    full = v.search("wombat", limit=100).hits
    assert [h.path for h in hits] == [h.path for h in full[:3]]
    assert [h.score for h in full] == sorted((h.score for h in full), reverse=True)
    scoped = v.search("wombat", limit=3, filters={"status": "deprecated"}).hits  # every candidate x0.5
    scoped_full = [h for h in full if h.entry.okf_status == "deprecated"]
    assert [h.path for h in scoped] == [h.path for h in scoped_full[:3]]


# --- scope: the listing's own arguments ---------------------------------------------------------


@pytest.mark.parametrize(
    "scope",
    [
        dict(folder="Projects"),
        dict(folder="Projects", recursive=False),
        dict(folder=""),
        dict(pattern="**/*Runbook*"),
        dict(filters={"status": "deprecated"}),
        dict(filters={"tags": "craft"}),
        dict(filters={"type": "howto"}),
        dict(filters={"stale": "true"}),
        dict(filters={"trust_tier": "unverified"}),
        dict(exclude={"status": "deprecated"}),
    ],
)
def test_scope_is_exactly_the_listing(demo_search, scope):
    q = Query(**{k: (tuple(v.items()) if isinstance(v, dict) else v) for k, v in scope.items()})
    allowed = {e.path for e in demo_search.list(q).entries}
    everything = set(paths(demo_search.search("the", limit=500)))
    got = paths(demo_search.search("the", limit=500, **scope))
    assert set(got) == allowed & everything


def test_scope_as_a_query_object(demo_search):
    q = Query(folder="Areas", filters=(("status", "stable"),))
    a = paths(demo_search.search("the", q, limit=100))
    b = paths(demo_search.search("the", folder="Areas", filters={"status": "stable"}, limit=100))
    assert a == b and a


def test_bad_scope_arguments_are_query_errors(demo_search):
    with pytest.raises(QueryError):
        demo_search.search("deploy", filters={"stale": "maybe"})
    with pytest.raises(Exception) as exc:
        demo_search.search("deploy", folder="../etc")
    assert "path traversal blocked" in str(exc.value)
    for bad in (0, -1, 1001, "5", True):
        with pytest.raises(QueryError):
            demo_search.search("deploy", limit=bad)


# --- paging ------------------------------------------------------------------------------------------


def test_limit_and_cursor_page_through_everything(demo_search):
    full = paths(demo_search.search("the", limit=500))
    assert len(full) > 10
    seen, cursor = [], None
    while True:
        res = demo_search.search("the", limit=4, cursor=cursor)
        seen.extend(paths(res))
        cursor = res.next_cursor
        if cursor is None:
            break
    assert seen == full


def test_cursor_must_belong_to_the_same_search(demo_search):
    cursor = demo_search.search("the", limit=2).next_cursor
    with pytest.raises(QueryError, match="different search"):
        demo_search.search("deploy", limit=2, cursor=cursor)
    with pytest.raises(QueryError, match="not valid"):
        demo_search.search("the", limit=2, cursor="garbage!")


def test_total_counts_every_match_in_scope(demo_search):
    res = demo_search.search("the", limit=2, count=True)
    assert res.total == len(paths(demo_search.search("the", limit=500)))
    scoped = demo_search.search("the", limit=2, count=True, folder="Projects")
    assert scoped.total == len(paths(demo_search.search("the", limit=500, folder="Projects")))


# --- lifecycle -------------------------------------------------------------------------------------


def test_search_before_the_index_exists_says_so(demo_vault, clock):
    v = Vault(demo_vault, clock=clock)  # never loaded
    with pytest.raises(SearchNotReady) as exc:
        v.search("deploy")
    assert "still building" in exc.value.message and exc.value.code == "search_not_ready"
    v.load()
    assert v.wait_search_ready(10)
    assert v.search("deploy").hits
    v.stop()


def test_build_reports_progress_and_warm_start_reindexes_nothing(demo_vault, clock):
    v = Vault(demo_vault, clock=clock)
    events: list = []
    v.bus.subscribe(events.append)
    v.load()
    assert v.wait_search_ready(10)
    prog = [e for e in events if isinstance(e, IndexProgress) and e.phase == "search"]
    assert prog[-1].done == prog[-1].total == v.snapshot.note_count
    v.stop()
    w = Vault(demo_vault, clock=clock)
    w.load()
    assert w.wait_search_ready(10)
    assert w.search_status().total == 0  # nothing to (re)index
    assert paths(w.search("deploy", limit=1)) == ["Areas/Engineering/Deploy Runbook.md"]
    w.stop()


def test_changes_through_refresh_paths_reach_search(demo_search, demo_vault):
    (demo_vault / "Inbox" / "fresh idea.md").write_text("# Fresh idea\nplatypus budget\n")
    demo_search.refresh_paths(["Inbox/fresh idea.md"])
    assert demo_search.wait_for_pending_writes(5)
    assert paths(demo_search.search("platypus")) == ["Inbox/fresh idea.md"]
    assert not demo_search.search("platypus").index_stale
    (demo_vault / "Inbox" / "fresh idea.md").unlink()
    demo_search.refresh_paths(["Inbox/fresh idea.md"])
    assert demo_search.wait_for_pending_writes(5)
    assert demo_search.search("platypus").hits == ()


def test_a_scoped_search_does_not_pin_the_reader_to_old_data(demo_search, demo_vault):
    assert demo_search.search("deploy", folder="Projects").hits  # fills the reader's scope table
    (demo_vault / "Projects" / "new plan.md").write_text("# New plan\nokapi migration\n")
    demo_search.refresh_paths(["Projects/new plan.md"])
    assert demo_search.wait_for_pending_writes(5)
    assert paths(demo_search.search("okapi")) == ["Projects/new plan.md"]
    assert paths(demo_search.search("okapi", folder="Projects")) == ["Projects/new plan.md"]
    idle = demo_search._search._readers._idle
    assert idle and not any(r.con.in_transaction for r in idle)


def test_corrupt_search_index_is_rebuilt_and_reported(demo_vault, clock):
    v = Vault(demo_vault, clock=clock)
    v.load()
    assert v.wait_search_ready(10)
    db = v._search.db_path
    v.stop()
    db.write_bytes(b"garbage" * 1000)
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    w = Vault(demo_vault, clock=clock)
    events: list = []
    w.bus.subscribe(events.append)
    w.load()
    assert w.wait_search_ready(10)
    assert any(isinstance(e, IndexProblem) and "search index" in e.message for e in events)
    assert paths(w.search("deploy", limit=1)) == ["Areas/Engineering/Deploy Runbook.md"]
    w.stop()


def test_search_index_tables_survive_injection_attempts(demo_search):
    for text in ("'; DROP TABLE fts; --", '"; DROP TABLE docs; --', "x'); DELETE FROM docs; --"):
        try:
            demo_search.search(text)
        except QueryError:
            pass
    con = sqlite3.connect(demo_search._search.db_path)
    assert con.execute("SELECT count(*) FROM docs").fetchone()[0] == demo_search.snapshot.note_count
    con.close()


def test_hit_json_shape(demo_search):
    row = demo_search.search("deploy", limit=1).hits[0].as_json()
    assert set(row) >= {"path", "title", "folder", "score", "snippet", "highlights", "modified_at"}


def test_cli_search(demo_vault, capsys):
    import json

    from vaultwatch.tui.commands.cli import main

    assert main(["search", str(demo_vault), "deploy runbook", "--limit", "2", "--json", "--as-of", "2026-11-29"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["path"] for r in rows][0] == "Areas/Engineering/Deploy Runbook.md" and len(rows) == 2
    assert "**" in rows[0]["snippet"] and "status" in rows[0]
    assert "next page: --cursor" in err
    assert main(["search", str(demo_vault), "deploy", "--filter", "status=deprecated"]) == 0
    out, _ = capsys.readouterr()
    assert "Legacy Deploy Script" in out and "Deploy Runbook.md" not in out.replace("Legacy Deploy", "")
    assert main(["search", str(demo_vault), "\"'; DROP TABLE x; --"]) == 0
    assert main(["search", str(demo_vault), "*"]) == 2
    assert "no words to look for" in capsys.readouterr().err


def test_search_text_is_read_by_the_lexer():
    """note_text reads a note as the link index does (core.mdlex): headings outside code, ATX
    and setext; the body without code and comments, so a `# comment` in a fence is no heading
    and a word only in code or a comment finds nothing."""
    from vaultwatch.core.search.fulltext import note_text

    text = (
        "---\ntitle: T\n---\n# Alpha\n```sh\n# not heading\nsecretcode\n```\nBeta\n====\n"
        "> [!note]\n> ```\n> # quotedcode\n> ```\n%% hiddenword %% shown <!-- htmlhidden -->\n"
        "\n    indentedcode\n\n`spancode` tail\n\n<table>\n<tr><td>tablecell #notag</td></tr>\n</table>\n"
    )
    headings, body = note_text(text.encode())
    assert headings.split("\n") == ["Alpha", "Beta"]
    for hidden in ("secretcode", "not heading", "quotedcode", "hiddenword", "htmlhidden", "indentedcode", "spancode"):
        assert hidden not in body
    for shown in ("Alpha", "Beta", "shown", "tail", "tablecell"):  # an HTML block's text is read: searched
        assert shown in body


def test_words_only_in_code_are_not_found(make_vault, searchable):
    root = make_vault({"a.md": "# A\n```\nzebracode\n```\nplain words\n", "b.md": "zebraword %% zebrahide %%\n"})
    v = searchable(root)
    assert paths(v.search("zebracode")) == []
    assert paths(v.search("zebrahide")) == []
    assert paths(v.search("zebraword")) == ["b.md"]


def test_the_same_words_again_are_answered_from_the_last_search_until_the_index_changes(
    demo_search, demo_vault, monkeypatch
):
    """Search as you type asks again for the same words after a space or a stop word (issue 19):
    the last answer is given again, under the new text, without a read of the index; a change to
    the vault, another page or another scope searches again."""
    from vaultwatch.core.search import reuse

    monkeypatch.setattr(reuse, "REUSE_SECONDS", 600.0)  # (1 s: a starved machine could take longer)
    index = demo_search._search
    borrowed = []
    borrow = index._readers.borrow
    index._readers.borrow = lambda epoch: borrowed.append(epoch) or borrow(epoch)
    first = demo_search.search("deploy", limit=5)
    assert first.hits and len(borrowed) == 1
    for text in ("deploy ", "deploy the", "the deploy of"):
        again = demo_search.search(text, limit=5)
        assert again.query == text and again.hits == first.hits and again.total == first.total
        assert again.next_cursor == first.next_cursor
    assert len(borrowed) == 1  # no read of the index for the same words
    demo_search.search("deploy", limit=5, cursor=first.next_cursor)  # another page: read
    demo_search.search("deploy", limit=5, folder="Projects")  # another scope: read
    assert len(borrowed) == 3
    (demo_vault / "Inbox" / "deploy deploy.md").write_text("# Deploy deploy\ndeploy deploy deploy\n")
    demo_search.refresh_paths(["Inbox/deploy deploy.md"])
    assert demo_search.wait_for_pending_writes(5)
    after = demo_search.search("deploy ", limit=5)
    assert len(borrowed) == 4 and "Inbox/deploy deploy.md" in paths(after)
