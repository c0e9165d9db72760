"""The `triage` tool on an OKF bundle, over the real socket with the real `mcp` client: a note a
person attested (`verified:` by `human:`) that an agent rewrote is unverified in the tool's counts,
pages and rows, and its rule says why, until the person marks it reviewed through the call the
TUI's `v` makes. list_documents' `trust_tier` and its filter stay the tier from `verified:` (the
seeds' semantics; triage is the review view). (The same rule in core, and the TUI's Trust tab:
tests/core/review/test_trust_after_agent_change.py, tests/tui/test_triage_rules.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.core.vault import Vault

ATTESTED = "Guides/Setup.md"
FRONT = "---\nverified:\n  - by: human:ana\n    at: 2026-01-05\n---\n"
FILES = {
    ATTESTED: FRONT + "# Setup\n\nRun the installer.\n",
    "Guides/Checked.md": "---\nverified:\n  - by: agent:linter\n---\n# Checked\n",
    "Notes/Plain.md": "# Plain\n",
}


@pytest.fixture(autouse=True)
def _own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal and a settings file of this test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


async def call(client, tool: str, args: dict | None = None) -> dict:
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, result.content[0].text
    return result.structured_content


def tiers(answer: dict) -> tuple[int, int, int]:
    counts = answer["counts"]
    return counts["unverified"], counts["machine_confirmed"], counts["human_reviewed"]


async def test_an_agents_rewrite_of_an_attested_note_is_unverified_in_triage_until_reviewed(
    make_vault, open_vault, sock_dir
) -> None:
    from vaultwatch.tui.flows.actions import Actions  # the call the TUI's `v` makes

    vault: Vault = open_vault(make_vault(FILES, okf=True))
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path, name="bot") as client:
        before = await call(client, "triage")
        written = await client.call_tool(
            "write", {"path": ATTESTED, "content": FRONT + "# Setup\n\nRun it twice.\n", "overwrite": True}
        )
        assert not written.is_error, written.content[0].text
        after = await call(client, "triage")
        unverified = await call(client, "triage", {"category": "unverified"})
        human = await call(client, "triage", {"category": "human-reviewed"})
        seeds = await call(client, "list_documents", {"filters": {"trust_tier": "human-reviewed"}})
        outcome = Actions(vault, user="tester").mark_reviewed([vault.entry(ATTESTED)], write=True)
        assert [path for path, _ in outcome.done] == [ATTESTED] and not outcome.errors
        reviewed = await call(client, "triage")
        human_again = await call(client, "triage", {"category": "human-reviewed"})
    assert before["okf_bundle"] is True and tiers(before) == (1, 1, 1)
    assert tiers(after) == (2, 1, 0)
    rows = {r["path"]: r["trust_tier"] for r in unverified["result"]}
    assert unverified["total"] == 2 and rows[ATTESTED] == "unverified"  # the row says the view's tier
    assert human["result"] == [] and human["total"] == 0
    assert "human-reviewed, then changed by an agent nobody has reviewed since" in after["rules"]["unverified"]
    assert "waits for review" in after["rules"]["human_reviewed"]
    assert after["rules"]["deprecated"] == "Rule (OKF bundle): status: deprecated"
    # list_documents answers by verified: alone, as its seeds say
    assert [(r["path"], r["trust_tier"]) for r in seeds["result"]] == [(ATTESTED, "human-reviewed")]
    assert tiers(reviewed) == (1, 1, 1)
    assert [(r["path"], r["trust_tier"]) for r in human_again["result"]] == [(ATTESTED, "human-reviewed")]
    assert "by: human:tester" in Path(vault.root, ATTESTED).read_text()  # `v` wrote the person's entry
