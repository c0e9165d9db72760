"""Glob patterns over vault-relative paths.

`*` and `?` stay within one path level, `**` spans any number of levels (including none,
so `**/*.md` matches root notes too), `[abc]`/`[!abc]` are character classes that never
match `/`. Matching is case-sensitive and anchored at both ends.
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultwatch.core.errors import QueryError

MAX_PATTERN_CHARS = 512
MAX_WILDCARDS = 24


def _class_char(c: str) -> str:
    return "\\" + c if c in "\\]-^[&~|" else c


def _char_class(body: str, negate: bool) -> str:
    """A bracket expression as a regex that never matches `/`: ranges kept (empty ones
    such as `z-a` dropped, as fnmatch does), every other character literal."""
    items: list[str] = []
    k, n = 0, len(body)
    while k < n:
        if k + 2 < n and body[k + 1] == "-":
            lo, hi = body[k], body[k + 2]
            if lo <= hi:
                items.append(f"{_class_char(lo)}-{_class_char(hi)}")
            k += 3
        else:
            items.append(_class_char(body[k]))
            k += 1
    if negate:
        return f"[^/{''.join(items)}]"
    return f"(?!/)[{''.join(items)}]" if items else "(?!)"


def _segment(seg: str, classes: bool = True) -> str:
    """One path level (`classes` False: a `[` is a plain character). Between stars, each fixed run
    is matched at its leftmost place inside an atomic group (as fnmatch does), so `*a*a*a*b`
    cannot backtrack exponentially."""
    pieces: list[list[str]] = [[]]
    out = pieces[0]
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "*":
            while i < n and seg[i] == "*":
                i += 1
            out = []
            pieces.append(out)
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[" and classes:
            j = i + 1
            if j < n and seg[j] in "!^":
                j += 1
            if j < n and seg[j] == "]":
                j += 1
            while j < n and seg[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = seg[i + 1 : j]
                negate = body[:1] in ("!", "^")
                out.append(_char_class(body[1:] if negate else body, negate))
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    if len(pieces) == 1:
        return "".join(pieces[0])
    middle = "".join(f"(?>[^/]*?{''.join(p)})" for p in pieces[1:-1] if p)
    return f"{''.join(pieces[0])}{middle}[^/]*{''.join(pieces[-1])}"


@lru_cache(maxsize=256)
def compile_glob(pattern: str, classes: bool = True) -> re.Pattern[str]:
    """Compile a glob to an anchored regex (`classes` False: `[` and `]` are plain characters, no
    character classes). Raises QueryError for empty or overly complex patterns."""
    if not isinstance(pattern, str) or pattern == "":
        raise QueryError("pattern must be a non-empty glob such as '**/*.md'")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise QueryError(f"pattern is longer than {MAX_PATTERN_CHARS} characters: use a shorter glob")
    if "\x00" in pattern:
        raise QueryError("pattern contains a NUL character: remove it")
    parts = pattern.strip("/").split("/") if pattern.strip("/") else [""]
    collapsed: list[str] = []
    for seg in parts:
        if seg == "**" and collapsed and collapsed[-1] == "**":
            continue  # a/**/**/b == a/**/b; also defuses glob bombs
        collapsed.append(seg)
    if sum(p.count("*") + p.count("?") for p in collapsed) > MAX_WILDCARDS:
        raise QueryError(f"pattern has more than {MAX_WILDCARDS} wildcards: simplify the glob")
    # Levels between two `**` are found at their leftmost place, atomically: `**` absorbs any
    # gap, so that is never wrong, and `**/a/**/a/**/b` cannot backtrack polynomially.
    rx: list[str] = []
    run: list[str] = []
    opened = False  # inside `**` ... `**`
    for part in collapsed + [None]:
        if part is not None and part != "**":
            run.append(_segment(part, classes))
            continue
        body = "/".join(run)
        if part is None:
            rx.append(body)
        elif opened and run:
            rx.append(f"(?>(?:[^/]*/)*?{body}/)")
        elif run:
            rx.append(body + "/")
        if part == "**":
            opened = True
        run = []
    if collapsed[-1] == "**":
        rx.append(".*")
    elif opened:
        rx.insert(len(rx) - 1, "(?:[^/]*/)*")
    return re.compile("".join(rx), re.DOTALL)


def glob_match(pattern: str, path: str, *, classes: bool = True) -> bool:
    """True when the vault-relative `path` matches the glob `pattern` (`classes` False: with its
    brackets read as the characters themselves)."""
    return compile_glob(pattern, classes).fullmatch(path) is not None


def unclosed_bracket(pattern: str) -> int | None:
    """The index of a `[` that no `]` closes within its path level, or None: such a `[` is a literal
    character (as fnmatch reads it), which is seldom what was meant."""
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] not in "]/":
                j += 1
            if j >= n or pattern[j] == "/":
                return i
            i = j
        i += 1
    return None


def literal_hint(pattern: str) -> str:
    """The longest run of literal characters every match must contain (a cheap pre-filter)."""
    best = ""
    for run in re.split(r"[*?\[\]/]+", pattern):
        if len(run) > len(best):
            best = run
    return best if "[" not in pattern else ""


def literal_dir(pattern: str) -> str:
    """The leading folder segments of a pattern that contain no wildcard ("" if none)."""
    parts = pattern.strip("/").split("/")[:-1]
    lead: list[str] = []
    for part in parts:
        if any(c in part for c in "*?["):
            break
        lead.append(part)
    return "/".join(lead)
