"""SIGTERM (as an MCP client sends it to a server that outlived its closed stdin, or a host sends it
instead) ends `serve --stdio` in order: an outside change made just before is journaled, a write
under way is finished and journaled whole, and the exit is a socket `serve`'s (status 0, "stopped").
A second SIGTERM ends it at once.

Real parts: `vaultwatch serve --stdio` processes on raw JSON-RPC lines, real signals, a folder moved
with os.rename by the test, and the journal read with `vaultwatch changes --json`."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from killed_cli import tree
from mcp_testing import ROOT, VAULTWATCH
from test_early_calls import call
from test_front_calls import Lines
from test_killed_stdio_rename import OUTSIDE, make_vault, rewritten
from test_outside_edits_at_exit import assert_the_move_is_one_outside_row, journaled, move_folder, place
from test_stdio_front import INIT, INITIALIZED, PING

from vaultwatch.mcp_server.cli import CALLS_END_WAIT
from vaultwatch.mcp_server.stdiofront import STOPPED_WRITE_WAIT_S

__all__ = ["place"]  # the fixture, used here

WAIT_S = 120.0  # bound on a condition the tests wait for (each is met within a second or two here)


def spawn(root: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [*VAULTWATCH, "serve", "--stdio", str(root)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def ended(proc: subprocess.Popen) -> tuple[int, str]:
    """Its exit status and what it said on stderr."""
    _, err = proc.communicate(timeout=WAIT_S)
    return proc.returncode, err.decode()


def watched(proc: subprocess.Popen, *, sdk: bool) -> Lines:
    """A session whose listing (waiting for pending writes) was answered: the vault is watched. With
    `sdk`, a ping too, which only the SDK answers: the SDK runs the session from then on."""
    lines = Lines(proc)
    lines.send(INIT, INITIALIZED, call(2, {"limit": 1, "wait_for_pending_writes": True}))
    lines.until(2)
    if sdk:
        lines.send(PING)
        lines.until("ping")
    return lines


@pytest.mark.parametrize("sdk", [False, True], ids=["front", "sdk"])
def test_a_folder_moved_just_before_sigterm_is_journaled(place, sdk: bool) -> None:
    root, env = place
    proc = spawn(root, env)
    try:
        watched(proc, sdk=sdk)
        move_folder(root)
        proc.send_signal(signal.SIGTERM)
        code, err = ended(proc)
    finally:
        proc.kill()
    assert_the_move_is_one_outside_row(journaled(root, env))
    assert code == 0 and "vaultwatch: stopped" in err, (code, err)


def test_sigterm_during_an_agents_rename_lets_it_finish_whole_and_journaled(tmp_path: Path, env: dict) -> None:
    """A folder rename rewrites the links of 200 notes (through the SDK, as an agent's would): a
    SIGTERM midway leaves it whole, one journaled change, nothing interrupted and no temporary file."""
    root = tmp_path / "v"
    env = {**env, "PYTHONPATH": str(ROOT)}
    make_vault(root)
    proc = spawn(root, env)
    try:
        lines = watched(proc, sdk=False)
        lines.send(call(3, {"path": "Proj", "new_path": "Moved/Proj2"}, name="rename"))
        deadline = time.monotonic() + WAIT_S
        while rewritten(root) < 10 and proc.poll() is None:
            assert time.monotonic() < deadline, "the rename never got under way"
            time.sleep(0.002)
        proc.send_signal(signal.SIGTERM)
        code, _ = ended(proc)
    finally:
        proc.kill()
    assert (root / "Moved" / "Proj2").is_dir() and not (root / "Proj").exists()
    assert rewritten(root) == len(OUTSIDE), "the rename was cut off"
    assert not [p for p in tree(root) if ".vaultwatch-" in p]
    rows = journaled(root, env)
    assert [(r["kind"], r["operation"]) for r in rows] == [("change", "rename")], rows
    assert code == 0


def test_sigterm_during_a_write_the_front_answers_leaves_the_note_whole(place) -> None:
    """A big plain write (the stdio front answers it, without the SDK) with SIGTERM right behind it:
    the note is the old one (the signal came before the write was taken) or the new one, journaled
    once as the agent's, and nothing is left half done."""
    root, env = place
    note = root / "Notes" / "keep.md"
    old = note.read_text()
    new = "# keep\n" + "rewritten by the agent\n" * 200_000
    proc = spawn(root, env)
    try:
        lines = watched(proc, sdk=False)
        lines.send(call(3, {"path": "Notes/keep.md", "content": new, "overwrite": True}, name="write"))
        proc.send_signal(signal.SIGTERM)
        code, _ = ended(proc)
    finally:
        proc.kill()
    assert code == 0
    after = note.read_text()
    assert after in (old, new), "half a note"
    assert not [p for p in tree(root) if ".vaultwatch-" in p]
    rows = [r for r in journaled(root, env) if r["kind"] != "outside"]
    assert [(r["kind"], r["paths"]) for r in rows] == ([("change", ["Notes/keep.md"])] if after == new else []), rows


def big_reads(root: Path, lines: Lines, *, sdk: bool, count: int = 5) -> None:
    """`count` reads of a big note sent in one write, the first answered: the others' answers (about 60
    KB each) are more than the pipe holds while the client reads none. Taken together, so once the first
    is answered the others are the front's (with `sdk`, the session is the SDK's first: a ping)."""
    (root / "Notes" / "big.md").write_text("# big\n" + "a line of the big note\n" * 20_000)
    if sdk:
        lines.send(PING)
        lines.until("ping")
    lines.send(*(call(3 + i, {"path": "Notes/big.md"}, name="read") for i in range(count)))
    lines.until(3)


def stopping(proc: subprocess.Popen) -> None:
    """Wait until the server says its orderly exit is under way."""
    deadline = time.monotonic() + WAIT_S
    said = b""
    while b"stopping" not in said:
        assert proc.poll() is None and time.monotonic() < deadline, said
        if select.select([proc.stderr], [], [], 0.5)[0]:
            said += os.read(proc.stderr.fileno(), 1 << 16)


def stderr_until_exit(proc: subprocess.Popen, bound: float) -> str:
    """What the server says on stderr until it exits (within `bound` seconds), never reading its stdout."""
    deadline = time.monotonic() + bound
    said = b""
    while proc.poll() is None:
        assert time.monotonic() < deadline, f"still running after {bound} s: {said.decode()}"
        if select.select([proc.stderr], [], [], 0.2)[0]:
            said += os.read(proc.stderr.fileno(), 1 << 16)
    return (said + proc.stderr.read()).decode()


@pytest.mark.parametrize("sdk", [False, True], ids=["front", "sdk"])
def test_a_client_that_stopped_reading_does_not_hold_the_exit(place, sdk: bool) -> None:
    """Answers the client never takes in are given up once a stop signal came: the exit is the orderly
    one (status 0, "stopped"), long before the bound on calls still under way."""
    root, env = place
    proc = spawn(root, env)
    try:
        big_reads(root, watched(proc, sdk=False), sdk=sdk)
        proc.send_signal(signal.SIGTERM)
        err = stderr_until_exit(proc, CALLS_END_WAIT / 2)  # stdout is never read again
        assert proc.returncode == 0 and "vaultwatch: stopped" in err, (proc.returncode, err)
    finally:
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()


@pytest.mark.timing
def test_a_client_that_stopped_reading_holds_the_exit_once_not_once_per_answer(place) -> None:
    """The answers that find no room after the first one was given up are given up at once: the exit
    waits STOPPED_WRITE_WAIT_S once, not once for each of the ten answers the client never takes."""
    root, env = place
    proc = spawn(root, env)
    try:
        big_reads(root, watched(proc, sdk=False), sdk=False, count=10)
        proc.send_signal(signal.SIGTERM)
        err = stderr_until_exit(proc, 3 * STOPPED_WRITE_WAIT_S + 2)  # one wait, with room for a slow machine
        assert proc.returncode == 0 and "vaultwatch: stopped" in err, (proc.returncode, err)
    finally:
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()


def test_a_second_sigterm_ends_it_at_once(place) -> None:
    """While the first SIGTERM's orderly exit waits for a call under way (here the answers to reads a
    client takes in a trickle, so they never stop moving), a second SIGTERM ends the process as SIGTERM
    does by default."""
    root, env = place
    proc = spawn(root, env)
    taking = threading.Event()
    taking.set()

    def trickle() -> None:
        while taking.is_set() and select.select([proc.stdout], [], [], 1.0)[0]:
            if not os.read(proc.stdout.fileno(), 512):
                return
            time.sleep(0.2)

    reader = threading.Thread(target=trickle, daemon=True)
    try:
        big_reads(root, watched(proc, sdk=False), sdk=False)
        reader.start()
        proc.send_signal(signal.SIGTERM)
        stopping(proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT_S) == -signal.SIGTERM
    finally:
        taking.clear()
        proc.kill()
        proc.wait()
        if reader.is_alive():
            reader.join(WAIT_S)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()
