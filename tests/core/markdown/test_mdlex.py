"""core.markdown.mdlex, the one Markdown reader: each case states the Obsidian (or CommonMark) rule it
follows. Sources: Obsidian's help vault (obsidianmd/obsidian-help, en/): "Internal links",
"Embed files", "Link to blocks", "Tags", "Basic formatting syntax" (code, comments),
"Callouts", "Accepted file formats"; and the CommonMark spec for code and link syntax."""

from __future__ import annotations

import pytest

from vaultwatch.core.markdown import mdlex
from vaultwatch.core.markdown.parse import parse_note
from vaultwatch.core.model import Link


def links(body: str) -> list[tuple[str, str, str | None, str | None]]:
    return [(t.kind, t.target, t.heading, t.alias) for t in mdlex.links(mdlex.masked(body))]


def tags(body: str) -> list[str]:
    return mdlex.tags(mdlex.masked(body))


# --- links ------------------------------------------------------------------------------------


LINK_CASES = [
    # (rule, body, expected links)
    ("wiki link by name", "[[Note]]", [("wiki", "Note", None, None)]),
    ("display text after |", "[[Note|shown]]", [("wiki", "Note", None, "shown")]),
    ("heading and sub-heading", "[[Note#Head#Sub]]", [("wiki", "Note", "Head#Sub", None)]),
    ("block link #^id", "[[Note#^37066d]]", [("wiki", "Note", "^37066d", None)]),
    ("same-note heading", "[[#Heading]]", [("wiki", "", "Heading", None)]),
    ("embed ![[ ]]", "![[image.png|300]]", [("embed", "image.png", None, "300")]),
    ("embed a PDF page", "![[file.pdf#page=3]]", [("embed", "file.pdf", "page=3", None)]),
    # Internal links: "add a backslash before the vertical bar" inside a table (item 1)
    ("escaped pipe in a table", "| a | [[Table view\\|Table]] |", [("wiki", "Table view", None, "Table")]),
    ("escaped pipe after a heading", "| [[Note#Part\\|p]] |", [("wiki", "Note", "Part", "p")]),
    ("dotted name stays whole", "[[Release v1.2]]", [("wiki", "Release v1.2", None, None)]),
    # CommonMark link destinations (item 7)
    ("angle-bracket destination", "[b](<../My Note.md>)", [("markdown", "../My Note.md", None, None)]),
    ("balanced parentheses", "[x](Notes/a(b).md)", [("markdown", "Notes/a(b).md", None, None)]),
    ("percent-decoded, with heading", "[t](My%20Note.md#Sec%20one)", [("markdown", "My Note.md", "Sec one", None)]),
    ("a title is not the path", '[t](Note.md "Title")', [("markdown", "Note.md", None, None)]),
    ("image is an embed", "![alt](img/pic.png)", [("embed", "img/pic.png", None, None)]),
    ("URL with a scheme is no file link", "[w](https://x.org/a.md) [m](mailto:a@b.c)", []),
    ("same-note anchor is no file link", "[a](#local)", []),
    # CommonMark reference links (item 6): the definition carries the destination
    ("reference definition", 'See [text][ref].\n\n[ref]: target.md "T"\n', [("markdown", "target.md", None, None)]),
    ("reference definition, angle", "[r]: <My Note.md>\n", [("markdown", "My Note.md", None, None)]),
    ("reference to a URL", "[r]: https://example.com\n", []),
]


@pytest.mark.parametrize(("rule", "body", "expected"), LINK_CASES, ids=[c[0] for c in LINK_CASES])
def test_links(rule: str, body: str, expected) -> None:
    assert links(body) == expected


# --- code and comments hide links and tags (items 5 and 10) ------------------------------------


