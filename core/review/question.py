"""What the person is asked through an agent's client (MCP elicitation): the whole change, or nothing.

    asked = question(effects, old, new, why, agent="scribe/1")
    asked.text       # every effect, the note's line counts and every hunk, every line of each
                     # (a rename: every hunk of each note whose links it rewrites, `relinks`)
    asked.why_not    # "" when it fits; else why the change is not put as a question at all

A question is a dialog the client draws, not a pager: a diff the client cuts, or the person
cannot scroll back through, is a diff they approve without having seen it (a typo fixed in the
first hunk, an account number changed in the second). So a question carries the whole change or
is not asked: past `MAX_LINES` lines or `MAX_BYTES` bytes of text, or for a change whose bytes
no text can show faithfully (a binary file, bytes that are not UTF-8), `text` is None and the
gate keeps the change as a pending change instead (core.review.pending), whose whole diff
`vaultwatch pending` shows. The same text travels in both protocol forms (the 2025
`elicitation/create` request and the 2026-07-28 `InputRequiredResult`), so the bound is one.

What a note's lines hold is anyone's to write: every character a client could act on instead of
drawing, or draw as nothing (controls, bidirectional overrides and isolates, zero-width and
other default-ignorable characters), is shown as `\\uXXXX`, so no line can hide, reorder or
overwrite another. So are combining marks that could make a line read as something else or draw
over its neighbours: overlays (a stroke through a digit), enclosing marks, stacks taller than any
script writes on one letter, and marks with no letter under them; the accents and points of real
text (é, Vietnamese, Devanagari, pointed Hebrew, Arabic harakat) show as they are (one rule,
core.review.visible's, for every place the person approves from). A change of
line-ending style shows no line in a line diff: it is said on a line of its own (`_endings_change`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from vaultwatch.core.edit.effects import EffectSet, doing, in_words, read_as
from vaultwatch.core.review.textdiff import Diff, text_diff
from vaultwatch.core.review.visible import visible

# A dialog's worth of text: about what a terminal client's dialog shows without scrolling, and
# a fraction of what any client carries in one message, in either protocol form.
MAX_LINES = 60
MAX_BYTES = 8 * 1024


@dataclass(frozen=True, slots=True)
class Question:
    """The question's text, or None with `why_not` when the change does not fit in one."""

    text: str | None
    why_not: str = ""
    lines: int = 0
    size: int = 0  # bytes of the text, UTF-8
    links: tuple[tuple[str, bytes, bytes], ...] = ()  # the link rewrites it shows (path, before, after)

    @property
    def fits(self) -> bool:
        return self.text is not None


def _endings(text: str) -> Counter[str]:
    """How many lines end with each line ending Markdown knows (CRLF, LF, CR; the diff's lines are
    split at these only: textdiff.markdown_lines)."""
    crlf = text.count("\r\n")
    return Counter({"CRLF": crlf, "LF": text.count("\n") - crlf, "CR": text.count("\r") - crlf}) - Counter()


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # (as textdiff.markdown_lines splits a note's lines)


def _line_endings(text: str) -> list[str]:
    """The ending of each line of `text` as the diff splits them ("" for a last line without one)."""
    out = _LINE_BREAK.findall(text)
    if text and text[-1] not in "\r\n":
        out.append("")
    return out


def _endings_change(before: str, after: str, diff: Diff) -> str | None:
    """What a line diff does not show of a change of the note's line endings, or None: the style
    changes (LF to CRLF, a mix appears or goes), or a line the diff shows as unchanged ends
    otherwise (one line of a mixed note turned to CRLF, the last line's ending dropped). Lines
    added or removed with the note's own endings change only the counts, which the diff shows."""
    was, now = _line_endings(before), _line_endings(after)
    counts = _endings(before), _endings(after)
    changed = set(counts[0]) != set(counts[1]) and bool(counts[0]) and bool(counts[1])
    if not changed:
        gone = {line.old_no - 1 for h in diff.hunks for line in h.lines if line.op == "-" and line.old_no}
        came = {line.new_no - 1 for h in diff.hunks for line in h.lines if line.op == "+" and line.new_no}
        kept = zip(
            (i for i in range(len(was)) if i not in gone), (j for j in range(len(now)) if j not in came), strict=True
        )
        for i, j in kept:
            if was[i] == now[j]:
                continue
            # a last line that gets lines after it gets an ending too: that is the added lines' doing
            last = i == len(was) - 1 and j == len(now) - 1
            if (was[i] and now[j]) or last:
                changed = True
                break
    if not changed:
        return None
    kinds = sorted(set(counts[0]) | set(counts[1]))
    said = ", ".join(f"{k} {counts[0][k]} -> {counts[1][k]}" for k in kinds)
    if was and now and was[-1] != now[-1] and "" in (was[-1], now[-1]):
        said += ", the last line " + ("without one" if now[-1] == "" else f"ending with {_NAMES[now[-1]]}")
    return "Line endings change: " + said


