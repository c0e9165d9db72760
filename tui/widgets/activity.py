"""The agent activity panel: one row per MCP call, newest at the bottom, as it happens; its
title names the agents and says whether the preview follows one of them."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from vaultwatch.core.events import AgentAccess
from vaultwatch.tui.marks import access_kind
from vaultwatch.tui.session import Session
from vaultwatch.tui.widgets import spans
from vaultwatch.tui.widgets.rowlist import Cell, Column, RowList

MAX_ROWS = 5000


def clock_time(at: float, localtime: Callable[[float], time.struct_time] = time.localtime) -> str:
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
        self.pin_tail = False  # follow mode: the newest row stays in view wherever the cursor was
        self.unseen = 0  # calls that arrived below the view (the panel's title says so)
        self.on_unseen: Callable[[], None] | None = None  # told when `unseen` changes

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
        if (at_end or self.pin_tail) and self.follow_tail:
            self.cursor = len(rows) - 1
            self._reveal()
            # the first rows past the panel's height bring the scrollbar: the scroll range grows
            # only with that layout, and the scroll above was clipped to the old one
            self.call_after_refresh(self._reveal)
        elif not self._end_in_view():  # the person scrolled up: say that calls came below
            self._set_unseen(min(len(rows), self.unseen + len(events)))

    def _end_in_view(self) -> bool:
        return len(self.rows) <= int(self.scroll_y) + self._body_height()

    def _set_unseen(self, count: int) -> None:
        if count != self.unseen:
            self.unseen = count
            if self.on_unseen is not None:
                self.on_unseen()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.unseen and self._end_in_view():
            self._set_unseen(0)

    def row_key(self, row: AgentAccess) -> int:
        return id(row)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """The row under the pointer says its whole error in a tooltip (the Error column cuts it)."""
        offset = event.get_content_offset(self)
        index = int(self.scroll_y) + offset.y - 1 if offset is not None and offset.y > 0 else -1
        row = self.rows[index] if 0 <= index < len(self.rows) else None
        error = row.error if isinstance(row, AgentAccess) else None
        if error and refused(error):
            error += "\n(enter: this refusal in the refusals view)"
        self.tooltip = error or None

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
            # when the agent asked: a call that waited for the person ended long after
            "time": (clock_time(row.asked_at or row.at, self.session.config.localtime), self.cstyle("rowlist--dim")),
            "agent": (row.agent, color),
            "tool": (row.tool, err if row.error else None),
            "summary": (summary, None),
            "count": ("" if row.result_count is None else str(row.result_count), None),
            "latency": (latency(row.duration_ms), self.cstyle("rowlist--dim")),
            "error": (error_cell(row.error or ""), err),
        }
        return [values[c.key] for c in columns]


ERROR_LEAD = "Error: "  # how a tool's error answer starts: the column's header says it already
RULE_LEAD = "the person's rule "  # how every refusal by rule starts
DECLINE_LEAD = "the person declined this change: "  # and every decline (core.review.approval.Declined)


def error_cell(error: str) -> str:
    """An error as its narrow cell shows it: a refusal by rule from the rule's name on (the leads the
    same on every refused call left `Error: the person's rule "T…`, the name that told them apart
    cut), a decline as `declined: ` and its reason; the whole of either is in the refusals view
    (enter on the row), the whole of any error in the row's tooltip."""
    error = error.removeprefix(ERROR_LEAD)
    if error.startswith(DECLINE_LEAD):
        return "declined: " + error[len(DECLINE_LEAD) :]
    return error.removeprefix(RULE_LEAD)


def refused(error: str | None) -> bool:
    """Whether a call's error is a refusal by the person's rule or the person's decline: one kept in
    the refusals view."""
    return bool(error) and str(error).removeprefix(ERROR_LEAD).startswith((RULE_LEAD, DECLINE_LEAD))


