"""A real bind mount for a test, or a skip saying why there can be none (not Linux, not root, no
`mount` program, or a container without the right to mount): a check that a folder reached through
a mount is seen for what it is has nothing to prove without one."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def bound(source: Path, target: Path) -> Iterator[Path]:
    """`source` shown at `target` (an empty folder) by `mount --bind` while the block runs."""
    if not sys.platform.startswith("linux"):
        pytest.skip("bind mounts are read from /proc/self/mountinfo, which only Linux has")
    try:
        done = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True, text=True)
    except OSError as exc:
        pytest.skip(f"no `mount` program to make a bind mount with: {exc}")
    if done.returncode != 0:
        pytest.skip(f"mounting is not permitted here (needs root or CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True, capture_output=True)
