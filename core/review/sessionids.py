"""How the person sees an agent session's id, and how an id they type back is found.

A session id is long (a transport's 32 hex digits, `bridge-` and 12, or a stateless client's
`NAME@stateless-` and 8), so it is shown short. A cut at a fixed length, or at the shortest unique
prefix of the whole id, lands in the part every session of a kind shares (`bridge-7`,
`scribe@state`): two sessions read alike and a command given the cut names both. So an id is
split into its label (`NAME@`, `bridge-`, nothing for a bare id) and its random part, and shown
as the label and the random part's shortest prefix of at least TAIL characters that no other
session with that label starts with: `scribe@a6c7e1f2`, `bridge-cac75d1e`, `7054d34d`. Every
place the person reads a session shows this form, and `resolve` takes it back (an id, a prefix
of one, or a shown form), refusing one that names several. An exact id wins over a longer one.

An agent is shown less (`agent_tag`): on the HTTP socket a session id is what a request carries
to act in that session, so an agent reading another's history sees the label and a quarter of
the random part, enough to tell sessions apart and too little to act as one.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable
from typing import Any

from vaultwatch.core.errors import VaultError

TAIL = 8  # at least this many characters of the random part (all of a shorter one)

_LABELLED = (
    re.compile(r"(?P<label>[^@\s]{1,80}@)stateless-(?P<tail>[0-9a-f]+)"),  # a stateless client's, named
    re.compile(r"(?P<label>bridge-)(?P<tail>[0-9a-f]+)"),  # a bridge's client's
)


def parts(session: str) -> tuple[str, str]:
    """(label, random part) of a session id; a bare or unknown id is all random part."""
    for pattern in _LABELLED:
        m = pattern.fullmatch(session)
        if m:
            return m["label"], m["tail"]
    return "", session


class _Known:
    """The journal's sessions, sorted by id and, per label, by random part: prefixes by bisection."""

    def __init__(self, sessions: Iterable[str]) -> None:
        self.ids = sorted(set(sessions))
        tails: dict[str, list[tuple[str, str]]] = {}
        for s in self.ids:
            label, tail = parts(s)
            tails.setdefault(label, []).append((tail, s))
        self.tails = {label: sorted(found) for label, found in tails.items()}
        self.tail_keys = {label: [t for t, _s in found] for label, found in self.tails.items()}

    def matches(self, given: str, limit: int | None = None) -> list[str]:
        """Sessions `given` names: ids it starts, and ids whose label it repeats and whose random
        part it starts after the label (at most `limit`)."""
        out = [self.ids[i] for i in _starting(self.ids, given, limit)]
        label, sep, rest = given.partition("@")
        if sep and label + "@" in self.tails:
            found = self.tails[label + "@"]
            out += [found[i][1] for i in _starting(self.tail_keys[label + "@"], rest, limit)]
        return sorted(set(out))[:limit]

    def form(self, session: str) -> str:
        label, tail = parts(session)
        siblings = self.tails.get(label, [])
        need = min(len(tail), TAIL)
        at = bisect.bisect_left(siblings, (tail, session))
        for j in (at - 1, at + 1):
            if 0 <= j < len(siblings) and siblings[j][1] != session:
                need = max(need, len(os.path.commonprefix([tail, siblings[j][0]])) + 1)
        shown = label + tail[:need]
        # a header's free-form id may read like another's shown form: then the whole id, exact
        return shown if self.matches(shown, 2) == [session] else session


def _starting(keys: list[str], prefix: str, limit: int | None) -> range:
    """The indexes of the sorted `keys` that start with `prefix` (at most `limit`)."""
    at = bisect.bisect_left(keys, prefix)
    end = at
    while end < len(keys) and keys[end].startswith(prefix) and (limit is None or end - at < limit):
        end += 1
    return range(at, end)


def shown_forms(sessions: Iterable[str]) -> dict[str, str]:
    """Each session's shown form among `sessions` (label and the random part's unique prefix)."""
    known = _Known(sessions)
    return {s: known.form(s) for s in known.ids}


def forms_among(journal: Any, sessions: Iterable[str]) -> dict[str, str]:
    """`shown_forms` of `sessions`, unique among the journal's sessions too (None: no journal): the
    forms `vaultwatch changes` shows and `--session` takes back, wherever else they are listed."""
    known = journal.sessions() if journal is not None else []
    return shown_forms([*known, *sessions])


def shown(session: str, sessions: Iterable[str]) -> str:
    """How `session` is shown among `sessions` (the journal's)."""
    return shown_forms([session, *sessions])[session]


def agent_tag(session: str) -> str:
    """What an agent sees of a session (see the module doc): its label and a quarter of the random
    part (2 to 8 characters), never enough to act as it."""
    label, tail = parts(session)
    return label + tail[: min(8, max(2, len(tail) // 4))]


def resolve(given: str, sessions: Iterable[str]) -> str:
    """The one session of `sessions` that `given` (an id, its prefix, or its shown form) names;
    VaultError when it names none or several (it says which, so that the person can give more)."""
    known = _Known(sessions)
    if given in set(known.ids):
        return given
    matches = known.matches(given)
    if not matches:
        raise VaultError(f"no change of session {given!r} in the journal (`vaultwatch changes` lists sessions)")
    if len(matches) > 1:
        named = ", ".join(known.form(s) for s in matches[:5]) + (", …" if len(matches) > 5 else "")
        raise VaultError(f"{given!r} names {len(matches)} sessions ({named}); give more of its id")
    return matches[0]
