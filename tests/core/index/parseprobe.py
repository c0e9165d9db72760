"""Run inside a parse worker by test_freshproc: what the worker holds. It imports nothing of
vaultwatch itself, so the modules it reports are the worker's own."""

from __future__ import annotations

import os
import sys


def modules(_item: object) -> list[str]:
    """The modules imported in this process."""
    return sorted(sys.modules)


def pid(_item: object) -> int:
    """Which process ran the item."""
    return os.getpid()
