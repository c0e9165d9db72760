"""The change journal and revert (core.review.journal, core.review.revert) on real vaults and real files."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vaultwatch.core.edit.writes import Writer, etag_of
from vaultwatch.core.review import journal as jmod
from vaultwatch.core.review.journal import Journal, journal_for, parse_since
from vaultwatch.core.review.resume import resume_interrupted
from vaultwatch.core.review.revert import RevertRefused, revert, revert_agent
from vaultwatch.core.vault import Vault

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def setup(make_vault, open_vault, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    def make(files):
        root = make_vault(files)
        vault = open_vault(root)
        return root, vault, Writer(vault), journal_for(vault)

    return make


def test_a_write_is_journaled_with_who_what_and_both_versions(setup, tmp_path):
    root, vault, writer, journal = setup({"a.md": "# A\nold line\n"})
    with jmod.calling(jmod.Caller("claude/1.0", "s-1", "edit", {"path": "a.md"})) as caller:
        result = writer.edit("a.md", "old line", "new line", actor="agent:claude")
    [change] = journal.changes()
    assert caller.change_ids == [change.id]
    assert (change.agent, change.session, change.tool, change.operation) == ("claude/1.0", "s-1", "edit", "edit")
    assert change.path == "a.md" and change.etag == result.etag and change.previous_etag == result.previous_etag
    assert change.at == vault.clock.now().timestamp()  # the injected clock
    before, after = journal.contents(change.id, change.files[0].seq)
    assert before == b"# A\nold line\n" and after == (root / "a.md").read_bytes()
    assert journal.path.startswith(str(tmp_path / "state" / "vaultwatch" / "journal"))
    assert journal.changes(path="a.md")[0].id == change.id
    assert journal.changes(agent="claude")[0].id == change.id and journal.changes(agent="other") == []


def test_no_change_is_not_journaled(setup):
    _, _, writer, journal = setup({"a.md": "same\n"})
    writer.write("a.md", "same\n", overwrite=True)
    assert journal.changes() == []


def test_revert_restores_the_exact_bytes(setup):
    original = b"\xef\xbb\xbf---\r\ntitle: A\r\n---\r\nbody\r\n"
    root, vault, writer, journal = setup({"a.md": original})
    writer.write("a.md", "---\ntitle: B\n---\nnew body\n", overwrite=True, actor="agent:x")
    assert (root / "a.md").read_bytes() != original
    outcome = revert(writer, journal, journal.changes()[0].id)
    assert (root / "a.md").read_bytes() == original
    assert vault.snapshot.get("a.md").size_bytes == len(original)  # the index saw the revert
    reverted = journal.get(outcome.change_id)
    assert reverted.reverted_by == outcome.revert.id
    assert outcome.revert.kind == "revert" and outcome.revert.revert_of == reverted.id
    with pytest.raises(RevertRefused, match="already reverted"):
        revert(writer, journal, reverted.id)


def test_revert_puts_back_lf_bytes_over_crlf_ones_without_restyling_them(setup):
    root, _, writer, journal = setup({"a.md": "one\ntwo\n"})
    writer.write("a.md", "one\r\ntwo\r\nthree\r\n", overwrite=True, actor="agent:x")
    revert(writer, journal, journal.changes()[0].id)
    assert (root / "a.md").read_bytes() == b"one\ntwo\n"  # a plain write would keep the CRLF "style"


def test_revert_of_a_created_note_moves_it_to_the_trash_and_its_revert_brings_it_back(setup):
    root, _, writer, journal = setup({"a.md": "a\n"})
    writer.write("new.md", "fresh\n", actor="agent:x")
    created = journal.changes()[0]
    undo = revert(writer, journal, created.id)
    assert not (root / "new.md").exists()
    revert(writer, journal, undo.revert.id)
    assert (root / "new.md").read_bytes() == b"fresh\n"


def test_revert_is_refused_after_an_outside_edit_with_the_three_versions(setup):
    root, vault, writer, journal = setup({"a.md": "one\n"})
    writer.write("a.md", "two\n", overwrite=True, actor="agent:x")
    (root / "a.md").write_bytes(b"three\n")
    vault.refresh_paths(["a.md"])  # what the watcher does: an "outside" row
    change = journal.changes(kinds=["change"])[0]
    with pytest.raises(RevertRefused) as info:
        revert(writer, journal, change.id)
    assert "changed after it, outside vaultwatch" in info.value.message
    assert info.value.versions == {"before": b"one\n", "written": b"two\n", "current": b"three\n"}
    assert (root / "a.md").read_bytes() == b"three\n"
    assert journal.changes()[0].kind == "outside" and journal.changes()[0].path == "a.md"


def test_rename_revert_restores_the_note_and_every_rewritten_link_byte_for_byte(setup):
    files = {
        "Notes/Plan.md": "# Plan\nsee [[Other]]\n",
        "Other.md": "x\n",
        "a.md": "links: [[Plan]] and [[Plan|the plan]] and ![[Plan#Goals]]\r\n",
        "b.md": '---\nup: "[[Plan]]"\n---\n[md](Notes/Plan.md) [enc](<Notes/Plan.md>)\n',
        "c.md": "no links here\n",
    }
    root, _, writer, journal = setup(files)
    before = {p: (root / p).read_bytes() for p in files}
    result = writer.rename("Notes/Plan.md", "Archive/Old Plan.md", actor="agent:mover")
    assert "a.md" in result.changed_paths and (root / "a.md").read_bytes() != before["a.md"]
    change = journal.changes()[0]
    assert change.src == "Notes/Plan.md" and change.path == "Archive/Old Plan.md"
    assert {f.path for f in change.files if f.role == "links"} == {"a.md", "b.md"}
    revert(writer, journal, change.id)
    assert {p: (root / p).read_bytes() for p in files} == before
    assert not (root / "Archive" / "Old Plan.md").exists()


def test_rename_revert_is_refused_when_a_rewritten_note_changed_since(setup):
    root, _, writer, journal = setup({"P.md": "p\n", "a.md": "[[P]]\n"})
    writer.rename("P.md", "Q.md", actor="agent:x")
    (root / "a.md").write_bytes(b"[[Q]] edited\n")
    with pytest.raises(RevertRefused, match="a.md changed after it"):
        revert(writer, journal, journal.changes()[0].id)
    assert (root / "Q.md").exists() and not (root / "P.md").exists()


def test_delete_revert_moves_the_note_back_from_the_trash(setup):
    root, _, writer, journal = setup({"a.md": "keep me\n"})
    writer.delete("a.md", actor="agent:x")
    revert(writer, journal, journal.changes()[0].id)
    assert (root / "a.md").read_bytes() == b"keep me\n" and not (root / ".trash" / "a.md").exists()


def test_permanent_delete_revert_recreates_the_note_from_the_journal(setup):
    root, _, writer, journal = setup({"a.md": "keep me\n"})
    writer.delete("a.md", permanent=True, confirm_path="a.md", actor="agent:x")
    revert(writer, journal, journal.changes()[0].id)
    assert (root / "a.md").read_bytes() == b"keep me\n"


def test_revert_all_of_one_agent(setup):
    root, _, writer, journal = setup({"a.md": "a\n", "b.md": "b\n"})
    writer.write("a.md", "a2\n", overwrite=True, actor="agent:bad")
    writer.write("a.md", "a3\n", overwrite=True, actor="agent:bad")
    writer.write("b.md", "b2\n", overwrite=True, actor="agent:good")
    writer.write("c.md", "c\n", actor="agent:bad")
    outcome = revert_agent(writer, journal, "bad")
    assert len(outcome.reverted) == 3 and outcome.refused == []
    assert (root / "a.md").read_bytes() == b"a\n" and not (root / "c.md").exists()
    assert (root / "b.md").read_bytes() == b"b2\n"


def test_the_journal_survives_a_restart(setup, open_vault):
    root, _, writer, journal = setup({"a.md": "a\n"})
    writer.write("a.md", "b\n", overwrite=True, actor="agent:x")
    first = journal.changes()[0]
    journal.close()
    again = journal_for(open_vault(root))
    assert again.path == journal.path and again.get(first.id).summary == first.summary


def test_bounds_hold_for_count_and_bytes(tmp_path):
    # keep_s=0: reviewed changes (outside rows, the person's own) may go as soon as they are over the bounds
    journal = Journal(str(tmp_path / "j.sqlite3"), max_changes=50, max_bytes=10**9, keep_s=0)
    for i in range(200):
        journal.record_outside([f"n{i}.md"])
    assert journal.stats()["changes"] == 50
    assert [c.path for c in journal.changes(limit=2)] == ["n199.md", "n198.md"]
    journal.close()
    small = Journal(str(tmp_path / "k.sqlite3"), max_changes=10**6, max_bytes=400_000, keep_s=0)
    scope = jmod.Scope(small, None, "write", "human", {})
    noise = os.urandom(20_000)  # incompressible: every change stores ~40 KB
    for i in range(100):
        scope.files = [jmod.FileWrite("a.md", noise + bytes([i]), noise + bytes([i + 1]), "target")]
        small._insert(
            dict(kind="change", actor="human", tool="write", operation="write", path="a.md"), scope.files, ["a.md"]
        )
    stats = small.stats()
    assert stats["content_bytes"] <= 400_000 and stats["changes"] < 20
    small.checkpoint()
    assert os.path.getsize(small.path) < 2_000_000  # freed pages are reused, the file does not grow without end


def test_parse_since(clock):
    now = clock.now()
    assert parse_since("2h", now) == jmod.Within(7200)
    assert parse_since("2026-11-28", now) == now.timestamp() - 86400
    with pytest.raises(Exception, match="ISO date"):
        parse_since("yesterday", now)


CRASHER = textwrap.dedent("""
    import sys
    from vaultwatch.core.vault import Vault
    from vaultwatch.core.edit.writes import Writer
    vault = Vault(sys.argv[1], cache=False)
    vault.load()
    writer = Writer(vault)
    i = 0
    while True:
        writer.write("a.md", f"version {i}\\n" * 500, overwrite=True, actor="agent:crash")
        i += 1
        if i == 5:
            print("ready", flush=True)
