"""The change journal holds against agents: a flood cannot push an agent's damage out, a stepped
clock cannot hide changes from "since", and a revert killed midway is finished, through the
real server on a real socket, the real `mcp` client and real `vaultwatch` processes."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import random
import string
import threading
from pathlib import Path

import pytest
from killed_cli import LINKED, cli, disk_events, kill_once, links_to_t, spawn_cli, write_linked
from mcp_testing import ROOT, serving, uds_client

from vaultwatch.core.clock import SteppingClock
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.events import IndexProblem
from vaultwatch.core.review import approval
from vaultwatch.core.review.approval import ApprovalGate, ApprovalRequested
from vaultwatch.core.review.journal import journal_for, parse_since
from vaultwatch.core.review.revert import revert
from vaultwatch.core.vault import Vault

CAP_MB = 4


def text_noise(rng: random.Random, size: int) -> str:
    """Text that hardly compresses (64 symbols: ~6 bits a character), as an agent's junk notes."""
    alphabet = string.ascii_letters + string.digits + "-_"
    return "".join(rng.choices(alphabet, k=size))


def on_disk(journal) -> int:
    """The journal's size on disk, its WAL included."""
    wal = journal.path + "-wal"
    return os.path.getsize(journal.path) + (os.path.getsize(wal) if os.path.exists(wal) else 0)


@pytest.fixture
def guarded(tmp_path: Path, monkeypatch):
    def make(**env: str) -> Vault:
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
        monkeypatch.setenv("VAULTWATCH_JOURNAL_MAX_MB", str(CAP_MB))
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        root = tmp_path / "v"
        root.mkdir()
        (root / "Important.md").write_text("# Important\nthe person's careful notes\n")
        (root / "Other.md").write_text("# Other\n")
        vault = Vault(root)
        vault.load()
        return vault

    return make


async def test_an_agents_flood_is_refused_and_cannot_push_its_damage_out_of_the_journal(guarded, sock_dir):
    """The measured attack: overwrite Important.md, then write big incompressible notes. The
    overwrite stays revertable; the flood is refused (nothing written) once the agent's share is
    full, while another agent still writes and keeps its history; the file stays under its cap."""
    vault = guarded()
    rng = random.Random(29)
    async with serving(vault, sock_dir / "s.sock") as host:
        async with uds_client(host.socket_path, name="bystander") as other:
            r = await other.call_tool("edit", {"path": "Other.md", "old_text": "# Other", "new_text": "# Other v2"})
            assert not r.is_error
        journal = journal_for(vault)
        bystander_change = journal.changes()[0].id
        async with uds_client(host.socket_path, name="flooder") as agent:
            etag = (await agent.call_tool("read", {"path": "Important.md"})).structured_content["etag"]
            r = await agent.call_tool("write", {"path": "Important.md", "content": "pwned\n", "if_match": etag})
            assert not r.is_error
            damage = journal.changes()[0].id
            refused = None
            sizes = []
            for i in range(40):
                r = await agent.call_tool("write", {"path": f"junk/{i}.md", "content": text_noise(rng, 300_000)})
                sizes.append(on_disk(journal))
                if r.is_error:
                    refused = (i, r.content[0].text)
                    break
            assert refused is not None, "the flood was never refused"
            i, message = refused
            assert "refused this write" in message and "flooder" in message and "review" in message
            assert not (Path(vault.root) / f"junk/{i}.md").exists()  # refused before anything was written
        assert max(sizes) <= CAP_MB * 2**20
        journal.get(damage)  # still there: the flood did not push it out
        journal.get(bystander_change)
        async with uds_client(host.socket_path, name="bystander") as other:  # another agent still writes
            r = await other.call_tool("write", {"path": "Bystander.md", "content": "# mine\n"})
            assert not r.is_error, r.content[0].text
        revert(Writer(vault), journal, damage, actor="human:tester")
        assert (Path(vault.root) / "Important.md").read_text().endswith("careful notes\n")
        assert on_disk(journal) <= CAP_MB * 2**20


