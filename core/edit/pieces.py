"""`str.count` and `str.replace` over a big note in pieces, with the builtins' exact answers.

One `str.count` or `str.replace` over a 10 MB note is one C call of 5-55 ms (under load) that
holds the interpreter: every other thread, the event loop and every other agent's call wait for
all of it. Done piece by piece (PIECE characters at a time), the interpreter can be handed over
between pieces (every 0.5 ms while an agent's heavy call runs, mcp_server/lane.py).

The answers are the builtins' own. A piece ends only at a cut that no occurrence of the pattern
straddles (no occurrence starts in the len(pattern) - 1 characters before it); the builtins scan
left to right without overlaps, so every occurrence they take that starts before such a cut ends
at or before it, and their scan goes on from the cut as a fresh scan of the rest would. Where no
such cut is found near the planned one (a pattern that overlaps itself throughout, as 'aa' in a
run of 'a'), the rest is done in one call.
"""

from __future__ import annotations

from collections.abc import Iterator

PIECE = 1 << 20  # characters per C call
_TRIES = 64  # cuts tried after the planned one before the rest is done in one call


def _cut(text: str, old: str, at: int) -> int:
    """A cut at or after `at` that no occurrence of `old` straddles, or len(text)."""
    n, width = len(text), len(old)
    for _ in range(_TRIES):
        if at >= n:
            return n
        if width == 1:
            return at
        inside = text.find(old, max(0, at - width + 1), at + width - 1)  # an occurrence starting in (at - width, at)
        if inside < 0:
            return at
        at = inside + width
    return n


def _spans(text: str, old: str, piece: int) -> Iterator[tuple[int, int]]:
    start, n = 0, len(text)
    while start < n:
        end = _cut(text, old, min(start + piece, n))
        yield start, end
        start = end


def count(text: str, old: str, piece: int = PIECE) -> int:
    """text.count(old), piece by piece (see the module docstring)."""
    if not old or len(text) <= piece:
        return text.count(old)
    return sum(text.count(old, start, end) for start, end in _spans(text, old, piece))


def replace(text: str, old: str, new: str, piece: int = PIECE) -> str:
    """text.replace(old, new), piece by piece (see the module docstring)."""
    if not old or len(text) <= piece:
        return text.replace(old, new)
    return "".join(text[start:end].replace(old, new) for start, end in _spans(text, old, piece))
