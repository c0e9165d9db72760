"""One server per vault, one set of rules: a bridge whose environment names another settings file,
state folder or journal switch than the server it would share is refused, never served quietly
under the server's rules. The first bridge starts the headless server in its own environment (as an
MCP client would spawn it); the second comes with the person's, where `helper` may only read."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_testing import ROOT, VAULTWATCH, stop_headless_servers

PERSON_RULES = '[agents."helper"]\nread_only = true\n'


def messages(exc: BaseException) -> list[str]:
    """Every message in `exc` and the groups it holds (the client raises from a task group)."""
    if isinstance(exc, BaseExceptionGroup):
        return [m for inner in exc.exceptions for m in messages(inner)]
    return [str(exc)]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path / "vault"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "a.md").write_text("# A\n")
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text(PERSON_RULES)
    (tmp_path / "other-config" / "vaultwatch").mkdir(parents=True)  # no rules at all
    person = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(sock_dir),
    }
    yield root, person
    stop_headless_servers(root)


def bridge(root: Path, env: dict[str, str], agent: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0],
        args=[*VAULTWATCH[1:], "bridge", "--vault", str(root), "--agent", agent],
        env=env,
        cwd=str(ROOT),
    )


async def first_bridge_starts_the_server(root: Path, env: dict[str, str]) -> None:
    async with Client(bridge(root, env, "starter")) as client:
        assert not (await client.call_tool("list_documents", {})).is_error


@pytest.mark.parametrize(
    ("starter", "named"),
    [
        ({"XDG_CONFIG_HOME": "other-config"}, "settings file"),
        ({"VAULTWATCH_JOURNAL": "0"}, "VAULTWATCH_JOURNAL"),
        ({"XDG_STATE_HOME": "other-state"}, "state folder"),
        ({"VAULTWATCH_JOURNAL_AGENT_SHARE": "1"}, "VAULTWATCH_JOURNAL_AGENT_SHARE"),
        ({"HOME": "other-home"}, "home folder"),  # what `~` in `[vaults."~/..."]` names
    ],
)
async def test_a_bridge_of_another_environment_is_refused(place, starter, named) -> None:
    root, person = place
    base = root.parent
    env = {**person, **{k: str(base / v) if k.startswith(("XDG_", "HOME")) else v for k, v in starter.items()}}
    await first_bridge_starts_the_server(root, env)
    before = tree(root)
    with pytest.raises((MCPError, BaseExceptionGroup)) as refused:
        async with Client(bridge(root, person, "helper")) as client:
            await client.call_tool("write", {"path": "Notes/a.md", "content": "# by helper\n", "overwrite": True})
    said = " | ".join(messages(refused.value))
    assert "another environment" in said and named in said, said
    assert tree(root) == before  # the read-only agent wrote nothing under the starter's looser rules


async def test_the_same_environment_spelled_otherwise_is_served(place) -> None:
    """The settings folder through a symlink, and a variable set to its default, are the same rules."""
    root, person = place
    alias = root.parent / "config-link"
    alias.symlink_to(person["XDG_CONFIG_HOME"])
    await first_bridge_starts_the_server(root, {**person, "XDG_CONFIG_HOME": str(alias), "VAULTWATCH_JOURNAL": "1"})
    async with Client(bridge(root, person, "helper")) as client:
        got = await client.call_tool("write", {"path": "Notes/a.md", "content": "# by helper\n", "overwrite": True})
    assert got.is_error and "read-only" in got.content[0].text  # served, and under the person's rules
    assert (root / "Notes" / "a.md").read_text() == "# A\n"


async def test_a_server_the_person_started_serves_a_trimmed_bridge_under_the_persons_rules(place) -> None:
    """A server started by hand runs in the person's environment: a client that spawns its bridge with
    a trimmed environment (the TypeScript SDK passes only HOME, PATH and a few more) is served, and
    its agent is under the person's rules, not refused for naming the default settings file."""
    root, person = place
    server = subprocess.Popen(
        [*VAULTWATCH, "serve", str(root), "--headless"],
        env=person,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        trimmed = {k: v for k, v in person.items() if k != "XDG_CONFIG_HOME" and k != "XDG_STATE_HOME"}
        params = bridge(root, trimmed, "helper")
        params.args.append("--no-start")
        async with Client(params) as client:
            got = await client.call_tool("write", {"path": "Notes/a.md", "content": "# by helper\n", "overwrite": True})
        assert got.is_error and "read-only" in got.content[0].text, got
        assert (root / "Notes" / "a.md").read_text() == "# A\n"
    finally:
        server.terminate()
        server.wait(timeout=30)


async def test_a_settings_folder_pointed_elsewhere_after_the_start_is_refused(place) -> None:
    """The starter's settings folder is a symlink to the person's, so the person's bridges are served
    under the person's rules; once the link points at a folder with no rules, they are refused, as
    every decision would read the settings file through the link as it is then."""
    root, person = place
    link = root.parent / "config-link"
    link.symlink_to(person["XDG_CONFIG_HOME"])
    await first_bridge_starts_the_server(root, {**person, "XDG_CONFIG_HOME": str(link)})
    async with Client(bridge(root, person, "helper")) as client:
        got = await client.call_tool("write", {"path": "Notes/a.md", "content": "# by helper\n", "overwrite": True})
        assert got.is_error and "read-only" in got.content[0].text, got
    link.unlink()
    link.symlink_to(root.parent / "other-config")
    with pytest.raises((MCPError, BaseExceptionGroup)) as refused:
        async with Client(bridge(root, person, "helper")) as client:
            await client.call_tool("write", {"path": "Notes/a.md", "content": "# by helper\n", "overwrite": True})
    said = " | ".join(messages(refused.value))
    assert "another environment" in said and "settings file" in said, said
    assert (root / "Notes" / "a.md").read_text() == "# A\n"
