"""One object for equal values across a load's index entries.

A vault repeats itself: the same `status:` and `created:` values, the same tag lists, the same
link written in many notes. Parsed apart (in worker processes, in chunks), each entry arrives
with its own copy of every value: at 100k notes a cold load held ~39 MB more than a warm
start from the entry cache, which shared values within each of its buckets only.

- Short frontmatter and tag strings are interned (`sys.intern`): one object process-wide, and
  still freed once no entry holds it. A note's title is left alone (mostly unique: interning
  would only grow the interpreter's table); the entry cache interns by the same rule
  (`worth_interning`), and marshal keeps strings interned, so a warm start shares them too.
- Equal frontmatter lists and mappings inside them (`tags: [a, b]`, `verified: [...]`) are
  one object, compared with their types (`[1]` is not `[true]`): by `Sharing` for a load, by
  the entry cache within a bucket (`frozen` is their common key).
- Links, tag tuples and small ints are shared through one `Sharing` per load, dropped after it.

Entries are records that every snapshot shares, so their values are read-only already
(core.model.Entry); sharing changes nothing a reader can see but `is`.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable, Iterable, Iterator
from typing import Any

from vaultwatch.core.model import Entry, Skipped

SHORT_CHARS = 64  # strings up to this long are shared (longer ones rarely repeat)
_SCALARS = (str, int, float, bool, type(None))


def worth_interning(text: str, title: str) -> bool:
    """Whether a frontmatter or tag string of an entry titled `title` is interned."""
    return len(text) <= SHORT_CHARS and text != title


def interned(value: Any, title: str) -> Any:
    """A frontmatter value with its short strings interned (dicts and lists rebuilt), except
    the entry's title."""
    if isinstance(value, str):
        return sys.intern(value) if worth_interning(value, title) else value
    if isinstance(value, dict):
        return {interned(k, title): interned(v, title) for k, v in value.items()}
    if isinstance(value, list):
        return [interned(v, title) for v in value]
    return value


def frozen(value: Any) -> Hashable | None:
    """A key under which equal frontmatter values meet, types included (`1`, `1.0` and `True`
    are equal in Python, not in YAML or JSON); None for a value that holds anything else."""
    t = type(value)
    if t in _SCALARS:
        return (t, value)
    if t is list:
        if all(type(v) is str for v in value):  # the common case (`tags:`, `aliases:`), quickly
            return ("strs", tuple(value))
        items = tuple([frozen(v) for v in value])
        return None if None in items else ("list", items)
    if t is dict:
        pairs = tuple([(k, frozen(v)) for k, v in value.items()])
        return None if any(v is None for _, v in pairs) else ("dict", pairs)
    return None


def _short_strings(value: Any) -> Iterator[str]:
    """The short strings of a frontmatter value (nested dicts and lists)."""
    if isinstance(value, str):
        if len(value) <= SHORT_CHARS:
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _short_strings(k)
            yield from _short_strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _short_strings(v)


def interned_memo(entries: Iterable[Entry]) -> dict:
    """The entry cache's sharing memo for one bucket: each short frontmatter and tag string of
    its entries that `worth_interning`, mapped to its interned self.

    marshal writes an interned string as such, and its load interns it again: such a value is
    then one object for the whole loaded index, not one per bucket. At 100k notes a `created:`
    date repeated across the vault was ~85k strings (a bucket shared only its own copies).
    """
    memo: dict = {}
    for e in entries:
        title = e.title
        for text in (*_short_strings(e.frontmatter), *e.tags):
            if text not in memo and worth_interning(text, title):
                memo[text] = sys.intern(text)
    return memo


class Sharing:
    """The shared values of one load: feed it every freshly parsed entry (`share_all`)."""

    def __init__(self) -> None:
        self._links: dict = {}
        self._tuples: dict = {}
        self._ints: dict = {}
        self._containers: dict = {}

    def share_all(self, found: Iterable[Entry | Skipped]) -> None:
        """Share the values of each Entry in `found`, in place.

        Only for entries just built or unpickled, which no snapshot holds yet: their slots are
        set directly (Entry is frozen to its readers, not to the load that makes it)."""
        links, tuples, ints = self._links.setdefault, self._tuples.setdefault, self._ints.setdefault
        put = object.__setattr__
        for e in found:
            if not isinstance(e, Entry):
                continue
            if e.links:
                put(e, "links", tuple([links(link, link) for link in e.links]))
            if e.tags:
                put(
                    e,
                    "tags",
                    tuples(e.tags, tuple([sys.intern(t) if worth_interning(t, e.title) else t for t in e.tags])),
                )
            if e.frontmatter:
                self._frontmatter(e.frontmatter, e.title)
            put(e, "size_bytes", ints(e.size_bytes, e.size_bytes))
            put(e, "content_chars", ints(e.content_chars, e.content_chars))
            put(e, "kind", sys.intern(e.kind))
            put(e, "okf_status", sys.intern(e.okf_status))
            put(e, "okf_trust", sys.intern(e.okf_trust))

    def _frontmatter(self, fm: dict, title: str) -> None:
        """Share a frontmatter mapping's values in place (nothing else holds it yet): its keys
        are kept (the YAML reader shares them already: one copy per parsed chunk)."""
        intern, containers = sys.intern, self._containers
        for k, v in fm.items():
            t = type(v)
            if t is str:
                if worth_interning(v, title):
                    fm[k] = intern(v)
            elif t is list or t is dict:
                key = frozen(v)
                if key is None:
                    fm[k] = interned(v, title)
                    continue
                shared = containers.get(key)
                if shared is None:  # the first of its kind: interned once
                    shared = containers[key] = interned(v, title)
                fm[k] = shared
