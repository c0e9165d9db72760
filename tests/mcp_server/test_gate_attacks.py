"""More routes an adversarial agent tries around a gated folder (issue 29), through the real
server on a real socket and the real `mcp` client, headless with `[approve.folders]
"Private/**" = "writes"` (test_gate_effects's vault: Pub/alias.md links to the gated note,
Pub/dirlink to the gated folder).

Each route must end declined or refused with the gated folder byte for byte as it was; the
outside process's moves (a symlink swapped in while a change waits for the person) are made
from another thread while the server holds the change at the gate, the one moment a check
and its write are apart.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_testing import ROOT, serving, uds_client
from test_gate_effects import EDIT, FM, REPLACE, SECTION, Person, changes, tree
from test_gate_effects import declined_only as declined_only  # the served gated vault, as every test found it
from test_gate_effects import served_gate as served_gate  # (one per module)
from test_gate_effects import vault as vault  # the gated vault fixture

from vaultwatch.core.review import approval
from vaultwatch.core.vault import Vault


def gated(root: Path) -> dict[str, object]:
    """The gated folder's entries and bytes."""
    return {k: v for k, v in tree(root).items() if k == "Private" or k.startswith("Private/")}


# path spellings that name the gated note (or a new note beside it) in another way
SPELLINGS = [
    "Pub/../Private/secret.md",
    "./Private/secret.md",
    "Private/./secret.md",
    "Private//secret.md",
    "/Private/secret.md",
    "Private/secret.md/",
    "Private\\secret.md",
    "Private /secret.md",
    "Private./secret.md",
    "Private/secret.md ",
    "Private/secret.md.",
    "Pub/dirlink/../dirlink/secret.md",
    "Pub/dirlink//secret.md",
    "Pub/./dirlink/secret.md",
]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.xdist_group("gate_attacks_served")  # the module's served vault lives on one worker
@pytest.mark.parametrize("spelled", SPELLINGS)
@pytest.mark.parametrize(
    "tool, extra",
    [("write", REPLACE), ("edit", EDIT), ("update_frontmatter", FM), ("edit", SECTION), ("delete", {})],
    ids=["write", "edit", "frontmatter", "section", "delete"],
)
async def test_every_spelling_of_a_gated_path_is_declined_or_refused(declined_only, spelled, tool, extra):
    vault, client = declined_only
    root = Path(vault.root)
    before = tree(root)
    result = await client.call_tool(tool, {"path": spelled, **extra})
    assert result.is_error, f"{tool} {spelled!r} was accepted: {result.content[0].text}"
    assert tree(root) == before
    assert [c for c in changes(vault) if c.kind != "outside"] == []


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("write", {"path": "Pub/h.md", **REPLACE}),
        ("edit", {"path": "Pub/h.md", **EDIT}),
        ("edit", {"path": "Pub/h.md", **SECTION}),
        ("update_frontmatter", {"path": "Pub/h.md", **FM}),
        ("rename", {"path": "Pub/h.md", "new_path": "Pub/h2.md"}),
        ("rename", {"path": "Pub/a.md", "new_path": "Pub/b.md"}),  # its link rewrite reaches the gated inode
    ],
)
async def test_a_hard_link_to_a_gated_note_never_changes_the_gated_bytes(vault: Vault, sock_dir, tool, arguments):
    """Pub/h.md is a hard link to Private/secret.md (one inode, two names): whatever the agent does
    through the ungated name, the gated note's bytes and inode stay as they are."""
    root = Path(vault.root)
    os.link(root / "Private" / "secret.md", root / "Pub" / "h.md")
    vault.refresh_paths(["Pub/h.md"])
    secret = root / "Private" / "secret.md"
    data, ino = secret.read_bytes(), secret.stat().st_ino
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool(tool, arguments)
    assert secret.read_bytes() == data and secret.stat().st_ino == ino, result.content[0].text
    if tool != "rename":  # (renaming the ungated name, or a rewrite elsewhere, leaves the inode alone)
        assert result.is_error, result.content[0].text


def _note_link(root: Path) -> None:
    _swap(root / "Pub" / "c.md", "../Private/secret.md")


def _folder_link(root: Path) -> None:
    _swap(root / "Pub" / "sub", "../Private")


def _hard_link(root: Path) -> None:
    tmp = root / "Pub" / "c.md.swap"
    os.link(root / "Private" / "secret.md", tmp)
    os.rename(tmp, root / "Pub" / "c.md")


NEW = {"content": "# Agent\n", "overwrite": True}


