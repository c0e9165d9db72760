"""The person's rules per agent, end to end: a settings file with a read-only agent and an agent
that may write only under its folder; each client configured with the bridge command
`mcp-config --agent NAME` writes; the bridge starts the headless server, which reads the rules.
Every refusal names the rule, and a refused change leaves every byte where it was."""

from __future__ import annotations

import json
import os
import subprocess
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_testing import ROOT, VAULTWATCH, stop_headless_servers
from mcp_types import Implementation
from waiting import wait_until

SETTINGS = """
[agents."reader"]
read_only = true

[agents."scribe"]
write = ["Inbox/**"]
deny = ["Inbox/Private/**"]
"""

# every write tool, on a note each agent could otherwise change
WRITES = [
    ("write", {"path": "Notes/a.md", "content": "# Agent\n", "overwrite": True}),
    ("write", {"path": "Notes/new.md", "content": "x\n"}),
    ("edit", {"path": "Notes/a.md", "old_text": "# A", "new_text": "# B"}),
    ("edit", {"path": "Notes/a.md", "heading": "Log", "mode": "append", "text": "- agent"}),
    ("update_frontmatter", {"path": "Notes/a.md", "set": {"status": "done"}}),
    ("rename", {"path": "Notes/a.md", "new_path": "Notes/b.md"}),
    ("delete", {"path": "Notes/a.md"}),
]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path / "vault"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "a.md").write_text("# A\nSee [[c]] and [[x]].\n## Log\n- one\n")
    (root / "Inbox" / "x.md").parent.mkdir(parents=True)
    (root / "Inbox" / "x.md").write_text("# X\n")
    (root / "Inbox" / "Private").mkdir(parents=True)
    (root / "Inbox" / "Private" / "p.md").write_text("# P\n")
    (root / "c.md").write_text("# C\n")
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text(SETTINGS)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(sock_dir),
    }
    yield root, env
    stop_headless_servers(root)  # the one the bridge started


def configured(root: Path, env: dict[str, str], agent: str) -> StdioServerParameters:
    """The bridge command `mcp-config --agent` writes for Cursor, run as Cursor would run it."""
    out = subprocess.run(
        [*VAULTWATCH, "mcp-config", str(root), "--client", "cursor", "--agent", agent],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    entry = json.loads(out.stdout)["mcpServers"]["vaultwatch"]
    assert entry["args"][-2:] == ["--agent", agent]
    return StdioServerParameters(command=entry["command"], args=entry["args"], env={**env, **entry.get("env", {})})


async def test_a_read_only_agent_is_refused_every_write_tool(place) -> None:
    root, env = place
    before = tree(root)
    async with Client(configured(root, env, "reader")) as client:
        listing = await client.call_tool("list_documents", {})
        assert not listing.is_error  # reading is allowed
        for tool, arguments in WRITES:
            got = await client.call_tool(tool, arguments)
            assert got.is_error, (tool, arguments)
            said = got.content[0].text
            assert '[agents."reader"]' in said and "read-only" in said, said
    assert tree(root) == before


@pytest.mark.parametrize("client_info", ["left out", None, "cursor", {"title": "no name"}])
def test_a_bridged_agent_keeps_its_rule_on_a_request_that_names_no_client(place, client_info) -> None:
    """A 2026-07-28 request through `bridge --agent reader` whose `_meta` carries no usable clientInfo
    (left out, null, not an object, or with no name) is still the reader's: never an unknown agent
    under the default rule."""
    root, env = place
    before = tree(root)
    params = configured(root, env, "reader")
    bridge = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=params.env,
        cwd=ROOT,
    )
    assert bridge.stdin is not None and bridge.stdout is not None
    meta: dict = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    if client_info != "left out":
        meta["io.modelcontextprotocol/clientInfo"] = client_info
    call = {"path": "Notes/new.md", "content": "written by the read-only agent\n"}
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "write", "arguments": call, "_meta": meta},
    }
    try:
        bridge.stdin.write(json.dumps(request).encode() + b"\n")
        bridge.stdin.flush()
        while True:
            answer = json.loads(bridge.stdout.readline())
            if answer.get("id") == 1:
                break
    finally:
        bridge.stdin.close()
        bridge.wait(timeout=60)
        bridge.stdout.close()
    said = json.dumps(answer)
    assert '[agents.\\"reader\\"]' in said and "read-only" in said, said
    assert tree(root) == before


