"""The `triage` tool on a vault that is no OKF bundle (tests/triage_vault.py), over the real socket
with the real `mcp` client: deprecated and stale by the person's rules (the defaults, or a
per-vault `[triage]`), each answer saying its rules as the TUI's tabs do, and the trust tiers from
the change journal: what an agent changed waits as unverified until the person marks it reviewed
through the call the TUI's `v` makes. (The overview's counts against the TUI's tab labels, on the
same vault: tests/tui/test_triage_rules.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_testing import serving, uds_client

from tests.triage_vault import DEPRECATED, STALE, make_triage_vault
from vaultwatch.core.vault import Vault

AGENT_NOTE = "Notes/Agent Draft.md"


@pytest.fixture(autouse=True)
def _own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal and a settings file of this test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


async def triage(client, args: dict | None = None) -> dict:
    result = await client.call_tool("triage", args or {})
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def test_deprecated_and_stale_by_the_default_rules(tmp_path: Path, open_vault, sock_dir) -> None:
    vault = open_vault(make_triage_vault(tmp_path / "vault"))
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        overview = await triage(client)
        deprecated = await triage(client, {"category": "deprecated"})
        stale = await triage(client, {"category": "stale"})
        later = await triage(client, {"category": "stale", "as_of": "2027-06-01"})
    assert overview["okf_bundle"] is False
    counts = overview["counts"]
    assert (counts["deprecated"], counts["stale"]) == (len(DEPRECATED), len(STALE))
    assert (counts["unverified"], counts["machine_confirmed"], counts["human_reviewed"]) == (0, 0, 0)
    rules = overview["rules"]
    assert rules["deprecated"].startswith("Rule: status is deprecated / archived / obsolete / superseded or tagged")
    assert rules["deprecated"].endswith("set in the defaults [triage]")
    assert rules["stale"].startswith("Rule: stale_after / review_by / expires reached")
    assert "nobody has reviewed it since" in rules["unverified"]
    assert [r["path"] for r in deprecated["result"]] == DEPRECATED and deprecated["total"] == len(DEPRECATED)
    # most overdue first: expires 2026-06-30, then review_by 2026-11-01 (as of 2026-11-29)
    assert [(r["path"], r["overdue_days"]) for r in stale["result"]] == [
        ("Reference/Vendor Terms.md", 152),
        ("Projects/Roadmap.md", 28),
    ]
    # a later day: Launch's review_by 2027-03-01 is reached too; the template's {{date}} never is
    assert [r["path"] for r in later["result"]] == [
        "Reference/Vendor Terms.md",
        "Projects/Roadmap.md",
        "Projects/Launch.md",
    ]


async def test_a_per_vault_triage_setting_changes_what_is_listed(tmp_path: Path, open_vault, sock_dir) -> None:
    root = make_triage_vault(tmp_path / "vault")
    settings = tmp_path / "config" / "vaultwatch" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        f'[vaults."{root}".triage]\ndeprecated_status = ["archived"]\ndeprecated_tags = []\n'
        'deprecated_flags = []\nstale_keys = ["expires"]\n'
    )
    vault = open_vault(root)
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        overview = await triage(client)
        deprecated = await triage(client, {"category": "deprecated"})
        stale = await triage(client, {"category": "stale"})
    assert (overview["counts"]["deprecated"], overview["counts"]["stale"]) == (1, 1)
    assert [r["path"] for r in deprecated["result"]] == ["Projects/Old Website.md"]
    assert [r["path"] for r in stale["result"]] == ["Reference/Vendor Terms.md"]
    assert deprecated["rules"]["deprecated"] == f"Rule: status is archived · set in {settings} [triage]"
    assert stale["rules"]["stale"] == f"Rule: expires reached · set in {settings} [triage]"


async def test_an_agents_write_is_unverified_until_the_person_reviews_it(tmp_path: Path, open_vault, sock_dir) -> None:
    from vaultwatch.tui.flows.actions import Actions  # the call the TUI's `v` makes

    root = make_triage_vault(tmp_path / "vault")
    vault: Vault = open_vault(root)
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path, name="bot") as client:
        before = await triage(client)
        written = await client.call_tool(
            "write", {"path": AGENT_NOTE, "content": "# Agent Draft\n\nThe agent rewrote this.\n", "overwrite": True}
        )
        assert not written.is_error, written.content[0].text
        after_write = await triage(client)
        unverified = await triage(client, {"category": "unverified"})
        none_reviewed = await triage(client, {"category": "human-reviewed"})
        machine = await triage(client, {"category": "machine-confirmed"})
        note = (root / AGENT_NOTE).read_bytes()
        outcome = Actions(vault, user="tester").mark_reviewed([vault.entry(AGENT_NOTE)], write=False)
        assert [path for path, _ in outcome.done] == [AGENT_NOTE]
        after_review = await triage(client)
        still = await triage(client, {"category": "unverified"})
        reviewed = await triage(client, {"category": "human-reviewed"})
    assert (before["counts"]["unverified"], before["counts"]["human_reviewed"]) == (0, 0)
    assert (after_write["counts"]["unverified"], after_write["counts"]["human_reviewed"]) == (1, 0)
    assert [r["path"] for r in unverified["result"]] == [AGENT_NOTE] and none_reviewed["result"] == []
    assert machine["total"] == 0 and after_write["counts"]["machine_confirmed"] == 0
    assert (after_review["counts"]["unverified"], after_review["counts"]["human_reviewed"]) == (0, 1)
    assert still["result"] == [] and [r["path"] for r in reviewed["result"]] == [AGENT_NOTE]
    assert "the person reviewed" in reviewed["rules"]["human_reviewed"]
    assert (root / AGENT_NOTE).read_bytes() == note  # the review wrote nothing into the note


async def test_triage_rules_written_for_a_vault_this_one_lies_in_are_a_problem_it_names(
    tmp_path: Path, open_vault, sock_dir
) -> None:
    """Served from a folder inside a vault that has triage rules (which the person allowed with
    --allow-nested: without it the server refuses, nestedvault.py), the agent's answer says the
    settings did not apply and why, as the TUI's tabs do, instead of quietly using other rules."""
    outer = tmp_path / "outer"
    root = make_triage_vault(outer / "vault")
    settings = tmp_path / "config" / "vaultwatch" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text(f'[vaults."{outer}".triage]\nstale_keys = ["expires"]\n')
    vault = open_vault(root)
    async with serving(vault, sock_dir / "v.sock", allow_nested=True) as host, uds_client(host.socket_path) as client:
        overview = await triage(client)
    said = overview["rules"]["stale"]
    assert "the settings did not apply" in said and f'[vaults."{outer}".triage]' in said, said
    assert said.startswith("Rule: stale_after / review_by / expires reached"), said  # the defaults
    assert overview["counts"]["stale"] == len(STALE)
