"""Fast path for the simple YAML frontmatter shape most notes use.

``parse_simple(text)`` returns exactly what ``yaml.load(text, Loader=yaml.CSafeLoader)``
returns for a small, line-oriented subset of YAML, and the ``FALLBACK`` sentinel for
anything else (the caller then runs libyaml).  The subset:

* a top-level block mapping; keys ``[A-Za-z0-9_]`` then letters, digits, ``_ - .`` and
  single spaces between them (``ms.date``, ``external help file``) at column 0, no
  duplicates (after resolution: ``yes`` and ``true`` are the same key);
* values on one line: plain scalars, single-quoted scalars, double-quoted scalars with
  JSON-style escapes only (``\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX``, no surrogates),
  and flow sequences ``[a, 'b', "c"]`` of such scalars;
* ``key:`` followed by a block sequence (any indentation, including indentless) whose
  items are such values or one-line-per-key mappings (``- by: x`` / ``  at: y``).

Plain scalars are resolved and constructed with PyYAML's own tables (the implicit resolvers
and SafeConstructor of ``yaml.CSafeLoader``, read at import), so ``yes``, ``0x1F``, ``~``,
``2026-01-02T03:04:05Z`` become the same bool/int/None/datetime libyaml gives.  Comments,
tabs, CRs, anchors, aliases, tags, block scalars, multi-line scalars, nested mappings, flow
mappings, document markers, directives and unusual characters all fall back.
"""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

import yaml
from yaml.nodes import ScalarNode

__all__ = ["FALLBACK", "parse_simple"]

FALLBACK = object()

_LOADER = yaml.CSafeLoader
_RESOLVERS = _LOADER.yaml_implicit_resolvers
_WILDCARD = tuple(_RESOLVERS.get(None, ()))
_STR_TAG = "tag:yaml.org,2002:str"
# Tags SafeConstructor can build from a plain scalar; any other match (merge ``<<``,
# value ``=``, yaml ``!``/``&``/``*``) is left to libyaml.
_SCALAR_TAGS = frozenset("tag:yaml.org,2002:" + t for t in ("null", "bool", "int", "float", "timestamp"))
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_CTORS = {tag: _LOADER.yaml_constructors[tag] for tag in _SCALAR_TAGS}

# Anything libyaml would treat as a line break, a BOM, or reject as non-printable.
_BAD_CHAR = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
# One row per "\n"-terminated line: (indent, "- " dash, key of ``key:``/``key: v``, rest).
_LINE = re.compile(
    r"( *)(-(?: +|(?=\n)))?(?:([A-Za-z0-9_](?:[A-Za-z0-9_.-]| (?=[A-Za-z0-9_.-])){0,127}):(?: +|(?=\n)))?([^\n]*)\n"
)
_DQ = re.compile(r'"([^"\\]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\]*)*)"')
_SQ = re.compile(r"'((?:[^']|'')*)'")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_FLOW_PLAIN = re.compile(r"[^,\[\]{}#:'\"]+")
# The commonest timestamps; fromisoformat builds exactly what construct_yaml_timestamp does.
_ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?")
_FLOW_SEP = re.compile(r" *(?:$|, *(?=[^ ]))")
# Memo of _resolve. Holds only plain scalars that passed block-context validation (or the
# stricter flow rules, or are keys), so _value may consult it before validating.
_CACHE: dict = {}
_MISS = object()
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")


class _Fallback(Exception):
    """Raised internally when the text leaves the supported subset."""


def parse_simple(text: str) -> dict | object:
    """Parse the YAML text of a frontmatter block (without the --- fences). Returns the same
    Python value yaml.load(text, Loader=yaml.CSafeLoader) would (a dict), or FALLBACK when the
    text uses anything outside the supported subset (caller then uses libyaml). Never raises."""
    try:
        return _parse(text)
    except Exception:  # _Fallback, or e.g. ValueError for 2026-02-30: libyaml decides.
        return FALLBACK


def _parse(text: str) -> dict:
    """Parse the top-level block mapping; raise _Fallback outside the subset."""
    if not text or "\t" in text or "\r" in text:
        raise _Fallback
    if not text.replace("\n", " ").isprintable() and _BAD_CHAR.search(text):
        raise _Fallback
    if text[-1] != "\n":
        text += "\n"
    rows = _LINE.findall(text)
    n = len(rows)
    if n != text.count("\n"):
        raise _Fallback  # paranoia: exactly one row per line
    out: dict = {}
    i = 0
    while i < n:
        indent, dash, key, raw = rows[i]
        i += 1
        if not (dash or key or raw):
            continue  # blank line
        if indent or dash or not key:
            raise _Fallback
        key = _CACHE.get(key) or _resolve(key)  # (falsy keys: _resolve re-reads)
        if key in out:
            raise _Fallback
        if raw:
            out[key] = _value(raw)
            continue
        j = i
        while j < n and not (rows[j][1] or rows[j][2] or rows[j][3]):
            j += 1
        if j < n and rows[j][1]:
            out[key], i = _block_seq(rows, j, len(rows[j][0]))
        else:
            out[key] = None  # next comes a key (or something rejected above)
    if not out:
        raise _Fallback
    return out


