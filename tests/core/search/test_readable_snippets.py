"""Search snippets read as the note reads in Obsidian's reading view: link and image syntax
reduced to their text, emphasis marks dropped, and one well-formed `**` mark per run of
matched words (never nested inside the note's own `**`, never doubled)."""

from __future__ import annotations

import pytest

from vaultwatch.core.markdown.readable import readable
from vaultwatch.core.vault import Vault

HEAVY = """# Linking notes

**Linking** to a **heading** in another note works with `#`: see [[Internal links#Link to a heading|headings]].
Download it: ![GitHub all releases](https://img.shields.io/github/downloads/x/y/total) from the [releases page](https://example.org/releases).
An ==important== *zephyrword* sits in ~~old~~ text, and [[Folder/Target note#Part]] too. ^b15695
"""


@pytest.mark.parametrize(
    "source, shown",
    [
        ("**Linking** to a **heading**", "Linking to a heading"),
        ("![GitHub all releases](https://img.shields.io/x)", "GitHub all releases"),
        ("![GitHub all releases](http", "GitHub all releases"),  # an excerpt cut inside the link
        ("see [[Note#Head|the alias]] and [[Other#Sec]]", "see the alias and Other › Sec"),
        ("![[diagram.png]] and [[#Local]]", "diagram.png and Local"),
        ("a ==mark== *it* ~~gone~~ `code`", "a mark it gone code"),
        ("knowledge. ^b15695", "knowledge."),
        ("# Title", "Title"),
        ("- [ ] a task", "a task"),
        ("> [!tip] My title", "My title"),
        ("> [!note]", "Note"),
        ("[text](notes/a%20b.md) <br> end", "text  end"),
    ],
)
def test_readable_is_the_text_a_reader_sees(source, shown):
    assert readable(source).text == shown


@pytest.fixture
def heavy(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    (root / "Linking.md").write_text(HEAVY)
    v = Vault(root, cache=False)
    v.load()
    v.start_search()
    try:
        assert v.wait_search_ready(60)
        yield v
    finally:
        v.stop()


@pytest.mark.parametrize(
    "query, marked",
    [
        ("linking heading", "**Linking** to a **heading**"),
        ("releases", "GitHub all **releases**"),
        ("zephyrword", "An important **zephyrword** sits in old text"),
    ],
)
def test_search_snippets_are_readable_with_well_formed_marks(heavy, query, marked):
    hit = next(h for h in heavy.search(query).hits if h.path == "Linking.md")
    assert marked in hit.snippet, hit.snippet
    for raw in ("](", "[[", "![", "==", "~~", "****", "^b15695"):
        assert raw not in hit.snippet, (raw, hit.snippet)
    assert hit.snippet.count("**") % 2 == 0
    # the plain copy and its offsets say the same as the marks
    rebuilt, last = [], 0
    for start, end in hit.highlights:
        rebuilt += [hit.snippet_plain[last:start], "**", hit.snippet_plain[start:end], "**"]
        last = end
    assert "".join(rebuilt) + hit.snippet_plain[last:] == hit.snippet


@pytest.mark.parametrize(
    "source, shown",
    [
        ("Download it: ![GitHub all releases…", "Download it: GitHub all releases…"),
        ("see [[Some note|its alias…", "see its alias…"),
        ("…releases page](https://example.org) more", "…releases page more"),
        ("page. An ==important…", "page. An important…"),
        ("…ant** words", "…ant words"),
    ],
)
def test_an_excerpt_cut_inside_markup_still_reads_as_text(source, shown):
    assert readable(source).text == shown


@pytest.mark.parametrize(
    "source, shown",
    [  # Obsidian help, "Embed files": `|100`, `|640x480` and an alt text `250` are a size
        ("a ![[Engelbart.jpg#outline|100]] b", "a Engelbart.jpg b"),
        ("![[Engelbart.jpg|100x145]]", "Engelbart.jpg"),
        ("| x | ![[Engelbart.jpg\\|100]] |", "| x | Engelbart.jpg |"),
        ("![[Figure.png|Figure 2|200]]", "Figure 2"),
        ("![250](https://publish.example/Attachments/Engelbart.jpg)", "Engelbart.jpg"),
        ("![Engelbart|100x145](https://example.org/images/Engelbart.jpg)", "Engelbart"),
        ("![250](Attachments/Engelbart.jpg)", "Attachments/Engelbart.jpg"),
        # not an image, or not a size: the alias as written
        ("![[Some note|100]] [[E.jpg|100]] ![[E.jpg|Douglas]] ![[E.jpg|100]]", "100 100 Douglas E.jpg"),
    ],
)
def test_an_image_size_is_not_its_text(source, shown):
    assert readable(source).text == shown
