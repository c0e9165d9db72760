"""The status line: indexing progress, counts, the as-of date, MCP socket and connected agents."""
from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from ..spans import tidy


class StatusLine(Static):
    """One line at the bottom; the app sets its parts and it redraws."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.parts: dict[str, Text] = {}

    def set_part(self, name: str, text: str | Text | None) -> None:
        """Set (or with None, remove) one named part; parts show in insertion order."""
        if text is None:
            self.parts.pop(name, None)
        else:
            self.parts[name] = text if isinstance(text, Text) else Text(text)
        line = Text(" ", no_wrap=True, overflow="ellipsis")
        for i, part in enumerate(self.parts.values()):
            if i:
                line.append(" ")
                line.append("│", Style(dim=True))
                line.append(" ")
            line.append_text(part)
        self.update(tidy(line), layout=False)  # one fixed line: no screen re-layout per agent call
