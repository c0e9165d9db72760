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
