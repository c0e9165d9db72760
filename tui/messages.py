"""Textual messages the app posts to itself when core events arrive from other threads.

Floods are coalesced: a pending `IndexChanged` or `IndexProgressed` is replaced by a newer
one (Message.can_replace), so a `git checkout` of 5,000 files costs one refresh, not 5,000.
Agent calls are never coalesced: every call gets its activity row.
"""
from __future__ import annotations

from textual.message import Message

from core.events import AgentAccess, AgentConnected


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

    def __init__(self, text: str, severity: str) -> None:
        super().__init__()
        self.text, self.severity = text, severity


class AgentCalled(Message):
    """One MCP tool call by one agent."""

    def __init__(self, event: AgentAccess) -> None:
        super().__init__()
        self.event = event


class AgentPresence(Message):
    """An agent session connected or went away."""

    def __init__(self, event: AgentConnected) -> None:
        super().__init__()
        self.event = event
