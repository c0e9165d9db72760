"""The preview's Markdown renderer: tables drawn as aligned columns (session 1 showed them raw),
and the lexer's reading of the note (core.markdown.lines, the index's): what the index takes
for code or a comment is never a link in the preview, and the other way round."""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style

from vaultwatch.tui.widgets.noterender import Styles, render_note

TABLE = """Before.

| Finish | Look | Durability | Coats | Notes |
| --- | :-- | :---: | ---: | --- |
| Danish oil | warm, low sheen | low | 3-4 | easy repair; rags are a fire risk |
| Hardwax oil | natural | medium | 2 | see [[Walnut Side Table]] |
| Shellac \\| wax | warm | low |

After | with a pipe, but no delimiter row: not a table
"""


def lines_of(body: str, width: int | None = None) -> tuple[list[str], list]:
    text, links = render_note(body, lambda link: f"{link.target}.md", width=width)
    return text.plain.split("\n"), links


def test_tables_render_as_aligned_columns() -> None:
    lines, links = lines_of(TABLE)
    assert not any(line.lstrip().startswith("|") for line in lines)  # no raw Markdown rows
    start = next(i for i, line in enumerate(lines) if line.startswith("Finish"))
    header, rule, danish, hardwax, shellac = lines[start : start + 5]
    bars = [i for i, ch in enumerate(header) if ch == "│"]
    assert len(bars) == 4
    for row in (danish, hardwax, shellac):  # every row's separators sit under the header's
        assert [i for i, ch in enumerate(row) if ch == "│"] == bars, row
    assert [i for i, ch in enumerate(rule) if ch == "┼"] == bars and set(rule) <= {"─", "┼"}
    assert danish.startswith("Danish oil ") and "easy repair; rags are a fire risk" in danish
    # alignment from the delimiter row: centred durability, right-aligned coats
    durability = danish[bars[1] + 1 : bars[2]]
    assert durability.strip() == "low" and durability.index("low") > 1
    assert danish[bars[2] + 1 : bars[3]].endswith("3-4 ")
    assert shellac.startswith("Shellac | wax")  # an escaped pipe is content; missing cells are empty
    # links inside cells are still links, with their place in the link table
    assert links and links[0][0].target == "Walnut Side Table"
    assert lines[start + 5] == "" and lines[start + 6].startswith("After | with a pipe")


def test_wide_tables_fit_the_preview_width_by_wrapping_inside_columns() -> None:
    lines, _ = lines_of(TABLE, width=50)
    start = next(i for i, line in enumerate(lines) if line.startswith("Finish"))
    table = lines[start : lines.index("", start)]
    assert max(cell_len(line) for line in table) <= 50
    assert table[0].split() == ["Finish", "│", "Look", "│", "Durability", "│", "Coats", "│", "Notes"]
    bars = [i for i, ch in enumerate(table[0]) if ch == "│"]
    assert table[1].count("┼") == 4
    for row in table[2:]:
        assert [i for i, ch in enumerate(row) if ch == "│"] == bars, row
    notes = " ".join(row[bars[-1] + 1 :].strip() for row in table[2:])
    assert "easy repair; rags are a fire risk" in notes  # wrapped inside its column, not lost


def test_not_tables() -> None:
    body = "a | b\nno delimiter\n\n| x | y |\n| --- |\n| 1 | 2 |\n```\n| in | fence |\n| --- | --- |\n```\n"
    lines, _ = lines_of(body)
    assert "a | b" in lines
    assert "| x | y |" in lines  # the delimiter row has fewer cells: GitHub does not draw it either
    assert any("| in | fence |" in line for line in lines)  # code stays code


