"""The Broken tab's list: notes with frontmatter or encoding errors, and files the scan skipped."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.model import Entry

from .rowlist import Cell, Column, RowList


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken file: what is wrong and, for an indexed note, its entry."""

    path: str
    kind: str  # "frontmatter", "encoding" or "skipped"
    message: str
    entry: Entry | None = None


def problems_of(entries: Sequence[Entry], skipped: Sequence) -> list[Problem]:
    """Problem rows for problem notes (a problems_only query result) and skipped files."""
    rows: list[Problem] = []
    for e in entries:
        if e.frontmatter_error:
            rows.append(Problem(e.path, "frontmatter", e.frontmatter_error, e))
        if e.decode_error:
            rows.append(Problem(e.path, "encoding", "not valid UTF-8: undecodable bytes were replaced", e))
    rows.extend(Problem(s.path, "skipped", s.reason) for s in skipped)
    return rows


class ProblemList(RowList):
    """Broken notes and skipped files, each with its error."""

    empty_text = "Nothing is broken"

    def row_key(self, row: Problem) -> tuple[str, str]:
        return row.path, row.kind

    def all_columns(self) -> Sequence[Column]:
        width = self.scrollable_content_region.width
        return [
            Column("problem", "Problem", 20, flex=True, pos=2),
            Column("path", "Path", max(16, min(48, width * 2 // 5)), pos=0),
            Column("kind", "Kind", 11, pos=1),
        ]

    def cells(self, row: Problem, columns: Sequence[Column]) -> list[Cell]:
        values = {
            "path": (row.path, None),
            "kind": (row.kind, self.cstyle("rowlist--warn" if row.kind == "skipped" else "rowlist--error")),
            "problem": (row.message, None),
        }
        return [values[c.key] for c in columns]
