"""The lines of a note as Markdown reads them.

CommonMark ends a line at LF, CR or CRLF, and nowhere else, as Obsidian does. str.splitlines also
breaks at VT, FF, U+001C-001E, U+0085, U+2028 and U+2029: a change that only turned a line break
into one of those (two task items run together into one line of the note) would count, and diff,
as no change at all, where the person must see the line that changed (its separator escaped).
"""

from __future__ import annotations

import re

# what ends a line in Markdown (CommonMark's line ending: LF, CR or CRLF), as Obsidian reads a note
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def markdown_lines(text: str) -> list[str]:
    """The lines of `text` as Markdown reads them, without their endings (see the module doc)."""
    if not text:
        return []
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":  # the last line's own ending
        lines.pop()
    return lines


__all__ = ["markdown_lines"]
