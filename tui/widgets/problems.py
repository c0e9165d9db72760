"""The Broken tab's list: one row per problem (core.query.problems), by kind: missing headings,
blocks and embeds, invalid frontmatter, undecodable notes, skipped files, then links to notes
not yet written. Enter previews the note at the problem's line; `e` opens $EDITOR there."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len, set_cell_size
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message

from vaultwatch.core.model import Entry
from vaultwatch.core.query import problems
from vaultwatch.tui.widgets.rowlist import Cell, Column, RowList

if TYPE_CHECKING:
    from vaultwatch.core.index.snapshot import Snapshot

KIND_WIDTH = max(len(label) for label in problems.LABELS.values())
PATH_LEAST = 16  # the Path column's least width: a file name and its line
PATH_MOST = 48  # and its most: past it the problem's text is worth more
FOLDER_START = 10  # what the path claims of its folders before the longest link: a word and `…/`
PROBLEM_LEAST = 12  # the Problem column's least width: a short link whole
PROBLEM_MOST = 40  # past this a link is cut in its middle (its end stays) rather than take the path's room


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem of one file (a row of core.query.problems), with the note's entry when it is
    indexed (a skipped file has none) and its line when known."""

    path: str
    kind: str  # core.query.problems.KINDS
    message: str
    entry: Entry | None = None
    line: int | None = None
    link: str = ""  # the link at fault as the message starts with it (`[[Note#Heading]]`), or ""


def problems_of(entries: Sequence[Entry], snapshot: Snapshot, root: str, root_real: str) -> list[Problem]:
    """The Broken tab's rows for a `broken` query's notes (the folder scope and the filter
    applied), and every skipped file: core's problems of those files, at their lines."""
    listed = {e.path: e for e in entries}
    found = [p for p in problems.vault_problems(snapshot, root) if p.path in listed or p.kind == problems.SKIPPED]
    return [
        Problem(p.path, p.kind, p.message, listed.get(p.path), p.line, shown_link(p))
        for p in problems.locate(root_real, found)
    ]


def shown_link(problem: problems.Problem) -> str:
    """The link a link problem's message starts with (what the Problem column keeps readable)."""
    if problem.link is None:
        return ""
    text = problems.shown_link(problem.link)
    return text if problem.message.startswith(text) else ""


def problem_count(entries: Sequence[Entry], snapshot: Snapshot, root: str) -> int:
    """What the Broken tab counts for a `broken` query's notes: their real problems (links to
    notes not yet written are listed, not counted) and the skipped files."""
    listed = {e.path for e in entries}
    found = problems.vault_problems(snapshot, root)
    return problems.tally(p for p in found if p.path in listed or p.kind == problems.SKIPPED).broken


