"""An outside edit that an agent may be polling search for is indexed with quick hand-offs
(core.handoffs) from the moment it is queued, not only once the full-text writer has woken up and
taken it; an agent's own write begins no quick block when queued (its next call runs right then)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.waiting import wait_until
from vaultwatch.core import handoffs
from vaultwatch.core.vault import Vault


def test_an_outside_edit_holds_quick_handoffs_from_queued_to_indexed(make_vault, clock) -> None:
    root = make_vault({"a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n"})
    vault = Vault(root, clock=clock, cache=False)
    vault.load()
    try:
        assert vault.wait_search_ready(20)
        search = vault.start_search()
        wait_until(lambda: handoffs.quick_holds() == 0, what="no quick block left from the build")
        # the writer is kept inside its transaction for the agent's write below (another connection
        # holds the write lock), so what it has not drained yet stays queued
        blocker = sqlite3.connect(search.db_path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            Path(root, "a.md").write_text("# A\n\nby the agent\n")
            vault.refresh_paths(["a.md"], source="agent:test")
            wait_until(lambda: search.pending == 1 and handoffs.quick_holds() == 1, what="the writer on a.md")
            Path(root, "b.md").write_text("# B\n\nbravoword from outside\n")
            vault.refresh_paths(["b.md"], source="disk")  # what the watcher's applier does
            assert handoffs.quick_holds() == 2  # queued: the quick block begins now
            Path(root, "c.md").write_text("# C\n\nby the agent again\n")
            vault.refresh_paths(["c.md"], source="agent:test")
            assert handoffs.quick_holds() == 2  # the agent's own write: none at queue time
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        wait_until(lambda: search.pending == 0, what="everything indexed")
        wait_until(lambda: handoffs.quick_holds() == 0, what="the quick blocks ended once indexed")
        assert [h.path for h in vault.search("bravoword").hits] == ["b.md"]
    finally:
        vault.stop()
    assert handoffs.quick_holds() == 0
