"""An agent's write killed (SIGKILL) after it landed and before the journal's row: the change is
never left in the note unseen. An agent that spawned its own server can kill it at that moment.

`vaultwatch changes` shows the cut-off write as an interrupted operation, `vaultwatch changes
--finish` journals it as the agent's change (unreviewed, with the bytes it replaced), and
`vaultwatch revert` puts the note back. A write killed before it landed is closed with nothing
journaled, and the new folders it had made are removed.

Real parts: the real write path and journal in a process of their own, with the agent named as
the MCP layer names it, stopped at a stage of the write (Writer's fault_hook) and SIGKILLed there;
`vaultwatch changes` and `vaultwatch revert` as processes.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from killed_cli import cli
from mcp_testing import ROOT
from paused_writer import end, kill_paused, start_paused

from vaultwatch.core.review.journal import STALE_WRITE_S, ChangeRecorded, Journal, journal_for, journal_path
from vaultwatch.core.vault import Vault

OLD = "---\ntitle: Plan\n---\n# Plan\n" + "old line\n" * 50
NEW = "---\ntitle: Plan\n---\n# Plan\n" + "rewritten by the agent\n" * 50


# another agent's change, made whole (its own server, journaled as usual)
OTHER = textwrap.dedent("""
    import sys
    from vaultwatch.core.vault import Vault
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.edit.hooks import Caller, calling

    root, op, path, new = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    w = Writer(Vault(root))
    with calling(Caller("other", "s-other", op, {"path": path})):
        if op == "write":
            w.write(path, new, overwrite=True, actor="agent:other")
        elif op == "delete":
            w.delete(path, actor="agent:other")
        elif op == "rename":  # a folder's rename waits for the loaded index
            w.vault.load()
            w.rename(path, new, actor="agent:other")
""")


@pytest.fixture
def place(tmp_path: Path, env: dict) -> tuple[Path, dict]:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text(OLD)
    (root / "Other.md").write_text("# Other\nsee [[Plan]]\n")
    return root, {**env, "PYTHONPATH": str(ROOT)}


def killed(root: Path, env: dict, op: str, stage: str) -> None:
    kill_paused(root, env, op, stage, NEW)


def other(root: Path, env: dict, op: str, path: str, new: str = "") -> None:
    done = subprocess.run(
        [sys.executable, "-c", OTHER, str(root), op, path, new], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr


def stored(root: Path, env: dict, monkeypatch, change_id: int) -> tuple[bytes | None, bytes | None]:
    """The bytes before and after the journal holds for change `change_id`'s first file."""
    monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
    journal = Journal(journal_path(os.path.realpath(root)))
    try:
        return journal.contents(change_id, 0)
    finally:
        journal.close()


