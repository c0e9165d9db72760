"""OKF rules: bundle detection and modes, status, staleness (dates, offset and naive datetimes,
junk) at the day boundary, trust tiers, and the stale filter words. Unit tables for the
derivations, then the same rules end to end through real notes on disk."""

from __future__ import annotations

import datetime as dt

import pytest

from vaultwatch.core.clock import FixedClock, parse_as_of
from vaultwatch.core.markdown import okf
from vaultwatch.core.query.listing import Query, pairs
from vaultwatch.core.serialize import entry_json

UTC = dt.UTC
TODAY = dt.date(2026, 11, 29)
MIDNIGHT = FixedClock.at_date(TODAY)
NOON = FixedClock(dt.datetime(2026, 11, 29, 12, 0, tzinfo=UTC))


@pytest.mark.parametrize(
    ("fm", "bundle"),
    [
        ({"okf_version": "0.2"}, True),
        ({"okf_version": 0.2}, True),
        ({"okf_version": 1}, True),
        ({"okf_version": "1.0.0"}, True),
        ({"okf_version": ""}, False),
        ({"okf_version": "  "}, False),
        ({"okf_version": None}, False),
        ({"okf_version": True}, False),
        ({"okf_version": ["0.2"]}, False),
        ({"okf_version": {"v": 1}}, False),
        ({"title": "no version"}, False),
        ({}, False),
        (None, False),
    ],
)
def test_declares_okf(fm, bundle: bool) -> None:
    assert okf.declares_okf(fm) is bundle


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ("draft", "draft"),
        ("stable", "stable"),
        ("deprecated", "deprecated"),
        ("  deprecated \n", "deprecated"),  # stripped
        ("Deprecated", "Deprecated"),  # case kept: compares case-sensitively
        ("in-review", "in-review"),  # other strings pass through
        (None, "stable"),  # missing
        ("", "stable"),  # empty
        ("   ", "stable"),
        (1, "stable"),  # not a string
        (True, "stable"),
        (["draft"], "stable"),
        ({"s": "draft"}, "stable"),
        (dt.date(2026, 1, 1), "stable"),
    ],
)
def test_derive_status(raw, status: str) -> None:
    assert okf.derive_status(raw) == status


@pytest.mark.parametrize(
    ("verified", "tier"),
    [
        (None, "unverified"),
        ([], "unverified"),
        ("human:ana", "unverified"),  # a bare string is neither a list nor a mapping
        (42, "unverified"),
        ([{"by": "human:ana"}], "human-reviewed"),
        ({"by": "human:ana", "at": "2026-01-01"}, "human-reviewed"),  # a single mapping
        ({"by": "ci-bot/1.0"}, "machine-confirmed"),
        ([{"by": "ci-bot/1.0"}, {"by": "human:ben"}], "human-reviewed"),  # any human entry wins
        ([{"by": "agent:claude"}], "machine-confirmed"),
        ([{"by": "humanish-linter"}], "machine-confirmed"),  # prefix is "human:", with the colon
        ([{"by": "Human:ana"}], "machine-confirmed"),  # case-sensitive prefix
        ([{"by": " human:ana"}], "machine-confirmed"),
        # OKF entries are mappings: every entry that is not a human's is machine-confirmed
        ([{"at": "2026-01-01"}], "machine-confirmed"),
        ({"at": "2026-01-01"}, "machine-confirmed"),
        (["human:ana"], "unverified"),  # a list of strings, not mappings: no entries
        (["human:ana", {"by": "ci"}], "machine-confirmed"),
        ([{"by": 5}], "machine-confirmed"),
        ([{"by": "  "}], "machine-confirmed"),
        ([{"at": "2026-01-01"}, {"by": "human:ben"}], "human-reviewed"),
    ],
)
def test_derive_trust(verified, tier: str) -> None:
    assert okf.derive_trust(verified) == tier


