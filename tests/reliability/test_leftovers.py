"""No leftovers (issue 13): a real writer process killed with SIGKILL at random moments during
mixed writes, 10 rounds. Every note is its old or its new version, never partial, and the
next start of the real `vaultwatch serve` removes the temporary files the kills left behind
(only the write path's own names; a file that merely looks alike stays)."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from reliability_helpers import ROOT

NOTES = 4
TEMP = re.compile(r"\.vaultwatch-[0-9a-f]{16}\.tmp")

CHILD = textwrap.dedent("""
    import sys
    from vaultwatch.core.vault import Vault
    from vaultwatch.core.edit.writes import Writer, VaultError

    root, start = sys.argv[1], int(sys.argv[2])

    def content(i, k):
        return f"---\\nrev: {k}\\n---\\n# n{i}\\n" + f"line {k}\\n" * 30000

    w = Writer(Vault(root))
    print("READY", flush=True)
    k = start
    while True:
        i = k % 4
        op = k % 3
        try:
            if op == 0:
                w.write(f"n{i}.md", content(i, k), overwrite=True)
            elif op == 1:
                w.update_frontmatter(f"n{i}.md", set={"touched": k})
            else:
                w.write(f"new/c{k}.md", content(99, k), create_only=True)
        except VaultError:
            pass
        k += 1
""")


def _content(i: int, k: int) -> str:
    return f"---\nrev: {k}\n---\n# n{i}\n" + f"line {k}\n" * 30000


def _whole(text: str, i: int) -> bool:
    """The note is one complete version: content(i, rev), possibly with a `touched: N` line added."""
    m = re.match(r"---\nrev: (\d+)\n(touched: \d+\n)?---\n", text)
    if not m:
        return False
    return text.replace(m.group(2) or "", "", 1) == _content(i, int(m.group(1)))


def _temps(root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in root.rglob(".vaultwatch-*") if TEMP.fullmatch(p.name)]


@pytest.mark.long
def test_kill_9_during_mixed_writes_leaves_whole_notes_and_no_temp_files_after_restart(tmp_path, figure):
    root = tmp_path / "vault"
    (root / "new").mkdir(parents=True)
    for i in range(NOTES):
        (root / f"n{i}.md").write_text(_content(i, 0))
    lookalike = root / ".vaultwatch-notours.tmp"  # not a name the write path makes: kept
    lookalike.write_text("keep")
    env = dict(os.environ, PYTHONPATH=str(ROOT), VAULTWATCH_CACHE="0")
    rng = random.Random(13)
    left_by_kills = 0
    start = 1
    for _round in range(10):
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(root), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout.readline().strip() == "READY", proc.stderr.read()
        # each write of a note takes milliseconds: any moment of the first 0.3 s is as random a
        # point in a write as one later on, and the child wrote dozens of them by then
        time.sleep(rng.uniform(0.02, 0.3))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        start += 1000
        for i in range(NOTES):
            assert _whole((root / f"n{i}.md").read_text(), i), f"n{i}.md is partial after a kill"
        for p in (root / "new").glob("*.md"):
            k = int(p.stem[1:])
            assert p.read_text() == _content(99, k), f"{p.name} is partial after a kill"
        left_by_kills = max(left_by_kills, len(_temps(root)))
    figure("temp_files_left_by_kills", len(_temps(root)))
    # the cleanup leaves alone temporary files younger than 2 s (a write still running): the kills'
    # files and the lookalike are aged past that, as waiting would, only without the wait
    past = time.time() - 10
    for path in [lookalike, *(root / rel for rel in _temps(root))]:
        os.utime(path, (past, past))
    sock = os.path.join(os.path.realpath("/tmp"), f"vwk-{os.getpid()}-{time.monotonic_ns() % 10**6}.sock")
    serve = subprocess.Popen(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "serve", str(root), "--socket", sock],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(ROOT),
    )
    try:
        end = time.monotonic() + 60
        while (_temps(root) or not os.path.exists(sock)) and time.monotonic() < end:
            assert serve.poll() is None, serve.communicate()
            time.sleep(0.1)
        assert _temps(root) == []
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            serve.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.communicate()
    assert lookalike.read_text() == "keep"
    figure(
        "fixed_bug",
        "kill -9 during writes left .vaultwatch-*.tmp files (5 after 10 kills here) that stayed after "
        "a restart; Vault.start_live now removes the write path's own temporary files older than the "
        "process (core/edit/atomic.py clean_temp_files)",
    )
