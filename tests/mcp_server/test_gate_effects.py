"""The approval gate decides on effects, not on requests: an agent that tries to get around a
folder rule (moving the folder, a symlinked note, a link rewrite, another Unicode spelling) is
declined, through the real server on a real socket and the real `mcp` client.

Headless (no person at the TUI), a change that needs approval is declined at once: so every
route into a gated folder below must come back declined with nothing changed on disk.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import unicodedata
from pathlib import Path

import pytest
import pytest_asyncio
from mcp_testing import in_own_task, serving, uds_client

from vaultwatch.core.edit.effects import MOVE_TO
from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.approval import ApprovalGate, ApprovalRequested
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault

NFD = unicodedata.normalize("NFD", "Privé")
NFC = unicodedata.normalize("NFC", "Privé")
SETTINGS = (
    "[approve.folders]\n"
    '"Private/**" = "writes"\n'
    '"Team/Secret/**" = "deletes"\n'
    f'"{NFC}/**" = "writes"\n'  # typed in NFC, as a person types it; the folder on disk is NFD
)


def make_vault(root: Path) -> None:
    (root / "Private").mkdir(parents=True)
    (root / "Private" / "secret.md").write_text("---\nstatus: draft\n---\n# Secret\nSee [[a]].\n## Log\n- x\n")
    (root / "Pub").mkdir()
    (root / "Pub" / "a.md").write_text("# A\n")
    (root / "Pub" / "c.md").write_text("# C\n")
    os.symlink("../Private/secret.md", root / "Pub" / "alias.md")
    os.symlink("../Private", root / "Pub" / "dirlink")
    (root / "Team" / "Secret").mkdir(parents=True)
    (root / "Team" / "Secret" / "plan.md").write_text("# Plan\n- step\n")
    (root / "Team" / "open.md").write_text("# Open\n")
    (root / NFD).mkdir()
    (root / NFD / "n.md").write_text("# N\n")


def gated_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Vault:
    """The gated vault in `tmp_path`, its settings and state folders there too, loaded and headless."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    settings = tmp_path / "config" / "vaultwatch" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text(SETTINGS)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "v"
    root.mkdir()
    make_vault(root)
    v = Vault(root)
    v.load()
    approval.configure(v, None)  # as `vaultwatch serve` does: the settings file's rules, headless
    return v


@pytest.fixture
def vault(tmp_path: Path, monkeypatch) -> Vault:
    return gated_vault(tmp_path, monkeypatch)


# One served gated vault per module for the routes that must change nothing (each test's call is
# refused, or waits as a pending change that the person declines afterwards): a vault and a server
# per route were most of these tests' time. Every test starts from the same state as a vault of its
# own would: the same files and bytes, the same index entries, nothing in the journal, nothing
# pending. `declined_only` checks that before each test, and when an earlier test left anything else
# (it failed: a route went through) it builds and serves a new vault, so one failure does not hide
# or cause another.
SERVED = "gate_effects_served"  # their xdist group: the served vault lives on one worker


