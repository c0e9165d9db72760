"""Run the whole vaultwatch test suite (what `python3 dev.py test` and CI call).

Runs pytest over tests/ on all cores, with the snapshot plugin told to warn,
not fail, about unused snapshots when a subset is selected. Extra arguments
pass through to pytest.
"""
from __future__ import annotations

import os
import sys

import pytest


def main() -> int:
    args = sys.argv[1:]
    os.environ.pop("NO_COLOR", None)
    os.environ.pop("TEXTUAL_THEME", None)
    base = ["-p", "no:cacheprovider", "--snapshot-warn-unused"]
    if not any(a.startswith("-n") for a in args):
        base += ["-n", os.environ.get("VAULTWATCH_TEST_WORKERS", "2")]
    return pytest.main([*base, *args])


if __name__ == "__main__":
    sys.exit(main())
