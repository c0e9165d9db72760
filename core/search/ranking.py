"""How search ranks: which words must match, the words a page's name stands for, and the score.

Pure functions over plain values (no SQLite here): `core.search.fulltext` asks FTS5 for candidates and
per-term signals, and this module turns them into a score that carries signal for common
terms too. BM25 with an IDF that never reaches zero (ln(1 + (N - n + 0.5) / (n + 0.5)),
unlike FTS5's, which is ~0 for a term in more than half the notes), field boosts for the
file name / title, aliases and headings (less for a word there only through its stem), a bonus
when every word is in the name, a bigger one when the name, title or an alias is the query itself,
a proximity bonus when the words stand close together, then the OKF factors.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# words a question or a sentence carries that say nothing about the answer: they need not match
STOP_WORDS = frozenset(
    """
a about an and any are as at be been but by can could did do does doing for from get got had has have
how i if in into is it its me my of on or our should so some than that the their them then there these
this those to too us was we were what when where which who whom why will with would you your
""".split()
) - {"get"}  # "get" names commands (Get-AzVM): kept
# the approved PowerShell verbs people type as a plain word ("create virtual machine" for New-AzVM)
VERB_WORDS = {
    "new": "create add",
    "remove": "delete",
    "get": "list show",
    "set": "update change configure",
    "add": "create",
    "invoke": "run",
    "start": "run",
    "undo": "recover restore",
}
_VERB_NOUN = re.compile(r"([A-Z][a-z]+)-([A-Za-z][A-Za-z0-9]*)")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

# the score's parts (multiples of a term's IDF)
B_TITLE = 2.0  # the term is in the file name or title
B_ALIAS = 1.5  # ... in an alias
B_HEADING = 0.8  # ... in a heading
B_ALL_IN_TITLE = 2.5  # every term is in the name/title/aliases (per unit of the query's total IDF)
B_NEAR = 1.0  # every term within a few words of the others (per unit of the total IDF)
# a term in the name/title or an alias only through its stem ("minimal" in minimize-on-close: both
# stem to "minim") gets this share of those boosts: a page that holds the word as typed ranks above it
STEM_ONLY = 0.5
# the name, title or an alias is the query (`named_key`): above anything the other parts add up to
# (at most B_TITLE + B_ALIAS + B_HEADING + BM25's k1 + 1 + B_ALL_IN_TITLE + B_NEAR per unit of the
# total IDF), so that note ranks first unless the OKF factors demote it
B_NAMED = 11.0
NEAR_DISTANCE = 4
# bm25 column weights: path, name, title, aliases, headings, property values, body. A property value
# weighs what a word of the body weighs: a deliberate statement about the note (`director: [[Ridley
# Scott]]`), yet shared by many notes (`categories: [[Movies]]`), and a note named for the word,
# titled or aliased by it stays above the notes that only point to it
WEIGHTS = (1.0, 4.0, 4.0, 3.0, 2.0, 1.0, 1.0)
BM25_K1, BM25_B = 1.2, 0.75  # FTS5's bm25() constants (fts5_aux.c)


def name_words(stem: str) -> str:
    """The words a file name stands for: `New-AzVM` -> "New Az VM create add".

    Camel case and punctuation split; a word in -ment adds its stem word (Deployment: Deploy);
    a Verb-Noun command name adds the plain words for its verb. Indexed as its own column, so "create virtual machine" reaches New-AzVM's name.
    """
    words = _CAMEL.findall(stem)
    # a noun in -ment also stands for its verb: Porter stems "deploy" to "deploi" but "deployment"
    # to "deploy", so "deploy template" would never reach New-AzResourceGroupDeployment's name
    words += [w[:-4] for w in words if len(w) > 6 and w.lower().endswith("ment")]
    out = " ".join(words)
    m = _VERB_NOUN.match(stem)
    if m and m.group(1).lower() in VERB_WORDS:
        out += " " + VERB_WORDS[m.group(1).lower()]
    return out


def is_stop(word: str) -> bool:
    return word.casefold() in STOP_WORDS


def idf(n: int, total: int) -> float:
    """An IDF that stays positive for a term in most notes."""
    return math.log(1.0 + (total - n + 0.5) / (n + 0.5))


def fts_idf(n: int, total: int) -> float:
    """The IDF FTS5's bm25() used (clamped at 1e-6), to recover its term-frequency part."""
    value = math.log((total - n + 0.5) / (n + 0.5)) if total else 0.0
    return value if value > 0 else 1e-6


