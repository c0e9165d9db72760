"""The agent activity panel: one row per MCP call, newest at the bottom, as it happens."""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence

from rich.style import Style

from core.events import AgentAccess

from ..session import Session
from .rowlist import Cell, Column, RowList

MAX_ROWS = 5000


def clock_time(at: float, localtime=time.localtime) -> str:
    """HH:MM:SS (local time unless another converter is given)."""
    return time.strftime("%H:%M:%S", localtime(at))


def latency(ms: float) -> str:
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


class ActivityList(RowList):
    """Agent calls: time, agent, tool, argument summary, result count, latency, error."""

    empty_text = "No agent calls yet: connect one with `vaultwatch bridge` (ctrl+p › Copy bridge config)"

    def __init__(self, session: Session, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.session = session
        self.calls: deque[AgentAccess] = deque(maxlen=MAX_ROWS)
        self.follow_tail = True

    def add(self, event: AgentAccess) -> None:
        """Append one call (see `extend`)."""
        self.extend((event,))

    def extend(self, events: Sequence[AgentAccess]) -> None:
        """Append calls. The cursor rides along on the newest row while it sits on the last
        one and `follow_tail` is set; that is not a selection, so no Highlighted is posted."""
        at_end = not self.calls or self.cursor >= len(self.calls) - 1
        self.calls.extend(events)
        rows = tuple(self.calls)
        self.rows = rows
        self.invalidate()
        self.resize_virtual()
        if at_end and self.follow_tail:
            self.cursor = len(rows) - 1
            self._reveal()

    def row_key(self, row: AgentAccess) -> int:
        return id(row)

    def all_columns(self) -> Sequence[Column]:
        return [
            Column("summary", "Call", 16, flex=True, pos=3),
            Column("agent", "Agent", 14, pos=1),
            Column("tool", "Tool", 18, pos=2),
            Column("time", "Time", 8, pos=0),
            Column("count", "Results", 7, right=True, pos=4),
            Column("latency", "Latency", 8, right=True, pos=5),
            Column("error", "Error", 28, pos=6),
        ]

    def cells(self, row: AgentAccess, columns: Sequence[Column]) -> list[Cell]:
        color = Style(color=self.session.colors(row.agent), bold=True)
        err = self.cstyle("rowlist--error")
        summary = row.summary
        if row.diff_summary:
            summary = f"{summary} · {row.diff_summary}"
        values = {
            "time": (clock_time(row.at, self.session.config.localtime), self.cstyle("rowlist--dim")),
            "agent": (row.agent, color),
            "tool": (row.tool, err if row.error else None),
            "summary": (summary, None),
            "count": ("" if row.result_count is None else str(row.result_count), None),
            "latency": (latency(row.duration_ms), self.cstyle("rowlist--dim")),
            "error": (row.error or "", err),
        }
        return [values[c.key] for c in columns]