class ActivityTitle(Static):
    """The activity panel's title: the call count, the agents, and whether the preview follows."""

    def show(
        self,
        calls: int,
        names: Iterable[str],
        colors: Callable[[str], str],
        *,
        following: bool,
        follow_agent: str | None,
        rule_of: Callable[[str], str | None] = lambda name: None,
        unseen: int = 0,
    ) -> None:
        text = Text()
        text.append("Agent activity", style="bold")
        spans.append(text, f"  {calls:,} call{'s' if calls != 1 else ''}", "dim")
        if unseen:
            text.append("  ")
            text.append(f"↓ {unseen:,} new below", style="bold reverse")
        names = sorted(set(names))
        if names:
            spans.append(text, f" · {len(names)} agent{'s' if len(names) != 1 else ''}: ", "dim")
            for i, name in enumerate(names):
                if i:
                    text.append(", ")
                text.append(name, style=Style(color=colors(name)))
                rule = rule_of(name)  # the person's rule for this agent, when rules are set
                if rule:
                    spans.append(text, f" ({rule})", "dim")
        text.append("  ")
        if following:
            text.append(" ", style="reverse")  # a pad of another style: see tui.widgets.spans
            text.append(f"following {follow_agent or 'any agent'}", style="bold reverse")
            text.append(" ", style="reverse")
            spans.append(text, "  f stops", "dim")
        else:
            text.append("f follows the selected agent", style="dim")
        self.update(spans.tidy(text), layout=False)


class ActivityPanel(Vertical):
    """The activity list under its title, and who is connected and followed."""

    def __init__(self, session: Session, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        self.agents: dict[str, str] = {}  # session id -> agent name
        self.following = False
        self.follow_agent: str | None = None  # None: any agent
        self.title = ActivityTitle(id="activity-title")
        self.calls = ActivityList(session, id="activity-list")
        self.calls.on_unseen = self.show_title

    def compose(self) -> ComposeResult:
        yield self.title
        yield self.calls

    def record(self, events: Sequence[AgentAccess]) -> str | None:
        """Add the calls' rows; the path the preview should follow (the newest followed read)."""
        self.calls.extend(events)
        followed: str | None = None
        for event in events:
            self.session.colors(event.agent)  # agents get their colours in the order they call
            if event.agent not in self.agents.values():
                self.agents.setdefault(event.session or event.agent, event.agent)
            if (
                self.following
                and event.paths
                and access_kind(event) in ("read", "wrote")
                and not event.error
                and (self.follow_agent in (None, event.agent))
            ):
                followed = event.paths[0]
        return followed

    def presence(self, session: str, agent: str, connected: bool) -> None:
        if connected:
            self.agents[session] = agent
        else:
            self.agents.pop(session, None)
        self.show_title()

    def toggle_follow(self) -> bool:
        """Follow the selected row's agent (or stop); True when following now."""
        self.following = not self.following
        if self.following:
            current = self.calls.current
            self.follow_agent = current.agent if current is not None else None
        # following: new calls always come into view (the followed agent is kept apart from the
        # cursor, which rides on the newest row without selecting it)
        self.calls.pin_tail = self.following
        self.show_title()
        return self.following

    def selected(self, row: AgentAccess | None) -> None:
        """A row was highlighted (by the person: riding along the tail posts nothing): while
        following, follow its agent."""
        if row is not None and self.following:
            self.follow_agent = row.agent
            self.show_title()

    def show_title(self) -> None:
        self.title.show(
            len(self.calls.calls),
            self.agents.values(),
            self.session.colors,
            following=self.following,
            follow_agent=self.follow_agent,
            rule_of=self.rule_of,
            unseen=self.calls.unseen,
        )

    def rule_of(self, agent: str) -> str | None:
        gate = self.session.vault.approval_gate
        return gate.rules_said(agent) if gate is not None else None


class ActivityTicker(Static):
    """One line with the newest agent call, shown where the activity panel does not fit (80x24)."""

    def __init__(self, session: Session, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.session = session
        self.plain = ""

    def show(self, newest: AgentAccess | None, calls: int) -> None:
        text = Text()
        if newest is None:
            spans.append(text, "No agent calls yet · a shows the activity panel", "dim")
        else:
            spans.append(text, f"{clock_time(newest.asked_at or newest.at, self.session.config.localtime)} ", "dim")
            text.append(newest.agent, style=Style(color=self.session.colors(newest.agent), bold=True))
            text.append(" ")
            text.append(newest.tool, style="bold red" if newest.error else "")
            summary = newest.error or newest.summary
            if summary:
                text.append(f" {summary}")
            spans.append(text, f" · {latency(newest.duration_ms)} · {calls:,} call{'s' if calls != 1 else ''}", "dim")
        text.no_wrap, text.overflow = True, "ellipsis"
        self.plain = text.plain
        self.update(spans.tidy(text), layout=False)
