"""What the command line prints for the person: text that notes and agents wrote, with every
character a terminal would act on shown as an escape instead of sent.

A note's text, a file's name, an agent's name and the arguments of its calls are anyone's to
write. Printed as they are, an escape sequence among them moves the cursor, erases lines (a
pending change's diff could hide the line the person is asked to approve), sets the window title
or the clipboard; a bidirectional override reorders what the person reads. `ShownStream` wraps
the streams of the commands that print for people (not `serve` or `bridge`, whose stdout is the
protocol), so no print of theirs can send one: every control character but tab and newline
becomes `\\uXXXX`, which is also a valid escape inside JSON strings (json.dumps escapes the rest).
`one_line` also escapes tab and newline, for a field printed on a line of its own making (an
agent's name, a path), which a newline would otherwise split into a line the agent chose.
"""

from __future__ import annotations

import io
from typing import TextIO

# what a terminal acts on instead of drawing (the TUI drops them: tui/terminaltext.py)
CONTROLS = (
    *range(0x00, 0x20),  # C0, escape among them
    0x7F,
    *range(0x80, 0xA0),  # C1: 0x9b is a one-byte CSI to some terminals
    *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
    *range(0x2066, 0x206A),  # bidirectional isolates
)
_LINE = {c: f"\\u{c:04x}" for c in CONTROLS}
_TEXT = {c: e for c, e in _LINE.items() if c not in (0x09, 0x0A)}


def shown(text: str) -> str:
    """`text` with every control character but tab and newline escaped."""
    return text.translate(_TEXT)


def one_line(text: str) -> str:
    """`text` with every control character escaped, tab and newline too."""
    return text.translate(_LINE)


class ShownStream(io.TextIOBase):
    """A text stream that writes `shown(text)` to `raw`; `raw` is the stream itself, for the
    command's own sequences (the progress bar's carriage return)."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(text.translate(_TEXT))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.raw.encoding


def raw(stream: TextIO) -> TextIO:
    """The stream under a ShownStream (`stream` itself when it is none)."""
    return stream.raw if isinstance(stream, ShownStream) else stream
