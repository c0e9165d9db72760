"""The scanner on real files: hidden paths, ignore rules, symlinks, FIFOs and unreadable files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.core.index.conftest import START_ERRORS
from vaultwatch.core.errors import VaultError
from vaultwatch.core.index import parsepool
from vaultwatch.core.index import scan as scan_mod
from vaultwatch.core.index.ignore import IgnoreRules
from vaultwatch.core.index.parsepool import scan
from vaultwatch.core.index.scan import DEFAULT_ATTACHMENT_EXTS, ScanConfig, parse_attachment_exts, walk
from vaultwatch.core.query.listing import Query
from vaultwatch.core.vault import Vault


def indexed(vault: Vault) -> list[str]:
    return list(vault.snapshot.paths)


def skipped(vault: Vault) -> dict[str, str]:
    return {s.path: s.reason for s in vault.snapshot.skipped}


HIDDEN = {
    ".hidden.md": "# h\n",
    ".obsidian/app.json": "{}",
    ".obsidian/plugins/p/notes.md": "# h\n",
    ".git/config": "[core]\n",
    ".git/notes.md": "# h\n",
    ".trash/deleted.md": "# h\n",
    "a/.hidden.md": "# h\n",
    "a/b/c/.deep-hidden.md": "# h\n",
    "a/.secret/plan.md": "# h\n",
    "a/.secret/sub/deeper.md": "# h\n",
    "a/b/.cache/x.png": b"\x89PNG",
    "a/visible.md": "# v\n",
    "a/b/c/visible.md": "# v\n",
    "a/b/visible.png": b"\x89PNG",
    "root.md": "# r\n",
    "a.b/dotted-folder-name.md": "# dots inside a name are fine\n",
}


def test_hidden_files_and_folders_are_never_indexed_at_any_depth(make_vault, open_vault) -> None:
    vault = open_vault(make_vault(HIDDEN), attachment_exts="*")
    assert indexed(vault) == [
        "a",
        "a.b",
        "a.b/dotted-folder-name.md",
        "a/b",
        "a/b/c",
        "a/b/c/visible.md",
        "a/b/visible.png",
        "a/visible.md",
        "root.md",
    ]
    assert vault.snapshot.skipped == ()  # hidden paths are not even "skipped": they do not exist for us
    all_rows = vault.list(Query(include_attachments=True, include_folders=True, pattern="**"))
    assert not [e.path for e in all_rows.entries if "/." in "/" + e.path]


IGNORE_FILES = {
    ".vaultwatchignore": (
        "# comments and blank lines are fine\n\n"
        "drafts/\n"
        "*.tmp.md\n"
        "!keep.tmp.md\n"
        "/rootonly.md\n"
        "**/cache/\n"
        "Exact Name.md\n"
    ),
    ".obsidian/app.json": json.dumps(
        {
            "userIgnoreFilters": ["Archive/Ignored/", "Templates", "/^Temp[0-9]+\\.md$/", "/\\(draft\\)/", 7, ""],
        }
    ),
    "drafts/a.md": "# x\n",
    "notes/drafts/b.md": "# x\n",  # "drafts/" matches at any depth
    "x.tmp.md": "# x\n",
    "notes/y.tmp.md": "# x\n",
    "keep.tmp.md": "# kept by negation\n",
    "rootonly.md": "# x\n",
    "notes/rootonly.md": "# anchored pattern: kept below the root\n",
    "a/b/cache/c.md": "# x\n",
    "Exact Name.md": "# x\n",
    "notes/Exact Name.md": "# x\n",  # a name without a slash matches at any depth
    "Archive/Ignored/z.md": "# x\n",
    "Archive/kept.md": "# kept\n",
    "Templates/t.md": "# prefix match\n",
    "TemplatesOld/t.md": "# Obsidian's filters are plain prefixes\n",
    "Temp1.md": "# regex\n",
    "Temp1.md.bak.md": "# regex anchored with $: kept\n",
    "notes/Temp1.md": "# regex anchored with ^: kept\n",
    "Plan (draft).md": "# regex anywhere\n",
    "normal.md": "# kept\n",
}


def test_vaultwatchignore_and_obsidian_filters_exclude(make_vault, open_vault) -> None:
    vault = open_vault(make_vault(IGNORE_FILES))
    notes = [e.path for e in vault.list(Query()).entries]
    assert notes == [
        "Archive/kept.md",
        "Temp1.md.bak.md",
        "keep.tmp.md",
        "normal.md",
        "notes/Temp1.md",
        "notes/rootonly.md",
    ]
    folders = [e.path for e in vault.list(Query(include_folders=True, include_notes=False)).entries]
    assert "drafts" not in folders and "notes/drafts" not in folders and "Archive/Ignored" not in folders
    assert "a/b/cache" not in folders and "Templates" not in folders
    assert vault.snapshot.skipped == ()


def test_bad_ignore_configuration_is_reported_not_fatal(make_vault, open_vault) -> None:
    root = make_vault(
        {
            ".obsidian/app.json": json.dumps({"userIgnoreFilters": ["/([unclosed/", "Old/"]}),
            "Old/x.md": "# x\n",
            "([unclosed.md": "# kept\n",
        }
    )
    vault = open_vault(root)
    assert indexed(vault) == ["([unclosed.md"]
    assert any("regex" in p for p in vault.config.ignore.problems)

    root = make_vault({".obsidian/app.json": "{not json", "a.md": "# a\n"})
    vault = open_vault(root)
    assert indexed(vault) == ["a.md"]
    assert any("app.json" in p for p in vault.config.ignore.problems)

    root = make_vault({".obsidian/app.json": '["a list, not an object"]', "a.md": "# a\n"})
    assert indexed(open_vault(root)) == ["a.md"]


def test_ignore_rules_unit() -> None:
    rules = IgnoreRules()
    assert rules.empty and not rules.excluded("anything.md")


def test_symlinks_broken_loops_fifos_and_escapes(tmp_path: Path, make_vault, open_vault) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# secret\n")
    (outside / "sub").mkdir()
    root = make_vault(
        {
            "real/note.md": "---\ntitle: real note\n---\n",
            "real/deep/d.md": "# deep\n",
            ".hidden/h.md": "# hidden\n",
            "plain.md": "# plain\n",
        }
    )
    os.symlink("real/note.md", root / "linked-note.md")  # inside: included
    os.symlink("../real/deep/d.md", root / "real" / "link-to-deep.md")  # inside, relative: included
    os.symlink(outside / "secret.md", root / "escape.md")  # escapes: not followed
    os.symlink(outside, root / "escape-dir")  # escapes: not followed
    os.symlink("../../outside/secret.md", root / "real" / "escape-rel.md")
    os.symlink("missing.md", root / "broken.md")  # broken
    os.symlink("loop-b.md", root / "loop-a.md")  # loop
    os.symlink("loop-a.md", root / "loop-b.md")
    os.symlink(".", root / "real" / "self")  # a folder loop
    os.symlink("..", root / "real" / "deep" / "up")  # back to an ancestor
    os.symlink(".hidden/h.md", root / "into-hidden.md")  # a link into a hidden folder
    os.symlink(".", root / "root-again")  # the vault root itself
    os.mkfifo(root / "pipe.md")  # would block a naive open()
    os.mkfifo(root / "real" / "pipe.png")
    os.symlink("pipe.md", root / "link-to-pipe.md")

    vault = open_vault(root, attachment_exts="*")
    assert [e.path for e in vault.list(Query()).entries] == [
        "linked-note.md",
        "plain.md",
        "real/deep/d.md",
        "real/link-to-deep.md",
        "real/note.md",
    ]
    assert vault.entry("linked-note.md").title == "real note"
    reasons = skipped(vault)
    assert reasons["escape.md"] == "symlink escapes vault"
    assert reasons["escape-dir"] == "symlink escapes vault"
    assert reasons["real/escape-rel.md"] == "symlink escapes vault"
    assert reasons["broken.md"] == "broken symlink"
    assert reasons["loop-a.md"] == "symlink loop" and reasons["loop-b.md"] == "symlink loop"
    assert reasons["pipe.md"] == "not a regular file"
    assert reasons["real/pipe.png"] == "not a regular file"
    assert reasons["link-to-pipe.md"] == "not a regular file"
    assert "hidden" in reasons["into-hidden.md"]
    assert "vault root" in reasons["root-again"]
    assert "already listed" in reasons["real/self"] and "already listed" in reasons["real/deep/up"]
    assert vault.stats()["skipped"] == len(reasons) == 13
    assert not any(p.startswith(("escape", ".hidden")) or "secret" in p for p in vault.snapshot.by_path)


@pytest.mark.parametrize("link_name", ["A-link", "zz-link", "real-link", "Real"])
def test_a_symlinked_folder_never_hides_the_real_one(make_vault, open_vault, link_name: str) -> None:
    """Whatever the names (and so the walk order), the real folder is listed at its real path."""
    root = make_vault({"real/x.md": "# x\n", "real/sub/y.md": "# y\n"})
    os.symlink("real", root / link_name)
    vault = open_vault(root)
    assert [e.path for e in vault.list(Query()).entries] == ["real/sub/y.md", "real/x.md"]
    assert "already listed" in skipped(vault)[link_name]


def test_a_symlinked_folder_to_an_unindexed_place_is_walked(make_vault, open_vault) -> None:
    """A link into an ignored folder is the only way to those notes: it is followed."""
    root = make_vault({".vaultwatchignore": "store/\n", "store/deep/n.md": "# n\n"})
    os.symlink("store/deep", root / "Notes")
    vault = open_vault(root)
    assert [e.path for e in vault.list(Query()).entries] == ["Notes/n.md"]


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root reads files whatever their mode, so chmod 000 cannot make a file unreadable here"
)
def test_unreadable_files_and_folders_are_skipped(make_vault, open_vault) -> None:
    root = make_vault({"ok.md": "# ok\n", "locked.md": "# locked\n", "closed/x.md": "# x\n"})
    os.chmod(root / "locked.md", 0)
    os.chmod(root / "closed", 0)
    try:
        vault = open_vault(root)
        assert [e.path for e in vault.list(Query()).entries] == ["ok.md"]
        reasons = skipped(vault)
        assert reasons["locked.md"].startswith("unreadable")
        assert reasons["closed"].startswith("folder unreadable")
    finally:
        os.chmod(root / "closed", 0o755)
        os.chmod(root / "locked.md", 0o644)


def test_file_deleted_between_walk_and_read_is_skipped(make_vault) -> None:
    root = make_vault({"a.md": "# a\n", "gone.md": "# gone\n"})
    config = ScanConfig()
    facts = [f for f in walk(os.path.realpath(root), config) if isinstance(f, scan_mod.FileFact)]
    os.unlink(root / "gone.md")
    results = {f.rel: scan_mod.entry_for(f) for f in facts}
    assert results["a.md"].title == "a"
    assert isinstance(results["gone.md"], scan_mod.Skipped)
    assert results["gone.md"].reason.startswith("unreadable")


def test_symlink_removed_while_the_walk_resolves_it_is_skipped(make_vault, link_remover) -> None:
    """The walk stat()s a link, then realpath() readlink()s it: a link removed in between is
    skipped with a reason; the walk goes on."""
    root = make_vault({"real.md": "# real\n"})
    os.symlink(root / "real.md", root / "link.md")
    link_remover.names = {"link.md"}
    found = list(walk(os.path.realpath(root), ScanConfig()))
    assert [f.rel for f in found if isinstance(f, scan_mod.FileFact)] == ["real.md"]
    assert [(s.path, s.reason) for s in found if isinstance(s, scan_mod.Skipped)] == [
        ("link.md", "changed while being scanned")
    ]
    assert link_remover.removed == 1


def test_a_note_that_grew_or_shrank_since_the_walk_is_read_whole(make_vault) -> None:
    root = make_vault({"grow.md": "# g\n", "shrink.md": "# s\n" + "x" * 5000, "big.md": "# b\n"})
    facts = {f.rel: f for f in walk(os.path.realpath(root), ScanConfig()) if isinstance(f, scan_mod.FileFact)}
    (root / "grow.md").write_text(
        "---\ntitle: grown\n---\n" + "[[Target]]\n" * 300000
    )  # ~3 MB, read past the first chunk
    (root / "shrink.md").write_text("# s\n")
    grown = scan_mod.entry_for(facts["grow.md"])
    assert grown.title == "grown" and grown.size_bytes == (root / "grow.md").stat().st_size
    assert len(grown.links) == 10_000 and grown.links[0].target == "Target"  # the per-note cap
    shrunk = scan_mod.entry_for(facts["shrink.md"])
    assert shrunk.size_bytes == 4 and shrunk.content_chars == 4


def test_a_note_swapped_for_a_fifo_after_the_walk_does_not_hang_the_scan(make_vault) -> None:
    root = make_vault({"a.md": "# a\n"})
    [fact] = [f for f in walk(os.path.realpath(root), ScanConfig()) if isinstance(f, scan_mod.FileFact)]
    os.unlink(root / "a.md")
    os.mkfifo(root / "a.md")
    out = scan_mod.entry_for(fact)  # no writer on the FIFO: a blocking open would never return
    assert out.path == "a.md" and isinstance(out, scan_mod.Skipped) and "regular file" in out.reason, out


def test_entries_made_by_make_entry_are_ordinary_frozen_entries() -> None:
    from dataclasses import FrozenInstanceError

    from vaultwatch.core.model import Entry, make_entry

    fast = make_entry("a/b.md", "note", 3, 4, "B", 5, {"k": 1}, ("t",), (), 7, None, False, None, "draft")
    slow = Entry("a/b.md", "note", 3, 4, "B", 5, {"k": 1}, ("t",), (), 7, None, False, None, "draft")
    assert type(fast) is Entry and fast == slow and hash(fast.path) == hash(slow.path)
    assert make_entry("x.md", "note", 0, 0, "x") == Entry("x.md", "note", 0, 0, "x")
    with pytest.raises(FrozenInstanceError):
        fast.title = "changed"  # type: ignore[misc]
    import pickle

    assert pickle.loads(pickle.dumps(fast)) == slow


# --- attachments allowlist ------------------------------------------------------------------------


def test_default_allowlist_has_43_extensions() -> None:
    assert len(DEFAULT_ATTACHMENT_EXTS) == 43
    # every format of Obsidian's help page "Accepted file formats" but Markdown itself
    assert (
        set("base canvas avif bmp gif jpeg jpg png svg webp flac m4a mp3 ogg wav webm 3gp mkv mov mp4 ogv pdf".split())
        <= DEFAULT_ATTACHMENT_EXTS
    )
    assert {"pdf", "png", "jpg", "jpeg", "svg", "docx", "csv", "mp3", "mp4", "zip"} <= DEFAULT_ATTACHMENT_EXTS
    assert "md" not in DEFAULT_ATTACHMENT_EXTS
    assert all(e == e.lower() and not e.startswith(".") for e in DEFAULT_ATTACHMENT_EXTS)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, DEFAULT_ATTACHMENT_EXTS),
        ("pdf,PNG", frozenset({"pdf", "png"})),
        (" pdf , .png ,", frozenset({"pdf", "png"})),
        (["PDF", ".Jpg"], frozenset({"pdf", "jpg"})),
        ("*", None),
        ("pdf,*", None),
        ("", frozenset()),
    ],
)
def test_parse_attachment_exts(spec, expected) -> None:
    assert parse_attachment_exts(spec) == expected


ATTACHMENTS = {
    "note.md": "# n\n",
    "UPPER.MD": "# an upper-case .MD is a note too\n",
    "img.PNG": b"\x89PNG",
    "photo.JpEg": b"\xff\xd8",
    "doc.pdf": b"%PDF",
    "data.xyz": b"?",
    "noext": b"?",
    "archive.tar.gz": b"\x1f\x8b",
    "sub/sheet.csv": "a,b\n",
}


@pytest.mark.parametrize(
    ("exts", "expected"),
    [
        (
            None,
            {
                "archive.tar.gz": "application/gzip",
                "doc.pdf": "application/pdf",
                "img.PNG": "image/png",
                "photo.JpEg": "image/jpeg",
                "sub/sheet.csv": "text/csv",
            },
        ),
        ("pdf", {"doc.pdf": "application/pdf"}),
        ("PNG,xyz", {"img.PNG": "image/png", "data.xyz": "application/octet-stream"}),
        (
            "*",
            {
                "archive.tar.gz": "application/gzip",
                "data.xyz": "application/octet-stream",
                "doc.pdf": "application/pdf",
                "img.PNG": "image/png",
                "noext": "application/octet-stream",
                "photo.JpEg": "image/jpeg",
                "sub/sheet.csv": "text/csv",
            },
        ),
    ],
)
def test_attachment_allowlist_is_case_insensitive_and_configurable(make_vault, open_vault, exts, expected) -> None:
    vault = open_vault(make_vault(ATTACHMENTS), attachment_exts=exts)
    got = {e.path: e.mime_type for e in vault.list(Query(include_attachments=True, include_notes=False)).entries}
    assert got == expected
    notes = [e.path for e in vault.list(Query()).entries]
    assert notes == ["UPPER.MD", "note.md"]
    assert vault.stats()["attachments"] == len(expected)
    for e in vault.list(Query(include_attachments=True, include_notes=False)).entries:
        assert e.kind == "attachment" and e.size_bytes == len(ATTACHMENTS[e.path])


# --- the walk as a whole --------------------------------------------------------------------------


def test_scan_is_deterministic_and_counts_folders(make_vault) -> None:
    root = os.path.realpath(make_vault({f"f{i % 7}/n{i}.md": f"# {i}\n" for i in range(60)} | {"empty/": ""}))
    first = scan(root, ScanConfig(), workers=1)
    second = scan(root, ScanConfig(), workers=1)
    assert sorted(e.path for e in first[0]) == sorted(e.path for e in second[0])
    kinds = [e.kind for e in first[0]]
    assert kinds.count("note") == 60 and kinds.count("folder") == 8


def test_parallel_scan_matches_sequential(make_vault, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"d{i % 9}/sub{i % 3}/n{i}.md": f"---\nstatus: draft\ntags: [t{i % 5}]\n---\n# N{i}\n" for i in range(300)}
    files |= {"broken.md": "---\na: [\n---\n", "bad.md": b"\xff\xfe", "p/a.png": b"\x89PNG"}
    root = os.path.realpath(make_vault(files))
    os.symlink("missing", os.path.join(root, "broken-link.md"))
    sequential = scan(root, ScanConfig(), workers=1)
    monkeypatch.setattr(parsepool, "PARALLEL_MIN_FILES", 20)  # exercise the process pool on a small vault
    monkeypatch.setattr(parsepool, "CHUNK", 16)
    monkeypatch.setattr(parsepool, "WORKERS_CHUNK", 16)
    parallel = scan(root, ScanConfig(), workers=2)
    assert sorted(parallel[0], key=lambda e: e.path) == sorted(sequential[0], key=lambda e: e.path)
    assert sorted(parallel[1], key=lambda s: s.path) == sorted(sequential[1], key=lambda s: s.path)
    assert len([e for e in parallel[0] if e.kind == "note"]) == 302


@START_ERRORS
def test_a_cold_load_whose_process_start_fails_parses_here(
    make_vault, open_vault, monkeypatch, failing_starts, start_error
) -> None:
    files = {
        f"d{i % 9}/n{i}.md": f"---\nstatus: draft\ntags: [t{i % 5}]\n---\n# N{i}\nsee [[n{(i + 1) % 300}]]\n"
        for i in range(300)
    }
    root = make_vault(files | {"broken.md": "---\na: [\n---\n", "p/a.png": b"\x89PNG"})
    expected = open_vault(root, cache=False)
    monkeypatch.setattr(parsepool, "PARALLEL_MIN_FILES", 20)  # the process pool on a small vault
    monkeypatch.setattr(parsepool, "CHUNK", 16)
    monkeypatch.setattr(parsepool, "WORKERS_CHUNK", 16)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    tried = failing_starts(start_error)
    vault = open_vault(root, cache=False)
    assert tried  # the pool was tried, and its start failed
    assert vault.snapshot.note_count == 301
    assert list(vault.snapshot.entries) == list(expected.snapshot.entries)  # every field of every entry
    assert skipped(vault) == skipped(expected)
    assert [b.source for b in vault.links("d1/n1.md").backlinks] == ["d0/n0.md"]


def test_vault_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="not a directory"):
        Vault(tmp_path / "missing")
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(VaultError, match="not a directory"):
        Vault(tmp_path / "file.md")


def test_empty_vault(tmp_path: Path, open_vault) -> None:
    vault = open_vault(tmp_path)
    assert vault.list(Query(include_folders=True, include_attachments=True)).entries == ()
    assert vault.stats()["notes"] == 0
    assert vault.snapshot.loaded


def test_vault_reached_through_a_symlink(tmp_path: Path, make_vault, open_vault) -> None:
    root = make_vault({"a.md": "# a\n", "sub/b.md": "# b\n"})
    os.symlink(root, tmp_path / "alias")
    vault = open_vault(tmp_path / "alias")
    assert indexed(vault) == ["a.md", "sub", "sub/b.md"]
    assert vault.root_real == os.path.realpath(root)


def test_every_default_extension_has_a_fixed_mime_type() -> None:
    for ext in DEFAULT_ATTACHMENT_EXTS:
        assert scan_mod.mime_type(f"file.{ext}") != "application/octet-stream", ext
        assert scan_mod.mime_type(f"FILE.{ext.upper()}") == scan_mod.mime_type(f"file.{ext}")
    assert scan_mod.mime_type("x.tar.gz") == "application/gzip"
    assert scan_mod.mime_type("x.xyz") == "application/octet-stream"  # never the machine's mime.types
    assert scan_mod.mime_type("noext") == "application/octet-stream"


def test_names_the_resolver_would_refuse_are_skipped_not_listed(make_vault, open_vault) -> None:
    """Everything listed can be passed back to a read: odd names are skipped with a reason."""
    from vaultwatch.core.disk.paths import normalize

    root = make_vault(
        {
            "ok.md": "# ok\n",
            "~tilde.md": "# a leading tilde is an ordinary name\n",
            "Sub/C:fine.md": "# a drive-like name below the root is fine\n",
            "\u200frtl.md": "# RTL mark\n",
            "emoji 🎉.md": "# emoji\n",
            "C:root.md": "# looks absolute\n",
            "back\\slash.md": "# backslash\n",
            "tab\there.md": "# control character\n",
            "esc\x1b[31mred.md": "# terminal escape\n",
            "bad\nfolder/inside.md": "# the whole folder is skipped\n",
            " /blank-folder.md": "# blank folder name\n",
        }
    )
    vault = open_vault(root)
    listed = list(vault.snapshot.paths)
    assert listed == ["Sub", "Sub/C:fine.md", "emoji 🎉.md", "ok.md", "~tilde.md", "\u200frtl.md"]
    for path in listed:
        assert normalize(path) == path
        assert vault.entry(path).path == path
    reasons = skipped(vault)
    assert set(reasons) == {"C:root.md", "back\\slash.md", "tab\there.md", "esc\x1b[31mred.md", "bad\nfolder", " "}
    assert all(r.startswith("cannot be addressed") for r in reasons.values())
    # the single-path refresh (watcher, writes) applies the same rule
    (root / "new\tname.md").write_text("# x\n")
    vault.refresh_paths(["new\tname.md"])
    assert "new\tname.md" not in vault.snapshot.by_path
    assert skipped(vault)["new\tname.md"].startswith("cannot be addressed")


def test_overlong_paths_are_skipped(make_vault, open_vault) -> None:
    deep = "/".join(["d" * 60] * 17)  # 17 * 61 = 1037 characters with the slashes
    root = make_vault({f"{deep}/n.md": "# deep\n", "short.md": "# s\n"})
    vault = open_vault(root)
    assert "short.md" in vault.snapshot.by_path
    assert all(len(p) <= 1024 for p in vault.snapshot.paths)
    assert any(r == "cannot be addressed: path longer than 1024 characters" for r in skipped(vault).values())


def test_single_path_refresh_treats_symlinked_folders_like_the_walk(make_vault, open_vault) -> None:
    root = make_vault({"real/x.md": "# x\n", ".vaultwatchignore": "store/\n", "store/deep/n.md": "# n\n"})
    vault = open_vault(root)
    os.symlink("real", root / "dup")  # a duplicate of a listed folder
    os.symlink("store/deep", root / "Notes")  # the only way to an ignored folder's notes
    vault.refresh_paths(["dup", "Notes"])
    assert "dup" not in vault.snapshot.by_path
    assert "already listed" in skipped(vault)["dup"]
    assert vault.snapshot.get("Notes").kind == "folder"
    # and a full rescan agrees
    fresh = open_vault(root)
    assert "dup" not in fresh.snapshot.by_path and "already listed" in skipped(fresh)["dup"]
    assert "Notes/n.md" in fresh.snapshot.by_path


@pytest.mark.parametrize("swap", ["hard link", "fifo"])
def test_a_note_swapped_after_the_walk_for_an_outside_hard_link_or_a_fifo_is_skipped(tmp_path, swap):
    """Issue 13 (hard links, scanner reads): the walk stats x.md (one name, a regular file); before
    its bytes are read another process replaces it with a hard link to a file outside the vault (or
    a FIFO). The read checked only that the kernel names the open file inside the vault, which a
    hard link's name is: the outside file's text was indexed as the note's. The open file's own
    stat is now checked too."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("---\ntitle: OUTSIDE-SECRET\n---\n# out\n")
    root = tmp_path / "v"
    root.mkdir()
    (root / "x.md").write_text("# inside\n")
    real = os.path.realpath(root / "x.md")
    st = os.stat(real)
    fact = scan_mod.FileFact("x.md", real, "note", st.st_size, st.st_mtime_ns, st.st_ino)
    os.unlink(real)
    if swap == "hard link":
        os.link(outside / "x.md", real)
    else:
        os.mkfifo(real)
    got = scan_mod.entry_for(fact)
    assert isinstance(got, scan_mod.Skipped), got
    assert "OUTSIDE-SECRET" not in repr(got)


def _exit_with_a_child_running(kill: bool) -> float:
    """Seconds a fresh interpreter takes to exit while a non-daemon child (sleeping 60 s) runs,
    inside `parsepool.killed_at_exit` or not."""
    import subprocess
    import sys
    import textwrap
    import time

    code = textwrap.dedent(f"""
        import multiprocessing, sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parents[3])!r})
        from vaultwatch.core.index.parsepool import killed_at_exit
        proc = multiprocessing.get_context("fork").Process(target=time.sleep, args=(60,), daemon=False)
        proc.start()
        block = killed_at_exit(proc)
        if {kill!r}:
            block.__enter__()  # still open when the interpreter exits (as in a daemon thread's build)
    """)
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], timeout=120, check=True)
    return time.monotonic() - started


def test_a_build_process_does_not_hold_up_the_apps_exit():
    """core.search.ftsfirst starts a process that is no daemon (it starts processes of its own),
    which multiprocessing waits for at exit: inside killed_at_exit it is killed."""
    assert _exit_with_a_child_running(kill=True) < 20