def test_the_preview_reads_links_as_the_index_does() -> None:
    body = (
        "> [!example] A callout\n> ```md\n> [[In a fenced block]] #nottag\n> ```\n"
        "%% [[In a comment]] %%\n"
        "| Page | Shown |\n| --- | --- |\n| [[Table view\\|Table]] | x |\n\n"
        "Text with ``[[in code]]`` and [[Real note|real]] and *em* and ==marked==.\n"
    )
    lines, links = lines_of(body)
    assert [link.target for link, _ in links] == ["Table view", "Real note"]  # the index's two links
    assert any("[[In a fenced block]] #nottag" in line for line in lines)  # code stays code, as written
    assert not any("In a comment" in line for line in lines)  # hidden, as in reading view
    table_row = next(line for line in lines if line.startswith("Table"))
    assert "│" in table_row and "\\" not in table_row  # the escaped pipe's alias is the link's label
    assert "Text with [[in code]] and real and em and marked." in lines


def test_a_link_to_a_note_not_yet_written_is_drawn_faded_not_broken() -> None:
    """Obsidian draws a link to a note not written yet faded, as a note to come, and the Broken tab
    lists such links apart from breakage; a missing embed is broken."""
    from vaultwatch.tui.widgets.noterender import Styles

    text, _links = render_note(
        "See [[Here]], [[Later]] and ![[gone.png]].\n", lambda link: "Here.md" if link.target == "Here" else None
    )
    styles = Styles()

    def style_of(label: str):
        start = text.plain.index(label)
        return next(s.style for s in text.spans if s.start <= start < s.end)

    assert not style_of("Here").dim and not style_of("Here").strike  # a written note: a plain link
    assert style_of("Later") == styles.unwritten and not style_of("Later").strike
    assert style_of("gone.png") == styles.broken


def test_an_image_size_shows_the_image_name() -> None:
    """Obsidian help, "Embed files": `![[Engelbart.jpg|100]]`, `|100x145` and a Markdown image
    whose alt text is `250` size the image; the reader sees its name, not the number."""
    body = (
        "![[Engelbart.jpg#outline|100]] ![[Engelbart.jpg|100x145]] ![[Figure.png|Figure 2|200]]\n\n"
        "| Link | Embed |\n| --- | --- |\n| [[Embed files]] | ![[Engelbart.jpg\\|100]] |\n\n"
        "![250](https://publish.example/Attachments/Engelbart.jpg) ![Engelbart|100](https://example.org/E.jpg)\n\n"
        "![[Some note|100]] [[Engelbart.jpg|100]]\n"
    )
    lines, _links = lines_of(body)
    assert lines[0] == "▣ Engelbart.jpg ▣ Engelbart.jpg ▣ Figure 2", lines
    assert any(line.endswith("│ ▣ Engelbart.jpg") for line in lines), lines
    assert "Engelbart.jpg Engelbart" in lines, lines
    assert lines[-1] == "▣ 100 100", lines  # a note's alias, a link's alias: as written


def test_a_table_in_a_callout_is_drawn_as_a_table_beside_the_bar() -> None:
    body = (
        "> [!note] Vertical bars in tables\n>\n"
        "> First column | Second column\n> -- | --\n> [[Basic formatting syntax\\|Markdown syntax]] | ![[E.jpg\\|200]]\n"
    )
    lines, _links = lines_of(body, width=40)
    assert lines[0] == "▎ Vertical bars in tables"
    head, rule, row = lines[2:5]
    assert head.startswith("▎ First column") and row.startswith("▎ Markdown syntax"), lines
    assert head.index("│") == row.index("│") == rule.index("┼"), lines
    assert rule.startswith("▎ ─") and "|" not in "".join(lines) and "--" not in "".join(lines), lines
    assert all(cell_len(line) <= 40 for line in lines), lines