def changes(root: Path, env: dict) -> list[dict]:
    done = cli("changes", str(root), "--json", env=env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize(
    ("op", "stage", "after"),
    [
        ("write", "replaced", NEW),
        ("edit", "replaced", OLD.replace("old line", "edited line")),
        ("delete", "deleted", None),
    ],
)
def test_a_write_killed_after_it_landed_is_journaled_as_the_agents_and_can_be_reverted(
    place, op: str, stage: str, after: str | None
) -> None:
    root, env = place
    killed(root, env, op, stage)
    note = root / "Plan.md"
    assert (note.read_text() if note.exists() else None) == after, "the kill did not land after the write"

    [shown] = changes(root, env)  # before finishing: an interrupted operation, named
    assert (shown["kind"], shown["operation"], shown["running"]) == ("interrupted", "write", False), shown
    assert "sneaky" in shown["summary"] and shown["paths"] == ["Plan.md"], shown

    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert f"journaled agent sneaky's {op} of Plan.md" in finished.stdout, finished.stdout

    [row] = changes(root, env)
    assert (row["kind"], row["operation"], row["agent"], row["reviewed"]) == ("change", op, "sneaky", False), row
    assert row["path"] == "Plan.md" and row["session"] == "s-0123456789", row
    if op == "delete":
        assert row["moved_to"] == ".trash/Plan.md", row

    reverted = cli("revert", str(row["id"]), str(root), "--yes", env=env)
    assert reverted.returncode == 0, (reverted.stdout, reverted.stderr)
    assert note.read_text() == OLD
    again = cli("changes", str(root), "--finish", env=env)
    assert "nothing interrupted to finish" in again.stdout, again.stdout


def test_a_private_notes_delete_for_good_killed_before_its_row_is_reverted_private(place) -> None:
    """The journal's row a later start writes for the killed delete keeps the note's mode (from the
    delete's intent): its revert re-creates the note 0600, not with the usual mode."""
    root, env = place
    note = root / "Plan.md"
    note.chmod(0o600)
    killed(root, env, "delete_for_good", "deleted")
    assert not note.exists() and not (root / ".trash").exists()
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    [row] = changes(root, env)
    assert (row["kind"], row["operation"], row["moved_to"]) == ("change", "delete", None), row
    reverted = cli("revert", str(row["id"]), str(root), env=env)
    assert reverted.returncode == 0, (reverted.stdout, reverted.stderr)
    assert note.read_text() == OLD
    assert note.stat().st_mode & 0o7777 == 0o600, oct(note.stat().st_mode)


def test_a_folder_delete_killed_after_the_move_is_journaled_with_its_trash_entry(place, monkeypatch) -> None:
    """No bytes either side (a folder): the row names the folder and where in the trash it went,
    the newest of the entries named like it, and a revert moves it back."""
    root, env = place
    (root / "Box").mkdir()
    (root / "Box" / "inside.md").write_text("# inside\n")
    (root / ".trash" / "Box").mkdir(parents=True)  # an older delete of another folder named Box
    killed(root, env, "delete_folder", "deleted")
    assert not (root / "Box").exists() and (root / ".trash" / "Box 1" / "inside.md").exists()
    finished = cli("changes", str(root), "--finish", env=env)
    assert "journaled agent sneaky's delete of Box" in finished.stdout, finished.stdout
    [row] = changes(root, env)
    assert (row["operation"], row["path"], row["moved_to"]) == ("delete", "Box", ".trash/Box 1"), row
    monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
    journal = Journal(journal_path(os.path.realpath(root)))
    assert journal.get(row["id"]).kind_of_path == "folder"
    journal.close()
    reverted = cli("revert", str(row["id"]), str(root), "--yes", env=env)
    assert reverted.returncode == 0, (reverted.stdout, reverted.stderr)
    assert (root / "Box" / "inside.md").read_text() == "# inside\n"


def test_a_hard_linked_attachments_delete_killed_after_the_move_is_an_attachments(place, monkeypatch) -> None:
    """A hard-linked file's bytes are never read (they are another file's too): no bytes either side,
    as for a folder, yet the row is an attachment's."""
    root, env = place
    (root / "pic.png").write_bytes(b"\x89PNG not really")
    os.link(root / "pic.png", root / "elsewhere.png")
    killed(root, env, "delete_linked", "deleted")
    assert not (root / "pic.png").exists()
    finished = cli("changes", str(root), "--finish", env=env)
    assert "journaled agent sneaky's delete of pic.png" in finished.stdout, finished.stdout
    [row] = changes(root, env)
    assert row["moved_to"] == ".trash/pic.png", row
    monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
    journal = Journal(journal_path(os.path.realpath(root)))
    assert journal.get(row["id"]).kind_of_path == "attachment"
    journal.close()


def test_a_write_killed_before_it_landed_journals_nothing(place) -> None:
    """Its bytes were on disk in a temporary file, not in the note: nothing to journal or finish."""
    root, env = place
    killed(root, env, "write", "temp_written")
    assert (root / "Plan.md").read_text() == OLD
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert "nothing interrupted to finish" in finished.stdout, finished.stdout
    assert changes(root, env) == []


def test_a_create_killed_after_making_its_folders_leaves_no_empty_folder(place) -> None:
    root, env = place
    killed(root, env, "create", "temp_written")
    assert (root / "Deep" / "er").is_dir() and not (root / "Deep" / "er" / "New.md").exists()
    [shown] = changes(root, env)
    assert (shown["kind"], shown["operation"]) == ("interrupted", "write"), shown
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert "removed the empty folders it had made: Deep/er, Deep" in finished.stdout, finished.stdout
    assert not (root / "Deep").exists()
    assert changes(root, env) == []


def test_a_watching_process_journals_a_killed_agents_write_at_once(place, monkeypatch) -> None:
    """The person's TUI (here its vault, watching) does not wait for a restart: once the agent's
    server is dead with its write open, the watching process journals the write and shows it, and
    never as an outside edit."""
    root, env = place
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, env[name])
    vault = Vault(root)
    vault.load()
    vault.start_watching()
    try:
        assert vault.wait_watching(30)
        shown: list = []
        vault.bus.subscribe(lambda e: shown.append(e.change) if isinstance(e, ChangeRecorded) else None)
        killed(root, env, "write", "replaced")
        deadline = time.monotonic() + 30
        while not shown and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [(c.operation, c.agent, c.kind) for c in shown] == [("write", "sneaky", "change")]
        journal = journal_for(vault)
        assert journal.open_intents() == []
        assert journal.changes(kinds=("outside",)) == []
    finally:
        vault.stop()