def fts_bm25(freqs: Sequence[float], fts_idfs: Sequence[float], size: int, avgdl: float) -> float:
    """FTS5's `-bm25(...)` of one row, worked out as fts5Bm25Function works it out: the same operations on
    the same doubles in the same order, so the same double. `freqs`: each phrase's instances in the row, each
    counted at its column's weight; `fts_idfs`: each phrase's `fts_idf`; `size`: the row's tokens over every
    column; `avgdl`: the table's tokens per row."""
    k1, b = BM25_K1, BM25_B
    score = 0.0
    for f, w in zip(freqs, fts_idfs, strict=True):
        score += w * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * size / avgdl)))
    return score


@dataclass(slots=True)
class TermSignal:
    """Where one query term is in one candidate note."""

    present: bool = False  # anywhere in the note
    in_title: bool = False  # name or title
    in_alias: bool = False
    in_heading: bool = False
    stem_only: bool = False  # in the name/title or an alias only through its stem, never as typed


def score(
    signals: Sequence[TermSignal],
    idfs: Sequence[float],
    bm25: float,
    fts_idf_sum: float,
    near: bool,
    factor: float = 1.0,
    named: bool = False,
) -> float:
    """The note's score.

    `bm25` is FTS5's -bm25() of the whole query for the note: the sum over terms of FTS5's
    IDF times BM25's saturated term frequency. Divided by the sum of FTS5's IDFs it is the
    note's mean term frequency, which times our IDFs gives BM25 with an IDF that carries
    signal for common terms too. The field boosts, the all-in-title bonus, the proximity bonus
    and the bonus of a note `named` by the query are multiples of the terms' IDFs; a name, title
    or alias match only through a stem counts STEM_ONLY of its boosts; then coverage squared (in
    "any" mode a note with fewer of the words ranks lower) and the OKF factor.
    """
    total = sum(idfs) or 1.0
    matched = 0.0
    s = 0.0
    all_in_title = bool(signals)
    as_typed = True  # every name/title/alias match holds the word as typed
    for sig, w in zip(signals, idfs, strict=False):
        if not sig.present:
            all_in_title = False
            continue
        matched += w
        named_by = B_TITLE * sig.in_title + B_ALIAS * sig.in_alias
        if sig.stem_only:
            named_by *= STEM_ONLY
            as_typed = False
        s += w * (named_by + B_HEADING * sig.in_heading)
        all_in_title = all_in_title and (sig.in_title or sig.in_alias)
    s += (bm25 / fts_idf_sum if fts_idf_sum > 0 else 0.0) * matched
    if all_in_title:
        s += B_ALL_IN_TITLE * total * (1.0 if as_typed else STEM_ONLY)
    if named:
        s += B_NAMED * total
    if near:
        s += B_NEAR * total
    coverage = matched / total
    return s * coverage * coverage * factor


_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def folded_words(text: str) -> list[str]:
    """The words of `text` as the index's tokenizer splits and folds them, before any stemming:
    letters and digits, case-folded, without diacritics (NFKD, combining marks dropped)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return _TOKEN.findall("".join(ch for ch in decomposed if not unicodedata.combining(ch)))


def named_key(text: str) -> tuple[str, ...]:
    """What a query and a note's name, title or alias are compared by: their folded words, so case,
    Unicode forms and punctuation or spacing between the words make no difference
    ("obsidian-core plugins" and "Obsidian Core Plugins" are the same)."""
    return tuple(folded_words(text))


def as_typed(term_words: Sequence[str], prefix: bool, words: set[str] | frozenset[str]) -> bool:
    """Whether `words` (a note's name, title and aliases, `folded_words`) hold a term's words as typed,
    not only their stems (a prefix term: its last word starts one of them)."""
    if not term_words:
        return False
    whole = term_words[:-1] if prefix else term_words
    if not all(w in words for w in whole):
        return False
    return not prefix or any(w.startswith(term_words[-1]) for w in words)


def similar_text(a: str, b: str, threshold: float = 0.8) -> bool:
    """Near-identical texts: the Jaccard overlap of their word sets is at least `threshold`."""
    wa, wb = set(_TOKEN.findall(a.casefold())), set(_TOKEN.findall(b.casefold()))
    if not wa or not wb:
        return wa == wb
    return len(wa & wb) / len(wa | wb) >= threshold


def _natural(path: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path))


def newest_first(paths: Iterable[str]) -> list[str]:
    """Paths in natural order, highest first (azps-12.5.0 before azps-9.7.0)."""
    return sorted(paths, key=_natural, reverse=True)
