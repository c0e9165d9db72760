"""The filter-bar language: one line of text becomes a `Query`.

    status:deprecated trust:unverified stale:true tag:craft type:howto path:Projects/** -status:draft free words

- `key:value` matches a property's value as the lists show it (the query's filters, `Query.shown`):
  regardless of case, and a value that is one link by its target (`status:published` finds
  `status: ["[[Published]]"]`, as the Status column says `Published`); OKF keys keep their OKF
  meaning; `-key:value` excludes. Values may be quoted: `owner:"Ana Ruiz"`. `status:deprecated` and
  `stale:true`/`stale:false` are the Deprecated and Stale tabs' notes: OKF's on a bundle, the
  person's triage rules elsewhere (`core.review.triageviews.narrow` gives the query those rules).
- Aliases: `trust:` is `trust_tier` (also `trust:human`/`trust:machine` for short), `tag:` is
  `tags`, and a lone `#craft` is `tag:craft`.
- `path:GLOB` is the path glob; a value without wildcards means that folder and everything
  below it (`path:Projects` = `path:Projects/**`), or that note when it ends in `.md`.
  `-path:GLOB` leaves those notes out. With a snapshot (`analyse`), a folder typed in another
  case is the vault's folder (`path:projects` is `Projects/**`), as Obsidian's search treats it.
- Everything else is free text: each word must occur in the title or the path, in any order,
  regardless of case and accents (`cafe` finds "Café"); `"quoted words"` are one phrase.
All terms AND together. Bad input raises `FilterError` with the character span to point at.

`analyse(text, snapshot)` is what the filter bar runs on every keystroke: the Query of the
text actually applied (a last term still being typed, `status:` or `owner:"Ana`, is left out
and named, so the counts never belong to other text than the one shown), and hints that
explain an empty answer: a key no note has ("did you mean `status`?"), a value that differs
from the notes' only in case, a folder that does not exist. `complete(text, snapshot)` offers
the rest of the last word: a key, a value of that key, a tag or a folder.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from vaultwatch.core.errors import QueryError
from vaultwatch.core.markdown import okf
from vaultwatch.core.model import FOLDER
from vaultwatch.core.query import postings
from vaultwatch.core.query.glob import literal_dir
from vaultwatch.core.query.listing import Query

if TYPE_CHECKING:
    from vaultwatch.core.index.snapshot import Snapshot

KEY_ALIASES = {"trust": "trust_tier", "tag": "tags"}
TRUST_SHORT = {"human": "human-reviewed", "machine": "machine-confirmed"}
_WILDCARDS = frozenset("*?[")


class FilterError(QueryError):
    """A filter-bar term that cannot be used; `start`/`end` are the offending span of the text."""

    code = "invalid_filter"

    def __init__(self, message: str, start: int, end: int, *, incomplete: bool = False) -> None:
        super().__init__(f"{message} (column {start + 1})")
        self.start = start
        self.end = max(end, start + 1)
        self.incomplete = incomplete  # a term that typing more completes (no value yet, an open quote)


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
        raise FilterError('unterminated quote: close it with another "', i, len(text), incomplete=True)
    return text[i + 1 : close], close + 1


def _read_bare(text: str, i: int) -> tuple[str, int]:
    j = i
    while j < len(text) and not text[j].isspace():
        j += 1
    return text[i:j], j


def tokenize(text: str, *, search: bool = False) -> tuple[FilterTerm, ...]:
    """Split filter-bar text into terms (raises FilterError on malformed ones). With `search`
    (the bar's full-text mode) `-word` is a free word to exclude, as the search tool reads it."""
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
                raise FilterError(
                    "a term starts with ':' but has no key: write key:value, e.g. status:draft", start, j + 1
                )
            if j + 1 < n and text[j + 1] == '"':
                value, i = _read_quoted(text, j + 1)
            else:
                value, i = _read_bare(text, j + 1)
            if not value.strip():
                raise FilterError(
                    f"{key}: has no value: write {key}:VALUE, e.g. status:deprecated", start, i, incomplete=i >= n
                )
            terms.append(FilterTerm(key, value.strip(), negated, start, i))
            continue
        if j < n and text[j] == '"':
            raise FilterError('a quote inside a word: quote the whole value, e.g. "two words"', j, j + 1)
        word, i = text[i:j], j
        if word.startswith("#") and len(word) > 1:
            terms.append(FilterTerm("tags", word[1:], negated, start, i))
        elif negated and search and word:
            terms.append(FilterTerm(None, word, True, start, i))
        elif negated:  # at the end of the text it may be the start of a -key:value being typed
            if not word:
                raise FilterError(
                    "a lone '-' excludes nothing: write -key:value, e.g. -status:draft", start, i, incomplete=i >= n
                )
            raise FilterError(
                f'-{word} cannot exclude free text: use -key:value, or quote it to search for it: "-{word}"',
                start,
                i,
                incomplete=i >= n,
            )
        else:
            terms.append(FilterTerm(None, word, False, start, i))
    return tuple(terms)


def _path_glob(value: str, folders: dict[str, str] | None = None) -> str:
    if any(c in _WILDCARDS for c in value):
        glob = value
    else:
        value = value.strip("/")
        glob = value if value.endswith(".md") else (f"{value}/**" if value else "**")
    if folders:  # the folder part typed in another case: the vault's folder
        base = literal_dir(glob)
        if base and base not in folders.values():
            real = folders.get(base.casefold())
            if real is not None:
                glob = real + glob[len(base) :]
    return glob


def _field(term: FilterTerm) -> tuple[str, str]:
    assert term.key is not None  # free text is not a field
    key = KEY_ALIASES.get(term.key, term.key)
    value = term.value
    if key == "stale" and okf.parse_bool_word(value) is None:
        raise FilterError(f"stale:{value} is not a boolean: use stale:true or stale:false", term.start, term.end)
    if key == "trust_tier":
        value = TRUST_SHORT.get(value, value)
        if value not in okf.TRUST_TIERS:
            raise FilterError(
                f"trust:{term.value} is not a tier: use one of {', '.join(okf.TRUST_TIERS)}", term.start, term.end
            )
    if key == "tags":
        value = value.lstrip("#")
    return key, value


def parse(text: str) -> Query:
    """Parse filter-bar text into a Query (notes only, path order). Raises FilterError."""
    return to_query(tokenize(text))


def to_query(terms: tuple[FilterTerm, ...], folders: dict[str, str] | None = None) -> Query:
    """Build the Query the terms describe (`folders`: casefolded folder path -> the vault's
    spelling, see `folder_names`; a path: term's folder then matches regardless of case)."""
    words: list[str] = []
    pattern: str | None = None
    filters: list[tuple[str, str]] = []
    exclude: list[tuple[str, str]] = []
    excluded: list[str] = []
    for term in terms:
        if term.key is None:
            words.append(term.value)
        elif term.key == "path":
            if term.negated:
                excluded.append(_path_glob(term.value, folders))
                continue
            if pattern is not None:
                raise FilterError("only one path: term is allowed: combine them into one glob", term.start, term.end)
            pattern = _path_glob(term.value, folders)
        else:
            (exclude if term.negated else filters).append(_field(term))
    return Query(
        pattern=pattern,
        exclude_patterns=tuple(dict.fromkeys(excluded)),
        filters=tuple(filters),
        exclude=tuple(exclude),
        words=tuple(words),
        shown=bool(filters or exclude),
    )


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
        exclude_patterns=base.exclude_patterns
        + tuple(p for p in extra.exclude_patterns if p not in base.exclude_patterns),
        filters=base.filters + tuple(f for f in extra.filters if f not in base.filters),
        exclude=base.exclude + tuple(f for f in extra.exclude if f not in base.exclude),
        text=base.text or extra.text,
        words=base.words + tuple(w for w in extra.words if w not in base.words),
        problems_only=base.problems_only or extra.problems_only,
        shown=base.shown or extra.shown,
    )


