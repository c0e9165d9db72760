"""Diffs on screen: unified and coloured, words highlighted inside changed lines, side by side when wide.

`render_change(...)` / `render_pending(...)` turn a journaled change or a waiting approval
into rich renderables (core.review.textdiff computes the diff); `DiffView` is the scrolling widget
the Changes view and the approval dialog show them in.
"""
from __future__ import annotations

import os
from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.review.textdiff import Diff, Line, text_diff

SIDE_BY_SIDE_MIN = 160  # columns from which a diff is shown side by side
MAX_LINES = 2000  # diff lines drawn; more are summarised

REMOVED = "on #3a1e1e"
ADDED = "on #1c361f"
REMOVED_WORD = "bold #ffffff on #8b2e2e"
ADDED_WORD = "bold #ffffff on #2c7a35"
GUTTER = "dim"


def _line_text(line: Line) -> Text:
    base = REMOVED if line.op == "-" else ADDED if line.op == "+" else ""
    word = REMOVED_WORD if line.op == "-" else ADDED_WORD
    text = Text(style=base)
    if line.words:
        for changed, part in line.words:
            text.append(part, style=word if changed else None)
    else:
        text.append(line.text)
    return text


def unified(diff: Diff, *, max_lines: int = MAX_LINES) -> Text:
    """One column: `@@` headers, line numbers, -/+ lines coloured, changed words in strong colour."""
    out = Text(no_wrap=False)
    drawn = 0
    for hunk in diff.hunks:
        out.append(hunk.header + "\n", style="bold cyan")
        for line in hunk.lines:
            if drawn >= max_lines:
                out.append(f"… {sum(len(h.lines) for h in diff.hunks) - drawn} more diff lines not shown\n",
                           style="italic dim")
                return out
            old = "" if line.old_no is None else str(line.old_no)
            new = "" if line.new_no is None else str(line.new_no)
            out.append(f"{old:>5} {new:>5} ", style=GUTTER)
            sign = {"-": ("-", "bold red"), "+": ("+", "bold green")}.get(line.op, (" ", ""))
            out.append(sign[0] + " ", style=sign[1])
            out.append_text(_line_text(line))
            out.append("\n")
            drawn += 1
    return out


def _pairs(lines: Iterable[Line]) -> list[tuple[Line | None, Line | None]]:
    rows: list[tuple[Line | None, Line | None]] = []
    removed: list[Line] = []
    added: list[Line] = []

    def flush() -> None:
        for k in range(max(len(removed), len(added))):
            rows.append((removed[k] if k < len(removed) else None, added[k] if k < len(added) else None))
        removed.clear()
        added.clear()

    for line in lines:
        if line.op == "-":
            removed.append(line)
        elif line.op == "+":
            added.append(line)
        else:
            flush()
            rows.append((line, line))
    flush()
    return rows


def side_by_side(diff: Diff, *, max_lines: int = MAX_LINES) -> Table:
    """Two columns, before | after, changed lines paired across."""
    table = Table.grid(expand=True, padding=(0, 1))
    table.add_column(width=5, justify="right", style=GUTTER)
    table.add_column(ratio=1)
    table.add_column(width=5, justify="right", style=GUTTER)
    table.add_column(ratio=1)
    drawn = 0
    for hunk in diff.hunks:
        table.add_row("", Text(hunk.header, style="bold cyan"), "", "")
        for left, right in _pairs(hunk.lines):
            if drawn >= max_lines:
                table.add_row("", Text("… more diff lines not shown", style="italic dim"), "", "")
                return table
            table.add_row("" if left is None or left.old_no is None else str(left.old_no),
                          _line_text(left) if left is not None else Text(""),
                          "" if right is None or right.new_no is None else str(right.new_no),
                          _line_text(right) if right is not None else Text(""))
            drawn += 1
    return table


def render_diff(before: bytes | None, after: bytes | None, width: int, *, diff: Diff | None = None) -> RenderableType:
    """The diff of two versions for a view `width` columns wide."""
    diff = diff or text_diff(before, after)
    if diff.binary:
        return Text(f"binary content ({len(before or b'')} -> {len(after or b'')} bytes)", style="italic")
    parts: list[RenderableType] = []
    if diff.frontmatter:
        fm = Text("frontmatter\n", style="bold")
        for key, old, new in diff.frontmatter:
            fm.append(f"  {key}: ", style="bold")
            if old is None:
                fm.append(f"{new!r}", style=ADDED_WORD).append("  (added)\n", style="dim")
            elif new is None:
                fm.append(f"{old!r}", style=REMOVED_WORD).append("  (removed)\n", style="dim")
            else:
                fm.append(f"{old!r}", style=REMOVED_WORD).append(" → ").append(f"{new!r}", style=ADDED_WORD)
                fm.append("\n")
        parts.append(fm)
    if diff.empty:
        parts.append(Text("no change in the text", style="italic dim"))
    else:
        parts.append(Text(f"+{diff.added} -{diff.removed} lines", style="dim"))
        parts.append(side_by_side(diff) if width >= SIDE_BY_SIDE_MIN else unified(diff))
    return Group(*parts)


def render_files(title: Text, files: list[tuple[str, str, bytes | None, bytes | None]], width: int,
                 lead: Iterable[RenderableType] = ()) -> RenderableType:
    """A header, lines before the files (a rename's move), then each (path, role, before, after) diffed."""
    parts: list[RenderableType] = [title, *lead]
    for path, role, before, after in files:
        label = {"links": "links rewritten in", "restored": "restored", "target": ""}.get(role, "")
        head = Text("\n")
        head.append(f"{label} " if label else "", style="dim")
        head.append(path, style="bold underline")
        if before is None:
            head.append("  (created)", style="green")
        elif after is None:
            head.append("  (removed)", style="red")
        parts.append(head)
        parts.append(render_diff(before, after, width))
    return Group(*parts)


class DiffView(VerticalScroll):
    """A scrolling view of one rendered diff."""

    DEFAULT_CSS = """
    DiffView { height: 1fr; }
    DiffView > Static { width: 100%; }
    """

    def compose(self):
        yield Static(id="diff-body")

    renderable: RenderableType = ""

    def show(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self.query_one("#diff-body", Static).update(renderable)
        self.scroll_home(animate=False)


def plain(renderable: RenderableType, width: int = 200) -> str:
    """The text of a renderable as a terminal `width` wide would show it (tests, benchmarks)."""
    from rich.console import Console  # noqa: PLC0415
    console = Console(width=width, record=True, file=open(os.devnull, "w"), color_system="truecolor")
    console.print(renderable)
    return console.export_text()


__all__ = ["DiffView", "plain", "SIDE_BY_SIDE_MIN", "render_diff", "render_files", "side_by_side", "unified"]