""")


def test_kill_9_while_journaling_leaves_a_readable_journal(make_vault, tmp_path):
    root = make_vault({"a.md": "start\n"})
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "crash-state"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", CRASHER, str(root)], env=env, stdout=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout.readline().strip() == b"ready"
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    path = jmod.journal_path(os.path.realpath(root)).replace(
        jmod.state_dir(), str(tmp_path / "crash-state" / "vaultwatch")
    )
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    journal = Journal(path)
    changes = journal.changes()
    assert len(changes) >= 5
    for change in changes[:20]:
        before, after = journal.contents(change.id, 0)
        assert after.startswith(b"version ") and etag_of(after) == change.files[0].after_etag


RACER = textwrap.dedent("""
    import random, sys
    from vaultwatch.core.vault import Vault
    from vaultwatch.core.edit.writes import Writer
    vault = Vault(sys.argv[1], cache=False)
    vault.load()
    writer = Writer(vault)
    rng = random.Random(int(sys.argv[2]))
    i = 0
    while True:
        name = f"n{rng.randrange(4)}.md"
        body = "".join(f"round {sys.argv[2]} write {i} line {k} {rng.random()}\\n" for k in range(rng.randrange(10, 3000)))
        writer.write(name, body, overwrite=True, actor="human:crash")  # the person's: pruned when over
        i += 1
        if i == 3:
            print("ready", flush=True)
