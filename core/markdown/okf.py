"""OKF (Open Knowledge Format) derivations: bundle detection, status, staleness, trust tier.

A vault is an OKF bundle when its root `index.md` frontmatter declares `okf_version`.
The derivations take raw YAML values (before JSON conversion), so dates keep their type.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from vaultwatch.core.clock import Clock

STATUSES = ("draft", "stable", "deprecated")
TRUST_TIERS = ("unverified", "machine-confirmed", "human-reviewed")
OKF_KEYS = ("status", "stale", "trust_tier")
MODES = ("auto", "on", "off")
# The bundle's own files, not knowledge notes: OKF reserves the root index.md (the manifest) and
# log.md. They are left out of the status and trust-tier counts and pages.
RESERVED = ("index.md", "log.md")  # sorted: a Query's skip_paths

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def declares_okf(index_frontmatter: dict[str, Any] | None) -> bool:
    """True when the root index.md frontmatter declares okf_version as a string or a number."""
    if not index_frontmatter:
        return False
    value = index_frontmatter.get("okf_version")
    return isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip() != ""


def derive_status(raw: Any) -> str:
    """The stripped status string; `stable` when missing, empty or not a string. Case is kept."""
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    return "stable"


def derive_trust(raw_verified: Any) -> str:
    """Trust tier from `verified` (a list, or a single mapping); a literal trust_tier key is ignored.

    OKF's rule: each entry is a mapping; one whose `by` is a string starting `human:` makes the
    note human-reviewed, and every other entry (another `by`, or none at all, such as
    `- at: 2026-01-01`) makes it machine-confirmed. Items that are no mapping (a bare string like
    "human:alice") are no entries and verify nothing."""
    if isinstance(raw_verified, dict):
        items: list[Any] = [raw_verified]
    elif isinstance(raw_verified, list):
        items = raw_verified
    else:
        return "unverified"
    tier = "unverified"
    for item in items:
        if not isinstance(item, dict):
            continue
        by = item.get("by")
        if isinstance(by, str) and by.startswith("human:"):
            return "human-reviewed"
        tier = "machine-confirmed"
    return tier


def triage_tier(tier: str, changed_unreviewed: bool) -> str:
    """The tier the triage views give a note whose `verified:` gives `tier`: a note a person
    attested that an agent changed since, and nobody has reviewed (`changed_unreviewed`, the change
    journal's word), is unverified, since the person's review covered other content. Every other
    note keeps its tier."""
    return "unverified" if changed_unreviewed and tier == "human-reviewed" else tier


def parse_stale_after(raw: Any) -> tuple[dt.date | None, dt.datetime | None]:
    """Split a stale_after value into (date, aware instant). Naive datetimes and junk give (None, None)."""
    if isinstance(raw, dt.datetime):
        return (None, raw) if raw.tzinfo is not None else (None, None)
    if isinstance(raw, dt.date):
        return raw, None
    if isinstance(raw, str):
        text = raw.strip()
        if _DATE.match(text):
            try:
                return dt.date.fromisoformat(text), None
            except ValueError:
                return None, None
        try:
            value = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None, None
        return (None, value) if value.tzinfo is not None else (None, None)
    return None, None


def is_stale(stale_date: dt.date | None, stale_instant: dt.datetime | None, clock: Clock) -> bool:
    """Stale when a date stale_after is <= today, or an offset datetime is <= now."""
    if stale_date is not None:
        return stale_date <= clock.today()
    if stale_instant is not None:
        return stale_instant <= clock.now()
    return False


def overdue_days(stale_date: dt.date | None, stale_instant: dt.datetime | None, clock: Clock) -> int | None:
    """Whole days since stale_after was reached (0 on the day), or None when not stale."""
    if not is_stale(stale_date, stale_instant, clock):
        return None
    if stale_date is not None:
        return (clock.today() - stale_date).days
    assert stale_instant is not None
    return (clock.now() - stale_instant).days


def parse_bool_word(value: str) -> bool | None:
    """true/false/yes/no/1/0 (any case) to a bool; anything else None."""
    word = value.strip().lower()
    if word in ("true", "yes", "1"):
        return True
    if word in ("false", "no", "0"):
        return False
    return None
