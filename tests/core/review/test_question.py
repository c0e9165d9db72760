"""What the person is asked through an agent's client (core.review.question): the whole change or
nothing. Every effect and every hunk, each line whole; characters a client would act on or draw
as nothing shown as escapes; line endings said; a change past the bound, or not text, not asked."""

from __future__ import annotations

import pytest

from vaultwatch.core.edit import effects as fx
from vaultwatch.core.review.question import MAX_BYTES, MAX_LINES, question, visible
from vaultwatch.core.review.textdiff import text_diff

WHY = 'approval mode "writes" covers write a.md'


def ask(old: bytes | None, new: bytes | None, effects: fx.EffectSet | None = None):
    return question(effects or fx.written("a.md", "a.md"), old, new, WHY, agent="bot/1")


def test_every_hunk_is_shown_with_every_line() -> None:
    before = b"".join(b"line %d\n" % i for i in range(1, 100))
    after = before.replace(b"line 2\n", b"line two\n").replace(b"line 50\n", b"").replace(b"line 98\n", b"l98\n")
    asked = ask(before, after)
    assert asked.fits and asked.why_not == ""
    lines = asked.text.splitlines()
    assert lines[0] == f"The agent bot/1 asks to write a.md; approval is needed: {WHY}."
    assert "  rewrites a.md" in lines and "The note's lines: +2 -3, in 3 hunks, all shown:" in lines
    assert [line for line in lines if line[:1] in "+-"] == ["-line 2", "+line two", "-line 50", "-line 98", "+l98"]
    assert sum(line.startswith("@@ ") for line in lines) == 3
    assert asked.lines == len(lines) and asked.size == len(asked.text.encode())


def test_a_change_past_the_bound_is_not_asked_at_all() -> None:
    before = b"".join(b"line %d\n" % i for i in range(1, 1000))
    changed = before
    for i in range(5, 1000, 10):
        changed = changed.replace(b"line %d\n" % i, b"line %d!\n" % i)
    asked = ask(before, changed)
    assert not asked.fits and "longer than a question shows" in asked.why_not
    long_line = ask(b"x\n", b"x" * (MAX_BYTES + 1) + b"\n")  # one hunk, one line: the bytes bound
    assert not long_line.fits
    many = fx.deleted("Old", "Old", files=[f"Old/{i}.md" for i in range(MAX_LINES)])
    assert not ask(None, None, many).fits  # every effect is shown, or none is asked


def test_the_bound_is_of_the_whole_text() -> None:
    def lines_of(n: int) -> bytes:
        return b"".join(b"new %d\n" % i for i in range(n))

    header = len(ask(None, b"").text.splitlines())  # the header lines of a note's new file
    assert ask(None, lines_of(MAX_LINES - header - 1)).fits  # the hunk's own header line
    assert not ask(None, lines_of(MAX_LINES - header)).fits


@pytest.mark.parametrize(
    "old, new",
    [
        (b"\x00\x01binary", b"\x00\x02binary"),  # a binary file
        (b"caf\xe9\n", b"caf\xe9 ok\n"),  # Latin-1 bytes: two different ones would both show as U+FFFD
    ],
)
def test_bytes_no_text_shows_are_not_asked(old, new) -> None:
    asked = ask(old, new)
    assert not asked.fits and "not UTF-8 text" in asked.why_not


def test_characters_a_client_acts_on_or_draws_as_nothing_are_shown_as_escapes() -> None:
    assert visible("a\x1b[2Kb\rc\u202ed\u2066e\u200bf\ufeffg\x85h\x9bi") == (
        "a\\u001b[2Kb\\u000dc\\u202ed\\u2066e\\u200bf\\ufeffg\\u0085h\\u009bi"
    )
    assert visible("tab\there é 🙂 日本") == "tab\there é 🙂 日本"
    assert visible("a\tb", keep_tab=False) == "a\\u0009b"
    asked = ask(b"account CH-111\n", "account CH-111\u202e999-XX\x1b[1A\n".encode())
    assert "+account CH-111\\u202e999-XX\\u001b[1A" in asked.text.splitlines()


def test_line_endings_that_change_are_said() -> None:
    asked = ask(b"a\r\nb\r\n", b"a\nb\n")
    assert "The note's lines: +0 -0, in 0 hunks, all shown:" in asked.text
    assert "Line endings change: CRLF 2 -> 0, LF 0 -> 2" in asked.text
    assert "Line endings" not in ask(b"a\r\nb\r\n", b"a\r\nc\r\n").text


