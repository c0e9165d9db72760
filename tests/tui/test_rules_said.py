"""What the TUI says of the person's rules: a rule naming a folder the vault does not have, at start
and at once when the folder goes while the TUI watches; what the mode `g` chooses covers."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tui_agents import agent, mcp_started
from tui_helpers import open_loaded
from waiting import TIMEOUT, await_until

from vaultwatch.core.review import approval
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ApprovalScreen
from vaultwatch.tui.idle import settle


def said(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def test_a_rule_whose_folder_is_missing_or_goes_away_is_said(tui_demo: Path, tmp_path: Path) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text(
        '[approve.folders]\n"Projects/**" = "never"\n"Attic/**" = "writes"\n[agents.scribe]\nwrite = ["Projects/**"]\n'
    )
    vault = open_loaded(tui_demo)
    approval.configure(vault, settings=str(settings))  # as the `vaultwatch` command does
    app = make_app(vault, config=fixed_config(watch=True))
    async with app.run_test(size=(120, 30)):
        await settle(app)
        assert await asyncio.to_thread(vault.wait_watching, TIMEOUT)
        await settle(app)
        # Attic was never this vault's (another vault's folder, as far as it knows): no notice at start
        assert not any("Attic" in s for s in said(app)), said(app)
        (tui_demo / "Projects").rename(tui_demo / "Projets")  # as `mv` does, outside vaultwatch
        await await_until(lambda: any("Projects was moved or removed" in s for s in said(app)))
        [gone] = [s for s in said(app) if "Projects was moved or removed" in s]
        assert 'rule "Projects/**" = "never", [agents."scribe"] write "Projects/**"' in gone, gone


async def test_a_rule_spelled_to_cover_nothing_is_said_at_start(tui_demo: Path, tmp_path: Path) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folders]\n"Projects\\\\**" = "never"\n[agents.scribe]\ndeny = ["**"]\n')
    vault = open_loaded(tui_demo)
    approval.configure(vault, settings=str(settings))  # as the `vaultwatch` command does
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)):
        await settle(app)
        await await_until(lambda: any(s.startswith("settings: ") for s in said(app)))
        [start] = [s for s in said(app) if s.startswith("settings: ")]
        assert 'rule "Projects\\**" = "never" covers nothing as written' in start, start
        assert start.endswith('write it as "Projects/**"'), start  # and nothing of `deny = ["**"]`


async def test_g_names_the_agents_and_folder_rules_its_mode_does_not_cover(
    tui_demo: Path, tmp_path: Path, socket_path: str
) -> None:
    """`g` chooses the vault's mode; an agent with a mode of its own keeps it. The notice and the
    status line say so, and it is true: scribe (approve = "none") writes unasked under "writes"."""
    settings = tmp_path / "settings.toml"
    settings.write_text(
        '[approve]\nmode = "deletes"\n[approve.folders]\n"Journal/**" = "writes"\n'
        '[agents.scribe]\napprove = "none"\n[agents."ts-helper"]\napprove = "writes"\n'
    )
    vault = open_loaded(tui_demo)
    approval.configure(vault, settings=str(settings))  # as the `vaultwatch` command does
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(app)
        await mcp_started(app, socket_path)
        status = app.status.parts["approval"].plain
        assert status == "approve: deletes (scribe: none, ts-helper: writes) + folder rules", status
        await pilot.press("g", "g")  # deletes -> none -> writes
        await settle(app)
        assert said(app)[-1] == (
            "approval mode: approval: writes (agents' writes wait for your approval; not for agents with a "
            "mode of their own: scribe (none); folder rules still decide their folders)"
        ), said(app)
        assert app.status.parts["approval"].plain == "approve: writes (scribe: none) + folder rules"
        async with agent(socket_path, "scribe") as scribe:
            done = await scribe.call_tool("write", {"path": "Inbox/from scribe.md", "content": "x\n"})
        assert not done.is_error, done.content[0].text  # unasked, as the notice said
        assert not isinstance(app.screen, ApprovalScreen)
