"""Which documents agents listed, read or wrote, by whom and when (for list and tree markers)."""

from __future__ import annotations

from dataclasses import dataclass

from vaultwatch.core.events import AgentAccess
from vaultwatch.core.review.agentrules import agent_name

MAX_PATHS_PER_CALL = 5000  # a full unpaged listing of a huge vault marks its first pages only
READ_WORDS = ("read",)  # read, vault_read_note, obsidian_read_note...


@dataclass(frozen=True, slots=True)
class Mark:
    """The latest agent access to one document or folder."""

    agent: str
    kind: str  # "read", "listed" or "wrote"
    at: float
    change: str | None = None  # a write's diff summary ("+3 -1 lines"), shown in the preview's header


def access_kind(event: AgentAccess) -> str:
    """Classify a call as a write, a read of specific documents, or a listing."""
    if event.write:
        return "wrote"
    tool = event.tool.lower()
    return "read" if any(w in tool for w in READ_WORDS) else "listed"


class AgentMarks:
    """Latest mark per path and per folder; `version` bumps on every change."""

    def __init__(self) -> None:
        self.by_path: dict[str, Mark] = {}
        self.by_folder: dict[str, Mark] = {}
        self.version = 0

    def record(self, event: AgentAccess) -> tuple[str, ...]:
        """Mark the event's paths; returns the paths marked."""
        paths = event.paths[:MAX_PATHS_PER_CALL]
        if not paths:
            return ()
        kind = access_kind(event)
        for path in paths:
            old = self.by_path.get(path)
            # a listing never hides a more telling read or write of the same moment
            if old is not None and kind == "listed" and old.kind != "listed" and event.at - old.at < 60:
                continue
            mark = Mark(event.agent, kind, event.at, event.diff_summary if kind == "wrote" else None)
            self.by_path[path] = mark
            folder = path
            while "/" in folder:
                folder = folder.rsplit("/", 1)[0]
                self.by_folder[folder] = mark
        self.version += 1
        return paths

    def get(self, path: str) -> Mark | None:
        return self.by_path.get(path)

    def folder(self, folder: str) -> Mark | None:
        return self.by_folder.get(folder)


def short_agent(agent: str) -> str:
    """The client name without its version ("claude-desktop/0.9" -> "claude-desktop"), cut as the
    agent rules cut it (`agent_name`: a name may hold a slash)."""
    return agent_name(agent) or agent


def ago(seconds: float) -> str:
    """A short "how long ago": now, 12s, 3m, 2h, 4d."""
    s = max(0, int(seconds))
    if s < 2:
        return "now"
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h"
    return f"{s // 86400}d"


PALETTE = ("#5fafff", "#ffaf5f", "#af87ff", "#5fd787", "#ff87af", "#d7d75f", "#87d7d7", "#ff8787")


class AgentColors:
    """A stable colour per agent name, in order of first appearance. Keyed by the name alone, not the
    `name/version` label: the same agent after an update of its client is still the agent the person
    has learnt to pick out by its colour."""

    def __init__(self) -> None:
        self._colors: dict[str, str] = {}

    def __call__(self, agent: str) -> str:
        name = agent_name(agent)
        color = self._colors.get(name)
        if color is None:
            color = self._colors[name] = PALETTE[len(self._colors) % len(PALETTE)]
        return color
