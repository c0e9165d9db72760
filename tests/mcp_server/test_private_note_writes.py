"""A private note's new bytes are never open to other local users, not even for the moment its
temporary file is being written: the temporary file of a write over an existing note is made
readable by its owner only, and takes the note's own mode before it is switched in.

Real parts: the real write path in a process of its own, with the agent named as the MCP layer
names it, paused just after its temporary file was made (Writer's fault_hook) and then let go.
"""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest
from mcp_testing import ROOT
from paused_writer import end, start_paused

OLD = "# Plan\n" + "the PIN is 4711\n" * 50
NEW = "# Plan\n" + "the PIN is 0815\n" * 50


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644], ids=oct)
def test_a_write_over_a_note_never_opens_its_bytes_wider_than_the_note(tmp_path: Path, env: dict, mode: int) -> None:
    root = tmp_path / "v"
    root.mkdir()
    plan = root / "Plan.md"
    plan.write_text(OLD)
    plan.chmod(mode)
    proc = start_paused(root, {**env, "PYTHONPATH": str(ROOT)}, "write", "temp_created", NEW)
    try:
        [temp] = [p for p in root.iterdir() if p.name.startswith(".vaultwatch-")]
        made = stat.S_IMODE(temp.stat().st_mode)
        assert made & 0o077 == 0, f"the temporary file of a {oct(mode)} note was made {oct(made)}"
        os.kill(proc.pid, signal.SIGUSR1)  # the write goes on
        out, err = proc.communicate(timeout=60)
        assert "DONE" in out, err
    finally:
        end(proc)
    assert plan.read_text() == NEW
    assert stat.S_IMODE(plan.stat().st_mode) == mode  # the note keeps its own mode
    assert [p.name for p in root.iterdir() if p.name.startswith(".vaultwatch-")] == []
