"""A real agent (the `mcp` client) on the app's real Unix socket, watched through the TUI."""

from __future__ import annotations

import asyncio
import math
import os
import stat
import time
from pathlib import Path

import pytest
from tui_agents import agent, mcp_started, wait_for
from tui_helpers import armed, open_loaded
from waiting import TIMEOUT, await_until

from vaultwatch.core.review import approval
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ApprovalScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.activity import ActivityList, clock_time, error_cell


async def test_real_agents_list_and_read_while_the_tui_watches(tui_demo: Path, socket_path: str) -> None:
    app = make_app(open_loaded(tui_demo), config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await wait_for(lambda: os.path.exists(socket_path))
        assert stat.S_IMODE(os.stat(socket_path).st_mode) == 0o600
        await wait_for(lambda: socket_path in app.status.parts["mcp"].plain)
        activity = app.query_one(ActivityList)

        async with agent(socket_path, "claude-test") as claude, agent(socket_path, "cursor-test") as cursor:
            listed = await claude.call_tool("list_documents", {"folder": "Projects"})
            assert not listed.is_error
            await wait_for(lambda: len(activity.rows) >= 1)
            row = activity.rows[-1]
            assert (row.agent.split("/")[0], row.tool) == ("claude-test", "list_documents")
            assert row.result_count == 7 and row.error is None
            assert app.session.marks.get("Projects/Atlas Migration.md").kind == "listed"
            assert app.session.marks.folder("Projects").agent == row.agent

            activity.focus()
            await pilot.press("end", "f")  # follow the selected agent (claude)
            assert app.main.activity.following and app.main.activity.follow_agent == row.agent
            await cursor.call_tool("read", {"path": "People/Ben Okafor.md"})
            await claude.call_tool("read", {"path": "Projects/Atlas Migration.md"})
            await wait_for(lambda: len(activity.rows) >= 3)
            await settle(app)
            assert app.main.preview.path == "Projects/Atlas Migration.md"  # claude's read, not cursor's
            assert "read by agent claude-test" in app.main.preview.head_text
            assert app.session.marks.get("People/Ben Okafor.md").agent.startswith("cursor-test")

            bad = await claude.call_tool("read", {"path": "../etc/passwd"})
            assert bad.is_error
            await wait_for(lambda: len(activity.rows) >= 4)
            assert activity.rows[-1].error and "traversal" in activity.rows[-1].error

            await wait_for(
                lambda: {"claude-test", "cursor-test"} <= {a.split("/")[0] for a in app.main.activity.agents.values()}
            )
            status = app.status.parts["mcp"].plain
            assert socket_path in status and "claude-test" in status and "cursor-test" in status
        await pilot.press("q")
    assert not os.path.exists(socket_path)  # quitting stopped the server and removed its socket


async def test_second_instance_on_the_same_socket_reports_the_error(tui_demo: Path, socket_path: str) -> None:
    first = make_app(open_loaded(tui_demo), config=fixed_config(mcp=True, socket_path=socket_path))
    async with first.run_test(size=(120, 30)):
        await wait_for(lambda: os.path.exists(socket_path))
        second = make_app(open_loaded(tui_demo), config=fixed_config(mcp=True, socket_path=socket_path))
        async with second.run_test(size=(120, 30)) as pilot:
            await wait_for(lambda: second.services.host_error is not None)
            await pilot.pause()
            assert "MCP off" in second.status.parts["mcp"].plain
            assert len(second.main.active_list.rows) == 43  # the TUI itself keeps working


async def test_each_connected_agent_shows_the_persons_rule_for_it(tui_demo: Path, socket_path: str) -> None:
    from vaultwatch.core.review import approval
    from vaultwatch.core.review.agentrules import parse

    vault = open_loaded(tui_demo)
    rules = parse({"agents": {"reader": {"read_only": True}, "scribe": {"write": ["Inbox/**"]}}}, None)
    approval.attach(vault, approval.ApprovalGate("none", agents=rules))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)):
        await settle(app)
        await wait_for(lambda: socket_path in app.status.parts["mcp"].plain)
        title = app.query_one("#activity-title")
        async with agent(socket_path, "reader") as reader, agent(socket_path, "scribe") as scribe:
            refused = await reader.call_tool("write", {"path": "Inbox/x.md", "content": "x\n"})
            assert refused.is_error and '[agents."reader"]' in refused.content[0].text
            await scribe.call_tool("list_documents", {"limit": 1})
            await wait_for(lambda: "scribe" in str(title.render()) and "reader" in str(title.render()))
            shown = str(title.render())
            assert "reader/1.0 (read-only)" in shown and "scribe/1.0 (writes Inbox/**)" in shown, shown


