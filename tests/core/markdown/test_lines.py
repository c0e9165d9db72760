"""core.markdown.lines: a note as styled lines for the preview, read by the same lexer as the index.
Each case names the Obsidian / CommonMark rule its kind follows."""

from __future__ import annotations

import pytest

from vaultwatch.core.markdown.lines import styled_lines
from vaultwatch.core.markdown.parse import parse_note
from vaultwatch.core.model import Link


def kinds(text: str) -> list[tuple[str, int, str]]:
    return [(ln.kind, ln.level, ln.info) for ln in styled_lines(text)]


def spans(text: str) -> list[list[tuple[str, str]]]:
    return [[(s.kind, ln.text[s.start : s.end]) for s in ln.spans] for ln in styled_lines(text)]


LINE_CASES = [
    (
        "frontmatter block",
        "---\na: 1\n---\nx\n",
        [("frontmatter_fence", 0, ""), ("frontmatter", 0, ""), ("frontmatter_fence", 0, ""), ("text", 0, "")],
    ),
    ("ATX heading", "## Two\n", [("heading", 2, "")]),
    ("setext heading and its underline", "Title\n===\n", [("heading", 1, ""), ("setext_rule", 1, "")]),
    ("a rule under a blank line", "a\n\n---\n", [("text", 0, ""), ("blank", 0, ""), ("rule", 0, "")]),
    (
        "fence with language, a # line inside is code",
        "```py\n# no\n```\n",
        [("fence", 0, "py"), ("code", 0, ""), ("fence", 0, "")],
    ),
    (
        "4-backtick fence holds a 3-backtick one",
        "````\n```\nx\n````\n",
        [("fence", 0, ""), ("code", 0, ""), ("code", 0, ""), ("fence", 0, "")],
    ),
    (
        "fence in a callout",
        "> [!tip] T\n> ```css\n> #f00 {}\n> ```\n",
        [("callout", 0, "tip"), ("fence", 0, "css"), ("code", 0, ""), ("fence", 0, "")],
    ),
    ("indented code", "para\n\n    code [[x]]\n", [("text", 0, ""), ("blank", 0, ""), ("code", 0, "")]),
    (
        "list items and tasks",
        "- a\n  - b\n- [x] done\n1. one\n",
        [("list", 0, ""), ("list", 2, ""), ("list", 0, "[x]"), ("list", 0, "")],
    ),
    ("quote", "> said\n", [("text", 0, "")]),
    (
        "table",
        "| a | b |\n| - | :-: |\n| 1 | 2 |\nafter\n",
        [("table_head", 0, ""), ("table_rule", 0, ""), ("table_row", 0, ""), ("text", 0, "")],
    ),
    # GFM: "The header row must match the delimiter row in the number of cells. If not, a
    # table will not be recognized"
    (
        "a header with more cells than its delimiter row is no table",
        "| x | y |\n| --- |\n| 1 | 2 |\n",
        [("text", 0, ""), ("text", 0, ""), ("text", 0, "")],
    ),
    (
        "multi-line %% comment",
        "%%\nhidden [[x]]\n%%\nshown\n",
        [("comment", 0, ""), ("comment", 0, ""), ("comment", 0, ""), ("text", 0, "")],
    ),
    (
        "an unclosed fence runs to the end",
        "```\n# a\n\ntext\n",
        [("fence", 0, ""), ("code", 0, ""), ("code", 0, ""), ("code", 0, "")],
    ),
]


@pytest.mark.parametrize(("rule", "text", "expected"), LINE_CASES, ids=[c[0] for c in LINE_CASES])
def test_line_kinds(rule: str, text: str, expected) -> None:
    assert kinds(text) == expected


