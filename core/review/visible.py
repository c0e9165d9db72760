"""Text anyone could write, as the person is shown it: every character that could hide, reorder or
disguise what they read written as `\\uXXXX` instead (one rule for every place the person approves
an agent's change from: the question through the agent's client, core.review.question; the TUI's
approval dialog; `vaultwatch pending`).

    visible("a\\x1b[2Kb")              # 'a\\u001b[2Kb'
    visible("1\\u0336" "1")            # '1\\u0336' '1': a stroke through a digit
    visible("café")                   # as it is, whether é is one character or e and an accent
    visible("p\\u0430ypal.com")       # 'p\\u0430ypal.com': a Cyrillic а in a Latin word
    visible_parts(["ab", "\\u0336c"])  # each part escaped as the joined text would be

Escaped: every character a client or terminal could act on instead of drawing, or draw as nothing
(controls, bidirectional overrides and isolates, zero-width and other default-ignorable characters),
so no line can hide, reorder or overwrite another; and combining marks that could make a line read
as something else or draw over its neighbours: overlays (a stroke through a digit), enclosing marks,
stacks taller than any script writes on one letter, and marks with no letter under them. The accents
and points of real text (é, Vietnamese, Devanagari, pointed Hebrew, Arabic harakat) show as they are.
And the letters that disguise a word as another (`_disguised`): a letter of another script inside a
word (`pаypal`, a Cyrillic `а`), a word of lookalikes among Latin words (`сору` in Cyrillic), while
words each in one script (Russian, Greek, Japanese text, `Москва-trip`) show as they are. Past U+FFFF
the escape is `\\UXXXXXXXX`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from vaultwatch.core.disk.names import default_ignorable, letter_script, looks_latin, mixes_scripts

# what a client acts on instead of drawing (as tui/commands/shown.py escapes for a terminal)
_CONTROLS = frozenset(
    (
        *range(0x00, 0x20),
        0x7F,
        *range(0x80, 0xA0),
        0x2028,  # line and paragraph separators: drawn as line breaks by some clients
        0x2029,
        *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
        *range(0x2066, 0x206A),  # bidirectional isolates
    )
)
# the words holding a letter or digit past ASCII, found by the regular expression engine (a Python
# loop over each character would cost more than the rest of the line's escaping); a word is
# letters and digits (`\\w` without `_`), to which _disguised joins the marks `\\w` leaves out.
# The look-behind starts a match only where a word starts, so an ASCII word is scanned once
_FOREIGN = re.compile(r"(?<![^\W_])[^\W_]*[^\W_\x00-\x7f][^\W_]*")
_WORD = re.compile(r"[^\W_]*")
_OVERLAY = 1  # the canonical combining class of marks drawn through their base (a stroke, a slash)
MAX_STACKED_MARKS = 4  # nonspacing marks on one base shown as they are (see _disguises)


def visible(text: str, *, keep_tab: bool = True) -> str:
    """`text` with every character a client could act on, or draw as nothing, written as `\\uXXXX`,
    and every run of combining marks that could disguise what it sits on (`_disguises`) too."""
    if text.isascii() and text.isprintable():  # nothing to escape: most lines of most notes
        return text
    return "".join(_pieces(text, keep_tab))


def visible_parts(parts: Sequence[str], *, keep_tab: bool = True) -> list[str]:
    """Each of `parts` escaped as `visible` escapes their joined text (a line drawn in pieces, such
    as the changed words of a diff line): a mark at the start of a part sits on the end of the one
    before it, and is judged with it."""
    joined = "".join(parts)
    if joined.isascii() and joined.isprintable():
        return list(parts)
    pieces = _pieces(joined, keep_tab)
    out: list[str] = []
    start = 0
    for part in parts:
        out.append("".join(pieces[start : start + len(part)]))
        start += len(part)
    return out


def _escape(cp: int) -> str:
    """`\\uXXXX`, or `\\UXXXXXXXX` past U+FFFF (as Python writes them): four digits and a fifth
    would read as an escape and a digit after it."""
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _pieces(text: str, keep_tab: bool) -> list[str]:
    """What each character of `text` is shown as (itself, or its escape)."""
    out: list[str] = []
    based = False  # the last character drawn as itself can carry combining marks
    disguised = _disguised(text)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if i in disguised:
            out.append(_escape(ord(ch)))
            based = False
            i += 1
            continue
        if unicodedata.category(ch)[0] == "M":
            end = i + 1
            while end < n and unicodedata.category(text[end])[0] == "M":
                end += 1
            run = text[i:end]
            if not based or _disguises(run):
                # the whole run: one mark left drawn would sit on an escape's last digit instead
                out.extend(_escape(ord(m)) for m in run)
                based = False
            else:
                out.extend(run)
            i = end
            continue
        cp = ord(ch)
        if (cp in _CONTROLS and not (keep_tab and cp == 0x09)) or (cp > 0x7F and default_ignorable(ch)):
            out.append(_escape(cp))
            based = False
        else:
            out.append(ch)
            # marks on a blank (a tab, a space) belong to nothing the reader sees: drawn over the
            # gap they reach into the characters beside it
            based = not ch.isspace()
        i += 1
    return out


def _disguised(text: str) -> frozenset[int]:
    """The positions of the letters of `text` that disguise a word as another: a letter of another
    script inside a word (`pаypal` with a Cyrillic `а`), and a word spelled wholly in another
    script's lookalikes of Latin letters among Latin words (`сору` in Cyrillic, read as `copy`).

    A word is a run of letters, digits and marks, so the parts of a URL or a link (`https`,
    `pаypal`, `com`) are words of their own, and so are the two sides of `Москва-trip`; digits
    belong to no script but keep a letter between them in its word (`user1а2`)."""
    chars = set(text)
    scripts = frozenset(filter(None, map(_script, chars)))
    if not mixes_scripts(scripts):
        return frozenset()  # a line of one script, or of Japanese...: no word of it can mix
    # another script whose every letter in the line is drawn like a Latin letter, beside Latin
    # words: a word of it reads as a Latin word. Real Russian or Greek writes letters of its own
    # (б, д, и, λ...) in nearly every line, so it is not taken for one
    posing: frozenset[str] = frozenset()
    if "LATIN" in scripts:
        posing = scripts - {"LATIN"} - {s for c in chars if (s := _script(c)) and s != "LATIN" and not looks_latin(c)}
    out: set[int] = set()
    covered = 0
    for found in _FOREIGN.finditer(text):
        start, end = found.span()
        if start < covered:  # joined to the word before it by marks
            continue
        while start and _mark(text[start - 1]):  # a word's marks (a decomposed accent) keep it one
            start -= 1
            while start and (text[start - 1].isalnum() and text[start - 1] != "_" or _mark(text[start - 1])):
                start -= 1
        while end < len(text) and _mark(text[end]):
            end += 1
            end = _WORD.match(text, end).end()  # type: ignore[union-attr]  # (it matches nothing at worst)
        covered = end
        out.update(start + i for i in _odd_letters(text[start:end], posing))
    return frozenset(out)


@lru_cache(maxsize=4096)  # asked of every character of a line past ASCII, of a few hundred in all
def _script(ch: str) -> str | None:
    """The script of `ch` if it is a letter (None: not a letter, or a letter of no script)."""
    return letter_script(ch) if ch.isalpha() else None


def _mark(ch: str) -> bool:
    """Whether `ch` is a combining mark (which belongs to the word it sits in)."""
    return not ch.isascii() and unicodedata.category(ch)[0] == "M"


@lru_cache(maxsize=4096)  # the words of a text repeat: most are judged once
def _odd_letters(word: str, posing: frozenset[str]) -> tuple[int, ...]:
    """The positions of the disguising letters of `word` (see _disguised)."""
    found = frozenset(filter(None, map(_script, word)))
    if len(found) == 1 and not found & posing:
        return ()
    letters = [(i, s) for i, c in enumerate(word) if (s := _script(c))]
    counts: dict[str, int] = {}
    for _, script in letters:
        counts[script] = counts.get(script, 0) + 1
    if len(counts) == 1:
        # a lone letter stays: a Greek α among Latin words is a variable, not a disguise
        return tuple(i for i, _ in letters) if len(letters) > 1 and next(iter(counts)) in posing else ()
    if not mixes_scripts(frozenset(counts)):
        return ()
    # the letters unlike the rest of the word are spelled out, the word's own script drawn, so the
    # reader still reads the word and sees which letters are not what they look like; on a tie,
    # or when the rest are themselves lookalikes (`сорy`), Latin is drawn, as lookalikes pass for
    # Latin letters. Japanese, Chinese or Korean letters stay beside the script they mix with in
    # real text (`iPhone用`)
    most = max(counts, key=lambda s: (s not in posing, counts[s], s == "LATIN"))
    return tuple(i for i, s in letters if mixes_scripts(frozenset({most, s})))


def _disguises(run: str) -> bool:
    """Whether a run of combining marks on one base could make it read as something else, or
    draw over the lines beside it: an overlay (canonical combining class 1: a stroke, a slash, a
    ring drawn through the base), an enclosing mark (drawn around the base and past it), a
    character escaped anyway (a variation selector, the grapheme joiner), the same mark twice
    in a row, or more stacked marks than real text puts on one letter. The bound is UTS 39's
    (Unicode's security mechanisms flag more than four nonspacing marks in sequence, and the
    same one twice): Vietnamese stacks two, pointed Hebrew three or four (dagesh, shin dot,
    vowel, meteg), Arabic two (shadda and a haraka), while a longer stack climbs into the lines
    above and below ("Zalgo" text)."""
    stacked = 0
    previous = ""
    for mark in run:
        kind = unicodedata.category(mark)
        if kind == "Me" or unicodedata.combining(mark) == _OVERLAY or default_ignorable(mark) or mark == previous:
            return True
        stacked += kind == "Mn"
        previous = mark
    return stacked > MAX_STACKED_MARKS


__all__ = ["MAX_STACKED_MARKS", "visible", "visible_parts"]