""")


def test_kill_9_at_random_points_of_journaled_writes_leaves_every_record_whole(make_vault, tmp_path):
    """A loop of journaled writes (notes of 0.5-150 KB, the journal pruning to 40 changes as it
    goes: the person's changes, older than the zero retention age) killed at a random moment, eight times over one journal: after each kill the file
    passes SQLite's integrity check and every change the journal holds is whole (its files,
    both versions' bytes matching their etags, its paths)."""
    rng = random.Random(18)
    root = make_vault({f"n{k}.md": "start\n" for k in range(4)})
    state = tmp_path / "crash-state"
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(state),
        "PYTHONPATH": str(ROOT),
        "VAULTWATCH_JOURNAL_MAX_CHANGES": "40",
        "VAULTWATCH_JOURNAL_KEEP_DAYS": "0",
    }
    path = jmod.journal_path(os.path.realpath(root)).replace(jmod.state_dir(), str(state / "vaultwatch"))
    seen = 0
    for round_ in range(8):
        proc = subprocess.Popen(
            [sys.executable, "-c", RACER, str(root), str(round_)], env=env, stdout=subprocess.PIPE, cwd=ROOT
        )
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        con = sqlite3.connect(path)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        orphans = con.execute("SELECT COUNT(*) FROM files WHERE change_id NOT IN (SELECT id FROM changes)").fetchone()
        assert orphans[0] == 0
        con.close()
        journal = Journal(path)
        changes = journal.changes()
        assert changes and len(changes) <= 41  # pruned as it went (bounded even across kills)
        for change in changes:
            assert change.files and change.paths == (change.path,), change
            for f in change.files:
                before, after = journal.contents(change.id, f.seq)
                assert after is not None and etag_of(after) == f.after_etag == change.etag
                assert (before is None) == (f.before_etag is None)
                assert before is None or etag_of(before) == f.before_etag
        assert journal.stats()["changes"] == len(changes)
        newest = changes[0]
        on_disk = (root / newest.path).read_bytes()  # the kill may land between a write and its record
        assert etag_of(on_disk) == newest.etag or f"round {round_} write".encode() in on_disk
        seen += len(changes)
        journal.close()
    assert seen > 8


