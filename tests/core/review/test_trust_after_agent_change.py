"""On an OKF bundle a note a person attested (a `verified:` entry by `human:`) that an agent changed
since, and nobody has reviewed, is not human-reviewed in the triage views (core.review.triageviews):
the Trust tab's tiers, their counts and rule lines, the filter bar's `trust:` terms and the note's
trust word all list it unverified, until a person reviews the change. A person's own edit never
moves it, an agent's change to a note no person attested moves nothing, and off a bundle the
journal's tiers are as they were. list_documents' `trust_tier` stays the tier from `verified:`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.query import filterexpr
from vaultwatch.core.query.listing import Query, run_query, stats
from vaultwatch.core.review import triageviews
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.serialize import entry_json
from vaultwatch.core.vault import Vault

ATTESTED = "Guides/Setup.md"
MACHINE = "Guides/Checked.md"
PLAIN = "Notes/Plain.md"
FRONT = "---\nverified:\n  - by: human:ana\n    at: 2026-01-05\n---\n"
FILES = {
    ATTESTED: FRONT + "# Setup\n\nRun the installer.\n",
    MACHINE: "---\nverified:\n  - by: agent:linter\n    at: 2026-01-05\n---\n# Checked\n",
    PLAIN: "# Plain\n",
}
TIERS = ("unverified", "machine-confirmed", "human-reviewed")


@pytest.fixture(autouse=True)
def _own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal and a settings file of this test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def views(vault: Vault) -> dict:
    """What the Trust tab lists now under each tier."""
    snap, found = vault.snapshot, triageviews.reviews(vault)
    person = triageviews.rules_for(vault)
    lists = {
        tier: [e.path for e in run_query(snap, triageviews.query(snap, tier, person.rules, found), vault.clock).entries]
        for tier in triageviews.tiers(snap)
    }
    return {"lists": lists, "found": found, "snap": snap, "person": person}


def counts_agree(vault: Vault, seen: dict) -> None:
    """The tab's counts, and those the `triage` tool and `vaultwatch stats` make from verified:'s,
    are the lists' lengths."""
    snap, found, lists = seen["snap"], seen["found"], seen["lists"]
    counts = triageviews.counts(snap, seen["person"].rules, found, vault.clock)
    assert {tier: counts[tier] for tier in lists} == {tier: len(paths) for tier, paths in lists.items()}
    if snap.is_bundle:
        by_verified = stats(snap, vault.clock)["trust_tier"]
        assert triageviews.bundle_tier_counts(snap, by_verified, found) == {t: counts[t] for t in TIERS}


def word(vault: Vault, path: str, seen: dict) -> str:
    return triageviews.trust_word(vault.entry(path), seen["snap"], seen["found"])


def bar(vault: Vault, text: str, seen: dict) -> list[str]:
    """The Notes tab's notes with the filter bar's `text`, as the TUI narrows them."""
    q = triageviews.narrow_by_trust(filterexpr.merge(Query(), filterexpr.parse(text)), seen["snap"], seen["found"])
    return [e.path for e in run_query(seen["snap"], q, vault.clock).entries]


def agent_rewrites(vault: Vault, path: str = ATTESTED) -> None:
    """An agent rewrites the body and leaves the person's attestation as it was (allowed)."""
    Writer(vault).write(path, FRONT + "# Setup\n\nRun the installer twice.\n", overwrite=True, actor="agent:bot")


