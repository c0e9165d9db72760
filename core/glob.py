"""Glob patterns over vault-relative paths.

`*` and `?` stay within one path level, `**` spans any number of levels (including none,
so `**/*.md` matches root notes too), `[abc]`/`[!abc]` are character classes that never
match `/`. Matching is case-sensitive and anchored at both ends.
"""
from __future__ import annotations

import re
from functools import lru_cache

from .errors import QueryError

MAX_PATTERN_CHARS = 512
MAX_WILDCARDS = 24


def _segment(seg: str) -> str:
    out: list[str] = []
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "*":
            while i < n and seg[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
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
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("/", "")
                out.append(f"[{'^' if negate else ''}/{body}]" if negate else f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob to an anchored regex. Raises QueryError for empty or overly complex patterns."""
    if not isinstance(pattern, str) or pattern == "":
        raise QueryError("pattern must be a non-empty glob such as '**/*.md'")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise QueryError(f"pattern is longer than {MAX_PATTERN_CHARS} characters: use a shorter glob")
    if "\x00" in pattern:
        raise QueryError("pattern contains a NUL character: remove it")
    parts = pattern.strip("/").split("/") if pattern.strip("/") else [""]
    collapsed: list[str] = []
    for part in parts:
        if part == "**" and collapsed and collapsed[-1] == "**":
            continue  # a/**/**/b == a/**/b; also defuses glob bombs
        collapsed.append(part)
    if sum(p.count("*") + p.count("?") for p in collapsed) > MAX_WILDCARDS:
        raise QueryError(f"pattern has more than {MAX_WILDCARDS} wildcards: simplify the glob")
    rx: list[str] = []
    last = len(collapsed) - 1
    for i, part in enumerate(collapsed):
        if part == "**":
            rx.append(".*" if i == last else "(?:[^/]*/)*")
        else:
            rx.append(_segment(part) + ("" if i == last else "/"))
    return re.compile("".join(rx), re.DOTALL)


def glob_match(pattern: str, path: str) -> bool:
    """True when the vault-relative `path` matches the glob `pattern`."""
    return compile_glob(pattern).fullmatch(path) is not None
