"""The write path (core.edit.writes.Writer) on real files: safety, atomicity, conflicts, edits, index, events."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from pathlib import Path

import pytest

from vaultwatch.core.edit.writes import (
    AlreadyExistsError,
    ConflictError,
    EditError,
    FrontmatterEditError,
    WriteApplied,
    Writer,
    WriteRefused,
    etag_of,
)
from vaultwatch.core.errors import NotFoundError, PathError, VaultError
from vaultwatch.core.events import DocumentsChanged
from vaultwatch.core.markdown.parse import parse_note
from vaultwatch.core.markdown.sections import SectionError, edit_section, find_heading, headings
from vaultwatch.core.vault import Vault

NOTE = "---\ntitle: Plan\nstatus: draft  # keep me\ntags: [a]\n---\n# Plan\n\nIntro.\n\n## Tasks\n- one\n- two\n\n### Done\n- zero\n\n## Notes\nText.\n"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text(NOTE)
    (root / "Other.md").write_text("See [[Plan]].\n")
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.json").write_text("{}")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    v = Vault(root)
    v.load()
    return v


@pytest.fixture
def writer(vault: Vault) -> Writer:
    return Writer(vault)


def read(vault: Vault, rel: str) -> bytes:
    return (Path(vault.root) / rel).read_bytes()


def tag(vault: Vault, rel: str) -> str:
    return hashlib.sha256(read(vault, rel)).hexdigest()


def no_temp_files(root: str) -> bool:
    return not [n for _, _, files in os.walk(root) for n in files if n.startswith(".vaultwatch-")]


# --- create / replace -------------------------------------------------------------------


def test_create_note_creates_parents_indexes_and_reports(vault, writer):
    events = []
    vault.bus.subscribe(events.append)
    result = writer.write("New/Sub/Idea.md", "---\nstatus: draft\n---\n# Idea\n", actor="agent:tester")
    assert read(vault, "New/Sub/Idea.md") == b"---\nstatus: draft\n---\n# Idea\n"
    assert result.created and result.changed and result.previous_etag is None
    assert result.etag == tag(vault, "New/Sub/Idea.md")
    assert set(result.changed_paths) == {"New", "New/Sub", "New/Sub/Idea.md"}
    entry = vault.snapshot.get("New/Sub/Idea.md")
    assert entry is not None and entry.title == "Idea" and entry.frontmatter == {"status": "draft"}
    assert vault.snapshot.get("New/Sub").kind == "folder"
    changed = [e for e in events if isinstance(e, DocumentsChanged)]
    assert changed and changed[-1].source == "agent:tester" and "New/Sub/Idea.md" in changed[-1].added
    applied = [e for e in events if isinstance(e, WriteApplied)]
    assert applied[-1].actor == "agent:tester" and applied[-1].operation == "write"
    assert no_temp_files(vault.root)


def test_replacing_needs_if_match_or_overwrite(vault, writer):
    before = read(vault, "Projects/Plan.md")
    with pytest.raises(WriteRefused) as info:
        writer.write("Projects/Plan.md", "new")
    assert info.value.code == "exists_requires_if_match" and etag_of(before) in info.value.message
    with pytest.raises(ConflictError) as info:
        writer.write("Projects/Plan.md", "new", if_match="0" * 64)
    assert info.value.code == "revision_conflict" and info.value.current_etag == etag_of(before)
    assert read(vault, "Projects/Plan.md") == before
    result = writer.write("Projects/Plan.md", "---\ntitle: New\n---\n", if_match=etag_of(before))
    assert read(vault, "Projects/Plan.md") == b"---\ntitle: New\n---\n" and result.previous_etag == etag_of(before)
    assert vault.snapshot.get("Projects/Plan.md").title == "New"
    writer.write("Projects/Plan.md", "# Forced\n", overwrite=True)
    assert read(vault, "Projects/Plan.md") == b"# Forced\n"


def test_create_only_never_clobbers(vault, writer):
    before = read(vault, "Projects/Plan.md")
    with pytest.raises(AlreadyExistsError) as info:
        writer.write("Projects/Plan.md", "x", create_only=True, overwrite=True)
    assert info.value.current_etag == etag_of(before)
    assert read(vault, "Projects/Plan.md") == before


def test_if_match_on_a_missing_note_is_a_conflict(writer):
    with pytest.raises(ConflictError) as info:
        writer.write("Nope.md", "x", if_match="a" * 64)
    assert info.value.current_etag is None


def test_identical_write_is_a_no_op(vault, writer):
    before = os.stat(Path(vault.root) / "Projects/Plan.md")
    result = writer.write("Projects/Plan.md", NOTE, overwrite=True)
    assert not result.changed and result.etag == result.previous_etag
    assert os.stat(Path(vault.root) / "Projects/Plan.md").st_ino == before.st_ino


def test_mode_bom_and_crlf_are_preserved_on_replace(vault, writer):
    path = Path(vault.root) / "Crlf.md"
    path.write_bytes(b"\xef\xbb\xbf---\r\ntitle: x\r\n---\r\nbody\r\n")
    os.chmod(path, 0o640)
    writer.write("Crlf.md", "---\ntitle: y\n---\nbody\n", overwrite=True)
    assert path.read_bytes() == b"\xef\xbb\xbf---\r\ntitle: y\r\n---\r\nbody\r\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_content_rules(vault, writer):
    with pytest.raises(WriteRefused) as info:
        writer.write("Nul.md", "a\x00b")
    assert info.value.code == "nul_bytes"
    with pytest.raises(WriteRefused) as info:
        writer.write("Big.md", "x" * (10 * 1024 * 1024 + 1))
    assert info.value.code == "too_large"
    with pytest.raises(WriteRefused) as info:
        writer.write("Bad.md", "\ud800")
    assert info.value.code == "invalid_text"
    with pytest.raises(WriteRefused) as info:
        writer.write("script.sh", "echo")
    assert info.value.code == "not_a_note"
    with pytest.raises(WriteRefused) as info:
        writer.write("image.png", b"\x89PNG")
    assert info.value.code == "not_a_note"
    for name in ("Nul.md", "Big.md", "Bad.md", "script.sh", "image.png"):
        assert not (Path(vault.root) / name).exists()


def test_attachments_only_when_asked(vault, writer):
    result = writer.write("files/pic.png", b"\x89PNG\x00data", allow_attachment=True)
    assert read(vault, "files/pic.png") == b"\x89PNG\x00data"
    assert vault.snapshot.get("files/pic.png").kind == "attachment" and result.created
    with pytest.raises(WriteRefused):
        writer.write("files/tool.exe", b"MZ", allow_attachment=True)


def test_writing_onto_a_folder_or_fifo_is_refused(vault, writer):
    (Path(vault.root) / "Dir.md").mkdir()
    with pytest.raises(WriteRefused) as info:
        writer.write("Dir.md", "x", overwrite=True)
    assert info.value.code == "is_a_folder"
    os.mkfifo(Path(vault.root) / "Pipe.md")
    with pytest.raises(WriteRefused) as info:
        writer.write("Pipe.md", "x", overwrite=True)
    assert info.value.code == "not_a_regular_file"


# --- hostile paths, for every operation ---------------------------------------------------

HOSTILE = [
    "../escape.md",
    "Projects/../../escape.md",
    "/etc/passwd",
    "/tmp/x.md",
    "~/x.md",
    "C:/x.md",
    "C:\\x.md",
    ".git/config",
    ".git/hooks/pre-commit.md",
    ".obsidian/app.json",
    ".obsidian/x.md",
    ".trash/x.md",
    "Projects/.hidden.md",
    ".env",
    "x\x00.md",
    "a\nb.md",
    "",
    "   ",
    "..",
    ".",
    "Projects\\Plan.md",
]


def _operations(writer: Writer):
    return {
        "write": lambda p: writer.write(p, "pwned", overwrite=True),
        "create": lambda p: writer.write(p, "pwned"),
        "edit": lambda p: writer.edit(p, "[core]", "pwned"),
        "edit_section": lambda p: writer.edit_section(p, "Tasks", "append", "pwned"),
        "update_frontmatter": lambda p: writer.update_frontmatter(p, set={"x": "pwned"}),
        "rename_src": lambda p: writer.rename(p, "Moved.md"),
        "rename_dst": lambda p: writer.rename("Other.md", p),
        "delete": lambda p: writer.delete(p),
        "delete_permanent": lambda p: writer.delete(p, permanent=True, confirm_path=p),
    }


def _snapshot_tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_hostile_paths_are_refused_by_every_operation(vault, writer, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    os.symlink(outside, Path(vault.root) / "escape")  # a symlinked folder pointing out of the vault
    os.symlink(Path(vault.root) / ".git", Path(vault.root) / "gitlink")  # a symlink into a hidden folder
    extra = ["escape/secret.md", "escape/new.md", "gitlink/config.md", "gitlink/new.md"]
    before_vault = _snapshot_tree(Path(vault.root))
    before_outside = _snapshot_tree(tmp_path / "outside")
    for op_name, op in _operations(writer).items():
        for path in HOSTILE + extra:
            with pytest.raises(VaultError) as info:
                op(path)
            assert isinstance(info.value, (PathError, WriteRefused, NotFoundError)), (op_name, path, info.value)
            assert "Traceback" not in info.value.message
    assert _snapshot_tree(Path(vault.root)) == before_vault
    assert _snapshot_tree(tmp_path / "outside") == before_outside
    assert not (tmp_path / "escape.md").exists() and not (tmp_path / "x.md").exists()


def test_symlinked_parent_escape_is_blocked_for_new_files(vault, writer, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, Path(vault.root) / "Linked")
    with pytest.raises(PathError) as info:
        writer.write("Linked/Deep/new.md", "x")
    assert info.value.code == "symlink_escapes_vault"
    assert list(outside.iterdir()) == []


def test_symlinked_note_inside_the_vault_writes_its_target(vault, writer):
    os.symlink(Path(vault.root) / "Projects" / "Plan.md", Path(vault.root) / "Alias.md")
    writer.update_frontmatter("Alias.md", set={"status": "stable"})
    assert os.path.islink(Path(vault.root) / "Alias.md")
    assert b"status: stable  # keep me" in read(vault, "Projects/Plan.md")
    assert vault.snapshot.get("Projects/Plan.md").frontmatter["status"] == "stable"


# --- edits ----------------------------------------------------------------------------------


def test_edit_replaces_exactly_once(vault, writer):
    result = writer.edit("Projects/Plan.md", "- two", "- two\n- three", actor="agent:x")
    assert read(vault, "Projects/Plan.md").decode() == NOTE.replace("- two", "- two\n- three")
    assert result.diff_summary == "+1 -0 lines" and result.operation == "edit"


def test_edit_errors_say_how_many_and_where(vault, writer):
    writer.write("Dup.md", "x\nrepeat\ny\nrepeat\n")
    with pytest.raises(EditError) as info:
        writer.edit("Dup.md", "repeat", "z")
    assert (
        info.value.code == "ambiguous_match" and "2 times" in info.value.message and "lines 2, 4" in info.value.message
    )
    with pytest.raises(EditError) as info:
        writer.edit("Dup.md", "absent", "z")
    assert info.value.code == "no_match"
    with pytest.raises(EditError) as info:
        writer.edit("Dup.md", "x  \n repeat", "z")
    assert "up to whitespace" in info.value.message
    with pytest.raises(EditError):
        writer.edit("Dup.md", "", "z")
    writer.edit("Dup.md", "repeat", "z", replace_all=True)
    assert read(vault, "Dup.md") == b"x\nz\ny\nz\n"
    with pytest.raises(NotFoundError):
        writer.edit("Missing.md", "a", "b")


def test_edit_matches_lf_text_in_a_crlf_note(vault, writer):
    (Path(vault.root) / "Win.md").write_bytes(b"line one\r\nline two\r\nline three\r\n")
    writer.edit("Win.md", "line one\nline two", "first\nsecond")
    assert read(vault, "Win.md") == b"first\r\nsecond\r\nline three\r\n"


def test_edit_that_breaks_the_frontmatter_is_refused(vault, writer):
    before = read(vault, "Projects/Plan.md")
    with pytest.raises(EditError) as info:
        writer.edit("Projects/Plan.md", "tags: [a]", "tags: [a")
    assert info.value.code == "would_break_frontmatter"
    assert read(vault, "Projects/Plan.md") == before
    writer.edit("Projects/Plan.md", "tags: [a]", "tags: [a, b]")  # a valid frontmatter edit is fine


def test_edit_respects_if_match(vault, writer):
    with pytest.raises(ConflictError):
        writer.edit("Projects/Plan.md", "Intro.", "Hi.", if_match="f" * 64)
    writer.edit("Projects/Plan.md", "Intro.", "Hi.", if_match=tag(vault, "Projects/Plan.md"))


def test_non_utf8_notes_are_not_edited_in_place(vault, writer):
    (Path(vault.root) / "Latin.md").write_bytes(b"caf\xe9\n")
    with pytest.raises(WriteRefused) as info:
        writer.edit("Latin.md", "caf", "x")
    assert info.value.code == "not_utf8"
    assert read(vault, "Latin.md") == b"caf\xe9\n"


# --- sections -------------------------------------------------------------------------------


def test_section_append_lands_before_child_headings(vault, writer):
    writer.edit_section("Projects/Plan.md", "Tasks", "append", "- three")
    text = read(vault, "Projects/Plan.md").decode()
    assert "## Tasks\n- one\n- two\n- three\n\n### Done\n- zero\n" in text


def test_section_replace_keeps_children_and_spacing(vault, writer):
    result = writer.edit_section("Projects/Plan.md", "## Tasks", "replace", "- only")
    text = read(vault, "Projects/Plan.md").decode()
    assert "## Tasks\n- only\n\n### Done\n- zero\n\n## Notes\nText.\n" in text
    assert "line 10" in result.diff_summary


def test_section_prepend_and_nested_path(vault, writer):
    writer.edit_section("Projects/Plan.md", "Tasks#Done", "prepend", "- first")
    assert "### Done\n- first\n- zero\n" in read(vault, "Projects/Plan.md").decode()


def test_section_errors_list_candidates_with_line_numbers(vault, writer):
    writer.write("Week.md", "# W1\n## Notes\na\n# W2\n## Notes\nb\n```\n## Notes\n```\n")
    with pytest.raises(SectionError) as info:
        writer.edit_section("Week.md", "Notes", "append", "x")
    assert info.value.code == "ambiguous_heading"
    assert (
        "line 2: ## Notes (under # W1)" in info.value.message and "line 5: ## Notes (under # W2)" in info.value.message
    )
    assert len(info.value.candidates) == 2  # the fenced '## Notes' is not a heading
    writer.edit_section("Week.md", "W2#Notes", "append", "c")
    assert read(vault, "Week.md").decode() == "# W1\n## Notes\na\n# W2\n## Notes\nb\n```\n## Notes\n```\nc\n"
    with pytest.raises(SectionError) as info:
        writer.edit_section("Week.md", "Missing", "append", "x")
    assert info.value.code == "heading_not_found" and "line 1: # W1" in info.value.message
    with pytest.raises(SectionError):
        writer.edit_section("Week.md", "W1", "upsert", "x")
    writer.write("Flat.md", "no headings here\n")
    with pytest.raises(SectionError) as info:
        writer.edit_section("Flat.md", "Itinerary", "append", "x")
    # nothing to choose from: the error does not ask to use "one of these"
    assert "has no headings" in info.value.message and "one of these" not in info.value.message


def test_sections_module_details():
    text = "---\n# not: a heading\n---\n#NoSpace\n# Real #\n  ## Indented\n~~~\n# fenced\n~~~\n## Last"
    assert [(h.level, h.text, h.line) for h in headings(text)] == [(1, "Real", 5), (2, "Indented", 6), (2, "Last", 10)]
    out, _ = edit_section(text, "Last", "append", "tail")
    assert out.endswith("## Last\ntail\n")
    crlf = "# A\r\nx\r\n# B\r\ny\r\n"
    assert edit_section(crlf, "A", "replace", "1\n2")[0] == "# A\r\n1\r\n2\r\n# B\r\ny\r\n"
    assert find_heading("# Café Notes\n", "café   notes").text == "Café Notes"


# --- frontmatter through the writer ---------------------------------------------------------


def test_update_frontmatter_is_surgical_on_disk(vault, writer):
    result = writer.update_frontmatter(
        "Projects/Plan.md", set={"status": "stable", "reviewed": "2026-02-01"}, delete=["tags"], actor="agent:bot"
    )
    assert read(vault, "Projects/Plan.md").decode() == NOTE.replace("status: draft", "status: stable").replace(
        "tags: [a]\n", "reviewed: 2026-02-01\n"
    )
    assert result.diff_summary.startswith("frontmatter: status")
    assert vault.snapshot.get("Projects/Plan.md").okf_status == "stable"
    again = writer.update_frontmatter("Projects/Plan.md", set={"status": "stable"})
    assert not again.changed


def test_update_frontmatter_refuses_broken_yaml_without_touching_the_note(vault, writer):
    broken = b"---\ntitle: [unclosed\n---\nbody\n"
    (Path(vault.root) / "Broken.md").write_bytes(broken)
    with pytest.raises(FrontmatterEditError) as info:
        writer.update_frontmatter("Broken.md", set={"status": "draft"})
    assert info.value.code == "invalid_frontmatter"
    assert read(vault, "Broken.md") == broken


def test_agents_cannot_attest_human_review_by_any_route(vault, writer):
    before = read(vault, "Projects/Plan.md")
    attempts = [
        lambda: writer.update_frontmatter(
            "Projects/Plan.md", append={"verified": {"by": "human:ana"}}, actor="agent:a"
        ),
        lambda: writer.update_frontmatter("Projects/Plan.md", set={"verified": [{"by": "human:ana"}]}, actor="agent:a"),
        lambda: writer.update_frontmatter("Projects/Plan.md", set={"verified": {"by": "human:x"}}, actor="agent:a"),
        lambda: writer.edit(
            "Projects/Plan.md", "tags: [a]\n", "tags: [a]\nverified: {by: 'human:z'}\n", actor="agent:a"
        ),
        lambda: writer.write(
            "Projects/Plan.md", "---\nverified:\n  - by: human:q\n---\n", overwrite=True, actor="agent:a"
        ),
    ]
    for attempt in attempts:
        with pytest.raises(WriteRefused) as info:
            attempt()
        assert info.value.code == "human_attestation_refused"
    with pytest.raises(WriteRefused):
        writer.write("Fresh.md", "---\nverified: {by: 'human:q'}\n---\n", actor="agent:a")
    assert read(vault, "Projects/Plan.md") == before and not (Path(vault.root) / "Fresh.md").exists()
    writer.update_frontmatter("Projects/Plan.md", append={"verified": {"by": "agent:a"}}, actor="agent:a")
    writer.update_frontmatter("Projects/Plan.md", append={"verified": {"by": "human:ana"}}, actor="human")
    assert vault.snapshot.get("Projects/Plan.md").okf_trust == "human-reviewed"


def test_an_agent_cannot_alter_a_persons_review_but_may_leave_it_and_edit_around_it(vault, writer):
    """Only added `by: human:` entries were refused: an agent moved a person's review to another date
    (the note stayed human-reviewed, dated as the agent chose) or changed its note."""
    writer.update_frontmatter(
        "Projects/Plan.md", append={"verified": {"by": "human:ana", "at": "2024-01-01"}}, actor="human"
    )
    before = read(vault, "Projects/Plan.md")
    altered = [
        lambda: writer.edit("Projects/Plan.md", "2024-01-01", "2031-01-01", actor="agent:a"),
        lambda: writer.edit("Projects/Plan.md", "at: 2024-01-01", "at: 2024-01-01\n    note: fine", actor="agent:a"),
        lambda: writer.update_frontmatter(
            "Projects/Plan.md", set={"verified": [{"by": "human:ana", "at": "2031-01-01"}]}, actor="agent:a"
        ),
    ]
    for attempt in altered:
        with pytest.raises(WriteRefused) as info:
            attempt()
        assert info.value.code == "human_attestation_refused" and "human:ana" in info.value.message
    assert read(vault, "Projects/Plan.md") == before
    # the person's entry left as it is: the agent may still edit the note and add its own check
    writer.update_frontmatter("Projects/Plan.md", append={"verified": {"by": "agent:a"}}, actor="agent:a")
    writer.update_frontmatter("Projects/Plan.md", set={"status": "draft"}, actor="agent:a")


def test_an_agent_cannot_make_the_vault_a_bundle_or_unmake_it(tmp_path: Path) -> None:
    """okf_version in the root index.md decides how every note is triaged; on a bundle the Trust tab
    follows `verified:` keys instead of the journal: one agent write hid every unreviewed change."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "index.md").write_text("# Home\n")
    (root / "Other.md").write_text("---\nokf_version: '0.1'\n---\n# Other\n")
    vault = Vault(root)
    vault.load()
    writer = Writer(vault)
    try:
        refused = [
            lambda: writer.write("index.md", "---\nokf_version: '0.1'\n---\n# Home\n", overwrite=True, actor="agent:a"),
            lambda: writer.update_frontmatter("index.md", set={"okf_version": 1}, actor="agent:a"),
            # a date in the YAML, which the index reads as the string it is in JSON
            lambda: writer.write("index.md", "---\nokf_version: 2024-01-01\n---\n", overwrite=True, actor="agent:a"),
            lambda: writer.update_frontmatter("index.md", set={"okf_version": "2024-01-01"}, actor="agent:a"),
        ]
        for attempt in refused:
            with pytest.raises(WriteRefused) as info:
                attempt()
            assert info.value.code == "bundle_switch_refused"
        writer.delete("index.md", actor="agent:a")  # no bundle either way: allowed
        with pytest.raises(WriteRefused) as info:
            writer.rename("Other.md", "index.md", actor="agent:a")  # a note that declares it, moved to the root index
        assert info.value.code == "bundle_switch_refused"
        assert not vault.snapshot.is_bundle
        writer.rename("Other.md", "index.md", actor="human")  # the person may
        assert vault.snapshot.is_bundle
        writer.edit("index.md", "# Other", "# Home of the bundle", actor="agent:a")  # okf_version kept: allowed
        deep = "x: " + "[" * 70 + "1" + "]" * 70 + "\n"  # frontmatter the index gives up on: no okf_version there
        for attempt in (
            lambda: writer.edit("index.md", "okf_version: '0.1'\n", "okf_version: '0.1'\n" + deep, actor="agent:a"),
            lambda: writer.update_frontmatter("index.md", delete=["okf_version"], actor="agent:a"),
            lambda: writer.rename("index.md", "Home.md", actor="agent:a"),
            lambda: writer.delete("index.md", actor="agent:a"),
        ):
            with pytest.raises(WriteRefused) as info:
                attempt()
            assert info.value.code == "bundle_switch_refused"
        assert vault.snapshot.is_bundle and "okf_version" in (root / "index.md").read_text()
    finally:
        vault.stop()


