"""The filter-bar language: one line of text becomes a `Query`.

    status:deprecated trust:unverified stale:true tag:craft type:howto path:Projects/** -status:draft free words

- `key:value` is frontmatter equality (the query's filters; OKF keys keep their OKF meaning);
  `-key:value` excludes. Values may be quoted: `owner:"Ana Ruiz"`.
- Aliases: `trust:` is `trust_tier` (also `trust:human`/`trust:machine` for short), `tag:` is
  `tags`, and a lone `#craft` is `tag:craft`.
- `path:GLOB` is the case-sensitive path glob; a value without wildcards means that folder and
  everything below it (`path:Projects` = `path:Projects/**`), or that note when it ends in `.md`.
- Everything else is free text: each word must occur (case-insensitively) in the title or the
  path, in any order; `"quoted words"` are one phrase and keep their spacing.
All terms AND together. Bad input raises `FilterError` with the character span to point at.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from core.errors import QueryError
from core.markdown import okf
from core.query.listing import Query

KEY_ALIASES = {"trust": "trust_tier", "tag": "tags"}
TRUST_SHORT = {"human": "human-reviewed", "machine": "machine-confirmed"}
_WILDCARDS = frozenset("*?[")


class FilterError(QueryError):
    """A filter-bar term that cannot be used; `start`/`end` are the offending span of the text."""

    code = "invalid_filter"

    def __init__(self, message: str, start: int, end: int) -> None:
        super().__init__(f"{message} (column {start + 1})")
        self.start = start
        self.end = max(end, start + 1)


@dataclass(frozen=True, slots=True)
class FilterTerm:
    """One parsed term: free text (key None), a path glob (key "path") or a field comparison."""

    key: str | None
    value: str
    negated: bool
    start: int
    end: int


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """Read a "quoted" value starting at the opening quote; returns (value, index after it)."""
    close = text.find('"', i + 1)
    if close < 0:
        raise FilterError('unterminated quote: close it with another "', i, len(text))
    return text[i + 1:close], close + 1


def _read_bare(text: str, i: int) -> tuple[str, int]:
    j = i
    while j < len(text) and not text[j].isspace():
        j += 1
    return text[i:j], j


def tokenize(text: str) -> tuple[FilterTerm, ...]:
    """Split filter-bar text into terms (raises FilterError on malformed ones)."""
    terms: list[FilterTerm] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        if text[i] == '"':
            value, i = _read_quoted(text, i)
            if i < n and not text[i].isspace():
                raise FilterError("put a space after a closing quote", i, i + 1)
            if value.strip():
                terms.append(FilterTerm(None, value, False, start, i))
            continue
        negated = text[i] == "-"
        if negated:
            i += 1
        j = i
        while j < n and not text[j].isspace() and text[j] not in ':"':
            j += 1
        key = text[i:j]
        if j < n and text[j] == ":":
            if not key:
                raise FilterError("a term starts with ':' but has no key: write key:value, e.g. status:draft",
                                  start, j + 1)
            if j + 1 < n and text[j + 1] == '"':
                value, i = _read_quoted(text, j + 1)
            else:
                value, i = _read_bare(text, j + 1)
            if not value.strip():
                raise FilterError(f"{key}: has no value: write {key}:VALUE, e.g. status:deprecated", start, i)
            terms.append(FilterTerm(key, value.strip(), negated, start, i))
            continue
        if j < n and text[j] == '"':
            raise FilterError('a quote inside a word: quote the whole value, e.g. "two words"', j, j + 1)
        word, i = text[i:j], j
        if word.startswith("#") and len(word) > 1:
            terms.append(FilterTerm("tags", word[1:], negated, start, i))
        elif negated:
            if not word:
                raise FilterError("a lone '-' excludes nothing: write -key:value, e.g. -status:draft", start, i)
            raise FilterError(f"-{word} cannot exclude free text: use -key:value, or quote it to search "
                              f'for it: "-{word}"', start, i)
        else:
            terms.append(FilterTerm(None, word, False, start, i))
    return tuple(terms)


def _path_glob(value: str) -> str:
    if any(c in _WILDCARDS for c in value):
        return value
    value = value.strip("/")
    if value.endswith(".md"):
        return value
    return f"{value}/**" if value else "**"


def _field(term: FilterTerm) -> tuple[str, str]:
    assert term.key is not None  # free text is not a field
    key = KEY_ALIASES.get(term.key, term.key)
    value = term.value
    if key == "stale" and okf.parse_bool_word(value) is None:
        raise FilterError(f"stale:{value} is not a boolean: use stale:true or stale:false", term.start, term.end)
    if key == "trust_tier":
        value = TRUST_SHORT.get(value, value)
        if value not in okf.TRUST_TIERS:
            raise FilterError(f"trust:{term.value} is not a tier: use one of {', '.join(okf.TRUST_TIERS)}",
                              term.start, term.end)
    if key == "tags":
        value = value.lstrip("#")
    return key, value


def parse(text: str) -> Query:
    """Parse filter-bar text into a Query (notes only, path order). Raises FilterError."""
    return to_query(tokenize(text))


def to_query(terms: tuple[FilterTerm, ...]) -> Query:
    """Build the Query the terms describe."""
    words: list[str] = []
    pattern: str | None = None
    filters: list[tuple[str, str]] = []
    exclude: list[tuple[str, str]] = []
    for term in terms:
        if term.key is None:
            words.append(term.value)
        elif term.key == "path":
            if term.negated:
                raise FilterError("-path: is not supported: narrow with path:GLOB instead", term.start, term.end)
            if pattern is not None:
                raise FilterError("only one path: term is allowed: combine them into one glob", term.start,
                                  term.end)
            pattern = _path_glob(term.value)
        else:
            (exclude if term.negated else filters).append(_field(term))
    return Query(pattern=pattern, filters=tuple(filters), exclude=tuple(exclude), words=tuple(words))


def merge(base: Query, extra: Query) -> Query:
    """`base` narrowed by `extra`'s pattern, filters, exclusions and text (a tab plus the filter bar).

    Raises QueryError when both set a pattern or a text (one glob and one phrase per query).
    """
    if base.pattern and extra.pattern and base.pattern != extra.pattern:
        raise QueryError("two path globs cannot be combined: use a single path: term")
    if base.text and extra.text and base.text != extra.text:
        raise QueryError("two free-text phrases cannot be combined: use one phrase")
    return replace(
        base,
        pattern=base.pattern or extra.pattern,
        filters=base.filters + tuple(f for f in extra.filters if f not in base.filters),
        exclude=base.exclude + tuple(f for f in extra.exclude if f not in base.exclude),
        text=base.text or extra.text,
        words=base.words + tuple(w for w in extra.words if w not in base.words),
        problems_only=base.problems_only or extra.problems_only,
    )
