"""Every sentence of the three seed documents' listing semantics, answered by the one core Query.

The MCP adapters come later; here each seed tool is written as the Query it maps to:
- markdown-vault-mcp `list_documents`  -> Query(folder, filters, pattern, include_attachments)
- Vault Cortex `vault_list_notes`       -> Query(folder, pattern, pattern_base="folder"), paths only
- obsidian-mcp `obsidian_list_notes`    -> Query(folder or None, recursive, include_folders=True)
The last section checks the facts the bundled demo vault is documented to hold.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from vaultwatch.core.clock import FixedClock
from vaultwatch.core.errors import AbsolutePathError, HiddenPathError, PathError, QueryError, TraversalError
from vaultwatch.core.query.listing import Query, pairs
from vaultwatch.core.serialize import entry_json
from vaultwatch.core.vault import Vault

NOTE = "---\ntitle: {title}\n---\n# {title}\n"

SEED_FILES: dict[str, str | bytes] = {
    "index.md": '---\nokf_version: "0.2"\ntitle: Home\n---\n# Home\n',
    "session-log.md": "# root session log\n",
    "Zeta.md": "# Zeta\n",
    "alpha.md": "# alpha\n",
    "Beta.md": "# Beta\n",
    "_under.md": "# under\n",
    "café.md": "# café\n",
    "Éclair.md": "# Éclair\n",
    "Projects/plan.md": NOTE.format(title="Plan"),
    "Projects/session-log.md": "# Projects session log\n",
    "Projects/my-session-log.md": "# a longer name\n",
    "Projects/Archive/old.md": "# old\n",
    "Projects/Archive/session-log.md": "# archived session log\n",
    "Projects/Archive/Deep/deeper.md": "# deeper\n",
    "Projects/diagram.png": b"\x89PNG\r\n\x1a\n" + b"\0" * 16,
    "Projects/Empty/": "",
    "ProjectsOld/legacy.md": "# legacy\n",
    "projects/lower.md": "# lower-case folder\n",
    "Notes/idea.md": "# idea\n",
    "Notes/Idea2.md": "# Idea2\n",
    "Notes/report.PDF": b"%PDF-1.4\n",
    "Notes/data.xyz": b"not allowlisted",
    "Journal/2026-01-01.md": "# day one\n",
    "Journal/2026/meeting notes.md": "# meeting\n",
    "Inbox/meeting 2026-11-24.md": "# meeting\n",
    # hidden at every depth: never listed
    ".hidden.md": "# hidden\n",
    ".obsidian/app.json": "{}",
    ".obsidian/workspace.md": "# hidden\n",
    ".trash/old note.md": "# hidden\n",
    "Projects/.secret/plan.md": "# hidden\n",
    "Projects/.draft.md": "# hidden\n",
    "Projects/Archive/.cache/x.md": "# hidden\n",
}
HIDDEN_MARKERS = (".hidden", ".obsidian", ".trash", ".secret", ".draft", ".cache")


@pytest.fixture(scope="module")
def seed_vault(tmp_path_factory: pytest.TempPathFactory, write_vault) -> Vault:
    base = tmp_path_factory.mktemp("seed")
    root = write_vault(base / "vault", SEED_FILES)
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# outside the vault\n")
    os.symlink("../Projects/plan.md", root / "Notes" / "linked plan.md")  # inside: listed
    os.symlink(outside / "secret.md", root / "Notes" / "escape.md")  # escapes: never listed
    os.symlink(outside, root / "Outside")  # an escaping folder link
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    vault.load()
    return vault


def paths(vault: Vault, q: Query) -> list[str]:
    return [e.path for e in vault.list(q).entries]


def all_note_paths(vault: Vault) -> list[str]:
    return sorted(e.path for e in vault.snapshot.entries if e.kind == "note")


# --- the seed tools as core queries ---------------------------------------------------------------


def vault_list_notes(vault: Vault, folder: str | None = None, glob: str | None = None) -> list[str]:
    """Vault Cortex: paths only, glob relative to the folder, code-point order."""
    return paths(vault, Query(folder=folder, pattern=glob, pattern_base="folder"))


def obsidian_list_notes(vault: Vault, folder: str = "", recursive: bool = False) -> dict:
    """obsidian-mcp: notes and folders, JSON shape {folder, count, backend, entries}."""
    q = Query(folder=(folder or None) if recursive else folder, recursive=recursive, include_folders=True)
    res = vault.list(q)
    entries = []
    for e in res.entries:
        row = entry_json(e, vault.clock, res.is_bundle, frontmatter=False)
        entries.append(
            {
                "path": row["path"],
                "is_folder": row["kind"] == "folder",
                "size_bytes": row["size_bytes"],
                "modified_at": row["modified_at"],
            }
        )
    return {"folder": folder, "count": res.total, "backend": "filesystem", "entries": entries}


def list_documents(
    vault: Vault,
    folder: str | None = None,
    filters: dict | None = None,
    pattern: str | None = None,
    include_attachments: bool = False,
) -> list[str]:
    """markdown-vault-mcp: documents (and optionally attachments) with filters."""
    return paths(
        vault, Query(folder=folder, filters=pairs(filters), pattern=pattern, include_attachments=include_attachments)
    )


# --- seed 001: Vault Cortex vault_list_notes --------------------------------------------------------

VAULT_CORTEX = [
    # "List .md file paths in the vault" (no attachments), "sorted by vault-relative path,
    # uppercase before lowercase", hidden never listed
    (
        "whole vault",
        None,
        None,
        [
            "Beta.md",
            "Inbox/meeting 2026-11-24.md",
            "Journal/2026-01-01.md",
            "Journal/2026/meeting notes.md",
            "Notes/Idea2.md",
            "Notes/idea.md",
            "Notes/linked plan.md",
            "Projects/Archive/Deep/deeper.md",
            "Projects/Archive/old.md",
            "Projects/Archive/session-log.md",
            "Projects/my-session-log.md",
            "Projects/plan.md",
            "Projects/session-log.md",
            "ProjectsOld/legacy.md",
            "Zeta.md",
            "_under.md",
            "alpha.md",
            "café.md",
            "index.md",
            "projects/lower.md",
            "session-log.md",
            "Éclair.md",
        ],
    ),
    # Example: vault_list_notes({ folder: "Projects" }) -- includes subfolders, not ProjectsOld
    (
        "folder includes subfolders",
        "Projects",
        None,
        [
            "Projects/Archive/Deep/deeper.md",
            "Projects/Archive/old.md",
            "Projects/Archive/session-log.md",
            "Projects/my-session-log.md",
            "Projects/plan.md",
            "Projects/session-log.md",
        ],
    ),
    (
        "trailing slash is the same folder",
        "Projects/",
        None,
        [
            "Projects/Archive/Deep/deeper.md",
            "Projects/Archive/old.md",
            "Projects/Archive/session-log.md",
            "Projects/my-session-log.md",
            "Projects/plan.md",
            "Projects/session-log.md",
        ],
    ),
    (
        "nested folder",
        "Projects/Archive",
        None,
        [
            "Projects/Archive/Deep/deeper.md",
            "Projects/Archive/old.md",
            "Projects/Archive/session-log.md",
        ],
    ),
    ("name boundary: ProjectsOld is its own folder", "ProjectsOld", None, ["ProjectsOld/legacy.md"]),
    # "use the folder's exact letter case ... a different case finds nothing" (here: another folder)
    ("case-sensitive folder", "projects", None, ["projects/lower.md"]),
    ("different case finds nothing", "PROJECTS", None, []),
    # Example: vault_list_notes({ glob: "**/session-log.md" }); ** spans any depth incl. none
    (
        "glob any depth",
        None,
        "**/session-log.md",
        [
            "Projects/Archive/session-log.md",
            "Projects/session-log.md",
            "session-log.md",
        ],
    ),
    # Example: vault_list_notes({ folder: "Projects", glob: "*.md" }) -- top-level notes only
    (
        "folder + *.md = folder's top level",
        "Projects",
        "*.md",
        [
            "Projects/my-session-log.md",
            "Projects/plan.md",
            "Projects/session-log.md",
        ],
    ),
    # "with folder Projects ... **/*.md every note under it"
    (
        "folder + **/*.md = every note under it",
        "Projects",
        "**/*.md",
        [
            "Projects/Archive/Deep/deeper.md",
            "Projects/Archive/old.md",
            "Projects/Archive/session-log.md",
            "Projects/my-session-log.md",
            "Projects/plan.md",
            "Projects/session-log.md",
        ],
    ),
    (
        "glob inside folder, one level down",
        "Projects",
        "Archive/*.md",
        [
            "Projects/Archive/old.md",
            "Projects/Archive/session-log.md",
        ],
    ),
    # "its vault-relative path when folder is omitted": * stays within one level
    (
        "no folder: *.md is the root level",
        None,
        "*.md",
        [
            "Beta.md",
            "Zeta.md",
            "_under.md",
            "alpha.md",
            "café.md",
            "index.md",
            "session-log.md",
            "Éclair.md",
        ],
    ),
    ("no folder: **/*.md is everything", None, "**/*.md", "ALL"),
    (
        "example glob with stars inside a name",
        None,
        "**/*session-log*.md",
        [
            "Projects/Archive/session-log.md",
            "Projects/my-session-log.md",
            "Projects/session-log.md",
            "session-log.md",
        ],
    ),
    # "glob matches ... case-sensitively"
    ("case-sensitive glob", None, "**/Session-Log.md", []),
    ("case-sensitive glob on names", "Notes", "i*.md", ["Notes/idea.md"]),
    ("case-sensitive glob upper", "Notes", "I*.md", ["Notes/Idea2.md"]),
    # "A nonexistent folder or no glob matches returns an empty array, not an error."
    ("nonexistent folder", "Nowhere", None, []),
    ("nonexistent nested folder", "Projects/Nowhere/Deeper", None, []),
    ("empty folder", "Projects/Empty", None, []),
    ("no glob matches", None, "**/*.txt", []),
    ("a file is not a folder", "Projects/plan.md", None, []),
    # "Returned paths are always vault-relative" even when the glob is folder-relative
    ("vault-relative results", "Journal", "**/*.md", ["Journal/2026-01-01.md", "Journal/2026/meeting notes.md"]),
    # "Hidden (dot-prefixed) notes and folders are never listed", whatever the glob
    ("hidden never matched by a glob", None, "**/.*", []),
    ("hidden never matched by a dot glob", None, ".*/**", []),
    ("hidden never matched inside a folder", "Projects", "**/.*/*.md", []),
]


@pytest.mark.parametrize(("case", "folder", "glob", "expected"), VAULT_CORTEX, ids=[c[0] for c in VAULT_CORTEX])
def test_vault_list_notes(seed_vault: Vault, case: str, folder, glob, expected) -> None:
    got = vault_list_notes(seed_vault, folder, glob)
    if expected == "ALL":
        expected = all_note_paths(seed_vault)
    assert got == expected


def test_code_point_sort_uppercase_first(seed_vault: Vault) -> None:
    got = vault_list_notes(seed_vault)
    assert got == sorted(got)  # Python's str order is code-point order
    assert got.index("Zeta.md") < got.index("alpha.md")  # 'Z' (0x5A) before 'a' (0x61)
    assert got.index("Zeta.md") < got.index("_under.md") < got.index("alpha.md")  # '_' is 0x5F
    assert got.index("café.md") < got.index("Éclair.md")  # 'É' (0xC9) after every ASCII letter
    assert got.index("Notes/Idea2.md") < got.index("Notes/idea.md")


def test_symlinked_notes_are_included_and_escapes_are_not(seed_vault: Vault) -> None:
    got = vault_list_notes(seed_vault)
    assert "Notes/linked plan.md" in got
    assert "Notes/escape.md" not in got
    assert not any(p.startswith("Outside") for p in got)
    skipped = {s.path: s.reason for s in seed_vault.snapshot.skipped}
    assert skipped["Notes/escape.md"] == "symlink escapes vault"
    assert skipped["Outside"] == "symlink escapes vault"
    linked = seed_vault.entry("Notes/linked plan.md")
    assert linked.title == "Plan"  # the target's content


def test_hidden_paths_never_listed_in_any_view(seed_vault: Vault) -> None:
    everything = paths(seed_vault, Query(include_attachments=True, include_folders=True))
    assert everything, "the vault is not empty"
    assert not [p for p in everything if any(m in p for m in HIDDEN_MARKERS)]
    assert not [p for p in everything if any(seg.startswith(".") for seg in p.split("/"))]
    assert not [s for s in seed_vault.snapshot.skipped if any(m in s.path for m in HIDDEN_MARKERS)]


@pytest.mark.parametrize(
    ("folder", "error", "phrase"),
    [
        ("/Projects", AbsolutePathError, "absolute path blocked"),
        ("/etc", AbsolutePathError, "absolute path blocked"),
        ("../", TraversalError, "path traversal blocked"),
        ("Projects/../..", TraversalError, "path traversal blocked"),
        (".", TraversalError, "path traversal blocked"),  # "names the vault root itself (e.g. ".")"
        (".obsidian", HiddenPathError, "hidden path blocked"),
        ("Projects/.secret", HiddenPathError, "hidden path blocked"),
    ],
)
def test_vault_list_notes_path_errors(seed_vault: Vault, folder: str, error: type, phrase: str) -> None:
    with pytest.raises(error) as info:
        vault_list_notes(seed_vault, folder)
    assert str(info.value).startswith(phrase)
    assert isinstance(info.value, PathError)


def test_omitting_folder_lists_the_whole_vault(seed_vault: Vault) -> None:
    assert vault_list_notes(seed_vault) == all_note_paths(seed_vault)
    assert vault_list_notes(seed_vault, None, "**") == all_note_paths(seed_vault)


# --- seed 003: obsidian-mcp obsidian_list_notes -----------------------------------------------------


def test_obsidian_root_not_recursive_lists_root_notes_and_folders(seed_vault: Vault) -> None:
    out = obsidian_list_notes(seed_vault, "", recursive=False)
    got = [(e["path"], e["is_folder"]) for e in out["entries"]]
    assert got == [
        ("Beta.md", False),
        ("Inbox", True),
        ("Journal", True),
        ("Notes", True),
        ("Projects", True),
        ("ProjectsOld", True),
        ("Zeta.md", False),
        ("_under.md", False),
        ("alpha.md", False),
        ("café.md", False),
        ("index.md", False),
        ("projects", True),
        ("session-log.md", False),
        ("Éclair.md", False),
    ]
    assert out["count"] == len(out["entries"])
    assert out["folder"] == "" and out["backend"] == "filesystem"


def test_obsidian_folder_not_recursive_lists_direct_children(seed_vault: Vault) -> None:
    out = obsidian_list_notes(seed_vault, "Projects", recursive=False)
    assert [(e["path"], e["is_folder"]) for e in out["entries"]] == [
        ("Projects/Archive", True),
        ("Projects/Empty", True),
        ("Projects/my-session-log.md", False),
        ("Projects/plan.md", False),
        ("Projects/session-log.md", False),
    ]


def test_obsidian_recursive_walks_nested_folders(seed_vault: Vault) -> None:
    out = obsidian_list_notes(seed_vault, "Projects", recursive=True)
    assert [e["path"] for e in out["entries"]] == [
        "Projects/Archive",
        "Projects/Archive/Deep",
        "Projects/Archive/Deep/deeper.md",
        "Projects/Archive/old.md",
        "Projects/Archive/session-log.md",
        "Projects/Empty",
        "Projects/my-session-log.md",
        "Projects/plan.md",
        "Projects/session-log.md",
    ]
    whole = obsidian_list_notes(seed_vault, "", recursive=True)
    assert whole["count"] == len(paths(seed_vault, Query(include_folders=True)))
    assert "Projects/Archive/Deep" in [e["path"] for e in whole["entries"]]
    # folders and notes only: attachments are not part of this listing
    assert not any(e["path"].endswith((".png", ".PDF", ".xyz")) for e in whole["entries"])


def test_obsidian_entries_carry_size_and_modified_time(seed_vault: Vault) -> None:
    out = obsidian_list_notes(seed_vault, "Projects", recursive=False)
    for e in out["entries"]:
        assert set(e) == {"path", "is_folder", "size_bytes", "modified_at"}
        assert isinstance(e["size_bytes"], int) and e["size_bytes"] >= 0
        parsed = dt.datetime.fromisoformat(e["modified_at"].replace("Z", "+00:00"))
        assert parsed.tzinfo is not None
    plan = next(e for e in out["entries"] if e["path"] == "Projects/plan.md")
    assert plan["size_bytes"] == len(SEED_FILES["Projects/plan.md"].encode())
    folder = next(e for e in out["entries"] if e["path"] == "Projects/Archive")
    assert folder["is_folder"] and folder["size_bytes"] == 0


def test_obsidian_hidden_folders_and_missing_folders(seed_vault: Vault) -> None:
    everything = [e["path"] for e in obsidian_list_notes(seed_vault, "", recursive=True)["entries"]]
    assert not [p for p in everything if any(seg.startswith(".") for seg in p.split("/"))]
    assert obsidian_list_notes(seed_vault, "Nowhere", recursive=True)["entries"] == []
    assert obsidian_list_notes(seed_vault, "Nowhere", recursive=False)["count"] == 0
    with pytest.raises(HiddenPathError):
        obsidian_list_notes(seed_vault, ".obsidian")


# --- seed 000: markdown-vault-mcp list_documents ----------------------------------------------------

TRIAGE_FILES: dict[str, str | bytes] = {
    "index.md": '---\nokf_version: "0.2"\nstatus: stable\n---\n# Home\n',
    "Journal/day.md": "---\nstatus: draft\ntags: [journal, craft]\nmood: tired\n---\n# day\n",
    "Journal/2026/deep.md": "---\nstatus: deprecated\ntags: [journal]\n---\n# deep\n",
    "Journal/old.md": "---\nstatus: deprecated\nstale_after: 2025-01-01\n---\n# old\n",
    "Craft/plane.md": "---\ntags:\n  - craft\n  - woodworking\nstale_after: 2026-11-29\n"
    "verified:\n  - by: human:ana\n---\n# plane\n",
    "Craft/finish.md": "---\nstatus: stable\ntags: craft\nstale_after: 2026-11-30\n"
    "verified: {by: ci-bot}\npublished: true\nrating: 4\n---\n# finish\n",
    "Craft/notes.md": "# no frontmatter #craft\n",
    "Craft/img.png": b"\x89PNG\r\n\x1a\n",
    "Craft/manual.pdf": b"%PDF-1.4\n",
    "meeting-notes.md": "---\npublished: false\nrating: 5\nstatus: ''\n---\n# meeting\n",
    "Inbox/meeting 1.md": "---\nstatus: Draft\n---\n# capitalised status\n",
}


@pytest.fixture(scope="module")
def triage_vault(tmp_path_factory: pytest.TempPathFactory, write_vault) -> Vault:
    root = write_vault(tmp_path_factory.mktemp("triage") / "vault", TRIAGE_FILES)
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    vault.load()
    assert vault.snapshot.is_bundle
    return vault


LIST_DOCUMENTS = [
    # "Enumerate all documents in the vault" (notes only by default)
    (
        "all documents",
        {},
        [
            "Craft/finish.md",
            "Craft/notes.md",
            "Craft/plane.md",
            "Inbox/meeting 1.md",
            "Journal/2026/deep.md",
            "Journal/day.md",
            "Journal/old.md",
            "index.md",
            "meeting-notes.md",
        ],
    ),
    # folder: "Return only documents in this folder (e.g. "Journal")"
    ("folder", {"folder": "Journal"}, ["Journal/2026/deep.md", "Journal/day.md", "Journal/old.md"]),
    # "Use folder="" for root-level (top-level) documents only."
    ("root level only", {"folder": ""}, ["index.md", "meeting-notes.md"]),
    # filters: "Frontmatter equality filters, ANDed (e.g. {"tags": "craft"})"
    (
        "tags membership",
        {"filters": {"tags": "craft"}},
        [
            "Craft/finish.md",
            "Craft/notes.md",
            "Craft/plane.md",
            "Journal/day.md",
        ],
    ),
    ("ANDed filters", {"filters": {"tags": "craft", "status": "draft"}}, ["Journal/day.md"]),
    (
        "ANDed with folder",
        {"folder": "Craft", "filters": {"tags": "craft"}},
        [
            "Craft/finish.md",
            "Craft/notes.md",
            "Craft/plane.md",
        ],
    ),
    # "any frontmatter key works"
    ("custom key", {"filters": {"mood": "tired"}}, ["Journal/day.md"]),
    ("number value", {"filters": {"rating": "4"}}, ["Craft/finish.md"]),
    ("boolean true", {"filters": {"published": "true"}}, ["Craft/finish.md"]),
    ("boolean case-insensitive", {"filters": {"published": "TRUE"}}, ["Craft/finish.md"]),
    ("boolean false", {"filters": {"published": "False"}}, ["meeting-notes.md"]),
    ("missing key matches nothing", {"filters": {"nosuchkey": "x"}}, []),
    # OKF: status "draft"/"stable"/"deprecated"; "stable" also matches notes without a status field
    ("status draft", {"filters": {"status": "draft"}}, ["Journal/day.md"]),
    (
        "status deprecated (triage listing)",
        {"filters": {"status": "deprecated"}},
        [
            "Journal/2026/deep.md",
            "Journal/old.md",
        ],
    ),
    (
        "status stable includes missing and empty",
        {"filters": {"status": "stable"}},
        [
            "Craft/finish.md",
            "Craft/notes.md",
            "Craft/plane.md",
            "index.md",
            "meeting-notes.md",
        ],
    ),
    ("status is case-sensitive", {"filters": {"status": "Draft"}}, ["Inbox/meeting 1.md"]),
    # stale ("true"/"false" -- stale_after reached): 2026-11-29 == today is reached, tomorrow is not
    ("stale true (triage listing)", {"filters": {"stale": "true"}}, ["Craft/plane.md", "Journal/old.md"]),
    (
        "stale false",
        {"filters": {"stale": "false"}},
        [
            "Craft/finish.md",
            "Craft/notes.md",
            "Inbox/meeting 1.md",
            "Journal/2026/deep.md",
            "Journal/day.md",
            "index.md",
            "meeting-notes.md",
        ],
    ),
    # trust_tier ("unverified"/"machine-confirmed"/"human-reviewed")
    ("trust human", {"filters": {"trust_tier": "human-reviewed"}}, ["Craft/plane.md"]),
    ("trust machine", {"filters": {"trust_tier": "machine-confirmed"}}, ["Craft/finish.md"]),
    (
        "trust unverified",
        {"filters": {"trust_tier": "unverified"}},
        [
            "Craft/notes.md",
            "Inbox/meeting 1.md",
            "Journal/2026/deep.md",
            "Journal/day.md",
            "Journal/old.md",
            "index.md",
            "meeting-notes.md",
        ],
    ),
    # "Any filter excludes attachments (they carry no frontmatter)."
    (
        "any filter excludes attachments",
        {"filters": {"stale": "false"}, "include_attachments": True, "folder": "Craft"},
        ["Craft/finish.md", "Craft/notes.md"],
    ),
    # pattern: "Unix glob matched against relative paths (e.g. "Journal/*.md", "**/meeting*.md")"
    ("pattern one level", {"pattern": "Journal/*.md"}, ["Journal/day.md", "Journal/old.md"]),
    ("pattern any depth incl. root", {"pattern": "**/meeting*.md"}, ["Inbox/meeting 1.md", "meeting-notes.md"]),
    (
        "pattern with folder is vault-relative",
        {"folder": "Journal", "pattern": "Journal/**/*.md"},
        [
            "Journal/2026/deep.md",
            "Journal/day.md",
            "Journal/old.md",
        ],
    ),
    # include_attachments: "also returns non-.md files ... that match the configured allowlist"
    (
        "attachments included",
        {"folder": "Craft", "include_attachments": True},
        [
            "Craft/finish.md",
            "Craft/img.png",
            "Craft/manual.pdf",
            "Craft/notes.md",
            "Craft/plane.md",
        ],
    ),
    ("attachments by pattern", {"pattern": "**/*.pdf", "include_attachments": True}, ["Craft/manual.pdf"]),
    ("default: notes only", {"pattern": "**/*.pdf"}, []),
]


@pytest.mark.parametrize(("case", "kwargs", "expected"), LIST_DOCUMENTS, ids=[c[0] for c in LIST_DOCUMENTS])
def test_list_documents(triage_vault: Vault, case: str, kwargs: dict, expected: list[str]) -> None:
    assert list_documents(triage_vault, **kwargs) == expected


def test_list_documents_is_complete_without_limit(triage_vault: Vault) -> None:
    res = triage_vault.list(Query())
    assert res.next_cursor is None
    assert res.total == len(res.entries) == sum(1 for e in triage_vault.snapshot.entries if e.kind == "note")


def test_list_documents_rows_carry_no_body(triage_vault: Vault) -> None:
    """ "Does NOT include body content -- call 'read' for full text.\""""
    for e in triage_vault.list(Query(include_attachments=True)).entries:
        row = entry_json(e, triage_vault.clock, True)
        assert not {"body", "content", "text"} & set(row)
        assert "# " not in repr(row.get("frontmatter", {}))


