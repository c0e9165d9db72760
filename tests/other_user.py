"""Tests that run a child as another local user (`nobody`, or one they create) need that user to
reach this interpreter and this checkout. A venv or a clone under a 0700 folder (/root, a
`mktemp -d`) is out of its reach: there the child cannot even start (exec fails with EACCES in
the parent), and the test has nothing to prove. Such a test skips, saying why, instead of failing.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534


def _can(uid: int, gid: int, st: os.stat_result, bits: int) -> bool:
    """Whether `uid`/`gid` (not root: no override) has every permission in `bits` (r=4, x=1). The
    children keep this process's supplementary groups (setuid/setgid alone do not drop them)."""
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid == uid:
        granted = mode >> 6
    elif st.st_gid == gid or st.st_gid in os.getgroups():
        granted = mode >> 3
    else:
        granted = mode
    return granted & bits == bits


def unreachable(uid: int, gid: int, path: str | os.PathLike[str]) -> str | None:
    """Why `uid` cannot reach `path` (a folder on the way it cannot search), or None."""
    for candidate in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
        parts = Path(candidate).parents
        for folder in reversed(parts):  # from / down
            st = os.stat(folder)
            if not _can(uid, gid, st, 1):
                return f"{folder} is mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}"
    return None


def skip_unless_runs_as(uid: int, gid: int, who: str) -> None:
    """Skip the calling test (saying why) unless user `uid` can run this interpreter and import
    vaultwatch from this checkout: first the folders on the way, then a real child as that user."""
    reason = unreachable(uid, gid, sys.executable) or unreachable(uid, gid, ROOT / "core")
    if reason is None:
        try:
            done = subprocess.run(
                [sys.executable, "-c", "import vaultwatch.core.vault"],
                user=uid,
                group=gid,
                cwd="/",
                env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": "/nonexistent"},
                capture_output=True,
                text=True,
                timeout=120,
            )
        except OSError as exc:  # exec itself refused (PermissionError), or the user is unusable
            reason = str(exc)
        else:
            if done.returncode != 0:
                reason = done.stderr.strip()[-300:]
    if reason is not None:
        pytest.skip(f"{who} (uid {uid}) cannot run {sys.executable} on {ROOT}: {reason}")
