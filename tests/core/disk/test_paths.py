"""The one path resolver: accepted forms, every refusal with its stable phrase, and properties."""

from __future__ import annotations

import os
import unicodedata

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vaultwatch.core.disk.paths import MAX_PATH_CHARS, is_hidden, normalize, normalize_folder, to_disk
from vaultwatch.core.errors import (
    AbsolutePathError,
    HiddenPathError,
    PathChangedError,
    PathError,
    SymlinkEscapeError,
    TraversalError,
)

ACCEPTED = [
    ("Projects/plan.md", "Projects/plan.md"),
    ("Projects/", "Projects"),
    ("Projects//Archive/", "Projects/Archive"),
    ("./Projects/./plan.md", "Projects/plan.md"),
    ("Café notes.md", "Café notes.md"),
    ("Areas/Team/1-1 Template.md", "Areas/Team/1-1 Template.md"),
    ("a..b.md", "a..b.md"),  # dots inside a name are not traversal
    ("notes.", "notes."),
    ("~draft.md", "~draft.md"),  # a leading tilde in a name is an ordinary file, never expanded
    ("folder with space /x.md", "folder with space /x.md"),
    ("日本語/メモ.md", "日本語/メモ.md"),
    ("a" * MAX_PATH_CHARS, "a" * MAX_PATH_CHARS),
]


@pytest.mark.parametrize(("raw", "canonical"), ACCEPTED)
def test_accepted_paths_are_canonicalised(raw: str, canonical: str) -> None:
    assert normalize(raw) == canonical


# (input, error class, phrase the message must start with or contain)
REFUSED = [
    ("/etc/passwd", AbsolutePathError, "absolute path blocked"),
    ("/", AbsolutePathError, "absolute path blocked"),
    ("~", AbsolutePathError, "absolute path blocked"),
    ("~/notes/x.md", AbsolutePathError, "absolute path blocked"),
    ("C:/Users/x.md", AbsolutePathError, "absolute path blocked"),
    ("c:notes.md", AbsolutePathError, "absolute path blocked"),
    ("..", TraversalError, "path traversal blocked"),
    ("../secret.md", TraversalError, "path traversal blocked"),
    ("Projects/../../x.md", TraversalError, "path traversal blocked"),
    ("Projects/..", TraversalError, "path traversal blocked"),
    (".", TraversalError, "path traversal blocked"),  # names the vault root itself
    ("./", TraversalError, "path traversal blocked"),
    ("./.", TraversalError, "path traversal blocked"),
    ("//", AbsolutePathError, "absolute path blocked"),
    (".obsidian", HiddenPathError, "hidden path blocked"),
    (".obsidian/app.json", HiddenPathError, "hidden path blocked"),
    ("Projects/.secret/plan.md", HiddenPathError, "hidden path blocked"),
    (".hidden-note.md", HiddenPathError, "hidden path blocked"),
    ("...", HiddenPathError, "hidden path blocked"),
    ("Projects\\plan.md", PathError, "backslash"),
    ("..\\..\\windows", PathError, "backslash"),
    ("a\x00b.md", PathError, "control character"),
    ("a\nb.md", PathError, "control character"),
    ("a\tb.md", PathError, "control character"),
    ("a\x7fb.md", PathError, "control character"),
    ("a\x85b.md", PathError, "control character"),  # C1 (NEL)
    ("", PathError, "empty"),
    ("   ", PathError, "empty"),
    ("Projects/ /x.md", PathError, "blank segment"),
    ("a" * (MAX_PATH_CHARS + 1), PathError, "longer than"),
    (None, PathError, "must be a string"),
    (42, PathError, "must be a string"),
    (b"Projects", PathError, "must be a string"),
]


@pytest.mark.parametrize(("raw", "error", "phrase"), REFUSED)
def test_refused_paths_raise_typed_errors_with_stable_phrases(raw: object, error: type, phrase: str) -> None:
    with pytest.raises(error) as info:
        normalize(raw)
    message = str(info.value)
    assert phrase in message
    assert info.value.message == message
    if phrase.endswith("blocked"):
        assert message.startswith(phrase)
    # every refusal says what to do instead, never only what went wrong
    assert any(w in message for w in ("use", "give", "remove", "omit", "name", "separate", "never", "such as")), message


def test_error_codes_are_stable() -> None:
    codes = {}
    for raw in ("/x", "../x", ".x", "a\\b"):
        with pytest.raises(PathError) as info:
            normalize(raw)
        codes[raw] = info.value.code
    assert codes == {
        "/x": "absolute_path_blocked",
        "../x": "path_traversal_blocked",
        ".x": "hidden_path_blocked",
        "a\\b": "invalid_path",
    }


def test_what_names_the_argument() -> None:
    with pytest.raises(PathError, match="folder"):
        normalize("", what="folder")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, None), ("", ""), ("Projects", "Projects"), ("Projects/", "Projects"), ("a//b", "a/b")],
)
def test_normalize_folder_keeps_none_and_root(raw: object, expected: object) -> None:
    assert normalize_folder(raw) == expected


@pytest.mark.parametrize(
    ("raw", "error"),
    [(".", TraversalError), ("/", AbsolutePathError), (".obsidian", HiddenPathError), ("..", TraversalError)],
)
def test_normalize_folder_refuses_like_normalize(raw: str, error: type) -> None:
    with pytest.raises(error):
        normalize_folder(raw)


@pytest.mark.parametrize(
    ("rel", "hidden"),
    [("a/b.md", False), (".a", True), ("a/.b/c.md", True), ("a/b/.c", True), ("a.b/c", False)],
)
def test_is_hidden(rel: str, hidden: bool) -> None:
    assert is_hidden(rel) is hidden


# --- to_disk: symlink escapes and links into hidden folders -------------------------------------