def test_attachment_rows_have_kind_and_mime_type(triage_vault: Vault) -> None:
    rows = {
        e.path: entry_json(e, triage_vault.clock, True)
        for e in triage_vault.list(Query(include_attachments=True, folder="Craft")).entries
    }
    assert rows["Craft/img.png"]["kind"] == "attachment"
    assert rows["Craft/img.png"]["mime_type"] == "image/png"
    assert rows["Craft/manual.pdf"]["mime_type"] == "application/pdf"
    assert rows["Craft/plane.md"]["kind"] == "note"
    assert "mime_type" not in rows["Craft/plane.md"] or rows["Craft/plane.md"]["mime_type"] is None


@pytest.mark.parametrize("value", ["maybe", "", "2", "stale"])
def test_stale_filter_rejects_non_booleans(triage_vault: Vault, value: str) -> None:
    with pytest.raises(QueryError, match="not a boolean"):
        list_documents(triage_vault, filters={"stale": value})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        ("Yes", True),
        ("1", True),
        ("false", False),
        ("False", False),
        ("no", False),
        ("NO", False),
        ("0", False),
        (" true ", True),
    ],
)
def test_stale_filter_accepts_boolean_words(triage_vault: Vault, value: str, expected: bool) -> None:
    got = list_documents(triage_vault, filters={"stale": value})
    want = list_documents(triage_vault, filters={"stale": "true" if expected else "false"})
    assert got == want


