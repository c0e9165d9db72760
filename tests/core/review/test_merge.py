"""The three-way line merge (core.review.merge) and "revert the agent's lines anyway" (core.review.revert)
on real vaults and real files."""

from __future__ import annotations

import pytest

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.review.merge import merge3, regions
from vaultwatch.core.review.revert import RevertRefused, revert, revert_anyway


def test_edits_apart_are_merged_byte_for_byte():
    base = b"a\nb\nc\nd\ne\n"
    ours = b"A\nb\nc\nd\ne\n"  # first line changed
    theirs = b"a\nb\nc\nd\nE\r\n"  # last line changed, its CRLF kept
    result = merge3(base, ours, theirs)
    assert result.conflicts == () and result.merged == b"A\nb\nc\nd\nE\r\n"


def test_insertions_and_deletions_apart_are_merged():
    base = b"one\ntwo\nthree\nfour\n"
    ours = b"zero\none\ntwo\nthree\nfour\n"
    theirs = b"one\ntwo\nthree\n"
    assert merge3(base, ours, theirs).merged == b"zero\none\ntwo\nthree\n"


def test_the_same_edit_on_both_sides_is_no_conflict():
    assert merge3(b"a\nb\n", b"a\nB\n", b"a\nB\n").merged == b"a\nB\n"


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (b"a\nX\nc\n", b"a\nY\nc\n"),  # the same line, two ways
        (b"a\nb\nX\nc\n", b"a\nY\nc\n"),  # an insertion right after the other's line
        (b"a\nc\n", b"a\nY\nc\n"),  # a deletion of the line the other changed
    ],
)
def test_edits_that_overlap_or_touch_are_conflicts_and_merge_nothing(ours, theirs):
    result = merge3(b"a\nb\nc\n", ours, theirs)
    assert result.merged is None and result.conflicts
    assert result.conflicts[0].base_start <= 1 < result.conflicts[0].base_end + 1


def test_a_last_line_without_newline_is_kept():
    assert merge3(b"a\nb\nc", b"A\nb\nc", b"a\nb\nC").merged == b"A\nb\nC"


@pytest.fixture
def setup(make_vault, open_vault, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    def make(files):
        root = make_vault(files)
        vault = open_vault(root)
        return root, vault, Writer(vault), journal_for(vault)

    return make


NOTE = "# Plan\n\nintro\n\n## Tasks\n\n- one\n- two\n\n## Notes\n\nend\n"


def test_revert_anyway_keeps_the_later_edit_and_undoes_the_agents_lines(setup):
    root, vault, writer, journal = setup({"a.md": NOTE})
    writer.edit("a.md", "- two\n", "- two\n- agent's line\n", actor="agent:x")
    change = journal.changes(kinds=["change"])[0]
    later = (root / "a.md").read_bytes().replace(b"intro\n", b"intro, edited in Obsidian\n")
    (root / "a.md").write_bytes(later)
    vault.refresh_paths(["a.md"])  # the watcher's "outside" row
    with pytest.raises(RevertRefused):
        revert(writer, journal, change.id)
    outcome = revert_anyway(writer, journal, change.id)
    assert (root / "a.md").read_bytes() == NOTE.replace("intro\n", "intro, edited in Obsidian\n").encode()
    assert outcome.revert.kind == "revert" and outcome.revert.revert_of == change.id
    assert journal.get(change.id).reverted_by == outcome.revert.id
    assert "kept the later edit" in outcome.revert.summary
    assert vault.snapshot.get("a.md").size_bytes == len((root / "a.md").read_bytes())


def test_revert_anyway_refuses_when_the_later_edit_touches_the_agents_lines(setup):
    root, vault, writer, journal = setup({"a.md": NOTE})
    writer.edit("a.md", "- two\n", "- two, by the agent\n", actor="agent:x")
    change = journal.changes(kinds=["change"])[0]
    later = (root / "a.md").read_bytes().replace(b"- two, by the agent\n", b"- two, by the agent and me\n")
    (root / "a.md").write_bytes(later)
    vault.refresh_paths(["a.md"])
    with pytest.raises(RevertRefused, match=r"touches the agent's lines \(line 8 of the note now\)"):
        revert_anyway(writer, journal, change.id)
    assert (root / "a.md").read_bytes() == later  # nothing lost
    assert journal.get(change.id).reverted_by is None


def test_revert_anyway_of_an_unchanged_note_is_a_plain_revert(setup):
    root, _, writer, journal = setup({"a.md": NOTE})
    writer.edit("a.md", "intro", "intro!", actor="agent:x")
    outcome = revert_anyway(writer, journal, journal.changes()[0].id)
    assert (root / "a.md").read_text() == NOTE and outcome.revert.kind == "revert"


def test_regions_are_only_the_hunks_with_the_three_versions_aligned():
    base = "".join(f"l{i}\n" for i in range(20)).encode()
    theirs = base.replace(b"l15\n", b"")  # before the change: the agent added l15
    ours = base.replace(b"l2\n", b"L2\n")  # the note now: l2 changed since
    first, second = regions(base, ours, theirs)
    assert (first.base_start, first.base, first.ours, first.theirs) == (
        1,
        (b"l1\n", b"l2\n", b"l3\n"),
        (b"l1\n", b"L2\n", b"l3\n"),
        (b"l1\n", b"l2\n", b"l3\n"),
    )
    assert first.ours_changed and not first.theirs_changed
    assert (second.base_start, second.ours_start, second.theirs_start) == (14, 14, 14)
    assert second.base == (b"l14\n", b"l15\n", b"l16\n") and second.theirs == (b"l14\n", b"l16\n")
    assert second.theirs_changed and not second.ours_changed


def test_reverting_a_created_note_removes_only_the_empty_folders_the_change_made(setup):
    root, vault, writer, journal = setup({"Inbox/a.md": "a\n"})
    writer.write("Inbox/Agent/Deep/new.md", "fresh\n", actor="agent:x")
    writer.write("Inbox/Agent2/Deep/other.md", "fresh\n", actor="agent:x")
    (root / "Inbox" / "Agent2" / "mine.md").write_text("the person's own note\n")
    vault.refresh_paths(["Inbox/Agent2/mine.md"])
    first, second = sorted(journal.changes(kinds=["change"]), key=lambda c: c.id)
    assert vault.snapshot.get("Inbox/Agent") is not None
    revert(writer, journal, first.id)
    assert not (root / "Inbox" / "Agent").exists() and (root / "Inbox" / "a.md").exists()
    assert vault.snapshot.get("Inbox/Agent") is None
    revert(writer, journal, second.id)
    assert not (root / "Inbox" / "Agent2" / "Deep").exists()  # made by the change and left empty
    assert (root / "Inbox" / "Agent2" / "mine.md").exists()  # not empty: stays


def test_reverting_a_created_note_keeps_an_empty_folder_that_was_there_before(setup):
    root, vault, writer, journal = setup({"a.md": "a\n"})
    (root / "Empty").mkdir()
    vault.refresh_paths(["Empty"])
    writer.write("Empty/new.md", "fresh\n", actor="agent:x")
    revert(writer, journal, journal.changes(kinds=["change"])[0].id)
    assert (root / "Empty").is_dir() and not (root / "Empty" / "new.md").exists()