HIDDEN_CASES = [
    # (rule, body): each body holds [[no]] and #no only in hidden text, and [[yes]] #yes outside it
    ("fenced code", "```\n[[no]] #no\n```\n[[yes]] #yes"),
    ("tilde fence", "~~~\n[[no]] #no\n~~~\n[[yes]] #yes"),
    ("a longer fence holds a shorter one", "````\n```\n#no\n```\n[[no]]\n````\n[[yes]] #yes"),
    ("a fence closes only with its own character", "```\n~~~\n[[no]] #no\n```\n[[yes]] #yes"),
    ("fence inside a callout", "> [!tip]\n> ```css\n> a { color: #no } [[no]]\n> ```\n> [[yes]] #yes"),
    ("fence inside a blockquote", "> ```\n> [[no]] #no\n> ```\n\n[[yes]] #yes"),
    ("a quote's end ends its fence", "> ```\n> [[no]] #no\n\n[[yes]] #yes"),
    ("fence inside a list item", "- item\n  ```\n  [[no]] #no\n  ```\n- [[yes]] #yes"),
    ("indented code block", "para\n\n    [[no]] #no\n\n[[yes]] #yes"),
    ("tab-indented code block", "\t[[no]] #no\n\n[[yes]] #yes"),
    ("code span", "`[[no]] #no` [[yes]] #yes"),
    ("double-backtick span holding a backtick", "``a ` [[no]] #no`` [[yes]] #yes"),
    ("unclosed fence runs to the end", "[[yes]] #yes\n```\n[[no]] #no"),
    ("inline %% comment", "%%[[no]] #no%% [[yes]] #yes"),
    ("block %% comment", "%%\n[[no]]\n\n#no\n%%\n[[yes]] #yes"),
    ("unclosed %% hides the rest", "[[yes]] #yes %% [[no]] #no"),
    ("HTML comment", "<!-- [[no]] #no --> [[yes]] #yes"),
    ("multi-line HTML comment", "<!--\n[[no]]\n#no\n-->\n[[yes]] #yes"),
    ("%% inside code is code", "`%%` [[yes]] #yes"),
    # help, HTML content: "Obsidian does not render Markdown syntax inside HTML elements" and
    # "Blank lines will break the HTML block" (CommonMark HTML blocks, types 6 and 1); seen in
    # the Obsidian Hub's "Default Obsidian Theme Colors": <td style="color: #dcddde"> made tags
    ("HTML block (a table's rows)", '<table>\n<tr><td style="color: #no">[[no]]</td></tr>\n</table>\n\n[[yes]] #yes'),
    ("HTML block to a blank line", "<div>\n#no [[no]]\n</div>\n\n[[yes]] #yes"),
    (
        "indented HTML line inside the block",
        '<tr><td>a</td>\n    <td style="color: #no">[[no]]</td></tr>\n\n[[yes]] #yes',
    ),
    ("HTML block in a list item", "- <details>\n  #no [[no]]\n\n- [[yes]] #yes"),
    ("a <pre> block runs to its closing tag", "<pre>\n#no\n\n[[no]]\n</pre>\n[[yes]] #yes"),
    ("a <style> block on one line", "<style>p { color: #no }</style>\n[[yes]] #yes"),
]


@pytest.mark.parametrize(("rule", "body"), HIDDEN_CASES, ids=[c[0] for c in HIDDEN_CASES])
def test_code_and_comments_hide_links_and_tags(rule: str, body: str) -> None:
    assert [t for _, t, _, _ in links(body)] == ["yes"]
    assert tags(body) == ["yes"]


NOT_CODE_CASES = [
    ("four spaces continuing a paragraph are no code", "para\n    [[yes]] #yes"),
    ("list continuation is no code", "- item\n\n    [[yes]] #yes"),
    ("an unmatched backtick is literal", "a ` b [[yes]] #yes"),
    ("backtick runs of different lengths do not pair", "``a` [[yes]] #yes"),
    ("a backtick fence's info cannot hold a backtick", "``` a`b\n[[yes]] #yes"),
    ("inline HTML in a paragraph is no HTML block", "red: <br> [[yes]] #yes <br>"),
    ("a tag that is not block-level is no HTML block", "<span>[[yes]] #yes</span>"),
    (
        "Markdown after the HTML block's blank line is read",
        "<details>\n<summary>s</summary>\n\n[[yes]] #yes\n</details>",
    ),
]


@pytest.mark.parametrize(("rule", "body"), NOT_CODE_CASES, ids=[c[0] for c in NOT_CODE_CASES])
def test_what_is_not_code(rule: str, body: str) -> None:
    assert [t for _, t, _, _ in links(body)] == ["yes"]
    assert tags(body) == ["yes"]


# --- tags (item 8) -----------------------------------------------------------------------------


