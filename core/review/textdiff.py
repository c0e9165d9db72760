"""Diffs of two versions of a note, as data for any view: hunks of lines, words inside changed lines.

    diff = text_diff(before, after)         # Diff(hunks=[Hunk(...)], added=3, removed=1)
    for hunk in diff.hunks:
        for line in hunk.lines:             # Line(op=" "|"-"|"+", text, old_no, new_no, words)
            ...

Lines common to both ends are set aside before matching, so an edit in a 1 MB note costs a
pass over its lines, not a quadratic match. Inside a block of replaced lines, lines are
paired up and each pair is diffed by words (`words`: (changed, text) segments), as review
tools show it. Very long blocks and lines fall back to whole-line changes. A hunk's lines
and words are computed when first read (`Hunk.lines`), so a view that shows one screenful
of a diff with thousands of hunks pays for that screenful.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core.markdown.linebreaks import markdown_lines

CONTEXT = 3
MAX_WORD_LINE = 2000  # characters: longer lines are shown changed as a whole
MAX_WORD_BLOCK = 200  # line pairs per block diffed by words
_WORDS = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Line:
    op: str  # " " context, "-" removed, "+" added
    text: str
    old_no: int | None
    new_no: int | None
    words: tuple[tuple[bool, str], ...] = ()  # word-level segments (changed?, text) of a paired line


class Hunk:
    """One hunk: its line ranges and, on first use, its lines (words inside paired changed lines).

    A 1 MB note rewritten on every tenth line has some 1,500 hunks; a view shows a screenful,
    so a hunk's lines and word diffs are computed when something reads them, not up front."""

    __slots__ = ("old_start", "old_count", "new_start", "new_count", "_ops", "_a", "_b", "_lines")

    def __init__(
        self,
        old_start: int,
        old_count: int,
        new_start: int,
        new_count: int,
        lines: tuple[Line, ...] | None = None,
        *,
        ops: list[tuple[str, int, int, int, int]] | None = None,
        a: list[str] | None = None,
        b: list[str] | None = None,
    ) -> None:
        self.old_start, self.old_count, self.new_start, self.new_count = old_start, old_count, new_start, new_count
        self._ops, self._a, self._b = ops or [], a or [], b or []
        self._lines = lines

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"

    @property
    def lines(self) -> tuple[Line, ...]:
        if self._lines is None:
            self._lines = _hunk_lines(self._ops, self._a, self._b)
        return self._lines

    def rows(self, paired: bool = False) -> int:
        """Lines this hunk shows, without computing them: one column (-, + and context lines each
        a row), or `paired` side by side (a removed and an added line share a row)."""
        if self._lines is not None and not paired:
            return len(self._lines)
        total = 0
        for tag, i1, i2, j1, j2 in self._ops:
            if tag == "equal":
                total += i2 - i1
            elif paired:
                total += max(i2 - i1, j2 - j1)
            else:
                total += (i2 - i1) + (j2 - j1)
        return total

    def texts(self) -> list[str]:
        """The text of each line the one-column view shows (context, removed and added lines),
        without computing the lines or their word diffs (a view sizing a hunk it does not draw)."""
        out: list[str] = []
        for tag, i1, i2, j1, j2 in self._ops:
            if tag in ("equal", "replace", "delete"):
                out.extend(self._a[i1:i2])
            if tag in ("replace", "insert"):
                out.extend(self._b[j1:j2])
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hunk) and self.header == other.header and self.lines == other.lines

    def __repr__(self) -> str:
        return f"Hunk({self.header})"