SPAN_CASES = [
    (
        "wiki link, tag, code span hides a link",
        "a [[N|al]] #t `[[no]]`",
        [[("wiki", "[[N|al]]"), ("tag", "#t"), ("code", "`[[no]]`")]],
    ),
    (
        "embed and Markdown links",
        "![[p.png]] [x](<My N.md>) ![i](a.png)",
        [[("embed", "![[p.png]]"), ("markdown", "[x](<My N.md>)"), ("embed", "![i](a.png)")]],
    ),
    ("escaped pipe in a table", "| h |\n| - |\n| [[T\\|t]] |", [[], [], [("wiki", "[[T\\|t]]")]]),
    (
        "emphasis encloses a link",
        "**b [[L]]** *i* ~~s~~ ==h==",
        [[("bold", "**b [[L]]**"), ("wiki", "[[L]]"), ("italic", "*i*"), ("strike", "~~s~~"), ("highlight", "==h==")]],
    ),
    ("block id", "para ^id-1", [[("block_id", "^id-1")]]),
    ("inline comment", "a %%b [[x]]%% c", [[("comment", "%%b [[x]]%%")]]),
    ("nothing inside a fence", "```\n[[x]] #t **b**\n```", [[], [], []]),
    ("a comment over lines is one span a line", "x %%a\nb%% y", [[("comment", "%%a")], [("comment", "b%%")]]),
    ("snake_case is no italic", "a_b_c", [[]]),
    # one level of nesting (Obsidian help, "Basic formatting syntax"): `***x***` is bold and
    # italic; a run holds another, of the other mark or of its own
    (
        "italic nested in bold",
        "**Bold text and _nested italic_ text**",
        [[("bold", "**Bold text and _nested italic_ text**"), ("italic", "_nested italic_")]],
    ),
    (
        "bold and italic",
        "***Bold and italic text*** ___b___",
        [
            [
                ("bold", "***Bold and italic text***"),
                ("italic", "*Bold and italic text*"),
                ("bold", "___b___"),
                ("italic", "_b_"),
            ]
        ],
    ),
    (
        "the same mark nested (stars between spaces stay)",
        "**a *b* c** *x **y** z* __d _e_ f__ 2*3*4 x * y * z",
        [
            [
                ("bold", "**a *b* c**"),
                ("italic", "*b*"),
                ("italic", "*x **y** z*"),
                ("bold", "**y**"),
                ("bold", "__d _e_ f__"),
                ("italic", "_e_"),
            ]
        ],
    ),
    (
        "strike and highlight hold emphasis",
        "~~s **b**~~ ==h *i*==",
        [[("strike", "~~s **b**~~"), ("bold", "**b**"), ("highlight", "==h *i*=="), ("italic", "*i*")]],
    ),
    # CommonMark "Raw HTML": open and closing tags are spans the preview hides; their text stays
    (
        "inline HTML tags",
        '<span class="git-footer">Edit In GitHub</span> <!-- note -->',
        [[("html", '<span class="git-footer">'), ("html", "</span>"), ("comment", "<!-- note -->")]],
    ),
    ("an unquoted attribute", "<button id=HH>Open</button>", [[("html", "<button id=HH>"), ("html", "</button>")]]),
    (
        "b, i and a enclose their tags and text",
        '<b>B</b> <em>I</em> <a href="https://x.y">A</a>',
        [
            [
                ("bold", "<b>B</b>"),
                ("html", "<b>"),
                ("html", "</b>"),
                ("italic", "<em>I</em>"),
                ("html", "<em>"),
                ("html", "</em>"),
                ("anchor", '<a href="https://x.y">A</a>'),
                ("html", '<a href="https://x.y">'),
                ("html", "</a>"),
            ]
        ],
    ),
    ("line breaks", "a<br>b<br/>c<BR />", [[("br", "<br>"), ("br", "<br/>"), ("br", "<BR />")]]),
    # CommonMark "Autolinks": an absolute URI or an email address in angle brackets
    (
        "autolinks",
        "<https://ex.com/a?b=1> <me@ex.com>",
        [[("autolink", "<https://ex.com/a?b=1>"), ("autolink", "<me@ex.com>")]],
    ),
    (
        "a < that opens no tag",
        "a < b, <3, 1<2 and <not a tag <i>x</i>",
        [[("italic", "<i>x</i>"), ("html", "<i>"), ("html", "</i>")]],
    ),
    ("a tag in a code span is code", "`<b>x</b>` and <br>", [[("code", "`<b>x</b>`"), ("br", "<br>")]]),
    ("no tag inside a fence", "```html\n<span>x</span><br>\n```\n<br>", [[], [], [], [("br", "<br>")]]),
    ("no tag in indented code", "para\n\n    <b>x</b> \\-\n\n\\-", [[], [], [], [], [("escape", "\\")]]),
    (
        "a block-level tag's line",
        '<div align="center">\nText\n</div>',
        [[("html", '<div align="center">')], [], [("html", "</div>")]],
    ),
    # CommonMark "Backslash escapes": a backslash before ASCII punctuation is hidden, before
    # anything else it stays; an escaped `<` opens no tag and an escaped `*` no emphasis
    ("backslash escapes", "\\- Doug \\# \\[x\\] \\q \\\\", [[("escape", "\\")] * 5]),
    ("an escaped < is no tag", "\\<b>x</b>", [[("escape", "\\"), ("html", "</b>")]]),
    ("escaped stars are no italic", "\\*not italic\\*", [[("escape", "\\"), ("escape", "\\")]]),
    ("no escape in a code span", "`\\-` \\-", [[("code", "`\\-`"), ("escape", "\\")]]),
    # CommonMark: a link destination may hold balanced parentheses; what is inside is the address
    (
        "no tag or escape in a URL with parentheses",
        "[a](https://x.y/(b)\\*<br>) \\* <br>",
        [[("escape", "\\"), ("br", "<br>")]],
    ),
    (
        "a wiki link's escaped pipe stays the link's",
        "| [[T\\|t]] \\| x |\n| - |",
        [[("wiki", "[[T\\|t]]"), ("escape", "\\")], []],
    ),
    # CommonMark "Entity and numeric character references": named, decimal and hex, each with
    # its `;`; one that decodes to nothing else (`&foo;`, `&amp` without `;`) is text, and code
    # holds none
    (
        "entities",
        "API&nbsp;key &copy; &mdash; &lt;tag&gt; &#8212; &#x2014; &foo; &amp `&amp;`",
        [
            [
                ("entity", "&nbsp;"),
                ("entity", "&copy;"),
                ("entity", "&mdash;"),
                ("entity", "&lt;"),
                ("entity", "&gt;"),
                ("entity", "&#8212;"),
                ("entity", "&#x2014;"),
                ("code", "`&amp;`"),
            ]
        ],
    ),
    ("no entity in a fence", "```\n&copy;\n```\n&copy;", [[], [], [], [("entity", "&copy;")]]),
    (
        "no entity in a tag's attribute",
        '<a href="x?a=1&amp;b=2">A</a>&amp;',
        [
            [
                ("anchor", '<a href="x?a=1&amp;b=2">A</a>'),
                ("html", '<a href="x?a=1&amp;b=2">'),
                ("html", "</a>"),
                ("entity", "&amp;"),
            ]
        ],
    ),
    # Obsidian's math: `$` not followed by a space opens, `$` not preceded by one closes; inside
    # `$…$` and `$$…$$` no escape, entity or emphasis is read (help's "Advanced formatting syntax")
    ("no escape in inline math", "$x^2\\,dx$ and \\-", [[("escape", "\\")]]),
    ("no emphasis or entity in inline math", "$a *b* c$ $&amp;$ *i*", [[("italic", "*i*")]]),
    (
        "no escape in a math block",
        "$$\n\\begin{vmatrix}a & b\\\\\nc & d\n\\end{vmatrix}=ad-bc\n$$\n\\-",
        [[], [], [], [], [], [("escape", "\\")]],
    ),
    ("prices are no math", "$5 and $10 \\- *i* $x\\,y$", [[("escape", "\\"), ("italic", "*i*")]]),
    ("an escaped dollar opens no math", "\\$x\\-$ $y\\,z$", [[("escape", "\\"), ("escape", "\\")]]),
    ("emphasis around math", "*see $a_1$* $b\\,c$", [[("italic", "*see $a_1$*")]]),
    (
        "a dollar in a code span opens no math",
        "`$` \\- `$` $a\\,b$",
        [[("code", "`$`"), ("escape", "\\"), ("code", "`$`")]],
    ),
]


