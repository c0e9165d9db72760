"""Text anyone could write, as the person is shown it: every character that could hide, reorder or
disguise what they read written as `\\uXXXX` instead (one rule for every place the person approves
an agent's change from: the question through the agent's client, core.review.question; the TUI's
approval dialog; `vaultwatch pending`).

    visible("a\\x1b[2Kb")              # 'a\\u001b[2Kb'
    visible("1\\u0336" "1")            # '1\\u0336' '1': a stroke through a digit
    visible("café")                   # as it is, whether é is one character or e and an accent
    visible_parts(["ab", "\\u0336c"])  # each part escaped as the joined text would be

Escaped: every character a client or terminal could act on instead of drawing, or draw as nothing
(controls, bidirectional overrides and isolates, zero-width and other default-ignorable characters),
so no line can hide, reorder or overwrite another; and combining marks that could make a line read
as something else or draw over its neighbours: overlays (a stroke through a digit), enclosing marks,
stacks taller than any script writes on one letter, and marks with no letter under them. The accents
and points of real text (é, Vietnamese, Devanagari, pointed Hebrew, Arabic harakat) show as they are.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from vaultwatch.core.disk.names import default_ignorable

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


def _pieces(text: str, keep_tab: bool) -> list[str]:
    """What each character of `text` is shown as (itself, or its escape)."""
    out: list[str] = []
    based = False  # the last character drawn as itself can carry combining marks
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if unicodedata.category(ch)[0] == "M":
            end = i + 1
            while end < n and unicodedata.category(text[end])[0] == "M":
                end += 1
            run = text[i:end]
            if not based or _disguises(run):
                # the whole run: one mark left drawn would sit on an escape's last digit instead
                out.extend(f"\\u{ord(m):04x}" for m in run)
                based = False
            else:
                out.extend(run)
            i = end
            continue
        cp = ord(ch)
        if (cp in _CONTROLS and not (keep_tab and cp == 0x09)) or (cp > 0x7F and default_ignorable(ch)):
            out.append(f"\\u{cp:04x}")
            based = False
        else:
            out.append(ch)
            # marks on a blank (a tab, a space) belong to nothing the reader sees: drawn over the
            # gap they reach into the characters beside it
            based = not ch.isspace()
        i += 1
    return out


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