def test_trust_tier_filter_rejects_unknown_tiers(triage_vault: Vault) -> None:
    with pytest.raises(QueryError, match="not a tier"):
        list_documents(triage_vault, filters={"trust_tier": "trusted"})


def test_okf_keys_are_plain_frontmatter_off_bundle(make_vault, open_vault) -> None:
    """Outside an OKF bundle, status/stale/trust_tier are ordinary frontmatter keys."""
    root = make_vault({k: v for k, v in TRIAGE_FILES.items() if k != "index.md"})
    vault = open_vault(root)
    assert not vault.snapshot.is_bundle
    assert list_documents(vault, filters={"status": "stable"}) == ["Craft/finish.md"]  # no implicit stable
    assert list_documents(vault, filters={"stale": "true"}) == []  # no such key; and no error
    assert list_documents(vault, filters={"stale": "maybe"}) == []
    assert list_documents(vault, filters={"trust_tier": "anything"}) == []


# --- the bundled demo vault's documented facts ------------------------------------------------------

DEMO_STATUS_RAW = {"stable": 19, "missing": 8, "draft": 8, "deprecated": 7, "broken": 1}


def test_demo_vault_counts(demo: Vault) -> None:
    s = demo.stats()
    assert s["okf_bundle"] is True
    assert s["notes"] == 43
    assert s["attachments"] == 2
    assert s["status"] == {"stable": 19 + 8, "draft": 8, "deprecated": 7}  # OKF's index.md is not counted
    assert s["stale"] == 8
    assert s["trust_tier"] == {"human-reviewed": 11, "machine-confirmed": 10, "unverified": 21}
    assert s["frontmatter_errors"] == 1
    assert s["decode_errors"] == 0
    assert s["skipped"] == 0


