"""A change journal that cannot be opened fails closed for agents: with the journal meant to be on
(VAULTWATCH_JOURNAL not 0), every agent's change is refused, naming the journal file and what is
wrong with it, and no byte of the vault changes; reads go on; `vaultwatch changes` says the journal
cannot be opened and why, never that it is switched off. Through the real `serve --stdio` with the
real `mcp` client (its front answers plain writes, the SDK the rest), the real CLI as a process and
the real journal file, damaged in each way a torn write, a bad sync, another version or a hostile
process can leave it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH
from mcp_types import Implementation

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import Journal, journal_path
from vaultwatch.core.vault import Vault

# every kind of agent change, each of which would change the vault if it went through
CHANGES = [
    ("write", {"path": "Pub/a.md", "content": "overwritten\n", "overwrite": True}),  # the stdio front's
    ("write", {"path": "Pub/new.md", "content": "new\n"}),
    ("edit", {"path": "Pub/a.md", "old_text": "hello", "new_text": "bye"}),
    ("update_frontmatter", {"path": "Pub/a.md", "set": {"status": "done"}}),
    ("rename", {"path": "Pub/a.md", "new_path": "Pub/b.md"}),
    ("delete", {"path": "Pub/a.md", "permanent": True, "confirm_path": "Pub/a.md"}),
    ("delete", {"path": "Pub/a.md"}),
]


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None), the hidden ones (a trash) included."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.fixture
def place(tmp_path: Path, monkeypatch) -> tuple[Path, dict[str, str], str]:
    """A vault, the environment of its `vaultwatch` processes (this test's too), and its journal's
    path: a real journal with one agent's change in it, closed."""
    root = tmp_path / "vault"
    (root / "Pub").mkdir(parents=True)
    (root / "Pub" / "a.md").write_text("hello\n")
    monkeypatch.delenv("VAULTWATCH_JOURNAL", raising=False)  # meant to be on
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    env = {**os.environ, "VAULTWATCH_SEMANTIC": "0"}
    path = journal_path(os.path.realpath(root))
    vault = Vault(root)
    vault.load()
    Writer(vault).write("Pub/old.md", "old\n", actor="agent:earlier")
    vault.stop()
    assert vault.journal is not None
    vault.journal.close()  # (an open connection would write its pages back over what a test spoils)
    journal = Journal(path)
    assert [c.path for c in journal.changes()] == ["Pub/old.md"]
    journal.close()
    return root, env, path


def stdio(root: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env, cwd=str(ROOT)
    )


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*VAULTWATCH, *args], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)


def sides(path: str) -> None:
    for side in (path + "-wal", path + "-shm"):
        if os.path.lexists(side):
            os.remove(side)


def damaged_header(path: str) -> None:
    with open(path, "r+b") as fh:
        fh.write(b"\0" * 100)  # the first page's header, as a torn write or a bad sync leaves it
    sides(path)


def garbage(path: str) -> None:
    sides(path)
    with open(path, "wb") as fh:
        fh.write(os.urandom(8192))


def folder(path: str) -> None:
    sides(path)
    os.remove(path)
    os.mkdir(path)


def symlink(path: str) -> None:
    """A link to a journal that opens (the real one, moved beside it): a link is refused all the same,
    since SQLite writes wherever it points."""
    os.rename(path, path + ".elsewhere")
    os.symlink(path + ".elsewhere", path)


def mode_000(path: str) -> None:
    os.chmod(path, 0)


def newer_schema(path: str) -> None:
    with sqlite3.connect(path) as con:
        con.execute("PRAGMA user_version=99")  # a newer vaultwatch's journal


def dropped_column(path: str) -> None:
    """A journal whose `changes` lacks a column this version writes (a newer schema, or damage)."""
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE changes DROP COLUMN summary")


def unfillable_column(path: str) -> None:
    """A newer version's table with a column this version's rows would leave empty where it may not."""
    with sqlite3.connect(path) as con:
        con.executescript(
            "ALTER TABLE intents RENAME TO intents_old;"
            "CREATE TABLE intents (id INTEGER PRIMARY KEY AUTOINCREMENT, change_id INTEGER NOT NULL, actor TEXT "
            "NOT NULL, plan TEXT NOT NULL, at REAL NOT NULL, signature BLOB NOT NULL);"
            "DROP TABLE intents_old;"
        )


