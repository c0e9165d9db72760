"""The triage views the person's tabs and the agents' `triage` tool share: which notes Deprecated,
Stale and each trust tier list, by which rule, and how many. One function answers both, so the
agent gets the numbers the person sees.

On an OKF bundle they are OKF's own (`status: deprecated`, `stale_after` reached, the tier from
`verified:`), but for one rule the journal adds (`okf.triage_tier`): a note a person attested that
an agent changed since, and nobody has reviewed, is unverified, not human-reviewed, since the
person's review covered other content. On any other vault Deprecated and Stale apply the person's
rules (`core.query.triagerules`, from `[triage]` in the settings file), and trust comes from the
change journal, which knows what a person who lets agents write wants to triage:
- `unverified`: notes an agent changed that nobody has reviewed since;
- `human-reviewed`: notes whose agents' changes the person has reviewed (the TUI's `v`, the Changes
  view's `m`, `vaultwatch changes --mark-reviewed`, an approval at the gate, a revert);
- `machine-confirmed`: nothing (only OKF's `verified:` entries say it).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, replace
from typing import Any

from vaultwatch.core.clock import Clock
from vaultwatch.core.errors import VaultError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.markdown import okf
from vaultwatch.core.model import Entry
from vaultwatch.core.query.listing import Query, run_query
from vaultwatch.core.query.problems import broken_frontmatter
from vaultwatch.core.query.triagerules import TriageRules, due_date, status_words
from vaultwatch.core.query.triagerules import load as load_rules
from vaultwatch.core.review.approval import settings_path
from vaultwatch.core.review.journal import journal_for

CATEGORIES = ("deprecated", "stale", *okf.TRUST_TIERS)
JOURNAL_TIERS = ("unverified", "human-reviewed")  # the tiers the journal can say off a bundle

OKF_RULE = {
    "deprecated": "Rule (OKF bundle): status: deprecated",
    "stale": "Rule (OKF bundle): stale_after reached",
}
JOURNAL_RULE = {
    "unverified": "Rule: an agent changed it and nobody has reviewed it since (the change journal)",
    "human-reviewed": "Rule: the person reviewed the agents' changes to it (the change journal)",
    "machine-confirmed": "Rule: only an OKF bundle's verified: entries say machine-confirmed; none off a bundle",
}
JOURNAL_OFF = "The change journal is off (VAULTWATCH_JOURNAL=0): no agent's change can be listed for review"
BUNDLE_TRUST_RULE = {
    "unverified": "Rule (OKF bundle): the tier from verified: is unverified, or human-reviewed, then changed "
    "by an agent nobody has reviewed since",
    "machine-confirmed": "Rule (OKF bundle): the tier from verified: is machine-confirmed",
    "human-reviewed": "Rule (OKF bundle): the tier from verified: is human-reviewed, and no change an agent "
    "made since waits for review",
}
BUNDLE_JOURNAL_OFF = " (the change journal is off: an agent's change since a person's review is not known)"
# What a note's trust reads in the person's views when `verified:` says human-reviewed but an agent
# changed it since and nobody has reviewed that change
CHANGED_SINCE_REVIEW = "human-reviewed, then changed by an agent nobody has reviewed since"


@dataclass(frozen=True, slots=True)
class Reviews:
    """What the change journal says of agents' changes, read at one moment."""

    unreviewed: frozenset[str] = frozenset()  # paths an agent changed (or is changing) that nobody reviewed since
    reviewed: frozenset[str] = frozenset()  # paths whose agents' changes the person reviewed
    journal_on: bool = True
    why_off: str = ""  # when off: the journal cannot be opened (its problem), else switched off

    def tier(self, path: str) -> str | None:
        """The journal's tier of `path` ("unverified", "human-reviewed"), None when no agent changed it."""
        if path in self.unreviewed:
            return "unverified"
        if path in self.reviewed:
            return "human-reviewed"
        return None

    def paths(self, tier: str) -> frozenset[str]:
        return self.unreviewed if tier == "unverified" else self.reviewed if tier == "human-reviewed" else frozenset()


def tier_of(entry: Entry, snapshot: Snapshot, found: Reviews) -> str | None:
    """The trust tier the triage views list `entry` under: on a bundle the tier from `verified:` as
    `okf.triage_tier` reads it with the journal, elsewhere the journal's (None: no agent changed it)."""
    if snapshot.is_bundle:
        return okf.triage_tier(entry.okf_trust, entry.path in found.unreviewed)
    return found.tier(entry.path)


