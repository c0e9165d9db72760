"""A three-way line merge on difflib: apply one side's edits and the other's onto their common base.

    result = merge3(base, ours, theirs)
    result.merged      # bytes, or None when an edit of one side overlaps one of the other
    result.conflicts   # the overlapping pairs: Hunk (their line ranges in base, ours and theirs)

Used to revert an agent's lines "anyway" after the note changed since: base is what the agent's
change wrote, ours is the note now (the later edit) and theirs is what was there before the
change; merging takes the later edit and the undo of the agent's lines together. Lines are kept
byte for byte (their endings included), so nothing the later edit wrote is restyled.

Two edits conflict when their base ranges overlap or touch (an insertion right at the edge of the
other's lines too): like diff3, only edits with an unchanged line between them are merged. Both
sides making the same edit is no conflict.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher


@dataclass(frozen=True, slots=True)
class Edit:
    """One side's edit: base lines [start, end) become `lines`."""

    start: int
    end: int
    lines: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class Hunk:
    """Two overlapping edits: the base lines [base_start, base_end) they cover together, and the
    lines each side's edit left (ours at [ours_start, ours_end) of ours, theirs likewise); 0-based,
    end exclusive."""

    base_start: int
    base_end: int
    ours_start: int
    ours_end: int
    theirs_start: int
    theirs_end: int


@dataclass(frozen=True, slots=True)
class MergeResult:
    merged: bytes | None
    conflicts: tuple[Hunk, ...]


def lines_of(data: bytes) -> list[bytes]:
    """Lines with their endings (LF or CRLF; a last line without one stays as it is)."""
    # splitlines would also split on form feeds and other separators a Markdown line may hold
    parts = data.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def edits(base: list[bytes], other: list[bytes]) -> list[Edit]:
    """The edits that turn `base` into `other`, in base order."""
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    return [Edit(i1, i2, tuple(other[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _touch(a: Edit, b: Edit) -> bool:
    return a.start <= b.end and b.start <= a.end


def _offset(edit_list: list[Edit], base_pos: int) -> int:
    """Where base line `base_pos` (not inside an edit) lands on that side."""
    shift = 0
    for e in edit_list:
        if e.end <= base_pos:
            shift += len(e.lines) - (e.end - e.start)
    return base_pos + shift


def merge3(base: bytes, ours: bytes, theirs: bytes) -> MergeResult:
    """Merge `ours` and `theirs`, both edited from `base` (see module doc)."""
    b = lines_of(base)
    mine = edits(b, lines_of(ours))
    other = edits(b, lines_of(theirs))
    conflicts: list[Hunk] = []
    for o in mine:
        for t in other:
            if _touch(o, t) and not (o.start == t.start and o.end == t.end and o.lines == t.lines):
                os_ = _offset(mine, o.start)
                ts_ = _offset(other, t.start)
                conflicts.append(
                    Hunk(
                        min(o.start, t.start),
                        max(o.end, t.end),
                        os_,
                        os_ + len(o.lines),
                        ts_,
                        ts_ + len(t.lines),
                    )
                )
    if conflicts:
        return MergeResult(None, tuple(conflicts))
    both = sorted({(e.start, e.end, e.lines): e for e in [*mine, *other]}.values(), key=lambda e: (e.start, e.end))
    out: list[bytes] = []
    at = 0
    for e in both:
        out.extend(b[at : e.start])
        out.extend(e.lines)
        at = e.end
    out.extend(b[at:])
    return MergeResult(b"".join(out), ())


@dataclass(frozen=True, slots=True)
class Region:
    """One hunk of a three-way view, aligned on the base: the lines each version has there, and
    which of them an edit touched (`theirs_changed`: the side edited from base differs here)."""

    base_start: int  # 0-based line of base where the hunk starts
    ours_start: int
    theirs_start: int
    base: tuple[bytes, ...]
    ours: tuple[bytes, ...]
    theirs: tuple[bytes, ...]
    ours_changed: bool
    theirs_changed: bool


def _start(edit_list: list[Edit], pos: int) -> int:
    # an insertion right at `pos` belongs to the hunk starting there, not before it
    return pos + sum(len(e.lines) - (e.end - e.start) for e in edit_list if e.end < pos or e.start < e.end == pos)


def regions(base: bytes, ours: bytes, theirs: bytes, context: int = 1) -> list[Region]:
    """Only the hunks where `ours` or `theirs` differ from `base`, each with `context` unchanged
    lines around it, the three versions aligned: what a person reads instead of three whole copies."""
    b, o, t = lines_of(base), lines_of(ours), lines_of(theirs)
    mine, other = edits(b, o), edits(b, t)
    spans: list[list[int]] = []
    for edit in sorted([*mine, *other], key=lambda x: (x.start, x.end)):
        if spans and edit.start <= spans[-1][1] + 2 * context:
            spans[-1][1] = max(spans[-1][1], edit.end)
        else:
            spans.append([edit.start, edit.end])
    out: list[Region] = []
    for start, end in spans:
        s, e = max(0, start - context), min(len(b), end + context)
        os_, oe = _start(mine, s), _offset(mine, e)
        ts, te = _start(other, s), _offset(other, e)
        out.append(
            Region(
                s,
                os_,
                ts,
                tuple(b[s:e]),
                tuple(o[os_:oe]),
                tuple(t[ts:te]),
                any(x.start < e and s < x.end or s <= x.start == x.end <= e for x in mine),
                any(x.start < e and s < x.end or s <= x.start == x.end <= e for x in other),
            )
        )
    return out


__all__ = ["Edit", "Hunk", "MergeResult", "Region", "edits", "lines_of", "merge3", "regions"]