async def test_an_agent_writes_only_under_its_folders(place) -> None:
    root, env = place
    async with Client(configured(root, env, "scribe")) as client:
        done = await client.call_tool("write", {"path": "Inbox/today.md", "content": "# Today\n"})
        assert not done.is_error, done.content
        before = tree(root)
        refused = [
            ("write", {"path": "Notes/new.md", "content": "x\n"}),
            ("edit", {"path": "Notes/a.md", "old_text": "# A", "new_text": "# B"}),
            ("write", {"path": "Inbox/Private/p.md", "content": "# Mine\n", "overwrite": True}),
            # moving its own note out of its folder: the move's other end is an effect too
            ("rename", {"path": "Inbox/today.md", "new_path": "Notes/today.md"}),
            # a move inside its folder whose link rewrite reaches Notes/a.md
            ("rename", {"path": "Inbox/x.md", "new_path": "Inbox/y.md"}),
        ]
        for tool, arguments in refused:
            got = await client.call_tool(tool, arguments)
            assert got.is_error, (tool, arguments)
            assert '[agents."scribe"]' in got.content[0].text, got.content[0].text
        assert tree(root) == before
        edited = await client.call_tool("edit", {"path": "Inbox/today.md", "old_text": "# Today", "new_text": "# Now"})
        assert not edited.is_error
    assert (root / "Inbox" / "today.md").read_text() == "# Now\n"


@pytest.mark.parametrize("version", ["1/evil", "/", "2/x/y"])
async def test_a_slash_in_the_clients_version_keeps_the_agents_rule(place, version: str) -> None:
    """The version is the client's own word: `reader` sending `1/evil` was journaled as agent
    `reader/1` for the rules, which none names, and wrote under the default rule. Through the
    bridge that names the agent, and through `serve --stdio` (its front answers plain writes)."""
    root, env = place
    before = tree(root)
    bridge = configured(root, env, "reader")
    stdio = StdioServerParameters(command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env)
    for server, name in ((bridge, "anything"), (stdio, "reader")):
        async with Client(server, client_info=Implementation(name=name, version=version)) as client:
            for tool, arguments in WRITES:
                got = await client.call_tool(tool, arguments)
                assert got.is_error, (tool, arguments, got.content)
                assert '[agents."reader"]' in got.content[0].text, got.content[0].text
        stop_headless_servers(root)  # the bridge's: serve --stdio takes the vault next
    assert tree(root) == before
    async with Client(stdio, client_info=Implementation(name="scribe", version=version)) as client:
        got = await client.call_tool("write", {"path": "Notes/scribe.md", "content": "x\n"})
        assert got.is_error and '[agents."scribe"]' in got.content[0].text, got.content[0].text
        done = await client.call_tool("write", {"path": "Inbox/scribe.md", "content": "x\n"})
        assert not done.is_error, done.content
    assert not (root / "Notes" / "scribe.md").exists()


async def test_an_empty_write_list_lets_the_agent_change_nothing(place) -> None:
    """`write = []` names no folder the agent may change: every change is refused (an absent
    `write` means everywhere; an empty list never does)."""
    root, env = place
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text(SETTINGS + '\n[agents."nowhere"]\nwrite = []\n')
    before = tree(root)
    async with Client(configured(root, env, "nowhere")) as client:
        for tool, arguments in WRITES:
            got = await client.call_tool(tool, arguments)
            assert got.is_error, (tool, arguments)
            assert '[agents."nowhere"]' in got.content[0].text, got.content[0].text
    assert tree(root) == before


async def test_a_folder_inside_a_vault_with_rules_is_no_way_around_them(place) -> None:
    """A client configured with a folder inside the person's vault would get a server of its own,
    whose paths are relative to that folder: the vault's rule `deny = ["Inbox/Private/**"]` would
    name nothing there. That server does not start (the folder lies inside a vault with a table of
    its own: core.review.nestedvault), the client is told why, naming the table, and nothing is
    written."""
    root, env = place
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text(f'[vaults."{root}".agents."scribe"]\ndeny = ["Inbox/Private/**"]\n')
    before = tree(root)
    inner = root / "Inbox"
    try:
        with pytest.raises((MCPError, BaseExceptionGroup)) as refused:
            async with Client(configured(inner, env, "scribe")) as client:
                await client.call_tool("write", {"path": "Private/p.md", "content": "# owned\n", "overwrite": True})
        said = " | ".join(messages(refused.value))
        assert f'[vaults."{root}"] table for it' in said and "would name other folders" in said, said
        assert tree(root) == before
    finally:
        stop_headless_servers(inner)


def messages(exc: BaseException) -> list[str]:
    if isinstance(exc, BaseExceptionGroup):
        return [m for inner in exc.exceptions for m in messages(inner)]
    return [str(exc)]


