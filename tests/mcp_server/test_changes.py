"""Change journal, history tool, audit ids and the approval gate over the real server and the real client."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review import approval
from vaultwatch.core.review import pending as pending_changes
from vaultwatch.core.review.approval import ApprovalGate, ApprovalRequested
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.review.revert import revert
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import progress as progress_module


@pytest.fixture
def vault(tmp_path: Path, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n- one\n")
    (root / "Home.md").write_text("See [[Plan]].\n")
    v = Vault(root)
    v.load()
    return v


def disk(vault: Vault, rel: str) -> bytes:
    return (Path(vault.root) / rel).read_bytes()


class Person:
    """Answers approval requests from another thread, as the TUI would (after `delay` seconds)."""

    def __init__(self, gate: ApprovalGate, vault: Vault, answer: bool | None, reason: str = "", delay: float = 0.0):
        self.gate, self.answer, self.reason, self.delay = gate, answer, reason, delay
        self.seen: list = []
        self.unsubscribe = vault.bus.subscribe(self.on_event)

    def on_event(self, event) -> None:
        if isinstance(event, ApprovalRequested):
            self.seen.append(event.pending)
            if self.answer is not None:
                threading.Timer(self.delay, self.gate.decide, (event.pending.id, self.answer, self.reason)).start()


async def test_an_agents_write_is_journaled_with_its_session_and_the_audit_log_carries_the_id(
    vault, sock_dir, tmp_path
):
    audit = tmp_path / "audit.jsonl"
    async with (
        serving(vault, sock_dir / "s.sock", audit_log=str(audit)) as host,
        uds_client(host.socket_path, name="claude-test") as client,
    ):
        result = await client.call_tool("edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- two"})
        assert not result.is_error
        history = await client.call_tool("history", {"path": "Plan.md"})
        rows = history.structured_content["changes"]
        assert rows[0]["who"] == "agent claude-test/1.0" and rows[0]["tool"] == "edit" and rows[0]["session"]
        assert rows[0]["etag"] == result.structured_content["etag"]
        journal = journal_for(vault)
        revert(Writer(vault), journal, rows[0]["id"], actor="human:tester")
        history = await client.call_tool("history", {"path": "Plan.md"})
        rows = history.structured_content["changes"]
        assert (
            rows[0]["kind"] == "revert" and rows[0]["who"] == "human:tester" and rows[0]["revert_of"] == rows[1]["id"]
        )
        assert rows[1]["reverted_by"] == rows[0]["id"]  # the agent can see its change was reverted, and by whom
        read = await client.call_tool("read", {"path": "Plan.md"})
        assert "- one" in read.structured_content["content"]
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    edit = next(line for line in lines if line["tool"] == "edit")
    assert edit["change_ids"] == [rows[1]["id"]]
    assert "change_ids" not in next(line for line in lines if line["tool"] == "history")


async def test_another_agent_reading_history_never_learns_a_session_id(vault, sock_dir):
    """On the socket a session id is what a request carries to act in that session: the whole id in
    `history` let another agent call tools, and answer approval questions, as the writer."""
    async with serving(vault, sock_dir / "s.sock") as host:
        async with uds_client(host.socket_path, name="writer") as writer:
            result = await writer.call_tool("edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- two"})
            assert not result.is_error
        full = journal_for(vault).changes(path="Plan.md")[0].session
        assert full and len(full) > 8
        async with uds_client(host.socket_path, name="other") as other:
            rows = (await other.call_tool("history", {"path": "Plan.md"})).structured_content["changes"]
    assert rows[0]["who"].startswith("agent writer") and rows[0]["session"] == full[:8]


async def test_approve_round_trip_returns_the_normal_answer_with_progress_meanwhile(vault, sock_dir, monkeypatch):
    monkeypatch.setattr(
        progress_module, "HEARTBEAT", 0.2
    )  # a look more often than each second: the person answers sooner
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    gate.attend()
    person = Person(gate, vault, True, delay=0.5)
    progress: list[tuple] = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool(
            "write", {"path": "Plan.md", "content": "# New\n", "overwrite": True}, progress_callback=on_progress
        )
    assert not result.is_error and result.structured_content["changed"]
    assert disk(vault, "Plan.md") == b"# New\n"
    [pending] = person.seen
    assert pending.before == b"# Plan\n- one\n" and pending.after == b"# New\n" and pending.operation == "write"
    waited = [p for p in progress if "approve" in (p[2] or "")]
    assert waited and gate.timeout <= waited[0][1] <= gate.timeout + 1  # the call's second the wait would end


async def test_deny_round_trip_is_a_tool_error_with_the_reason_and_nothing_changes(vault, sock_dir):
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    gate.attend()
    Person(gate, vault, False, "not this note")
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("rename", {"path": "Plan.md", "new_path": "Old.md"})
        assert result.is_error
        assert result.content[0].text == "Error: the person declined this change: not this note"
        result = await client.call_tool("edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- x"})
        assert result.content[0].text == "Error: the person declined this change: not this note"
    assert disk(vault, "Plan.md") == b"# Plan\n- one\n" and disk(vault, "Home.md") == b"See [[Plan]].\n"
    assert journal_for(vault).changes() == []


@pytest.mark.timing
async def test_no_decision_in_time_keeps_it_as_a_pending_change(vault, sock_dir):
    """Nobody decided: the agent is never told the person declined it; it waits for the person as
    it would have with no TUI open."""
    gate = ApprovalGate("writes", timeout=0.5)
    approval.attach(vault, gate)
    gate.attend()
    person = Person(gate, vault, None)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        started = time.monotonic()
        result = await client.call_tool("write", {"path": "New.md", "content": "x\n"})
    text = result.content[0].text
    assert result.is_error and "the person declined" not in text, text
    assert "not applied yet" in text and "did not decide it (no decision within 0.5 s in vaultwatch's TUI)" in text
    assert 0.5 <= time.monotonic() - started < 5  # answered at the timeout (10x: load), not left waiting
    assert len(person.seen) == 1
    assert not (Path(vault.root) / "New.md").exists() and gate.pending() == []
    [kept] = pending_changes.store_for(vault.root_real).pending()
    assert kept.path == "New.md" and f"pending change {kept.id}" in text


@pytest.mark.timing
async def test_unattended_gate_answers_at_once_saying_how_to_approve(vault, sock_dir):
    approval.attach(vault, ApprovalGate("deletes", timeout=8))
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        started = time.monotonic()
        result = await client.call_tool("delete", {"path": "Plan.md"})
        assert time.monotonic() - started < 4  # at once, not after the approval timeout
        assert result.is_error and "awaits the person's approval as pending change" in result.content[0].text
        assert "vaultwatch approve" in result.content[0].text
        written = await client.call_tool("write", {"path": "New.md", "content": "x\n"})  # deletes only
        assert not written.is_error
    assert (Path(vault.root) / "Plan.md").exists()


def test_folder_rules_override_the_mode(vault):
    gate = ApprovalGate("none", folders=[("Journal/**", "writes"), ("Archive/**", "deletes")])
    assert gate.needs("write", "Journal/2026/a.md") and not gate.needs("write", "Plan.md")
    assert gate.needs("delete", "Archive/x.md") and not gate.needs("edit", "Archive/x.md")
    assert gate.needs("rename", "Plan.md", dest="Journal/Plan.md")  # a move into a guarded folder waits


def test_settings_file_rules(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text('[approve]\nmode = "deletes"\ntimeout = 30\n[approve.folders]\n"Journal/**" = "writes"\n')
    assert approval.load_rules(str(path)) == ("deletes", [("Journal/**", "writes")], 30.0)
    path.write_text('[approve]\nmode = "sometimes"\n')
    with pytest.raises(Exception, match="approve.mode must be one of"):
        approval.load_rules(str(path))
    assert approval.load_rules(str(tmp_path / "none.toml")) == (None, [], None)


class EditsMeanwhile:
    """While a change waits for approval, someone edits the note outside vaultwatch; then the
    person approves (what they approved is no longer what is on disk)."""

    def __init__(self, gate: ApprovalGate, vault: Vault, rel: str, outside: bytes):
        self.gate, self.rel, self.outside = gate, rel, outside
        self.unsubscribe = vault.bus.subscribe(self.on_event)
        self.root = Path(vault.root)

    def on_event(self, event) -> None:
        if isinstance(event, ApprovalRequested):

            def act():
                (self.root / self.rel).write_bytes(self.outside)
                self.gate.decide(event.pending.id, True)

            threading.Timer(0.05, act).start()


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- agent"}),
        ("write", {"path": "Plan.md", "content": "# Agent\n", "overwrite": True}),
        ("update_frontmatter", {"path": "Plan.md", "set": {"status": "done"}}),
        ("delete", {"path": "Plan.md"}),
        ("delete", {"path": "Plan.md", "permanent": True, "confirm_path": "Plan.md"}),
    ],
)
async def test_an_outside_edit_while_a_change_waits_is_not_overwritten_on_approve(vault, sock_dir, tool, arguments):
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    gate.attend()
    EditsMeanwhile(gate, vault, "Plan.md", b"# Plan\n- the person's own line\n")
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error and "revision conflict" in result.content[0].text, result.content[0].text
    assert "changed by someone else" in result.content[0].text
    assert disk(vault, "Plan.md") == b"# Plan\n- the person's own line\n"
    assert not any(c.kind == "change" for c in journal_for(vault).changes())


class LooksAtTheDisk:
    """While a change waits for approval: which of the write path's temporary files exist, what
    they hold, whether the note's folder exists, and what the leftover cleaner (told that
    everything is old) would remove; then the person answers (or not)."""

    def __init__(self, gate: ApprovalGate, vault: Vault, answer: bool | None, folder: str):
        self.gate, self.vault, self.answer, self.folder = gate, vault, answer, folder
        self.temps: dict[str, bytes] = {}
        self.cleaned: list[str] | None = None
        self.after: bytes | None = None
        self.folder_there: bool | None = None
        vault.bus.subscribe(self.on_event)

    def on_event(self, event) -> None:
        if isinstance(event, ApprovalRequested):
            threading.Timer(0.05, self.look, (event.pending,)).start()

    def look(self, pending) -> None:
        from vaultwatch.core.edit.atomic import clean_temp_files

        self.after = pending.after
        root = Path(self.vault.root)
        self.temps = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob(".vaultwatch-*.tmp")}
        self.folder_there = (root / self.folder).is_dir()
        self.cleaned = clean_temp_files(self.vault.root_real, older_than=time.time() + 60)
        if self.answer is not None:
            self.gate.decide(pending.id, self.answer, "" if self.answer else "no")


def temp_files(vault: Vault) -> list[str]:
    return [p.name for p in Path(vault.root).rglob(".vaultwatch-*")]


@pytest.mark.parametrize("answer", [True, False, None])
@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "Plan.md", "content": "# Agent\n", "overwrite": True},  # a replace
        {"path": "Inbox/New.md", "content": "# New\n"},  # a create in a new folder
    ],
)
async def test_a_waiting_change_makes_no_folder_before_the_key(vault, sock_dir, answer, arguments):
    gate = ApprovalGate("writes", timeout=1.0)
    approval.attach(vault, gate)
    gate.attend()
    folder = arguments["path"].rpartition("/")[0]
    person = LooksAtTheDisk(gate, vault, answer, folder)
    before = {"Plan.md": disk(vault, "Plan.md")}
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool("write", arguments)
    # while it waited: the person saw the new bytes. Into an existing folder they wait in one synced,
    # hidden temporary file beside the note (the key then only switches it in), which the cleaner of
    # a killed run's leftovers does not take; a create into a new folder makes neither the folder nor
    # the file before the gate lets it through
    assert person.after == arguments["content"].encode()
    if folder:
        assert person.temps == {} and not person.folder_there
    else:
        assert list(person.temps.values()) == [arguments["content"].encode()]
    assert person.cleaned == []
    assert temp_files(vault) == []  # approved, denied or timed out: nothing left beside the note
    target = Path(vault.root) / arguments["path"]
    if answer:
        assert not result.is_error and target.read_bytes() == arguments["content"].encode()
    else:
        why = "the person declined this change: no" if answer is False else "did not decide it (no decision within 1 s"
        assert result.is_error and why in result.content[0].text
        if arguments["path"] in before:
            assert target.read_bytes() == before["Plan.md"]
        else:  # nor the folder made for it
            assert not target.parent.exists()


def test_the_cleaner_still_removes_a_killed_writes_leftover(vault):
    """A temporary file nobody holds (what kill -9 leaves) is removed; one a live write holds is not."""
    import os

    from vaultwatch.core.disk.safeio import locate
    from vaultwatch.core.edit.atomic import clean_temp_files, write_temp

    with locate(vault.root_real, "Plan.md") as loc:
        held = write_temp(loc, b"waiting\n", mode=None)
        try:
            left = Path(vault.root) / ".vaultwatch-0123456789abcdef.tmp"
            left.write_bytes(b"left by a killed run\n")
            assert clean_temp_files(vault.root_real, older_than=time.time() + 60) == [left.name]
            assert os.path.exists(os.path.join(vault.root, held.name))
        finally:
            held.discard()
    assert temp_files(vault) == []