@pytest.mark.parametrize("actor", ["human", "agent:claude"])
def test_a_folder_rename_is_in_the_history_of_every_file_it_moved(setup, actor):
    root, vault, writer, journal = setup({"Team/Secret/plan.md": "# Plan\n", "Team/open.md": "# Open\n"})
    writer.rename("Team", "Crew", actor=actor)
    writer.delete("Crew/Secret", actor=actor)
    for path in ("Team/Secret/plan.md", "Crew/Secret/plan.md", "Team/open.md", "Crew/open.md"):
        assert [c.operation for c in journal.changes(path=path)][-1:] == ["rename"], path
    assert [c.operation for c in journal.changes(path="Crew/Secret/plan.md")] == ["delete", "rename"]


RENAMER = textwrap.dedent("""
    import sys
    from vaultwatch.core.vault import Vault
    from vaultwatch.core.edit.writes import Writer
    vault = Vault(sys.argv[1], cache=False)
    vault.load()
    print("ready", flush=True)
    Writer(vault).rename("T.md", "U.md", actor="agent:mover")
    print("done", flush=True)
""")


def test_a_rename_killed_midway_is_rolled_back_at_the_next_start(make_vault, tmp_path, monkeypatch):
    """A rename rewriting [[T]] in 400 notes is killed (SIGKILL) once part of the rewrite is on
    disk; the next start (resume_interrupted) journals what it did and rolls it back: every link
    and the note back, and the interrupted rename and its roll-back are both in the journal."""
    names = [f"n{i:03}.md" for i in range(400)]
    root = make_vault({"T.md": "# T\n", **{n: f"# {n}\nsee [[T]]\n" + "filler\n" * 40 for n in names}})
    state = tmp_path / "rename-state"
    env = {**os.environ, "XDG_STATE_HOME": str(state), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", RENAMER, str(root)], env=env, stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        while True:
            moved = sum(1 for n in names if "[[U]]" in (root / n).read_text())
            if moved >= 10 or proc.poll() is not None:
                break
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    moved = sum(1 for n in names if "[[U]]" in (root / n).read_text())
    assert 10 <= moved < len(names), f"the rename was not cut off midway ({moved} rewritten)"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))  # the next start: this process, on that journal
    vault = Vault(root, cache=False)
    vault.load()
    journal = journal_for(vault)
    [(_, change_id, actor, plan)] = journal.open_intents(interrupted=True)
    assert plan["operation"] == "rename" and plan["move"] == ["T.md", "U.md"] and actor == "agent:mover"
    outcome = resume_interrupted(Writer(vault), journal)
    assert len(outcome) == 1 and "rolled back" in outcome[0][1], outcome
    assert all("[[T]]" in (root / n).read_text() for n in names)
    assert (root / "T.md").exists() and not (root / "U.md").exists()
    assert journal.open_intents() == []
    revert_row, rename_row = journal.changes(limit=2)
    assert rename_row.operation == "rename" and "interrupted" in rename_row.summary and not rename_row.reviewed
    assert len(rename_row.files) >= moved and revert_row.revert_of == rename_row.id
    journal.close()


