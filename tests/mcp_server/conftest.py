"""Fixtures for the MCP tests (helpers to serve and connect live in mcp_testing.py).

Socket directories are made under /tmp with short names (AF_UNIX paths hold ~107 bytes,
pytest's tmp_path is longer than that can afford).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultwatch.core.events import Event
from vaultwatch.core.vault import Vault


@pytest.fixture
def sock_dir() -> Path:
    """A short, private directory for sockets (removed afterwards)."""
    path = tempfile.mkdtemp(prefix="vw", dir="/tmp")
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def events() -> Callable[[Vault], list[Event]]:
    """Subscribe to a vault's bus for the rest of the test: returns the list events land in."""
    unsubscribes = []

    def watch(vault: Vault) -> list[Event]:
        seen: list[Event] = []
        unsubscribes.append(vault.bus.subscribe(seen.append))
        return seen

    yield watch
    for unsubscribe in unsubscribes:
        unsubscribe()