def changed_since_review(entry: Entry, snapshot: Snapshot, found: Reviews) -> bool:
    """On an OKF bundle: `entry`'s `verified:` says human-reviewed, but an agent changed the note
    since and nobody has reviewed that change, so the triage views list it unverified."""
    return snapshot.is_bundle and tier_of(entry, snapshot, found) != entry.okf_trust


def trust_word(entry: Entry, snapshot: Snapshot, found: Reviews) -> str:
    """A note's trust as the person's views say it (the Trust column, the preview): on a bundle its
    tier from `verified:`, or CHANGED_SINCE_REVIEW when an agent's change since a person's review
    waits (`changed_since_review`); elsewhere the journal's tier ("" when no agent changed it)."""
    if snapshot.is_bundle:
        return CHANGED_SINCE_REVIEW if changed_since_review(entry, snapshot, found) else entry.okf_trust
    return found.tier(entry.path) or ""


def demoted(snapshot: Snapshot, found: Reviews) -> tuple[str, ...]:
    """The notes `changed_since_review` holds for (sorted; none off a bundle), OKF's reserved files
    left out as the tier counts leave them out."""
    if not snapshot.is_bundle:
        return ()
    out = []
    for path in sorted(found.unreviewed):
        entry = snapshot.get(path)
        if entry is not None and entry.kind == "note" and path not in okf.RESERVED:
            if changed_since_review(entry, snapshot, found):
                out.append(path)
    return tuple(out)


def bundle_tier_counts(snapshot: Snapshot, by_verified: dict[str, int], found: Reviews) -> dict[str, int]:
    """A bundle's tier counts from `verified:` (core.query.listing.stats) as the triage views count
    them: the notes `demoted` holds move from human-reviewed to unverified."""
    moved = len(demoted(snapshot, found))
    out = {tier: by_verified.get(tier, 0) for tier in okf.TRUST_TIERS}
    out["human-reviewed"] -= moved
    out["unverified"] += moved
    return out


def journal_revision(vault: Any) -> tuple[int, int] | None:
    """What moves when the journal's reviews may have changed (`Journal.revision`); None: read them."""
    journal = journal_for(vault)
    return None if journal is None else journal.revision()


def reviews(vault: Any) -> Reviews:
    """The journal's agent-changed notes now: not reviewed since, and reviewed by the person."""
    journal = journal_for(vault)
    if journal is None:
        return Reviews(journal_on=False, why_off=vault.journal_problem or "")
    # an agent's write under way counts already: a server stopped after its write landed and before
    # its row would otherwise leave an attested note reading human-reviewed until it is settled
    unreviewed = frozenset(journal.unreviewed_paths()) | journal.writes_under_way()
    return Reviews(unreviewed, frozenset(journal.reviewed_paths()) - unreviewed)


@dataclass(frozen=True, slots=True)
class PersonRules:
    """The person's triage rules for one vault, and why the settings did not apply (None: they did)."""

    rules: TriageRules
    problem: str | None = None


_rules: weakref.WeakKeyDictionary[Any, PersonRules] = weakref.WeakKeyDictionary()
_rules_lock = threading.Lock()


def rules_for(vault: Any) -> PersonRules:
    """The person's triage rules for `vault` (the settings file, read once per open vault so the TUI
    and the agents judge by the same rules; a table that does not parse leaves the defaults and
    says why)."""
    with _rules_lock:
        found = _rules.get(vault)
        if found is None:
            try:
                found = PersonRules(load_rules(settings_path(), vault.root_real))
            except VaultError as exc:
                found = PersonRules(TriageRules(), exc.message)
            _rules[vault] = found
        return found


def tiers(snapshot: Snapshot) -> tuple[str, ...]:
    """The trust tiers a vault has: OKF's three on a bundle, else the journal's two."""
    return okf.TRUST_TIERS if snapshot.is_bundle else JOURNAL_TIERS


def query(snapshot: Snapshot, category: str, rules: TriageRules, found: Reviews) -> Query:
    """The base query of one triage view (no page, no order): OKF's on a bundle, else the person's
    rule or the journal's notes. The folder scope and the filter bar narrow it as any query."""
    bundle = snapshot.is_bundle
    if category in ("deprecated", "stale"):
        if not bundle:
            return Query(triage=(category, rules))
        key, value = ("status", "deprecated") if category == "deprecated" else ("stale", "true")
        return Query(filters=((key, value),), skip_paths=okf.RESERVED)
    if category not in okf.TRUST_TIERS:
        raise VaultError(f"triage category {category!r} is unknown: use one of {', '.join(CATEGORIES)}")
    if bundle:
        return Query(filters=(("trust_tier", category),), skip_paths=okf.RESERVED, unreviewed=demoted(snapshot, found))
    return Query(only_paths=tuple(sorted(found.paths(category))))


