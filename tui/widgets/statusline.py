"""The status line: indexing progress, counts, the as-of date, MCP socket and connected agents.

A part may have a compact form (the MCP part without its socket path, the vault without its
as-of date): when the line does not fit its width the compact forms are used (one part's more at a
time, in the parts' order, until it fits), so the counts and the agents' presence stay visible from
80 columns up."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from vaultwatch.tui.widgets import spans
from vaultwatch.tui.widgets.spans import tidy


class StatusLine(Static):
    """One line at the bottom; the app sets its parts and it redraws."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.parts: dict[str, Text] = {}
        self.compact: dict[str, Text] = {}
        self.plain = ""  # what the line shows (tests)
        self._drawn: Text | None = None

    def set_part(self, name: str, text: str | Text | None, compact: Text | None = None) -> None:
        """Set (or with None, remove) one named part; parts show in insertion order. `compact`
        is what the part shows when the whole line does not fit."""
        if text is None:
            self.parts.pop(name, None)
            self.compact.pop(name, None)
        else:
            self.parts[name] = text if isinstance(text, Text) else Text(text)
            if compact is None:
                self.compact.pop(name, None)
            else:
                self.compact[name] = compact
        self._draw()

    def _line(self, compact: set[str]) -> Text:
        line = Text(" ", no_wrap=True, overflow="ellipsis")
        for i, (name, part) in enumerate(self.parts.items()):
            if i:
                line.append(" ")
                line.append("│", Style(dim=True))
                line.append(" ")
            line.append_text(self.compact.get(name, part) if name in compact else part)
        return line

    def _draw(self) -> None:
        line = self._line(set())
        width = self.size.width
        # the parts' compact forms one more at a time, in the order the parts came, until the line
        # fits: a wide screen keeps the full form of a part set late (the approval rules) once the
        # socket path is dropped
        compact: set[str] = set()
        for name in self.parts:
            if not width or line.cell_len <= width:
                break
            if name in self.compact:
                compact.add(name)
                line = self._line(compact)
        self.plain = line.plain
        line = tidy(line)
        if line == self._drawn:
            return  # the same line (a search answered with the same count): no frame across the screen for it
        self._drawn = line
        self.update(line, layout=False)  # one fixed line: no screen re-layout per agent call

    def on_resize(self) -> None:
        self._draw()

    # -- the parts ------------------------------------------------------------------------------
    def show_vault(self, root: str, scope: str | None, today: str) -> None:
        """The vault's name, the folder scope and the as-of date."""
        text = Text()
        text.append(Path(root).name or root, style="bold")
        if scope:
            text.append(f"/{scope}", style="bold")
        compact = text.copy()
        spans.append(text, f"  as of {today}", "dim")
        self.set_part("vault", text, compact)

    def show_indexing(self, done: int, total: int) -> None:
        text = f"indexing {done:,}/{total:,}" if total else "indexing…"
        self.set_part("index", Text(text, style="yellow"))

    def show_stats(self, stats: dict) -> None:
        """The vault's totals (`Session.stats`)."""
        text = Text(f"{stats['notes']:,} notes")
        if stats.get("okf_bundle"):
            spans.append(text, f" · {stats['stale']:,} stale", "yellow" if stats["stale"] else None)
        broken = stats.get("broken_total", stats["frontmatter_errors"] + stats["skipped"])
        if broken:
            spans.append(text, f" · {broken:,} broken", "red")
        self.set_part("stats", text)

    def show_mcp_starting(self) -> None:
        self.set_part("mcp", Text("MCP starting…", style="dim"))

    def show_mcp_off(self, error: str | None = None) -> None:
        self.set_part("mcp", Text(f"MCP off: {error}", style="red") if error else Text("MCP off", style="dim"))

    def show_agents(self, host: Any, names: Iterable[str], colors: Callable[[str], str]) -> None:
        """The MCP socket and the connected agents' names in their colours."""
        text = Text()
        text.append("MCP ", style="bold green")
        compact = Text("MCP", style="bold green")
        text.append(str(getattr(host, "socket_path", "")), style="dim")
        names = sorted(set(names))
        agents = Text()
        if names:
            agents.append(" · ")
            for i, name in enumerate(names):
                if i:
                    agents.append(", ")
                agents.append(name, style=Style(color=colors(name)))
        else:
            spans.append(agents, " · no agents", "dim")
        self.set_part("mcp", text + agents, compact + agents)
