"""The Broken tab's list: notes with unresolved links, frontmatter or encoding errors, and files the scan skipped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message

from vaultwatch.core.model import Entry

from .rowlist import Cell, Column, RowList


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken file: what is wrong and, for an indexed note, its entry."""

    path: str
    kind: str  # "frontmatter", "encoding", "links" or "skipped"
    message: str
    entry: Entry | None = None


def _shown(link) -> str:
    if link.kind == "markdown":
        return f"({link.target})"
    return (
        ("!" if link.kind == "embed" else "") + f"[[{link.target}" + (f"#{link.heading}" if link.heading else "") + "]]"
    )


def problems_of(entries: Sequence[Entry], skipped: Sequence, unresolved: dict | None = None) -> list[Problem]:
    """Problem rows for broken notes (a `broken` query result), with their unresolved links
    (core.links.graph.unresolved_by_note), and skipped files."""
    rows: list[Problem] = []
    unresolved = unresolved or {}
    for e in entries:
        links = unresolved.get(e.path)
        if links:
            shown = ", ".join(_shown(r.link) for r in links[:5]) + (
                f" and {len(links) - 5} more" if len(links) > 5 else ""
            )
            what = "links to no file" if all(r.missing == "file" for r in links) else "unresolved links"
            rows.append(Problem(e.path, "links", f"{what}: {shown}", e))
        if e.frontmatter_error:
            rows.append(Problem(e.path, "frontmatter", e.frontmatter_error, e))
        if e.decode_error:
            rows.append(Problem(e.path, "encoding", "not valid UTF-8: undecodable bytes were replaced", e))
    rows.extend(Problem(s.path, "skipped", s.reason) for s in skipped)
    return rows


class ProblemList(RowList):
    """Broken notes and skipped files, each with its error."""

    empty_text = "Nothing is broken"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit", "Open in $EDITOR", show=False, id="broken.edit"),
    ]

    class Edit(Message):
        """The user asked to open a broken note in $EDITOR."""

        def __init__(self, entry: Entry) -> None:
            super().__init__()
            self.entry = entry

    def action_edit(self) -> None:
        row = self.current
        if row is not None and row.entry is not None:  # a skipped file has no note to open
            self.post_message(self.Edit(row.entry))

    def row_key(self, row: Problem) -> tuple[str, str]:
        return row.path, row.kind

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """The row under the pointer says its whole problem in a tooltip (the Problem and Path
        columns cut long ones: a note's unresolved links, a long YAML error)."""
        offset = event.get_content_offset(self)
        index = int(self.scroll_y) + offset.y - 1 if offset is not None and offset.y > 0 else -1
        self.tooltip = full_text(self.rows[index]) if 0 <= index < len(self.rows) else None

    def all_columns(self) -> Sequence[Column]:
        # the path as wide as the longest one needs, up to 2/5 of the list; the rest is the problem's
        width = self.scrollable_content_region.width
        longest = max((cell_len(r.path) for r in self.rows), default=16)
        return [
            Column("problem", "Problem", 20, flex=True, pos=2),
            Column("path", "Path", max(16, min(longest, 48, width * 2 // 5)), pos=0),
            Column("kind", "Kind", 11, pos=1),
        ]

    def cells(self, row: Problem, columns: Sequence[Column]) -> list[Cell]:
        out: list[Cell] = []
        for col in columns:
            if col.key == "path":
                out.append((elide_path(row.path, col.width), None))
            elif col.key == "kind":
                out.append((row.kind, self.cstyle("rowlist--warn" if row.kind == "skipped" else "rowlist--error")))
            else:
                out.append((row.message, None))
        return out


def full_text(problem: Problem) -> str:
    """A problem's path, kind and whole message, for its tooltip."""
    return f"{problem.path}\n{problem.kind}: {problem.message}"


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