STATES: list[tuple[Callable[[str], None], str]] = [
    (damaged_header, "file is not a database"),
    (garbage, "file is not a database"),
    (folder, "is a folder"),
    (symlink, "is a symbolic link"),
    (newer_schema, "newer vaultwatch (journal schema 99"),
    (dropped_column, "lacks the columns ['summary']"),
    (unfillable_column, "columns this vaultwatch cannot fill: ['signature']"),
]


@pytest.mark.slow
@pytest.mark.parametrize("spoil, said", STATES, ids=[s[0].__name__ for s in STATES])
async def test_every_agents_change_is_refused_while_the_journal_cannot_be_opened(place, spoil, said) -> None:
    root, env, path = place
    spoil(path)
    before = tree(root)
    async with Client(stdio(root, env), client_info=Implementation(name="agent", version="1")) as client:
        for tool, arguments in CHANGES:
            got = await client.call_tool(tool, arguments)
            text = got.content[0].text
            assert got.is_error, (tool, arguments, text)
            assert path in text and said in text and "refused" in text, (tool, text)
            assert "VAULTWATCH_JOURNAL=0" not in text
        assert tree(root) == before  # nothing written, moved, trashed or made
        read = await client.call_tool("read", {"path": "Pub/a.md"})  # reads go on
        assert not read.is_error and read.structured_content["content"] == "hello\n"
        listing = await client.call_tool("list_documents", {})
        assert not listing.is_error and listing.structured_content["total"] == 2
        history = await client.call_tool("history", {"path": "Pub/a.md"})
        assert history.is_error and path in history.content[0].text and "switched off" not in history.content[0].text
    assert tree(root) == before
    shown = cli(env, "changes", str(root))
    assert shown.returncode != 0
    assert path in shown.stderr and said in shown.stderr and "cannot be opened" in shown.stderr, shown.stderr
    assert "VAULTWATCH_JOURNAL=0" not in shown.stderr and "switched off" not in shown.stderr


@pytest.mark.slow
async def test_a_journal_of_mode_000_is_still_the_journal_or_refuses(place) -> None:
    """Mode 000: a user other than root cannot open it, and every agent's change is refused as above;
    root (as here, in a container) still opens it, and then the change is journaled. Either way no
    agent's change goes through unrecorded."""
    root, env, path = place
    mode_000(path)
    async with Client(stdio(root, env), client_info=Implementation(name="agent", version="1")) as client:
        got = await client.call_tool("write", {"path": "Pub/a.md", "content": "overwritten\n", "overwrite": True})
    os.chmod(path, 0o600)
    if got.is_error:
        assert path in got.content[0].text, got.content[0].text
        assert (root / "Pub" / "a.md").read_text() == "hello\n"
    else:
        rows = [json.loads(line) for line in cli(env, "changes", str(root), "--json").stdout.splitlines()]
        assert [r["path"] for r in rows if r.get("kind") == "change"] == ["Pub/a.md", "Pub/old.md"]


def test_the_persons_own_edits_go_on_and_agents_are_refused_in_the_same_process(place) -> None:
    """The person's edits (actor `human`, `human:<login>`) go through, unjournaled: the guard holds
    agents to account, and the person must be able to work while fixing the journal. An agent's
    change in the same process is refused before it is written."""
    root, env, path = place
    damaged_header(path)
    vault = Vault(root)
    vault.load()
    try:
        assert vault.journal is None and path in (vault.journal_problem or "")
        writer = Writer(vault)
        writer.write("Pub/a.md", "the person's\n", overwrite=True, actor="human:ann")
        assert (root / "Pub" / "a.md").read_text() == "the person's\n"
        with pytest.raises(Exception, match="cannot be opened") as refused:
            writer.write("Pub/a.md", "agent's\n", overwrite=True, actor="agent:x")
        assert getattr(refused.value, "code", None) == "journal_unavailable"
        assert (root / "Pub" / "a.md").read_text() == "the person's\n"
    finally:
        vault.stop()