# --- delete -------------------------------------------------------------------------------


def test_delete_moves_to_trash_with_suffix_on_collision(vault, writer):
    result = writer.delete("Projects/Plan.md")
    assert result.moved_to == ".trash/Plan.md" and not (Path(vault.root) / "Projects/Plan.md").exists()
    assert (Path(vault.root) / ".trash/Plan.md").read_text() == NOTE
    assert vault.snapshot.get("Projects/Plan.md") is None
    assert "1 note still links to Projects/Plan.md" in result.warnings[0]
    writer.write("Projects/Plan.md", "second")
    assert writer.delete("Projects/Plan.md").moved_to == ".trash/Plan 1.md"
    assert (Path(vault.root) / ".trash/Plan 1.md").read_text() == "second"


def test_delete_folder_to_trash_and_index_follows(vault, writer):
    writer.delete("Projects")
    assert (Path(vault.root) / ".trash/Projects/Plan.md").exists()
    assert not any(p.startswith("Projects") for p in vault.snapshot.paths)


def test_permanent_delete_needs_the_exact_path_repeated(vault, writer):
    with pytest.raises(WriteRefused) as info:
        writer.delete("Other.md", permanent=True)
    assert info.value.code == "confirmation_required"
    with pytest.raises(WriteRefused):
        writer.delete("Other.md", permanent=True, confirm_path="./Other.md")
    assert (Path(vault.root) / "Other.md").exists()
    writer.delete("Other.md", permanent=True, confirm_path="Other.md")
    assert not (Path(vault.root) / "Other.md").exists() and not (Path(vault.root) / ".trash").exists()
    with pytest.raises(WriteRefused) as info:
        writer.delete("Projects", permanent=True, confirm_path="Projects")
    assert info.value.code == "folder_not_empty"
    with pytest.raises(NotFoundError):
        writer.delete("Other.md")


