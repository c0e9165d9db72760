"""A note changed while vaultwatch starts is never left at its old row (core.index.warmscan).

Placing the watcher's OS watches (watchfiles) walks the whole vault while it holds the interpreter,
and the first load's walk runs in a forked child beside it, so the walk can see a note before the
watches are in place: a change in between would keep the old row until the note changed again. The
child checks what it walked before the watches were in place against the disk once they are, and
walks again if anything changed (`walk_watched`). A fresh interpreter shows the whole start; the
walk's own rules run here on pipes, the word that the vault is watched given by the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from vaultwatch.core.index.warmscan import receive_message, walk_watched
from vaultwatch.core.vault import Vault

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify and the forked walker")

ROOT = Path(__file__).resolve().parents[3]
FOLDERS = ("", "a", "a/b", "c")

# a start as the server makes it: every module of the load imported, watchfiles not yet (the watcher
# thread imports it); records how many OS watches the process holds when the warm load forks its walk
START = """
import json, os, sys, time
from vaultwatch.core.index.warmscan import receive_message, walk_watched
from vaultwatch.core.vault import Vault
import vaultwatch.core.index.entrycache, vaultwatch.core.index.warmscan, vaultwatch.core.review.journal
assert "watchfiles" not in sys.modules
note = os.path.join(sys.argv[1], "n0.md")
def watches():
    count = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                count += fh.read().count("inotify wd:")
        except OSError:
            pass
    return count
at_change = []
def change_after_fork():
    if not at_change:  # the walker: it lists the root first, so it has seen n0.md in a few ms
        time.sleep(0.015)
        at_change.append(watches())
        before = os.stat(note).st_mtime
        with open(note, "a", encoding="utf-8") as fh:
            fh.write("changed by another program while the index loaded\\n")
        # still long ago: a file written moments ago is read again by any load, whatever its stat says
        os.utime(note, (before + 60, before + 60))