def test_reviewed_marks_and_the_unreviewed_notes_query(setup):
    root, vault, writer, journal = setup({"a.md": "a\n", "b.md": "b\n"})
    with jmod.calling(jmod.Caller("claude/1.0", "s-1", "write")):
        writer.write("a.md", "a2\n", overwrite=True, actor="agent:claude")
        writer.write("b.md", "b2\n", overwrite=True, actor="agent:claude")
    writer.write("a.md", "a3\n", overwrite=True, actor="human:me")  # the person's own: reviewed
    mine = journal.changes()[0]
    assert mine.reviewed and [c.path for c in journal.unreviewed()] == ["b.md", "a.md"]
    assert journal.unreviewed_paths() == {"a.md": mine.id - 2, "b.md": mine.id - 1}
    assert journal.mark_reviewed([mine.id - 1]) == [mine.id - 1]
    assert journal.unreviewed_paths() == {"a.md": mine.id - 2}
    assert journal.mark_reviewed(agent="claude") == [mine.id - 2] and journal.unreviewed() == []


def test_the_reviewed_notes_are_those_whose_agent_changes_the_person_reviewed(setup):
    """reviewed_paths: a note leaves it when an agent changes it again (it waits for review), the
    person's own changes and outside edits never put a note there, and a review puts it back."""
    root, vault, writer, journal = setup({"a.md": "a\n", "b.md": "b\n", "c.md": "c\n"})
    writer.write("a.md", "a2\n", overwrite=True, actor="agent:claude")
    writer.write("b.md", "b2\n", overwrite=True, actor="agent:claude")
    writer.write("c.md", "c2\n", overwrite=True, actor="human:me")  # reviewed when recorded, but no agent's
    journal.record_outside(["c.md"])
    assert journal.reviewed_paths() == set()
    journal.mark_reviewed(by="human:me")
    assert journal.reviewed_paths() == {"a.md", "b.md"} and journal.unreviewed_paths() == {}
    writer.write("a.md", "a3\n", overwrite=True, actor="agent:claude")
    assert journal.reviewed_paths() == {"b.md"} and set(journal.unreviewed_paths()) == {"a.md"}
    journal.mark_reviewed(by="human:me")
    assert journal.reviewed_paths() == {"a.md", "b.md"}