def test_line_endings_are_said_only_when_their_style_changes() -> None:
    """Lines added or removed with the note's own line ending change only how many lines end so,
    which the diff shows: no line about line endings. A style that changes is said: LF to CRLF, a
    mix that appears, a line the diff shows unchanged that now ends otherwise, the last line's
    ending dropped (none of which a line diff shows)."""
    for before, after in [
        (b"a\nb\n", b"a\nb\nc\nd\ne\nf\n"),  # lines added
        (b"a\nb\nc\n", b"a\n"),  # lines removed
        (b"a\r\nb\r\n", b"x\r\na\r\nb\r\ny\r\n"),
        (b"a\nb", b"a\nb\nc"),  # a last line without an ending gets lines after it
        (b"a\nb\r\n", b"a\nb\r\nc\nd\r\n"),  # a mixed note stays mixed, no line changed
    ]:
        asked = ask(before, after)
        assert "Line endings" not in asked.text, (before, after, asked.text)
    assert "Line endings change: CRLF 0 -> 1, LF 2 -> 2" in ask(b"a\nb\n", b"a\nb\r\nc\n").text  # a mix
    assert "Line endings change: CRLF 1 -> 2, LF 2 -> 1" in ask(b"a\nb\r\nc\n", b"a\r\nb\r\nc\n").text
    dropped = ask(b"a\nb\n", b"a\nb").text
    assert "The note's lines: +0 -0, in 0 hunks, all shown:" in dropped
    assert "Line endings change: LF 2 -> 1, the last line without one" in dropped


def test_a_rename_shows_every_effect() -> None:
    effects = fx.moved("A/x.md", "B/x.md") + fx.relinked([("C/links.md", "C/links.md")])
    asked = question(effects, None, None, WHY)
    assert asked.fits and asked.text.startswith("An agent asks to move A/x.md → B/x.md;")
    assert "  moves A/x.md → B/x.md" in asked.text and "  may rewrite links in C/links.md" in asked.text


def test_the_question_says_what_the_change_does_in_words_not_the_tools_name() -> None:
    effects = fx.written("Daily/d.md", "Daily/d.md", operation="update_frontmatter")
    asked = question(effects, b"---\na: 1\n---\n", b"---\na: 2\n---\n", WHY)
    assert asked.text.startswith("An agent asks to change the properties of Daily/d.md;"), asked.text
    assert "update_frontmatter" not in asked.text


def test_an_agents_name_cannot_break_the_question_into_lines_of_its_own() -> None:
    """The agent's name is its client's claim: line and paragraph separators in it (which some clients
    draw as line breaks) are escapes, so no name can draw a made-up list of effects before the real one."""
    fake = "helper. Nothing else changes.\u2028\u2028It touches 1 path:\u2029  write Pub/todo.md"
    asked = question(fx.written("a.md", "a.md"), b"a\n", b"b\n", WHY, agent=fake)
    first = asked.text.split("\n")[0]
    assert "\u2028" not in asked.text and "\u2029" not in asked.text
    assert first.startswith("The agent helper. Nothing else changes.\\u2028\\u2028It touches 1 path:\\u2029"), first


REAL_TEXT = [
    "café, cafe\u0301",  # é precomposed, and as e + COMBINING ACUTE ACCENT
    "Tiếng Việt: e\u0323\u0302 a\u0306\u0301",  # two marks stacked on one letter
    "नमस्ते, क्षत्रिय",  # Devanagari: virama, vowel signs
    "שָׁלוֹם, בְּרֵאשִׁית, שָּֽׁ",  # pointed Hebrew, up to four points on a letter
    "مُحَمَّدٌ",  # Arabic harakat and shadda
    "བསྒྲུབས",  # Tibetan: a subjoined letter and a vowel sign
]


@pytest.mark.parametrize("text", REAL_TEXT)
def test_the_marks_of_real_text_show_as_they_are_beside_an_overlay_that_does_not(text) -> None:
    line = f"{text} 1\u0336"  # (a struck-out digit at the line's end: only that mark is escaped)
    assert visible(line) == f"{text} 1\\u0336"
    asked = ask(b"x\n", f"{line}\n".encode())
    assert f"+{text} 1\\u0336" in asked.text.splitlines()


