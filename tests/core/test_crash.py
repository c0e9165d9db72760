"""Crash and fault tests: a writer process killed mid-write, or out of disk, never leaves a mixed note.

Each test runs the real write path in a real subprocess (sys.executable) and kills it with
SIGKILL at a chosen stage (through Writer's fault_hook test seam) or at random moments.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from vaultwatch.core.vault import Vault

pytestmark = pytest.mark.slow

OLD = "---\ntitle: Original\nstatus: draft\n---\n# Original\n" + "old line\n" * 2000
NEW = "---\ntitle: Replaced\nstatus: stable\n---\n# Replaced\n" + "new line\n" * 3000

CHILD = textwrap.dedent("""
    import json, os, sys, time
    from vaultwatch.core.vault import Vault
    from vaultwatch.core.edit.writes import Writer, VaultError

    root, op, pause_at = sys.argv[1], sys.argv[2], sys.argv[3]

    def hook(stage):
        if stage == pause_at:
            print("PAUSED " + stage, flush=True)
            time.sleep(120)

    w = Writer(Vault(root), fault_hook=hook)
    new = open(os.path.join(root, "new.txt")).read()
    try:
        if op == "write":
            w.write("Note.md", new, overwrite=True)
        elif op == "create":
            w.write("Fresh/Created.md", new)
        elif op == "edit":
            w.edit("Note.md", "# Original", "# Edited")
        elif op == "frontmatter":
            w.update_frontmatter("Note.md", set={"status": "stable"}, append={"tags": "x"})
        elif op == "section":
            w.edit_section("Note.md", "Original", "append", "appended")
        elif op == "loop":
            big_new, big_old = new * 30, open(os.path.join(root, "old.txt")).read() * 30
            print("LOOPING", flush=True)
            i = 0
            while True:
                w.write("Note.md", big_new if i % 2 else big_old, overwrite=True)
                i += 1
        print("DONE", flush=True)
    except VaultError as exc:
        print("ERROR " + json.dumps({"code": exc.code, "message": exc.message}), flush=True)
