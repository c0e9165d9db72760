"""The state the app's widgets share: the vault, the as-of clock and what agents touched."""

from __future__ import annotations

from typing import Any

from vaultwatch.core.clock import Clock
from vaultwatch.core.errors import VaultError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.query.listing import Query, QueryResult, run_query, stats
from vaultwatch.core.query.triagerules import TriageRules
from vaultwatch.core.query.triagerules import load as load_triage_rules
from vaultwatch.core.review.approval import settings_path
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
        self._triage_rules: TriageRules | None = None
        self.triage_rules_problem: str | None = None  # a bad [triage] table: the defaults apply

    @property
    def triage_rules(self) -> TriageRules:
        """The person's triage rules for this vault (settings file, read once; a table that does
        not parse leaves the defaults and says why in `triage_rules_problem`)."""
        if self._triage_rules is None:
            try:
                self._triage_rules = load_triage_rules(settings_path(), self.vault.root_real)
            except VaultError as exc:
                self.triage_rules_problem = exc.message
                self._triage_rules = TriageRules()
        return self._triage_rules

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
        return stats(snapshot or self.vault.snapshot, self.clock)