def test_another_agents_later_write_is_never_journaled_as_the_killed_ones(place) -> None:
    """The killed create never landed; another agent then created the note. Only the other agent's
    row names it: journaled as the killed agent's too, reverting that row would delete the note."""
    root, env = place
    killed(root, env, "create", "temp_written")
    other(root, env, "write", "Deep/er/New.md", "# the other agent's note\n")
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert "agent sneaky's write of Deep/er/New.md was stopped before it landed" in finished.stdout, finished.stdout
    assert [(r["agent"], r["operation"]) for r in changes(root, env)] == [("other", "write")]
    assert (root / "Deep" / "er" / "New.md").read_text() == "# the other agent's note\n"


def test_a_killed_write_changed_since_is_journaled_with_its_own_bytes(place, monkeypatch) -> None:
    """The killed write landed; another agent's write replaced it since. The killed write's row
    holds what it wrote (what the later change replaced), not the later change's bytes."""
    root, env = place
    killed(root, env, "write", "replaced")
    other(root, env, "write", "Plan.md", "# Plan\nthe other agent's\n")
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    rows = changes(root, env)
    assert [(r["agent"], r["operation"]) for r in rows] == [("sneaky", "write"), ("other", "write")]
    assert stored(root, env, monkeypatch, rows[0]["id"]) == (OLD.encode(), NEW.encode())


def test_a_killed_delete_names_its_own_trash_entry_beside_a_later_same_named_one(place) -> None:
    """The killed delete moved folder Proj to .trash/Proj; another agent's delete then moved its
    own Proj to .trash/Proj 1. The killed delete's row names .trash/Proj, and its revert brings back
    that folder, not the other agent's."""
    root, env = place
    (root / "Proj").mkdir()
    (root / "Proj" / "mine.md").write_text("# mine\n")
    (root / "X" / "Proj").mkdir(parents=True)
    (root / "X" / "Proj" / "theirs.md").write_text("# theirs\n")
    killed(root, env, "delete_proj", "deleted")
    other(root, env, "delete", "X/Proj")
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    rows = {r["agent"]: r for r in changes(root, env)}
    assert (rows["sneaky"]["moved_to"], rows["other"]["moved_to"]) == (".trash/Proj", ".trash/Proj 1")
    reverted = cli("revert", str(rows["sneaky"]["id"]), str(root), "--yes", env=env)
    assert reverted.returncode == 0, (reverted.stdout, reverted.stderr)
    assert sorted(p.name for p in (root / "Proj").iterdir()) == ["mine.md"]
    assert (root / ".trash" / "Proj 1" / "theirs.md").exists()