def test_inline_html_shows_its_text_not_its_tags() -> None:
    """Obsidian's reading view renders inline HTML: the Hub's footer span and its plugin pages'
    `[<button>Open in Obsidian</button>](obsidian://…)` show their text."""
    body = (
        '<span class="git-footer">[Edit In GitHub](https://github.dev/x "edit") | [Copy](https://r/x) </span>\n'
        "Links: [repo](https://github.com/x) or [<button id=HH>Open in Obsidian</button>](obsidian://show-plugin?id=x)\n"
        '<b>B</b> <i>I</i> <a href="https://x.y">A</a> a < b <3 <https://ex.com/a>\n'
        "x <!-- hidden --> y\n"
    )
    lines, _ = lines_of(body)
    assert lines == [
        "Edit In GitHub | Copy ",
        "Links: repo or Open in Obsidian",
        "B I A a < b <3 https://ex.com/a",
        "x  y",
    ]


def test_html_styles_bold_italic_and_links() -> None:
    text, _ = render_note('<b>B</b> <em>I</em> <a href="https://x.y">A</a> <https://ex.com>', lambda link: None)
    styles = Styles()

    def style_of(label: str):
        at = text.plain.index(label)
        return [s.style for s in text.spans if s.start <= at < s.end]

    assert styles.bold in style_of("B") and styles.italic in style_of("I")
    assert styles.link in style_of("A")
    assert styles.link in style_of("https://ex.com")


def test_br_breaks_the_line_in_text_quotes_and_table_cells() -> None:
    lines, _ = lines_of("a<br>b<br/>c\n> q<br>r\n\n| h |\n| - |\n| one<br>two |\n")
    assert lines[:4] == ["a", "b", "c", "▎ q"]
    assert lines[4] == "▎ r"
    assert "one" in lines[-2] and "two" in lines[-1] and "<br>" not in "".join(lines)


def test_html_in_code_is_text() -> None:
    lines, _ = lines_of("`<b>x</b>` <b>x</b>\n\n```html\n<span>y</span><br>\n```\n")
    assert lines[0] == "<b>x</b> x"
    assert "<span>y</span><br>" in lines[3]


def test_a_block_level_tag_line_draws_nothing_and_its_text_shows() -> None:
    lines, _ = lines_of('<div align="center">\n<img src="x.png" width=100>\nCentered\n</div>\n')
    assert lines == ["Centered"]


def test_backslash_escapes_show_the_character() -> None:
    """CommonMark: a backslash before ASCII punctuation is dropped (help/en's `\\- Doug
    Engelbart`); before anything else, and in code, it stays."""
    lines, links = lines_of("\\- Doug Engelbart \\*no\\* \\q\n\n`\\-`\n\n| [[T\\|t]] | a\\|b |\n| - | - |\n")
    assert lines[0] == "- Doug Engelbart *no* \\q"
    assert lines[2] == "\\-"
    assert lines[4].split() == ["t", "│", "a|b"]
    assert [link.target for link, _ in links] == ["T"]


def test_entities_show_their_character() -> None:
    """Obsidian's reading view decodes HTML entities outside code; a malformed one is text."""
    lines, _ = lines_of(
        "API&nbsp;key &copy; &mdash; &rarr; &lt;tag&gt; &#8212; &#x2014; &foo; &amp\n\n"
        "`&copy;` **&copy;** [&copy; x](https://x.y)\n\n```\n&copy;\n```\n"
    )
    assert lines[0] == "API\u00a0key \u00a9 \u2014 \u2192 <tag> \u2014 \u2014 &foo; &amp"
    assert lines[2] == "&copy; \u00a9 \u00a9 x"
    assert lines[5].strip() == "&copy;"


def test_math_is_shown_as_written() -> None:
    """Math keeps its backslashes and marks (help's "Advanced formatting syntax"); `$5 and
    $10` is no math, so its escape is read."""
    lines, _ = lines_of(
        "$$\n\\begin{vmatrix}a & b\\\\\nc & d\n\\end{vmatrix}=ad-bc\n$$\n\n"
        "$x^2\\,dx$ and $a*b*c$ and $&amp;$ \\-\n\n$5 and $10 \\- *i*\n"
    )
    assert lines[:5] == ["$$", "\\begin{vmatrix}a & b\\\\", "c & d", "\\end{vmatrix}=ad-bc", "$$"]
    assert lines[6] == "$x^2\\,dx$ and $a*b*c$ and $&amp;$ -"
    assert lines[8] == "$5 and $10 - i"