async def test_a_flood_of_small_writes_is_refused_by_its_share_of_the_change_count(guarded, sock_dir):
    """An agent floods the journal with tiny writes (bytes far under its share): once it holds its
    share of the change cap it is refused, naming that share, while another agent still writes; the
    person's own writes and reverts go past any agent's share, and no unreviewed row is dropped."""
    vault = guarded(VAULTWATCH_JOURNAL_MAX_CHANGES="20")  # one agent may hold 10 of them
    async with serving(vault, sock_dir / "s.sock") as host:
        async with uds_client(host.socket_path, name="bystander") as other:
            r = await other.call_tool("edit", {"path": "Other.md", "old_text": "# Other", "new_text": "# Other v2"})
            assert not r.is_error, r.content[0].text
        journal = journal_for(vault)
        async with uds_client(host.socket_path, name="flooder") as agent:
            refused = None
            for i in range(30):
                r = await agent.call_tool(
                    "write", {"path": f"junk/{i % 4}.md", "content": f"x{i}\n", "overwrite": True}
                )
                if r.is_error:
                    refused = (i, r.content[0].text)
                    break
            assert refused is not None, "the flood of small writes was never refused"
            i, message = refused
            assert i == 10, message
            assert "refused this write" in message and "flooder" in message and "share (50%)" in message
            assert "10 of its 20 changes" in message and "VAULTWATCH_JOURNAL_MAX_CHANGES" in message
            assert (Path(vault.root) / "junk/1.md").read_text() == "x9\n"  # refused before anything was written
        async with uds_client(host.socket_path, name="bystander") as other:  # another agent still writes
            r = await other.call_tool("write", {"path": "Bystander.md", "content": "# mine\n"})
            assert not r.is_error, r.content[0].text
        flooded = [c.id for c in journal.changes() if c.agent and c.agent.startswith("flooder")]
        writer = Writer(vault)
        for n in range(12):  # more than an agent's share, and past the journal's cap
            writer.write("Mine.md", f"# mine {n}\n", overwrite=True, actor="human:tester")
        revert(writer, journal, flooded[0], actor="human:tester")
        assert (Path(vault.root) / "junk/1.md").read_text() == "x5\n"
        assert len(journal.unreviewed()) == 10 + 2 - 1  # the flood and the bystander's, less the reverted one
        assert {c.id for c in journal.changes() if c.agent and c.agent.startswith("flooder")} == set(flooded)


async def test_an_agents_share_is_its_names_whatever_version_it_sends(guarded, sock_dir):
    """The share was counted by the agent's name/version label: a client that sent another version
    each session began each with a share of its own, and flooded the journal regardless."""
    vault = guarded(VAULTWATCH_JOURNAL_MAX_CHANGES="20")  # one agent may hold 10 of them
    async with serving(vault, sock_dir / "s.sock") as host:
        refused = None
        for i in range(15):
            async with uds_client(host.socket_path, name="flooder", version=f"{i}.0") as agent:
                r = await agent.call_tool("write", {"path": f"junk/{i}.md", "content": f"x{i}\n"})
            if r.is_error:
                refused = (i, r.content[0].text)
                break
        assert refused is not None and refused[0] == 10, refused
        assert "flooder's changes" in refused[1] and "10 of its 20 changes" in refused[1]


async def test_a_full_journal_says_so_and_reviewing_makes_room(guarded, sock_dir):
    """One agent may fill the whole journal (share 1): its write is refused with what to do,
    `vaultwatch changes` says the journal is full, and once the person marks the changes reviewed
    (retention age 0) the agent's next write goes through and old reviewed changes make room."""
    vault = guarded(VAULTWATCH_JOURNAL_AGENT_SHARE="1", VAULTWATCH_JOURNAL_KEEP_DAYS="0")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(7)
    problems: list[str] = []
    vault.bus.subscribe(lambda e: problems.append(e.message) if isinstance(e, IndexProblem) else None)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="flooder") as agent:
        journal = journal_for(vault)
        message = None
        for i in range(40):
            r = await agent.call_tool("write", {"path": f"junk/{i}.md", "content": text_noise(rng, 300_000)})
            if r.is_error:
                message = r.content[0].text
                break
        assert message is not None and "journal is full" in message and "VAULTWATCH_JOURNAL_MAX_MB" in message
        r = await agent.call_tool("write", {"path": "junk/again.md", "content": text_noise(rng, 300_000)})
        assert r.is_error  # refused again; the person is told once (the TUI shows the bus's problems)
        assert [p for p in problems if "journal is full" in p] == [problems[-1]] and len(problems) == 1
        first = journal.changes()[-1].id
        listed = cli("changes", str(vault.root), "--unreviewed", env=env)
        assert listed.returncode == 0 and "journal is full" in listed.stderr
        assert "[not reviewed]" in listed.stdout
        marked = cli("changes", str(vault.root), "--mark-reviewed", "all", env=env)
        assert marked.returncode == 0 and "marked" in marked.stdout
        assert journal.unreviewed() == [] and not journal.status()["full"]
        r = await agent.call_tool("write", {"path": "junk/after.md", "content": text_noise(rng, 300_000)})
        assert not r.is_error, r.content[0].text
        assert journal.unreviewed_paths() == {"junk/after.md": journal.changes()[0].id}
        with pytest.raises(Exception, match="no change"):
            journal.get(first)  # reviewed and past the (zero) retention age: it made room
        assert on_disk(journal) <= CAP_MB * 2**20