def test_demo_vault_raw_status_census(demo: Vault) -> None:
    """stable 19 + missing 8 + draft 8 + deprecated 7 + broken YAML 1 = 43."""
    census = {"stable": 0, "missing": 0, "draft": 0, "deprecated": 0, "broken": 0}
    for e in demo.list(Query()).entries:
        if e.frontmatter_error:
            census["broken"] += 1
        elif "status" not in e.frontmatter:
            census["missing"] += 1
        else:
            census[e.frontmatter["status"]] += 1
    assert census == DEMO_STATUS_RAW


DEMO_FILTERS = [
    (
        {"status": "deprecated"},
        [
            "Areas/Craft/Woodworking/Hand Plane Setup (2023).md",
            "Areas/Engineering/Old Postmortem Format.md",
            "Projects/Archive/Billing Rewrite 2024.md",
            "Projects/Archive/Legacy Deploy Script.md",
            "Projects/Archive/Retired/Q3 2024 Roadmap.md",
            "ProjectsOld/Kanban Experiment.md",
            "Resources/Tools/tmux Cheatsheet.md",
        ],
    ),
    (
        {"stale": "true"},
        [
            "Areas/Craft/Woodworking/Shop Safety.md",  # 2025-09-01
            "Areas/Engineering/Oncall Handbook.md",  # 2026-06-01T09:00:00+02:00 (offset datetime)
            "Areas/Team/Team Rituals.md",
            "Projects/Archive/Billing Rewrite 2024.md",
            "Projects/Archive/Legacy Deploy Script.md",
            "Projects/Archive/Retired/Q3 2024 Roadmap.md",
            "Projects/Onboarding Revamp.md",  # stale_after == today (2026-11-29)
            "Resources/Reading List.md",  # yesterday
        ],
    ),
    (
        {"stale": "true", "status": "deprecated"},
        [
            "Projects/Archive/Billing Rewrite 2024.md",
            "Projects/Archive/Legacy Deploy Script.md",
            "Projects/Archive/Retired/Q3 2024 Roadmap.md",
        ],
    ),
    (
        {"tags": "craft", "folder": "Areas/Craft"},
        [
            "Areas/Craft/Woodworking/Finishes Compared.md",
            "Areas/Craft/Woodworking/Hand Plane Setup (2023).md",
            "Areas/Craft/Woodworking/Projects/Walnut Side Table.md",
            "Areas/Craft/Woodworking/Sharpening Chisels.md",
            "Areas/Craft/Woodworking/Shop Safety.md",
        ],
    ),
]


