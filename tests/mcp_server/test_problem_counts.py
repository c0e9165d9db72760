"""Every count of a vault's problems agrees with the Broken tab's one query (core.query.problems):
`vaultwatch stats`, the MCP triage overview and the core counts the TUI shows leave the templates
folders out, as `links --broken` does. On kepano's template vault every template's `{{date}}`
placeholder is invalid YAML: counting them said "frontmatter errors 28" beside "0 problems"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mcp_testing import serving, uds_client

from tests.template_vault import EXPECTED, make_template_vault
from vaultwatch.core.query import problems
from vaultwatch.core.query.listing import stats

BROKEN_YAML = 1  # outside the templates folders: Inbox/Broken frontmatter.md (tests/template_vault.py)


def test_core_counts_leave_the_templates_folders_out(tmp_path: Path, open_vault) -> None:
    root = make_template_vault(tmp_path / "v")
    (root / "Templates" / "Sub").mkdir()
    (root / "Templates" / "Sub" / "Nested.md").write_text("---\nwhen: {{date}}\n---\n")
    vault = open_vault(root)
    found = problems.counts(problems.vault_problems(vault.snapshot, vault.root))
    assert found["frontmatter"] == BROKEN_YAML == len(EXPECTED["frontmatter"])
    assert vault.stats()["frontmatter_errors"] == BROKEN_YAML
    # a note in nested exempt folders is taken out once; no folder given counts every note (the templates' three)
    assert stats(vault.snapshot, vault.clock, ("Templates", "Templates/Sub"))["frontmatter_errors"] == BROKEN_YAML
    assert stats(vault.snapshot, vault.clock)["frontmatter_errors"] == BROKEN_YAML + 3


def test_cli_stats_agrees_with_links_broken(tmp_path: Path) -> None:
    root = make_template_vault(tmp_path / "v")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)

    out = cli("stats", str(root), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["frontmatter_errors"] == BROKEN_YAML
    broken = cli("links", str(root), "--broken", "--json")
    rows = [json.loads(line) for line in broken.stdout.splitlines()]
    assert sum(1 for r in rows if r["kind"] == "frontmatter") == BROKEN_YAML


async def test_triage_overview_agrees_with_the_broken_tab(tmp_path: Path, open_vault, sock_dir) -> None:
    root = make_template_vault(tmp_path / "vault")
    vault = open_vault(root)
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("triage", {})
        assert not result.is_error, result.content[0].text
        assert result.structured_content["counts"]["broken_frontmatter"] == BROKEN_YAML
        # the templates folder is named by Obsidian's settings: without them its notes count
        (root / ".obsidian" / "templates.json").unlink()
        result = await client.call_tool("triage", {})
        assert result.structured_content["counts"]["broken_frontmatter"] == BROKEN_YAML + 2


# the template vault's problems as the Broken tab counts them: a heading, a block, an embed and
# the bad frontmatter (its three links to notes not written yet are listed, not counted)
TAB_COUNT = 4
UNWRITTEN = len(EXPECTED["unwritten"])


def test_cli_stats_says_the_broken_tabs_number(tmp_path: Path) -> None:
    """`stats` said "frontmatter errors 1" where the Broken tab said 4."""
    root = make_template_vault(tmp_path / "v")
    cmd = [sys.executable, "-m", "vaultwatch.tui.commands.cli", "stats", str(root)]
    out = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    broken = json.loads(out.stdout)["broken"]
    assert broken == {
        "broken": TAB_COUNT,
        "by_kind": {"heading": 1, "block": 1, "embed": 1, "frontmatter": 1},
        "files": 2,
        "unwritten": UNWRITTEN,
    }
    text = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    line = next(line for line in text.splitlines() if line.startswith("broken "))
    assert line.split(None, 1)[1] == (
        "4 problems in 2 files (1 missing heading · 1 missing block · 1 missing embed · 1 bad frontmatter); "
        "3 links to notes not yet written"
    )


async def test_triage_overview_counts_what_the_broken_tab_counts(tmp_path: Path, open_vault, sock_dir) -> None:
    """The overview gave only broken_frontmatter (1) beside the tab's 4: an agent could not learn
    the person's number, nor that the broken_links page lists links to unwritten notes too."""
    root = make_template_vault(tmp_path / "vault")
    vault = open_vault(root)
    assert sum(p.broken for p in problems.vault_problems(vault.snapshot, vault.root)) == TAB_COUNT
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("triage", {})
        assert not result.is_error, result.content[0].text
        counts = result.structured_content["counts"]
        assert counts["broken"] == TAB_COUNT
        assert counts["broken_by_kind"] == {"heading": 1, "block": 1, "embed": 1, "frontmatter": 1}
        assert counts["unwritten_links"] == UNWRITTEN
        # a fixed heading link leaves the tab and the overview alike
        note = root / "Trips" / "Kyoto 2023.md"
        note.write_text(note.read_text().replace("[[Packing List#Shoes]]", "[[Packing List#Clothes]]"))
        vault.refresh_paths(["Trips/Kyoto 2023.md"])
        result = await client.call_tool("triage", {})
        assert result.structured_content["counts"]["broken"] == TAB_COUNT - 1
        assert sum(p.broken for p in problems.vault_problems(vault.snapshot, vault.root)) == TAB_COUNT - 1