def _hunk_lines(group: list[tuple[str, int, int, int, int]], a: list[str], b: list[str]) -> tuple[Line, ...]:
    lines: list[Line] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines.extend(Line(" ", a[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2))
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" and min(i2 - i1, j2 - j1) <= MAX_WORD_BLOCK else 0
        old_words: dict[int, tuple] = {}
        new_words: dict[int, tuple] = {}
        for k in range(pairs):
            x, y = a[i1 + k], b[j1 + k]
            if len(x) <= MAX_WORD_LINE and len(y) <= MAX_WORD_LINE:
                old_words[k], new_words[k] = word_segments(x, y)
        lines.extend(Line("-", a[i], i + 1, None, old_words.get(i - i1, ())) for i in range(i1, i2))
        lines.extend(Line("+", b[j], None, j + 1, new_words.get(j - j1, ())) for j in range(j1, j2))
    return tuple(lines)


@dataclass(frozen=True, slots=True)
class Diff:
    hunks: tuple[Hunk, ...]
    added: int
    removed: int
    binary: bool = False
    frontmatter: tuple[tuple[str, Any, Any], ...] = field(default=())  # (key, before, after) of changed keys

    @property
    def empty(self) -> bool:
        return not self.hunks


def _decode(data: bytes | str | None) -> tuple[str, bool]:
    if data is None:
        return "", False
    if isinstance(data, str):
        return data, False
    if b"\x00" in data[:8192]:
        return "", True
    return data.decode("utf-8", "replace"), False


def word_segments(old: str, new: str) -> tuple[tuple[tuple[bool, str], ...], tuple[tuple[bool, str], ...]]:
    """(old segments, new segments): each (changed, text), from a word-level match of two lines."""
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    out_a: list[tuple[bool, str]] = []
    out_b: list[tuple[bool, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if i2 > i1:
            out_a.append((tag != "equal", "".join(a[i1:i2])))
        if j2 > j1:
            out_b.append((tag != "equal", "".join(b[j1:j2])))
    return _merge(out_a), _merge(out_b)


def _merge(segments: list[tuple[bool, str]]) -> tuple[tuple[bool, str], ...]:
    merged: list[tuple[bool, str]] = []
    for changed, text in segments:
        if merged and merged[-1][0] == changed:
            merged[-1] = (changed, merged[-1][1] + text)
        else:
            merged.append((changed, text))
    return tuple(merged)


def _matches(
    a: list[str], b: list[str], alo: int, ahi: int, blo: int, bhi: int, out: list[tuple[int, int]], depth: int = 0
) -> None:
    """Matched line pairs (i, j) of a[alo:ahi] and b[blo:bhi], in order: a patience diff.

    Common ends are matched first; then lines that occur exactly once on each side anchor
    the match (their longest increasing run), and the gaps between anchors recurse. A gap
    with no unique line falls back to difflib when small, else stays unmatched.
    """
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        out.append((alo, blo))
        alo += 1
        blo += 1
    tail: list[tuple[int, int]] = []
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
        ahi -= 1
        bhi -= 1
        tail.append((ahi, bhi))
    if alo < ahi and blo < bhi:
        count_a: dict[str, int] = {}
        for i in range(alo, ahi):
            count_a[a[i]] = -1 if a[i] in count_a else i
        count_b: dict[str, int] = {}
        for j in range(blo, bhi):
            count_b[b[j]] = -1 if b[j] in count_b else j
        get = count_b.get
        pairs = [(i, j) for line, i in count_a.items() if i >= 0 and (j := get(line, -1)) >= 0]
        pairs.sort()
        anchors = _increasing(pairs) if pairs and depth < 64 else []
        if anchors:
            pi, pj = alo, blo
            for i, j in anchors:
                if pi < i and pj < j:
                    _matches(a, b, pi, i, pj, j, out, depth + 1)
                out.append((i, j))
                pi, pj = i + 1, j + 1
            if pi < ahi and pj < bhi:
                _matches(a, b, pi, ahi, pj, bhi, out, depth + 1)
        elif (ahi - alo) * (bhi - blo) <= 250_000 and not set(a[alo:ahi]).isdisjoint(b[blo:bhi]):
            # (a gap with no line in common, as where every tenth line changed, matches nothing)
            sm = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
            for x, y, size in sm.get_matching_blocks():
                out.extend((alo + x + k, blo + y + k) for k in range(size))
    out.extend(reversed(tail))


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of pairs increasing in both members (pairs sorted by the first): patience sorting."""
    import bisect  # noqa: PLC0415

    tops: list[int] = []  # the j of the top card of each pile
    top_index: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pile = bisect.bisect_left(tops, j)
        if pile == len(tops):
            tops.append(j)
            top_index.append(k)
        else:
            tops[pile] = j
            top_index[pile] = k
        back[k] = top_index[pile - 1] if pile else -1
    run, k = [], top_index[-1]
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


CHUNK_FROM = 2000  # lines (both sides): longer notes are first matched chunk by chunk


def _chunks(lines: list[str]) -> list[tuple[int, int]]:
    """Content-defined chunks of lines (a boundary after a line whose hash ends in four zero bits),
    so an inserted line shifts no boundary but its own chunk's."""
    out, start = [], 0
    for k, line in enumerate(lines):
        if hash(line) & 15 == 0:
            out.append((start, k + 1))
            start = k + 1
    if start < len(lines):
        out.append((start, len(lines)))
    return out


def _runs(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    """Equal runs (i, j, length) in order: chunk matches first for long notes, lines within the gaps."""
    runs: list[tuple[int, int, int]] = []

    def line_level(alo: int, ahi: int, blo: int, bhi: int) -> None:
        pairs: list[tuple[int, int]] = []
        _matches(a, b, alo, ahi, blo, bhi, pairs)
        for i, j in pairs:
            if runs and runs[-1][0] + runs[-1][2] == i and runs[-1][1] + runs[-1][2] == j:
                runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + 1)
            else:
                runs.append((i, j, 1))

    if len(a) + len(b) < CHUNK_FROM:
        line_level(0, len(a), 0, len(b))
        return runs
    ca, cb = _chunks(a), _chunks(b)
    ka = [tuple(a[s:e]) for s, e in ca]
    kb = [tuple(b[s:e]) for s, e in cb]
    pairs: list[tuple[int, int]] = []
    _matches(ka, kb, 0, len(ka), 0, len(kb), pairs)  # type: ignore[arg-type]
    pi = pj = 0
    for x, y in pairs:
        (i, i_end), (j, _) = ca[x], cb[y]
        if pi < i or pj < j:
            line_level(pi, i, pj, j)
        if runs and runs[-1][0] + runs[-1][2] == i and runs[-1][1] + runs[-1][2] == j:
            runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + i_end - i)
        else:
            runs.append((i, j, i_end - i))
        pi, pj = i_end, j + (i_end - i)
    if pi < len(a) or pj < len(b):
        line_level(pi, len(a), pj, len(b))
    return runs


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib-style opcodes over the whole of a and b, from the patience match."""
    ops: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    for mi, mj, size in [*_runs(a, b), (len(a), len(b), 0)]:
        if i < mi or j < mj:
            tag = "replace" if i < mi and j < mj else ("delete" if i < mi else "insert")
            ops.append((tag, i, mi, j, mj))
        if size:
            ops.append(("equal", mi, mi + size, mj, mj + size))
        i, j = mi + size, mj + size
    return ops


def text_diff(before: bytes | str | None, after: bytes | str | None, *, context: int = CONTEXT) -> Diff:
    """The diff of two versions (None: absent, so everything is added or removed)."""
    old, bin_a = _decode(before)
    new, bin_b = _decode(after)
    if bin_a or bin_b:
        return Diff((), 0, 0, binary=True)
    a, b = markdown_lines(old), markdown_lines(new)
    ops = _opcodes(a, b)
    added = sum(j2 - j1 for t, _, _, j1, j2 in ops if t in ("replace", "insert"))
    removed = sum(i2 - i1 for t, i1, i2, _, _ in ops if t in ("replace", "delete"))
    hunks: list[Hunk] = []
    for group in _groups(ops, context):
        first, last = group[0], group[-1]
        hunks.append(Hunk(first[1] + 1, last[2] - first[1], first[3] + 1, last[4] - first[3], ops=group, a=a, b=b))
    return Diff(tuple(hunks), added, removed, frontmatter=tuple(frontmatter_changes(old, new)))


def _groups(ops: list[tuple[str, int, int, int, int]], n: int) -> list[list[tuple[str, int, int, int, int]]]:
    """difflib's grouping of opcodes into hunks with `n` lines of context (works on our opcodes)."""
    if not ops:
        return []
    codes = list(ops)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups, group = [], []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > n * 2:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return [g for g in groups if any(op[0] != "equal" for op in g)]


def frontmatter_changes(old: str, new: str) -> list[tuple[str, Any, Any]]:
    """(key, before, after) of every frontmatter key whose value differs (absent: None)."""
    from vaultwatch.core.markdown.parse import load_yaml, split_frontmatter  # noqa: PLC0415

    def keys(text: str) -> dict[str, Any] | None:
        block, _ = split_frontmatter(text.replace("\r\n", "\n"))
        if block is None:
            return None
        data, error = load_yaml(block)
        return None if error else data

    a, b = keys(old), keys(new)
    if a is None and b is None:
        return []
    a, b = a or {}, b or {}
    return [(k, a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]


__all__ = ["Diff", "Hunk", "Line", "frontmatter_changes", "text_diff", "word_segments"]
