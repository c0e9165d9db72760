"""Sessions for agents that bring none: a stateless MCP client without the bridge (the 2026-07-28
protocol, one POST per call) names only itself, so its calls are grouped into working sessions by
time: a call after the agent was idle for `VAULTWATCH_STATELESS_SESSION_MINUTES` starts a new one.
`vaultwatch revert --session ID` then reverts one working batch of such an agent, not its whole
history.

    sessions = IdleSessions(clock=vault.clock)
    sessions.session_for("claude-code")   # "claude-code@stateless-1f2e3d4c", the same until idle

Idle time is counted on the clock's monotonic reference (core.clock.reference), so a wall clock
stepped back or forward neither splits nor joins sessions; a clock without one (a fixed `--as-of`
clock, which never moves) is replaced by the system clock.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass

from vaultwatch.core import settings
from vaultwatch.core.clock import Clock, SystemClock, reference

GAP_SETTING = "VAULTWATCH_STATELESS_SESSION_MINUTES"


@dataclass
class _Open:
    session: str
    boot: str
    last: float


class IdleSessions:
    """The current working session of each sessionless agent name (thread-safe)."""

    def __init__(self, clock: Clock | None = None, gap_minutes: float | None = None) -> None:
        self._clock: object = clock if clock is not None and hasattr(clock, "reference") else SystemClock()
        gap = gap_minutes if gap_minutes is not None else settings.env(GAP_SETTING)
        self.gap_s = max(0.0, float(gap)) * 60.0
        self._lock = threading.Lock()
        self._open: dict[str, _Open] = {}

    def session_for(self, name: str) -> str:
        """The session of a call by `name` now: the last one, unless it has been idle longer than the gap."""
        boot, now = reference(self._clock)
        with self._lock:
            cur = self._open.get(name)
            if cur is None or cur.boot != boot or now - cur.last > self.gap_s:
                cur = self._open[name] = _Open(f"{name}@stateless-{uuid.uuid4().hex[:8]}", boot, now)
            cur.last = now
            return cur.session


__all__ = ["GAP_SETTING", "IdleSessions"]
