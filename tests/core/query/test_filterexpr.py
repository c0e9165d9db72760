"""The filter-bar language (core.query.filterexpr): text in, a core Query out, errors with positions."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultwatch.core.errors import QueryError
from vaultwatch.core.query.filterexpr import FilterError, analyse, complete, explain, merge, parse, tokenize
from vaultwatch.core.query.listing import Query, run_query


@pytest.mark.parametrize(
    "text, want",
    [
        ("", Query()),
        ("   ", Query()),
        ("deploy", Query(words=("deploy",))),
        ("deploy runbook", Query(words=("deploy", "runbook"))),
        ('"two  spaces"', Query(words=("two  spaces",))),
        ('"-dash" "a:b"', Query(words=("-dash", "a:b"))),
        ("status:deprecated", Query(filters=(("status", "deprecated"),))),
        ("-status:draft", Query(exclude=(("status", "draft"),))),
        ("trust:unverified", Query(filters=(("trust_tier", "unverified"),))),
        ("trust:human", Query(filters=(("trust_tier", "human-reviewed"),))),
        ("trust:machine", Query(filters=(("trust_tier", "machine-confirmed"),))),
        ("trust_tier:human-reviewed", Query(filters=(("trust_tier", "human-reviewed"),))),
        ("stale:true", Query(filters=(("stale", "true"),))),
        ("stale:NO", Query(filters=(("stale", "NO"),))),
        ("tag:craft", Query(filters=(("tags", "craft"),))),
        ("tag:#craft", Query(filters=(("tags", "craft"),))),
        ("#craft", Query(filters=(("tags", "craft"),))),
        ("-#archive", Query(exclude=(("tags", "archive"),))),
        ("type:howto", Query(filters=(("type", "howto"),))),
        ('owner:"Ana Ruiz"', Query(filters=(("owner", "Ana Ruiz"),))),
        ("path:Projects/**", Query(pattern="Projects/**")),
        ("path:Projects", Query(pattern="Projects/**")),
        ("path:/Projects/Archive/", Query(pattern="Projects/Archive/**")),
        (
            "path:Projects/Atlas Migration.md",
            Query(pattern="Projects/Atlas/**", words=("Migration.md",)),
        ),  # spaces end it
        ('path:"Projects/Atlas Migration.md"', Query(pattern="Projects/Atlas Migration.md")),
        ("path:*.md", Query(pattern="*.md")),
        (
            "status:deprecated trust:unverified stale:true tag:craft type:howto path:Projects/** -status:draft free words",
            Query(
                pattern="Projects/**",
                filters=(
                    ("status", "deprecated"),
                    ("trust_tier", "unverified"),
                    ("stale", "true"),
                    ("tags", "craft"),
                    ("type", "howto"),
                ),
                exclude=(("status", "draft"),),
                words=("free", "words"),
            ),
        ),
    ],
)
def test_terms(text: str, want: Query) -> None:
    # key:value terms match as the lists show a value (`Query.shown`), as no agent's filters do
    assert parse(text) == replace(want, shown=bool(want.filters or want.exclude))


@pytest.mark.parametrize(
    "text, start, end, words",
    [
        ("status:", 0, 7, "has no value"),
        ("tag: craft", 0, 4, "has no value"),
        (":draft", 0, 1, "no key"),
        ('owner:"Ana', 6, 10, "unterminated quote"),
        ('"abc', 0, 4, "unterminated quote"),
        ('"abc"def', 5, 6, "space after a closing quote"),
        ('ab"c', 2, 3, "quote inside a word"),
        ("-", 0, 1, "excludes nothing"),
        ("x -foo", 2, 6, "cannot exclude free text"),
        ("stale:maybe", 0, 11, "not a boolean"),
        ("status:draft trust:everyone", 13, 27, "not a tier"),
        ("path:a path:b", 7, 13, "only one path"),
    ],
)
def test_errors_point_at_the_term(text: str, start: int, end: int, words: str) -> None:
    with pytest.raises(FilterError) as info:
        parse(text)
    err = info.value
    assert isinstance(err, QueryError) and err.code == "invalid_filter"
    assert (err.start, err.end) == (start, end)
    assert words in err.message and f"(column {start + 1})" in err.message


def test_tokens_keep_their_spans() -> None:
    terms = tokenize('a status:x  -tag:"b c"')
    assert [(t.key, t.value, t.negated, t.start, t.end) for t in terms] == [
        (None, "a", False, 0, 1),
        ("status", "x", False, 2, 10),
        ("tag", "b c", True, 12, 22),
    ]


def test_merge_narrows_a_tab_query() -> None:
    tab = Query(filters=(("status", "deprecated"),), sort="overdue")
    got = merge(tab, parse("tag:ops -type:howto runbook path:Areas"))
    assert got == Query(
        filters=(("status", "deprecated"), ("tags", "ops")),
        exclude=(("type", "howto"),),
        words=("runbook",),
        pattern="Areas/**",
        sort="overdue",
        shown=True,
    )
    assert merge(tab, parse("status:deprecated")).filters == (("status", "deprecated"),)
    with pytest.raises(QueryError):
        merge(Query(pattern="a/**"), Query(pattern="b/**"))
    with pytest.raises(QueryError):
        merge(Query(text="a"), Query(text="b"))


def test_free_words_and_together_in_any_order(demo) -> None:
    def paths(text: str) -> list[str]:
        return [e.path for e in run_query(demo.snapshot, parse(text), demo.clock).entries]

    assert paths("script legacy") == paths("LEGACY script") == ["Projects/Archive/Legacy Deploy Script.md"]
    assert paths("script archive") == ["Projects/Archive/Legacy Deploy Script.md"]  # one in the path, one in the title
    assert paths('"script legacy"') == []  # a quoted phrase keeps its order and spacing
    assert paths("legacy nosuchword") == []


def test_parsed_queries_run_on_the_demo_vault(demo) -> None:
    res = run_query(demo.snapshot, parse("status:deprecated -tag:ops"), demo.clock)
    assert res.total > 0
    assert all(e.okf_status == "deprecated" and "ops" not in e.tags for e in res.entries)
    res = run_query(demo.snapshot, parse("path:Projects"), demo.clock)
    assert res.total == 7 and all(e.path.startswith("Projects/") for e in res.entries)
    res = run_query(demo.snapshot, parse("RUNBOOK"), demo.clock)
    assert [e.path for e in res.entries] == ["Areas/Engineering/Deploy Runbook.md"]


@given(st.text(max_size=80))
def test_any_text_parses_or_fails_cleanly(text: str) -> None:
    try:
        q = parse(text)
    except FilterError as err:
        assert 0 <= err.start < err.end <= max(len(text), err.start + 1)
        assert err.message
    else:
        assert isinstance(q, Query)


def test_minus_path_leaves_a_folder_out(demo) -> None:
    q = parse("-path:Projects -path:Areas/**")
    assert q.exclude_patterns == ("Projects/**", "Areas/**")
    got = [e.path for e in run_query(demo.snapshot, q, demo.clock).entries]
    assert got and not any(p.startswith(("Projects/", "Areas/")) for p in got)
    every = run_query(demo.snapshot, parse(""), demo.clock).total
    inside = sum(run_query(demo.snapshot, parse(f"path:{f}"), demo.clock).total for f in ("Projects", "Areas"))
    assert len(got) == every - inside


def test_a_folder_typed_in_another_case_is_the_vaults_folder(demo) -> None:
    assert run_query(demo.snapshot, parse("path:projects"), demo.clock).total == 0  # the glob itself is exact
    a = analyse("path:projects", demo.snapshot)
    assert a.query.pattern == "Projects/**"
    assert run_query(demo.snapshot, a.query, demo.clock).total == 7
    assert analyse("-path:PROJECTS/archive", demo.snapshot).query.exclude_patterns == ("Projects/Archive/**",)


def test_free_words_ignore_accents_and_case(demo) -> None:
    cafe = [e.path for e in run_query(demo.snapshot, parse("cafe"), demo.clock).entries]
    assert cafe and cafe == [e.path for e in run_query(demo.snapshot, parse("CAFÉ"), demo.clock).entries]
    assert all(
        "café" in (e.title + e.path).casefold() for e in run_query(demo.snapshot, parse("cafe"), demo.clock).entries
    )


@pytest.mark.parametrize(
    "text, applied, pending",
    [
        ("status:", "", "has no value"),
        ("runbook status:", "runbook", "has no value"),
        ('runbook owner:"Ana', "runbook", "unterminated quote"),
        ("runbook -", "runbook", "excludes nothing"),
        ("runbook -sta", "runbook", "cannot exclude free text"),
        ("runbook", "runbook", None),
    ],
)
def test_a_term_still_being_typed_is_left_out_and_named(text: str, applied: str, pending: str | None) -> None:
    a = analyse(text)
    assert a.applied == applied and a.query == parse(applied)
    assert (a.pending is None) if pending is None else (pending in a.pending.message)


@pytest.mark.parametrize("text", ["status: runbook", "tag: craft", '"abc"def', "x -foo y", "stale:maybe"])
def test_mistakes_before_the_end_stay_errors(text: str) -> None:
    with pytest.raises(FilterError):
        analyse(text)


@pytest.mark.parametrize(
    "text, says",
    [
        ("stauts:deprecated", "no note has `stauts`; did you mean `status`?"),
        ("status:deprecatd", "no note has status `deprecatd`; did you mean `deprecated`?"),
        ("type:howtoo", "did you mean `howto`?"),
        ("tag:crafts", "no note has the tag `crafts`; did you mean `craft`?"),
        ("path:projcts", "no folder is named `projcts`; did you mean `Projects`?"),
    ],
)
def test_hints_explain_an_empty_answer(demo, text: str, says: str) -> None:
    a = analyse(text, demo.snapshot)
    assert run_query(demo.snapshot, a.query, demo.clock).total == 0
    hints = explain(a.terms, demo.snapshot)
    assert [h.message for h in hints if says in h.message], hints
    assert (hints[0].start, hints[0].end) == (0, len(text))


@pytest.mark.parametrize(
    "text",
    [
        "status:deprecated",
        "status:Deprecated",
        "tag:CRAFT",
        "type:howto",
        "type:Howto",
        "path:projects",
        "runbook",
        "trust:human",
        "stale:true",
    ],
)
def test_no_hint_for_terms_that_match(demo, text: str) -> None:
    a = analyse(text, demo.snapshot)
    assert run_query(demo.snapshot, a.query, demo.clock).total > 0
    assert explain(a.terms, demo.snapshot) == ()


@pytest.mark.parametrize(
    "text, want",
    [
        ("sta", "stale:"),
        ("stat", "status:"),
        ("status:dep", "status:deprecated"),
        ("runbook -status:dr", "runbook -status:draft"),
        ("#cr", "#craft"),
        ("tag:CR", "tag:craft"),
        ("path:pro", "path:Projects"),
        ("trust:hu", "trust:human"),
        ("status:deprecated", None),
        ("runbook ", None),
        ("x", None),
    ],
)
def test_completion_of_keys_values_tags_and_folders(demo, text: str, want: str | None) -> None:
    assert complete(text, demo.snapshot) == want


def test_a_term_matches_a_property_as_the_lists_show_it(make_vault, open_vault) -> None:
    """kepano's template holds `status: ["[[Published]]"]`, which the Status column shows as
    `Published`: the bar's value matches a link by its target and any value regardless of case;
    agents' filters stay frontmatter equality, as the seeds say."""
    vault = open_vault(
        make_vault(
            {
                "Clip.md": '---\nstatus: ["[[Published]]"]\ncategories: ["[[Places]]"]\n---\n',
                "Other.md": '---\nstatus: "[[Published|out]]"\n---\n',
                "Plain.md": "---\nstatus: draft\nyear: 2020\n---\n",
            }
        )
    )

    def paths(text: str) -> list[str]:
        return [e.path for e in run_query(vault.snapshot, parse(text), vault.clock).entries]

    assert paths("status:Published") == paths("status:published") == ["Clip.md", "Other.md"]
    assert paths("status:[[Published]]") == ["Clip.md"]
    assert paths("categories:Places") == ["Clip.md"]
    assert paths("status:Draft") == ["Plain.md"]
    assert paths("-status:PUBLISHED") == ["Plain.md"]
    assert paths("year:2020") == ["Plain.md"]
    a = analyse("categories:Places status:[[Published]]", vault.snapshot)
    assert explain(a.terms, vault.snapshot) == ()
    assert complete("status:Pu", vault.snapshot) == "status:Published"
    agents = Query(filters=(("status", "Published"),))
    assert run_query(vault.snapshot, agents, vault.clock).total == 0
    assert run_query(vault.snapshot, Query(filters=(("status", "[[Published]]"),)), vault.clock).total == 1
