"""The journal follows the person's moves (core.review.moves): a real watcher on a real folder sees a
`mv`, the journal's outside row keeps where each note went, and the real `vaultwatch changes` and
`vaultwatch revert` processes find an agent's change at the note's new path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import wait_until

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import Caller, Journal, calling, journal_for
from vaultwatch.core.review.triageviews import reviews
from vaultwatch.core.vault import Vault

ROOT = Path(__file__).resolve().parents[3]
A = "# In good hands\nsummary: none\n"
B = "# 68 bits\nadvice\n"


def cli(*args: str) -> subprocess.CompletedProcess:
    """`vaultwatch ARGS` as the person runs it from another shell."""
    return subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def watched(make_vault, tmp_path, monkeypatch):
    """A vault with Clippings/a.md and Clippings/b.md, watched by a real watcher, and the journal."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    opened: list[Vault] = []

    def open_(files: dict[str, str]):
        root = make_vault(files)
        vault = Vault(root)
        vault.start_watching()
        vault.load()
        opened.append(vault)
        assert vault.wait_watching(30)
        return root, vault, Writer(vault), journal_for(vault)

    yield open_
    for v in opened:
        v.stop()


def agent_edit(writer: Writer, rel: str, old: str, new: str) -> int:
    """An agent's edit, and its file events taken in by the watcher: the person's `mv` comes after it
    (a move the same instant as the write's own events would be one outside row with them)."""
    with calling(Caller("scribe/0.1", "s-1", "edit", {"path": rel})) as caller:
        writer.edit(rel, old, new, actor="agent:scribe")
    assert writer.vault.wait_for_pending_writes(30)
    return caller.change_ids[-1]


def outside_row(journal, after: int):
    return wait_until(lambda: next((c for c in journal.changes() if c.id > after and c.kind == "outside"), None))


def test_a_folder_moved_outside_keeps_its_notes_flagged_listed_and_revertible_where_they_went(watched):
    root, vault, writer, journal = watched({"Clippings/a.md": A, "Clippings/b.md": B, "Home.md": "[[a]]\n"})
    first = agent_edit(writer, "Clippings/a.md", "none", "On trusting craftspeople.")
    second = agent_edit(writer, "Clippings/b.md", "advice", "advice, kept short")
    os.rename(root / "Clippings", root / "Web clippings")  # as `mv vault/Clippings "vault/Web clippings"`
    moved = outside_row(journal, second)
    assert moved.summary == "moved Clippings to Web clippings (2 files) outside vaultwatch"
    assert moved.arguments == {"moved": [["Clippings", "Web clippings"]]}
    # the Trust tab's notes: where the unreviewed notes are now
    assert {"Web clippings/a.md", "Web clippings/b.md"} <= set(journal.unreviewed_paths())
    assert "Clippings/a.md" not in journal.unreviewed_paths()
    assert {"Web clippings/a.md", "Web clippings/b.md"} <= reviews(vault).unreviewed
    listed = cli("changes", str(root), "--unreviewed")
    assert listed.returncode == 0, listed.stderr
    assert "Clippings/a.md (now at Web clippings/a.md)" in listed.stdout, listed.stdout
    assert "Clippings/b.md (now at Web clippings/b.md)" in listed.stdout
    every = cli("changes", str(root))
    assert "moved Clippings to Web clippings (2 files) outside vaultwatch" in every.stdout, every.stdout
    # the move is all that happened to a.md since: its revert puts the bytes back where it is now
    done = cli("revert", str(first), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "Web clippings/a.md").read_text() == A
    assert not (root / "Clippings").exists()  # nothing written where the note no longer is
    # b.md was edited after the move: refused, saying what happened, in plain words
    with (root / "Web clippings/b.md").open("a") as f:
        f.write("my own line\n")
    edited = outside_row(journal, moved.id)
    refused = cli("revert", str(second), str(root))
    assert refused.returncode == 1
    assert (
        f"cannot revert change {second}: Clippings/b.md (moved since to Web clippings/b.md: change {moved.id}, "
        f"outside vaultwatch) changed after it, outside vaultwatch (change {edited.id}). Nothing was reverted"
    ) in refused.stderr, refused.stderr
    assert (root / "Web clippings/b.md").read_text() == B.replace("advice", "advice, kept short") + "my own line\n"