def test_a_stopped_agents_landed_write_is_journaled_once(place, monkeypatch) -> None:
    """SIGSTOP instead of SIGKILL: the process lives on, its write landed, its row never comes. Once
    its intent is STALE_WRITE_S old the write is journaled as the agent's; when the process goes on,
    it finds that row and adds none."""
    root, env = place
    proc = start_paused(root, env, "write", "replaced", NEW)
    try:
        os.kill(proc.pid, signal.SIGSTOP)
        [shown] = changes(root, env)
        assert (shown["kind"], shown["running"]) == ("in_progress", True), shown
        monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
        with sqlite3.connect(journal_path(os.path.realpath(root))) as con:  # time passes
            con.execute("UPDATE intents SET at = at - ?", (STALE_WRITE_S + 1,))
        finished = cli("changes", str(root), "--finish", env=env)
        assert "journaled agent sneaky's write of Plan.md" in finished.stdout, finished.stdout
        [row] = changes(root, env)
        assert (row["kind"], row["agent"], row["reviewed"]) == ("change", "sneaky", False), row
        os.kill(proc.pid, signal.SIGCONT)
        proc.send_signal(signal.SIGUSR1)  # ends its pause (tests/paused_writer.py)
        out, err = proc.communicate(timeout=60)
        assert "DONE" in out, err
        assert [r["id"] for r in changes(root, env)] == [row["id"]]  # one row for the one write
    finally:
        end(proc)


def test_a_watching_process_takes_a_killed_creates_new_folders_for_its_own(place, monkeypatch) -> None:
    """The create made Deep/er on its way and landed; while its intent is open, the folders' arrival
    is that write's, as the note's is. An outside row for them would outlive a server killed before
    its recheck (its own watcher sees its own folders before its row), and stay beside the agent's."""
    root, env = place
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, env[name])
    vault = Vault(root)
    vault.load()
    vault.start_watching()
    proc = None
    try:
        assert vault.wait_watching(30)
        journal = journal_for(vault)
        proc = start_paused(root, env, "create", "replaced", NEW)
        deadline = time.monotonic() + 30
        while "Deep/er/New.md" not in vault.snapshot.by_path and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "Deep/er/New.md" in vault.snapshot.by_path
        assert vault.wait_for_pending_writes(30)  # the folders' own events, if they come apart from the note's
        assert journal.changes(kinds=("outside",)) == []  # the writer lives on, paused: no row yet
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        deadline = time.monotonic() + 30
        while journal.open_intents() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert vault.wait_for_pending_writes(30)  # what the finishing of the write did on disk
        rows = journal.changes()
        assert [(c.kind, c.operation, c.agent) for c in rows] == [("change", "write", "sneaky")], rows
    finally:
        if proc is not None:
            end(proc)
        vault.stop()