async def test_a_vaults_rule_typed_in_nfc_holds_its_vault_stored_in_nfd(tmp_path: Path, sock_dir: Path) -> None:
    """A vault synced from macOS stores its folder's name in NFD; the person types the settings key
    in NFC. Through a real `serve --stdio` and the real client, `[vaults."…/Études".agents.scribe]
    read_only = true` refuses the agent's write, naming the rule, and the note keeps its bytes.
    (Before, the key was matched by its exact string: the rule silently did not apply.) A second
    table naming the same vault in NFD is a settings problem: the server starts, says so, and refuses
    every agent's change until it is fixed (even the one the NFD table would let through)."""
    root = tmp_path / unicodedata.normalize("NFD", "Études")
    (root / "Inbox").mkdir(parents=True)
    (root / "Inbox" / "a.md").write_text("# A\n")
    key = unicodedata.normalize("NFC", str(root))
    assert key != str(root)
    settings = tmp_path / "config" / "vaultwatch" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text(f'[vaults."{key}".agents.scribe]\nread_only = true\n', encoding="utf-8")
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(sock_dir),
    }
    params = StdioServerParameters(
        command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env, cwd=str(ROOT)
    )
    before = tree(root)
    async with Client(params, client_info=Implementation(name="scribe", version="1")) as client:
        got = await client.call_tool("write", {"path": "Inbox/a.md", "content": "# scribe\n", "overwrite": True})
    said = got.content[0].text
    assert got.is_error and f'[vaults."{key}".agents."scribe"]' in said and "read-only" in said, said
    assert tree(root) == before
    settings.write_text(
        f'[vaults."{key}".agents.scribe]\nread_only = true\n[vaults."{root}".agents.scribe]\nwrite = ["Inbox/**"]\n',
        encoding="utf-8",
    )
    async with Client(params, client_info=Implementation(name="scribe", version="1")) as client:
        got = await client.call_tool("write", {"path": "Inbox/a.md", "content": "# scribe\n", "overwrite": True})
    said = got.content[0].text
    assert got.is_error and "both name this vault" in said and "Unicode forms" in said, said
    assert tree(root) == before