@pytest.mark.parametrize(
    "tool, arguments, swap",
    [
        # the note the person approved becomes a link to the gated note
        ("write", {"path": "Pub/c.md", **NEW}, _note_link),
        ("edit", {"path": "Pub/c.md", "old_text": "# C", "new_text": "# Agent"}, _note_link),
        ("update_frontmatter", {"path": "Pub/c.md", "set": {"by": "Agent"}}, _note_link),
        ("write", {"path": "Pub/c.md", **NEW}, _hard_link),
        # the folder the person approved a change in becomes a link to the gated folder
        ("write", {"path": "Pub/sub/c.md", **NEW}, _folder_link),
        ("write", {"path": "Pub/sub/new.md", "content": "# Agent\n"}, _folder_link),
        ("edit", {"path": "Pub/sub/c.md", "old_text": "# C", "new_text": "# Agent"}, _folder_link),
        ("rename", {"path": "Pub/c.md", "new_path": "Pub/sub/d.md"}, _folder_link),
        ("delete", {"path": "Pub/sub/c.md"}, _folder_link),
    ],
    ids=[
        "write-note",
        "edit-note",
        "frontmatter-note",
        "write-hardlink",
        "write-folder",
        "create-folder",
        "edit-folder",
        "rename-into-folder",
        "delete-folder",
    ],
)
async def test_a_link_swapped_in_while_the_change_waits_is_not_followed(vault: Vault, sock_dir, tool, arguments, swap):
    """Every change waits for the person (mode "writes", a person at the TUI). While the agent's
    change of an ungated note waits, an outside process swaps the note (or its folder) for a
    link into the gated folder; the person approves what they were shown. The change must not
    follow the link: the gated folder stays byte for byte (refused, or the link itself replaced)."""
    root = Path(vault.root)
    (root / "Pub" / "sub").mkdir()
    (root / "Pub" / "sub" / "c.md").write_text("# C\n")
    (root / "Private" / "c.md").write_text("# C\n")  # the same bytes: an etag check alone would pass
    vault.refresh_paths(["Pub/sub", "Pub/sub/c.md", "Private/c.md"])
    before = gated(root)
    gate = approval.configure(vault, "writes")
    gate.attend()
    person = Person(gate, vault, True, meanwhile=lambda: swap(root))
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool(tool, arguments)
    assert person.seen, "the change did not wait for the person: nothing was raced"
    assert gated(root) == before, result.content[0].text
    assert all(".trash" not in p or "Private" not in p for p in tree(root)), result.content[0].text


def _swap(path: Path, link_to: str) -> None:
    """An outside process replaces `path` by a symlink, atomically (rename over it)."""
    tmp = path.with_name(path.name + ".swap")
    os.symlink(link_to, tmp)
    if path.is_dir() and not path.is_symlink():
        aside = path.with_name(path.name + ".aside")
        os.rename(path, aside)
    os.rename(tmp, path)


@pytest.mark.parametrize(
    "steps",
    [
        # a new note written where no rule looks, then moved in
        [
            ("write", {"path": "Pub/new.md", "content": "# New\n"}),
            ("rename", {"path": "Pub/new.md", "new_path": "Private/new.md"}),
        ],
        [
            ("write", {"path": "Pub/new.md", "content": "# New\n"}),
            ("rename", {"path": "Pub/new.md", "new_path": "Pub/../Private/new.md"}),
        ],
        [
            ("write", {"path": "Pub/new.md", "content": "# New\n"}),
            ("rename", {"path": "Pub/new.md", "new_path": "Pub/dirlink/new.md"}),
        ],
        # a gated note moved into the trash by hand, or by name
        [("rename", {"path": "Private/secret.md", "new_path": ".trash/secret.md"})],
        [("rename", {"path": "Private", "new_path": ".trash/Private"})],
        # a note deleted (to the trash) and then "restored" into the gated folder
        [("delete", {"path": "Pub/c.md"}), ("rename", {"path": ".trash/Pub/c.md", "new_path": "Private/c.md"})],
        [("delete", {"path": "Pub/c.md"}), ("rename", {"path": ".trash/c.md", "new_path": "Private/c.md"})],
    ],
    ids=[
        "new-then-in",
        "new-then-in-dotdot",
        "new-then-in-dirlink",
        "note-to-trash",
        "folder-to-trash",
        "trash-restore-in",
        "trash-restore-in-flat",
    ],
)
async def test_moving_into_the_gated_folder_or_its_note_into_the_trash_is_declined(vault: Vault, sock_dir, steps):
    root = Path(vault.root)
    before = gated(root)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        results = [await client.call_tool(tool, args) for tool, args in steps]
    last = results[-1]
    assert last.is_error, f"{steps[-1]} was accepted: {last.content[0].text}"
    assert gated(root) == before


