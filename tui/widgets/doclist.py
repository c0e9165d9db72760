"""The document list: notes of a core query result, one line each, with agent markers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.message import Message

from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.model import Entry
from vaultwatch.core.query import problems
from vaultwatch.core.review import triageviews
from vaultwatch.tui.marks import ago, short_agent
from vaultwatch.tui.session import Session
from vaultwatch.tui.widgets.rowlist import Cell, Column, RowList

SORT_CYCLE = ("path", "title", "modified", "size")
COLUMN_SORT = {"title": "title", "folder": "path", "modified": "modified", "stale": "overdue"}
SORT_WORDS = {"path": "path", "title": "title", "modified": "modified", "size": "size", "overdue": "overdue"}


def falls(sort: str, descending: bool) -> bool:
    """True when the sorted values go down the list (▼): core's "overdue" ascending puts the
    most overdue first, so its days fall."""
    return descending != (sort == "overdue")


def sort_label(sort: str, descending: bool) -> str:
    """The active sort in words, e.g. "modified ▼" (newest first), "path ▲"."""
    return f"{SORT_WORDS.get(sort, sort)} {'▼' if falls(sort, descending) else '▲'}"


TRUST_SHORT = {
    "unverified": "unverified",
    "machine-confirmed": "machine",
    "human-reviewed": "human",
    triageviews.CHANGED_SINCE_REVIEW: "changed",  # the preview says it in full
}
JOURNAL_SHORT = {"unverified": "unreviewed", "human-reviewed": "reviewed"}  # off a bundle: the journal's tiers


class DocList(RowList):
    """Notes with title, folder, status, trust tier, staleness, modified date and agent marks."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "cycle_sort", "Sort", id="list.sort"),
        Binding("r", "reverse_sort", "Reverse", show=False, id="list.reverse"),
        Binding("space", "toggle_pick", "Mark the row for the next action", show=False, id="list.mark"),
        Binding("shift+down", "pick_move(1)", "Mark the row and move down (a range)", show=False, id="list.mark_down"),
        Binding("shift+up", "pick_move(-1)", "Mark the row and move up (a range)", show=False, id="list.mark_up"),
        Binding("asterisk", "pick_all", "Mark every listed note (again: none)", show=False, id="list.mark_all"),
        Binding("c", "act('status')", "Status", id="list.status"),
        Binding("v", "act('verify')", "Mark human-reviewed", show=False, id="list.verify"),
        Binding("z", "act('snooze')", "Snooze stale (N days)", show=False, id="list.snooze"),
        Binding("e", "act('edit')", "Open in $EDITOR", show=False, id="list.edit"),
    ]
    empty_text = "No notes match"

    def __init__(
        self,
        session: Session,
        *,
        sort: str = "path",
        stale_header: str = "Stale",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.session = session
        self.sort = self.default_sort = sort
        self.descending = False
        self.stale_header = stale_header
        self._agent_column_considered = False
        self.picked: set[str] = set()  # paths marked for the next action (space)
        self.scope: str | None = None  # the folder the list is scoped to: titles name folders below it
        self.templates: tuple[str, ...] = ()  # the vault's templates folders as the rows came (Obsidian's settings)

    def set_scope(self, scope: str | None) -> None:
        if scope != self.scope:
            self.scope = scope
            self.invalidate()

    def folder_hint(self, folder: str) -> str:
        """A row's folder as its title shows it: relative to the scope ("" in the scope itself)."""
        scope = self.scope
        if not scope:
            return folder
        if folder == scope:
            return ""
        return folder[len(scope) + 1 :] if folder.startswith(scope + "/") else folder

    class _Posted(Message):
        """A message about one DocList (its `control`)."""

        def __init__(self, doclist: DocList) -> None:
            super().__init__()
            self.doclist = doclist

        @property
        def control(self) -> DocList:
            return self.doclist

    class SortChanged(_Posted):
        """The user asked for another sort order (the owner re-queries)."""

    class Act(_Posted):
        """The user asked for a triage action ("status", "verify", "snooze", "edit") on `targets`."""

        def __init__(self, doclist: DocList, action: str) -> None:
            super().__init__(doclist)
            self.action = action

    class PicksChanged(_Posted):
        """Rows were marked or unmarked (the owner shows the count)."""

    def targets(self) -> list[Entry]:
        """The marked rows (in list order), else the row under the cursor."""
        if self.picked:
            return [e for e in self.rows if e.path in self.picked]
        current = self.current
        return [current] if current is not None else []

    def set_rows(self, rows: Sequence[Any], *, empty: str | None = None, keep: bool = True) -> None:
        # read with the rows, as the Broken tab reads them with its query: a template's placeholder
        # frontmatter is not shown broken here while that tab leaves it out
        self.templates = problems.template_folders(self.session.vault.root)
        super().set_rows(rows, empty=empty, keep=keep)
        if self.picked:  # a mark on a row that left the list is dropped, never acted on unseen
            listed = {e.path for e in rows}
            if not self.picked <= listed:
                self.picked &= listed
                self.post_message(self.PicksChanged(self))

    def clear_picks(self) -> None:
        if self.picked:
            self.picked.clear()
            self.invalidate()
            self.post_message(self.PicksChanged(self))

    def action_toggle_pick(self) -> None:
        row = self.current
        if row is None:
            return
        self.picked.symmetric_difference_update({row.path})
        self.invalidate()
        self.post_message(self.PicksChanged(self))
        self.action_move(1)

    def action_pick_move(self, step: int) -> None:
        """Mark (or unmark) the row under the cursor and move on: shift+arrows mark a range."""
        row = self.current
        if row is None:
            return
        self.picked.symmetric_difference_update({row.path})
        self.invalidate()
        self.post_message(self.PicksChanged(self))
        self.action_move(step)

    def action_pick_all(self) -> None:
        """Mark every listed note for the next action, or, when they all are, none."""
        listed = {e.path for e in self.rows}
        self.picked = set() if listed and self.picked >= listed else listed
        self.invalidate()
        self.post_message(self.PicksChanged(self))

    def action_act(self, action: str) -> None:
        if self.current is not None:
            self.post_message(self.Act(self, action))

    def row_key(self, row: Entry) -> str:
        return row.path

    def row_keys(self, rows: Sequence[Entry]) -> Iterable[str]:
        return map(attrgetter("path"), rows)

    def all_columns(self) -> Sequence[Column]:
        """The columns in priority order (`rowlist.layout` keeps them while they fit). A column no
        note of the vault has a value for is left out, so the title gets its room (Obsidian's own
        vaults have no status, trust or stale dates); the Folder column is as wide as the folders
        it shows; Modified stays after agents' calls, and their Agent column comes beside it
        only when there is room."""
        marks = bool(self.session.marks.by_path)
        self._agent_column_considered = marks
        filled = filled_columns(self.session.snapshot, self.templates)
        cols = [Column("title", "Title", 14, flex=True, pos=1), Column("mark", "", 1, pos=0)]
        if "status" in filled:
            cols.append(Column("status", "Status", 10, pos=3))
        if "stale" in filled or self.stale_header != "Stale":
            cols.append(Column("stale", self.stale_header, max(7, len(self.stale_header) + 2), right=True, pos=5))
        if "trust" in filled or self.session.reviews.unreviewed or self.session.reviews.reviewed:
            cols.append(Column("trust", "Trust", 10, pos=4))
        cols += [
            Column("modified", "Modified", 10, pos=6),
            Column("folder", "Folder", self._folder_width(), pos=2),
        ]
        if marks:
            cols.append(Column("agent", "Agent", 14, pos=7))
        return cols

    def _folder_width(self) -> int:
        """The widest folder among the first rows (the ones the person sees first), within 8..22."""
        rows = self.rows
        widest = max((cell_len(rows[i].folder or "/") for i in range(min(len(rows), FOLDER_SAMPLE))), default=22)
        return max(8, min(22, widest))  # "Folder ▲" at least

    def header_label(self, column: Column) -> str:
        """The sorted column carries the arrow; when that column is not shown at this width
        (Folder for path, size has none) the title says the sort: "Title · path ▲"."""
        arrow = "▼" if falls(self.sort, self.descending) else "▲"
        if COLUMN_SORT.get(column.key) == self.sort:
            return f"{column.label} {arrow}"
        if column.key == "title":
            shown = {c.key for c in (self._layout[2] if self._layout else ())}
            if not any(COLUMN_SORT.get(key) == self.sort for key in shown):
                return f"{column.label} · {sort_label(self.sort, self.descending)}"
        return column.label

    @property
    def sort_cycle(self) -> tuple[str, ...]:
        """What `s` steps through: this list's own default sort first (the Stale tab's overdue)."""
        return (self.default_sort, *(s for s in SORT_CYCLE if s != self.default_sort))

    def cells(self, row: Entry, columns: Sequence[Column]) -> list[Cell]:
        session = self.session
        bundle = session.snapshot.is_bundle
        folder_shown = any(c.key == "folder" for c in columns)
        # a note whose frontmatter does not parse is said in its title when no Status column says it
        # (a vault that uses no status property has none), so the list never hides it
        flagged = not any(c.key == "status" for c in columns) and problems.broken_frontmatter(row, self.templates)
        out: list = []
        for col in columns:
            key = col.key
            if key == "title":
                hint = "" if folder_shown else self.folder_hint(row.folder)
                if flagged:  # the whole words when they fit, else the Status column's one; the title is cut first
                    width = col.width - (2 if row.path in self.picked else 0)
                    tag = BROKEN_TAG if cell_len(row.title) + cell_len(BROKEN_TAG) <= width else BROKEN_SHORT
                    room = max(1, width - cell_len(tag))
                    title = row.title if cell_len(row.title) <= room else set_cell_size(row.title, room - 1) + "…"
                    out.append([(title, None), (tag, self.cstyle("rowlist--error"))])
                elif not hint or cell_len(row.title) + 8 > col.width:
                    out.append((row.title, None))
                else:  # no folder column at this width: the folder follows the title, dimmed
                    out.append([(row.title, None), ("  ", None), (hint, self.cstyle("rowlist--dim"))])
                if row.path in self.picked:
                    cell = out[-1]
                    out[-1] = [
                        ("✓ ", self.cstyle("rowlist--accent") + Style(bold=True)),
                        *(cell if isinstance(cell, list) else [cell]),
                    ]
            elif key == "folder":
                out.append((row.folder or "/", self.cstyle("rowlist--dim")))
            elif key == "status":
                status = triageviews.status_shown(row, bundle, self.templates)
                style = None
                if status == "deprecated" or problems.broken_frontmatter(row, self.templates):
                    style = self.cstyle("rowlist--error")
                elif status == "draft":
                    style = self.cstyle("rowlist--warn")
                out.append((status, style))
            elif key == "stale":
                days = triageviews.overdue_days(row, session.snapshot, session.triage_rules, session.clock)
                out.append(("" if days is None else f"{days}d", self.cstyle("rowlist--warn")))
            elif key == "trust":  # the word core.review.triageviews gives the note, shortened
                word = triageviews.trust_word(row, session.snapshot, session.reviews)
                if bundle:
                    tier = TRUST_SHORT.get(word, word)
                    shade = {"human": "rowlist--ok", "unverified": "rowlist--dim", "changed": "rowlist--warn"}
                    style = self.cstyle(shade[tier]) if tier in shade else None
                else:  # the journal's tiers: an agent's change waits, or was reviewed
                    tier = JOURNAL_SHORT.get(word, "")
                    style = self.cstyle("rowlist--warn") if tier == "unreviewed" else self.cstyle("rowlist--ok")
                out.append((tier, style))
            elif key == "modified":
                out.append((row.modified_at[:10], self.cstyle("rowlist--dim")))
            elif key == "mark":
                mark = session.marks.get(row.path)
                if mark is None:
                    out.append(("", None))
                else:
                    glyph = "○" if mark.kind == "listed" else ("✎" if mark.kind == "wrote" else "●")
                    out.append((glyph, Style(color=session.colors(mark.agent), bold=True)))
            elif key == "agent":
                mark = session.marks.get(row.path)
                if mark is None:
                    out.append(("", None))
                else:
                    text = f"{ago(session.now() - mark.at):>3} {short_agent(mark.agent)}"
                    out.append((text, Style(color=session.colors(mark.agent))))
            else:
                out.append(("", None))
        return out

    def marks_changed(self, paths: tuple[str, ...]) -> None:
        """Agents touched `paths`: redraw if any is on screen (or the Agent column must appear)."""
        if self._layout is None or not self._agent_column_considered:
            self.invalidate()  # the first marks bring the Agent column
            return
        top = int(self.scroll_y)
        shown = {e.path for e in self.rows[top : top + self.size.height]}
        if not shown.isdisjoint(paths):
            self._lines.clear()
            self.refresh()

    def action_cycle_sort(self) -> None:
        cycle = self.sort_cycle
        current = cycle.index(self.sort) if self.sort in cycle else -1
        self.sort = cycle[(current + 1) % len(cycle)]
        self.descending = self.sort == "modified"
        self.invalidate()
        self.post_message(self.SortChanged(self))

    def action_reverse_sort(self) -> None:
        self.descending = not self.descending
        self.invalidate()
        self.post_message(self.SortChanged(self))

    def on_row_list_header_clicked(self, event: RowList.HeaderClicked) -> None:
        sort = COLUMN_SORT.get(event.column)
        if sort is None:
            return
        event.stop()
        if sort == "overdue" and not self.session.snapshot.is_bundle:
            return
        if sort == self.sort:
            self.descending = not self.descending
        else:
            self.sort, self.descending = sort, sort == "modified"
        self.invalidate()
        self.post_message(self.SortChanged(self))


FOLDER_SAMPLE = 2000  # rows whose folders size the Folder column
# after a title when no Status column says it: the preview's words, or the Status column's when narrow
BROKEN_TAG, BROKEN_SHORT = "  broken frontmatter", f"  {triageviews.BROKEN}"


def _filled(entries: Iterable[Entry], bundle: bool, templates: tuple[str, ...]) -> frozenset[str]:
    found: set[str] = set()
    for e in entries:
        if e is None or e.kind != "note":
            continue
        # the column is for a vault's own status values: frontmatter that does not parse is no
        # status (the row's title says it, `DocList.cells`)
        if not problems.broken_frontmatter(e, templates) and triageviews.status_shown(e, bundle, templates):
            found.add("status")
        if bundle:
            found.add("trust")
            if e.stale_date or e.stale_instant:
                found.add("stale")
        if len(found) == 3:
            break
    return frozenset(found)


def filled_columns(snapshot: Snapshot, templates: tuple[str, ...] = ()) -> frozenset[str]:
    """Which of the optional columns ("status", "trust", "stale") some note of the vault has a
    value for (a template's placeholder frontmatter is none: `templates`, the templates folders):
    one pass a generation, then the changed notes only (a column stays until the next full pass
    after its last value went)."""
    bundle = snapshot.is_bundle

    def patch(old: frozenset[str], base: Snapshot, changed: frozenset[str]) -> frozenset[str] | None:
        if base.is_bundle != bundle:
            return None
        return old | _filled((snapshot.get(p) for p in changed), bundle, templates)  # type: ignore[misc]

    key = ("tui.doclist", "filled", templates)
    return snapshot.cached(key, lambda: _filled(snapshot.entries, bundle, templates), patch)
