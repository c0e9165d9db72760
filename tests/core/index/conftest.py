"""Fixtures shared by the index tests."""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable

import pytest

# What a process start can raise: no processes to be had (a sandbox, fd limits), and what a start
# raised inside the TUI under 20 agents at 10k notes (the nightly load test): another thread closed
# a descriptor while the child was being spawned.
START_ERRORS = pytest.mark.parametrize(
    "start_error", [OSError("no processes in this sandbox"), ValueError("bad value(s) in fds_to_keep")],
    ids=["OSError", "ValueError"])


@pytest.fixture
def failing_starts(monkeypatch: pytest.MonkeyPatch) -> Callable[[Exception], list[int]]:
    """Make every worker process start raise the given error; returns a list counting the attempts."""

    def install(error: Exception) -> list[int]:
        tried: list[int] = []

        def start(self) -> None:
            tried.append(1)
            raise error

        monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", start)
        return tried

    return install
