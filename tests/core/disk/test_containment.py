"""Issue 13: containment by descriptors, hard links, CR-only frontmatter, overlapping matches,
truthful errors, canonical paths through folder links. Each test names the defect it guards."""

from __future__ import annotations

import os

import pytest

from vaultwatch.core.disk import safeio
from vaultwatch.core.disk.reader import ReadError, read
from vaultwatch.core.edit.writes import EditError, WriteFailed, Writer, WriteRefused
from vaultwatch.core.errors import NotFoundError, PathChangedError, SymlinkEscapeError, VaultError
from vaultwatch.core.vault import Vault


def _vault(root) -> Vault:
    v = Vault(root, cache=False)
    v.load()
    return v


def test_locate_follows_in_vault_links_and_refuses_outside_ones(tmp_path):
    root = tmp_path / "v"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.md").write_text("a")
    (tmp_path / "out").mkdir()
    os.symlink(root / "sub", root / "abs")  # absolute link inside the vault
    os.symlink("sub", root / "rel")
    os.symlink(tmp_path / "out", root / "esc")
    os.symlink("../out", root / "esc2")
    real = os.path.realpath(root)
    for spelled in ("sub/a.md", "abs/a.md", "rel/a.md"):
        with safeio.locate(real, spelled) as loc:
            assert loc.canon == "sub/a.md"
            fd = loc.open(os.O_RDONLY)
            assert os.read(fd, 9) == b"a"
            os.close(fd)
    for spelled in ("esc/x.md", "esc2/x.md", "esc"):
        with pytest.raises(SymlinkEscapeError):
            safeio.locate(real, spelled)


def test_openat2_is_used_here():
    """The kernel of this machine has openat2 (Linux >= 5.6); the walk is the fallback."""
    assert safeio.has_openat2()


def test_a_last_component_swapped_for_a_link_after_the_walk_is_path_changed(tmp_path):
    root = tmp_path / "v"
    (root / "d").mkdir(parents=True)
    (root / "d" / "x.md").write_text("x")
    (tmp_path / "secret.md").write_text("secret")
    with safeio.locate(os.path.realpath(root), "d/x.md") as loc:
        os.unlink(root / "d" / "x.md")
        os.symlink(tmp_path / "secret.md", root / "d" / "x.md")
        with pytest.raises(PathChangedError):
            loc.open(os.O_RDONLY)


def test_a_folder_swapped_for_an_outside_link_after_the_walk_is_not_followed(tmp_path):
    """The old write path checked a realpath, then reopened the path string: a middle folder
    swapped for a link in between was followed. The descriptor stays on the real folder."""
    root = tmp_path / "v"
    (root / "d").mkdir(parents=True)
    (root / "d" / "x.md").write_text("inside")
    out = tmp_path / "out"
    out.mkdir()
    (out / "x.md").write_text("outside")
    with safeio.locate(os.path.realpath(root), "d/x.md") as loc:
        os.rename(root / "d", root / "moved")
        os.symlink(out, root / "d")
        fd = loc.open(os.O_RDONLY)
        assert os.read(fd, 99) == b"inside"
        os.close(fd)