os.register_at_fork(after_in_parent=change_after_fork)
vault = Vault(sys.argv[1])
vault.start_live(search=False)
vault.wait_ready(60)
assert vault.wait_for_pending_writes(30)
size = vault.snapshot.by_path["n0.md"].size_bytes
vault.stop()
print(json.dumps({"watches_at_change": at_change, "indexed": size, "on_disk": os.stat(note).st_size}))
"""


@pytest.fixture(scope="module")
def vault_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("watched") / "vault"
    for folder in FOLDERS[1:]:
        (root / folder).mkdir(parents=True)
        for i in range(2500):
            (root / folder / f"n{i}.md").write_text(f"# n{i}\n", encoding="utf-8")
    return root


@pytest.fixture
def vault_root(vault_files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    (vault_files / "n0.md").write_text("# n0\n", encoding="utf-8")  # the root's one file: the walk's first
    old = time.time() - 3600  # files written just now the cache would read again, whatever their stat says
    for path in vault_files.rglob("*"):
        os.utime(path, (old, old))
    return vault_files


def prime(root: Path) -> None:
    """Leave the entry cache in step with the disk: the next load is a warm one, which forks its walker."""
    vault = Vault(str(root))
    vault.load()
    vault.stop()


def test_a_note_changed_before_the_watches_are_in_place_is_seen(vault_root):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    tried = 0
    for _ in range(8):
        prime(vault_root)
        done = subprocess.run(
            [sys.executable, "-c", START, str(vault_root)], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout.splitlines()[-1])
        assert got["watches_at_change"], "the warm load did not fork its walker"
        if got["watches_at_change"][0]:
            continue  # the watches were in place already: not the case this test is about
        tried += 1
        assert got["indexed"] == got["on_disk"], "the note changed before the watches were in place was never seen"
        if tried == 3:
            return
    assert tried, "the watches were always in place before the change: the window was never hit"


# the forked walk's own rules (warmscan.walk_watched), run here on pipes, the word given by the test


def run_walk(root: Path) -> tuple[int, int, threading.Thread]:
    """walk_watched on a thread: (the read end of its messages, the write end of the word, the thread)."""
    out_r, out_w = os.pipe()
    word_r, word_w = os.pipe()
    config = Vault(str(root)).config

    def walk() -> None:
        try:
            walk_watched(str(root), config, out_w, word_r)
        finally:
            os.close(out_w)
            os.close(word_r)

    thread = threading.Thread(target=walk, daemon=True)
    thread.start()
    return out_r, word_w, thread


def sizes(rows) -> dict[str, int]:
    return {row[1]: row[4] for row in rows if row[0] == 0}  # files: (kind, path, real, kind, size, ...)


def test_a_change_after_the_walk_and_before_the_word_is_walked_again(vault_root):
    note = vault_root / "n0.md"
    out, word, thread = run_walk(vault_root)
    try:
        first = receive_message(out)  # the walk is over: its rows come before the word
        assert sizes(first)["n0.md"] == 5
        note.write_text("# n0\n\nchanged after the walk saw it, before the watches were in place\n", encoding="utf-8")
        os.write(word, b"w")
        again = receive_message(out)
        assert again is not None, "the change before the word was not found"
        assert sizes(again)["n0.md"] == note.stat().st_size
    finally:
        os.close(word)
        thread.join(30)
        os.close(out)


def test_nothing_changed_before_the_word_gives_the_rows_once(vault_root):
    out, word, thread = run_walk(vault_root)
    try:
        first = receive_message(out)
        os.write(word, b"w")
        assert receive_message(out) is None
        assert len(sizes(first)) == 3 * 2500 + 1
    finally:
        os.close(word)
        thread.join(30)
        os.close(out)


def test_a_change_before_a_word_that_comes_during_the_walk_is_walked_again(vault_root):
    note = vault_root / "n0.md"
    out, word, thread = run_walk(vault_root)
    try:
        time.sleep(0.005)  # the walk lists the root first: it has seen n0.md, and has thousands of files to go
        note.write_text("# n0\n\nchanged after the walk saw it, before the watches were in place\n", encoding="utf-8")
        os.write(word, b"w")
        first = receive_message(out)  # the rows go first, unchecked: the parent merges them meanwhile
        assert len(sizes(first)) == 3 * 2500 + 1
        again = receive_message(out)
        assert again is not None, "the change before the word was not found"
        assert sizes(again)["n0.md"] == note.stat().st_size
    finally:
        os.close(word)
        thread.join(30)
        os.close(out)


# the check made after the index is published (Vault._check_start): the first answers do not wait for it


def test_the_index_is_served_before_the_walk_is_checked_and_a_change_it_finds_is_applied(vault_root):
    prime(vault_root)
    note = vault_root / "n0.md"
    vault = Vault(str(vault_root))
    try:
        vault.prepare_watching()  # a watcher made, its watches not placed until start_watching below
        vault.start()
        assert vault.wait_ready(30), "the index waited for the watches before it was served"
        assert vault.snapshot.by_path["n0.md"].size_bytes == 5
        assert not vault.wait_for_pending_writes(0.2), "waited for writes without waiting for the check"
        # after the walk saw it and before the vault is watched: only the check can find it
        note.write_text("# n0\n\nchanged before the watches were in place\n", encoding="utf-8")
        vault.start_watching()
        assert vault.wait_for_pending_writes(30)
        assert vault.snapshot.by_path["n0.md"].size_bytes == note.stat().st_size
        assert not vault.index_stale
    finally:
        vault.stop()


def test_an_unchanged_disk_after_the_check_leaves_the_index_as_served(vault_root):
    prime(vault_root)
    vault = Vault(str(vault_root))
    try:
        vault.prepare_watching()
        vault.start()
        assert vault.wait_ready(30)
        served = vault.snapshot
        vault.start_watching()
        assert vault.wait_for_pending_writes(30)
        assert vault.snapshot.generation == served.generation  # no rescan that changed anything
        assert not vault.index_stale
    finally:
        vault.stop()
