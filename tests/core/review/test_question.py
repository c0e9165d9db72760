"""What the person is asked through an agent's client (core.review.question): the whole change or
nothing. Every effect and every hunk, each line whole; characters a client would act on or draw
as nothing shown as escapes; line endings said; a change past the bound, or not text, not asked."""

from __future__ import annotations

import pytest

from vaultwatch.core.edit import effects as fx
from vaultwatch.core.review.question import MAX_BYTES, MAX_LINES, question, visible

WHY = 'approval mode "writes" covers write a.md'


def ask(old: bytes | None, new: bytes | None, effects: fx.EffectSet | None = None):
    return question(effects or fx.written("a.md", "a.md"), old, new, WHY, agent="bot/1")


def test_every_hunk_is_shown_with_every_line() -> None:
    before = b"".join(b"line %d\n" % i for i in range(1, 100))
    after = before.replace(b"line 2\n", b"line two\n").replace(b"line 50\n", b"").replace(b"line 98\n", b"l98\n")
    asked = ask(before, after)
    assert asked.fits and asked.why_not == ""
    lines = asked.text.splitlines()
    assert lines[0] == f"The agent bot/1 asks to write; approval is needed: {WHY}."
    assert "  write a.md" in lines and "The note's lines: +2 -3, in 3 hunks, all shown:" in lines
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


def test_a_rename_shows_every_effect() -> None:
    effects = fx.moved("A/x.md", "B/x.md") + fx.relinked([("C/links.md", "C/links.md")])
    asked = question(effects, None, None, WHY)
    assert asked.fits and asked.text.startswith("An agent asks to rename")
    assert "  move_from A/x.md -> B/x.md" in asked.text and "  links C/links.md" in asked.text


def test_an_agents_name_cannot_break_the_question_into_lines_of_its_own() -> None:
    """The agent's name is its client's claim: line and paragraph separators in it (which some clients
    draw as line breaks) are escapes, so no name can draw a made-up list of effects before the real one."""
    fake = "helper. Nothing else changes.\u2028\u2028It touches 1 path:\u2029  write Pub/todo.md"
    asked = question(fx.written("a.md", "a.md"), b"a\n", b"b\n", WHY, agent=fake)
    first = asked.text.split("\n")[0]
    assert "\u2028" not in asked.text and "\u2029" not in asked.text
    assert first.startswith("The agent helper. Nothing else changes.\\u2028\\u2028It touches 1 path:\\u2029"), first
