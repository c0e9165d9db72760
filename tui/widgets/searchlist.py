"""Full-text search hits: ranked notes with their snippet, the matched words highlighted.

The hits are core's (`Vault.search`, the index and ranking the MCP `search` tool answers from);
this list only draws them. `e` opens the hit in $EDITOR, as on every tab. When the cursor comes
within NEAR_END rows of the last hit, `on_near_end` (tui.flows.searching's next page) is called.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from textual.binding import Binding, BindingType

from vaultwatch.core.search.fulltext import SearchHit
from vaultwatch.tui.widgets.problems import ProblemList
from vaultwatch.tui.widgets.rowlist import Cell, Column, RowList

TITLE_SAMPLE = 200  # hits whose titles and folders size their columns


class SearchList(RowList):
    """One row per hit, best first: title, the snippet with its highlights, folder."""

    empty_text = "No note contains these words"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit", "Open in $EDITOR", show=False, id="search.edit"),
    ]

    on_near_end: Callable[[], None] | None = None  # set by the screen: loads the next page of hits
    NEAR_END = 5

    def row_key(self, row: SearchHit) -> str:
        return row.path

    def near_end(self) -> None:
        """Ask for more hits when the cursor is within NEAR_END rows of the last one."""
        if self.on_near_end is not None and self.rows and self.cursor >= len(self.rows) - self.NEAR_END:
            self.on_near_end()

    def _move_to(self, index: int) -> None:
        super()._move_to(index)
        self.near_end()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        # the mouse wheel scrolls without moving the cursor: the last rows in view load more too
        if (
            self.on_near_end is not None
            and self.rows
            and int(new) + self._body_height() >= len(self.rows) - self.NEAR_END
        ):
            self.on_near_end()

    def action_edit(self) -> None:
        row = self.current
        if row is not None:
            self.post_message(ProblemList.Edit(row.entry))

    def all_columns(self) -> Sequence[Column]:
        # titles as wide as the hits' up to a third of the list (two hits no longer both
        # read "An Introductio…"), the folder as wide as theirs; the match takes the rest
        width = self.scrollable_content_region.width
        rows = self.rows[:TITLE_SAMPLE]
        titles = max((cell_len(r.title) for r in rows), default=14)
        folder = max(8, min(18, max((cell_len(r.entry.folder or "/") for r in rows), default=8)))
        return [
            Column("title", "Title", max(14, min(titles, width // 3)), pos=0),
            Column("snippet", "Match", 24, flex=True, pos=1),
            Column("folder", "Folder", folder, pos=2),
        ]

    def cells(self, row: SearchHit, columns: Sequence[Column]) -> list[Cell]:
        out: list = []
        for col in columns:
            if col.key == "title":
                out.append((row.title, None))
            elif col.key == "folder":
                out.append((row.entry.folder or "/", self.cstyle("rowlist--dim")))
            else:
                out.append(snippet_cells(row, self.cstyle("rowlist--accent") + Style(bold=True), col.width))
        return out


def snippet_cells(hit: SearchHit, mark: Style, width: int = 0) -> list[tuple[str, Style | None]]:
    """The hit's plain snippet as (text, style) runs, the matched spans in `mark`; when the first
    match would fall past a third of `width`, the text before it is shortened to "…" and a few
    words of context, so the match is on screen."""
    plain, at = hit.snippet_plain, 0
    pieces: list[tuple[str, Style | None]] = []
    spans = sorted(hit.highlights)
    lead = width // 3
    if width and spans and spans[0][0] > lead:
        cut = spans[0][0] - max(0, lead - 1)
        space = plain.find(" ", cut, spans[0][0])
        cut = space + 1 if space >= 0 else cut
        pieces.append(("…", None))
        plain, spans = plain[cut:], [(a - cut, b - cut) for a, b in spans if a >= cut]
    for start, end in spans:
        if start < at or end > len(plain):
            continue
        if start > at:
            pieces.append((plain[at:start], None))
        pieces.append((plain[start:end], mark))
        at = end
    if at < len(plain):
        pieces.append((plain[at:], None))
    return pieces or [("", None)]