def narrow(q: Query, snapshot: Snapshot, rules: TriageRules, found: Reviews) -> Query:
    """The filter bar's triage words as the tabs read them: `status:deprecated` and `stale:` by
    the person's rules off a bundle (OKF's own on one), and `trust:` as `narrow_by_trust` reads
    it, so a term the bar offers selects the notes the tab of that name lists."""
    if not snapshot.is_bundle and any(key in ("status", "stale") for key, _ in (*q.filters, *q.exclude)):
        q = replace(q, rules=rules)
    return narrow_by_trust(q, snapshot, found)


def narrow_by_trust(q: Query, snapshot: Snapshot, found: Reviews) -> Query:
    """The filter bar's `trust:` terms (`trust_tier` pairs in `q`) as the Trust tab reads them:
    on a bundle OKF's own tier with the journal's notes read as the tab reads them (`unreviewed`),
    elsewhere the journal's tiers, so `trust:TIER` keeps the notes the tab lists under TIER and
    `-trust:TIER` leaves them out."""
    keep = [tier for key, tier in q.filters if key == "trust_tier"]
    drop = [tier for key, tier in q.exclude if key == "trust_tier"]
    if not keep and not drop:
        return q
    if snapshot.is_bundle:
        return replace(q, unreviewed=demoted(snapshot, found))
    only = None if q.only_paths is None else frozenset(q.only_paths)
    for tier in keep:
        only = found.paths(tier) if only is None else only & found.paths(tier)
    skip = set(q.skip_paths)
    for tier in drop:
        skip |= found.paths(tier)
    return replace(
        q,
        filters=tuple(pair for pair in q.filters if pair[0] != "trust_tier"),
        exclude=tuple(pair for pair in q.exclude if pair[0] != "trust_tier"),
        only_paths=None if only is None else tuple(sorted(only)),
        skip_paths=tuple(sorted(skip)),
    )


def rule(snapshot: Snapshot, category: str, person: PersonRules, found: Reviews) -> str:
    """The one line saying which rule a view applies (and where to change it), as its tab says it."""
    if category in ("deprecated", "stale"):
        if snapshot.is_bundle:
            return OKF_RULE[category]
        line = person.rules.describe(category)
        return f"{line} (the settings did not apply: {person.problem})" if person.problem else line
    if snapshot.is_bundle:
        if found.journal_on:
            return BUNDLE_TRUST_RULE[category]
        if found.why_off:
            return f"Rule (OKF bundle): the tier from verified: is {category} ({found.why_off})"
        return f"Rule (OKF bundle): the tier from verified: is {category}{BUNDLE_JOURNAL_OFF}"
    if found.journal_on:
        return JOURNAL_RULE[category]
    # a journal that cannot be opened is never described as switched off (journal.why_no_journal)
    return f"No agent's change can be listed for review: {found.why_off}" if found.why_off else JOURNAL_OFF


def counts(snapshot: Snapshot, rules: TriageRules, found: Reviews, clock: Clock) -> dict[str, int]:
    """How many notes each view lists (every category), with nothing else narrowing them."""
    return {
        category: run_query(
            snapshot, replace(query(snapshot, category, rules, found), limit=1, sort="path"), clock
        ).total
        for category in CATEGORIES
    }


def overdue_days(entry: Entry, snapshot: Snapshot, rules: TriageRules, clock: Clock) -> int | None:
    """Days since the note's stale date by the view's rule (OKF's `stale_after` on a bundle, else the
    person's stale keys); None when it is not due."""
    if snapshot.is_bundle:
        return okf.overdue_days(entry.stale_date, entry.stale_instant, clock)
    due = due_date(entry, rules)
    return (clock.today() - due).days if due is not None and due <= clock.today() else None


BROKEN = "broken"  # the status a list shows for a note whose frontmatter does not parse


def status_shown(entry: Entry, bundle: bool, templates: tuple[str, ...]) -> str:
    """The status a list shows for a note, the TUI's Notes list and `vaultwatch list` alike: `broken`
    when its frontmatter does not parse and it is no template (`templates`, the vault's templates
    folders: a template's placeholders are not YAML until applied), its OKF status on a bundle, else
    the words its `status` holds as Obsidian shows them (a link by its text, each of a list's), the
    words the Deprecated tab's rule reads."""
    if broken_frontmatter(entry, templates):
        return BROKEN
    if bundle:
        return entry.okf_status or ""
    return ", ".join(status_words(entry.frontmatter.get("status")))