@pytest.mark.parametrize(
    ("raw", "stale_midnight", "stale_noon"),
    [
        (dt.date(2026, 11, 28), True, True),  # yesterday
        (dt.date(2026, 11, 29), True, True),  # today: stale_after reached
        (dt.date(2026, 11, 30), False, False),  # tomorrow
        ("2026-11-29", True, True),  # a quoted date
        ("2026-11-30", False, False),
        (" 2026-11-29 ", True, True),
        (dt.datetime(2026, 11, 29, 0, 0, tzinfo=UTC), True, True),  # == now at midnight
        (dt.datetime(2026, 11, 29, 0, 0, 1, tzinfo=UTC), False, True),  # one second later
        (dt.datetime(2026, 11, 29, 11, 59, tzinfo=UTC), False, True),
        (dt.datetime(2026, 11, 29, 12, 1, tzinfo=UTC), False, False),
        # offsets: 13:00+02:00 is 11:00 UTC
        (dt.datetime(2026, 11, 29, 13, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))), False, True),
        # 01:00-02:00 on the 28th is 03:00 UTC on the 28th
        (dt.datetime(2026, 11, 28, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=-2))), True, True),
        ("2026-11-29T11:00:00Z", False, True),
        ("2026-11-29T11:00:00+00:00", False, True),
        ("2026-11-29T14:00:00+01:00", False, False),
        ("2026-06-01T09:00:00+02:00", True, True),
        # naive datetimes are never stale
        (dt.datetime(2020, 1, 1, 10, 0), False, False),
        ("2020-01-01T10:00:00", False, False),
        # unparseable: never stale
        ("next spring", False, False),
        ("2026-13-45", False, False),
        ("", False, False),
        (None, False, False),
        (20261129, False, False),
        (True, False, False),
        (["2025-01-01"], False, False),
    ],
)
def test_staleness(raw, stale_midnight: bool, stale_noon: bool) -> None:
    date, instant = okf.parse_stale_after(raw)
    assert okf.is_stale(date, instant, MIDNIGHT) is stale_midnight
    assert okf.is_stale(date, instant, NOON) is stale_noon


def test_overdue_days() -> None:
    assert okf.overdue_days(dt.date(2026, 11, 29), None, MIDNIGHT) == 0
    assert okf.overdue_days(dt.date(2026, 11, 19), None, MIDNIGHT) == 10
    assert okf.overdue_days(dt.date(2026, 11, 30), None, MIDNIGHT) is None
    assert okf.overdue_days(None, None, MIDNIGHT) is None
    assert okf.overdue_days(None, dt.datetime(2026, 11, 27, 12, tzinfo=UTC), NOON) == 2


@pytest.mark.parametrize(
    ("word", "flag"),
    [
        ("true", True),
        ("TRUE", True),
        ("Yes", True),
        ("1", True),
        (" yes ", True),
        ("false", False),
        ("False", False),
        ("NO", False),
        ("0", False),
        ("", None),
        ("maybe", None),
        ("y", None),
        ("2", None),
        ("on", None),
        ("truee", None),
    ],
)
def test_parse_bool_word(word: str, flag) -> None:
    assert okf.parse_bool_word(word) is flag


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("2026-11-29", dt.datetime(2026, 11, 29, tzinfo=UTC)),
        (" 2026-11-29 ", dt.datetime(2026, 11, 29, tzinfo=UTC)),
        ("2026-11-29T10:00:00+02:00", dt.datetime(2026, 11, 29, 8, tzinfo=UTC)),
        ("2026-11-29T10:00:00Z", dt.datetime(2026, 11, 29, 10, tzinfo=UTC)),
        ("2026-11-29T10:00:00", dt.datetime(2026, 11, 29, 10, tzinfo=UTC)),  # naive: UTC
    ],
)
def test_parse_as_of(text: str, instant: dt.datetime) -> None:
    assert parse_as_of(text).now() == instant


@pytest.mark.parametrize("text", ["29/11/2026", "tomorrow", "", "2026-02-30"])
def test_parse_as_of_rejects_junk(text: str) -> None:
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        parse_as_of(text)


# --- end to end: notes on disk ----------------------------------------------------------------------

