"""The state the app's widgets share: the vault, the as-of clock and what agents touched."""

from __future__ import annotations

from typing import Any

from vaultwatch.core.clock import Clock
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.query.listing import Query, QueryResult, run_query
from vaultwatch.core.query.triagerules import TriageRules
from vaultwatch.core.review import triageviews
from vaultwatch.core.vault import Vault
from vaultwatch.tui.config import AppConfig
from vaultwatch.tui.marks import AgentColors, AgentMarks


class Session:
    """One TUI session over one vault.

    The as-of clock is the session's own: changing it re-judges staleness in the TUI
    without changing what agents see over MCP (they keep the vault's clock).
    """

    def __init__(self, vault: Vault, config: AppConfig) -> None:
        self.vault = vault
        self.config = config
        self.clock: Clock = vault.clock
        self.marks = AgentMarks()
        self.colors = AgentColors()
        # the journal's agent-changed notes as last read: the Trust tab and column (on a bundle, the
        # notes a person attested that an agent changed since)
        self.reviews = triageviews.Reviews()
        self._reviews_revision: tuple[int, int] | None = None  # the journal's when `reviews` was read

    @property
    def person_rules(self) -> triageviews.PersonRules:
        """The person's triage rules for this vault, the ones agents' `triage` calls get too."""
        return triageviews.rules_for(self.vault)

    @property
    def triage_rules(self) -> TriageRules:
        return self.person_rules.rules

    @property
    def triage_rules_problem(self) -> str | None:
        """Why the settings' `[triage]` did not apply (the defaults do), None when it did."""
        return self.person_rules.problem

    def refresh_reviews(self) -> bool:
        """Read the journal's agent-changed notes again; True when what the views show of them
        changed. On a bundle that is only the attested notes an agent changed since: agents' writes
        elsewhere (a stream of them, under load) must not redraw every list each time."""
        revision = triageviews.journal_revision(self.vault)
        if revision is not None and revision == self._reviews_revision:
            return False  # the journal has not changed since the last read (keystrokes ask every time)
        fresh, old = triageviews.reviews(self.vault), self.reviews
        self.reviews, self._reviews_revision = fresh, revision
        snapshot = self.vault.snapshot
        if snapshot.is_bundle:
            return fresh.journal_on != old.journal_on or triageviews.demoted(snapshot, fresh) != triageviews.demoted(
                snapshot, old
            )
        return fresh != old

    @property
    def snapshot(self) -> Snapshot:
        return self.vault.snapshot

    def now(self) -> float:
        """Wall-clock seconds for "how long ago" labels."""
        return self.config.wall()

    def query(self, q: Query, snapshot: Snapshot | None = None) -> QueryResult:
        """Run the one core query with the session's as-of clock."""
        return run_query(snapshot or self.vault.snapshot, q, self.clock)

    def stats(self, snapshot: Snapshot | None = None) -> dict[str, Any]:
        """Core counts with the session's as-of clock."""
        return self.vault.stats(snapshot, self.clock)