@pytest.mark.parametrize(("rule", "text", "expected"), SPAN_CASES, ids=[c[0] for c in SPAN_CASES])
def test_spans(rule: str, text: str, expected) -> None:
    assert spans(text) == expected


def test_links_are_the_index_links() -> None:
    """One reading: the preview's links are exactly the links the index stores for the note."""
    text = (
        "---\nup: x\n---\n# T\n[[A#H|a]] ![[B.png]] [c](C%20d.md#s)\n> [!note]\n> [[D]] `[[no]]`\n"
        "```\n[[E]]\n```\n| [[F\\|f]] |\n|-|\n%% [[G]] %%\n[r]: ref.md\n"
    )
    shown = [s.link for ln in styled_lines(text) for s in ln.spans if s.link is not None]
    assert shown == list(parse_note(text.encode(), "n").links)
    assert shown[0] == Link("A", "wiki", "H", "a")


def test_offsets_and_line_starts() -> None:
    text = "---\na: 1\n---\nfirst\n\nsecond [[x]]\n"
    lines = styled_lines(text)
    assert [text[ln.start : ln.start + len(ln.text)] for ln in lines] == [ln.text for ln in lines]
    assert lines[-1].spans[0].link == Link("x", "wiki")


def test_prefix_reads_like_the_whole_note() -> None:
    text = "".join(f"# H{i}\n```\n# code {i}\n```\npara [[L{i}]] #t{i}\n\n" for i in range(2000))
    whole = styled_lines(text)
    part = styled_lines(text, max_chars=5000)
    assert 0 < len(part) < len(whole) and part == whole[: len(part)]
    assert part[-1].text and text.startswith("\n".join(ln.text for ln in part))