def test_a_watching_process_finishes_a_killed_create_that_never_landed_without_a_row(place, monkeypatch) -> None:
    """Killed before the note landed: the watching process closes the write and removes the folders
    it made. Neither their arrival nor their removal is an outside edit."""
    root, env = place
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, env[name])
    vault = Vault(root)
    vault.load()
    vault.start_watching()
    try:
        assert vault.wait_watching(30)
        journal = journal_for(vault)
        killed(root, env, "create", "temp_written")
        deadline = time.monotonic() + 30
        while (journal.open_intents() or (root / "Deep").exists()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not (root / "Deep").exists()
        # the removal's own disk events, then any recheck of an outside row they made: at once,
        # as a process about to stop does, rather than after the journal's timer
        assert vault.wait_for_pending_writes(30)
        journal.recheck_now()
        assert journal.changes() == []
    finally:
        vault.stop()


@pytest.mark.parametrize(
    ("op", "stage", "rel", "before"),
    [("write", "replaced", "Plan.md", OLD), ("create", "temp_written", "Deep/er/New.md", None)],
)
def test_a_killed_write_edited_outside_since_keeps_the_outside_edit_on_revert(
    place, monkeypatch, op: str, stage: str, rel: str, before: str | None
) -> None:
    """Killed after (or, for the create, before) it landed, then the person's editor saved the
    note: nothing in the journal tells whether the write landed first. Its row holds what the agent
    wrote, so `revert` finds the note changed since and refuses; the outside edit stays."""
    root, env = place
    killed(root, env, op, stage)
    edited = "# Plan\nsaved by the person's editor\n"
    (root / rel).write_text(edited)
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert f"journaled agent sneaky's write of {rel}" in finished.stdout, finished.stdout
    [row] = changes(root, env)
    assert (row["kind"], row["agent"], row["reviewed"]) == ("change", "sneaky", False), row
    assert "changed outside vaultwatch since" in row["summary"], row
    assert stored(root, env, monkeypatch, row["id"]) == (before and before.encode(), NEW.encode())
    reverted = cli("revert", str(row["id"]), str(root), "--yes", env=env)
    assert reverted.returncode != 0, reverted.stdout
    assert "changed" in (reverted.stdout + reverted.stderr), (reverted.stdout, reverted.stderr)
    assert (root / rel).read_text() == edited


def test_a_stopped_agents_write_that_has_not_landed_stays_open_until_it_lands(place, monkeypatch) -> None:
    """Stopped after its intent and before its note landed, for longer than STALE_WRITE_S: finishing
    must not close the intent, since the write lands when the process goes on. Killed then, right
    after it landed, the write is still journaled as the agent's (closed, it would be nowhere)."""
    root, env = place
    proc = start_paused(root, env, "create", "temp_written,replaced", NEW)
    try:
        monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
        with sqlite3.connect(journal_path(os.path.realpath(root))) as con:  # time passes
            con.execute("UPDATE intents SET at = at - ?", (STALE_WRITE_S + 1,))
        finished = cli("changes", str(root), "--finish", env=env)
        assert "is held up in process" in finished.stdout, finished.stdout
        proc.send_signal(signal.SIGUSR1)  # goes on: the note lands, and it pauses again
        assert proc.stdout.readline().strip() == "PAUSED replaced"
        assert (root / "Deep" / "er" / "New.md").read_text() == NEW
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        finished = cli("changes", str(root), "--finish", env=env)
        assert "journaled agent sneaky's write of Deep/er/New.md" in finished.stdout, finished.stdout
        [row] = changes(root, env)
        assert (row["kind"], row["agent"], row["path"]) == ("change", "sneaky", "Deep/er/New.md"), row
    finally:
        end(proc)


EDITED = "# Plan\nsaved by the person's editor\n"


@pytest.mark.parametrize(
    "meanwhile",
    [
        "another agent's write",
        "an editor's save",
        "another agent writing the same bytes, then an editor's save",
        "another agent's delete, then a note made anew by the editor",
    ],
)
def test_a_write_that_lands_over_a_change_made_meanwhile_holds_what_it_replaced(
    place, monkeypatch, meanwhile: str
) -> None:
    """Held between its last look at the note and its switch (a stopped server makes that gap as
    long as it likes), the write lands over a change made meanwhile. Its row holds what the switch
    really replaced, so reverting it gives that back, never the bytes the write had looked at."""
    root, env = place
    note = root / "Plan.md"
    theirs = "# Plan\nthe other agent's\n"
    proc = start_paused(root, env, "write", "checked", NEW)
    try:
        if meanwhile == "another agent's write":
            other(root, env, "write", "Plan.md", theirs)
            replaced = theirs
        elif meanwhile == "an editor's save":
            note.write_text(EDITED)
            replaced = EDITED
        elif meanwhile.startswith("another agent writing the same bytes"):
            other(root, env, "write", "Plan.md", NEW)
            note.write_text(EDITED)
            replaced = EDITED
        else:
            other(root, env, "delete", "Plan.md")
            note.write_text(EDITED)
            replaced = EDITED
        proc.send_signal(signal.SIGUSR1)
        out, err = proc.communicate(timeout=60)
        assert "DONE" in out, err
    finally:
        end(proc)
    assert note.read_text() == NEW
    [row] = [r for r in changes(root, env) if r["agent"] == "sneaky"]
    assert "the journal holds what it replaced" in row["summary"], row
    assert stored(root, env, monkeypatch, row["id"]) == (replaced.encode(), NEW.encode())
    reverted = cli("revert", str(row["id"]), str(root), "--yes", env=env)
    assert reverted.returncode == 0, (reverted.stdout, reverted.stderr)
    assert note.read_text() == replaced


def test_two_killed_writes_of_one_note_chain_and_neither_is_called_an_outside_edit(place) -> None:
    """The second killed write found what the first wrote: the first landed, and the note changed
    since by a write of the agent's, not outside vaultwatch. Reverting both, newest first, puts the
    note back as it was."""
    root, env = place
    killed(root, env, "write", "replaced")
    second = "# Plan\nthe agent's second try\n"
    kill_paused(root, env, "write", "replaced", second)
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    rows = changes(root, env)
    assert [(r["agent"], r["operation"]) for r in rows] == [("sneaky", "write"), ("sneaky", "write")], rows
    assert "a later write, stopped too" in rows[1]["summary"], rows[1]
    assert not any("outside" in r["summary"] for r in rows), rows
    for row in rows:  # newest first
        reverted = cli("revert", str(row["id"]), str(root), "--yes", env=env)
        assert reverted.returncode == 0, (reverted.stdout, reverted.stderr)
    assert (root / "Plan.md").read_text() == OLD


def test_a_sweep_before_the_finish_leaves_a_killed_writes_file_that_tells_it_never_landed(place, monkeypatch) -> None:
    """Two killed writes of one note: the first landed, the second was killed before its switch;
    then the person's editor saved the note, and a start's sweep of a killed run's temporary files
    ran before the finish. The second write's file, which tells it never landed, is left to the
    finish: no row says the agent's second try reached the note."""
    root, env = place
    killed(root, env, "write", "replaced")
    kill_paused(root, env, "write", "checked", "# Plan\nthe agent's second try\n")
    (root / "Plan.md").write_text(EDITED)
    monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
    vault = Vault(root)
    try:
        vault.load()
        from vaultwatch.core.edit.atomic import clean_temp_files_soon

        sweep = clean_temp_files_soon(vault)
        sweep.join(60)
        assert not sweep.is_alive()
    finally:
        vault.stop()
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert "was stopped before it landed" in finished.stdout, finished.stdout
    rows = changes(root, env)
    assert [(r["agent"], r["operation"]) for r in rows] == [("sneaky", "write")], rows
    assert "after it landed" in rows[0]["summary"], rows[0]
    assert not any("outside" in r["summary"] for r in rows), rows
    assert (root / "Plan.md").read_text() == EDITED
    assert [p.name for p in root.iterdir() if p.name.startswith(".vaultwatch-")] == []


def test_an_attested_note_a_held_up_agents_write_landed_in_is_unverified_before_its_row(place) -> None:
    """On an OKF bundle, an agent's write landed in a note a person attested and its server stopped
    before the journal's row: `vaultwatch stats` (as the Trust tab and the `triage` tool) counts the
    note unverified at once, not only once the write is settled."""
    root, env = place
    attested = "---\nverified:\n  - by: human:ana\n    at: 2026-01-05\n---\n"
    (root / "index.md").write_text('---\nokf_version: "0.2"\ntitle: Index\n---\n# Index\n')
    (root / "Plan.md").write_text(attested + OLD.split("---\n", 2)[2])

    def tiers() -> dict:
        done = cli("stats", str(root), "--json", env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["trust_tier"]

    assert tiers()["human-reviewed"] == 1
    proc = start_paused(root, env, "write", "replaced", attested + "# Plan\nrewritten by the agent\n")
    try:
        assert (root / "Plan.md").read_text().endswith("rewritten by the agent\n")  # landed, no row yet
        now = tiers()
        assert (now["human-reviewed"], now["unverified"]) == (0, 2), now
    finally:
        end(proc)


@pytest.mark.parametrize("meanwhile", ["deleted", "a folder", "a hard link to a file outside the vault"])
def test_a_write_whose_note_is_swapped_for_what_it_does_not_write_over_writes_nothing(
    place, tmp_path, meanwhile: str
) -> None:
    """In the gap between the last look and the switch the note is deleted, or replaced by a folder
    or by a hard link to a file outside the vault: the write refuses as its last look would have,
    puts back what it took out, and leaves no hidden copy and no row."""
    root, env = place
    note = root / "Plan.md"
    proc = start_paused(root, env, "write", "checked", NEW)
    try:
        note.unlink()
        if meanwhile == "a folder":
            note.mkdir()
            (note / "a.md").write_text("# the person's folder\n")
        elif meanwhile.startswith("a hard link"):
            secret = tmp_path / "secret.txt"
            secret.write_text("OUTSIDE SECRET\n")
            os.link(secret, note)
        proc.send_signal(signal.SIGUSR1)
        out, err = proc.communicate(timeout=60)
    finally:
        end(proc)
    assert proc.returncode != 0 and "DONE" not in out, (out, err)
    if meanwhile == "deleted":
        assert not note.exists()
    elif meanwhile == "a folder":
        assert (note / "a.md").read_text() == "# the person's folder\n"
    else:
        assert note.read_text() == "OUTSIDE SECRET\n" and note.stat().st_nlink == 2
    assert [p.name for p in root.iterdir() if p.name.startswith(".vaultwatch-")] == []
    assert [r for r in changes(root, env) if r["agent"] == "sneaky"] == []


def test_a_write_killed_right_after_its_switch_journals_the_edit_it_replaced(place, monkeypatch) -> None:
    """The person's editor saved the note in the gap before the switch; the write swapped it out and
    was killed before removing it. Finishing reads the write's temporary file before the sweep: the
    row holds the person's text as what it replaced, and its revert brings that text back."""
    root, env = place
    note = root / "Plan.md"
    proc = start_paused(root, env, "write", "checked,exchanged", NEW)
    try:
        note.write_text(EDITED)
        proc.send_signal(signal.SIGUSR1)
        assert proc.stdout.readline().strip() == "PAUSED exchanged"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        end(proc)
    assert note.read_text() == NEW
    finished = cli("changes", str(root), "--finish", env=env)
    assert "journaled agent sneaky's write of Plan.md" in finished.stdout, finished.stdout
    [row] = changes(root, env)
    assert stored(root, env, monkeypatch, row["id"]) == (EDITED.encode(), NEW.encode())
    reverted = cli("revert", str(row["id"]), str(root), "--yes", env=env)
    assert reverted.returncode == 0, (reverted.stdout, reverted.stderr)
    assert note.read_text() == EDITED
    assert [p.name for p in root.iterdir() if p.name.startswith(".vaultwatch-")] == []


def test_a_write_killed_before_its_switch_then_edited_outside_journals_nothing(place) -> None:
    """Killed at its last look; the person's editor then saved the note. The write's temporary file
    still held its own bytes: it never landed, and no row claims it did."""
    root, env = place
    note = root / "Plan.md"
    killed(root, env, "write", "checked")
    note.write_text(EDITED)
    finished = cli("changes", str(root), "--finish", env=env)
    assert "was stopped before it landed" in finished.stdout, finished.stdout
    assert [r for r in changes(root, env) if r["agent"] == "sneaky"] == []
    assert note.read_text() == EDITED


@pytest.mark.parametrize("where", ["the trash", "out of the vault", "another folder of the vault"])
def test_a_write_whose_folder_moves_before_its_switch_writes_nothing(place, tmp_path, where: str) -> None:
    """Held between its last look and its switch, the write's folder is deleted to the trash by
    another agent, moved out of the vault, or renamed by another agent: the write was decided on its
    path (the rules, the gate), so it refuses, leaves the note as it was, and journals nothing."""
    root, env = place
    (root / "Proj").mkdir()
    (root / "Proj" / "Plan.md").write_text(OLD)
    proc = start_paused(root, env, "write_in_proj", "checked", NEW)
    try:
        if where == "the trash":
            other(root, env, "delete", "Proj")
            moved = root / ".trash" / "Proj" / "Plan.md"
        elif where == "another folder of the vault":
            other(root, env, "rename", "Proj", "Moved")
            moved = root / "Moved" / "Plan.md"
        else:
            os.rename(root / "Proj", tmp_path / "Proj")
            moved = tmp_path / "Proj" / "Plan.md"
        proc.send_signal(signal.SIGUSR1)
        out, err = proc.communicate(timeout=60)
    finally:
        end(proc)
    assert proc.returncode != 0 and "was moved while this write was in progress" in err, (out, err)
    assert moved.read_text() == OLD
    assert [p.name for p in moved.parent.iterdir()] == ["Plan.md"]
    assert [r for r in changes(root, env) if r["agent"] == "sneaky"] == []