@pytest.mark.parametrize(("spec", "expected"), DEMO_FILTERS)
def test_demo_vault_triage_listings(demo: Vault, spec: dict, expected: list[str]) -> None:
    spec = dict(spec)
    folder = spec.pop("folder", None)
    assert list_documents(demo, folder=folder, filters=spec) == expected


@pytest.mark.parametrize(
    ("path", "status", "stale", "trust"),
    [
        ("People/Ben Okafor.md", "stable", False, "machine-confirmed"),  # stale_after tomorrow
        ("Projects/Onboarding Revamp.md", "stable", True, "machine-confirmed"),  # stale_after today
        ("Areas/Engineering/Incident Template.md", "stable", False, "unverified"),  # naive datetime, no status
        ("Areas/Team/Hiring Loop.md", "draft", False, "machine-confirmed"),  # unparseable stale_after
        ("Areas/Team/1-1 Template.md", "stable", False, "unverified"),  # literal trust_tier ignored
        ("Areas/Team/Team Rituals.md", "stable", True, "human-reviewed"),  # verified: single mapping
        ("Areas/Craft/Woodworking/Finishes Compared.md", "stable", False, "machine-confirmed"),  # flow mapping
        ("Areas/Engineering/Code Review Guidelines.md", "stable", False, "machine-confirmed"),  # "humanish" bot
        ("People/Priya Raman.md", "draft", False, "unverified"),  # verified: []
        ("Inbox/Broken frontmatter.md", "stable", False, "unverified"),  # broken YAML
        ("Inbox/no frontmatter idea.md", "stable", False, "unverified"),
        ("Areas/Engineering/Oncall Handbook.md", "stable", True, "human-reviewed"),
    ],
)
def test_demo_vault_okf_rows(demo: Vault, path: str, status: str, stale: bool, trust: str) -> None:
    row = entry_json(demo.entry(path), demo.clock, demo.snapshot.is_bundle)
    assert (row["status"], row["stale"], row["trust_tier"]) == (status, stale, trust)