def test_a_note_renamed_outside_is_reverted_at_its_new_name(watched):
    root, _, writer, journal = watched({"a.md": A, "Home.md": "[[a]]\n"})
    cid = agent_edit(writer, "a.md", "none", "changed")
    os.rename(root / "a.md", root / "b.md")  # as `mv a.md b.md`
    moved = outside_row(journal, cid)
    assert moved.summary == "moved a.md to b.md outside vaultwatch"
    assert "b.md" in journal.unreviewed_paths()
    done = cli("revert", str(cid), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "b.md").read_text() == A and not (root / "a.md").exists()
    assert "a.md had moved to b.md since" in journal.changes()[0].summary


def test_a_note_renamed_through_vaultwatch_is_reverted_at_its_new_name(watched):
    root, _, writer, journal = watched({"a.md": A, "Home.md": "[[a]]\n"})
    cid = agent_edit(writer, "a.md", "none", "changed")
    with calling(Caller("scribe/0.1", "s-1", "rename", {"path": "a.md"})):
        writer.rename("a.md", "Notes/a2.md", actor="agent:scribe")
    done = cli("revert", str(cid), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "Notes/a2.md").read_text() == A and not (root / "a.md").exists()


def test_the_chain_of_moves_decides_which_note_a_revert_writes(watched):
    """An agent cannot point a revert at another note: after the person moved the note it changed,
    the agent puts a copy of what it wrote at the old path and moves it on through vaultwatch, then
    moves another note to the old path. The revert writes only the note the recorded moves lead to."""
    root, _, writer, journal = watched({"a.md": A, "victim.md": "# Victim\nmine\n", "Home.md": "[[a]]\n"})
    cid = agent_edit(writer, "a.md", "none", "changed")
    wrote = (root / "a.md").read_text()
    os.rename(root / "a.md", root / "kept.md")  # the person's move
    outside_row(journal, cid)
    with calling(Caller("scribe/0.1", "s-1", "write", {"path": "a.md"})):
        writer.write("a.md", wrote, actor="agent:scribe")  # the same bytes, at the old path
    with calling(Caller("scribe/0.1", "s-1", "rename", {"path": "a.md"})):
        writer.rename("a.md", "decoy.md", actor="agent:scribe")
    with calling(Caller("scribe/0.1", "s-1", "rename", {"path": "victim.md"})):
        writer.rename("victim.md", "a.md", actor="agent:scribe")
    done = cli("revert", str(cid), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "kept.md").read_text() == A  # the note the change made, where the person moved it
    assert (root / "decoy.md").read_text() == wrote  # the agent's copy is left alone
    assert (root / "a.md").read_text() == "# Victim\nmine\n"  # the note the agent moved to the old path


def test_a_note_moved_out_of_the_vault_is_not_followed_and_the_refusal_says_so(watched, tmp_path):
    root, _, writer, journal = watched({"Clippings/a.md": A, "Home.md": "x\n"})
    cid = agent_edit(writer, "Clippings/a.md", "none", "changed")
    os.rename(root / "Clippings", tmp_path / "elsewhere")  # out of the vault
    gone = outside_row(journal, cid)
    assert "moved" not in gone.arguments
    refused = cli("revert", str(cid), str(root))
    assert refused.returncode == 1
    assert (
        f"cannot revert change {cid}: Clippings/a.md is gone: removed or moved out of the vault after it, "
        f"outside vaultwatch (change {gone.id}). Nothing was reverted"
    ) in refused.stderr, refused.stderr
    assert not (root / "Clippings").exists()
    assert (tmp_path / "elsewhere/a.md").read_text() != A  # outside the vault: never written