def test_a_quote_marker_inside_a_fence_is_code() -> None:
    """CommonMark: a fence's content is literal, so a Markdown sample of a callout inside
    ```` ```markdown ```` is code, not a quote (Obsidian's help page "Callouts" shows one). A
    fence inside a quote keeps the quote's own marker, and only that one."""
    text = "```markdown\n> [!info] Title\n> > body\n```\n\n> ```\n> > x\n> ```\n"
    got = [(ln.kind, ln.quote, ln.text[ln.marker :]) for ln in styled_lines(text)]
    assert got == [
        ("fence", 0, "```markdown"),
        ("code", 0, "> [!info] Title"),
        ("code", 0, "> > body"),
        ("fence", 0, "```"),
        ("blank", 0, ""),
        ("fence", 1, "```"),
        ("code", 1, "> x"),
        ("fence", 1, "```"),
    ]


def test_a_table_inside_a_callout_is_a_table() -> None:
    """A GFM table is a block a blockquote (callout) holds like any other: its rows quoted alike
    (Obsidian's help page "Advanced formatting syntax" has one in a callout)."""
    text = "> [!note] Bars\n>\n> First | Second\n> -- | --\n> [[A\\|a]] | x\n\n> a | b\n-- | --\n"
    got = [(ln.kind, ln.quote) for ln in styled_lines(text)]
    assert got == [
        ("callout", 1),
        ("text", 1),
        ("table_head", 1),
        ("table_rule", 1),
        ("table_row", 1),
        ("blank", 0),
        ("text", 1),  # a delimiter row outside the quote: no table
        ("text", 0),
    ]


def test_html_spans_keep_the_lines_and_their_offsets() -> None:
    """Tags are spans of the line as written: the line, its start and the links' offsets stay
    (the preview maps lines to scroll to a problem and links to follow a click)."""
    text = "# T\n<span>[[A]] <b>x</b> [[B]]</span>\n"
    lines = styled_lines(text)
    assert [ln.start for ln in lines] == [0, 4]
    second = lines[1]
    assert second.text == "<span>[[A]] <b>x</b> [[B]]</span>"
    assert [second.text[s.start : s.end] for s in second.spans if s.link] == ["[[A]]", "[[B]]"]
    assert [second.text[s.start : s.end] for s in second.spans if s.kind == "html"] == [
        "<span>",
        "<b>",
        "</b>",
        "</span>",
    ]