def test_links_after_tags_keep_their_order() -> None:
    """A click's link index is its place in the link table: tags around links change none."""
    lines, links = lines_of("<span>[[A]]</span> <b>[[B]]</b><br>[[C]]\n")
    assert lines == ["A B", "C"]
    assert [link.target for link, _ in links] == ["A", "B", "C"]


def wrapped(body: str, width: int) -> list[str]:
    """The display lines of `body` at `width` cells, as the preview wraps them."""
    from vaultwatch.tui.widgets.notedoc import NoteDoc
    from vaultwatch.tui.widgets.noterender import Context, body_lines

    doc = NoteDoc(body_lines(body), Context(lambda link: None, []), width)
    doc.extend(budget=float("inf"))  # every line: the default budget stops when the machine is slow
    return [line.plain.rstrip() for line in doc.display]


def test_a_wrapped_list_item_hangs_under_its_text() -> None:
    """Reading view wraps a list item's text under itself, not under its marker: numbered,
    bulleted, nested, tasks, inside a quote, and a code block's lines under the code."""
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"
    body = (
        f"1. {words}\n- {words}\n    - {words}\n- [ ] {words}\n> - {words}\n\n"
        f"```\n{words.replace(' ', '_')} {words}\n```\n"
    )
    lines = wrapped(body, 30)
    assert lines[:3] == ["1. alpha beta gamma delta", "   epsilon zeta eta theta iota", "   kappa lambda mu"], lines
    assert lines[3:6] == ["• alpha beta gamma delta", "  epsilon zeta eta theta iota", "  kappa lambda mu"], lines
    nested = lines[6:9]
    assert nested[0] == "    • alpha beta gamma delta" and all(n.startswith("      ") for n in nested[1:]), lines
    assert nested[1].strip().startswith("epsilon"), lines
    assert lines[9] == "☐ alpha beta gamma delta" and lines[10].startswith("  epsilon"), lines
    quoted = [line for line in lines if line.startswith("▎")]
    assert quoted[0] == "▎ • alpha beta gamma delta" and quoted[1].startswith("▎   epsilon"), lines
    code = lines[lines.index(quoted[-1]) + 2 :]
    assert code[1].startswith("  alpha_beta") and all(c.startswith("  ") for c in code[1:-1]), code
    assert wrapped("- one<br>two\n", 30) == ["• one", "  two"]  # a `<br>` breaks to the same place


def test_a_link_to_a_missing_heading_or_block_is_drawn_broken() -> None:
    """The Broken tab lists `[[Kyoto#Top]]` and `![[Kyoto#Nope]]` as a missing heading when
    Kyoto has no such heading: the preview draws them broken too, as it draws a missing embed,
    and a click still opens Kyoto (it is there)."""
    body = "[[Kyoto#Top]] ![[Kyoto#Nope]] [[Kyoto#Sights]] [[Kyoto#^gone]] [[Kyoto]]\n"
    lacking = {"Top": "heading", "Nope": "heading", "^gone": "block"}
    text, links = render_note(
        body, lambda link: "Kyoto.md", missing=lambda link, target: lacking.get(link.heading or "")
    )
    styles = Styles()

    def style_of(label: str):
        at = text.plain.index(label)
        return next(s.style for s in text.spans if s.start <= at < s.end)

    for label in ("Kyoto › Top", "▣ Kyoto › Nope", "Kyoto › ^gone"):
        assert style_of(label).color == styles.broken.color and style_of(label).strike, label
        assert "@click" in style_of(label).meta, label
    assert style_of("Kyoto › Sights").color == styles.link.color and not style_of("Kyoto › Sights").strike
    last = text.plain.rstrip().rindex("Kyoto")
    assert not next(s.style for s in text.spans if s.start <= last < s.end).strike  # the bare link
    assert len(links) == 5