OKF_NOTES = {
    "status/draft.md": "---\nstatus: draft\n---\n",
    "status/padded.md": "---\nstatus: '  deprecated  '\n---\n",
    "status/upper.md": "---\nstatus: Deprecated\n---\n",
    "status/missing.md": "---\ntitle: x\n---\n",
    "status/empty.md": "---\nstatus: ''\n---\n",
    "status/null.md": "---\nstatus:\n---\n",
    "status/number.md": "---\nstatus: 3\n---\n",
    "status/list.md": "---\nstatus: [draft]\n---\n",
    "status/none.md": "no frontmatter\n",
    "status/broken.md": "---\nstatus: draft\ntitle: [unclosed\n---\n",
    "stale/yesterday.md": "---\nstale_after: 2026-11-28\n---\n",
    "stale/today.md": "---\nstale_after: 2026-11-29\n---\n",
    "stale/tomorrow.md": "---\nstale_after: 2026-11-30\n---\n",
    "stale/quoted.md": "---\nstale_after: '2026-11-01'\n---\n",
    "stale/offset-past.md": "---\nstale_after: 2026-11-29T00:30:00+01:00\n---\n",  # 23:30 UTC on the 28th
    "stale/offset-future.md": "---\nstale_after: 2026-11-28T23:30:00-01:00\n---\n",  # 00:30 UTC on the 29th
    "stale/zulu-past.md": "---\nstale_after: 2026-11-28T23:59:59Z\n---\n",
    "stale/naive.md": "---\nstale_after: 2020-01-01T10:00:00\n---\n",
    "stale/junk.md": "---\nstale_after: next spring\n---\n",
    "stale/number.md": "---\nstale_after: 5\n---\n",
    "trust/human.md": "---\nverified:\n  - by: human:ana\n    at: 2026-01-01\n---\n",
    "trust/human-single.md": "---\nverified: {by: 'human:ana'}\n---\n",
    "trust/machine.md": "---\nverified:\n  - by: ci-bot/1.0\n---\n",
    "trust/machine-single.md": "---\nverified:\n  by: agent:claude\n---\n",
    "trust/mixed.md": "---\nverified:\n  - by: agent:claude\n  - by: human:ben\n---\n",
    "trust/empty.md": "---\nverified: []\n---\n",
    "trust/literal.md": "---\ntrust_tier: human-reviewed\n---\n",
    "trust/literal-plus.md": "---\ntrust_tier: unverified\nverified:\n  - by: human:ana\n---\n",
}


@pytest.fixture
def okf_vault(make_vault, open_vault):
    return open_vault(make_vault(OKF_NOTES, okf=True))


def _rows(vault, **filters) -> list[str]:
    return [e.path for e in vault.list(Query(filters=pairs(filters))).entries]


def test_okf_status_end_to_end(okf_vault) -> None:
    by_status = {e.path: e.okf_status for e in okf_vault.list(Query(folder="status")).entries}
    assert by_status == {
        "status/broken.md": "stable",
        "status/draft.md": "draft",
        "status/empty.md": "stable",
        "status/list.md": "stable",
        "status/missing.md": "stable",
        "status/none.md": "stable",
        "status/null.md": "stable",
        "status/number.md": "stable",
        "status/padded.md": "deprecated",
        "status/upper.md": "Deprecated",
    }
    assert _rows(okf_vault, status="deprecated") == ["status/padded.md"]
    assert _rows(okf_vault, status="Deprecated") == ["status/upper.md"]
    assert _rows(okf_vault, status="  deprecated  ") == []  # the filter value is compared as given
    stable_in_status = [p for p in _rows(okf_vault, status="stable") if p.startswith("status/")]
    assert stable_in_status == [
        "status/broken.md",
        "status/empty.md",
        "status/list.md",
        "status/missing.md",
        "status/none.md",
        "status/null.md",
        "status/number.md",
    ]


def test_okf_stale_end_to_end(okf_vault) -> None:
    stale = [p for p in _rows(okf_vault, stale="true") if p.startswith("stale/")]
    assert stale == [
        "stale/offset-past.md",
        "stale/quoted.md",
        "stale/today.md",
        "stale/yesterday.md",
        "stale/zulu-past.md",
    ]
    fresh = [p for p in _rows(okf_vault, stale="false") if p.startswith("stale/")]
    assert fresh == [
        "stale/junk.md",
        "stale/naive.md",
        "stale/number.md",
        "stale/offset-future.md",
        "stale/tomorrow.md",
    ]
    assert okf_vault.stats()["stale"] == 5