def test_delete_checks_if_match(vault, writer):
    with pytest.raises(ConflictError):
        writer.delete("Other.md", if_match="0" * 64)
    writer.delete("Other.md", if_match=tag(vault, "Other.md"))


def test_trash_that_is_a_symlink_is_not_used(vault, writer, tmp_path):
    out = tmp_path / "trashout"
    out.mkdir()
    os.symlink(out, Path(vault.root) / ".trash")
    with pytest.raises(WriteRefused) as info:
        writer.delete("Other.md")
    assert info.value.code == "trash_unusable" and list(out.iterdir()) == []


# --- concurrency ----------------------------------------------------------------------------


def test_ten_concurrent_writers_exactly_one_wins_each_round_and_nothing_is_lost(vault, tmp_path):
    writers = [Writer(vault) for _ in range(10)]  # separate Writers share the per-note locks
    writers[0].write("Race.md", "---\nround: 0\n---\n")
    rounds = 15
    barrier = threading.Barrier(10)
    wins: list[list[int]] = [[] for _ in range(rounds)]
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            for r in range(rounds):
                barrier.wait()
                etag = etag_of(read(vault, "Race.md"))
                barrier.wait()
                body = read(vault, "Race.md").decode()
                try:
                    writers[i].write("Race.md", body + f"r{r} w{i}\n", if_match=etag, actor=f"agent:{i}")
                except ConflictError as exc:
                    assert exc.current_etag == etag_of(read(vault, "Race.md"))
                else:
                    wins[r].append(i)
                facts = parse_note(read(vault, "Race.md"), "Race")
                assert facts.frontmatter_error is None
        except BaseException as exc:  # surfaced below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert all(len(w) == 1 for w in wins), wins
    final = read(vault, "Race.md").decode()
    for r, (winner,) in enumerate(wins):
        assert f"r{r} w{winner}\n" in final  # every acknowledged write is on disk
    assert final.count("\n") == 3 + rounds
    assert no_temp_files(vault.root)