TAG_CASES = [
    ("letters, digits, _ - /", "#kebab-case #snake_case #a/b/c", ["kebab-case", "snake_case", "a/b/c"]),
    ("at least one non-digit", "#1984 #y1984 #2024/01", ["y1984"]),
    ("emoji and other symbols", "#🚀launch #📚", ["🚀launch", "📚"]),
    ("other Unicode letters", "#café #日本語", ["café", "日本語"]),
    ("punctuation ends a tag", "#done, #x.y (#paren) #tag。", ["done", "x", "tag"]),
    ("only after whitespace or a line start", "mid#word url/#frag\n#start", ["start"]),
    ("a heading's # is no tag", "# Heading\n## neither", []),
    ("a trailing / is dropped", "#parent/", ["parent"]),
]


@pytest.mark.parametrize(("rule", "body", "expected"), TAG_CASES, ids=[c[0] for c in TAG_CASES])
def test_tags(rule: str, body: str, expected: list[str]) -> None:
    assert tags(body) == expected


# --- headings and block ids --------------------------------------------------------------------


def test_headings_outside_code_and_comments() -> None:
    body = "# One\n```\n# not\n```\n%%\n## hidden\n%%\n  ## Two ##\n#not a heading\n> # quoted\n"
    assert [(h.level, h.text) for h in mdlex.headings(mdlex.masked(body))] == [(1, "One"), (2, "Two")]


SETEXT_CASES = [
    # CommonMark "Setext headings" (Obsidian renders them and lists them in the outline)
    ("= underline is level 1", "Title\n===\n", [(1, "Title")]),
    ("- underline is level 2", "Title\n---\n", [(2, "Title")]),
    ("the whole paragraph is the heading", "one\ntwo\n---\n", [(2, "one two")]),
    ("indented up to three spaces, trailing spaces", "T\n   ---   \n", [(2, "T")]),
    ("under a blank line --- is a rule", "text\n\n---\n", []),
    ("under a list item --- is a rule (lazy line)", "- item\n---\n", []),
    ("under a quote --- is a rule", "> q\n---\n", []),
    ("under an ATX heading it is a rule", "# H\n---\n", [(1, "H")]),
    ("an underline indented four is code", "T\n    ---\n", []),
    ("a paragraph after an ATX heading", "# H\npara\n===\n", [(1, "H"), (1, "para")]),
    ("in order with ATX headings", "A\n---\n# B\nC\n===\n", [(2, "A"), (1, "B"), (1, "C")]),
    ("not in a fence", "```\nT\n---\n```\n", []),
    ("CRLF", "Title\r\n===\r\n", [(1, "Title")]),
]


@pytest.mark.parametrize(("rule", "body", "expected"), SETEXT_CASES, ids=[c[0] for c in SETEXT_CASES])
def test_setext_headings(rule: str, body: str, expected) -> None:
    assert [(h.level, h.text) for h in mdlex.headings(mdlex.masked(body))] == expected


def test_heading_text_keeps_its_code_span() -> None:
    """A code span in a heading is part of its text (the outline shows "The `x()` call"),
    though nothing inside it is a link or a tag."""
    body = "## The `x()` call\n### `y`\nA `z` one\n---\n"
    got = [(h.level, h.text) for h in mdlex.headings(mdlex.masked(body), 0, body)]
    assert got == [(2, "The `x()` call"), (3, "`y`"), (2, "A `z` one")]
    assert mdlex.heading_texts(mdlex.masked(body), body) == ["The `x()` call", "`y`", "A `z` one"]


def test_setext_heading_span_covers_paragraph_and_underline() -> None:
    body = "intro\n\nmy\ntitle\n---\nafter\n"
    (h,) = mdlex.headings(mdlex.masked(body))
    assert body[h.start : h.end] == "my\ntitle\n---\n"


def test_visible_text_drops_code_and_comments() -> None:
    body = "a `b` c\n```\ncode\n```\nd %%e%% f <!-- g -->\n"
    assert mdlex.visible(body) == "a   c\n\nd   f  \n"


def test_block_ids_end_a_line() -> None:
    body = "A paragraph. ^p1\n\n> quote\n\n^quote-id\n`x ^no`\nmid ^no text\n"
    assert mdlex.block_ids(mdlex.masked(body)) == ["p1", "quote-id"]


