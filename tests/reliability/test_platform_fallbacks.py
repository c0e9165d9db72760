"""The hostile-path corpus on the fallbacks of openat2 and /proc (core.platform), forced on Linux.

Every case of the corpus (tests/reliability/path_corpus.py) that reaches the disk (links that
escape, loop or hide, legal odd names, case variants, FIFOs; the others are refused by their
spelling before any resolver runs) goes through every core operation again with the capability
turned off, as on macOS or an old kernel: the descriptor walk alone
must contain every path. The fallback counter proves the walk, not openat2, did the work.
"""

from __future__ import annotations

import pytest
from path_corpus import CASES
from test_path_corpus import test_core_operations_contain_every_hostile_path as contain_every_path

from vaultwatch.core import platform

# Families whose paths the resolver walks on disk (the rest never reach openat2 or /proc).
ON_DISK = [c for c in CASES if c.family.startswith("symlink") or c.family in {"odd-legal", "case-variant", "fifo"}]


@pytest.mark.parametrize("cap", ["openat2", "proc"])
def test_core_operations_contain_every_hostile_path_on_the_fallback(cap, tmp_path, figure):
    before = platform.fallbacks[cap]
    with platform.force(**{cap: False}):
        for i, case in enumerate(ON_DISK):
            where = tmp_path / str(i)
            where.mkdir()
            contain_every_path(case, where, figure)
    assert platform.fallbacks[cap] > before, f"no operation took the {cap} fallback"
    figure("fallback_uses", platform.fallbacks[cap] - before)