def test_a_journal_from_before_reviewed_and_journal_time_opens_and_keeps_its_changes(tmp_path):
    """A journal written by the previous release (no boot, mono, jt, reviewed columns) gains them
    on open: its rows read back, count as not reviewed, and "since" finds them by their wall time."""
    path = str(tmp_path / "old.sqlite3")
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE changes (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, kind TEXT NOT NULL,
            actor TEXT NOT NULL, agent TEXT, session TEXT, tool TEXT NOT NULL, operation TEXT NOT NULL,
            path TEXT NOT NULL, src TEXT, moved_to TEXT, path_kind TEXT NOT NULL DEFAULT 'note',
            summary TEXT NOT NULL DEFAULT '', arguments TEXT NOT NULL DEFAULT '{}', previous_etag TEXT,
            etag TEXT, revert_of INTEGER, reverted_by INTEGER, size INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE files (change_id INTEGER NOT NULL, seq INTEGER NOT NULL, path TEXT NOT NULL,
            role TEXT NOT NULL, before BLOB, after BLOB, before_etag TEXT, after_etag TEXT,
            before_size INTEGER NOT NULL, after_size INTEGER NOT NULL, PRIMARY KEY (change_id, seq));
        CREATE TABLE paths (change_id INTEGER NOT NULL, path TEXT NOT NULL);
    """)
    now = time.time()
    con.execute(
        "INSERT INTO changes (at, kind, actor, agent, tool, operation, path, size) VALUES (?,?,?,?,?,?,?,?)",
        (now - 600, "change", "agent:x", "x", "write", "write", "a.md", 300),
    )
    con.execute("INSERT INTO paths VALUES (1, 'a.md')")
    con.commit()
    con.close()
    journal = Journal(path)
    [old] = journal.changes()
    assert old.path == "a.md" and not old.reviewed and journal.unreviewed_paths() == {"a.md": old.id}
    assert [c.id for c in journal.changes(since=jmod.Within(3600))] == [old.id]
    assert journal.changes(since=jmod.Within(60)) == []
    journal.record_outside(["b.md"])
    assert [c.path for c in journal.changes(since=jmod.Within(3600))] == ["b.md", "a.md"]
    journal.close()


def test_a_following_journal_announces_each_row_another_process_commits_once(tmp_path):
    """A watching process's journal publishes the rows another process commits (a CLI revert while
    the TUI runs), each once, and its own rows once, however the two interleave."""
    from waiting import wait_until

    from vaultwatch.core.events import EventBus
    from vaultwatch.core.review.journal import ChangeRecorded

    path = str(tmp_path / "journal.sqlite3")
    bus = EventBus()
    seen: list[int] = []
    bus.subscribe(lambda e: seen.append(e.change.id) if isinstance(e, ChangeRecorded) else None)
    journal = Journal(path, bus=bus)
    journal.follow(interval=0.01)
    try:
        own = journal.record_outside(["a.md"])
        other = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from vaultwatch.core.review.journal import Journal; "
                "print(Journal(sys.argv[1]).record_outside(['b.md']).id)",
                path,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
            check=True,
        )
        theirs = int(other.stdout)
        wait_until(lambda: theirs in seen, what="the other process's row announced")
        mine = journal.record_outside(["c.md"])
        assert journal.announce_others() == []  # nothing new from others: nothing published twice
        assert seen == [own.id, theirs, mine.id]
    finally:
        journal.close()


def test_a_following_journal_says_when_another_process_marks_rows_reviewed(setup):
    """A mark from another process adds no row; the watching journal still publishes that the
    journal changed, once, and nothing more while no other process commits."""
    from waiting import wait_until

    from vaultwatch.core.review.journal import ChangeRecorded, JournalUpdated

    root, vault, writer, journal = setup({"a.md": "a\n"})
    writer.write("a.md", "a2\n", overwrite=True, actor="agent:claude")
    [change] = journal.unreviewed()
    seen: list[str] = []
    vault.bus.subscribe(
        lambda e: seen.append(type(e).__name__) if isinstance(e, (ChangeRecorded, JournalUpdated)) else None
    )
    journal.follow(interval=0.01)
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from vaultwatch.core.review.journal import Journal; "
            "assert Journal(sys.argv[1]).mark_reviewed([int(sys.argv[2])])",
            journal.path,
            str(change.id),
        ],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        check=True,
    )
    wait_until(lambda: "JournalUpdated" in seen, what="the other process's mark announced")
    journal.stop_following()
    assert seen == ["JournalUpdated"] and journal.unreviewed() == []
    assert journal.announce_others() == [] and seen == ["JournalUpdated"]


def test_an_outside_row_its_own_write_explains_is_dropped_when_the_vault_stops(setup):
    """A write's own file event can reach the watcher before its journal row: the row the journal then
    records as an outside edit is dropped at its recheck, a second later. A vault that stops before
    then (a stdio server whose client hung up) rechecks at once, so the person never reads an agent's
    write as an edit made outside vaultwatch."""
    from vaultwatch.core.events import DocumentsChanged

    root, vault, writer, journal = setup({"a.md": "# A\n"})
    assert journal.current is not None  # the journal reads the vault's bytes: it can tell its own writes
    (root / "a.md").write_text("# A\nmine\n", encoding="utf-8")  # the write lands on disk...
    vault.bus.publish(DocumentsChanged(vault.snapshot.generation, changed=("a.md",)))  # ...its event first
    assert [c.kind for c in journal.changes()] == ["outside"]
    (root / "a.md").write_text("# A\n", encoding="utf-8")
    writer.write("a.md", "# A\nmine\n", overwrite=True, actor="agent:bot")  # then its row
    assert [c.kind for c in journal.changes()] == ["change", "outside"]  # within the second before the recheck
    vault.stop()
    assert [c.kind for c in journal.changes()] == ["change"]


def test_a_folder_that_changed_only_in_its_times_is_no_outside_edit(setup):
    """The load's check of the disk can see a folder's mtime move under an agent's write into it:
    that is the write's, which its own row shows; a folder made or removed outside still counts."""
    from vaultwatch.core.events import DocumentsChanged

    root, vault, writer, journal = setup({"Inbox/a.md": "# A\n"})
    vault.bus.publish(DocumentsChanged(vault.snapshot.generation, changed=("Inbox",)))
    assert journal.changes() == []
    (root / "Made").mkdir()
    vault.bus.publish(DocumentsChanged(vault.snapshot.generation, added=("Made",)))
    assert [(c.kind, c.path) for c in journal.changes()] == [("outside", "Made")]


