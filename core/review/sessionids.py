"""How the person sees an agent session's id, and how an id they type back is found.

A session id is long (a transport's 32 hex digits, or `bridge-` and 12), so it is shown by a
prefix; a fixed cut (`bridge-7`) named several sessions at once, and a command given it
silently merged them. Shown here: the shortest prefix of at least SHOWN characters that starts
no other session of the journal (the whole id when it is itself the start of another), so what
is shown can be pasted back into `--session`; and `resolve` finds the one session a typed id
names, refusing one that names several. An exact id wins over a longer one it starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from vaultwatch.core.errors import VaultError

SHOWN = 12  # at least this many characters: a session shown today still reads the same tomorrow, mostly


def shown_forms(sessions: Iterable[str]) -> dict[str, str]:
    """Each session's shortest unique prefix (at least SHOWN characters, or the whole id)."""
    ordered = sorted(set(sessions))
    out: dict[str, str] = {}
    for i, session in enumerate(ordered):
        need = SHOWN
        for j in (i - 1, i + 1):
            if 0 <= j < len(ordered):
                need = max(need, len(os.path.commonprefix([session, ordered[j]])) + 1)
        out[session] = session[:need]
    return out


def shown(session: str, sessions: Iterable[str]) -> str:
    """How `session` is shown among `sessions` (the journal's)."""
    return shown_forms([session, *sessions])[session]


def resolve(given: str, sessions: Iterable[str]) -> str:
    """The one session of `sessions` that `given` (an id or its prefix) names; VaultError when it
    names none or several (it says which, so that the person can give more of the id)."""
    known = set(sessions)
    if given in known:
        return given
    matches = sorted(s for s in known if s.startswith(given))
    if not matches:
        raise VaultError(f"no change of session {given!r} in the journal (`vaultwatch changes` lists sessions)")
    if len(matches) > 1:
        forms = shown_forms(known)
        named = ", ".join(forms[s] for s in matches[:5]) + (", …" if len(matches) > 5 else "")
        raise VaultError(f"{given!r} names {len(matches)} sessions ({named}); give more of its id")
    return matches[0]
