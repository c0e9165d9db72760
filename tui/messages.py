"""Textual messages the app posts to itself when core events arrive from other threads.

Floods are coalesced: a pending `IndexChanged` or `IndexProgressed` is replaced by a newer
one (Message.can_replace), so a `git checkout` of 5,000 files costs one refresh, not 5,000.
Agent calls are never dropped: each waits in the app's backlog and gets its activity row; the
`AgentCalled` notices coalesce, so a burst of calls is drawn in one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.message import Message

from vaultwatch.core.events import AgentAccess, AgentConnected

if TYPE_CHECKING:
    from vaultwatch.tui.flows.querying import ListRequest


# s: a notice of something that stands until the person acts (a rule matching nothing) stays until
# they dismiss it (a click), not the few seconds a passing notice gets
LASTING_NOTICE_S = 24 * 3600.0


class IndexChanged(Message):
    """The index moved to a new generation (the views re-query)."""

    def __init__(self, generation: int) -> None:
        super().__init__()
        self.generation = generation

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexChanged)


class IndexProgressed(Message):
    """Start-up indexing progress."""

    def __init__(self, phase: str, done: int, total: int) -> None:
        super().__init__()
        self.phase, self.done, self.total = phase, done, total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgressed)


class IndexLoaded(Message):
    """The first complete index exists."""

    def __init__(self, notes: int, seconds: float) -> None:
        super().__init__()
        self.notes, self.seconds = notes, seconds


class ProblemReported(Message):
    """Something the user should know (a vanished vault, a cache rebuilt, an indexing error)."""

    def __init__(self, text: str, severity: str, lasting: bool = False) -> None:
        super().__init__()
        self.text, self.severity, self.lasting = text, severity, lasting


class AgentCalled(Message):
    """MCP tool calls are waiting in the app's backlog. Coalesced: the handler draws every
    waiting call (each gets its row), so a queued notice adds nothing."""

    def __init__(self, event: AgentAccess) -> None:
        super().__init__()
        self.event = event

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AgentCalled)


class AgentPresence(Message):
    """An agent session connected or went away."""

    def __init__(self, event: AgentConnected) -> None:
        super().__init__()
        self.event = event


class ListReady(Message):
    """A list query finished (posted from its thread); shown only if no newer one was asked."""

    def __init__(self, request: ListRequest, rows: Sequence[Any], total: int) -> None:
        super().__init__()
        self.request, self.rows, self.total = request, rows, total


class ListFailed(Message):
    """A list query was refused (e.g. a bad glob): the filter bar shows why."""

    def __init__(self, seq: int, error: str) -> None:
        super().__init__()
        self.seq, self.error = seq, error
