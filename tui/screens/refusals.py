"""The refusals view: agents' changes that did not happen, newest first, as `vaultwatch refusals`
lists them and from the same record (core.review.refusals.kept): refused by a rule of the
person's, declined by the person, or left undecided until the wait timed out. The journal keeps
only what was written, so without this view the person learns what an agent tried and was
refused only from the command line.

Opened with `x` in the Changes view or ctrl+p › Show refusals; the record is read in a worker
thread (it is a file of up to a few thousand lines) and the view drawn from its answer. The view
follows the record while it is open: read again when this process's gate keeps a refusal (the
core bus's RefusalKept, relayed by tui.flows.review) and when the file changes otherwise (a
`vaultwatch decline` from a shell: one stat now and then), the selected record staying selected. An
agent's name is its client's own claim: it is shown as `agent <name>`, escaped (shown_agent),
and every other text of a record escaped too, never read as markup.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from vaultwatch.core.review import refusals, sessionids
from vaultwatch.core.review.agentrules import shown_agent
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.review.visible import visible

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from vaultwatch.core.events import AgentAccess
    from vaultwatch.tui.app import VaultwatchApp

COLUMNS = ("when", "agent", "session", "what", "tool", "paths", "why")
SHOWN_ROWS = 500  # the newest this many: the record keeps a few thousand, `vaultwatch refusals` the rest
PATHS_LEAST = 16  # the paths cell gives the why cell up to half the room, down to this many characters
WHY_LEAST = 16  # and the why cell keeps at least this many
WHY_WANT = 24  # what the why cell is given back from the tool and agent cells: a rule's name and value
TOOL_LEAST = 8  # what those two keep (the detail below has them whole)
AGENT_LEAST = 14
TABLE_CHROME = 2  # the table's vertical scrollbar
RECORD_LOOK_S = 1.0  # s: how often the view looks whether another process kept a record (one stat)


def _when(at: float, localtime: Callable[[float], time.struct_time]) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", localtime(at))


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


RULE_LEAD = "the person's rule "  # how every refusal by rule starts: the title says whose rules they are


def _why(reason: str) -> str:
    """The reason as its cell shows it: a refusal by rule from the rule's name on (the same lead on
    every refused row filled the cell with "the person'" and nothing that told the rows apart)."""
    return reason[len(RULE_LEAD) :] if reason.startswith(RULE_LEAD) else reason


class RefusalsScreen(Screen[None]):
    """The vault's kept refusals and declines, one a row, the selected one in full below."""

    app: VaultwatchApp

    DEFAULT_CSS = """
    RefusalsScreen #refusals-title { height: auto; background: $panel; padding: 0 1; }
    RefusalsScreen #refusals-table { height: 60%; }
    RefusalsScreen #refusals-detail { border-top: hkey $foreground 20%; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="refusals.close"),
        Binding("k", "kind", "Refused / declined / all", id="refusals.kind"),
    ]

    class Read(Message):
        """The kept refusals as read off the UI thread: their rows (newest first) and each session's
        shown form (as `vaultwatch changes` shows it, so that one pastes into `--session`)."""

        def __init__(
            self, rows: list[refusals.Refusal], sessions: dict[str, str], problem: str = "", reading: int = 0
        ) -> None:
            super().__init__()
            self.rows = rows
            self.sessions = sessions
            self.problem = problem  # why the record could not be read ("" when it was)
            self.reading = reading  # which reading this answers: only the latest one is drawn

    def __init__(self, vault: Any, *, call: AgentAccess | None = None) -> None:
        super().__init__()
        self.vault = vault
        self._call = call  # an activity row's refused call: its record is selected once read
        self.rows: list[refusals.Refusal] | None = None  # None until the record is read
        self.sessions: dict[str, str] = {}
        self.problem = ""
        self.kind: str | None = None  # refusals.REFUSED, DECLINED, or None for both
        self._reading = 0  # each reading of the record counts up: an older answer is dropped
        self._seen: tuple[int, int, int] | None = None  # the record file's (inode, size, mtime) as last read

    def compose(self) -> ComposeResult:
        yield Static(Text("Refused and declined changes: reading them…", style="bold"), id="refusals-title")
        table: DataTable[Text] = DataTable(id="refusals-table", cursor_type="row", zebra_stripes=False)
        yield table
        with VerticalScroll():
            yield Static(id="refusals-detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        table.focus()
        self.reload()
        self.set_interval(RECORD_LOOK_S, self._look, name="refusals-record")

    def reload(self) -> None:
        """Read the record again (in a worker) and draw what it holds now."""
        self._reading += 1
        self._read(self._reading)

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(refusals.refusals_path(self.vault.root_real))
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def _look(self) -> None:
        """A record kept by another process (`vaultwatch decline`, a server of its own) makes no
        event on this process's bus: the file replaced since it was read is read again."""
        if self._stat() != self._seen:
            self.reload()

    @work(thread=True, exit_on_error=False, group="refusals-read")
    def _read(self, reading: int) -> None:
        self._seen = self._stat()  # before the read: a record kept during it is read next time
        try:
            rows = refusals.kept(self.vault.root_real, limit=SHOWN_ROWS)
        except OSError as exc:  # a record that cannot be read is said, never shown as "none"
            path = refusals.refusals_path(self.vault.root_real)
            self.post_message(self.Read([], {}, f"cannot read {path}: {exc.strerror or exc}", reading))
            return
        forms = sessionids.forms_among(journal_for(self.vault), (r.session for r in rows if r.session))
        self.post_message(self.Read(rows, forms, reading=reading))

    def on_refusals_screen_read(self, message: Read) -> None:
        if message.reading != self._reading:  # a newer reading is on its way
            return
        selected = self._selected()
        if self._call is not None:  # opened from a refused call: its record, once
            selected = self._record_of(self._call, message.rows) or selected
            self._call = None
        self.rows = message.rows
        self.sessions = message.sessions
        self.problem = message.problem
        self._draw(selected)

    @staticmethod
    def _record_of(call: AgentAccess, rows: list[refusals.Refusal]) -> refusals.Refusal | None:
        """The kept record of a refused call: its agent's, session's and tool's nearest in time."""
        mine = [r for r in rows if (r.agent, r.session or "", r.tool) == (call.agent, call.session or "", call.tool)]
        return min(mine, key=lambda r: abs(r.at - call.at), default=None)

    def shown(self) -> list[refusals.Refusal]:
        """The rows the table lists (the kind chosen with `k`)."""
        return [r for r in self.rows or [] if self.kind in (None, r.kind)]

    def _draw(self, selected: refusals.Refusal | None = None) -> None:
        """The rows of the kind chosen, the cursor on `selected` where the rows put it now (a new
        refusal comes in above it), else on the newest."""
        table = self.query_one(DataTable)
        table.clear()
        table.clear(columns=True)  # a column only ever widens to its cells: each draw fits its own rows
        table.add_columns(*COLUMNS)
        rows = self.shown()
        laid = []
        for r in rows:
            session = self.sessions.get(r.session, r.session) if r.session else ""
            laid.append(
                [
                    Text(_when(r.at, self.app.config.localtime)),
                    Text(_cut(shown_agent(r.agent), 40)),
                    Text(visible(session, keep_tab=False)),
                    Text(
                        visible(r.kind, keep_tab=False),
                        style="bold red" if r.kind == refusals.REFUSED else "bold yellow",
                    ),
                    Text(visible(_cut(r.tool, 18), keep_tab=False)),
                    visible(r.where, keep_tab=False),
                    visible(_why(r.reason), keep_tab=False),
                ]
            )
        # the paths and why columns share the room the others leave (each cell has a space either
        # side, the table a scrollbar), cut with an ellipsis: the whole of both is in the detail below
        widths = [max([len(h), *(cell_len(str(cells[k])) for cells in laid)]) for k, h in enumerate(COLUMNS)]
        left = self.app.size.width - sum(w + 2 for w in widths[:-2]) - 4 - TABLE_CHROME
        # too little left for the paths and the why (a long tool's name, `update_frontmatter`, at 120
        # columns): the tool and then the agent give up their ends, else the table runs off the screen
        for k, least in ((COLUMNS.index("tool"), TOOL_LEAST), (COLUMNS.index("agent"), AGENT_LEAST)):
            short = PATHS_LEAST + WHY_WANT - left
            if short > 0 and widths[k] > least:
                given = min(short, widths[k] - least)
                widths[k] -= given
                left += given
                for cells in laid:
                    cells[k] = Text(_cut(str(cells[k]), widths[k]))  # (plain cells: tool, agent)
        paths = widths[-2] if widths[-2] + widths[-1] <= left else max(PATHS_LEAST, min(widths[-2], left // 2))
        room = max(WHY_LEAST, left - paths)
        for n, cells in enumerate(laid):
            cut = [Text(_cut(str(cells[-2]), paths)), Text(_cut(str(cells[-1]), room))]
            table.add_row(*cells[:-2], *cut, key=str(n))
        which = {None: "refused and declined", refusals.REFUSED: "refused", refusals.DECLINED: "declined"}[self.kind]
        title = Text(f"{len(rows)} {which} change{'s' if len(rows) != 1 else ''}, newest first", style="bold")
        if self.problem:
            title.append(f"\n{visible(self.problem, keep_tab=False)}", style="bold red")
        elif not rows:
            title.append("\nNo agent's change was refused or declined" + ("" if self.kind is None else " of that kind"))
        self.query_one("#refusals-title", Static).update(title)
        row = rows.index(selected) if selected is not None and selected in rows else 0
        if row:
            table.move_cursor(row=row)
        self._detail(row if rows else None)

    def _selected(self) -> refusals.Refusal | None:
        """The record under the table's cursor, of the rows drawn now (None before the first drawing)."""
        table = self.query_one(DataTable)
        shown = self.shown() if self.rows is not None else []
        return shown[table.cursor_row] if table.row_count and 0 <= table.cursor_row < len(shown) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)

    def _detail(self, row: int | None) -> None:
        """The selected record in full: every path it names and the whole reason."""
        detail = self.query_one("#refusals-detail", Static)
        rows = self.shown()
        if row is None or not 0 <= row < len(rows):
            detail.update("")
            return
        r = rows[row]
        shown = Text()
        shown.append(f"{r.kind} · {_when(r.at, self.app.config.localtime)} · ", style="bold")
        shown.append(shown_agent(r.agent), style="bold")
        if r.session:
            shown.append(f" · session {visible(self.sessions.get(r.session, r.session), keep_tab=False)}")
        # the tool, and the operation when it says more ("write" of a compat tool), not "rename rename"
        what = r.tool if r.operation in ("", r.tool) else f"{r.tool} ({r.operation})"
        shown.append(f"\n{visible(what, keep_tab=False)}\n")
        if r.operation == "rename" and len(r.paths) == 2:  # the record keeps a rename as (from, to)
            shown.append(f"  {visible(r.paths[0], keep_tab=False)} → {visible(r.paths[1], keep_tab=False)}\n")
        else:
            for path in r.paths:
                shown.append(f"  {visible(path, keep_tab=False)}\n")
        shown.append(f"why: {visible(r.reason, keep_tab=False)}")
        shown.append(
            "\n\n`vaultwatch refusals` lists these records too, and names the file that keeps them", style="dim"
        )
        detail.update(shown)

    def action_kind(self) -> None:
        """`k`: only the refused, only the declined, then both again."""
        order = (None, refusals.REFUSED, refusals.DECLINED)
        selected = self._selected()
        self.kind = order[(order.index(self.kind) + 1) % len(order)]
        if self.rows is not None:
            self._draw(selected)

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["RefusalsScreen"]