# --- spans: the bytes a rewrite changes --------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "x [[Old Note#H|a]] y",
        "| [[Old Note\\|a]] |",
        "![[Old Note]]",
        "[t](<Old Note.md>)",
        '[t](Old%20Note.md#h "title")',
        "[ref]: Old%20Note.md\r\n",
        "crlf\r\n\r\n[[Old Note]]\r\n",
    ],
)
def test_span_is_the_path_part_as_written(body: str) -> None:
    (tok,) = mdlex.links(mdlex.masked(body))
    assert body[tok.start : tok.end] == tok.raw and tok.raw in ("Old Note", "Old Note.md", "Old%20Note.md")


def test_masking_keeps_offsets_and_line_breaks() -> None:
    body = "a\r\n```\r\n[[x]]\r\n```\r\n`y` %%z%% <!-- w -->\n"
    out = mdlex.masked(body)
    assert len(out) == len(body) and out.count("\n") == body.count("\n")
    assert "[[x]]" not in out and "`y`" not in out and "%%" not in out and "<!--" not in out


# --- through parse_note: properties, titles, the legacy key ------------------------------------


def parse(text: str, stem: str = "stem"):
    return parse_note(text.encode(), stem)


def test_links_in_properties_are_links() -> None:
    # Properties: a quoted "[[Note]]" value or list item is a link (backlinks, graph)
    facts = parse(
        '---\nauthor: ["[[Kevin Kelly]]"]\nrelated: "[[Project X|X]]"\nup:\n  - "[[A]]"\n'
        "plain: not a link\nnested: [[Bare]]\n---\nbody [[B]]\n"
    )
    assert list(facts.links) == [
        Link("Kevin Kelly", "wiki"),
        Link("Project X", "wiki", None, "X"),
        Link("A", "wiki"),
        Link("B", "wiki"),
    ]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        # Obsidian shows the file name; vaultwatch shows a frontmatter `title` where set
        ("# Kevin Kelly\n\n## Clippings\n", "stem"),
        ("intro\n\n# Clippings\n", "stem"),  # a section H1 halfway down is never the title
        ("---\ntitle: Shown\n---\n# Other\n", "Shown"),
        ("---\ntitle: 5\n---\n", "stem"),
    ],
)
def test_title_is_the_file_name_or_frontmatter_title(text: str, title: str) -> None:
    assert parse(text).title == title


def test_legacy_singular_tag_key_is_an_ordinary_property() -> None:
    # Obsidian 1.9 dropped `tag`/`alias`: only `tags` holds tags
    facts = parse("---\ntag: old\ntags: [new]\n---\n")
    assert facts.tags == ("new",) and facts.frontmatter["tag"] == "old"


# --- the rewriter reads through the same lexer --------------------------------------------------


def test_rename_rewrites_reference_definitions_and_only_the_path_bytes() -> None:
    from vaultwatch.core.links.rewrite import LinkIndex, rewrite_links

    text = (
        "See [the plan][p] and [[Old|x]].\n\n```\n[[Old]]\n```\n%% [[Old]] %%\n"
        '| [[Old\\|t]] |\n[p]: Old.md "Plan"\n[q]: <Old.md>\n'
    )
    before = LinkIndex(["Old.md", "n.md"])
    after = before.moved({"Old.md": "New Name.md"})
    out = rewrite_links(text, "n.md", "n.md", {"Old.md": "New Name.md"}, before, after)
    assert out.text == (
        "See [the plan][p] and [[New Name|x]].\n\n```\n[[Old]]\n```\n%% [[Old]] %%\n"
        '| [[New Name\\|t]] |\n[p]: New%20Name.md "Plan"\n[q]: <New Name.md>\n'
    )
    assert out.changed == 4


def test_dotted_names_resolve_to_notes_and_known_files(make_vault, open_vault) -> None:
    # Internal links: a name may hold dots; `.md` is tried when the name as written is no file
    from vaultwatch.core.links.graph import graph

    root = make_vault(
        {
            "Release v1.2.md": "",
            "hub.yaml proposal for themes.md": "",
            "Books.base": "views: []\n",
            "Board.canvas": "{}",
            "clip.webm": b"\x1aE",
            "n.md": "[[Release v1.2]] "
            "[[hub.yaml proposal for themes]] ![[Books.base]] [[Board.canvas]] ![[clip.webm]] [[v1.3]]",
        }
    )
    vault = open_vault(root)
    report = graph(vault.snapshot).report("n.md")
    assert [r.target for r in report.outgoing] == [
        "Release v1.2.md",
        "hub.yaml proposal for themes.md",
        "Books.base",
        "Board.canvas",
        "clip.webm",
        None,
    ]
