"""Fixtures shared by the index tests."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultwatch.core.index import freshproc

# What a process start can raise: no processes to be had (a sandbox, fd limits), and what a start
# raised inside the TUI under 20 agents at 10k notes (the nightly load test): another thread closed
# a descriptor while the child was being spawned.
START_ERRORS = pytest.mark.parametrize(
    "start_error",
    [OSError("no processes in this sandbox"), ValueError("bad value(s) in fds_to_keep")],
    ids=["OSError", "ValueError"],
)


@pytest.fixture
def failing_starts(monkeypatch: pytest.MonkeyPatch) -> Callable[[Exception], list[int]]:
    """Make every worker process start raise the given error; returns a list counting the attempts."""

    def install(error: Exception) -> list[int]:
        tried: list[int] = []

        def start(self) -> None:
            tried.append(1)
            raise error

        monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", start)
        monkeypatch.setattr(freshproc.FreshProcess, "start", start)  # a multi-threaded process's workers
        return tried

    return install


@pytest.fixture
def xdg_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own (the entry cache and the search index go there)."""
    root = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(root))
    monkeypatch.delenv("VAULTWATCH_CACHE", raising=False)
    return root


def backdate(root: Path, seconds: float = 60.0) -> None:
    """Move every file's mtime into the past (the cache distrusts files modified just before it was written)."""
    past = time.time() - seconds
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(dirpath, name), (past, past))
