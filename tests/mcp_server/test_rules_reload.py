"""Edits to the person's settings file take effect at once, in a server that is already running:
the headless server a bridge starts (shared by every bridge, alive until it idles), `serve --stdio`
(its front answers plain writes before the MCP SDK loads) and a `serve` on its socket. Every
decision, and every approval a running server applies (`vaultwatch approve ID` handed to it), uses
the file as it is now; a file that no longer parses refuses every agent's change, saying what is
wrong in the agent's error and on the server's stderr, and reads go on. Through the real processes,
the real `mcp` client and the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH, stop_headless_servers, uds_client
from mcp_types import Implementation

from tests.waiting import within


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str], Path]]:
    """A vault, the environment of its `vaultwatch` processes, and the settings file (absent yet)."""
    root = tmp_path / "vault"
    for rel, text in {"Private/s.md": "secret\n", "Notes/a.md": "# A\n", "Inbox/x.md": "# X\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(sock_dir),
        "VAULTWATCH_SEMANTIC": "0",
        # the headless server a bridge starts runs the installed distribution's entry point from "/":
        # this checkout's code, whatever checkout the distribution was installed from
        "PYTHONPATH": str(ROOT),
    }
    yield root, env, config / "vaultwatch" / "settings.toml"
    stop_headless_servers(root)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*VAULTWATCH, *args], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)


def bridge(root: Path, env: dict[str, str], agent: str) -> StdioServerParameters:
    """The bridge command `mcp-config --agent NAME` writes, as a client runs it."""
    out = cli(env, "mcp-config", str(root), "--client", "cursor", "--agent", agent)
    assert out.returncode == 0, out.stderr
    entry = json.loads(out.stdout)["mcpServers"]["vaultwatch"]
    return StdioServerParameters(command=entry["command"], args=entry["args"], env={**env, **entry.get("env", {})})


def stdio(root: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env, cwd=str(ROOT)
    )


def headless_running(root: Path) -> bool:
    want = os.fsencode(os.path.realpath(root))
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    argv = fh.read().split(b"\0")
            except OSError:
                continue
            if b"--headless" in argv and want in argv:
                return True
    return False


@pytest.mark.slow
async def test_a_rule_added_while_the_bridges_server_runs_holds_its_writes_and_its_approvals(place) -> None:
    """The adversarial finding: the person makes an agent read-only while the headless server the
    bridge started runs. Its next write is refused, and `vaultwatch approve ID` handed to that server
    is refused by the new rule (as it is with no server running), not applied under the old rules."""
    root, env, settings = place
    settings.write_text('[approve.folders]\n"Private/**" = "writes"\n')
    async with Client(bridge(root, env, "evil")) as client:
        gated = await client.call_tool("write", {"path": "Private/s.md", "content": "evil\n", "overwrite": True})
        assert gated.is_error and "pending change 1" in gated.content[0].text, gated.content[0].text
        done = await client.call_tool("write", {"path": "Notes/new.md", "content": "allowed\n"})
        assert not done.is_error, done.content[0].text
        settings.write_text('[approve.folders]\n"Private/**" = "writes"\n[agents.evil]\nread_only = true\n')
        before = tree(root)
        refused = await client.call_tool("write", {"path": "Notes/new2.md", "content": "still writing\n"})
        assert refused.is_error and '[agents."evil"]' in refused.content[0].text, refused.content[0].text
        assert "read-only" in refused.content[0].text
        assert headless_running(root)  # the approval goes to this server, which applies it itself
        approved = cli(env, "approve", "1", str(root))
        assert approved.returncode == 1 and "read-only" in approved.stderr, approved.stdout + approved.stderr
        assert tree(root) == before and (root / "Private" / "s.md").read_text() == "secret\n"


@pytest.mark.slow
async def test_a_deny_and_a_mode_edited_while_serve_stdio_runs_apply_to_its_next_write(place) -> None:
    """`serve --stdio` started with no settings file at all: a deny added later refuses the agent's
    next write (answered by the stdio front), `[approve] mode = "writes"` makes the next one wait,
    and setting it back lets the next one through."""
    root, env, settings = place
    note = {"path": "Notes/a.md", "content": "one\n", "overwrite": True}
    async with Client(stdio(root, env), client_info=Implementation(name="scribe", version="1")) as client:
        done = await client.call_tool("write", note)
        assert not done.is_error, done.content[0].text
        settings.write_text('[agents.scribe]\ndeny = ["Notes/**"]\n')
        denied = await client.call_tool("write", {**note, "content": "two\n"})
        assert denied.is_error and '[agents."scribe"] denies' in denied.content[0].text, denied.content[0].text
        settings.write_text('[approve]\nmode = "writes"\n')
        waits = await client.call_tool("write", {**note, "content": "three\n"})
        assert waits.is_error and "awaits the person's approval" in waits.content[0].text, waits.content[0].text
        assert (root / "Notes" / "a.md").read_text() == "one\n"
        settings.write_text('[approve]\nmode = "none"\n')
        done = await client.call_tool("write", {**note, "content": "four\n"})
        assert not done.is_error, done.content[0].text
    assert (root / "Notes" / "a.md").read_text() == "four\n"


@pytest.mark.slow
async def test_a_settings_file_that_no_longer_parses_refuses_agents_and_says_why(place, sock_dir) -> None:
    """Broken mid-run, the file refuses every agent's change (also what its old rules allowed): the
    agent's error and the server's stderr name the file and what is wrong; reads go on; fixed, the
    rules apply again."""
    root, env, settings = place
    settings.write_text('[agents.scribe]\nwrite = ["Inbox/**"]\n')
    sock = str(sock_dir / "s.sock")
    proc = subprocess.Popen(
        [*VAULTWATCH, "serve", str(root), "--socket", sock],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert within(lambda: os.path.exists(sock) or proc.poll() is not None, timeout=60), "serve did not start"
        assert proc.poll() is None, proc.communicate()
        async with uds_client(sock, name="scribe") as client:
            done = await client.call_tool("write", {"path": "Inbox/one.md", "content": "one\n"})
            assert not done.is_error, done.content[0].text
            settings.write_text('[agents.scribe]\nwrite = ["Inbox/**"\n')  # the list left open
            before = tree(root)
            for tool, arguments in (
                ("write", {"path": "Inbox/two.md", "content": "two\n"}),
                ("edit", {"path": "Inbox/x.md", "old_text": "# X", "new_text": "# Y"}),
                ("delete", {"path": "Inbox/one.md", "permanent": True, "confirm_path": "Inbox/one.md"}),
            ):
                refused = await client.call_tool(tool, arguments)
                said = refused.content[0].text
                assert refused.is_error and str(settings) in said and "refused until" in said, (tool, said)
            assert tree(root) == before
            read = await client.call_tool("read", {"path": "Inbox/one.md"})
            assert not read.is_error and read.structured_content["content"] == "one\n"
            settings.write_text('[agents.scribe]\nwrite = ["Inbox/**"]\n')
            again = await client.call_tool("write", {"path": "Inbox/two.md", "content": "two\n"})
            assert not again.is_error, again.content[0].text
            outside = await client.call_tool("write", {"path": "Notes/b.md", "content": "b\n"})
            assert outside.is_error and '[agents."scribe"]' in outside.content[0].text
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    problem = [line for line in stderr.splitlines() if str(settings) in line and "refused" in line]
    assert problem and "error" in problem[0], stderr
    assert any(str(settings) in line and "parses again" in line for line in stderr.splitlines()), stderr
