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
words each in one script (Russian, Greek, Japanese text, `Москва-trip`) show as they are; and in a
token (a run without white space: a URL, `2О24]]`) holding an ASCII letter or digit, one character
is enough (`_posing_in_tokens`: `https://х.com`, `pɑypal`, `ᴏ`, `ꜱ`, `ⅼ`, `ⓐ`, a digit of another
script as in `2०24`, a dot or slash lookalike as in `evil∕paypal.com`), while digits beside their
script's letters or without ASCII (`२०२४ में`) show as they are. Past U+FFFF the escape is
`\\UXXXXXXXX`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from vaultwatch.core.disk.names import (
    DOT_LOOKALIKES,
    LATIN_LOOKALIKES,
    SLASH_LOOKALIKES,
    default_ignorable,
    letter_script,
    looks_latin,
    mixes_scripts,
)

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
# a token is a run without white space (`https://х.com/login`, `2О24]]`): the tokens holding a
# character past ASCII, matched only from a token's start; which of them hold an ASCII letter or
# digit; and their characters past ASCII. The spaces drawn narrower than a letter (six-per-em,
# punctuation, thin, hair, narrow no-break) do not end a token, or `х\u200a.com` would read as
# `x.com` with its `х` in a token of its own; and they stay as they are, as French puts a narrow
# no-break space before `:` and `!`
_NARROW = "\u2006\u2008\u2009\u200a\u202f"
_TOKEN = re.compile(rf"(?<![\S{_NARROW}])[\S{_NARROW}]*(?:[^\x00-\x7f\s]|[{_NARROW}])[\S{_NARROW}]*")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_PAST_ASCII = re.compile(r"[^\x00-\x7f]")
# drawn raised and small beside digits, as real text writes them (`1ª`, `3º`, `r²`, `H₂O`, `xⁿ`):
# their compatibility forms are ASCII, but no reader takes `r²` for `r2`
_RAISED = frozenset(chr(cp) for cp in (0xAA, 0xBA, 0xB2, 0xB3, 0xB9, *range(0x2070, 0x20A0)))
# blocks of Latin letters no orthography of the product's users writes: phonetic extensions (small
# capitals such as ᴏ, turned and hooked letters), letterlike symbols (ℓ, K), number forms (ⅼ, Ⅻ),
# Latin Extended-C (ⱺ), -D (small capitals ꜱ ꜰ Ɪ, medievalist letters), -E, -F and -G (phonetic
# letters). Extended-D holds the saltillo (ꞌ), which orthographies of Mexican languages write for a
# glottal stop: beside ASCII letters it is escaped too (it passes for an apostrophe, `[[Donꞌt]]`
# names another note than `[[Don't]]`), and still shown, as `\ua78c`. The IPA block's letters are
# judged one by one (names.LATIN_LOOKALIKES): most of them (ə ɛ ɔ ɖ ɣ ʋ ɓ ɗ ɲ ...) are letters
# of real orthographies (Azerbaijani, Akan, Ewe, Hausa, Bambara) and stay
_RARE_LATIN_BLOCKS = (
    (0x1D00, 0x1DBF), (0x2100, 0x214F), (0x2150, 0x218F), (0x2C60, 0x2C7F), (0xA720, 0xA7FF), (0xAB30, 0xAB6F),
    (0x10780, 0x107BF), (0x1DF00, 0x1DFFF),
)  # fmt: skip
# drawn like `.` or `/` (names.py refuses them in a new name): `https://evil․com∕paypal.com`
_SEPARATOR_LOOKALIKES = DOT_LOOKALIKES | SLASH_LOOKALIKES
# a sign of another script drawn like one of its digits and an `o`: Thai ๏ (fongman), like ๐
_DIGIT_LOOKALIKES = frozenset("\u0e4f")
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
    out = _posing_in_tokens(text)
    chars = set(text)
    scripts = frozenset(filter(None, map(_script, chars)))
    if not mixes_scripts(scripts):
        return frozenset(out)  # a line of one script, or of Japanese...: no word of it can mix
    # another script whose every letter in the line is drawn like a Latin letter, beside Latin
    # words: a word of it reads as a Latin word. Real Russian or Greek writes letters of its own
    # (б, д, и, λ...) in nearly every line, so it is not taken for one
    posing: frozenset[str] = frozenset()
    if "LATIN" in scripts:
        posing = scripts - {"LATIN"} - {s for c in chars if (s := _script(c)) and s != "LATIN" and not looks_latin(c)}
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