@pytest.mark.parametrize("review", ["v", "journal"])
def test_an_agents_rewrite_of_an_attested_note_is_unverified_until_a_person_reviews_it(
    make_vault, open_vault, review: str
) -> None:
    from vaultwatch.tui.flows.actions import Actions  # the call the TUI's `v` makes

    vault = open_vault(make_vault(FILES, okf=True))
    before = views(vault)
    assert before["lists"] == {"unverified": [PLAIN], "machine-confirmed": [MACHINE], "human-reviewed": [ATTESTED]}
    counts_agree(vault, before)
    assert word(vault, ATTESTED, before) == "human-reviewed"

    agent_rewrites(vault)
    after = views(vault)
    assert after["lists"] == {"unverified": [ATTESTED, PLAIN], "machine-confirmed": [MACHINE], "human-reviewed": []}
    counts_agree(vault, after)
    assert triageviews.demoted(after["snap"], after["found"]) == (ATTESTED,)
    assert word(vault, ATTESTED, after) == triageviews.CHANGED_SINCE_REVIEW
    assert "human-reviewed, then changed by an agent nobody has reviewed since" in triageviews.rule(
        after["snap"], "unverified", after["person"], after["found"]
    )
    assert "no change an agent made since waits for review" in triageviews.rule(
        after["snap"], "human-reviewed", after["person"], after["found"]
    )
    # the filter bar's trust: terms agree with the tab (on the Notes tab, OKF's index.md is a note too)
    assert bar(vault, "trust:human", after) == []
    assert bar(vault, "trust:unverified", after) == [ATTESTED, PLAIN, "index.md"]
    assert bar(vault, "-trust:unverified", after) == [MACHINE]
    assert ATTESTED in bar(vault, "-trust:human-reviewed", after)
    # list_documents' trust_tier and its filter stay the tier from verified:, as the seeds say
    seeds = run_query(vault.snapshot, Query(filters=(("trust_tier", "human-reviewed"),)), vault.clock)
    assert [e.path for e in seeds.entries] == [ATTESTED]
    assert entry_json(vault.entry(ATTESTED), vault.clock, True)["trust_tier"] == "human-reviewed"

    if review == "v":  # on a bundle `v` writes the person's verified: entry and marks the journal
        outcome = Actions(vault, user="tester").mark_reviewed([vault.entry(ATTESTED)], write=True)
        assert [path for path, _ in outcome.done] == [ATTESTED] and not outcome.errors
        assert "human:tester" in Path(vault.root, ATTESTED).read_text()
    else:  # the Changes view's `m`, `vaultwatch changes --mark-reviewed`: the journal alone
        journal = journal_for(vault)
        assert journal is not None and journal.mark_reviewed()
    reviewed = views(vault)
    assert reviewed["lists"] == before["lists"]
    counts_agree(vault, reviewed)
    assert word(vault, ATTESTED, reviewed) == "human-reviewed"
    assert bar(vault, "trust:human", reviewed) == [ATTESTED]


@pytest.mark.parametrize("write", [True, False])
def test_marking_reviewed_leaves_an_agents_change_the_person_was_not_shown(make_vault, open_vault, write) -> None:
    """The person's view showed the note after the agent's first edit; a second edit landed since.
    `v` then conflicts and marks nothing: the change the person never saw keeps the note unverified,
    and one look at the note as it is now marks both."""
    from vaultwatch.tui.flows.actions import Actions  # the call the TUI's `v` makes

    vault = open_vault(make_vault(FILES, okf=True))
    actions = Actions(vault, user="tester")
    agent_rewrites(vault)
    shown = vault.entry(ATTESTED)
    writer = Writer(vault)
    writer.write(ATTESTED, FRONT + "# Setup\n\nUNSEEN agent line\n", overwrite=True, actor="agent:bot")
    outcome = actions.mark_reviewed([shown], write=write)
    assert outcome.conflicts == [ATTESTED] and not outcome.done, outcome
    journal = journal_for(vault)
    assert journal is not None and len(journal.changes(path=ATTESTED, unreviewed=True)) == 2
    assert views(vault)["lists"]["unverified"] == [ATTESTED, PLAIN]
    outcome = actions.mark_reviewed([vault.entry(ATTESTED)], write=write)
    assert [path for path, _ in outcome.done] == [ATTESTED], outcome
    assert journal.changes(path=ATTESTED, unreviewed=True) == []
    assert views(vault)["lists"]["human-reviewed"] == [ATTESTED]


def test_an_agents_change_while_the_note_is_open_in_the_editor_is_not_the_persons_edit(make_vault, open_vault) -> None:
    """The person opened the note in $EDITOR; an agent changed it meanwhile; the person quit without
    saving. What is there now is the agent's, not the person's edit: a conflict, never remembered
    as the person's own bytes, so `v` on the note as it was shown is a conflict too."""
    from vaultwatch.tui.flows.actions import Actions

    vault = open_vault(make_vault(FILES, okf=True))
    actions = Actions(vault, user="tester")
    agent_rewrites(vault)
    shown = vault.entry(ATTESTED)
    before = actions.seen_bytes(shown)
    since = actions.journal_mark()
    assert since > 0
    Writer(vault).write(ATTESTED, FRONT + "# Setup\n\nUNSEEN agent line\n", overwrite=True, actor="agent:bot")
    outcome = actions.edited(ATTESTED, before, since)
    assert outcome.conflicts == [ATTESTED] and not outcome.done, outcome
    outcome = actions.mark_reviewed([shown], write=True)
    assert outcome.conflicts == [ATTESTED] and not outcome.done, outcome
    assert views(vault)["lists"]["unverified"] == [ATTESTED, PLAIN]