_NAMES = {"\r\n": "CRLF", "\n": "LF", "\r": "CR"}


def _decoded(data: bytes | None) -> str | None:
    """The text of `data`; None when it is not UTF-8 text (a question could not show it as it is)."""
    if data is None:
        return ""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class _Full(Exception):
    """The question outgrew its bound."""


class _Text:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0

    def add(self, line: str) -> None:
        self.size += len(line.encode("utf-8")) + (1 if self.lines else 0)
        self.lines.append(line)
        if len(self.lines) > MAX_LINES or self.size > MAX_BYTES:
            raise _Full


def question(
    effects: EffectSet,
    old: bytes | None,
    new: bytes | None,
    why: str,
    *,
    agent: str | None = None,
    relinks: Callable[[], Iterable[tuple[str, bytes, bytes]]] | None = None,
    operation: str | None = None,
) -> Question:
    """The whole change as one question to the person, or why it cannot be one (see module doc).
    `operation`: what the agent asked for (the effects of a frontmatter update are a note's write).
    `relinks`: a rename's link rewrites (each note's real path after the move, its bytes before and
    after), asked for only once every effect fits: every hunk of each is shown, as the note's are."""
    out = _Text()
    links: list[tuple[str, bytes, bytes]] = []
    who = f"The agent {visible(agent, keep_tab=False)}" if agent else "An agent"
    # as the dialog lists them: a move once (its arrival with it); the link rewrites are worked out
    # below, so each note is one whose links it may rewrite
    shown = read_as(effects.effects)
    count = len(shown)
    try:
        op = operation or effects.operation
        asked = doing(op, shown[0].path, shown[0].dest) if shown else op
        out.add(f"{who} asks to {visible(asked, keep_tab=False)}; approval is needed: {visible(why, keep_tab=False)}.")
        out.add(f"It touches {count} path{'s' if count != 1 else ''}:")
        for e in shown:
            out.add(f"  {visible(in_words(e, relinks_known=False), keep_tab=False)}")
        for caution in effects.cautions():  # (a delete for good, links a rename leaves broken)
            out.add(f"{caution[0].upper()}{caution[1:]}.")
        if old is not None or new is not None:
            before, after = _decoded(old), _decoded(new)
            if before is None or after is None:
                return Question(None, "its bytes are not UTF-8 text, which a question cannot show")
            diff = text_diff(before, after)
            out.add(f"The note's lines: +{diff.added} -{diff.removed}, in {_hunks(diff)}, all shown:")
            endings = _endings_change(before, after, diff) if old is not None and new is not None else None
            if endings is not None:  # (a new or deleted note's endings are its lines')
                out.add(endings)
            _add_hunks(out, diff)
        for path, was_bytes, now_bytes in relinks() if relinks is not None else ():
            # what each link becomes, not only which notes: the person approves the new link text
            links.append((path, was_bytes, now_bytes))
            before, after = _decoded(was_bytes), _decoded(now_bytes)
            if before is None or after is None:
                return Question(None, "a note whose links it rewrites is not UTF-8 text, which a question cannot show")
            diff = text_diff(before, after)
            out.add(
                f"Links rewritten in {visible(path, keep_tab=False)}: +{diff.added} -{diff.removed}, "
                f"in {_hunks(diff)}, all shown:"
            )
            _add_hunks(out, diff)
    except _Full:
        return Question(
            None,
            f"the whole change is longer than a question shows (at most {MAX_LINES} lines, "
            f"{MAX_BYTES // 1024} KiB), and the person approves only a change they have seen whole",
        )
    text = "\n".join(out.lines)
    return Question(text, "", len(out.lines), out.size, tuple(links))


def _hunks(diff: Diff) -> str:
    return f"{len(diff.hunks)} hunk" + ("" if len(diff.hunks) == 1 else "s")


def _add_hunks(out: _Text, diff: Diff) -> None:
    """Every hunk of `diff`, every line of each (raises _Full past the bound)."""
    for hunk in diff.hunks:
        if len(out.lines) + 1 + hunk.rows() > MAX_LINES:
            raise _Full  # (before its lines and their word diffs are computed)
        out.add(hunk.header)
        for line in hunk.lines:
            out.add(f"{line.op}{visible(line.text)}")


__all__ = ["MAX_BYTES", "MAX_LINES", "Question", "question", "visible"]