def test_a_redo_follows_the_persons_move_and_writes_only_what_the_revert_left(watched):
    """An agent's change, reverted, then the person moves the note with `mv` (the watcher records
    it): `vaultwatch redo` writes the agent's bytes where the note is now, and nothing at the old
    path. After a second move and an edit of the person's, a redo is refused, saying where the
    note went and that it changed, and the note keeps the person's bytes."""
    root, _, writer, journal = watched({"Clippings/a.md": A, "Home.md": "[[a]]\n"})
    cid = agent_edit(writer, "Clippings/a.md", "none", "On trusting craftspeople.")
    wrote = (root / "Clippings/a.md").read_text()
    done = cli("revert", str(cid), str(root))
    assert done.returncode == 0, done.stderr
    revert = next(c for c in journal.changes() if c.revert_of == cid)
    os.rename(root / "Clippings", root / "Web clippings")  # as `mv vault/Clippings "vault/Web clippings"`
    outside_row(journal, revert.id)
    redone = cli("redo", str(revert.id), str(root))
    assert redone.returncode == 0, redone.stderr
    assert (root / "Web clippings/a.md").read_text() == wrote
    assert not (root / "Clippings").exists()  # nothing written where the note no longer is
    assert "Clippings/a.md had moved to Web clippings/a.md since" in redone.stdout, redone.stdout
    # the redo is reverted at the same place; then the person moves and edits the note: refused
    again = journal.changes()[0]
    assert cli("revert", str(again.id), str(root)).returncode == 0
    revert2 = journal.changes()[0]
    os.rename(root / "Web clippings/a.md", root / "Web clippings/kept.md")
    moved = outside_row(journal, revert2.id)
    with (root / "Web clippings/kept.md").open("a") as f:
        f.write("my own line\n")
    edited = outside_row(journal, moved.id)
    refused = cli("redo", str(revert2.id), str(root))
    assert refused.returncode == 1
    assert "(moved since to Web clippings/kept.md: change" in refused.stderr, refused.stderr
    assert f"outside vaultwatch (change {edited.id})" in refused.stderr, refused.stderr
    assert (root / "Web clippings/kept.md").read_text() == A + "my own line\n"
    assert not (root / "Web clippings/a.md").exists()


def test_a_folder_moved_with_another_edit_counts_each_moved_file_once(tmp_path):
    """A `mv` of a folder and an edit seen in one batch: the row said "9 files changed outside
    vaultwatch; moved Clippings to Web clippings" of three notes moved (each counted at its old and
    its new place, the folder at both too) and one edited. The moved folder is a move of its files,
    counted once, and only the edit is counted as changed."""
    journal = Journal(str(tmp_path / "j.sqlite3"))
    names = ["n0.md", "n1.md", "n2.md"]
    old = ["Clippings", *(f"Clippings/{n}" for n in names)]
    new = ["Web clippings", *(f"Web clippings/{n}" for n in names)]
    row = journal.record_outside(
        [*new, "Home.md", *old],
        removed=old,
        moved=[("Clippings", "Web clippings")] + list(zip(old[1:], new[1:], strict=True)),
    )
    assert row.summary == "Home.md changed outside vaultwatch; moved Clippings to Web clippings (3 files)"
    two = journal.record_outside(
        [*new, "Home.md", "Inbox.md", *old], removed=old, moved=[("Clippings", "Web clippings")]
    )
    assert two.summary == "2 files changed outside vaultwatch; moved Clippings to Web clippings (3 files)"
    # a note's own move is one file: no count
    one = journal.record_outside(["b.md", "a.md"], removed=["a.md"], moved=[("a.md", "b.md")])
    assert one.summary == "moved a.md to b.md outside vaultwatch"
    journal.close()


