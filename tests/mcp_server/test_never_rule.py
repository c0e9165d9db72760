"""A folder rule "never" refuses every agent's change to what it matches, named agents with tables of
their own included (`[agents.default]` covers only agents without one), through the real server on a
real socket and the real `mcp` client: every way around it (moving the folder or its parent,
renaming into or out of it, deleting it, a link rewrite reaching into it, a symlinked note, another
Unicode spelling) is refused, naming the rule, with nothing written and nothing left pending.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import unicodedata
from pathlib import Path

import pytest
import pytest_asyncio
from mcp_testing import in_own_task, serving, uds_client

from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault

NFD = unicodedata.normalize("NFD", "Modèles")
NFC = unicodedata.normalize("NFC", "Modèles")
SETTINGS = (
    "[approve]\n"
    'mode = "none"\n'
    "[approve.folders]\n"
    '"Templates/Open/**" = "none"\n'  # first match wins: this subfolder is open to agents
    '"Templates/**" = "never"\n'
    '"Team/Vault/**" = "never"\n'
    f'"{NFC}/**" = "never"\n'  # typed in NFC; the folder on disk is NFD
    "[agents.default]\n"
    'deny = ["Private/**"]\n'
    "[agents.scribe]\n"  # a table of its own, writing anywhere unasked
    'approve = "none"\n'
    '[agents."ts-helper"]\n'  # a table of its own, every change asked
    'approve = "writes"\n'
)
AGENTS = ["scribe", "ts-helper", "pytest-agent"]  # two with tables of their own, one under the default


def make_vault(root: Path) -> None:
    (root / "Templates" / "Open").mkdir(parents=True)
    (root / "Templates" / "Album Template.md").write_text("# Album\nrating:\nSee [[a]].\n")
    (root / "Templates" / "Open" / "o.md").write_text("# O\n")
    (root / "Notes").mkdir()
    (root / "Notes" / "a.md").write_text("# A\n")
    (root / "Notes" / "c.md").write_text("# C\n")
    os.symlink("../Templates/Album Template.md", root / "Notes" / "alias.md")
    (root / "Team" / "Vault").mkdir(parents=True)
    (root / "Team" / "Vault" / "v.md").write_text("# V\n")
    (root / "Team" / "open.md").write_text("# Open\n")
    (root / NFD).mkdir()
    (root / NFD / "n.md").write_text("# N\n")


def tree(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if rel.startswith(".vaultwatch"):
                continue
            out[rel] = ("link", os.readlink(p)) if p.is_symlink() else "folder" if p.is_dir() else p.read_bytes()
    return out


class Served:
    """The vault served on a socket with one client per agent; rebuilt when a test changed it."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp_path_factory, self.monkeypatch = tmp_path_factory, monkeypatch
        self.stack: contextlib.AsyncExitStack | None = None

    async def start(self) -> None:
        base = self.tmp_path_factory.mktemp("never")
        self.monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
        settings = base / "config" / "vaultwatch" / "settings.toml"
        settings.parent.mkdir(parents=True)
        settings.write_text(SETTINGS)
        self.monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
        make_vault(base / "v")
        self.vault = Vault(base / "v")
        self.vault.load()
        approval.configure(self.vault, None)  # as `vaultwatch serve` does: the settings file's rules, headless
        self.files = tree(Path(self.vault.root))
        folder = tempfile.mkdtemp(prefix="vwn", dir="/tmp")
        self.stack = contextlib.AsyncExitStack()
        self.stack.callback(shutil.rmtree, folder, ignore_errors=True)
        self.stack.callback(self.vault.stop)
        host = await self.stack.enter_async_context(serving(self.vault, folder + "/s.sock"))
        self.clients = {
            name: await self.stack.enter_async_context(in_own_task(uds_client(host.socket_path, name=name)))
            for name in AGENTS
        }

    def pristine(self) -> bool:
        journal = journal_for(self.vault)
        return (
            tree(Path(self.vault.root)) == self.files
            and (journal is None or journal.changes() == [])
            and pending.store_for(self.vault.root_real).pending() == []
        )

    async def close(self) -> None:
        if self.stack is not None:
            stack, self.stack = self.stack, None
            await stack.aclose()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        it = Served(tmp_path_factory, monkeypatch)
        try:
            yield it
        finally:
            await it.close()