# --- the filter bar's keystroke: what is applied, and what explains an empty answer ---------------


@dataclass(frozen=True, slots=True)
class Hint:
    """Why a term may select nothing, and what was probably meant (`start`/`end`: its span)."""

    message: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Analysis:
    """The filter bar's text as applied: `query` is of `applied` (the text without a last term
    still being typed, which `pending` names), `terms` its terms."""

    query: Query
    applied: str
    terms: tuple[FilterTerm, ...]
    pending: FilterError | None = None
    search: str = ""  # full-text mode: the free words as the search tool reads them (the query is the scope)


SEARCH_PREFIX = "?"  # filter-bar text starting with it is a full-text search


def analyse(text: str, snapshot: Snapshot | None = None, *, search: bool = False) -> Analysis:
    """The Query of `text` as far as it is typed: an incomplete last term (`status:`, `owner:"Ana`,
    `-sta`) is left out and returned as `pending`, so a list and its counts always show the text
    in `applied`. With a snapshot, path: folders match regardless of case. Raises FilterError for
    a term that more typing cannot fix.

    With `search`, the free words (`-word` excludes one) become `search`, the text for the
    full-text search, and the query holds only the key:value terms: the search's scope."""
    pending = None
    try:
        terms = tokenize(text, search=search)
        applied = text
    except FilterError as exc:
        if not exc.incomplete:
            raise
        cut = exc.start
        while cut > 0 and not text[cut - 1].isspace():
            cut -= 1
        pending, applied = exc, text[:cut].rstrip()
        terms = tokenize(applied, search=search)
    folders = folder_names(snapshot) if snapshot is not None and any(t.key == "path" for t in terms) else None
    if not search:
        return Analysis(to_query(terms, folders), applied, terms, pending)
    words = " ".join(
        ("-" if t.negated else "") + (f'"{t.value}"' if any(c.isspace() for c in t.value) else t.value)
        for t in terms
        if t.key is None
    )
    return Analysis(to_query(tuple(t for t in terms if t.key is not None), folders), applied, terms, pending, words)