class ServedGate:
    """A gated vault served on a socket, with a connected client; `fresh()` keeps it pristine."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp_path_factory, self.monkeypatch = tmp_path_factory, monkeypatch
        self.stack: contextlib.AsyncExitStack | None = None

    async def start(self) -> None:
        self.vault = gated_vault(self.tmp_path_factory.mktemp("gated"), self.monkeypatch)
        self.files, self.entries = tree(Path(self.vault.root)), self.vault.snapshot.entries
        folder = tempfile.mkdtemp(prefix="vwg", dir="/tmp")
        self.stack = contextlib.AsyncExitStack()
        self.stack.callback(shutil.rmtree, folder, ignore_errors=True)
        self.stack.callback(self.vault.stop)
        host = await self.stack.enter_async_context(serving(self.vault, folder + "/s.sock"))
        self.client = await self.stack.enter_async_context(in_own_task(uds_client(host.socket_path)))

    def pristine(self) -> bool:
        return (
            tree(Path(self.vault.root)) == self.files
            and self.vault.snapshot.entries == self.entries
            and changes(self.vault) == []
            and pending.store_for(self.vault.root_real).pending() == []
        )

    async def fresh(self) -> tuple[Vault, object]:
        if self.stack is None or not self.pristine():
            await self.close()
            await self.start()
        assert self.pristine()
        return self.vault, self.client

    async def close(self) -> None:
        if self.stack is not None:
            stack, self.stack = self.stack, None
            await stack.aclose()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served_gate(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        served = ServedGate(tmp_path_factory, monkeypatch)
        try:
            yield served
        finally:
            await served.close()


@pytest_asyncio.fixture(loop_scope="module")
async def declined_only(served_gate: ServedGate):
    """The module's served gated vault and its client, in the state every test of it starts from."""
    v, client = await served_gate.fresh()
    yield v, client
    for proposal in pending.store_for(v.root_real).pending():
        pending.decline(v.root_real, proposal.id, "reset between tests", by="human:pytest")