@pytest.mark.parametrize(
    "arguments, swap",
    [
        ({"path": "Pub/c.md", **NEW}, _note_link),
        ({"path": "Pub/c.md", **NEW}, _hard_link),
        ({"path": "Pub/sub/c.md", **NEW}, _folder_link),
        ({"path": "Pub/sub/new.md", "content": "# Agent\n"}, _folder_link),
    ],
    ids=["note-link", "hard-link", "folder-link", "create-in-folder-link"],
)
async def test_a_pending_change_approved_after_a_link_swap_is_refused(vault: Vault, sock_dir, arguments, swap):
    """Headless, every write becomes a pending change; before the person runs `vaultwatch approve`
    (a real process), an outside process swaps the note or its folder for a link into the gated
    folder. The approval is bound to what the person was shown: refused, the gated folder unchanged."""
    root = Path(vault.root)
    (root / "Pub" / "sub").mkdir()
    (root / "Pub" / "sub" / "c.md").write_text("# C\n")
    (root / "Private" / "c.md").write_text("# C\n")
    vault.refresh_paths(["Pub/sub", "Pub/sub/c.md", "Private/c.md"])
    before = gated(root)
    approval.configure(vault, "writes")  # no one at the TUI: the change waits as a pending change
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("write", arguments)
        found = re.search(r"pending change (\d+)", result.content[0].text)
        assert result.is_error and found, result.content[0].text
        swap(root)
        done = approve_cli(root, found.group(1))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "changed since the change was proposed" in done.stderr or "which the person did not approve" in done.stderr
    assert gated(root) == before, done.stderr


def approve_cli(root: Path, pid: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "approve", pid, str(root)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_a_pending_change_made_after_the_state_folder_was_removed_can_be_approved(vault: Vault, sock_dir):
    """The pending-changes file is removed while the server runs (the person cleans the state
    folder; a test's temporary folder goes): the next pending change is written to the file
    `vaultwatch approve` reads, not through the server's old connection into the deleted file."""
    root = Path(vault.root)
    approval.configure(vault, "writes")
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        first = await client.call_tool("write", {"path": "Pub/c.md", **NEW})
        assert first.is_error and "pending change 1" in first.content[0].text, first.content[0].text
        shutil.rmtree(Path(os.environ["XDG_STATE_HOME"]) / "vaultwatch" / "pending")
        second = await client.call_tool("write", {"path": "Pub/c.md", **NEW})
        found = re.search(r"pending change (\d+)", second.content[0].text)
        assert second.is_error and found, second.content[0].text
        done = approve_cli(root, found.group(1))
    assert done.returncode == 0, done.stderr
    assert (root / "Pub" / "c.md").read_text() == "# Agent\n"


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("delete", {"path": "Pub/dirlink/"}),
        ("delete", {"path": "Pub/dirlink/."}),
        ("delete", {"path": "Pub/dirlink/secret.md/.."}),
        ("rename", {"path": "Pub/dirlink/", "new_path": "Pub/moved"}),
        ("rename", {"path": "Pub/dirlink/.", "new_path": "Pub/moved"}),
        ("rename", {"path": "Pub", "new_path": "Pub2"}),  # holds a link to the gated note and one to its folder
        ("delete", {"path": "Pub"}),
        ("write", {"path": ".vaultwatchignore", "content": "Private/\n"}),
        ("write", {"path": ".obsidian/app.json", "content": '{"userIgnoreFilters": ["Private/"]}\n'}),
    ],
)
async def test_a_folder_link_named_as_a_folder_never_moves_or_removes_the_gated_folder(
    vault: Vault, sock_dir, tool, arguments
):
    """A trailing slash or dot on a folder link must not make the gated folder behind it the thing
    renamed or deleted; moving or deleting the folder that holds the links moves only the links;
    the ignore files that would hide the gated folder from the index are not the agent's to write."""
    root = Path(vault.root)
    before = gated(root)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool(tool, arguments)
    assert gated(root) == before, result.content[0].text
    assert not any(p.startswith(".trash/") and "secret" in p for p in tree(root) if not os.path.islink(root / p))
    if tool == "write":
        assert result.is_error, result.content[0].text