@pytest.mark.parametrize(
    "text, shown",
    [
        # overlays (canonical combining class 1) draw through the letter: 111 reads as struck out, 0 as 0̸
        ("CH-111\u0336", "CH-111\\u0336"),
        ("total 10\u0338", "total 10\\u0338"),
        ("x\u20d2 y\u20eb z\u0334", "x\\u20d2 y\\u20eb z\\u0334"),
        ("e\u0301\u0336", "e\\u0301\\u0336"),  # the whole run: a mark left drawn would sit on an escape
        ("\u20e0ok", "\\u20e0ok"),  # no letter under it (and enclosing: drawn around and past it)
        ("no\u20e0", "no\\u20e0"),  # an enclosing circle with a backslash through the o
        ("Z" + "\u0300\u0301\u0302\u0303\u0304", "Z\\u0300\\u0301\\u0302\\u0303\\u0304"),  # a stack past four
        ("e\u0301\u0301", "e\\u0301\\u0301"),  # the same mark twice: a double acute that is none
        ("\u0301start", "\\u0301start"),  # at the start of a line: on the diff's + or -
        ("a\t\u0301b", "a\t\\u0301b"),  # after a tab
        ("a \u0302b", "a \\u0302b"),  # on a blank: it reaches into the characters beside it
        ("a\x1b\u0301", "a\\u001b\\u0301"),  # after an escape: it would sit on the escape's last digit
    ],
)
def test_marks_that_could_disguise_a_line_are_shown_as_escapes(text, shown) -> None:
    assert visible(text) == shown
    asked = ask(b"x\n", f"{text}\n".encode())
    assert f"+{shown}" in asked.text.splitlines(), asked.text


def test_zalgo_cannot_draw_over_the_lines_beside_it() -> None:
    """A tall stack of marks on each letter climbs into the lines above and below: every mark shows as
    an escape, so the line is long, not tall, and the lines beside it read as they are."""
    marks = "\u030d\u030e\u0304\u0305\u033f\u0311\u0306\u0310\u0352\u0357\u0351\u0307\u0308\u030a"
    zalgo = "".join(ch + marks for ch in "ok")
    asked = ask(b"a\nb\nc\n", f"a\n{zalgo}\nc\n".encode())
    [line] = [line for line in asked.text.splitlines() if line.startswith("+")]
    assert line == "+o" + "".join(f"\\u{ord(m):04x}" for m in marks) + "k" + "".join(f"\\u{ord(m):04x}" for m in marks)


def test_names_in_the_question_show_their_marks_as_escapes() -> None:
    """Paths and the agent's name are escaped as a note's lines are: a struck-out path, or a mark
    that would sit on the space before the name, is shown as its code points."""
    effects = fx.written("Notes/plan\u0338.md", "Notes/plan\u0338.md") + fx.written("\u0301x.md", "\u0301x.md")
    asked = question(effects, None, None, WHY, agent="\u20dfbot\u0336")
    lines = asked.text.splitlines()
    assert lines[0].startswith("The agent \\u20dfbot\\u0336 asks"), lines[0]
    assert "  rewrites Notes/plan\\u0338.md" in lines and "  rewrites \\u0301x.md" in lines, lines


def test_a_rename_shows_what_each_rewritten_link_becomes() -> None:
    effects = fx.moved("A/x.md", "B/x.md") + fx.relinked([("C/links.md", "C/links.md"), ("C/two.md", "C/two.md")])
    rewrites = [
        (
            "C/links.md",
            b"# Links\nsee [[A/x]]\nand [[A/x#Part|the part]]\n",
            b"# Links\nsee [[B/x]]\nand [[B/x#Part|the part]]\n",
        ),
        ("C/two.md", b"[[A/x]]\n", b"[[B/x]]\n"),
    ]
    asked = question(effects, None, None, WHY, relinks=lambda: iter(rewrites))
    assert asked.fits, asked.why_not
    lines = asked.text.splitlines()
    assert "  moves A/x.md → B/x.md" in lines and "  may rewrite links in C/links.md" in lines
    start = lines.index("Links rewritten in C/links.md: +2 -2, in 1 hunk, all shown:")
    assert lines[start + 1 : start + 7] == [
        "@@ -1,3 +1,3 @@",
        " # Links",
        "-see [[A/x]]",
        "-and [[A/x#Part|the part]]",
        "+see [[B/x]]",
        "+and [[B/x#Part|the part]]",
    ], lines
    start = lines.index("Links rewritten in C/two.md: +1 -1, in 1 hunk, all shown:")
    assert lines[start + 1 : start + 4] == ["@@ -1,1 +1,1 @@", "-[[A/x]]", "+[[B/x]]"], lines