def test_demo_vault_excluded_files_are_not_indexed(demo: Vault) -> None:
    everything = set(demo.snapshot.by_path)
    for path in (
        ".hidden-note.md",
        "Archive/Ignored/excluded by obsidian.md",
        "Archive/Ignored",
        "scratch/tmp note.md",
        "scratch",
        ".obsidian",
        ".obsidian/app.json",
    ):
        assert path not in everything, path
    assert not any("should-never-appear" in e.tags for e in demo.snapshot.entries)
    assert demo.list(Query(filters=(("tags", "should-never-appear"),))).total == 0


def test_demo_vault_special_notes(demo: Vault) -> None:
    broken = demo.entry("Inbox/Broken frontmatter.md")
    assert broken.frontmatter_error and "line" in broken.frontmatter_error
    assert broken.frontmatter == {}
    assert demo.entry("Inbox/no frontmatter idea.md").frontmatter == {}
    assert demo.entry("Inbox/no frontmatter idea.md").title == "no frontmatter idea"  # the file name, not its H1
    bom = demo.entry("Resources/Tools/Terminal Setup.md")
    assert bom.frontmatter["title"] == "Terminal Setup" and bom.frontmatter_error is None
    crlf = demo.entry("Areas/Health/Running Log.md")
    assert crlf.frontmatter["title"] == "Running Log" and crlf.frontmatter_error is None
    assert "\r" not in crlf.title
    bold = demo.entry("Projects/Bold Ideas Spec.md")
    assert bold.title == "[draft] Spec for [b]bold[/b] ideas"
    att = {e.path: e for e in demo.list(Query(include_attachments=True, include_notes=False)).entries}
    assert set(att) == {"Resources/attachments/architecture-diagram.png", "Resources/attachments/reading-list.pdf"}
    assert att["Resources/attachments/reading-list.pdf"].mime_type == "application/pdf"
    assert att["Resources/attachments/architecture-diagram.png"].mime_type == "image/png"


