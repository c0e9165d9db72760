"""The statuses the person is offered when setting a note's status (the TUI's `c`): the vault's own.

On an OKF bundle they are OKF's three (`draft`, `stable`, `deprecated`). On any other vault they
are the words its notes' `status` holds (as `triagerules.status_words` reads them, so kepano's
`status: ["[[Published]]"]` is `Published`), the most used first, each written back in the form
the vault's notes hold it in most often (a list of links stays a list of links), and then the
first word of the person's `deprecated_status` rule when no offered word is one of them: setting
it is how a note moves to the Deprecated tab. That word is written as plain text, never as a link
to a note nobody wrote. Notes in the templates folders and notes whose frontmatter does not parse
hold no status here, as in the Notes list.

The person may also type a word none of them is (`typed`): a new status, written as plain text,
checked first so that what lands in the note's frontmatter is one short, visible word (a line break
would end the YAML value, an invisible character would make two statuses that read the same).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.markdown import okf
from vaultwatch.core.model import Entry
from vaultwatch.core.query.problems import in_folders
from vaultwatch.core.query.triagerules import TriageRules, status_words

MOST = 9  # the dialog picks them with the keys 1 to 9
MAX_TYPED = 40  # characters of a typed status: a word or a few, never a paragraph in the frontmatter


@dataclass(frozen=True, slots=True)
class StatusChoice:
    """One status the person can set: `word` as shown, `value` as written to `status`, how many
    notes hold it now, and whether it is offered for the person's deprecated rule alone."""

    word: str
    value: Any
    notes: int = 0
    rule: bool = False


def choices(snapshot: Snapshot, rules: TriageRules, templates: tuple[str, ...] = ()) -> tuple[StatusChoice, ...]:
    """The statuses to offer for `snapshot`'s vault (see the module's docstring), at most MOST.
    Memoized per snapshot, rules and templates folders."""
    if snapshot.is_bundle:
        return tuple(StatusChoice(word, word) for word in okf.STATUSES)
    key = ("statuschoices", rules.deprecated_status, templates)
    return snapshot.cached(key, lambda: _vault_choices(snapshot, rules, templates))


def _vault_choices(snapshot: Snapshot, rules: TriageRules, templates: tuple[str, ...]) -> tuple[StatusChoice, ...]:
    notes: Counter[str] = Counter()
    forms: dict[str, Counter[tuple[str, bool]]] = {}
    for entry in snapshot.entries:
        if entry.kind != "note" or entry.frontmatter_error or in_folders(entry.path, templates):
            continue
        raw = entry.frontmatter.get("status")
        items = raw if isinstance(raw, list) else [raw]
        for item in items:
            words = status_words(item)
            if not isinstance(item, str) or len(words) != 1:
                continue
            folded = words[0].casefold()
            notes[folded] += 1
            forms.setdefault(folded, Counter())[(item.strip(), isinstance(raw, list))] += 1
    ranked = sorted(notes, key=lambda w: (-notes[w], w))
    deprecated = rules.deprecated_status
    needs_rule = bool(deprecated) and not any(w in deprecated for w in ranked[:MOST])
    out = []
    for folded in ranked[: MOST - 1 if needs_rule else MOST]:
        (item, as_list), _ = forms[folded].most_common(1)[0]
        out.append(StatusChoice(status_words(item)[0], [item] if as_list else item, notes[folded]))
    if needs_rule:
        out.append(StatusChoice(deprecated[0], deprecated[0], rule=True))
    return tuple(out)


def typed(text: str, offered: tuple[StatusChoice, ...], bundle: bool) -> StatusChoice | str:
    """The status the person typed, as a choice to write (an offered one when it is that word, in
    any case: written in the vault's form of it), or why it cannot be one, in the person's words."""
    word = text.strip(" ")
    if not word:
        return "type a status word: an empty status says nothing"
    if any(c in word for c in "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"):
        return "a status is one line: no line breaks"
    if not word.isprintable():
        return "a status holds visible characters only: no tabs, control or invisible characters"
    if len(word) > MAX_TYPED:
        return f"a status is at most {MAX_TYPED} characters; this one has {len(word)}"
    for choice in offered:
        if choice.word.casefold() == word.casefold():
            return choice
    if bundle:
        return f"an OKF bundle's status is one of {', '.join(okf.STATUSES)}, not {word!r}"
    return StatusChoice(word, word)


def current(entry: Entry, bundle: bool) -> str | None:
    """The word a note's status says now, as `choices` spells words (None: it has none)."""
    if bundle:
        return entry.okf_status
    words = status_words(entry.frontmatter.get("status"))
    return words[0] if words else None