def test_a_rename_whose_link_rewrites_do_not_fit_is_not_asked() -> None:
    """Every rewritten link counts against the bound, as a note's lines do: past it, nothing is asked."""
    effects = fx.moved("A/x.md", "B/x.md") + fx.relinked([("C/links.md", "C/links.md")])
    before = b"".join(b"see [[A/x]]\n" + b"filler\n" * 9 for _ in range(12))
    asked = question(effects, None, None, WHY, relinks=lambda: [("C/links.md", before, before.replace(b"A/x", b"B/x"))])
    assert not asked.fits and "longer than a question shows" in asked.why_not


def test_a_renames_link_rewrites_are_read_only_when_every_effect_fits() -> None:
    def never():
        raise AssertionError("the rewrites were computed for a question that was never going to fit")

    many = fx.moved("Old", "New", files=[f"Old/{i}.md" for i in range(MAX_LINES)])
    assert not question(many, None, None, WHY, relinks=never).fits


@pytest.mark.parametrize("separator", ["\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\x85", "\u2028", "\u2029"])
def test_a_line_break_turned_into_another_separator_is_a_changed_line(separator) -> None:
    """Markdown ends lines at LF, CR and CRLF only: an agent that turns the break between two task
    items into a separator str.splitlines also splits at runs them into one line in the note. The
    diff (the question's, the TUI dialog's and `vaultwatch pending`'s) shows that line, the
    separator escaped, where it showed no change at all."""
    before = "# Payments\n- [x] Alice: approved\n- [ ] Mallory: REJECTED, never pay\n"
    after = before.replace("approved\n", "approved" + separator)
    diff = text_diff(before, after)
    assert (diff.added, diff.removed) == (1, 2) and len(diff.hunks) == 1
    asked = ask(before.encode(), after.encode())
    assert f"+- [x] Alice: approved\\u{ord(separator):04x}- [ ] Mallory: REJECTED, never pay" in asked.text.splitlines()
    assert "Line endings" not in asked.text  # the diff shows the line: no ending changed its style


def test_a_line_whose_letters_were_swapped_for_lookalikes_does_not_read_as_the_one_it_replaced() -> None:
    before = "Pay invoices at https://paypal.com/acme only. See [[Budget]].\n"
    after = before.replace("paypal", "p\u0430ypal").replace("[[Budget]]", "[[\u0412udget]]")
    lines = ask(before.encode(), after.encode()).text.splitlines()
    assert "-Pay invoices at https://paypal.com/acme only. See [[Budget]]." in lines
    assert "+Pay invoices at https://p\\u0430ypal.com/acme only. See [[\\u0412udget]]." in lines


def test_a_lone_lookalike_letter_in_a_link_or_number_does_not_read_as_ascii() -> None:
    """One letter is enough when the rest of its token is ASCII: `https://х.com` (a Cyrillic х) reads
    as `https://x.com`, `[[Report 2О24]]` (a Cyrillic О) as `[[Report 2024]]`, `pɑypal` (a Latin
    alpha, the same script as the rest) as `paypal`; so does a digit of another script (`2०24`, a
    Devanagari zero) and a slash lookalike (`evil.com∕paypal.com`). Each is an escape in the question."""
    before = "Log in at https://x.com/login, see [[Report 2024]], pay at https://paypal.com\n"
    after = "Log in at https://\u0445.com/login, see [[Report 2\u041e24]], pay at https://p\u0251ypal.com\n"
    after += "See [[Report 2\u096624]] and https://evil.com\u2215paypal.com\n"
    lines = ask(before.encode(), after.encode()).text.splitlines()
    assert "+Log in at https://\\u0445.com/login, see [[Report 2\\u041e24]], pay at https://p\\u0251ypal.com" in lines
    assert "+See [[Report 2\\u096624]] and https://evil.com\\u2215paypal.com" in lines