async def test_since_30m_finds_every_change_after_the_clock_stepped_back_and_forward(tmp_path, sock_dir, monkeypatch):
    """Three agent writes around a wall clock stepped back 2 h and corrected: "since 30m" (the
    CLI's and the TUI's parse_since over the journal) finds all three, newest first."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("a\n")
    clock = SteppingClock(dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC))
    vault = Vault(root, clock=clock)
    vault.load()
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as agent:
        await agent.call_tool("write", {"path": "one.md", "content": "1\n"})
        clock.advance(60)
        clock.step_wall(-2 * 3600)  # the wall clock jumps back 2 h
        await agent.call_tool("write", {"path": "two.md", "content": "2\n"})
        clock.advance(60)
        await agent.call_tool("write", {"path": "three.md", "content": "3\n"})
        clock.advance(60)
        clock.step_wall(2 * 3600)  # and is corrected
        journal = journal_for(vault)
        recent = journal.changes(since=parse_since("30m", clock.now()))
        assert [c.path for c in recent] == ["three.md", "two.md", "one.md"]
        clock.advance(39 * 60)  # now the three are 40, 41 and 42 minutes old on the monotonic clock
        assert [c.path for c in journal.changes(since=parse_since("40.5m", clock.now()))] == ["three.md"]
        history = await agent.call_tool("history", {"path": "two.md"})
        assert history.structured_content["changes"][0]["path"] == "two.md"


@pytest.mark.parametrize("finish", ["revert_again", "next_start"])
async def test_a_revert_killed_midway_is_finished_and_never_taken_for_outside_edits(
    tmp_path, sock_dir, monkeypatch, finish
):
    """An agent renames T.md (rewriting [[T]] in 400 notes); the person's `vaultwatch revert`
    is killed with SIGKILL once part of the restore is on disk, while the server watches the
    vault. The server records none of the revert's writes as outside edits, and running the same
    revert again (or the next server start) finishes it: every link back, T.md back, one revert row."""
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    root = tmp_path / "v"
    root.mkdir()
    write_linked(root)
    names = LINKED
    vault = Vault(root)
    vault.load()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="renamer") as agent:
        seen = disk_events(vault)
        vault.start_watching()
        r = await agent.call_tool("rename", {"path": "T.md", "new_path": "U.md"})
        assert not r.is_error, r.content[0].text
        journal = journal_for(vault)
        rename_id = journal.changes()[0].id
        assert links_to_t(root, names) == 0
        proc = spawn_cli("revert", str(rename_id), str(root), env=env)
        # kill it once part of the restore is on disk
        await kill_once(proc, lambda: links_to_t(root, names) >= 10)
        partial = links_to_t(root, names)
        assert 10 <= partial < len(names), f"the revert was not cut off midway ({partial} restored)"
        assert (root / "U.md").exists() and not (root / "T.md").exists()

        restored = {p for p in names if "[[T]]" in (root / p).read_text()}
        # every note put back reached the server as a disk event; the journal, subscribed
        # before us, handled each event before we see it
        while not restored <= seen:
            await asyncio.sleep(0.02)
        assert [(c.summary, c.paths[:3]) for c in journal.changes(kinds=("outside",))] == [], (
            "the revert's own writes were taken for outside edits"
        )
        if finish == "revert_again":
            again = cli("revert", str(rename_id), str(root), env=env)
            assert again.returncode == 0, again.stderr
            assert "finished an interrupted revert" in again.stdout
            _all_back(root, names, journal, rename_id)
    if finish == "next_start":
        fresh = Vault(root)
        fresh.load()
        async with serving(fresh, sock_dir / "t.sock"):
            journal = journal_for(fresh)
            for _ in range(1500):
                if journal.get(rename_id).reverted_by is not None:
                    break
                await asyncio.sleep(0.02)
            _all_back(root, names, journal, rename_id)


def _all_back(root: Path, names: list[str], journal, rename_id: int) -> None:
    assert links_to_t(root, names) == len(names)
    assert (root / "T.md").exists() and not (root / "U.md").exists()
    assert journal.get(rename_id).reverted_by is not None
    [row] = journal.changes(kinds=("revert",))
    assert row.revert_of == rename_id and len([f for f in row.files if f.role == "restored"]) >= len(names)
    assert journal.open_intents() == []
    assert [(c.summary, c.paths[:3]) for c in journal.changes(kinds=("outside",))] == []


async def test_a_write_the_person_approved_at_the_gate_is_reviewed_and_a_refused_one_never_asks(guarded, sock_dir):
    """The person saw and approved an agent's write at the gate: it is recorded reviewed. When
    the journal cannot keep a write, it is refused before the gate asks the person anything."""
    vault = guarded(VAULTWATCH_JOURNAL_AGENT_SHARE="1")
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    gate.attend()
    asked: list = []

    def on_event(event) -> None:
        if isinstance(event, ApprovalRequested):
            asked.append(event.pending)
            threading.Thread(target=gate.decide, args=(event.pending.id, True, "")).start()

    vault.bus.subscribe(on_event)
    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path, name="helper") as agent:
        r = await agent.call_tool("edit", {"path": "Other.md", "old_text": "# Other", "new_text": "# Other v2"})
        assert not r.is_error, r.content[0].text
        journal = journal_for(vault)
        [change] = journal.changes()
        assert change.reviewed and len(asked) == 1 and journal.unreviewed() == []
        big = text_noise(random.Random(3), CAP_MB * 2**20)  # more than the whole journal can hold
        r = await agent.call_tool("write", {"path": "Big.md", "content": big})
        assert r.is_error and "journal is full" in r.content[0].text
        assert len(asked) == 1 and not (Path(vault.root) / "Big.md").exists()
