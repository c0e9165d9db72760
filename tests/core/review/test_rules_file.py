"""The settings file as it is now (core.review.approval.RulesFile, read by the gate at every
decision): an edit is seen at the next decision whatever it changed of the file's stat, a file that
no longer parses keeps the guard closed, and a file an editor's save leaves gone or empty for a
moment is not taken for "no rules". The real gate over a real vault and the real write path."""

from __future__ import annotations

import os
import threading
import time
import unicodedata
from pathlib import Path

import pytest

from vaultwatch.core.edit.hooks import Caller, calling
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.errors import RulesUnreadable
from vaultwatch.core.events import IndexProblem
from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.agentrules import RuleRefused
from vaultwatch.core.review.approval import RulesChanged, RulesFile
from vaultwatch.core.vault import Vault

READ_ONLY = "[agents.bot]\nread_only = true\n"


@pytest.fixture
def settings(tmp_path: Path) -> Path:
    return tmp_path / "settings.toml"


def test_an_edit_is_seen_at_the_next_look_whatever_it_changed(settings: Path) -> None:
    settings.write_text('[approve]\nmode = "writes"\n')
    rules = RulesFile(str(settings), None)
    assert rules.current().mode == "writes"
    settings.write_text('[approve]\nmode = "delete"\n')  # the same size, the same inode
    assert rules.current().problem is not None
    stat = settings.stat()
    settings.write_text('[approve]\nmode = "writes"\n')
    os.utime(settings, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # its modification time put back
    assert rules.current() == approval.GateRules(mode="writes")
    settings.with_name("new.toml").write_text(READ_ONLY)
    os.replace(settings.with_name("new.toml"), settings)  # an editor's save by rename: another inode
    assert rules.current().agents.for_name("bot").read_only


def test_a_file_that_no_longer_parses_keeps_the_last_rules_with_its_problem(settings: Path) -> None:
    settings.write_text(READ_ONLY)
    rules = RulesFile(str(settings), None)
    assert rules.current().problem is None
    settings.write_text("[agents.bot\nread_only = true\n")
    broken = rules.current()
    assert broken.problem is not None and str(settings) in broken.problem
    assert broken.agents.for_name("bot").read_only  # (the views still show the last rules)
    settings.write_text('[agents.bot]\nread_only = "yes"\n')  # parses, but is no rule
    assert "read_only must be true or false" in (rules.current().problem or "")
    settings.unlink()
    settings.mkdir()
    assert rules.current().problem is not None


def test_a_file_gone_or_emptied_for_a_moment_keeps_its_rules(settings: Path, monkeypatch) -> None:
    monkeypatch.setattr(approval, "RACY_NS", 300_000_000)
    settings.write_text(READ_ONLY)
    rules = RulesFile(str(settings), None)
    assert rules.current().agents.for_name("bot").read_only
    os.rename(settings, settings.with_name("settings.toml~"))  # an editor's save, halfway
    assert rules.current().agents.for_name("bot").read_only
    settings.write_text("")  # (a save that truncates first)
    assert rules.current().agents.for_name("bot").read_only
    time.sleep(0.35)
    assert not rules.current().agents  # an empty file for good: no rules
    settings.write_text(READ_ONLY)
    assert rules.current().agents
    settings.unlink()
    assert rules.current().agents
    time.sleep(0.35)
    assert not rules.current().agents  # removed for good: the person's choice


def test_a_decision_during_an_in_place_save_never_sees_no_rules(settings: Path) -> None:
    """An editor that saves in place truncates the file, then writes it. A decision that stats the
    file before the truncation and reads it after reads nothing: that is a save under way, never a
    file that says "no rules". One thread saves the same rules over and over while another decides."""
    settings.write_text(READ_ONLY)
    rules = RulesFile(str(settings), None)
    assert rules.current().agents.rules["bot"].read_only
    stop = threading.Event()

    def save() -> None:  # in place: the same inode, truncated (O_TRUNC), then written
        while not stop.is_set():
            fd = os.open(settings, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, READ_ONLY.encode())
            os.close(fd)
            time.sleep(0.0005)

    saver = threading.Thread(target=save)
    saver.start()
    loose = looks = 0
    try:
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            got = rules.current()
            looks += 1
            bot = got.agents.rules.get("bot")
            if got.problem is None and (bot is None or not bot.read_only):
                loose += 1
    finally:
        stop.set()
        saver.join()
    assert looks > 1000 and loose == 0, (looks, loose)


def test_a_fifo_in_place_of_the_file_is_a_problem_not_a_wait(settings: Path, monkeypatch) -> None:
    """A FIFO put where the settings file was: the decision says what is wrong at once (agents' changes
    are refused), and never waits for a writer that may never come."""
    monkeypatch.setattr(approval, "RACY_NS", 0)  # (no save under way to wait out)
    settings.write_text(READ_ONLY)
    rules = RulesFile(str(settings), None)
    assert rules.current().problem is None
    settings.unlink()
    os.mkfifo(settings)
    done: list = []
    looker = threading.Thread(target=lambda: done.append(rules.current()), daemon=True)
    looker.start()
    looker.join(5)
    assert done, "the decision waits on the FIFO"
    assert done[0].problem is not None and "not a regular file" in done[0].problem, done[0]


def test_a_link_to_nothing_is_a_problem_not_an_absent_file(settings: Path, monkeypatch) -> None:
    monkeypatch.setattr(approval, "RACY_NS", 1)
    os.symlink(settings.with_name("gone.toml"), settings)
    assert "symbolic link to nothing" in (RulesFile(str(settings), None).current().problem or "")


@pytest.fixture
def vault(tmp_path: Path, settings: Path, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "a.md").write_text("# A\n")
    v = Vault(root)
    v.load()
    yield v
    v.stop()


def agent_writes(vault: Vault, content: str) -> None:
    with calling(Caller("bot/1", "s1", "write")):
        Writer(vault).write("Notes/a.md", content, overwrite=True, actor="agent:bot")


def test_the_gate_of_a_running_vault_applies_each_edit_at_its_next_decision(vault: Vault, settings: Path) -> None:
    seen: list = []
    vault.bus.subscribe(seen.append)
    gate = approval.configure(vault, settings=str(settings))  # no file yet: a gate all the same
    agent_writes(vault, "one\n")
    settings.write_text(READ_ONLY)
    with pytest.raises(RuleRefused):
        agent_writes(vault, "two\n")
    settings.write_text("[agents.bot\n")
    with pytest.raises(RulesUnreadable) as refused:
        agent_writes(vault, "three\n")
    assert str(settings) in refused.value.message and "nothing was written" in refused.value.message
    Writer(vault).write("Notes/a.md", "the person's\n", overwrite=True, actor="human:ann")  # never held
    assert gate.problem is not None
    problems = [e for e in seen if isinstance(e, IndexProblem) and str(settings) in e.message]
    assert [p.severity for p in problems] == ["error"]
    settings.write_text('[approve]\nmode = "none"\n')  # fixed, and the rule gone
    agent_writes(vault, "four\n")
    assert (Path(vault.root) / "Notes" / "a.md").read_text() == "four\n"
    assert any(isinstance(e, RulesChanged) for e in seen)
    assert any(isinstance(e, IndexProblem) and "parses again" in e.message for e in seen)


def test_a_mode_chosen_at_start_holds_until_the_files_mode_is_edited(vault: Vault, settings: Path) -> None:
    settings.write_text('[approve]\nmode = "none"\n')
    gate = approval.configure(vault, "writes", settings=str(settings))  # `--approve writes`
    assert gate.mode == "writes"
    settings.write_text('[approve]\nmode = "none"\n[approve.folders]\n"Notes/**" = "deletes"\n')
    assert gate.mode == "writes" and gate.folders == [("Notes/**", "deletes")]
    settings.write_text('[approve]\nmode = "deletes"\n')  # the person's newer word
    assert gate.mode == "deletes"
    gate.set_mode("none")  # the TUI's `g`
    settings.write_text('[approve]\nmode = "deletes"\ntimeout = 5\n')
    assert gate.mode == "none" and gate.timeout == 5.0


def test_a_start_on_a_file_with_a_problem_refuses_agents_changes_not_the_start(vault: Vault, settings: Path) -> None:
    """As while running: a refused start left an agent with "connection closed" and no reason."""
    for text, brief in (
        ("[approve\n", "settings file does not parse"),
        ('[approve.folder]\n"Notes/**" = "never"\n', "unknown table [approve.folder]"),
    ):
        settings.write_text(text)
        gate = approval.configure(vault, settings=str(settings))
        assert gate.applied().problem_brief == brief
        assert gate.rule_notices()[0].endswith("(until it is fixed, agents' changes are refused)")
        with pytest.raises(RulesUnreadable, match="fix") as refused:
            agent_writes(vault, "two\n")
        assert refused.value.message.startswith(f"settings file {settings}: ")
        assert (Path(vault.root) / "Notes" / "a.md").read_text() != "two\n"


def test_a_rule_added_while_a_change_waits_for_the_person_still_holds_it(vault: Vault, settings: Path) -> None:
    """The person approves in the TUI's dialog after making the agent read-only meanwhile: the rule
    as it is now refuses the change, as it would any later one."""
    settings.write_text('[approve]\nmode = "writes"\n')
    gate = approval.configure(vault, settings=str(settings))
    leave = gate.attend()
    asked = threading.Event()
    vault.bus.subscribe(lambda e: asked.set() if isinstance(e, approval.ApprovalRequested) else None)
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            agent_writes(vault, "agent's\n")
            outcome.append(None)
        except BaseException as exc:  # (the test reads it)
            outcome.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        assert asked.wait(10)
        settings.write_text('[approve]\nmode = "writes"\n' + READ_ONLY)
        (waiting,) = gate.pending()
        gate.decide(waiting.id, True)
        thread.join(10)
    finally:
        leave()
    assert isinstance(outcome[0], RuleRefused), outcome
    assert (Path(vault.root) / "Notes" / "a.md").read_text() == "# A\n"


def test_a_pending_change_approved_while_the_file_does_not_parse_still_waits(vault: Vault, settings: Path) -> None:
    settings.write_text('[approve]\nmode = "writes"\n')
    approval.configure(vault, settings=str(settings))  # nobody attends: the change is kept for later
    with pytest.raises(pending.AwaitingPerson) as kept:
        agent_writes(vault, "agent's\n")
    pid = kept.value.proposal.id
    settings.write_text('[approve]\nmode = "writes"\n[agents.bot\n')
    with pytest.raises(pending.ApprovalRefused, match="still waits"):
        pending.approve(vault, pid, by="human:ann")
    assert pending.store_for(vault.root_real).get(pid).state == pending.PENDING
    assert (Path(vault.root) / "Notes" / "a.md").read_text() == "# A\n"
    settings.write_text('[approve]\nmode = "writes"\n')
    pending.approve(vault, pid, by="human:ann")
    assert (Path(vault.root) / "Notes" / "a.md").read_text() == "agent's\n"


def test_a_vaults_rule_typed_in_nfc_holds_the_vault_stored_in_nfd(tmp_path: Path, settings: Path, monkeypatch) -> None:
    """A vault synced from macOS has its folder's name in NFD; the person types the key in NFC. The
    read-only rule of `[vaults."…/Études".agents.bot]` refuses the agent's write through the real
    gate and write path, and the note keeps its bytes."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / unicodedata.normalize("NFD", "Études")
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "a.md").write_text("# A\n")
    key = unicodedata.normalize("NFC", str(root))
    assert key != str(root)
    settings.write_text(f'[vaults."{key}".agents.bot]\nread_only = true\n', encoding="utf-8")
    v = Vault(root)
    v.load()
    try:
        approval.configure(v, settings=str(settings))
        with pytest.raises(RuleRefused) as refused:
            agent_writes(v, "overwritten\n")
        assert f'[vaults."{key}".agents."bot"]' in refused.value.message, refused.value.message
        assert (root / "Notes" / "a.md").read_text() == "# A\n"
    finally:
        v.stop()
