"""Fixtures for the reliability suite (issue 7). Helpers live in reliability_helpers.py, the path
attack corpus in path_corpus.py. Sizes grow with VAULTWATCH_RELIABILITY_FULL=1 (nightly)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from reliability_helpers import short_dir

FULL = os.environ.get("VAULTWATCH_RELIABILITY_FULL", "").lower() in ("1", "yes", "true", "on")


@pytest.fixture
def sock_dir() -> Path:
    """A short private folder for sockets, removed afterwards."""
    path = short_dir()
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def full_size() -> bool:
    """True in the nightly-size run (VAULTWATCH_RELIABILITY_FULL=1)."""
    return FULL


@pytest.fixture
def figure(request):
    """figure(name, value): a measured figure, written into the JUnit XML report as a property of
    this test (bench/bench_reliability.py turns them into docs/reliability.md)."""

    def record(name: str, value) -> None:
        request.node.user_properties.append((name, value))

    return record