def test_a_rename_the_person_moved_on_is_refused_saying_where_it_is_and_what_to_do(watched):
    """An agent renames a note, the person moves it on with `mv`: `vaultwatch revert` of the rename
    says where the note is now (not "gone") and how to undo it; moving it back as told, the revert
    puts it where it was and its link rewrites back."""
    root, _, writer, journal = watched(
        {"Clippings/Buy wisely.md": A, "Inbox/Start.md": "x\n", "Home.md": "[[Clippings/Buy wisely]]\n"}
    )
    with calling(Caller("scribe/0.1", "s-1", "rename", {"path": "Clippings/Buy wisely.md"})) as caller:
        writer.rename("Clippings/Buy wisely.md", "Inbox/Buy wisely.md", actor="agent:scribe")
    cid = caller.change_ids[-1]
    assert writer.vault.wait_for_pending_writes(30)
    os.rename(root / "Inbox/Buy wisely.md", root / "Notes (kept).md")  # as `mv`
    moved = wait_until(lambda: next((c for c in journal.changes() if c.id > cid and "moved" in c.arguments), None))
    refused = cli("revert", str(cid), str(root))
    assert refused.returncode == 1
    assert (
        f"cannot revert change {cid}: Inbox/Buy wisely.md was moved since to Notes (kept).md (change {moved.id}, "
        "outside vaultwatch). Reverting the rename from there would undo that move too, so nothing was "
        "reverted. To put it back at Clippings/Buy wisely.md, move it back to Inbox/Buy wisely.md and revert again"
    ) in refused.stderr, refused.stderr
    assert "gone" not in refused.stderr
    assert (root / "Notes (kept).md").read_text() == A and not (root / "Clippings/Buy wisely.md").exists()
    os.rename(root / "Notes (kept).md", root / "Inbox/Buy wisely.md")  # as the refusal says
    outside_row(journal, moved.id)  # the watcher took the move back in
    done = cli("revert", str(cid), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "Clippings/Buy wisely.md").read_text() == A
    assert (root / "Home.md").read_text() == "[[Clippings/Buy wisely]]\n"


def test_a_move_back_made_while_nothing_watched_finds_the_note_where_its_bytes_are(watched):
    """An agent changes Templates/Evil.md; the person's `mv Templates Templates2` is watched, vaultwatch
    quits, and `mv Templates2 Templates` happens while nothing watches. The journal's chain ends at
    Templates2/Evil.md, where nothing is: every view finds the note at Templates/Evil.md, which holds
    what the agent left (no "now at", no "is gone", still in the Trust tab's unreviewed tier). A note
    the person edited meanwhile is in no place of the chain with those bytes: gone, as before."""
    root, vault, writer, journal = watched({"Templates/Evil.md": A, "Templates/Edited.md": B, "Home.md": "x\n"})
    cid = agent_edit(writer, "Templates/Evil.md", "none", "changed")
    other = agent_edit(writer, "Templates/Edited.md", "advice", "advice, kept short")
    os.rename(root / "Templates", root / "Templates2")  # watched
    outside_row(journal, other)
    assert "Templates2/Evil.md" in journal.unreviewed_paths()
    vault.stop()  # quit
    os.rename(root / "Templates2", root / "Templates")  # while nothing watches
    with (root / "Templates/Edited.md").open("a") as f:
        f.write("my own line\n")
    again = Vault(root)
    again.load()
    try:
        journal2 = journal_for(again)
        unreviewed = journal2.unreviewed_paths()
        assert "Templates/Evil.md" in unreviewed and "Templates2/Evil.md" not in unreviewed
        assert "Templates/Evil.md" in reviews(again).unreviewed
        assert journal2.where_now("Templates/Evil.md", cid, etag=journal2.get(cid).etag)[0] == "Templates/Evil.md"
    finally:
        again.stop()
    listed = cli("changes", str(root), "--unreviewed")
    assert listed.returncode == 0, listed.stderr
    evil = next(line for line in listed.stdout.splitlines() if "Templates/Evil.md" in line)
    assert "now at" not in evil, listed.stdout
    # never "now at" a place where nothing is
    assert "Templates/Edited.md (moved since to Templates2/Edited.md; nothing is there now)" in listed.stdout
    done = cli("revert", str(cid), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "Templates/Evil.md").read_text() == A
    assert not (root / "Templates2").exists()
    refused = cli("revert", str(other), str(root))
    assert refused.returncode == 1
    assert "Templates2/Edited.md: change" in refused.stderr and "is not there now" in refused.stderr, refused.stderr
    assert (root / "Templates/Edited.md").read_text().endswith("my own line\n")