""")


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Note.md").write_text(OLD)
    (root / "new.txt").write_text(NEW)  # .txt is an attachment here: never a note, never written
    (root / "old.txt").write_text(OLD)
    return root


def _spawn(root: Path, op: str, pause_at: str, preexec=None) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), op, pause_at],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=preexec,
    )


def _kill_when(proc: subprocess.Popen, marker: str) -> str:
    line = proc.stdout.readline()
    if not line.startswith(marker):
        proc.kill()
        raise AssertionError(f"child said {line!r}; stderr: {proc.stderr.read()}")
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    return line


def _listed(root: Path) -> list[str]:
    v = Vault(root)
    v.load()
    return [e.path for e in v.snapshot.entries if e.kind == "note"]


@pytest.mark.parametrize("op", ["write", "edit", "frontmatter", "section"])
def test_killed_between_temp_write_and_replace_leaves_the_original(tmp_path, op):
    root = _vault(tmp_path)
    _kill_when(_spawn(root, op, "temp_written"), "PAUSED temp_written")
    assert (root / "Note.md").read_text() == OLD
    assert _listed(root) == ["Note.md"]  # the orphaned temporary file is hidden, never indexed


@pytest.mark.parametrize("op", ["write", "edit", "frontmatter", "section"])
def test_killed_right_after_replace_leaves_the_complete_new_note(tmp_path, op):
    root = _vault(tmp_path)
    _kill_when(_spawn(root, op, "replaced"), "PAUSED replaced")
    content = (root / "Note.md").read_text()
    expected = {
        "write": NEW,
        "edit": OLD.replace("# Original", "# Edited"),
        "frontmatter": OLD.replace("status: draft\n", "status: stable\ntags:\n  - x\n"),
        "section": OLD + "appended\n",
    }[op]
    assert content == expected
    assert not [p for p in root.iterdir() if p.name.startswith(".vaultwatch-")]


def test_killed_create_leaves_nothing_or_the_whole_note(tmp_path):
    root = _vault(tmp_path)
    _kill_when(_spawn(root, "create", "temp_written"), "PAUSED temp_written")
    assert not (root / "Fresh" / "Created.md").exists()
    _kill_when(_spawn(root, "create", "replaced"), "PAUSED replaced")
    assert (root / "Fresh" / "Created.md").read_text() == NEW


def test_killed_at_random_moments_the_note_is_always_old_or_new(tmp_path):
    root = _vault(tmp_path)
    rng = random.Random(1234)
    for _ in range(12):
        proc = _spawn(root, "loop", "never")
        assert proc.stdout.readline().startswith("LOOPING")
        time.sleep(rng.uniform(0.0, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        content = (root / "Note.md").read_text()
        assert content in (OLD, OLD * 30, NEW * 30), f"mixed content of {len(content)} chars"
    assert _listed(root) == ["Note.md"]


def _fsize_limit() -> None:
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))


def test_disk_full_during_a_write_leaves_the_old_note_and_no_temp_file(tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Note.md").write_text("small original\n")
    (root / "new.txt").write_text(NEW)  # ~27 KB: over the 8 KB file-size limit of the child
    proc = _spawn(root, "write", "never", preexec=_fsize_limit)
    out, err = proc.communicate(timeout=30)
    assert out.startswith("ERROR "), (out, err)
    error = json.loads(out[len("ERROR ") :])
    assert error["code"] == "write_failed"
    assert "'Note.md' is unchanged" in error["message"] and "file" in error["message"]
    assert (root / "Note.md").read_text() == "small original\n"
    assert not [p for p in root.iterdir() if p.name.startswith(".vaultwatch-")]


def test_the_start_up_sweep_of_temporary_files_waits_for_the_first_index(tmp_path):
    """A killed run's temporary files are swept once the first index is loaded: the sweep walks every folder,
    and beside the index's own load it would delay the first answers. Then it removes them, as ever."""
    from vaultwatch.core.edit.atomic import TEMP_GRACE_S, TEMP_PREFIX, TEMP_SUFFIX, clean_temp_files_soon

    (tmp_path / "a.md").write_text("# a\n", encoding="utf-8")
    left = tmp_path / f"{TEMP_PREFIX}{'0' * 16}{TEMP_SUFFIX}"
    left.write_text("half a write", encoding="utf-8")
    old = time.time() - 10 * TEMP_GRACE_S
    os.utime(left, (old, old))
    vault = Vault(tmp_path, cache=False)
    try:
        sweep = clean_temp_files_soon(vault)
        sweep.join(0.5)
        assert sweep.is_alive() and left.exists()  # no index yet: nothing swept
        vault.load()
        sweep.join(10)
        assert not sweep.is_alive() and not left.exists()
    finally:
        vault.stop()


def test_the_start_up_sweep_waits_for_a_pause_in_a_clients_calls_within_a_bound(tmp_path, monkeypatch):
    """A start's first calls come right as the index is ready: the sweep's walk of every folder waits for
    them to pause, SWEEP_PAUSE_WAIT_S at most, then removes a killed run's files as ever."""
    from vaultwatch.core.edit import atomic
    from vaultwatch.core.edit.atomic import TEMP_GRACE_S, TEMP_PREFIX, TEMP_SUFFIX, clean_temp_files_soon

    (tmp_path / "a.md").write_text("# a\n", encoding="utf-8")
    left = tmp_path / f"{TEMP_PREFIX}{'0' * 16}{TEMP_SUFFIX}"
    old = time.time() - 10 * TEMP_GRACE_S
    calls = threading.Event()
    calls.set()
    vault = Vault(tmp_path, cache=False)
    vault.answering = calls.is_set
    try:
        vault.load()
        for bound, pause in ((600.0, True), (0.5, False)):
            monkeypatch.setattr(atomic, "SWEEP_PAUSE_WAIT_S", bound)
            left.write_text("half a write", encoding="utf-8")
            os.utime(left, (old, old))
            sweep = clean_temp_files_soon(vault)
            sweep.join(0.3)
            assert sweep.is_alive() and left.exists()  # calls keep coming: nothing swept yet
            if pause:
                calls.clear()
            sweep.join(10)  # the calls paused, or they did not and the bound passed
            assert not sweep.is_alive() and not left.exists()
            calls.set()
    finally:
        vault.stop()
