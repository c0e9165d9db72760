"""Only Textual's own sequences reach the person's terminal: text from notes and agents is drawn,
never obeyed.

A note's title, body and name, an agent's name and the arguments of its calls are anyone's to
write, and Rich and Textual pass most control characters of a text through to the terminal as
they are (Rich strips only bell, backspace, vertical tab, form feed and carriage return). An
escape sequence in a note's frontmatter title reached the terminal raw from the list: enough to
set the window's title, write the clipboard (OSC 52) or move the cursor over what the TUI drew.

Every frame Textual writes is made of strips (`Strip.render`), each a run of segments: text with
a style, or a control segment of Textual's own (cursor moves). `install` makes every strip drop
the control characters, C1 controls and bidirectional overrides from its text segments before
they are written; they take no cell, so the layout Textual computed stays as it is.
"""

from __future__ import annotations

import re
from typing import Any

from rich.segment import Segment
from textual.strip import Strip

from vaultwatch.tui.commands.shown import CONTROLS

_FOUND = re.compile("[" + "".join(re.escape(chr(c)) for c in CONTROLS) + "]")
_DROP = dict.fromkeys(CONTROLS)
_installed: list[Any] = []  # Textual's own Strip.render, once install() has run


def drawn(text: str) -> str:
    """`text` without the characters a terminal would act on."""
    return text.translate(_DROP)


def install() -> None:
    """Make every strip Textual renders drop them (once per process)."""
    if _installed:
        return
    original = Strip.render

    def render(self: Strip, console: Any) -> str:
        if any(_FOUND.search(text) for text, _style, control in self if not control):
            clean = [Segment(text if control else drawn(text), style, control) for text, style, control in self]
            return original(Strip(clean, self.cell_length), console)
        return original(self, console)

    _installed.append(original)
    Strip.render = render  # type: ignore[method-assign]