def test_to_disk_maps_inside_and_refuses_escapes(tmp_path) -> None:
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    (vault / "Projects").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    outside.mkdir()
    (vault / "Projects" / "plan.md").write_text("x")
    (outside / "secret.md").write_text("secret")
    (vault / ".obsidian" / "app.json").write_text("{}")
    os.symlink(outside / "secret.md", vault / "escape.md")
    os.symlink(outside, vault / "OutDir")
    os.symlink(vault / "Projects" / "plan.md", vault / "inside-link.md")
    os.symlink(vault / ".obsidian", vault / "config")
    root = os.path.realpath(vault)

    assert to_disk(root, "Projects/plan.md") == os.path.join(root, "Projects", "plan.md")
    assert to_disk(root, "inside-link.md") == os.path.join(root, "Projects", "plan.md")
    # a path that does not exist yet maps to its would-be location
    assert to_disk(root, "Projects/new.md") == os.path.join(root, "Projects", "new.md")
    for rel in ("escape.md", "OutDir", "OutDir/secret.md", "OutDir/new.md"):
        with pytest.raises(SymlinkEscapeError, match="^symlink escapes vault"):
            to_disk(root, rel)
    for rel in ("config", "config/app.json"):
        with pytest.raises(HiddenPathError, match="^hidden path blocked"):
            to_disk(root, rel)


def test_to_disk_reports_a_symlink_removed_while_it_is_resolved(tmp_path, link_remover) -> None:
    """realpath lstat()s a segment, sees a link, then readlink()s it: a link removed in between
    (another caller renaming or deleting it) is a structured PathChangedError, not an OSError."""
    vault = tmp_path / "vault"
    (vault / "Projects").mkdir(parents=True)
    (vault / "Projects" / "plan.md").write_text("x")
    os.symlink(vault / "Projects", vault / "link")
    root = os.path.realpath(vault)
    link_remover.names = {"link"}
    with pytest.raises(PathChangedError, match="changed on disk while it was being resolved") as info:
        to_disk(root, "link/plan.md")
    assert info.value.code == "path_changed"
    assert isinstance(info.value, PathError)
    assert link_remover.removed == 1


# --- properties ---------------------------------------------------------------------------------

_SEGMENT_CHARS = st.sampled_from(list("ab.~:/\\ -_é\x00\n\x85\u200f\u2028") + ["..", "~/", "C:", "//", "./"])
_paths = st.one_of(
    st.lists(_SEGMENT_CHARS, max_size=12).map("".join),
    st.text(max_size=40),
    st.lists(st.sampled_from(["a", "b", ".", "..", ".x", "", " ", "~", "c:"]), max_size=6).map("/".join),
)


def _check_canonical(out: str) -> None:
    assert out, "never empty"
    assert not out.startswith("/") and not out.startswith("~/") and out != "~"
    assert "\\" not in out
    assert not any(unicodedata.category(c) == "Cc" for c in out)
    for seg in out.split("/"):
        assert seg != "", "no empty segments"
        assert seg != ".." and seg != "."
        assert not seg.startswith("."), "no hidden segments"
        assert seg.strip() != "", "no blank segments"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_paths)
@example("a/./b//c/")
@example("./a")
@example("a/\x85")
def test_normalize_property(raw: str) -> None:
    try:
        out = normalize(raw)
    except PathError as exc:
        assert exc.message and isinstance(exc.code, str)
        return
    _check_canonical(out)
    assert normalize(out) == out, "idempotent"
    assert len(out) <= len(raw)
    root = "/vault/root"
    joined = os.path.normpath(os.path.join(root, out))
    assert joined.startswith(root + "/"), "an accepted path stays inside the vault"
    assert joined == os.path.join(root, *out.split("/"))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/"), min_size=1, max_size=8),
        min_size=1,
        max_size=5,
    )
)
def test_plain_segments_round_trip(segments: list[str]) -> None:
    """Joining ordinary names gives a path the resolver accepts unchanged, or a typed refusal."""
    raw = "/".join(segments)
    try:
        out = normalize(raw)
    except PathError:
        return
    _check_canonical(out)
    if all(s not in ("", ".") for s in segments):
        assert out == raw


# --- names on disk that the resolver could never address --------------------------------------------


@pytest.mark.parametrize(
    ("name", "at_root", "addressable"),
    [
        ("plan.md", True, True),
        ("~draft.md", True, True),
        ("C:notes.md", False, True),  # a drive letter only means something at the start
        ("C:notes.md", True, False),
        ("~", True, False),
        ("~", False, True),
        ("a\\b.md", False, False),
        ("tab\there.md", False, False),
        ("new\nline.md", False, False),
        ("esc\x1b[2J.md", False, False),  # a terminal escape in a file name
        ("nel\x85.md", False, False),
        (" ", False, False),
        ("\u200frtl mark.md", False, True),  # format characters are legitimate in names
        ("nbsp\u00a0name.md", False, True),
        ("emoji 🎉.md", True, True),
    ],
)
def test_unaddressable_names(name: str, at_root: bool, addressable: bool) -> None:
    from vaultwatch.core.disk.paths import unaddressable

    assert (unaddressable(name, at_root=at_root) is None) is addressable


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/"), min_size=1, max_size=12
    ).filter(lambda n: not n.startswith("."))
)
@example("~")
@example("c:")
@example("a\\b")
def test_scanner_name_check_agrees_with_the_resolver(name: str) -> None:
    """A name the scanner keeps at the vault root is exactly one the resolver returns unchanged."""
    from vaultwatch.core.disk.paths import unaddressable

    keep = unaddressable(name, at_root=True) is None
    try:
        accepted = normalize(name) == name
    except PathError:
        accepted = False
    assert keep == accepted