@pytest.mark.slow
async def test_moving_the_damaged_journal_away_lets_the_running_server_journal_again(place) -> None:
    """No restart needed: each refused agent's change first tries the journal again."""
    root, env, path = place
    damaged_header(path)
    async with Client(stdio(root, env), client_info=Implementation(name="agent", version="1")) as client:
        refused = await client.call_tool("write", {"path": "Pub/a.md", "content": "one\n", "overwrite": True})
        assert refused.is_error and path in refused.content[0].text
        os.rename(path, path + ".damaged")
        done = await client.call_tool("write", {"path": "Pub/a.md", "content": "two\n", "overwrite": True})
        assert not done.is_error, done.content[0].text
    rows = [json.loads(line) for line in cli(env, "changes", str(root), "--json").stdout.splitlines()]
    assert [(r["agent"], r["path"]) for r in rows if r.get("kind") == "change"] == [("agent/1", "Pub/a.md")]


def removed(path: str) -> None:
    os.remove(path)


def replaced_by_a_copy(path: str) -> None:
    """An older copy put in its place (what a process wanting a change forgotten would do)."""
    shutil.copyfile(path, path + ".copy")
    os.replace(path + ".copy", path)


def replaced_by_a_folder(path: str) -> None:
    os.rename(path, path + ".moved")
    os.mkdir(path)


def its_log_removed(path: str) -> None:
    """The write-ahead log removed (and its shared memory): the rows committed since the last
    checkpoint go with it at the next crash, and SQLite starts a new log no reader sees."""
    os.remove(path + "-wal")
    with contextlib.suppress(FileNotFoundError):
        os.remove(path + "-shm")


@pytest.mark.slow
@pytest.mark.parametrize("spoil", [removed, replaced_by_a_copy, replaced_by_a_folder, its_log_removed])
async def test_a_journal_removed_or_replaced_while_the_server_runs_refuses_agents(place, spoil) -> None:
    """The server holds the journal open: a file removed or replaced under it would take agents'
    changes where nobody reads them. Its next agent's change sees the path names another file."""
    root, env, path = place
    async with Client(stdio(root, env), client_info=Implementation(name="agent", version="1")) as client:
        done = await client.call_tool("write", {"path": "Pub/first.md", "content": "one\n"})
        assert not done.is_error, done.content[0].text
        spoil(path)
        before = tree(root)
        for tool, arguments in CHANGES:
            got = await client.call_tool(tool, arguments)
            assert got.is_error, (tool, got.content[0].text)
            assert path in got.content[0].text and "removed or replaced" in got.content[0].text
        assert tree(root) == before
        read = await client.call_tool("read", {"path": "Pub/a.md"})
        assert not read.is_error and read.structured_content["content"] == "hello\n"


@pytest.mark.slow
async def test_a_journal_another_process_holds_locked_fails_closed(place) -> None:
    """Another process holds the journal's write lock past SQLite's wait: the agent's change is
    refused with an error naming the journal (not a bare database error), and nothing is written."""
    root, env, path = place
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        async with Client(stdio(root, env), client_info=Implementation(name="agent", version="1")) as client:
            listing = await client.call_tool("list_documents", {})  # (the server is up and has its journal)
            assert not listing.is_error
            holder.execute("BEGIN EXCLUSIVE")
            before = tree(root)
            got = await client.call_tool("write", {"path": "Pub/a.md", "content": "one\n", "overwrite": True})
            assert got.is_error
            assert path in got.content[0].text and "locked" in got.content[0].text, got.content[0].text
            assert tree(root) == before
    finally:
        holder.close()


@pytest.mark.slow
async def test_an_approval_waits_while_the_journal_cannot_be_opened(place) -> None:
    """`vaultwatch approve ID` cannot journal the agent's change: it is refused and the change still
    waits, to be approved once the journal opens again."""
    root, env, path = place
    config = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text('[approve]\nmode = "writes"\n')
    async with Client(stdio(root, env), client_info=Implementation(name="agent", version="1")) as client:
        got = await client.call_tool("write", {"path": "Pub/a.md", "content": "agent's\n", "overwrite": True})
        assert got.is_error and "pending change 1" in got.content[0].text, got.content[0].text
    damaged_header(path)
    refused = cli(env, "approve", "1", str(root))
    assert refused.returncode == 1 and "still waits" in refused.stderr and path in refused.stderr, refused.stderr
    assert (root / "Pub" / "a.md").read_text() == "hello\n"
    assert "agent's" in cli(env, "pending", str(root)).stdout + cli(env, "pending", str(root), "--json").stdout
    os.rename(path, path + ".damaged")
    done = cli(env, "approve", "1", str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "Pub" / "a.md").read_text() == "agent's\n"