@pytest_asyncio.fixture(loop_scope="module")
async def fresh(served: Served) -> Served:
    if served.stack is None or not served.pristine():
        await served.close()
        await served.start()
    return served


EDIT = {"old_text": "rating:", "new_text": "rating: 5"}

# (route, tool, arguments, the rule the refusal must name)
ROUTES = [
    ("direct", "edit", {"path": "Templates/Album Template.md", **EDIT}, "Templates/**"),
    ("direct", "write", {"path": "Templates/new.md", "content": "x\n"}, "Templates/**"),
    ("direct", "update_frontmatter", {"path": "Templates/Album Template.md", "set": {"a": 1}}, "Templates/**"),
    ("direct", "delete", {"path": "Templates/Album Template.md"}, "Templates/**"),
    ("folder delete", "delete", {"path": "Templates"}, "Templates/**"),
    ("folder rename", "rename", {"path": "Templates", "new_path": "Old"}, "Templates/**"),
    ("rename out", "rename", {"path": "Templates/Album Template.md", "new_path": "Notes/x.md"}, "Templates/**"),
    ("rename in", "rename", {"path": "Notes/c.md", "new_path": "Templates/c.md"}, "Templates/**"),
    ("folder rename in", "rename", {"path": "Notes", "new_path": "Templates/Notes"}, "Templates/**"),
    ("parent rename", "rename", {"path": "Team", "new_path": "Crew"}, "Team/Vault/**"),
    ("parent delete", "delete", {"path": "Team"}, "Team/Vault/**"),
    ("link rewrite", "rename", {"path": "Notes/a.md", "new_path": "Notes/b.md"}, "Templates/**"),
    ("note symlink", "edit", {"path": "Notes/alias.md", **EDIT}, "Templates/**"),
    ("NFD spelling", "write", {"path": f"{NFD}/n.md", "content": "# M\n", "overwrite": True}, f"{NFC}/**"),
    ("NFD spelling", "rename", {"path": NFD, "new_path": "Plain"}, f"{NFC}/**"),
    ("NFD spelling", "rename", {"path": "Notes/c.md", "new_path": f"{NFD}/c.md"}, f"{NFC}/**"),
]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("route, tool, arguments, rule", ROUTES, ids=[f"{r}-{t}-{a['path']}" for r, t, a, _ in ROUTES])
async def test_never_refuses_every_agent_every_route(fresh: Served, agent, route, tool, arguments, rule) -> None:
    root = Path(fresh.vault.root)
    result = await fresh.clients[agent].call_tool(tool, arguments)
    text = result.content[0].text
    assert result.is_error, f"{agent} {route}: {tool} {arguments} was accepted: {text}"
    assert f'rule "{rule}" = "never"' in text and "refuses every agent's change" in text, text
    assert "pending change" not in text, text  # refused, never put to the person to approve
    assert tree(root) == fresh.files
    assert pending.store_for(fresh.vault.root_real).pending() == []


@pytest.mark.asyncio(loop_scope="module")
async def test_an_earlier_rule_opens_a_subfolder_and_other_folders_stay_open(fresh: Served) -> None:
    client = fresh.clients["scribe"]
    opened = await client.call_tool("edit", {"path": "Templates/Open/o.md", "old_text": "# O", "new_text": "# P"})
    assert not opened.is_error, opened.content[0].text
    other = await client.call_tool("edit", {"path": "Notes/c.md", "old_text": "# C", "new_text": "# D"})
    assert not other.is_error, other.content[0].text
    assert (Path(fresh.vault.root) / "Notes" / "c.md").read_text() == "# D\n"