async def test_a_rule_naming_a_folder_the_vault_lacks_is_said(place) -> None:
    """A rule whose folder is not in the vault (never made, or renamed with `mv` while a server runs)
    matches nothing: the headless server's log says so at its start and at once when the folder goes,
    and `vaultwatch pending` says so too; the rule itself is left as the person wrote it."""
    root, env = place
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text(SETTINGS + '\n[approve.folders]\n"Archive/**" = "never"\n"Notes/**" = "never"\n')
    logs = Path(env["XDG_STATE_HOME"]) / "vaultwatch" / "logs"

    def log() -> str:
        return "".join(p.read_text() for p in logs.glob("*.log")) if logs.is_dir() else ""

    async with Client(configured(root, env, "scribe")) as client:
        assert not (await client.call_tool("list_documents", {})).is_error
        wait_until(lambda: "holds" in log(), what="the start in the log")
        assert "'Notes'" not in log() and "'Archive'" not in log(), log()  # (Archive: never this vault's)
        (root / "Notes").rename(root / "Old notes")
        wait_until(lambda: "Notes was moved or removed" in log(), what="the folder's going in the log")
    assert 'rules naming it match nothing now: rule "Notes/**" = "never"' in log(), log()
    out = subprocess.run(
        [*VAULTWATCH, "pending", str(root)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "names the folder 'Archive', which this vault has never had" in out.stderr, out.stderr
    assert "names the folder 'Notes', which this vault does not have" in out.stderr, out.stderr  # (seen going)
    assert '"Notes/**" = "never"' in settings.read_text()  # the rule did not follow the rename


async def test_a_change_held_by_an_agents_own_mode_names_that_rule(place) -> None:
    """ts-helper's own `approve = "writes"` holds its edit while the vault's mode is "deletes": the
    agent's error and `vaultwatch pending` name the agent's rule, not a vault mode the status line
    contradicts."""
    root, env = place
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text('[approve]\nmode = "deletes"\n' + SETTINGS + '\n[agents."ts-helper"]\napprove = "writes"\n')
    why = '[agents."ts-helper"] approve = "writes" covers the change, which rewrites Notes/a.md'
    async with Client(configured(root, env, "ts-helper")) as client:
        held = await client.call_tool("edit", {"path": "Notes/a.md", "old_text": "# A", "new_text": "# B"})
    said = held.content[0].text
    assert held.is_error and "awaits the person's approval as pending change" in said, said
    assert why in said and 'approval mode "writes"' not in said, said
    out = subprocess.run(
        [*VAULTWATCH, "pending", str(root)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert f"why: {why}" in out.stdout, out.stdout


async def test_rules_spelled_to_cover_nothing_are_said(place) -> None:
    """A Windows path, a path climbing out of the vault, the vault's absolute path, a space after the
    rule, an empty rule: each covers nothing (or the whole vault) as written, and the headless
    server's log and `vaultwatch pending` say so with the spelling meant; a rule spelled as meant
    (`./Inbox/**`, `deny = ["**"]`) says nothing. The settings file is left as the person wrote it."""
    root, env = place
    (root / "Templates").mkdir()
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    written = (
        SETTINGS
        + '\n[agents."keeper"]\ndeny = ["**"]\n'
        + '\n[approve.folders]\n"Templates\\\\**" = "never"\n"../Templates/**" = "writes"\n'
        + f'"{root}/Templates/**" = "deletes"\n"Notes/** " = "writes"\n"./Inbox/**" = "none"\n"" = "deletes"\n'
    )
    settings.write_text(written)
    expected = [
        'rule "Templates\\**" = "never" covers nothing as written: a vault path\'s folders are separated by "/", '
        'not "\\" (it is applied as "Templates/**" too, so it protects no less): write it as "Templates/**"',
        'rule "../Templates/**" = "writes" covers nothing: ".." climbs out of the vault, and rules are paths from '
        'its top folder: write it as "Templates/**"',
        f'rule "{root}/Templates/**" = "deletes" covers nothing: rules are paths from the vault\'s top folder, '
        'not absolute paths: write it as "Templates/**"',
        'rule "Notes/** " = "writes" covers only names that begin or end with a space, which is seldom meant '
        '(it is applied as "Notes/**" too, so it protects no less): write it as "Notes/**"',
        'rule "" = "deletes" names no folder, so it covers the whole vault: write "**" if that is meant, or remove it',
    ]
    logs = Path(env["XDG_STATE_HOME"]) / "vaultwatch" / "logs"

    def log() -> str:
        return "".join(p.read_text() for p in logs.glob("*.log")) if logs.is_dir() else ""

    async with Client(configured(root, env, "scribe")) as client:
        assert not (await client.call_tool("list_documents", {})).is_error
        wait_until(lambda: all(e in log() for e in expected), what=f"every notice in the log: {log()}")
    out = subprocess.run(
        [*VAULTWATCH, "pending", str(root)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    for said in (out.stderr, log()):
        for e in expected:
            assert f"settings file {settings}: {e}" in said, said
        assert '"./Inbox/**"' not in said, said
        assert 'deny "**"' not in said and "names the folder" not in said, said
    assert settings.read_text() == written


async def test_a_rule_with_backslashes_refuses_the_folder_it_means(place) -> None:
    """`"Templates\\**" = "never"` (a Windows path) matches no vault path as written; it restricts,
    so it is applied as `Templates/**` too: an agent's write, rename into it and delete there are
    refused through the real server, naming the rule as written, and no byte changes. An agent's
    `deny` with backslashes holds the same way."""
    root, env = place
    (root / "Templates").mkdir()
    (root / "Templates" / "t.md").write_text("# T\n")
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text(
        SETTINGS
        + '\n[agents."helper"]\ndeny = ["Inbox\\\\Private\\\\**"]\n'
        + '\n[approve.folders]\n"Templates\\\\**" = "never"\n'
    )
    before = tree(root)
    async with Client(configured(root, env, "helper")) as client:
        for tool, arguments in [
            ("write", {"path": "Templates/new.md", "content": "# agent\n"}),
            ("write", {"path": "Templates/t.md", "content": "# agent\n", "overwrite": True}),
            ("rename", {"path": "Notes/a.md", "new_path": "Templates/a.md"}),
            ("delete", {"path": "Templates/t.md"}),
        ]:
            got = await client.call_tool(tool, arguments)
            said = got.content[0].text
            assert got.is_error and 'rule "Templates\\**" = "never"' in said, (tool, said)
        got = await client.call_tool("write", {"path": "Inbox/Private/p.md", "content": "x\n", "overwrite": True})
        said = got.content[0].text
        assert got.is_error and '[agents."helper"] denies' in said, said
        assert tree(root) == before
        done = await client.call_tool("write", {"path": "Notes/new.md", "content": "x\n"})
        assert not done.is_error, done.content[0].text  # elsewhere the rules are as they were