def test_a_journal_from_before_intents_kept_their_bytes_after_opens_and_reads_them_as_unknown(tmp_path):
    """A journal written by an older vaultwatch: its intent_files has no `after` column. Opening it
    adds the column; the older intent's bytes after read as unknown, a new intent's as written."""
    path = tmp_path / "journal.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(
            "CREATE TABLE intents (id INTEGER PRIMARY KEY AUTOINCREMENT, change_id INTEGER NOT NULL, "
            "actor TEXT NOT NULL, plan TEXT NOT NULL, at REAL NOT NULL);"
            "CREATE TABLE intent_files (intent_id INTEGER NOT NULL, seq INTEGER NOT NULL, path TEXT NOT NULL, "
            "before BLOB, after_etag TEXT, PRIMARY KEY (intent_id, seq));"
            "INSERT INTO intents VALUES (1, 0, 'agent:a', '{\"operation\": \"write\"}', 0);"
            "INSERT INTO intent_files VALUES (1, 0, 'a.md', NULL, 'e');"
        )
    con.close()
    journal = Journal(str(path))
    try:
        assert journal.intended_bytes(1) == [None]
        new = journal.begin_intent(0, "agent:a", {"operation": "write"}, [("b.md", b"old\n", b"new\n")])
        assert journal.intended_bytes(new) == [b"new\n"]
        assert journal.intent_files(new) == [("b.md", b"old\n", etag_of(b"new\n"))]
    finally:
        journal.close()