def folder_names(snapshot: Snapshot) -> dict[str, str]:
    """Casefolded folder path -> the vault's spelling (the first in path order on a clash)."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        for path in postings.subset(snapshot, frozenset({FOLDER}))[0]:
            out.setdefault(path.casefold(), path)
        return out

    return snapshot.cached(("filterexpr.folders",), build)


def frontmatter_keys(snapshot: Snapshot) -> tuple[str, ...]:
    """Every frontmatter key some note has, sorted (this generation)."""

    def build() -> tuple[str, ...]:
        keys: set[str] = set()
        for e in postings.notes(snapshot)[1]:
            if e.frontmatter:
                keys.update(e.frontmatter)
        return tuple(sorted(keys))

    return snapshot.cached(("filterexpr.keys",), build)


def warm(snapshot: Snapshot) -> None:
    """Build what hints and completions read first (keys, folders, tags), off the UI thread."""
    frontmatter_keys(snapshot)
    folder_names(snapshot)
    _values(snapshot, "tags")


KNOWN_KEYS = ("path", "tag", "trust", "stale", "status", "type")  # the filter bar's own words


def _values(snapshot: Snapshot, key: str) -> tuple[str, ...]:
    """The values a key:value term for `key` can match, sorted (tags casefolded)."""

    def build() -> tuple[str, ...]:
        if key == "tags":
            return tuple(sorted(postings.tag_names(snapshot)))
        if key == "trust_tier":
            return tuple(sorted((*okf.TRUST_TIERS, *TRUST_SHORT)))
        if key == "stale":
            return ("false", "true")
        if key == "status" and snapshot.is_bundle:
            return tuple(sorted(okf.STATUSES))
        # a link's value by its target, as the Status column shows it and the bar matches it
        if key == "status":  # `status:deprecated` is the Deprecated tab's word on any vault
            return tuple(sorted({*postings.field_values(snapshot, key, shown=True), "deprecated"}))
        return tuple(sorted(postings.field_values(snapshot, key, shown=True)))

    return snapshot.cached(("filterexpr.values", key), build)


def _folded(snapshot: Snapshot, key: str) -> frozenset[str]:
    """What a `key:value` term for `key` can match, casefolded: `_values` and the values as written
    (`[[Published]]` matches too)."""

    def build() -> frozenset[str]:
        raw = postings.field_values(snapshot, key) if key not in ("tags", "trust_tier", "stale") else ()
        return frozenset(v.casefold() for v in (*_values(snapshot, key), *raw))

    return snapshot.cached(("filterexpr.folded", key), build)


def _close(word: str, options: Collection[str], what: str) -> str:
    folded = {o.casefold(): o for o in options}
    same = folded.get(word.casefold())
    if same is not None and same != word:
        return f"; did you mean `{same}`? ({what} differ in case)"
    near = difflib.get_close_matches(word, list(options), n=1, cutoff=0.75) if len(folded) <= 20_000 else []
    return f"; did you mean `{near[0]}`?" if near else ""


def explain(terms: tuple[FilterTerm, ...], snapshot: Snapshot) -> tuple[Hint, ...]:
    """Hints for terms that select nothing because of a likely slip: a key no note has, a value
    or tag that no note has (differing in case from one that exists, or close to one), a folder
    that does not exist. Reads this generation's keys, values and folders (built once, cached:
    run it off the UI thread on a big vault)."""
    hints: list[Hint] = []
    for term in terms:
        if term.key is None:
            continue
        if term.key == "path":
            folders = folder_names(snapshot)
            base = literal_dir(_path_glob(term.value, folders))
            if base and base.casefold() not in folders:
                more = _close(base, folders.values(), "folder names")
                hints.append(Hint(f"no folder is named `{base}`{more}", term.start, term.end))
            continue
        try:
            key, value = _field(term)
        except FilterError:
            continue
        if key in ("trust_tier", "stale") or (key, value.casefold()) == ("status", "deprecated"):
            continue  # the triage tabs' words: they select what the tab lists, whatever keys notes have
        if key == "tags":
            tags = _values(snapshot, "tags")
            want = value.casefold()
            i = bisect_left(tags, want)
            if not (i < len(tags) and tags[i] == want):
                hints.append(Hint(f"no note has the tag `{value}`{_close(want, tags, 'tags')}", term.start, term.end))
            continue
        keys = frontmatter_keys(snapshot)
        if key not in keys and not (key == "status" and snapshot.is_bundle):
            more = _close(key, (*keys, *(k for k in KNOWN_KEYS if k != key)), "keys")
            hints.append(Hint(f"no note has `{term.key}`{more}", term.start, term.end))
            continue
        values = _values(snapshot, key)
        if value.casefold() not in _folded(snapshot, key):  # the bar's values match in any case
            more = _close(value, values, "values")
            if more:
                hints.append(Hint(f"no note has {term.key} `{value}`{more}", term.start, term.end))
    return tuple(hints)


MAX_VALUE_CHOICES = 200_000


def complete(text: str, snapshot: Snapshot) -> str | None:
    """`text` with its last word completed (a key and its colon, a value of that key, a tag
    after `#` or `tag:`, a folder after `path:`), or None when nothing fits. The earliest
    match in sort order wins; values with spaces are quoted."""
    found = completions(text, snapshot, limit=1)
    return found[0][1] if found else None


def completions(text: str, snapshot: Snapshot, *, limit: int = 50) -> tuple[tuple[str, str], ...]:
    """The candidates for the last word of `text`, at most `limit`, each as (the candidate as
    shown, `text` with the last word replaced by it): keys (with their colon), the values of the
    key being typed, tags after `#` or `tag:`, folders after `path:`. Same order as `complete`
    (its answer is the first): case-sensitive prefix matches in sort order, then the others."""
    if not text or text[-1].isspace() or text.count('"') % 2:
        return ()
    start = max(text.rfind(" "), text.rfind("\t")) + 1
    word = text[start:]
    lead = "-" if word.startswith("-") else ""
    word = word[len(lead) :]
    if word.startswith("#"):
        head = text[:start] + lead + "#"
        return tuple(
            (head + done, head + done) for done in _matches(_values(snapshot, "tags"), word[1:].casefold(), limit)
        )
    if ":" in word:
        key, _, prefix = word.partition(":")
        if prefix.startswith('"'):
            return ()
        if key == "path":
            options: tuple[str, ...] = tuple(sorted(folder_names(snapshot).values()))
        else:
            full = KEY_ALIASES.get(key, key)
            options = _values(snapshot, full)
            if full == "tags":
                prefix = prefix.lstrip("#").casefold()
        out = []
        for done in _matches(options, prefix, limit):
            shown = f'"{done}"' if " " in done else done
            out.append((key + ":" + shown, text[:start] + lead + key + ":" + shown))
        return tuple(out)
    if len(word) < 2:
        return ()
    keys = tuple(sorted({*frontmatter_keys(snapshot), *KNOWN_KEYS}))
    return tuple((done + ":", text[:start] + lead + done + ":") for done in _matches(keys, word, limit))


def _matches(options: tuple[str, ...], prefix: str, limit: int) -> list[str]:
    """The options that start with `prefix` and are longer: case-sensitive ones in sort order,
    then (among the first MAX_VALUE_CHOICES) those that match regardless of case."""
    out: list[str] = []
    i = bisect_left(options, prefix)
    while i < len(options) and options[i].startswith(prefix) and len(out) < limit:
        if options[i] != prefix:
            out.append(options[i])
        i += 1
    folded = prefix.casefold()
    seen = set(out)
    for option in options[:MAX_VALUE_CHOICES]:
        if len(out) >= limit:
            break
        if option not in seen and option.casefold().startswith(folded) and len(option) > len(prefix):
            out.append(option)
            seen.add(option)
    return out