def test_concurrent_edits_without_if_match_serialise_and_lose_nothing(vault):
    writer = Writer(vault)
    writer.write("Log.md", "# Log\n## Entries\n")

    def append(i: int) -> None:
        for j in range(10):
            writer.edit_section("Log.md", "Entries", "append", f"- {i}.{j}", actor=f"agent:{i}")

    threads = [threading.Thread(target=append, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    lines = read(vault, "Log.md").decode().splitlines()
    assert sorted(lines[2:]) == sorted(f"- {i}.{j}" for i in range(8) for j in range(10))


def test_an_outside_save_during_a_write_is_a_conflict_not_an_overwrite(vault):
    path = Path(vault.root) / "Projects" / "Plan.md"

    def outside_editor(stage: str) -> None:
        if stage == "temp_written":
            path.write_text("saved by another editor\n")

    writer = Writer(vault, fault_hook=outside_editor)
    with pytest.raises(ConflictError) as info:
        writer.edit("Projects/Plan.md", "Intro.", "Changed.")
    assert path.read_text() == "saved by another editor\n"
    assert info.value.current_etag == etag_of(b"saved by another editor\n")
    assert no_temp_files(vault.root)


def test_write_result_as_dict_is_json_ready(writer):
    import json

    data = writer.write("J.md", "x").as_dict()
    assert json.loads(json.dumps(data))["path"] == "J.md" and data["created"] is True


@pytest.mark.parametrize("name", ["Foo]] x", "Foo #x", "Foo|x", "Foo[[x", "Foo^x", "C# notes"])
def test_an_agent_cannot_name_a_note_so_that_links_no_longer_reach_it(vault, writer, name) -> None:
    """A rename rewrites every link to the note: to `Foo #x` they became `[[Foo #x]]`, a heading of
    Foo, and the backlinks were lost while the rename said it rewrote them. The person may still use
    the name, but not rename into it while a note links there, unless the links are left as they are."""
    before = read(vault, "Other.md")
    for attempt in (
        lambda: writer.rename("Projects/Plan.md", f"Projects/{name}.md", actor="agent:a"),
        lambda: writer.write(f"{name}/new.md", "# new\n", actor="agent:a"),
        lambda: writer.write(f"{name}.md", "# new\n", actor="agent:a"),
    ):
        with pytest.raises(VaultError) as info:
            attempt()
        assert info.value.code == "unsafe_name" and "links cannot reach" in info.value.message
    assert read(vault, "Other.md") == before and (Path(vault.root) / "Projects/Plan.md").exists()
    with pytest.raises(VaultError) as info:
        writer.rename("Projects/Plan.md", f"Projects/{name}.md", actor="human")
    assert info.value.code == "unlinkable_name"
    writer.rename("Projects/Plan.md", f"Projects/{name}.md", actor="human", update_links=False)
    assert read(vault, "Other.md") == before


def test_a_line_break_turned_into_a_separator_counts_as_changed_lines() -> None:
    """The agent's answer counts lines as Markdown (and the person's diff) does: U+2028 or U+001C
    in place of a line break runs two lines into one, which str.splitlines would call no change."""
    from vaultwatch.core.edit.writes import line_summary

    before = "- [x] Alice: approved\n- [ ] Mallory: never pay\n"
    for separator in ("\u2028", "\x1c", "\x0b"):
        assert line_summary(before, before.replace("\n", separator, 1)) == "+1 -2 lines"


def test_a_created_notes_summary_counts_its_lines_in_words(writer: Writer) -> None:
    assert writer.write("One.md", "# One\n").diff_summary == "created (1 line)"  # not "1 lines"
    assert writer.write("Two.md", "# Two\nbody\n").diff_summary == "created (2 lines)"
