"""Injected time. Everything that depends on "now" (staleness, snapshots) takes a Clock."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol


class Clock(Protocol):
    """A source of the current instant and the current calendar day."""

    def now(self) -> dt.datetime:
        """The current instant, timezone-aware."""

    def today(self) -> dt.date:
        """The current calendar day (the user's local day for the system clock)."""


class SystemClock:
    """The real clock: local calendar day, aware UTC instant."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def today(self) -> dt.date:
        return dt.date.today()


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