def _block_seq(rows: list, i: int, col: int) -> tuple[list, int]:
    """Parse ``- item`` rows at column ``col`` from row ``i``; return (items, next row).

    Stops at the first other non-blank row; the top level then rejects anything that is not
    a column-0 key (continuation lines, nested content, bad indentation)."""
    n = len(rows)
    items: list = []
    while i < n:
        indent, dash, key, raw = rows[i]
        if not (dash or key or raw):
            i += 1
            continue
        if not dash or len(indent) != col:
            break
        i += 1
        if not key:
            items.append(_value(raw) if raw else None)
            continue
        item: dict = {}
        _add_pair(item, key, raw)
        key_col = col + len(dash)
        while i < n:
            indent, dash, key, raw = rows[i]
            if dash or key or raw:
                if dash or not key or len(indent) != key_col:
                    break
                _add_pair(item, key, raw)
            i += 1
        items.append(item)
    return items, i


def _add_pair(mapping: dict, key: str, raw: str) -> None:
    """Add a one-line ``key: value`` pair to a sequence item's mapping."""
    key = _CACHE.get(key) or _resolve(key)
    if key in mapping:
        raise _Fallback
    mapping[key] = _value(raw) if raw else None


def _value(s: str) -> Any:
    """Parse a one-line block-context value (non-empty, no leading spaces)."""
    s = s.rstrip(" ")
    c = s[0]
    if c == '"' and s.find('"', 1) == len(s) - 1 and "\\" not in s:
        return s[1:-1]
    value = _CACHE.get(s, _MISS)
    if value is not _MISS:
        return value
    if c == '"' or c == "'":
        value, end = _quoted(s, 0)
        if end != len(s):
            raise _Fallback
        return value
    if c == "[":
        return _flow_seq(s)
    if c in _INDICATORS and not (c == "-" and (s[1:2].isalnum() or s[1:2] == ".")):
        raise _Fallback  # ``-1`` and ``-.5`` are fine; ``- x``, ``&a``, ``|`` are not
    if ": " in s or " #" in s or s[-1] == ":":
        raise _Fallback  # a mapping, a comment or a dangling key
    return _resolve(s)


def _quoted(s: str, pos: int) -> tuple[str, int]:
    """Parse a quoted scalar starting at ``s[pos]``; return (value, end position)."""
    if s[pos] == "'":
        m = _SQ.match(s, pos)
        if m is None:
            raise _Fallback
        return m.group(1).replace("''", "'"), m.end()
    m = _DQ.match(s, pos)
    if m is None:
        raise _Fallback
    inner = m.group(1)
    if "\\" in inner:
        if _SURROGATE_ESCAPE.search(inner):
            raise _Fallback  # libyaml rejects surrogate escapes
        inner = json.loads('"' + inner + '"')
    return inner, m.end()


def _flow_seq(s: str) -> list:
    """Parse a one-line flow sequence of scalars, e.g. ``[a, 'b c', "d"]``."""
    if s[-1] != "]":
        raise _Fallback
    inner = s[1:-1].strip(" ")
    items: list = []
    pos, n = 0, len(inner)
    while pos < n:
        if inner[pos] in "\"'":
            value, pos = _quoted(inner, pos)
        else:
            m = _FLOW_PLAIN.match(inner, pos)
            raw = m.group().rstrip(" ") if m else ""
            if m is None or not raw or raw[0] in _INDICATORS and not (raw[0] == "-" and raw[1:2].isalnum()):
                raise _Fallback
            value, pos = _resolve(raw), m.end()
        items.append(value)
        m = _FLOW_SEP.match(inner, pos)
        if m is None:
            raise _Fallback  # junk after an item, or a trailing comma
        pos = m.end()
    return items


def _resolve(value: str) -> Any:
    """Resolve and construct a plain scalar exactly as CSafeLoader does (memoised)."""
    result = _CACHE.get(value, _MISS)
    if result is not _MISS:
        return result
    m = _ISO.fullmatch(value)
    if m is not None:  # resolves to timestamp; see _ISO
        return (datetime.datetime if m.group(1) else datetime.date).fromisoformat(value)
    tag = next((t for t, regexp in (*_RESOLVERS.get(value[:1], ()), *_WILDCARD) if regexp.match(value)), _STR_TAG)
    if tag == _STR_TAG:
        result = value
    elif tag in _SCALAR_TAGS:
        result = _CTORS[tag](_CONSTRUCTOR, ScalarNode(tag, value))
    else:
        raise _Fallback
    if len(value) <= 64:  # bounded memory: at most 20k short strings
        if len(_CACHE) >= 20_000:
            _CACHE.clear()
        _CACHE[value] = result  # immutable: str, None, bool, int, float, date, datetime
    return result
