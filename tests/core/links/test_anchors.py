"""Links to headings and blocks (Obsidian's help, "Internal links": "Link to a heading in a
note" `[[Note#Heading]]`, nested `[[Note#Heading#Subheading]]`, "Link to a block" `[[Note#^id]]`,
block ids of Latin letters, numbers and dashes). A link whose note exists but lacks the
heading or block it names is unresolved (`missing` "heading" / "block"), the backlink stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultwatch.core.links.graph import LinkGraph, anchor_key, graph, unresolved_by_note
from vaultwatch.core.markdown.parse import parse_note
from vaultwatch.core.vault import Vault


@pytest.fixture(autouse=True)
def xdg_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return tmp_path / "xdg-cache"


TARGET = """# Top
### `hasTag()`
Intro paragraph. ^intro-1

## Q: What? [draft]
Setext heading
--------------
> quoted block ^q-block

```
# Not a heading
code ^not-a-block
```
%% ## Hidden heading %%
- item ^item
![[image.png]]^after-embed
"""

CASES = [
    # (rule, link as written in Source.md, missing)
    ("heading exists", "[[Target#Top]]", None),
    ("heading case-insensitive", "[[Target#top]]", None),
    ("heading does not exist", "[[Target#Bottom]]", "heading"),
    ("nested heading path names its last part", "[[Target#Top#Setext heading]]", None),
    ("nested path to a missing heading", "[[Target#Top#Nope]]", "heading"),
    ("setext heading is a heading", "[[Target#Setext heading]]", None),
    ("characters a link cannot hold read as spaces", "[[Target#Q What? draft]]", None),
    ("written with some of them too", "[[Target#q: what? draft]]", None),
    # Obsidian's help vault: "#How large can each remote vault be" for "... be?", "#hasTag" for "`hasTag()`"
    ("punctuation left out", "[[Target#Q What draft]]", None),
    ("code and parentheses in a heading", "[[Target#hasTag]]", None),
    ("a # line in a fence is no heading", "[[Target#Not a heading]]", "heading"),
    ("a heading in a comment is no heading", "[[Target#Hidden heading]]", "heading"),
    ("block id after a paragraph", "[[Target#^intro-1]]", None),
    ("block id in a quote and a list", "[[Target#^q-block]] [[Target#^item]]", None),
    ("block id that does not exist", "[[Target#^nope]]", "block"),
    ("block id in code is none", "[[Target#^not-a-block]]", "block"),
    # Obsidian's help vault writes `![[version-history-collaboration.png]]^version-history-image`
    ("block id right after an embed", "[[Target#^after-embed]]", None),
    ("embed of a heading", "![[Target#Top]]", None),
    ("embed of a missing block", "![[Target#^gone]]", "block"),
    ("escaped pipe in a table", "| [[Target#Bottom\\|b]] |", "heading"),
    ("Markdown link, heading percent-encoded", "[t](Target.md#Setext%20heading)", None),
    ("Markdown link, GitHub-style slug", "[t](Target.md#setext-heading)", None),
    ("Markdown link, missing heading", "[t](Target.md#nowhere)", "heading"),
    ("same-note heading", "[[#Own]]", None),
    ("same-note missing heading", "[[#Other]]", "heading"),
    ("a PDF page is not a heading", "![[doc.pdf#page=3]]", None),
    ("no such file stays 'file'", "[[Nowhere#Top]]", "file"),
]


@pytest.fixture
def make(make_vault, clock):
    opened: list[Vault] = []

    def open_(link: str) -> Vault:
        v = Vault(
            make_vault({"Target.md": TARGET, "Source.md": f"# Own\n{link}\n", "doc.pdf": "%PDF-1.4\n"}), clock=clock
        )
        v.load()
        opened.append(v)
        return v

    yield open_
    for v in opened:
        v.stop()


@pytest.mark.parametrize(("rule", "link", "missing"), CASES, ids=[c[0] for c in CASES])
def test_heading_and_block_links(make, rule: str, link: str, missing: str | None) -> None:
    v = make(link)
    rows = unresolved_by_note(v.snapshot).get("Source.md", ())
    assert [r.missing for r in rows] == ([missing] if missing else [])
    report = v.links("Source.md")
    assert [r.missing for r in report.broken] == ([missing] if missing else [])
    if missing in ("heading", "block") and "#" in link and "Target" in link:
        # the note exists: the backlink stays, as in Obsidian
        assert "Source.md" in {r.source for r in v.links("Target.md").backlinks}


def test_anchors_of_a_note() -> None:
    facts = parse_note(TARGET.encode(), "Target")
    assert facts.anchors.split("\n") == [
        "Top",
        "`hasTag()`",
        "Q: What? [draft]",
        "Setext heading",
        "^intro-1",
        "^q-block",
        "^item",
        "^after-embed",
    ]
    assert parse_note(b"plain text\n", "x").anchors == ""


def test_anchor_key_is_obsidians_reading() -> None:
    assert anchor_key("Q: What? [draft]") == anchor_key("q what draft") == "q what draft"
    assert anchor_key("a/b\\c|d^e%f_g") == "a b c d e f g"
    assert anchor_key("`hasTag()`") == "hastag"
    assert anchor_key("Café — naïve") == "café naïve"


def test_editing_the_linked_note_updates_the_check(make) -> None:
    """The graph is patched for the edited note only; a link from another note to a heading the
    edit removed (or added) is checked against the new text all the same."""
    v = make("[[Target#Top]] [[Target#Later]]")
    assert [r.link.heading for r in unresolved_by_note(v.snapshot)["Source.md"]] == ["Later"]
    root = Path(v.root)
    (root / "Target.md").write_text("# Later\nno Top any more\n")
    v.refresh_paths(["Target.md"])
    assert [r.link.heading for r in unresolved_by_note(v.snapshot)["Source.md"]] == ["Top"]
    fresh = LinkGraph(v.snapshot)
    assert graph(v.snapshot).anchored == fresh.anchored
    (root / "Target.md").write_text("# Later\n# Top\n")
    v.refresh_paths(["Target.md"])
    assert "Source.md" not in unresolved_by_note(v.snapshot)


def test_warm_start_keeps_anchors(make_vault, clock) -> None:
    root = make_vault({"Target.md": TARGET, "Source.md": "[[Target#Bottom]] [[Target#^item]]\n"})
    cold = Vault(root, clock=clock)
    cold.load()
    cold.stop()
    warm = Vault(root, clock=clock)
    stats = warm.load()
    try:
        assert warm.snapshot.get("Target.md").anchors == parse_note(TARGET.encode(), "Target").anchors
        assert [r.missing for r in unresolved_by_note(warm.snapshot)["Source.md"]] == ["heading"]
    finally:
        warm.stop()
    del stats