def test_a_persons_own_edit_keeps_the_attested_note_human_reviewed(make_vault, open_vault) -> None:
    vault = open_vault(make_vault(FILES, okf=True))
    Writer(vault).write(ATTESTED, FRONT + "# Setup\n\nThe person's wording.\n", overwrite=True, actor="human:ana")
    Writer(vault).update_frontmatter(ATTESTED, set={"owner": "ana"})  # the TUI's own edits: actor "human"
    seen = views(vault)
    assert seen["lists"]["human-reviewed"] == [ATTESTED] and ATTESTED not in seen["lists"]["unverified"]
    counts_agree(vault, seen)
    assert word(vault, ATTESTED, seen) == "human-reviewed"


def test_an_agents_change_to_a_note_no_person_attested_keeps_its_tier(make_vault, open_vault) -> None:
    vault = open_vault(make_vault(FILES, okf=True))
    before = views(vault)["lists"]
    writer = Writer(vault)
    writer.update_frontmatter(MACHINE, set={"owner": "bot"}, actor="agent:bot")
    writer.write(PLAIN, "# Plain\n\nMore.\n", overwrite=True, actor="agent:bot")
    seen = views(vault)
    assert seen["found"].unreviewed >= {MACHINE, PLAIN}  # the journal has them: only the rule ignores them
    assert seen["lists"] == before
    counts_agree(vault, seen)
    assert triageviews.demoted(seen["snap"], seen["found"]) == ()
    assert (word(vault, MACHINE, seen), word(vault, PLAIN, seen)) == ("machine-confirmed", "unverified")


def test_with_the_journal_off_the_rule_says_an_agents_change_is_not_known(
    make_vault, open_vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTWATCH_JOURNAL", "0")
    vault = open_vault(make_vault(FILES, okf=True))
    agent_rewrites(vault)
    seen = views(vault)
    assert seen["lists"]["human-reviewed"] == [ATTESTED]
    counts_agree(vault, seen)
    line = triageviews.rule(seen["snap"], "human-reviewed", seen["person"], seen["found"])
    assert line.startswith("Rule (OKF bundle): the tier from verified: is human-reviewed (the change journal is off")
    assert "an agent's change since a person's review is not known" in line


def test_off_a_bundle_the_journals_tiers_are_as_they_were(make_vault, open_vault) -> None:
    """Off a bundle `verified:` means nothing: the journal's tiers alone, whoever attested what."""
    vault = open_vault(make_vault(FILES))
    assert views(vault)["lists"] == {"unverified": [], "human-reviewed": []}
    agent_rewrites(vault)
    seen = views(vault)
    assert seen["lists"] == {"unverified": [ATTESTED], "human-reviewed": []}
    counts_agree(vault, seen)
    assert word(vault, ATTESTED, seen) == "unverified" and word(vault, PLAIN, seen) == ""
    assert (
        triageviews.rule(seen["snap"], "unverified", seen["person"], seen["found"])
        == (triageviews.JOURNAL_RULE["unverified"])
    )
    assert triageviews.query(seen["snap"], "unverified", seen["person"].rules, seen["found"]) == Query(
        only_paths=(ATTESTED,)
    )
    assert triageviews.demoted(seen["snap"], seen["found"]) == ()


def test_a_tiers_cursor_survives_an_agents_change_between_pages(make_vault, open_vault) -> None:
    """The journal's notes are state, not an argument: an agent's write between two pages of the
    unverified tier leaves the next page's cursor good (it pages on after the last path, as it does
    over any change of the index)."""
    vault = open_vault(make_vault({**FILES, "Notes/Zed.md": "# Zed\n"}, okf=True))

    def page(cursor: str | None = None):
        snap, found = vault.snapshot, triageviews.reviews(vault)
        base = triageviews.query(snap, "unverified", triageviews.rules_for(vault).rules, found)
        return run_query(snap, replace(base, limit=1, cursor=cursor), vault.clock)

    first = page()
    assert [e.path for e in first.entries] == [PLAIN] and first.next_cursor
    agent_rewrites(vault)  # ATTESTED joins the tier, before the cursor
    second = page(first.next_cursor)
    assert [e.path for e in second.entries] == ["Notes/Zed.md"]
