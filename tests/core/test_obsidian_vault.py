"""A vault written in Obsidian's syntax (tests/core/obsidian_vault, after the examples of the
help pages Internal links, Embed files, Link to blocks, Aliases, Tags, Properties, Basic and
Advanced formatting syntax, Callouts and Comments): its link graph, tags and titles as
Obsidian shows them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vaultwatch.core.links.graph import graph, unresolved_by_note
from vaultwatch.core.query.listing import Query, pairs

FIXTURE = Path(__file__).parent / "obsidian_vault"

LAWS = "Three laws of motion.md"
ADA = "People/Ada Lovelace.md"
INTERNAL = "Help/Linking/Internal links.md"
EMBED = "Help/Linking/Embed files.md"
BASIC = "Help/Formatting/Basic formatting syntax.md"

# every note's outgoing links: (kind, target as written, heading, resolved path or None)
GRAPH = {
    INTERNAL: [
        ("wiki", "Three laws of motion", None, LAWS),
        ("wiki", "Three laws of motion.md", None, LAWS),
        ("markdown", "Three laws of motion.md", None, LAWS),  # %20 decoded
        ("markdown", "../../Three laws of motion.md", None, LAWS),  # <angle brackets>, relative
        ("wiki", "Three laws of motion", "Second law", LAWS),
        ("wiki", "My note", "Heading 1#Heading 2", "My note.md"),
        ("wiki", "", "Preview a linked file", INTERNAL),  # [[#Heading]]: this note
        ("wiki", "2023-01-01", "^quote-of-the-day", "2023-01-01.md"),
        ("wiki", "", "^local-block", INTERNAL),
        ("wiki", "Three laws of motion", None, LAWS),
        ("wiki", "Three laws of motion", "Second law", LAWS),
        ("wiki", "Three laws of motion", None, LAWS),  # [[...\|Laws]] in a table
        ("wiki", "Release v1.2", None, "Release v1.2.md"),  # a dotted name, escaped pipe
    ],
    EMBED: [
        ("embed", "Three laws of motion", None, LAWS),
        ("embed", "Three laws of motion", "Second law", LAWS),
        ("embed", "2023-01-01", "^quote-of-the-day", "2023-01-01.md"),
        ("embed", "Engelbart.jpg", None, "Attachments/Engelbart.jpg"),
        ("embed", "Attachments/Engelbart.jpg", None, "Attachments/Engelbart.jpg"),
        ("embed", "Document.pdf", "page=3", "Document.pdf"),
        ("embed", "Books.base", None, "Books.base"),  # Accepted file formats: Bases
        ("embed", "Board.canvas", None, "Board.canvas"),
        ("embed", "Recording.webm", None, "Recording.webm"),
        ("embed", "Cover.avif", None, "Cover.avif"),
        ("embed", "Missing picture.png", None, None),
    ],
    BASIC: [  # code (spans, fences, a fence in a fence, indented, in a list) and comments hide links
        ("wiki", "Three laws of motion", None, LAWS),
        ("markdown", "../../Three laws of motion.md", None, LAWS),  # a reference definition
    ],
    "Help/Formatting/Callouts.md": [
        ("wiki", "My note", None, "My note.md"),
        ("wiki", "2023-01-01", None, "2023-01-01.md"),
    ],
    "Release v1.2.md": [("wiki", "hub.yaml proposal for themes", None, "hub.yaml proposal for themes.md")],
    "hub.yaml proposal for themes.md": [  # Properties: quoted "[[...]]" values are links
        ("wiki", "Release v1.2", None, "Release v1.2.md"),
        ("wiki", "Ada Lovelace", None, ADA),
    ],
    "Projects/Plan.md": [
        ("wiki", "Plan", None, "Projects/Plan.md"),
        ("wiki", "../People/Ada Lovelace", None, ADA),  # a relative wiki path
        ("markdown", "../People/Ada Lovelace.md", None, ADA),
    ],
    # Aliases: autocomplete writes [[Note|Alias]]; a bare [[Alias]] resolves to nothing
    "Projects/Untitled.md": [("wiki", "Countess of Lovelace", None, None)],
}

TAGS = {
    LAWS: ("physics", "physics/classical", "🚀launch"),
    INTERNAL: ("help/linking",),
    BASIC: ("listtag", "real-tag"),
    "Help/Formatting/Callouts.md": ("callout-tag",),
    "Projects/Plan.md": ("inbox/to-read",),
    "Projects/Untitled.md": ("inbox",),  # the singular `tag:` key is no tag (Obsidian 1.9)
}

TITLES = {
    LAWS: "Newton's laws",  # the frontmatter title
    ADA: "Ada Lovelace",  # the file name: neither "Ada" (first H1) nor "Clippings" (a later one)
    "My note.md": "My note",
    INTERNAL: "Internal links",
    "2023-01-01.md": "2023-01-01",
}


@pytest.fixture
def vault(tmp_path, open_vault):
    root = tmp_path / "obsidian"
    shutil.copytree(FIXTURE, root)
    return open_vault(root)


def test_link_graph(vault) -> None:
    g = graph(vault.snapshot)
    got = {
        path: [(r.link.kind, r.link.target, r.link.heading, r.target) for r in links]
        for path, links in g.outgoing.items()
    }
    assert got == GRAPH


def test_backlinks_and_unresolved_links(vault) -> None:
    g = graph(vault.snapshot)
    assert sorted({r.source for r in g.report(ADA).backlinks}) == [
        "Projects/Plan.md",
        "hub.yaml proposal for themes.md",
    ]
    assert sorted({r.source for r in g.report("Books.base").backlinks}) == [EMBED]
    assert {p: [r.link.target for r in links] for p, links in unresolved_by_note(vault.snapshot).items()} == {
        EMBED: ["Missing picture.png"],
        "Projects/Untitled.md": ["Countess of Lovelace"],
    }


def test_tags(vault) -> None:
    got = {e.path: e.tags for e in vault.snapshot.entries if e.kind == "note" and e.tags}
    assert got == TAGS
    # Tags: searching a tag finds its nested tags too
    assert [e.path for e in vault.list(Query(filters=pairs({"tags": "inbox"}))).entries] == [
        "Projects/Plan.md",
        "Projects/Untitled.md",
    ]
    assert [e.path for e in vault.list(Query(filters=pairs({"tags": "physics"}))).entries] == [LAWS]


def test_titles(vault) -> None:
    for path, title in TITLES.items():
        assert vault.entry(path).title == title, path


def test_every_accepted_file_format_is_indexed(vault) -> None:
    kinds = {e.path: e.kind for e in vault.snapshot.entries}
    for path in (
        "Books.base",
        "Board.canvas",
        "Cover.avif",
        "Recording.webm",
        "Document.pdf",
        "Attachments/Engelbart.jpg",
    ):
        assert kinds.get(path) == "attachment", path


def test_every_heading_and_block_link_finds_its_anchor(vault) -> None:
    """The help's heading, nested-heading, block and same-note links (Internal links, Embed
    files, Link to blocks) all name a heading or block id their note has; a PDF's #page=3 is
    not checked."""
    g = graph(vault.snapshot)
    checked = {(r.source, r.link.target, r.link.heading) for r in g.anchored}
    assert ("Help/Linking/Internal links.md", "2023-01-01", "^quote-of-the-day") in checked
    assert ("Help/Linking/Internal links.md", "My note", "Heading 1#Heading 2") in checked
    assert ("Help/Linking/Internal links.md", "", "^local-block") in checked
    assert len(checked) >= 8
    assert g.anchor_sources() == set()