def _posing_in_tokens(text: str) -> set[int]:
    """The positions of the characters that pass for ASCII ones in a token holding an ASCII letter
    or digit, where a word-by-word look finds none: a lone letter of another script drawn like a
    Latin one (`https://х.com` with a Cyrillic х, `2О24` with a Cyrillic О between digits) and a
    digit of another script (`2०24`, `g߀ogle`), unless its word holds letters of its script that
    look like no Latin letter (`Москва-trip` is Russian); Latin letters of the blocks prose never
    writes (`_rare_latin`: `pɑypal`, `ᴏ`, `ꜱ`, `ⅼ`, fullwidth `Ｐ`, circled `ⓐ`); and the dot and
    slash lookalikes (`evil∕paypal.com`).

    Only a token with ASCII letters or digits is looked at: a Russian, Greek or IPA word on its own,
    a lone `в` in a Russian sentence, `२०२४ में`, `π r²` or `α = 0.05` show as they are."""
    out: set[int] = set()
    for token in _TOKEN.finditer(text):
        lo, hi = token.span()
        if not _ASCII_ALNUM.search(text, lo, hi):
            continue
        for found in _PAST_ASCII.finditer(text, lo, hi):
            i = found.start()
            script = _passes_for_ascii(text[i])
            if script is None:
                continue
            if script == "LATIN" or not _own_word(text, i, lo, hi, script):
                out.add(i)
    return out


@lru_cache(maxsize=4096)  # asked of every character past ASCII in a token with ASCII letters
def _passes_for_ascii(ch: str) -> str | None:
    """The script of `ch` when a reader takes it for an ASCII letter, digit, dot or slash in a token
    with ASCII letters or digits: "LATIN" (escaped wherever it stands) for a Latin letter prose
    never writes (`_rare_latin`) and for a dot or slash lookalike; another script's name for its
    letter drawn like a Latin one (`looks_latin`) and for its digits (`2०24` with a Devanagari
    zero, `g߀ogle` with an NKo one), which stay beside its own letters; None for any other
    character."""
    if _rare_latin(ch) or ch in _SEPARATOR_LOOKALIKES:
        return "LATIN"
    if unicodedata.category(ch) in ("Nd", "Nl") or ch in _DIGIT_LOOKALIKES:
        # a numeral of no script (the Roman ↁ, drawn as no letter of a script) is escaped wherever it stands
        return letter_script(ch) or "LATIN"
    return letter_script(ch) if looks_latin(ch) else None


def _rare_latin(ch: str) -> bool:
    """A letter or digit past ASCII that a reader takes for an ASCII one: its compatibility form is
    ASCII (fullwidth `Ｐ`, `ⅼ`, mathematical `𝐚`, circled `ⓐ`, but not the raised `²` or `ª`), or
    it is a Latin letter of the blocks no orthography writes (`_RARE_LATIN_BLOCKS`), or one of the
    Latin lookalikes of other blocks (names.LATIN_LOOKALIKES: `ɑ`, `ɡ`, `ʀ`, `ȷ`, `ǀ`). Other
    symbols stay (™, №, ½, …): none reads as one letter or digit."""
    kind = unicodedata.category(ch)
    if ch in _RAISED:
        return False
    compat = unicodedata.normalize("NFKC", ch)
    if kind in ("So", "No"):  # a circled or squared letter or digit (ⓐ, ①, 🄰), but not ™ (TM)
        return len(compat) == 1 and compat.isascii() and compat.isalnum()
    if not (kind[0] == "L" or kind in ("Nd", "Nl")):
        return False
    if compat.isascii() and compat.isalnum():
        return True
    if ch in LATIN_LOOKALIKES:
        return True
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _RARE_LATIN_BLOCKS) and letter_script(ch) == "LATIN"


def _own_word(text: str, i: int, lo: int, hi: int, script: str) -> bool:
    """Whether the word around `text[i]` (letters, digits and marks, inside the token lo..hi) holds a
    letter of `script` drawn like no Latin letter: then it is a word of that script (`Москва`)."""
    start, end = i, i + 1
    while start > lo and (text[start - 1].isalnum() or _mark(text[start - 1])):
        start -= 1
    while end < hi and (text[end].isalnum() or _mark(text[end])):
        end += 1
    return any(_script(c) == script and not looks_latin(c) for c in text[start:end])


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