class ProblemList(RowList):
    """Broken notes and skipped files, each with its error."""

    empty_text = "Nothing is broken"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit", "Open in $EDITOR", show=False, id="broken.edit"),
    ]

    class Edit(Message):
        """The user asked to open a broken note in $EDITOR (at the problem's line)."""

        def __init__(self, entry: Entry, line: int | None = None) -> None:
            super().__init__()
            self.entry = entry
            self.line = line

    def action_edit(self) -> None:
        row = self.current
        if row is not None and row.entry is not None:  # a skipped file has no note to open
            self.post_message(self.Edit(row.entry, row.line))

    def row_key(self, row: Problem) -> tuple[str, str, str, int | None]:
        return row.path, row.kind, row.message, row.line

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """The row under the pointer says its whole problem in a tooltip (the Problem and Path
        columns cut long ones: a note's unresolved links, a long YAML error)."""
        offset = event.get_content_offset(self)
        index = int(self.scroll_y) + offset.y - 1 if offset is not None and offset.y > 0 else -1
        self.tooltip = full_text(self.rows[index]) if 0 <= index < len(self.rows) else None

    def all_columns(self) -> Sequence[Column]:
        # The room goes first to what tells rows apart, the path's file name and line (as compilers
        # write it) and the problem's link, each as wide as three rows in four need: one long link
        # or name does not take the room of every other row; then to the start of the folder three
        # rows in four are in (a word of it: where the note is), the longest link (up to
        # PROBLEM_MOST), the longest path (up to PATH_MOST), and the rest to the problem (a link cut
        # keeps its end). The Kind column only where the rows' kinds differ and the path keeps a
        # third of the list beside it (the line above the list counts the kinds).
        width = self.scrollable_content_region.width
        rows = self.rows
        problem = min(PROBLEM_MOST, max(PROBLEM_LEAST, typical(problem_need(r) for r in rows)))
        kind = len({r.kind for r in rows}) > 1 and width >= problem + KIND_WIDTH + 2 + width // 3
        room = width - (KIND_WIDTH + 2) if kind else width - 1  # the path's and the problem's
        named = typical(cell_len(where(r, named=True)) for r in rows)
        path = max(PATH_LEAST, width // 3, min(named, room - problem))
        path = min(path, PATH_MOST)
        wants = [
            # the folders three rows in four sit in before the one longest link: a folder named on
            # most rows tells them apart where a long link is on one row only
            ("path", min(typical(cell_len(where(r)) for r in rows), named + FOLDER_START)),
            ("problem", max((problem_need(r) for r in rows), default=0)),
            ("path", max((cell_len(where(r)) for r in rows), default=0)),
        ]
        for column, want in wants:  # each as far as the room left allows
            left = room - path - problem
            if column == "path":
                path += max(0, min(left, min(want, PATH_MOST) - path))
            else:
                problem += max(0, min(left, min(want, PROBLEM_MOST) - problem))
        columns = [
            Column("problem", "Problem", max(1, min(problem, room - path)), flex=True, pos=2),
            Column("path", "Path:line", path, pos=0),
        ]
        return [*columns, Column("kind", "Kind", KIND_WIDTH, pos=1)] if kind else columns

    def cells(self, row: Problem, columns: Sequence[Column]) -> list[Cell]:
        out: list[Cell] = []
        for col in columns:
            if col.key == "path":
                suffix = f":{row.line}" if row.line else ""
                room = col.width - len(suffix)
                shown = elide_path(row.path, room)
                if cell_len(shown) > room:  # a long file name alone: cut it, keep the line
                    shown = set_cell_size(shown, room - 1) + "…"
                out.append((shown + suffix, None))
            elif col.key == "kind":
                style = "rowlist--error"
                if row.kind in (problems.SKIPPED, problems.UNWRITTEN):  # not the note's text at fault
                    style = "rowlist--warn"
                out.append((problems.LABELS.get(row.kind, row.kind), self.cstyle(style)))
            else:
                out.append((problem_text(row, col.width), None))
        return out


def problem_need(problem: Problem) -> int:
    """The cells that tell a row's problem from the next one's: its link (what follows the link is
    dropped first), or the start of a message without one."""
    return cell_len(problem.link) if problem.link else min(cell_len(problem.message), PROBLEM_LEAST)


def typical(needs: Iterable[int]) -> int:
    """The width three rows in four need at most (0 for none): what one long row needs is not
    taken from every other row's other columns."""
    ordered = sorted(needs)
    return ordered[(len(ordered) - 1) * 3 // 4] if ordered else 0


def where(problem: Problem, *, named: bool = False) -> str:
    """`path:line` (the path alone when the line is not known); `named`: its file name alone, as a
    cut path keeps it (`…/name:line`)."""
    path = problem.path
    if named and "/" in path:
        path = "…/" + path.rsplit("/", 1)[1]
    return f"{path}:{problem.line}" if problem.line else path


def full_text(problem: Problem) -> str:
    """A problem's path, line, kind and whole message, for its tooltip."""
    return f"{where(problem)}\n{problems.LABELS.get(problem.kind, problem.kind)}: {problem.message}"


def problem_text(problem: Problem, width: int) -> str:
    """A problem's message in `width` cells. A link that does not fit loses the middle of its
    target, not its end: rows of one note's links differ only in the heading or block
    (`[[Obsidian Core…#Bookmarks]]` beside `[[Obsidian Core…#None]]`); what follows the link
    is dropped first (the tooltip has it)."""
    message, link = problem.message, problem.link
    if not link or cell_len(message) <= width or cell_len(link) < width:
        return message  # fits, or the link fits with room for the cut's ellipsis
    return elide_link(link, width)


def elide_link(link: str, width: int) -> str:
    """`link` in `width` cells, cut in its target so that its end stays: from the heading or
    block (`#Heading]]`, `#^block)`) when it has one, else its closing brackets."""
    if cell_len(link) <= width:
        return link
    cut = link.find("#")
    if cut < 0:
        cut = len(link.rstrip("])"))
    head, tail = link[:cut], link[cut:]
    room = width - cell_len(tail) - 1  # "…" between them
    if room >= 3:  # `[[` and a letter of the target at least
        return set_cell_size(head, room).rstrip(" ") + "…" + tail
    # a heading too long for the column: a third for the link's start (`[[#` says a heading
    # of this note), the rest for its end, which is what differs between rows
    start = set_cell_size(link, (width - 1) // 3).rstrip(" ") if width > 3 else ""
    end = link
    while end and cell_len(end) > width - 1 - cell_len(start):
        end = end[1:]
    return start + "…" + end


def elide_path(path: str, width: int) -> str:
    """`path` in `width` cells, its folders shortened first: `Projects/…/Retired Plan.md` keeps
    the file name, which is what tells notes apart."""
    if cell_len(path) <= width or "/" not in path:
        return path
    folder, name = path.rsplit("/", 1)
    room = width - cell_len(name) - 2  # "…/" before the name
    if room <= 0:
        return "…/" + name if cell_len(name) + 2 <= width else name
    head = ""
    for part in folder.split("/"):
        step = part if not head else f"{head}/{part}"
        if cell_len(step) + 1 > room:
            break
        head = step
    if head:
        return f"{head}/…/{name}"
    first = folder.split("/", 1)[0]
    return f"{set_cell_size(first, room - 1)}…/{name}" if room > 2 else f"…/{name}"