async def test_the_tui_shows_the_settings_file_as_it_is_now(
    tui_demo: Path, socket_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person edits the settings file while the TUI runs and no agent writes: the status line's
    approval mode and each agent's rule in the activity panel follow it (read by the gate, the one
    core function every decision uses), and a file that no longer parses says so there."""
    from vaultwatch.core.review import approval
    from vaultwatch.tui.flows import review

    # what the TUI shows on its look at the file is checked here, not how often it looks: each edit
    # below would otherwise wait out most of a look's interval
    monkeypatch.setattr(review, "RULES_LOOK_S", 0.1)

    settings = tmp_path / "settings.toml"
    vault = open_loaded(tui_demo)
    approval.configure(vault, settings=str(settings))  # as the `vaultwatch` command does
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)):
        await settle(app)
        await wait_for(lambda: socket_path in app.status.parts["mcp"].plain)
        title = app.query_one("#activity-title")
        async with agent(socket_path, "reader") as reader:
            await reader.call_tool("list_documents", {"limit": 1})
            await wait_for(lambda: "reader" in str(title.render()))
            assert "approval" not in app.status.parts and "read-only" not in str(title.render())
            settings.write_text('[approve]\nmode = "writes"\n[agents.reader]\nread_only = true\n')
            await wait_for(
                lambda: "approval" in app.status.parts and app.status.parts["approval"].plain == "approve: writes"
            )
            await wait_for(lambda: "reader/1.0 (read-only)" in str(title.render()))
            refused = await reader.call_tool("write", {"path": "Inbox/x.md", "content": "x\n"})
            assert refused.is_error and '[agents."reader"]' in refused.content[0].text
            settings.write_text("[approve\n")
            await wait_for(lambda: "does not parse" in app.status.parts["approval"].plain)
            # a file that parses but misspells a rules table is not said not to parse
            settings.write_text('[approve.folder]\n"Projects/**" = "never"\n')
            await wait_for(
                lambda: app.status.parts["approval"].plain == "unknown table [approve.folder]: agents' changes refused"
            )


async def test_a_misspelt_rules_table_at_start_refuses_changes_not_the_tui(
    tui_demo: Path, socket_path: str, tmp_path: Path
) -> None:
    """A misspelt rules table in the settings file at start: the TUI and its server start, an agent
    reads, its change is refused with the reason, and the status line names the table (the file parses)."""
    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folder]\n"Projects/**" = "never"\n')
    vault = open_loaded(tui_demo)
    approval.configure(vault, settings=str(settings))  # as the `vaultwatch` command does
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)):
        await settle(app)
        await wait_for(lambda: socket_path in app.status.parts["mcp"].plain)
        assert app.status.parts["approval"].plain == "unknown table [approve.folder]: agents' changes refused"
        async with agent(socket_path, "helper") as helper:
            read = await helper.call_tool("list_documents", {"limit": 1})
            assert not read.is_error, read.content[0].text
            refused = await helper.call_tool("write", {"path": "Inbox/x.md", "content": "x\n"})
            said = refused.content[0].text
            assert refused.is_error and "[approve.folder] is not a setting" in said and "did you mean" in said, said
        assert not (tui_demo / "Inbox" / "x.md").exists()


async def test_a_never_folder_rule_shows_for_every_agent(tui_demo: Path, socket_path: str, tmp_path: Path) -> None:
    """A folder rule "never" holds for every agent, one with a table of its own too: the status line
    and each agent's rules in the activity panel say so, and the agent's refusal names the rule."""
    from vaultwatch.core.review import approval

    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folders]\n"Projects/**" = "never"\n[agents.scribe]\napprove = "none"\n')
    vault = open_loaded(tui_demo)
    approval.configure(vault, settings=str(settings))  # as the `vaultwatch` command does
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(160, 30)):
        await settle(app)
        await wait_for(lambda: socket_path in app.status.parts["mcp"].plain)
        assert app.status.parts["approval"].plain == "approve: none + folder rules · never: Projects/**"
        title = app.query_one("#activity-title")
        async with agent(socket_path, "scribe") as scribe:
            refused = await scribe.call_tool("write", {"path": "Projects/new.md", "content": "x\n"})
            assert refused.is_error and 'rule "Projects/**" = "never"' in refused.content[0].text
            await wait_for(lambda: "scribe" in str(title.render()))
            shown = str(title.render())
            assert "scribe/1.0 (writes anywhere; approval: none; never Projects/** (every agent))" in shown, shown


@pytest.mark.usefixtures("own_state")
async def test_a_tui_on_a_folder_of_a_vault_with_rules_serves_no_agents_and_says_why(
    tui_demo: Path, socket_path: str, tmp_path: Path, monkeypatch
) -> None:
    """The TUI opened on a folder of a vault the settings file has a table for shows the folder, but
    its MCP server does not start (the vault's rules' paths would not be this folder's), and the
    status line says why; with --allow-nested (AppConfig.allow_nested) it serves. The refused TUI
    makes no change journal for the folder: one would make it a vault of its own, served next time."""
    from vaultwatch.core.review.journal import journal_path

    root = os.path.realpath(tui_demo)
    journal = journal_path(os.path.join(root, "Projects"))
    (tmp_path / "vaultwatch").mkdir()
    (tmp_path / "vaultwatch" / "settings.toml").write_text(f'[vaults."{root}".triage]\nstale_unmodified_days = 9\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    app = make_app(open_loaded(tui_demo / "Projects"), config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(lambda: app.services.host_error is not None)
        await pilot.pause()
        assert f"lies inside the vault {root}" in app.services.host_error, app.services.host_error
        assert "--allow-nested" in app.services.host_error
        assert "MCP off" in app.status.parts["mcp"].plain
        assert not os.path.exists(socket_path)
        assert len(app.main.active_list.rows) > 0  # the TUI itself keeps working
        assert not os.path.exists(journal)
    config = fixed_config(mcp=True, socket_path=socket_path, allow_nested=True)
    app = make_app(open_loaded(tui_demo / "Projects"), config=config)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(lambda: socket_path in app.status.parts["mcp"].plain)
        await pilot.press("q")
    assert os.path.exists(journal)  # the person's --allow-nested made it a vault of its own


@pytest.mark.usefixtures("own_state")
async def test_a_tui_on_a_vault_holding_a_folder_served_once_with_the_flag_says_how_to_undo_it(
    tui_demo: Path, socket_path: str
) -> None:
    """One `--allow-nested` TUI on VAULT/Projects gave it a journal; the TUI on the vault then said the
    rules "are paths from" Projects (no table names it) and advised serving Projects, where none of
    the rules written for the vault apply. It says Projects was served on its own, and how to undo it."""
    from vaultwatch.core.review.journal import journal_path

    root = os.path.realpath(tui_demo)
    projects = os.path.join(root, "Projects")
    for folder, allow in ((tui_demo, False), (tui_demo / "Projects", True)):  # the vault, then the folder
        config = fixed_config(mcp=True, socket_path=socket_path, allow_nested=allow)
        served = make_app(open_loaded(folder), config=config)
        async with served.run_test(size=(120, 30)) as pilot:
            await wait_for(lambda app=served: socket_path in app.status.parts["mcp"].plain)
            await pilot.press("q")
    app = make_app(open_loaded(tui_demo), config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(lambda: app.services.host_error is not None)
        await pilot.pause()
        said = app.services.host_error
        assert f"holds the vault {projects} (it was served on its own before: it has a change journal" in said
        assert f"paths from {projects}" not in said and f"Serve {projects} itself" not in said, said
        assert f"make it no vault again: move its journal {journal_path(projects)}" in said, said
        assert "MCP off" in app.status.parts["mcp"].plain


@pytest.mark.usefixtures("own_state")
async def test_the_activity_panel_shows_when_the_agent_asked_not_when_the_call_ended(
    tui_demo: Path, socket_path: str
) -> None:
    """A write that waited for the person's approval: its row's Time was when the call ended (after
    the person answered). It is when the agent asked."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        activity = app.query_one(ActivityList)
        async with agent(socket_path, "scribe") as scribe:
            before = time.time()
            call = asyncio.create_task(scribe.call_tool("write", {"path": "Inbox/asked.md", "content": "# Asked\n"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen))
            shown = time.time()
            # the person answers in a later second than any the agent could have asked in
            await await_until(lambda: time.time() >= math.floor(shown) + 1)
            await armed(app.screen)
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
            assert not result.is_error, result.content
            await await_until(lambda: any(r.tool == "write" for r in activity.rows))
        row = next(r for r in activity.rows if r.tool == "write")
        localtime = app.session.config.localtime
        asked = {clock_time(t, localtime) for t in range(math.floor(before), math.floor(shown) + 1)}
        [column] = [c for c in activity.all_columns() if c.key == "time"]
        [(shown_time, _)] = activity.cells(row, [column])
        assert shown_time in asked and shown_time != clock_time(row.at, localtime), (shown_time, asked)


async def test_the_error_cell_of_a_refused_call_starts_at_the_rules_name(tui_demo: Path, socket_path: str) -> None:
    """Every refusal by rule began `the person's rule `, so the 28-wide Error cell cut the rule's name."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("none", folders=[("Projects/**", "never")]))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)):
        await mcp_started(app, socket_path)
        activity = app.query_one(ActivityList)
        async with agent(socket_path, "scribe") as scribe:
            result = await scribe.call_tool("write", {"path": "Projects/x.md", "content": "# X\n"})
            assert result.is_error and "the person's rule" in result.content[0].text, result.content
            await await_until(lambda: any(r.tool == "write" for r in activity.rows))
        row = next(r for r in activity.rows if r.tool == "write")
        [column] = [c for c in activity.all_columns() if c.key == "error"]
        [(shown, _)] = activity.cells(row, [column])
        assert shown.startswith('"Projects/**" = "never"'), shown


async def test_a_refused_calls_whole_rule_is_in_its_tooltip_and_enter_opens_its_refusal(
    tui_demo: Path, socket_path: str
) -> None:
    """A rule's name longer than the 28-wide Error cell was cut there, and nothing showed it whole: the
    row's tooltip says the whole error now, and enter on the row opens the refusals view with the
    call's record selected, its detail saying the whole rule."""
    from textual.widgets import DataTable  # noqa: PLC0415

    from vaultwatch.tui.screens.refusals import RefusalsScreen  # noqa: PLC0415

    rule = "Projects/Archive/Retired/**"
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("none", folders=[(rule, "never")]))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        activity = app.query_one(ActivityList)
        async with agent(socket_path, "scribe") as scribe:
            await scribe.call_tool("read", {"path": "index.md"})
            target = "Projects/Archive/Retired/Q3 2024 Roadmap.md"
            result = await scribe.call_tool("delete", {"path": target})
            assert result.is_error and f'"{rule}"' in result.content[0].text, result.content
            # a later refusal: the view's newest record is not the one asked for
            later = await scribe.call_tool("write", {"path": "Projects/Archive/Retired/x.md", "content": "# X\n"})
            assert later.is_error
            await await_until(lambda: len(activity.rows) == 3)
        await settle(app)
        y = next(n for n, r in enumerate(activity.rows) if r.tool == "delete")
        row = activity.rows[y]
        [column] = [c for c in activity.all_columns() if c.key == "error"]
        [(shown, _)] = activity.cells(row, [column])
        assert shown.startswith(f'"{rule}"'), shown
        await pilot.hover(activity, offset=(2, y + 1))
        await pilot.pause()
        assert activity.tooltip is not None and row.error in str(activity.tooltip), activity.tooltip
        activity.focus()
        activity.cursor = y
        await pilot.press("enter")
        await await_until(lambda: isinstance(app.screen, RefusalsScreen) and app.screen.rows is not None)
        await settle(app)
        screen = app.screen
        shown_detail = str(screen.query_one("#refusals-detail").render())
        assert f'"{rule}"' in shown_detail and target in shown_detail and "delete" in shown_detail, shown_detail
        assert screen.query_one(DataTable).cursor_row == 1
    # a decline's cell leads with what happened, not `the person declined this cha…`
    assert error_cell("Error: the person declined this change: not now") == "declined: not now"
