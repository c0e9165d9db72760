"""What the review commands (`pending`, `refusals`, `changes`) say under their listing about the
person's rules: a rule misspelt, or naming a folder the vault does not have, matches nothing, and
each of these commands is where the person looks at what the rules let through. One function, so
the three say it alike."""

from __future__ import annotations

import sys
from typing import Any

from vaultwatch.core.review import approval


def say_rule_notices(vault: Any) -> None:
    """Print to stderr a notice for each rule that matches nothing in `vault` (the journal tells the
    folders this vault has had from those it never had)."""
    for notice in approval.rule_notices(vault.root_real, journal=lambda: approval.kept_journal(vault)):
        print(f"vaultwatch: {notice}", file=sys.stderr)