def test_a_note_moved_while_nothing_watched_is_said_where_its_bytes_are_and_never_reverted_there(watched):
    """The person's watched `mv Plugins/Backlinks.md Inbox/`, an agent's edit of Inbox/Backlinks.md,
    vaultwatch quits, and the note goes back to Plugins while nothing watches: no place of the
    journal's chain holds it. Every view says where the one note of that name holding the agent's
    bytes is (a guess, said as one), the Trust tab keeps it listed there, and revert refuses,
    saying where it is and what to do: a copy is never reverted in the note's place."""
    root, vault, writer, journal = watched({"Plugins/Backlinks.md": A, "Inbox/Other.md": B, "Home.md": "x\n"})
    os.rename(root / "Plugins/Backlinks.md", root / "Inbox/Backlinks.md")  # watched
    outside_row(journal, 0)
    cid = agent_edit(writer, "Inbox/Backlinks.md", "none", "changed")
    vault.stop()  # quit
    os.rename(root / "Inbox/Backlinks.md", root / "Plugins/Backlinks.md")  # while nothing watches
    left = (root / "Plugins/Backlinks.md").read_bytes()
    again = Vault(root)
    again.load()
    try:
        journal2 = journal_for(again)
        assert "Plugins/Backlinks.md" in journal2.unreviewed_paths()
        assert "Plugins/Backlinks.md" in reviews(again).unreviewed
    finally:
        again.stop()
    listed = cli("changes", str(root))
    assert listed.returncode == 0, listed.stderr
    line = next(line for line in listed.stdout.splitlines() if line.lstrip().startswith(f"{cid} "))
    assert (
        "Inbox/Backlinks.md (moved while vaultwatch was not watching? a note holding exactly what this change "
        "left is at Plugins/Backlinks.md)"
    ) in line, listed.stdout
    assert "now at" not in line
    refused = cli("revert", str(cid), str(root))
    assert refused.returncode == 1
    assert f"cannot revert change {cid}: Inbox/Backlinks.md is not there now" in refused.stderr, refused.stderr
    assert "a note holding exactly what this change left is at Plugins/Backlinks.md" in refused.stderr
    assert "move it back to Inbox/Backlinks.md and revert again, or revert it there by hand" in refused.stderr
    assert "no record of" not in refused.stderr
    assert (root / "Plugins/Backlinks.md").read_bytes() == left  # never reverted in the note's place
    # two notes of that name holding those bytes: no guess at all
    (root / "Home").mkdir()
    (root / "Home/Backlinks.md").write_bytes(left)
    listed = cli("changes", str(root))
    line = next(line for line in listed.stdout.splitlines() if line.lstrip().startswith(f"{cid} "))
    assert "Plugins/Backlinks.md" not in line and "now at" not in line, listed.stdout


def test_a_note_not_where_the_moves_end_is_not_said_to_be_there_and_its_later_edit_is_named(watched):
    """Two agent edits of Notes/a.md, a watched `mv` to Inbox/kept.md, then a move back while nothing
    watches: the first edit's note is in no place the chain names with its bytes (the second edit
    changed them). `changes` never says "now at" Inbox/kept.md, where nothing is, and the refusal
    names the journaled later edit instead of "an edit the journal has no record of"."""
    root, vault, writer, journal = watched({"Notes/a.md": A, "Inbox/Other.md": B, "Home.md": "x\n"})
    first = agent_edit(writer, "Notes/a.md", "none", "changed")
    second = agent_edit(writer, "Notes/a.md", "changed", "changed twice")
    os.rename(root / "Notes/a.md", root / "Inbox/kept.md")  # watched
    outside_row(journal, second)
    vault.stop()
    os.rename(root / "Inbox/kept.md", root / "Notes/a.md")  # while nothing watches
    listed = cli("changes", str(root))
    assert listed.returncode == 0, listed.stderr
    assert "now at Inbox/kept.md" not in listed.stdout, listed.stdout
    assert "Notes/a.md (moved since to Inbox/kept.md; nothing is there now)" in listed.stdout, listed.stdout
    refused = cli("revert", str(first), str(root))
    assert refused.returncode == 1
    assert f"changed after it, by {journal.get(second).who} (change {second})" in refused.stderr, refused.stderr
    assert "no record of" not in refused.stderr
    assert "Notes/a.md (moved since to Inbox/kept.md" in refused.stderr