def test_the_revision_moves_with_this_processs_commits_and_with_another_processs_once_followed(setup, tmp_path):
    """The TUI re-reads the journal's reviews only when its revision moved: it must move for a row
    journaled here, and for a note marked reviewed by another process once the follower looked."""
    root, vault, writer, journal = setup({"a.md": "# A\n"})
    assert journal.revision() is None  # nothing follows other processes: read every time
    journal.follow(interval=3600)
    try:
        first = journal.revision()
        assert first is not None and journal.revision() == first
        writer.write("a.md", "# A\nby the agent\n", overwrite=True, actor="agent:x")
        second = journal.revision()
        assert second != first
        [change] = journal.changes()
        other = Journal(journal.path)
        try:
            other.mark_reviewed([change.id])
        finally:
            other.close()
        assert journal.revision() == second  # not seen before the follower's look
        journal.announce_others()
        assert journal.revision() != second
    finally:
        journal.stop_following()


def test_reverting_a_rename_removes_the_folders_it_made_for_its_destination(setup):
    """A rename into a new folder made that folder; reverting it moves the note back and removes the
    folder, left empty, but never a folder that was there before."""
    root, vault, writer, journal = setup({"Proj/a.md": "# A\n", "Old/keep.md": "# keep\n"})
    (root / "Empty").mkdir()
    writer.rename("Proj", "New/Deeper/Proj2", actor="agent:x")
    writer.rename("Old/keep.md", "Empty/keep.md", actor="agent:x")
    for change in journal.changes():  # newest first
        revert(writer, journal, change.id, actor="human")
    assert (root / "Proj" / "a.md").read_text() == "# A\n" and (root / "Old" / "keep.md").exists()
    assert not (root / "New").exists()
    assert (root / "Empty").is_dir()


def test_one_agents_changes_are_its_own_whatever_its_version_and_no_one_elses(setup):
    """`changes --agent`, `--mark-reviewed all --agent` and `revert --agent` select an agent by its
    clientInfo name: every version of it, and never another agent whose name merely starts with it
    (`acme/writer` is not `acme`) or matches it as a LIKE pattern (`a_me` is not `acme`)."""
    root, vault, writer, journal = setup({f"{n}.md": f"# {n}\n" for n in "abcd"})
    for path, label, name in [
        ("a.md", "acme/1.0", "acme"),
        ("b.md", "acme/2.0", "acme"),  # the same agent, its client upgraded
        ("c.md", "acme/writer/1.0", "acme/writer"),  # another agent, its name holds a slash
        ("d.md", "a_me/1.0", "a_me"),
    ]:
        with jmod.calling(jmod.Caller(label, "s-" + name, "write", {"path": path})):
            writer.write(path, f"# {path} by {name}\n", overwrite=True, actor=f"agent:{name}")
    assert sorted(c.path for c in journal.changes(agent="acme")) == ["a.md", "b.md"]
    assert [c.path for c in journal.changes(agent="acme/writer")] == ["c.md"]
    assert [c.path for c in journal.changes(agent="a_me")] == ["d.md"]
    assert sorted(c.path for c in journal.unreviewed(agent="acme")) == ["a.md", "b.md"]
    marked = journal.mark_reviewed(None, agent="acme", by="human")
    assert sorted(c.path for c in journal.changes() if c.id in marked) == ["a.md", "b.md"]
    assert sorted(c.path for c in journal.unreviewed()) == ["c.md", "d.md"]
    revert_agent(writer, journal, "acme")
    assert (root / "c.md").read_text() == "# c.md by acme/writer\n"
    assert (root / "a.md").read_text() == "# a\n" and (root / "b.md").read_text() == "# b\n"
