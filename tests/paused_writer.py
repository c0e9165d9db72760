"""An agent's write through the real write path, in a process of its own, paused at a stage of the
write (Writer's fault_hook: "temp_created", "temp_written", "checked", "replaced", "deleted"; several, comma-separated)
for a test to kill or stop it there: the tests of writes a kill cut off
(tests/mcp_server/test_killed_write.py, the TUI's Changes view). The agent is named as the MCP layer names it: "sneaky", session "s-0123456789".
SIGUSR1 ends a pause (the write then goes on, to the next stage named)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import signal, sys, time
    from vaultwatch.core.vault import Vault
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.edit.hooks import Caller, calling

    root, op, pause_at, new = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

    woken = []
    signal.signal(signal.SIGUSR1, lambda *_: woken.append(1))  # a test ends the pause with SIGUSR1

    def hook(stage):
        if stage in pause_at.split(","):
            print("PAUSED " + stage, flush=True)
            deadline = time.monotonic() + 120
            while not woken and time.monotonic() < deadline:
                time.sleep(0.01)
            woken.clear()

    w = Writer(Vault(root), fault_hook=hook)
    me = "agent:sneaky"
    with calling(Caller("sneaky", "s-0123456789", op, {"path": "Plan.md"})):
        if op == "write":
            w.write("Plan.md", new, overwrite=True, actor=me)
        elif op == "edit":
            w.edit("Plan.md", "old line", "edited line", replace_all=True, actor=me)
        elif op == "delete":
            w.delete("Plan.md", actor=me)
        elif op == "delete_for_good":
            w.delete("Plan.md", permanent=True, confirm_path="Plan.md", actor=me)
        elif op == "create":
            w.write("Deep/er/New.md", new, actor=me)
        elif op == "delete_folder":
            w.delete("Box", actor=me)
        elif op == "delete_linked":
            w.delete("pic.png", actor=me)
        elif op == "delete_proj":
            w.delete("Proj", actor=me)
        elif op == "create_in_moved":
            w.write("Moved/agent.md", new, actor=me)
        elif op == "write_in_proj":
            w.write("Proj/Plan.md", new, overwrite=True, actor=me)
    print("DONE", flush=True)
""")


def start_paused(root: Path, env: dict, op: str, stage: str, new: str = "") -> subprocess.Popen:
    """The agent's `op` on `root` (write, edit, delete, delete_for_good, create, delete_folder, delete_linked,
    delete_proj, create_in_moved, write_in_proj; see SCRIPT) under `env`, returned once it is paused at `stage`."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(root), op, stage, new],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    if line.strip() != f"PAUSED {stage.split(',')[0]}":
        proc.kill()
        raise AssertionError(f"the write said {line!r}; stderr: {proc.stderr.read()}")
    return proc


def end(proc: subprocess.Popen) -> None:
    """Kill the writer if it still runs and close its pipes (a test's clean-up, pass or fail)."""
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=30)


def kill_paused(root: Path, env: dict, op: str, stage: str, new: str = "") -> None:
    """The agent's `op` SIGKILLed where it pauses at `stage` (see start_paused)."""
    proc = start_paused(root, env, op, stage, new)
    os.kill(proc.pid, signal.SIGKILL)
    end(proc)
