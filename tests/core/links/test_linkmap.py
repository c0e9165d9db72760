"""Obsidian-style link resolution and backlinks (core.links.resolve) and folder counts (core.query.folders)."""

from __future__ import annotations

from vaultwatch.core.links.resolve import backlinks, outgoing, resolve
from vaultwatch.core.model import Link
from vaultwatch.core.query.folders import folder_tree


def test_demo_index_links_resolve(demo) -> None:
    snap = demo.snapshot
    got = {link.target: target for link, target in outgoing(snap, "index.md")}
    assert got["Getting Started"] == "Getting Started.md"
    assert got["Legacy Deploy Script"] == "Projects/Archive/Legacy Deploy Script.md"
    assert got["Projects/Archive/Billing Rewrite 2024"] == "Projects/Archive/Billing Rewrite 2024.md"
    assert got["Projects/Atlas Migration.md"] == "Projects/Atlas Migration.md"  # a Markdown link
    assert None not in got.values()


def test_resolution_rules(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "A/Note.md": "x",
            "B/Note.md": "x",
            "B/deep/Note.md": "x",
            "B/Other.md": "x",
            "img/Pic.PNG": b"\x89PNG",
            "Top.md": "x",
        }
    )
    snap = open_vault(root).snapshot
    wiki = lambda target, heading=None: Link(target, "wiki", heading)  # noqa: E731
    assert resolve(snap, "B/Other.md", wiki("Note")) == "B/Note.md"  # the linking note's folder first
    assert resolve(snap, "Top.md", wiki("Note")) == "A/Note.md"  # else the shortest path
    assert resolve(snap, "Top.md", wiki("deep/note")) == "B/deep/Note.md"  # a path suffix, any case
    assert resolve(snap, "Top.md", wiki("top.MD")) == "Top.md"
    assert resolve(snap, "Top.md", Link("pic.png", "embed")) == "img/Pic.PNG"
    assert resolve(snap, "Top.md", wiki("", "Heading")) == "Top.md"
    assert resolve(snap, "Top.md", wiki("Missing")) is None
    assert resolve(snap, "B/deep/Note.md", Link("../Other.md", "markdown")) == "B/Other.md"
    assert resolve(snap, "B/deep/Note.md", Link("/Top.md", "markdown")) == "Top.md"
    assert resolve(snap, "Top.md", Link("../../etc/passwd", "markdown")) is None


def test_backlinks(demo) -> None:
    got = backlinks(demo.snapshot, "Areas/Engineering/Deploy Runbook.md")
    assert "index.md" in got and "Projects/Archive/Legacy Deploy Script.md" in got
    assert list(got) == sorted(got) and len(got) == len(set(got))
    assert "Areas/Engineering/Deploy Runbook.md" not in got
    assert backlinks(demo.snapshot, "nowhere.md") == ()


def test_folder_tree_counts_notes_recursively(demo) -> None:
    tree = folder_tree(demo.snapshot)
    assert tree.note_count("") == demo.stats()["notes"]
    assert tree.note_count("Projects") == 7 and tree.note_count("ProjectsOld") == 2
    assert "Projects/Archive" in tree.child_folders("Projects")
    assert sum(tree.note_count(f) for f in tree.child_folders("")) + sum(
        1 for e in demo.snapshot.entries if e.kind == "note" and "/" not in e.path
    ) == tree.note_count("")
    assert folder_tree(demo.snapshot) is tree  # memoized per snapshot


def test_backlinks_agree_with_resolving_every_link(demo) -> None:
    snap = demo.snapshot
    expected: dict[str, set[str]] = {}
    for e in snap.entries:
        for _link, target in outgoing(snap, e.path):
            if target is not None and target != e.path:
                expected.setdefault(target, set()).add(e.path)
    for e in snap.entries:
        if e.kind != "folder":
            assert set(backlinks(snap, e.path)) == expected.get(e.path, set()), e.path


def test_exact_paths_resolve_through_the_name_table(make_vault, open_vault) -> None:
    # exact (casefolded) paths win over a same-folder name match, and of two files that
    # differ only in case the later in path order is the one an exact path names
    root = make_vault({"Docs/Plan.md": "x", "X/Docs/Plan.md": "x", "Case/Note.md": "x", "Case/note.md": "x"})
    snap = open_vault(root).snapshot
    assert resolve(snap, "X/Docs/Other.md", Link("Docs/Plan", "wiki")) == "Docs/Plan.md"
    assert resolve(snap, "X/Docs/Other.md", Link("docs/plan.MD", "wiki")) == "Docs/Plan.md"
    assert resolve(snap, "Top.md", Link("CASE/NOTE.md", "wiki")) == "Case/note.md"
    assert resolve(snap, "Case/x.md", Link("Note.md", "markdown")) == "Case/note.md"
    assert resolve(snap, "Top.md", Link("Docs/Missing", "wiki")) is None
