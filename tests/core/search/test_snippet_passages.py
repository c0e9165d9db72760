"""A search snippet is a passage of the note's readable text, as Obsidian's own search shows one: the
query's words where the reader sees them, never a link's address, an HTML tag or a row of badges.
Link addresses and tag attributes stay searchable (people search for a URL or a domain); a note
found only there, or only by its name, shows its first readable lines. The notes copy what
obsidian-hub's notes hold: badges above the title, a Markdown link around an HTML button, an
iframe, a footer of links whose addresses hold the note's own path."""

from __future__ import annotations

import pytest

from vaultwatch.core.search.snippets import SNIPPET_SCAN_BYTES
from vaultwatch.core.vault import Vault

PLUGIN = """---
aliases:
- Lighthouse
---

%% ----- Badges ----- %%

![GitHub all releases](https://img.shields.io/github/downloads/keeper/obsidian-lighthouse/total?style=for-the-badge)
[![GitHub stars](https://img.shields.io/github/stars/keeper/obsidian-lighthouse?style=for-the-badge)](https://github.com/keeper/obsidian-lighthouse)

# Lighthouse

Links: [GitHub repository](https://github.com/keeper/obsidian-lighthouse) or [<button id=HH>Open in Obsidian</button>](obsidian://show-plugin?id=lighthouse)
Developed by: [[keeper]]

Guides ships through fog with a lamp on every headland.

# This note in GitHub

<span class="git-footer">[Edit In GitHub](https://github.dev/hub/blob/main/Plugins/lighthouse.md "git-hub-edit-note") | [Copy this note](https://raw.githubusercontent.com/hub/main/Plugins/lighthouse.md)</span>
"""

VIDEO = """# Walkthrough of the keeper

A video about the [[lighthouse|Lighthouse]] plugin.

<iframe width="100%" height="400px" src="https://www.youtube.com/embed/abc123" title="Keeper walkthrough player" allowfullscreen></iframe>
"""

SIGNALS = """See [the manual](https://example.org/beacon-manual) and <a href="https://example.org/beacon">the site</a> first.

Much later the text itself says the beacon glows at night.
"""

HARBOUR = """![banner](https://example.org/banner.png) ![[port.jpg|300]]

Keeps the ships in order.
"""

LONG = "# Notes\n\n" + " ".join(f"word{i}" for i in range(400)) + " the needle sits here " + "tail " * 300

# a long line (a passage is read from a piece of it) whose piece would start inside a wiki link
WIKI_CUT = (
    "word " * 60
    + "When you [[Sync limits#Create a new remote vault|create a remote vault]] and connect to it, "
    + "the osprey core plugin manages it.\n"
)

AUTOLINK = "Field notes: <https://example.org/kestrel> and nothing else.\n"

BIG = (
    "See [the guide](https://example.org/albatross) first.\n\n"
    + ("filler words for a big note\n" * (SNIPPET_SCAN_BYTES // 28 + 100))
    + "\nAt last the albatross flies over the sea.\n"
)


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("passages") / "v"
    notes = {
        "Plugins/lighthouse.md": PLUGIN,
        "Guides/Video.md": VIDEO,
        "Signals.md": SIGNALS,
        "Harbour master.md": HARBOUR,
        "Long.md": LONG,
        "Birds.md": AUTOLINK,
        "Remote.md": WIKI_CUT,
        "Big.md": BIG,
    }
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    v = Vault(root, cache=False)
    v.load()
    v.start_search()
    try:
        assert v.wait_search_ready(120)
        yield v
    finally:
        v.stop()


def hit(v: Vault, query: str, path: str):
    found = {h.path: h for h in v.search(query, limit=50).hits}
    assert path in found, (query, sorted(found))
    return found[path]


def no_markup(snippet: str) -> None:
    for raw in ("http", "](", "![", "[[", "<", ">", "%%", "shields", "style=", "src=", "title="):
        assert raw not in snippet, (raw, snippet)


def test_a_word_in_badges_and_links_shows_where_the_reader_sees_it(vault):
    h = hit(vault, "lighthouse", "Plugins/lighthouse.md")
    assert h.snippet.startswith("**Lighthouse** Links: GitHub repository or Open in Obsidian Developed by: keeper"), (
        h.snippet
    )
    assert "GitHub all releases" not in h.snippet and "GitHub stars" not in h.snippet
    assert "Edit In GitHub" not in h.snippet  # the footer is a section of its own
    no_markup(h.snippet)


def test_several_words_show_the_line_that_holds_them(vault):
    h = hit(vault, "fog headland", "Plugins/lighthouse.md")
    assert h.snippet == "Guides ships through **fog** with a lamp on every **headland**.", h.snippet


def test_a_link_address_still_finds_its_note_which_shows_its_first_readable_lines(vault):
    h = hit(vault, "shields", "Plugins/lighthouse.md")
    assert h.snippet_plain.startswith("Links: GitHub repository or Open in Obsidian Developed by: keeper Guides ships")
    assert h.highlights == ()
    no_markup(h.snippet)


def test_an_html_attribute_still_finds_its_note_and_no_tag_is_shown(vault):
    for query in ("player", "youtube"):
        h = hit(vault, query, "Guides/Video.md")
        assert h.snippet == "A video about the Lighthouse plugin.", (query, h.snippet)


def test_a_match_in_text_wins_over_earlier_ones_in_link_addresses(vault):
    h = hit(vault, "beacon", "Signals.md")
    assert h.snippet == "Much later the text itself says the **beacon** glows at night.", h.snippet


def test_a_note_found_by_its_name_shows_its_text_not_its_images(vault):
    h = hit(vault, "harbour", "Harbour master.md")
    assert h.snippet == "Keeps the ships in order.", h.snippet


def test_a_match_deep_in_a_long_line_shows_a_passage_around_it(vault):
    h = hit(vault, "needle", "Long.md")
    assert h.snippet.startswith("…word"), h.snippet
    assert "the **needle** sits here" in h.snippet
    assert len(h.snippet_plain) <= 200  # a passage, not the line


def test_an_autolink_shows_its_address_which_is_its_text(vault):
    h = hit(vault, "kestrel", "Birds.md")
    assert h.snippet == "Field notes: https://example.org/**kestrel** and nothing else.", h.snippet


def test_a_note_too_big_for_fts5_snippets_shows_the_readable_match(vault):
    h = hit(vault, "albatross", "Big.md")
    assert h.snippet == "At last the **albatross** flies over the sea.", h.snippet


def test_a_row_of_badges_shows_only_when_nothing_else_matched(vault):
    h = hit(vault, "stars", "Plugins/lighthouse.md")
    assert h.snippet == "GitHub **stars**", h.snippet


def test_a_passage_cut_from_a_long_line_starts_outside_a_link(vault):
    h = hit(vault, "osprey", "Remote.md")
    assert h.snippet.startswith("…"), h.snippet
    assert "create a remote vault and connect to it, the **osprey** core plugin manages it." in h.snippet
    assert "Sync limits" not in h.snippet and "|" not in h.snippet
    no_markup(h.snippet)
