"""The refusals view (tui.screens.refusals): the agents' changes that did not happen, as
`vaultwatch refusals` lists them, from the same record (core.review.refusals), reached with `x`
from the Changes view or ctrl+p › Show refusals, and listed in the help. Agents' names are their
clients' claims: drawn as `agent <name>`, escaped, never as markup."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_agents import agent, mcp_started, wait_for
from tui_helpers import open_loaded
from waiting import await_until

from vaultwatch.core.review import approval, refusals
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.core.review.refusals import Refusal
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ChangesScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.refusals import RefusalsScreen

pytestmark = pytest.mark.usefixtures("own_state")

AT = 1_795_000_000.0  # a fixed wall time: the records' times are shown in the snapshot
TRICKY = "[bold]human:root\u200b[/bold]"  # markup and an invisible character in a client's claim


def record(root: Path) -> None:
    """A refusal by rule, then a decline (newest), kept as the approval gate keeps them."""
    where = str(root.resolve())
    refusals.note(
        where,
        Refusal(
            at=AT,
            kind=refusals.REFUSED,
            agent="scribe/1.0",
            session="s-1234567890",
            tool="edit",
            operation="edit",
            paths=["Notes/a.md"],
            reason='[agents."scribe"] write = ["Inbox/**"]: Notes/a.md is outside what it may write',
        ),
    )
    refusals.note(
        where,
        Refusal(
            at=AT + 60,
            kind=refusals.DECLINED,
            agent=TRICKY,
            session=None,
            tool="delete",
            operation="delete",
            paths=["Projects/Atlas Migration.md"],
            reason="declined in the TUI: not now",
        ),
    )


def cells(screen: RefusalsScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(n)] for n in range(table.row_count)]


def detail(screen: RefusalsScreen) -> str:
    return str(screen.query_one("#refusals-detail").render())


async def open_from_changes(app, pilot) -> RefusalsScreen:
    await settle(app)
    await pilot.press("C")
    await wait_for(lambda: isinstance(app.screen, ChangesScreen))
    await pilot.press("x")
    await wait_for(lambda: isinstance(app.screen, RefusalsScreen) and app.screen.rows is not None)
    await settle(app)
    return app.screen


async def test_x_in_the_changes_view_lists_refusals_newest_first_with_names_escaped(tui_demo: Path):
    record(tui_demo)
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_from_changes(app, pilot)
        rows = cells(screen)
        assert [r[3] for r in rows] == ["declined", "refused"], rows
        assert rows[0][1] == "agent [bold]human:root\\u200b[/bold]", rows  # literal, escaped
        assert rows[1][1] == "agent scribe/1.0" and rows[1][4] == "edit" and rows[1][5] == "Notes/a.md", rows
        assert rows[1][2] == "s-1234567890"[: len(rows[1][2])] and rows[1][2], rows
        assert "declined in the TUI: not now" in detail(screen)
        await pilot.press("down")
        await settle(app)
        shown = detail(screen)
        assert "agent scribe/1.0" in shown and 'write = ["Inbox/**"]: Notes/a.md is outside' in shown, shown
        await pilot.press("k")  # only the refused
        await settle(app)
        assert [r[3] for r in cells(screen)] == ["refused"]
        await pilot.press("k")  # only the declined
        await settle(app)
        assert [r[3] for r in cells(screen)] == ["declined"]
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))


async def test_the_palette_opens_the_refusals_and_the_help_lists_them(tui_demo: Path):
    record(tui_demo)
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app)
        help_rows = dict(app.key_help())
        assert any(
            key == "x" and "Refused and declined" in what for key, what in help_rows["Changes view and a change's diff"]
        )
        [section] = [rows for title, rows in help_rows.items() if title.startswith("Refused and declined")]
        assert any("Refused / declined / all" in what for _key, what in section), section
        await pilot.press("ctrl+p")
        await pilot.press(*"Show refusals")
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, RefusalsScreen) and app.screen.rows is not None)
        await settle(app)
        assert [r[3] for r in cells(app.screen)] == ["declined", "refused"]


async def test_no_refusals_says_so(tui_demo: Path):
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_from_changes(app, pilot)
        assert cells(screen) == []
        assert "No agent's change was refused or declined" in str(screen.query_one("#refusals-title").render())


async def test_a_record_that_cannot_be_read_is_said_not_shown_as_none(tui_demo: Path):
    kept = Path(refusals.refusals_path(str(tui_demo.resolve())))
    kept.mkdir(parents=True)  # a folder where the file should be: reading it fails
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_from_changes(app, pilot)
        title = str(screen.query_one("#refusals-title").render())
        assert f"cannot read {kept}" in title and "No agent's change" not in title, title


def test_snapshot_the_refusals_view(snap_compare, tui_demo: Path) -> None:
    record(tui_demo)
    app = make_app(open_loaded(tui_demo), config=fixed_config())

    async def run_before(pilot) -> None:
        await open_from_changes(pilot.app, pilot)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 30), run_before=run_before)


async def test_the_why_column_shows_the_rule_on_screen_and_a_rename_reads_as_one(tui_demo: Path):
    """At 120 columns every refused row's why read `the person'`, cut at the edge; its detail said
    `rename rename` and listed the two ends as separate lines."""
    refusals.note(
        str(tui_demo.resolve()),
        Refusal(
            at=AT,
            kind=refusals.REFUSED,
            agent="scribe/1.0",
            session="scribe@stateless-a6c7e1f2",
            tool="rename",
            operation="rename",
            paths=["Clippings/Buy wisely.md", "Notes/Private/Buy wisely.md"],
            reason="the person's rule [agents.\"scribe\"] denies changes to 'Notes/Private/Buy wisely.md' "
            "(deny = ['Notes/Private/**'])",
        ),
    )
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_from_changes(app, pilot)
        table = screen.query_one(DataTable)
        line = table.render_line(1).text
        assert '[agents."scribe"]' in line and "the person" not in line, line
        assert line.rstrip().endswith("…"), line  # cut where the screen ends, visibly
        shown = detail(screen)
        assert "rename rename" not in shown and "Clippings/Buy wisely.md → Notes/Private/Buy wisely.md" in shown, shown


async def test_the_open_view_follows_an_agents_refusal_and_keeps_the_selection(
    tui_demo: Path, socket_path: str
) -> None:
    """The view read the record once, when it opened: an agent refused while the person looked at it
    did not appear. It follows the core bus now, the selected record staying selected."""
    record(tui_demo)
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("none", folders=[("Projects/**", "never")]))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await mcp_started(app, socket_path)
        screen = await open_from_changes(app, pilot)
        await pilot.press("down")  # the person selects the older record: scribe's refused edit
        await settle(app)
        assert "agent scribe/1.0" in detail(screen)
        async with agent(socket_path, "helper") as helper:
            result = await helper.call_tool("write", {"path": "Projects/x.md", "content": "# X\n"})
            assert result.is_error and "the person's rule" in result.content[0].text, result.content
        await await_until(lambda: len(cells(screen)) == 3)
        await settle(app)
        rows = cells(screen)
        assert rows[0][1].startswith("agent helper") and rows[0][4] == "write", rows
        assert "3 refused and declined changes" in str(screen.query_one("#refusals-title").render())
        table = screen.query_one(DataTable)
        assert table.cursor_row == 2 and rows[2][1] == "agent scribe/1.0", (table.cursor_row, rows)
        assert "agent scribe/1.0" in detail(screen)


async def test_the_open_view_follows_a_record_kept_by_another_process(tui_demo: Path) -> None:
    """A decline from a shell (`vaultwatch decline`) writes the record with no event on the TUI's bus."""
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_from_changes(app, pilot)
        assert cells(screen) == []
        record(tui_demo)  # as another process keeps them: the file, nothing else
        await await_until(lambda: len(cells(screen)) == 2)
        assert [r[3] for r in cells(screen)] == ["declined", "refused"]


async def test_a_long_tools_row_stays_inside_120_columns(tui_demo: Path):
    """Finding: at 120 columns a row whose tool is `update_frontmatter` pushed the table past the
    screen's edge: paths `Templates/Evil2…` and why `"Templates/**"` with nothing to tell the rule by.
    The tool and agent cells give up their ends first."""
    refusals.note(
        str(tui_demo.resolve()),
        Refusal(
            at=AT,
            kind=refusals.REFUSED,
            agent="scribe-assistant/1.0",
            session="bridge-b7eb2b87aa01",
            tool="update_frontmatter",
            operation="update_frontmatter",
            paths=["Templates/Evil2.md"],
            reason='the person\'s rule "Templates/**" = "never" ([approve.folders]) refuses every agent\'s change',
        ),
    )
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_from_changes(app, pilot)
        table = screen.query_one(DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width, table.virtual_size
        [row] = cells(screen)
        assert row[4].startswith("update_") and row[4].endswith("…"), row
        assert row[5] == "Templates/Evil2.md" and row[6].startswith('"Templates/**" = "nev'), row
        # (it read "lists the same record, and its path": the command names the record's file)
        assert "`vaultwatch refusals` lists these records too, and names the file that keeps them" in detail(screen)