def test_hard_linked_notes_are_never_read_or_rewritten(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    (tmp_path / "secret.md").write_text("# secret\nTOKEN\n")
    os.link(tmp_path / "secret.md", root / "h.md")
    (root / "ok.md").write_text("# ok\n")
    v = _vault(root)
    assert "h.md" not in v.snapshot.by_path
    assert any(s.path == "h.md" and "hard-linked" in s.reason for s in v.snapshot.skipped)
    with pytest.raises(VaultError, match="hard-linked"):
        read(v, "h.md")
    w = Writer(v)
    for call in (
        lambda: w.write("h.md", "x", overwrite=True),
        lambda: w.edit("h.md", "TOKEN", "x"),
        lambda: w.update_frontmatter("h.md", set={"a": 1}),
        lambda: w.etag("h.md"),
    ):
        with pytest.raises(WriteRefused, match="hard-linked") as info:
            call()
        assert "TOKEN" not in info.value.message
    assert (tmp_path / "secret.md").read_text() == "# secret\nTOKEN\n"
    r = w.rename("h.md", "moved.md")  # only the vault's own name changes
    assert r.previous_etag is None and (root / "moved.md").exists()
    assert (tmp_path / "secret.md").read_text() == "# secret\nTOKEN\n"


def test_frontmatter_edit_of_a_cr_only_note_edits_its_block(tmp_path):
    """Before: update_frontmatter prepended a second block and the old keys became body text."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_bytes(b"---\rtitle: a\r---\rbody\r")
    w = Writer(_vault(root))
    w.update_frontmatter("a.md", set={"status": "c"})
    assert (root / "a.md").read_bytes() == b"---\rtitle: a\rstatus: c\r---\rbody\r"


@pytest.mark.parametrize("text,old", [("1. item\n1. item\n1. item\n", "item\n1. item"), ("ababa", "aba")])
def test_overlapping_occurrences_make_an_edit_ambiguous(tmp_path, text, old):
    """Before: str.count skips overlaps, so two overlapping matches were edited silently."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text(text)
    w = Writer(_vault(root))
    with pytest.raises(EditError, match="overlapping") as info:
        w.edit("a.md", old, "X")
    assert info.value.code == "ambiguous_match"
    assert (root / "a.md").read_text() == text


def test_a_huge_sparse_note_is_too_large_not_missing(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    with open(root / "big.md", "wb") as f:
        f.truncate(1 << 30)  # 1 GiB, sparse
    v = _vault(root)
    with pytest.raises(ReadError, match="larger than") as info:
        read(v, "big.md")
    assert not isinstance(info.value, NotFoundError)


def test_a_too_long_folder_name_is_named_in_the_error(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    w = Writer(_vault(root))
    with pytest.raises(WriteFailed) as info:
        w.write("f" * 300 + "/x.md", "x")
    assert "folder name" in info.value.message and "255 bytes" in info.value.message


def test_rename_through_a_folder_link_answers_the_real_path(tmp_path):
    """Before: rename a.md -> L/a.md answered 'L/a.md', which read called not found, and
    rewrote links to the broken L/a.md."""
    root = tmp_path / "v"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# a\n")
    (root / "b.md").write_text("[md](a.md)\n")
    os.symlink("sub", root / "L")
    v = _vault(root)
    r = Writer(v).rename("a.md", "L/a.md")
    assert r.path == "sub/a.md"
    assert read(v, "sub/a.md").etag == r.etag
    assert (root / "b.md").read_text() == "[md](sub/a.md)\n"


def test_a_write_through_a_link_to_the_vault_root_lands_at_the_real_path(tmp_path):
    """Before: writing self/new.md through self -> . was answered as 'self/new.md', a path read refuses."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("# a\n")
    os.symlink(".", root / "self")
    v = _vault(root)
    with pytest.raises(VaultError):
        read(v, "self/a.md")
    r = Writer(v).write("self/new.md", "# new\n")
    assert r.path == "new.md"
    assert read(v, r.path).etag == r.etag


@pytest.mark.parametrize(
    "name,expect",
    [
        ("cafe\u0301.md", "café.md"),  # an NFD twin of an existing NFC name
        ("a\u202egpj.md", "agpj.md"),  # right-to-left override
        ("zero\u200bwidth.md", "zerowidth.md"),
        ("line\u2028sep.md", "linesep.md"),
        ("x\uff0emd.md", "x.md.md"),  # fullwidth full stop
        ("dir /x.md", "dir"),  # a folder with a trailing space
        ("dots./x.md", "dots"),
    ],
)
def test_names_that_deceive_a_person_are_refused_with_what_to_use(tmp_path, name, expect):
    from vaultwatch.core.errors import UnsafeNameError

    root = tmp_path / "v"
    root.mkdir()
    (root / "caf\u00e9.md").write_text("# café\n")
    (root / "src.md").write_text("# src\n")
    w = Writer(_vault(root))
    with pytest.raises(UnsafeNameError) as info:
        w.write(name, "# x\n")
    assert repr(expect) in info.value.message
    with pytest.raises(UnsafeNameError):
        w.rename("src.md", name)
    assert sorted(os.listdir(root)) == ["caf\u00e9.md", "src.md"]


def test_ordinary_unicode_names_are_still_created(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    (root / "caf\u00e9.md").write_text("# café\n")
    w = Writer(_vault(root))
    for name in ("Café crème.md", "日本語/ノート.md", "emoji 🎉.md", "נקודה.md", "~draft.md"):
        assert w.write(name, "# ok\n").created


def test_renaming_a_note_of_a_million_links_is_refused_before_any_change(tmp_path):
    """Before: one agent's 3.85 MB note of 330k wiki links took 21 s of server CPU to rename."""
    root = tmp_path / "v"
    root.mkdir()
    for i in range(20):
        (root / f"n{i}.md").write_text(f"# n{i}\n")
    w = Writer(_vault(root))
    body = "".join(f"[[n{i % 20}]] " for i in range(500_000))  # 4.4 MB, under the 10 MiB write cap
    w.write("big.md", body)
    before = sorted(os.listdir(root))
    for src, dst in (("big.md", "sub/big.md"), ("n3.md", "sub/n3.md")):  # moved, or linked to by it
        with pytest.raises(WriteRefused, match="update_links=false") as info:
            w.rename(src, dst)
        assert info.value.code == "too_many_links"
    assert sorted(os.listdir(root)) == before
    r = w.rename("big.md", "sub/big.md", update_links=False)
    assert r.path == "sub/big.md"