def tree(root: Path) -> dict[str, object]:
    """Every entry under the vault (hidden ones too: the trash) with its bytes or link target."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if rel.startswith(".vaultwatch") or "/.vaultwatch" in rel:
                continue
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = "folder"
            else:
                out[rel] = p.read_bytes()
    return out


def changes(vault: Vault) -> list:
    journal = journal_for(vault)
    return journal.changes() if journal is not None else []


SECTION = {"heading": "Log", "mode": "append", "text": "- agent"}
FM = {"set": {"status": "done"}}
REPLACE = {"content": "# Agent was here\n", "overwrite": True}
EDIT = {"old_text": "# Secret", "new_text": "# Mine"}

# (route, tool, arguments, the rule the refusal must name)
MATRIX = [
    # direct
    ("direct", "write", {"path": "Private/secret.md", **REPLACE}, "Private/**"),
    ("direct", "write", {"path": "Private/new.md", "content": "x\n"}, "Private/**"),
    ("direct", "edit", {"path": "Private/secret.md", **EDIT}, "Private/**"),
    ("direct", "edit", {"path": "Private/secret.md", **SECTION}, "Private/**"),
    ("direct", "update_frontmatter", {"path": "Private/secret.md", **FM}, "Private/**"),
    ("direct", "rename", {"path": "Private/secret.md", "new_path": "Pub/taken.md"}, "Private/**"),
    ("direct", "delete", {"path": "Private/secret.md"}, "Private/**"),
    ("direct", "delete", {"path": "Team/Secret/plan.md"}, "Team/Secret/**"),
    # through a symlinked note
    ("note symlink", "write", {"path": "Pub/alias.md", **REPLACE}, "Private/**"),
    ("note symlink", "edit", {"path": "Pub/alias.md", **EDIT}, "Private/**"),
    ("note symlink", "edit", {"path": "Pub/alias.md", **SECTION}, "Private/**"),
    ("note symlink", "update_frontmatter", {"path": "Pub/alias.md", **FM}, "Private/**"),
    # through a symlinked folder
    ("folder symlink", "write", {"path": "Pub/dirlink/secret.md", **REPLACE}, "Private/**"),
    ("folder symlink", "write", {"path": "Pub/dirlink/new.md", "content": "x\n"}, "Private/**"),
    ("folder symlink", "edit", {"path": "Pub/dirlink/secret.md", **EDIT}, "Private/**"),
    ("folder symlink", "update_frontmatter", {"path": "Pub/dirlink/secret.md", **FM}, "Private/**"),
    ("folder symlink", "rename", {"path": "Pub/dirlink/secret.md", "new_path": "Pub/s.md"}, "Private/**"),
    ("folder symlink", "delete", {"path": "Pub/dirlink/secret.md"}, "Private/**"),
    ("folder symlink", "rename", {"path": "Pub/c.md", "new_path": "Pub/dirlink/c.md"}, "Private/**"),
    # the gated folder renamed out, or something renamed in
    ("folder rename out", "rename", {"path": "Private", "new_path": "Open"}, "Private/**"),
    ("folder rename out", "rename", {"path": "Team/Secret", "new_path": "Loose"}, "Team/Secret/**"),
    ("rename in", "rename", {"path": "Pub/c.md", "new_path": "Private/c.md"}, "Private/**"),
    ("folder rename in", "rename", {"path": "Team", "new_path": "Private/Team"}, "Private/**"),
    # a parent folder renamed
    ("parent rename", "rename", {"path": "Team", "new_path": "Crew"}, "Team/Secret/**"),
    # the folder deleted
    ("folder delete", "delete", {"path": "Private"}, "Private/**"),
    ("folder delete", "delete", {"path": "Team/Secret"}, "Team/Secret/**"),
    ("parent delete", "delete", {"path": "Team"}, "Team/Secret/**"),
    # a rename whose link rewriting reaches into the folder
    ("link rewrite", "rename", {"path": "Pub/a.md", "new_path": "Pub/b.md"}, "Private/**"),
    # another Unicode spelling of the gated folder
    ("NFD spelling", "write", {"path": f"{NFD}/n.md", "content": "# Mine\n", "overwrite": True}, f"{NFC}/**"),
    ("NFD spelling", "edit", {"path": f"{NFD}/n.md", "old_text": "# N", "new_text": "# M"}, f"{NFC}/**"),
    ("NFD spelling", "rename", {"path": NFD, "new_path": "Plain"}, f"{NFC}/**"),
    ("NFD spelling", "delete", {"path": f"{NFD}/n.md"}, f"{NFC}/**"),
    ("NFD spelling", "rename", {"path": "Pub/c.md", "new_path": f"{NFD}/c.md"}, f"{NFC}/**"),
    # refused before the gate is asked (not a way around it either)
    ("NFC spelling", "write", {"path": f"{NFC}/new.md", "content": "x\n"}, "refused: confusable name"),
    ("note symlink", "rename", {"path": "Pub/alias.md", "new_path": "Pub/other.md"}, "refused: symbolic link"),
]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.xdist_group(SERVED)
@pytest.mark.parametrize("route, tool, arguments, rule", MATRIX, ids=[f"{r}-{t}-{a['path']}" for r, t, a, _ in MATRIX])
async def test_every_route_into_a_gated_folder_is_declined_headless(declined_only, route, tool, arguments, rule):
    vault, client = declined_only
    root = Path(vault.root)
    before = tree(root)
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text
    assert result.is_error, f"{route}: {tool} {arguments} was accepted: {text}"
    if rule.startswith("refused: "):
        assert rule.removeprefix("refused: ") in text, text
    else:
        # no one at the TUI: the change waits as a pending change for the person, nothing written
        assert "awaits the person's approval as pending change" in text and "vaultwatch approve" in text, text
        assert f'rule "{rule}"' in text, text  # the refusal names the rule that decided
    assert tree(root) == before
    assert changes(vault) == []


async def test_the_three_step_folder_round_trip_is_stopped_at_its_first_step(vault, sock_dir):
    """Rename Private to Open, edit Open/secret.md, rename it back: today all three went through."""
    root = Path(vault.root)
    before = tree(root)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        moved = await client.call_tool("rename", {"path": "Private", "new_path": "Open"})
        edited = await client.call_tool("edit", {"path": "Open/secret.md", **EDIT})
        back = await client.call_tool("rename", {"path": "Open", "new_path": "Private"})
    assert moved.is_error and edited.is_error and back.is_error
    assert "awaits the person's approval as pending change" in moved.content[0].text
    assert tree(root) == before


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("edit", {"path": "Team/Secret/plan.md", "old_text": "- step", "new_text": "- done"}),  # deletes only
        ("write", {"path": "Pub/new.md", "content": "x\n"}),
        ("rename", {"path": "Pub/c.md", "new_path": "Pub/d.md"}),  # no gated note links to it
        ("rename", {"path": "Team/Secret/plan.md", "new_path": "Team/Secret/later.md"}),  # stays protected
        ("delete", {"path": "Pub/alias.md"}),  # removes the link only: the gated note stays as it is
        ("delete", {"path": "Pub/dirlink"}),  # removes the folder link only: the gated folder stays
    ],
)
async def test_changes_whose_effects_no_rule_covers_still_go_through(vault, sock_dir, tool, arguments):
    secret = (Path(vault.root) / "Private" / "secret.md").read_bytes()
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    assert (Path(vault.root) / "Private" / "secret.md").read_bytes() == secret


class Person:
    """Answers approval requests from another thread, as the TUI would; `meanwhile` runs first."""

    def __init__(self, gate: ApprovalGate, vault: Vault, answer: bool, meanwhile=None):
        self.gate, self.answer, self.meanwhile = gate, answer, meanwhile
        self.seen: list = []
        vault.bus.subscribe(self.on_event)

    def on_event(self, event) -> None:
        if isinstance(event, ApprovalRequested):
            self.seen.append(event.pending)

            def act():
                if self.meanwhile is not None:
                    self.meanwhile()
                self.gate.decide(event.pending.id, self.answer)

            threading.Timer(0.05, act).start()


async def test_the_person_sees_every_file_a_folder_rename_moves_and_approves_exactly_that(vault, sock_dir):
    gate = approval.gate_for(vault)
    gate.attend()
    person = Person(gate, vault, True)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("rename", {"path": "Team", "new_path": "Crew"})
    assert not result.is_error, result.content[0].text
    [pending] = person.seen
    arrivals = {e.path for e in pending.effects if e.change == MOVE_TO}
    assert {"Crew", "Crew/Secret", "Crew/Secret/plan.md", "Crew/open.md"} <= arrivals
    assert pending.decision.rule.pattern == "Team/Secret/**"
    assert (Path(vault.root) / "Crew" / "Secret" / "plan.md").exists()


async def test_a_symlinked_notes_target_is_what_the_person_is_shown(vault, sock_dir):
    gate = approval.gate_for(vault)
    gate.attend()
    person = Person(gate, vault, False)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("update_frontmatter", {"path": "Pub/alias.md", **FM})
    assert result.is_error and "the person declined this change" in result.content[0].text
    [pending] = person.seen
    assert [(e.path, e.via) for e in pending.effects] == [("Private/secret.md", "Pub/alias.md")]


async def test_an_approved_folder_rename_does_not_carry_over_when_the_folder_changed_meanwhile(vault, sock_dir):
    gate = approval.gate_for(vault)
    gate.attend()
    root = Path(vault.root)
    Person(gate, vault, True, meanwhile=lambda: (root / "Private" / "added.md").write_text("# Added\n"))
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("rename", {"path": "Private", "new_path": "Open"})
    assert result.is_error and "revision conflict" in result.content[0].text, result.content[0].text
    assert (root / "Private" / "added.md").exists() and not (root / "Open").exists()


async def test_an_approved_rename_rewrites_the_links_the_person_saw(vault, sock_dir):
    gate = approval.gate_for(vault)
    gate.attend()
    person = Person(gate, vault, True)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("rename", {"path": "Pub/a.md", "new_path": "Pub/b.md"})
    assert not result.is_error, result.content[0].text
    [pending] = person.seen  # one question for the whole change, not one per rewritten note
    assert ("Private/secret.md", "links") in {(e.path, e.change) for e in pending.effects}
    assert "[[b]]" in (Path(vault.root) / "Private" / "secret.md").read_text()
