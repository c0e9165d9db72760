"""The last answer of a search, given again for the same words within a moment.

Search as you type asks again for the same words after a space or a stop word ("deploy ",
"deploy in"): the keyword index (`ftsquery`) and hybrid search each keep their last answer in a
`LastAnswer` and give it again for an equal key (the words, scope, page and what the answer was
ranked from) for at most REUSE_SECONDS: a stale_after moment passing in between is missed for at
most that long. At 100k notes a search is worth saving on every such key.
"""

from __future__ import annotations

import time
from typing import Any

REUSE_SECONDS = 1.0  # how long the last answer may be given again for an equal key


class LastAnswer:
    """One kept answer under its key. Not locked: a race only costs a search done again."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: tuple[Any, float, Any] | None = None  # (key, kept at, answer)

    def get(self, key: Any) -> Any:
        """The answer kept under an equal key within REUSE_SECONDS, else None."""
        kept = self._kept
        if kept is not None and kept[0] == key and time.monotonic() - kept[1] < REUSE_SECONDS:
            return kept[2]
        return None

    def keep(self, key: Any, answer: Any) -> None:
        self._kept = (key, time.monotonic(), answer)