def test_nested_emphasis_shows_no_marks() -> None:
    """Obsidian help, "Basic formatting syntax": `**Bold text and _nested italic_ text**` showed
    its underscores and `***Bold and italic text***` showed `*Bold and italic text*` in bold."""
    text, _ = render_note(
        "**Bold text and _nested italic_ text** ***Bold and italic text*** *x **y** z*\n\n"
        "| Style | Syntax |\n| --- | --- |\n| Nested | **Bold text and _nested italic_ text** |\n",
        lambda link: None,
    )
    lines = text.plain.split("\n")
    assert lines[0] == "Bold text and nested italic text Bold and italic text x y z", lines
    assert lines[-1].endswith("│ Bold text and nested italic text"), lines

    def styles_at(label: str) -> Style:
        at = text.plain.index(label)
        return Style.combine(s.style for s in text.spans if s.start <= at < s.end)

    assert styles_at("nested").bold and styles_at("nested").italic
    assert styles_at("Bold and").bold and styles_at("Bold and").italic
    assert styles_at("y z").bold and styles_at("y z").italic and not styles_at(" z").bold


def test_a_link_address_may_hold_balanced_parentheses() -> None:
    """CommonMark: a destination may hold balanced parentheses. The Hub's
    `[Linters](https://www.wikiwand.com/en/Lint_(software))` showed as "Linters)"."""
    text, _ = render_note(
        "[Linters](https://www.wikiwand.com/en/Lint_(software)) are tools "
        '(see [y](https://e.org/a(b)c "t")) [z](https://w/x(a(b))) [w](<https://a/(b>)\n',
        lambda link: None,
    )
    assert text.plain == "Linters are tools (see y) z w"
    at = text.plain.index("Linters")
    assert any(s.start <= at < s.end and s.style == Styles().link for s in text.spans)


def test_a_folded_callout_shows_its_title_alone_with_a_fold_marker() -> None:
    """Obsidian's "Callouts" help: `> [!tip]- Title` is folded (its title line alone, a fold
    marker after it) and `> [!info]+ Title` foldable and open; the preview drew both open, with
    no marker."""
    lines, _ = lines_of(
        "> [!tip]- Drag and drop embed\n> Hidden body.\n> > [!note] Nested\n> > Hidden too.\n\n"
        "> [!info]+ Canvas embeds show shapes only\n> Shown body.\n\n> [!faq]-\n> Hidden.\n\nAfter.\n"
    )
    assert lines == [
        "▎ Drag and drop embed ▸",
        "",
        "▎ Canvas embeds show shapes only ▾",
        "▎ Shown body.",
        "",
        "▎ Faq ▸",
        "",
        "After.",
    ], lines


def test_each_task_state_draws_its_own_mark() -> None:
    """`[/]`, `[-]`, `[>]` and the other states of kepano's vault and the Tasks plugin were drawn
    as an open box (`☐`), like `[ ]`: each now has a mark of its own, a cancelled task is struck
    through."""
    body = "- [ ] open\n- [x] done\n- [/] half\n- [-] cancelled\n- [>] forwarded\n- [<] scheduled\n- [?] question\n- [!] important\n- [D] deferred\n"
    text, _ = render_note(body, lambda link: None)
    lines = text.plain.split("\n")
    assert lines == [
        "☐ open",
        "☑ done",
        "◐ half",
        "⊟ cancelled",
        "▷ forwarded",
        "◁ scheduled",
        "? question",
        "! important",
        "D deferred",
    ], lines
    assert not any("[" in line for line in lines)

    def style_at(label: str) -> Style:
        at = text.plain.index(label)
        return Style.combine([Style(), *(s.style for s in text.spans if s.start <= at < s.end)])

    assert style_at("cancelled").strike and not style_at("half").strike and not style_at("open").strike