def test_demo_vault_folder_boundary(demo: Vault) -> None:
    projects = vault_list_notes(demo, "Projects")
    assert "Projects/Archive/Retired/Q3 2024 Roadmap.md" in projects
    assert not [p for p in projects if p.startswith("ProjectsOld")]
    assert vault_list_notes(demo, "ProjectsOld") == [
        "ProjectsOld/Kanban Experiment.md",
        "ProjectsOld/projects-old-readme.md",
    ]


def test_demo_vault_path_is_the_default(tmp_path: Path) -> None:
    from vaultwatch.core.vault import demo_vault_path

    root = demo_vault_path()
    assert (root / "index.md").is_file()
    assert (root / ".obsidian").is_dir()


def test_demo_vault_link_facts(demo: Vault) -> None:
    """The demo vault's broken links and orphans, seen through the parsed links of indexed notes
    (the hidden and ignored notes that also link to them are not part of the vault)."""
    notes = [e for e in demo.snapshot.entries if e.kind == "note"]
    names = {e.name[:-3].casefold() for e in notes} | {e.path[:-3].casefold() for e in notes}
    names |= {e.name.casefold() for e in demo.snapshot.entries if e.kind == "attachment"}
    targets = {link.target for e in notes for link in e.links if link.kind in ("wiki", "embed") and link.target}
    broken = sorted(t for t in targets if t.casefold().removesuffix(".md") not in names)
    assert broken == ["Quarterly OKRs 2027", "Vendor Contracts"]
    linked = {t.casefold() for t in targets} | {
        link.target.casefold().removesuffix(".md") for e in notes for link in e.links if link.kind == "markdown"
    }
    orphans = sorted(
        e.path
        for e in notes
        if e.name[:-3].casefold() not in linked and e.path[:-3].casefold() not in linked and e.path != "index.md"
    )
    # tmux Cheatsheet is linked only from the hidden note, which is not part of the vault
    assert orphans == ["Inbox/MCP server ideas.md", "Resources/Tools/tmux Cheatsheet.md"]
    deploy = demo.entry("Areas/Engineering/Deploy Runbook.md")
    assert any(link.kind == "embed" and link.target == "architecture-diagram.png" for link in deploy.links)
    index = demo.entry("index.md")
    assert any(link.kind == "markdown" and link.target == "Projects/Atlas Migration.md" for link in index.links)
    assert any(link.kind == "wiki" and link.alias == "Atlas (Postgres 16 + new cluster)" for link in index.links)
