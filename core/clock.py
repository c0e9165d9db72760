"""Injected time. Everything that depends on "now" (staleness, snapshots) takes a Clock.

A clock may also give a monotonic reference, `reference()`: (boot id, seconds on a clock that
never steps within that boot). The change journal records it with each change so that order
and "since 30m" survive the wall clock being stepped (see `reference`).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass
from typing import Protocol


class Clock(Protocol):
    """A source of the current instant and the current calendar day."""

    def now(self) -> dt.datetime:
        """The current instant, timezone-aware."""

    def today(self) -> dt.date:
        """The current calendar day (the user's local day for the system clock)."""


_boot_id: str | None = None


def boot_id() -> str:
    """This machine's boot (Linux's random boot id); monotonic readings compare only within one boot."""
    global _boot_id
    if _boot_id is None:
        try:
            with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
                _boot_id = f.read().strip() or "unknown"
        except OSError:  # not Linux: the monotonic clock's origin is this process (pid-scoped)
            import os

            _boot_id = f"process-{os.getpid()}-{time.time_ns()}"
    return _boot_id


_MONO = getattr(time, "CLOCK_BOOTTIME", None)


def _monotonic() -> float:
    # CLOCK_BOOTTIME keeps counting through suspend and is shared by every process of one boot
    # (a `vaultwatch changes` process compares with the server's readings); CLOCK_MONOTONIC elsewhere
    if _MONO is not None:
        return time.clock_gettime(_MONO)
    return time.monotonic()


class SystemClock:
    """The real clock: local calendar day, aware UTC instant."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def today(self) -> dt.date:
        return dt.date.today()

    def reference(self) -> tuple[str, float]:
        """(boot id, monotonic seconds): never steps back within one boot, whatever the wall clock does."""
        return boot_id(), _monotonic()


def reference(clock: object) -> tuple[str, float]:
    """The clock's monotonic reference; a clock without one (a fixed one) counts its wall time as monotonic."""
    ref = getattr(clock, "reference", None)
    if callable(ref):
        return ref()
    now = clock.now()  # type: ignore[attr-defined]
    return "wall", now.timestamp()


class SteppingClock:
    """A clock whose wall time can be stepped apart from its monotonic time (tests of clock jumps).

    `advance(s)` lets `s` seconds pass (both move); `step_wall(s)` moves only the wall clock, as an
    NTP correction or a person setting the time does."""

    def __init__(self, start: dt.datetime, *, boot: str = "stepping-boot", mono: float = 1000.0) -> None:
        self._wall = start
        self._mono = mono
        self.boot = boot
        self._lock = threading.Lock()

    def now(self) -> dt.datetime:
        return self._wall

    def today(self) -> dt.date:
        return self._wall.date()

    def reference(self) -> tuple[str, float]:
        return self.boot, self._mono

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._wall += dt.timedelta(seconds=seconds)
            self._mono += seconds

    def step_wall(self, seconds: float) -> None:
        with self._lock:
            self._wall += dt.timedelta(seconds=seconds)


@dataclass(frozen=True, slots=True)
class FixedClock:
    """A clock frozen at one instant (tests, snapshots and `--as-of`)."""

    instant: dt.datetime

    def now(self) -> dt.datetime:
        return self.instant

    def today(self) -> dt.date:
        return self.instant.date()

    @classmethod
    def at_date(cls, day: dt.date) -> FixedClock:
        """The start (00:00 UTC) of a calendar day: that day's date-based stale_after values count as reached."""
        return cls(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC))


def parse_as_of(text: str) -> FixedClock:
    """Parse an `--as-of` value: a date (YYYY-MM-DD) or an ISO 8601 datetime with an offset.

    Raises ValueError with a message that says what to write instead.
    """
    text = text.strip()
    try:
        if len(text) == 10:
            return FixedClock.at_date(dt.date.fromisoformat(text))
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"invalid as-of date {text!r}: use YYYY-MM-DD, e.g. 2026-11-29") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return FixedClock(value)
