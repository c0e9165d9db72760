"""A rule that names a folder covers what is in it, however the person wrote the folder: with a
trailing slash (`Money/`, as `.vaultwatchignore` and gitignore name a folder), as a bare name
(`Taxes`), with `./` in front, with brackets in its real name (`Finance [2024]/**`, where a glob
would read `[2024]` as one of 2, 0, 4), in another Unicode form; and a restricting glob's match
of a folder (`Journal/*` matches `Journal/2024`) covers that folder's contents. A rule that grants
(`write`, a folder rule `"none"`) never reaches further than it names.

Real parts: `vaultwatch serve --stdio` on a vault on disk with a settings file and the Python `mcp`
client; headless and not asked, a gated change waits as a pending change, so every write into a
covered folder must come back an error with the note's bytes as they were."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH
from mcp_types import Implementation

NFC = unicodedata.normalize("NFC", "Privé")
NFD = unicodedata.normalize("NFD", "Privé")

SETTINGS = f"""
[approve]
mode = "none"
[approve.folders]
"Finance [2024]/**" = "writes"
"Money/" = "writes"
"Taxes" = "writes"
"./Loans/" = "writes"
"Archive/Old [x]" = "writes"
"{NFC}/" = "writes"
"Outbox/*" = "none"
"Outbox/**" = "writes"

[agents."scribe"]
deny = ["Journal [private]/**", "Diary/", "Log/*"]

[agents."filer"]
write = ["Inbox [new]/", "Drop/*"]
"""

# (note, the rule that must hold it) for scribe: each was written at once before
HELD = [
    ("Finance [2024]/budget.md", "Finance [2024]/**"),
    ("Finance [2024]/Q1/plan.md", "Finance [2024]/**"),
    ("Money/m.md", "Money/"),
    ("Taxes/t.md", "Taxes"),
    ("Loans/l.md", "./Loans/"),
    ("Archive/Old [x]/o.md", "Archive/Old [x]"),
    (f"{NFD}/p.md", f"{NFC}/"),  # the folder on disk is NFD, the rule NFC
    ("Journal [private]/diary.md", "Journal [private]/**"),
    ("Diary/d.md", "Diary/"),
    ("Log/2024/l.md", "Log/*"),  # `Log/*` matches the folder Log/2024: what is in it too
    ("Outbox/Sub/o.md", "Outbox/**"),  # "none" on `Outbox/*` grants no more than it names
    ("Linked/budget.md", "Finance [2024]/**"),  # a link to the folder: decided by the real path
]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path / "vault"
    root.mkdir()
    notes = [n for n, _ in HELD if not n.startswith("Linked/")]
    notes += ["Inbox [new]/i.md", "Drop/d.md", "Drop/Sub/s.md", "Outbox/o.md", "free.md"]
    for note in notes:
        (root / note).parent.mkdir(parents=True, exist_ok=True)
        (root / note).write_text(f"# {note}\n")
    os.symlink("Finance [2024]", root / "Linked")
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text(SETTINGS)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(sock_dir),
        "VAULTWATCH_SEMANTIC": "0",
    }
    yield root, env


def stdio(root: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env, cwd=str(ROOT)
    )


def agent(name: str) -> Implementation:
    return Implementation(name=name, version="1")


async def test_a_rule_naming_a_folder_holds_every_write_inside_it(place) -> None:
    root, env = place
    before = tree(root)
    async with Client(stdio(root, env), client_info=agent("scribe")) as client:
        for note, rule in HELD:
            got = await client.call_tool("write", {"path": note, "content": "# agent\n", "overwrite": True})
            said = got.content[0].text
            assert got.is_error, f"{note} written at once, past {rule!r}"
            assert rule in unicodedata.normalize("NFC", said), said  # the refusal names the rule
        free = await client.call_tool("write", {"path": "free.md", "content": "# agent\n", "overwrite": True})
        assert not free.is_error, free.content[0].text  # no rule names it
        outbox = await client.call_tool("write", {"path": "Outbox/o.md", "content": "# agent\n", "overwrite": True})
        assert not outbox.is_error, outbox.content[0].text  # `Outbox/*` = "none" names it
    after = tree(root)
    assert after.pop("free.md") == b"# agent\n" and after.pop("Outbox/o.md") == b"# agent\n"
    before.pop("free.md"), before.pop("Outbox/o.md")
    assert after == before


async def test_a_write_list_grants_a_named_folder_and_no_more(place) -> None:
    root, env = place
    async with Client(stdio(root, env), client_info=agent("filer")) as client:
        for note in ("Inbox [new]/i.md", "Inbox [new]/Later/n.md", "Drop/d.md"):  # named: all of it
            got = await client.call_tool("write", {"path": note, "content": "# filed\n", "overwrite": True})
            assert not got.is_error, (note, got.content[0].text)
        for note in ("Drop/Sub/s.md", "Inbox/i.md", "free.md"):  # `Drop/*` names Sub, not what is in it
            got = await client.call_tool("write", {"path": note, "content": "# filed\n", "overwrite": True})
            assert got.is_error and '[agents."filer"]' in got.content[0].text, note
    assert (root / "Inbox [new]" / "Later" / "n.md").read_text() == "# filed\n"
    assert (root / "Drop" / "Sub" / "s.md").read_text() == "# Drop/Sub/s.md\n"
    assert not (root / "Inbox").exists()


async def test_a_rename_of_a_parent_or_the_folder_itself_is_held(place) -> None:
    root, env = place
    before = tree(root)
    async with Client(stdio(root, env), client_info=agent("scribe")) as client:
        for path, new_path in [
            ("Archive", "Gone"),
            ("Money", "Spent"),
            ("Log/2024", "Old2024"),
            ("free.md", "Diary/x.md"),
        ]:
            got = await client.call_tool("rename", {"path": path, "new_path": new_path})
            assert got.is_error, (path, new_path)
    assert tree(root) == before