def test_okf_stale_follows_the_clock(make_vault, open_vault) -> None:
    root = make_vault(OKF_NOTES, okf=True)
    later = open_vault(root, clock=FixedClock(dt.datetime(2026, 11, 29, 0, 30, tzinfo=UTC)))
    assert "stale/offset-future.md" in _rows(later, stale="true")
    next_day = open_vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 30)))
    assert "stale/tomorrow.md" in _rows(next_day, stale="true")
    earlier = open_vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 28)))
    assert [p for p in _rows(earlier, stale="true") if p.startswith("stale/")] == [
        "stale/quoted.md",
        "stale/yesterday.md",
    ]


def test_okf_trust_end_to_end(okf_vault) -> None:
    tiers = {e.path: e.okf_trust for e in okf_vault.list(Query(folder="trust")).entries}
    assert tiers == {
        "trust/empty.md": "unverified",
        "trust/human-single.md": "human-reviewed",
        "trust/human.md": "human-reviewed",
        "trust/literal-plus.md": "human-reviewed",
        "trust/literal.md": "unverified",
        "trust/machine-single.md": "machine-confirmed",
        "trust/machine.md": "machine-confirmed",
        "trust/mixed.md": "human-reviewed",
    }
    assert [p for p in _rows(okf_vault, trust_tier="human-reviewed") if p.startswith("trust/")] == [
        "trust/human-single.md",
        "trust/human.md",
        "trust/literal-plus.md",
        "trust/mixed.md",
    ]


def test_okf_row_fields(okf_vault) -> None:
    row = entry_json(okf_vault.entry("stale/today.md"), okf_vault.clock, True)
    assert (row["status"], row["stale"], row["trust_tier"]) == ("stable", True, "unverified")
    assert row["frontmatter"] == {"stale_after": "2026-11-29"}  # JSON-safe: the date as ISO text


@pytest.mark.parametrize(
    ("index", "mode", "bundle"),
    [
        ('---\nokf_version: "0.2"\n---\n', "auto", True),
        ("---\nokf_version: 0.2\n---\n", "auto", True),  # a number
        ("---\nokf_version: 1\n---\n", "auto", True),
        ("---\ntitle: no version\n---\n", "auto", False),  # absent
        ("---\nokf_version: ''\n---\n", "auto", False),
        ("# no frontmatter\n", "auto", False),
        ('---\nokf_version: "0.2"\n---\n', "off", False),  # --okf off
        ("---\ntitle: plain\n---\n", "on", True),  # --okf on
        (None, "auto", False),  # no index.md at all
        (None, "on", True),
    ],
)
def test_bundle_detection_and_modes(make_vault, open_vault, index, mode: str, bundle: bool) -> None:
    files = {"note.md": "---\nstatus: ''\nstale_after: 2020-01-01\n---\n"}
    if index is not None:
        files["index.md"] = index
    vault = open_vault(make_vault(files), okf_mode=mode)
    assert vault.snapshot.is_bundle is bundle
    assert vault.stats()["okf_bundle"] is bundle
    row = entry_json(vault.entry("note.md"), vault.clock, vault.snapshot.is_bundle)
    if bundle:
        assert (row["status"], row["stale"], row["trust_tier"]) == ("stable", True, "unverified")
        assert _rows(vault, stale="true") == ["note.md"]
    else:
        # plain frontmatter semantics: no derived fields, no implicit stable, no stale key
        assert (row["status"], row["stale"], row["trust_tier"]) == (None, None, None)
        assert _rows(vault, status="stable") == []
        assert _rows(vault, stale="true") == []
    # the counts (`vaultwatch stats`, triage's overview, the TUI's tabs) agree with the rows
    stats = vault.stats()
    if bundle:
        assert (stats["status"], stats["stale"], stats["trust_tier"]["unverified"]) == ({"stable": 1}, 1, 1)
    else:
        assert (stats["status"], stats["stale"], sum(stats["trust_tier"].values())) == ({}, 0, 0)


def test_nested_index_md_does_not_make_a_bundle(make_vault, open_vault) -> None:
    vault = open_vault(make_vault({"Sub/index.md": '---\nokf_version: "0.2"\n---\n', "Index.md": "# x\n"}))
    assert vault.snapshot.is_bundle is False


def test_bad_okf_mode_is_refused(tmp_path) -> None:
    from vaultwatch.core.vault import Vault

    with pytest.raises(ValueError, match="okf mode"):
        Vault(tmp_path, okf_mode="maybe")
