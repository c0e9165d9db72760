"""core.markdown.readable: a search snippet reads backslash escapes, autolinks and inline HTML
as the preview draws them."""

from __future__ import annotations

from vaultwatch.core.markdown.readable import readable


def test_escapes_autolinks_and_html_elements_read_as_their_text() -> None:
    source = "\\- Doug Engelbart \\*no\\* <b>bold</b> <https://ex.com/a> \\q"
    shown = readable(source)
    assert shown.text == "- Doug Engelbart *no* bold https://ex.com/a \\q"
    at = source.index("Engelbart")
    a, z = shown.span(at, at + len("Engelbart"))
    assert shown.text[a:z] == "Engelbart"


def test_a_linked_image_reads_as_its_alt_text() -> None:
    """A badge that links to its page (`[![alt](image)](page)`, as READMEs and obsidian-hub write
    them) shows its alt text, as an image alone does: no bracket, no address of either."""
    source = (
        "[![GitHub stars](https://img.shields.io/github/stars/x/y)](https://github.com/x/y) and [![b](c.png)](d) too"
    )
    shown = readable(source)
    assert shown.text == "GitHub stars and b too"
    at = source.index("stars")
    a, z = shown.span(at, at + len("stars"))
    assert shown.text[a:z] == "stars"
