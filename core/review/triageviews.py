"""The triage views the person's tabs and the agents' `triage` tool share: which notes Deprecated,
Stale and each trust tier list, by which rule, and how many. One function answers both, so the
agent gets the numbers the person sees.

On an OKF bundle they are OKF's own (`status: deprecated`, `stale_after` reached, the tier from
`verified:`), exactly as the seeds say. On any other vault Deprecated and Stale apply the person's
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
from vaultwatch.core.query.triagerules import TriageRules, due_date
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


@dataclass(frozen=True, slots=True)
class Reviews:
    """What the change journal says of agents' changes, read at one moment."""

    unreviewed: frozenset[str] = frozenset()  # paths an agent changed that nobody reviewed since
    reviewed: frozenset[str] = frozenset()  # paths whose agents' changes the person reviewed
    journal_on: bool = True

    def tier(self, path: str) -> str | None:
        """The journal's tier of `path` ("unverified", "human-reviewed"), None when no agent changed it."""
        if path in self.unreviewed:
            return "unverified"
        if path in self.reviewed:
            return "human-reviewed"
        return None

    def paths(self, tier: str) -> frozenset[str]:
        return self.unreviewed if tier == "unverified" else self.reviewed if tier == "human-reviewed" else frozenset()


def reviews(vault: Any) -> Reviews:
    """The journal's agent-changed notes now: not reviewed since, and reviewed by the person."""
    journal = journal_for(vault)
    if journal is None:
        return Reviews(journal_on=False)
    unreviewed = frozenset(journal.unreviewed_paths())
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
        return Query(filters=(("trust_tier", category),), skip_paths=okf.RESERVED)
    return Query(only_paths=tuple(sorted(found.paths(category))))


def narrow_by_trust(q: Query, snapshot: Snapshot, found: Reviews) -> Query:
    """The filter bar's `trust:` terms (`trust_tier` pairs in `q`) as the Trust tab reads them:
    on a bundle OKF's own tier (left as they are), elsewhere the journal's tiers, so `trust:TIER`
    keeps the notes the tab lists under TIER and `-trust:TIER` leaves them out."""
    if snapshot.is_bundle:
        return q
    keep = [tier for key, tier in q.filters if key == "trust_tier"]
    drop = [tier for key, tier in q.exclude if key == "trust_tier"]
    if not keep and not drop:
        return q
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
        return f"Rule (OKF bundle): the trust tier from verified: is {category}"
    return JOURNAL_RULE[category] if found.journal_on else JOURNAL_OFF


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
