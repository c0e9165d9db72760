"""Search query syntax: what a user types, read into terms, and the FTS5 MATCH text for them.

User text never reaches FTS5 syntax raw: `parse_query` reads words, "phrases", prefix*
and -exclusions, and `to_fts` quotes every term. Bad input raises QueryError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from vaultwatch.core.errors import QueryError
from vaultwatch.core.search import ranking

MAX_QUERY_CHARS = 500
MAX_TERMS = 32
_WORD = re.compile(r"[^\W_]", re.UNICODE)  # a token character for FTS5's unicode61 (letters, digits)


@dataclass(frozen=True, slots=True)
class Term:
    """One search term: a word or a phrase, maybe a prefix, maybe excluded."""

    text: str
    phrase: bool = False
    prefix: bool = False
    exclude: bool = False


def parse_query(text: object) -> tuple[Term, ...]:
    """Read a user's search text: words, "quoted phrases", prefix* and -excluded terms.

    Any string is accepted or refused with a QueryError that says what to type instead;
    FTS5 operators (AND, OR, NOT, NEAR, column filters, parentheses) are plain words here.
    """
    if not isinstance(text, str):
        raise QueryError("search query must be a string of words, e.g. 'deploy runbook'")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"search query is longer than {MAX_QUERY_CHARS} characters; use a few distinctive words")
    if "\x00" in text:
        raise QueryError("search query contains a NUL character; remove it")
    terms: list[Term] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        exclude = False
        if ch == "-" and i + 1 < n and not text[i + 1].isspace():
            exclude, i = True, i + 1
            ch = text[i]
        if ch == '"':
            end = text.find('"', i + 1)
            body = text[i + 1 :] if end < 0 else text[i + 1 : end]  # an unclosed quote runs to the end
            i = n if end < 0 else end + 1
            prefix = False
            if i < n and text[i] == "*":
                prefix, i = True, i + 1
            term = Term(" ".join(body.split()), phrase=True, prefix=prefix, exclude=exclude)
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] != '"':
                j += 1
            word = text[i:j]
            i = j
            prefix = word.endswith("*")
            term = Term(word.rstrip("*"), prefix=prefix, exclude=exclude)
        if _WORD.search(term.text):  # a term of punctuation alone can match nothing: drop it
            terms.append(term)
    if len(terms) > MAX_TERMS:
        raise QueryError(f"search query has {len(terms)} terms; use at most {MAX_TERMS}")
    if not terms:
        raise QueryError(
            'search query has no words to look for: give at least one word or "phrase" '
            "(letters or digits), e.g. 'deploy' or '\"release checklist\"'"
        )
    if all(t.exclude for t in terms):
        raise QueryError(
            "search query only excludes (-word): add at least one word to look for, e.g. 'deploy -staging'"
        )
    return tuple(terms)


def quote_term(term: Term) -> str:
    quoted = '"' + term.text.replace('"', '""') + '"'
    return quoted + " *" if term.prefix else quoted


def to_fts(terms: Iterable[Term]) -> str:
    """The FTS5 MATCH expression for parsed terms: every term quoted, exclusions as NOT."""
    terms = list(terms)
    positive = " ".join(quote_term(t) for t in terms if not t.exclude)
    negative = "".join(" NOT " + quote_term(t) for t in terms if t.exclude)
    return positive + negative


def field_needles(tokens: list[str], prefix: bool) -> tuple[tuple[str, ...], str | None] | None:
    """What `field_holds` looks for: each whole token as " token " (a prefix term's last one as
    " start", a word start); None for a term without tokens (it is in no field)."""
    if not tokens:
        return None
    whole = tokens[:-1] if prefix else tokens
    return tuple(f" {tok} " for tok in whole), (f" {tokens[-1]}" if prefix else None)


def field_holds(padded: str, needles: tuple[tuple[str, ...], str | None] | None) -> bool:
    """Whether a field holds every token of a term (a prefix term: its last one starts a token).
    The field as the index stores it (FTS5 tokens joined by single spaces, which no token holds),
    padded with a space at each end: substring tests, not a set built per field (the ranking
    loops over a few hundred candidates per search, so this runs often)."""
    if needles is None or padded == "  ":
        return False
    whole, start = needles
    return all(n in padded for n in whole) and (start is None or start in padded)


def field_tester(needles: tuple[tuple[str, ...], str | None] | None) -> Callable[[str], bool]:
    """`field_holds` with these needles, as one predicate of the padded field: for a term of one whole
    token (most are) a single substring test, which an empty field ("  ") fails as field_holds does
    (the needle is longer)."""
    if needles is None:
        return _never
    whole, start = needles
    if start is None and len(whole) == 1 and len(whole[0]) > 2:
        token = whole[0]
        return lambda padded: token in padded
    return lambda padded: field_holds(padded, needles)


def _never(_padded: str) -> bool:
    return False


def wanted_terms(terms: Iterable[Term]) -> list[Term]:
    """The terms a note must match: the positive ones without stop and question words (unless
    that leaves nothing), each once."""
    positive = [t for t in terms if not t.exclude]
    wanted = [t for t in positive if t.phrase or t.prefix or not ranking.is_stop(t.text)] or positive
    out, seen = [], set()
    for t in wanted:
        key = (t.text.casefold(), t.phrase, t.prefix)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out
