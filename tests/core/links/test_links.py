"""The link graph: outgoing links, backlinks, broken links and orphans, resolved like Obsidian."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultwatch.core.errors import NotFoundError, PathError
from vaultwatch.core.links.graph import LinkGraph, graph
from vaultwatch.core.vault import Vault


@pytest.fixture(autouse=True)
def xdg_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return tmp_path / "xdg-cache"


def targets(report) -> list[tuple[str, str | None]]:
    return [(r.link.target, r.target) for r in report.outgoing]


# --- the demo vault ----------------------------------------------------------------------------------


def test_demo_broken_links(demo):
    broken = {(r.source, r.link.target) for r in demo.broken_links()}
    assert ("Projects/Archive/Retired/Q3 2024 Roadmap.md", "Quarterly OKRs 2027") in broken
    assert ("Projects/Atlas Migration.md", "Vendor Contracts") in broken
    assert all(r.target is None for r in demo.broken_links())


def test_demo_orphans(demo):
    assert demo.orphans() == ("Inbox/MCP server ideas.md", "Resources/Tools/tmux Cheatsheet.md")


def test_demo_links_of_one_note(demo):
    rep = demo.links("Projects/Atlas Migration.md")
    assert ("Vendor Contracts", None) in targets(rep)
    assert ("Deploy Runbook", "Areas/Engineering/Deploy Runbook.md") in targets(rep)
    embed = [r for r in rep.outgoing if r.link.kind == "embed"]
    assert embed and embed[0].target == "Resources/attachments/architecture-diagram.png"
    assert [r.link.target for r in rep.broken] == ["Vendor Contracts"]
    sources = {r.source for r in rep.backlinks}
    assert "index.md" in sources and "Projects/Atlas Migration.md" not in sources
    assert all(r.target == "Projects/Atlas Migration.md" for r in rep.backlinks)
    assert rep.generation == demo.snapshot.generation
    js = rep.as_json()
    assert js["path"] == "Projects/Atlas Migration.md" and js["broken"][0]["resolved"] is None


def test_links_path_is_validated(demo):
    with pytest.raises(PathError, match="path traversal blocked"):
        demo.links("../etc/passwd")
    with pytest.raises(PathError, match="hidden path blocked"):
        demo.links(".obsidian/app.json")
    with pytest.raises(NotFoundError):
        demo.links("No Such Note.md")


def test_backlinks_of_an_attachment(demo):
    rep = demo.links("Resources/attachments/architecture-diagram.png")
    assert rep.outgoing == ()
    assert "Projects/Atlas Migration.md" in {r.source for r in rep.backlinks}


# --- resolution rules on a small vault ------------------------------------------------------------

RULES = {
    "Home.md": (
        "[[Plan]] [[plan]] [[Deep/Plan]] [[Team/Plan.md]] [[Note With Heading#Part two|alias]] "
        "[[#Local heading]] ![[pic.png]] [[missing]] [md](Team/Plan.md) [up](../Home.md) [enc](Team/My%20Note.md) "
        "[ext](https://example.com/x.md)\n# Local heading\n"
    ),
    "Plan.md": "# root plan\n",
    "Team/Plan.md": "# team plan\nback to [[Home]] and [[My Note]]\n",
    "Team/Deep/Plan.md": "# deep plan\n",
    "Team/My Note.md": "# my note\n",
    "Other/Note With Heading.md": "# Part two\n",
    "Other/My Note.md": "# the other my note\n",
    "Other/x.md": "[[My Note]]\n",
    "Media/pic.png": b"png",
    "Lonely.md": "# nobody links here\n",
}


@pytest.fixture
def rules_vault(make_vault, clock) -> Vault:
    v = Vault(make_vault(RULES), clock=clock)
    v.load()
    return v


def test_obsidian_resolution_rules(rules_vault):
    got = targets(rules_vault.links("Home.md"))
    assert got == [
        ("Plan", "Plan.md"),  # shortest path wins among same-named notes
        ("plan", "Plan.md"),  # case-insensitive
        ("Deep/Plan", "Team/Deep/Plan.md"),  # a partial path matches a path suffix
        ("Team/Plan.md", "Team/Plan.md"),  # exact path with .md
        ("Note With Heading", "Other/Note With Heading.md"),
        ("", "Home.md"),  # [[#Local heading]] points into the note itself
        ("pic.png", "Media/pic.png"),  # embed of an attachment
        ("missing", None),
        ("Team/Plan.md", "Team/Plan.md"),  # markdown link relative to the note
        ("../Home.md", None),  # outside the vault
        ("Team/My Note.md", "Team/My Note.md"),  # URL-decoded
    ]
    assert "Home.md" not in {r.source for r in rules_vault.links("Home.md").backlinks}  # no self-backlink
    links = rules_vault.links("Home.md").outgoing
    assert links[4].link.heading == "Part two" and links[4].link.alias == "alias"


def test_same_folder_preferred_then_backlinks(rules_vault):
    team = rules_vault.links("Team/Plan.md")
    assert targets(team) == [("Home", "Home.md"), ("My Note", "Team/My Note.md")]
    assert targets(rules_vault.links("Other/x.md")) == [("My Note", "Other/My Note.md")]  # own folder first
    assert [r.source for r in rules_vault.links("Plan.md").backlinks] == ["Home.md", "Home.md"]
    assert {r.source for r in rules_vault.links("Team/Plan.md").backlinks} == {"Home.md"}


def test_orphans_and_broken(rules_vault):
    assert rules_vault.orphans() == ("Lonely.md", "Other/x.md")
    assert [(r.source, r.link.target) for r in rules_vault.broken_links()] == [
        ("Home.md", "missing"),
        ("Home.md", "../Home.md"),
    ]


def test_graph_follows_index_changes(rules_vault):
    root = Path(rules_vault.root)
    assert rules_vault.links("Home.md").broken
    (root / "missing.md").write_text("# now it exists\n")
    rules_vault.refresh_paths(["missing.md"])
    assert [r.link.target for r in rules_vault.links("Home.md").broken] == ["../Home.md"]
    assert [r.source for r in rules_vault.links("missing.md").backlinks] == ["Home.md"]
    (root / "Lonely.md").write_text("# Lonely\nnow links [[Plan]]\n")  # content-only change: graph reused
    rules_vault.refresh_paths(["Lonely.md"])
    assert "Lonely.md" in {r.source for r in rules_vault.links("Plan.md").backlinks}
    fresh = LinkGraph(rules_vault.snapshot)
    cached = graph(rules_vault.snapshot)
    assert cached.outgoing == fresh.outgoing and cached.incoming == fresh.incoming
    assert cached.broken == fresh.broken


def test_graph_is_built_once_per_snapshot(rules_vault):
    snap = rules_vault.snapshot
    assert graph(snap) is graph(snap)
    rules_vault.links("Home.md")
    assert rules_vault._graph() is graph(snap)


def test_cli_links(demo_vault, capsys):
    import json

    from vaultwatch.tui.commands.cli import main

    assert main(["links", str(demo_vault), "Projects/Atlas Migration.md", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["broken"][0]["target"] == "Vendor Contracts"
    assert "index.md" in {r["source"] for r in data["backlinks"]}
    assert main(["links", str(demo_vault), "Projects/Atlas Migration.md"]) == 0
    out = capsys.readouterr().out
    assert "Vendor Contracts  ->  not yet written" in out and "index.md  (x2)" in out
    assert main(["links", str(demo_vault), "../etc/passwd"]) == 2
    assert "path traversal blocked" in capsys.readouterr().err
