"""The Changes view's selection is a change, not a row number: a revert's new row, an agent's new
change or a change gone from the list never puts another change under `r`. Real vault, real
journal (agents' changes through the real write path), Pilot keys."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from tui_agents import wait_for

from vaultwatch.core.clock import SteppingClock
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ChangesScreen, ConflictScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.diffview import DiffView, plain

pytestmark = pytest.mark.usefixtures("own_state")

PLAN = "Inbox/plan.md"
BODY = "".join(f"line {i}\n" for i in range(1, 31))
AGENT = "agent:bot"


def six_changes(writer: Writer) -> None:
    """Six changes of one agent, as the user test's: change 1 and change 6 edit one note apart, so
    reverting change 1 asks first (the note changed since) and `a` merges."""
    writer.edit(PLAN, "line 3\n", "line 3 by the agent\n", actor=AGENT)
    writer.update_frontmatter("b.md", set={"status": "played"}, actor=AGENT)
    writer.write("Inbox/idea.md", "# Idea\n", actor=AGENT)
    writer.rename("c.md", "Archive/c.md", actor=AGENT)
    writer.delete("d.md", actor=AGENT)
    writer.edit(PLAN, "line 20\n", "line 20 by the agent\n", actor=AGENT)


def vault_files() -> dict[str, str]:
    return {PLAN: BODY, "b.md": "# B\n", "c.md": "# C\n", "d.md": "# D\n", "e.md": "# E\n"}


def shown(screen: ChangesScreen) -> str:
    return plain(screen.query_one(DiffView).renderable)


def selected_id(screen: ChangesScreen) -> int | None:
    change = screen.selected()
    return None if change is None else change.id


def notices(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def test_after_a_revert_anyway_the_reverted_change_stays_selected_and_r_never_reverts_another(
    make_vault, app_for
) -> None:
    """The user test: C, t, down x5 to change 1, r, a (three-way merge). The detail pane showed
    change 2 after it, so a second r would have reverted change 2."""
    app = app_for(make_vault(vault_files()))
    six_changes(Writer(app.session.vault))
    journal = journal_for(app.session.vault)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        await pilot.press("down", "down", "down", "down", "down")
        assert selected_id(screen) == 1 and shown(screen).startswith("change 1 ")
        await pilot.press("r")
        await wait_for(lambda: isinstance(app.screen, ConflictScreen))
        await pilot.press("a")
        await wait_for(lambda: journal.get(1).reverted_by is not None)
        await wait_for(lambda: app.screen is screen and len(screen.rows) == 7)
        await settle(app)
        assert selected_id(screen) == 1, [c.id for c in screen.rows]
        assert shown(screen).startswith("change 1 "), shown(screen)[:80]
        await pilot.press("r")  # change 1 again: already reverted, so nothing is
        await settle(app)
        await pilot.pause(0.3)
        assert journal.get(2).reverted_by is None
        assert [c.revert_of for c in journal.changes(kinds=["revert"])] == [1]


async def test_an_agents_new_change_does_not_move_the_selection(make_vault, app_for) -> None:
    """An agent's change arriving while the person reads the list adds a row at its top: the
    person's change stays selected, and r reverts it, not the one now at its old row."""
    root = make_vault(vault_files())
    app = app_for(root)
    writer = Writer(app.session.vault)
    six_changes(writer)
    journal = journal_for(app.session.vault)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        await pilot.press("down", "down", "down")  # change 3, the created note
        assert selected_id(screen) == 3
        writer.write("Inbox/later.md", "later\n", actor="agent:other")  # journaled: the view lists it
        await wait_for(lambda: len(screen.rows) == 7)
        await settle(app)
        assert selected_id(screen) == 3 and shown(screen).startswith("change 3 ")
        await pilot.press("r")
        await wait_for(lambda: journal.get(3).reverted_by is not None)
        assert not (root / "Inbox" / "idea.md").exists()
        assert journal.get(2).reverted_by is None and journal.get(7).reverted_by is None
        assert (root / "Inbox" / "later.md").exists()


async def test_a_selected_change_gone_from_the_list_is_said_and_the_new_one_shown(tmp_path: Path, make_vault) -> None:
    """The selected change leaves the list (here: t back to this session, it is older): the cursor
    goes to the nearest change, its diff is shown, and a notice says the selection moved."""
    root = make_vault(vault_files())
    clock = SteppingClock(dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC))
    vault = Vault(root, clock=clock)
    vault.load()
    writer = Writer(vault)
    writer.write("Inbox/before.md", "before\n", actor=AGENT)  # change 1, before the session
    clock.advance(60)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app)
        clock.advance(60)
        writer.write("Inbox/a.md", "a\n", actor=AGENT)  # change 2, in the session
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        await pilot.press("t", "down")
        assert selected_id(screen) == 1
        await pilot.press("t")  # this session: change 1 is not in it
        await settle(app)
        assert [c.id for c in screen.rows] == [2]
        assert selected_id(screen) == 2 and shown(screen).startswith("change 2 ")
        assert any("change 1 is no longer listed" in n and "change 2" in n for n in notices(app)), notices(app)


async def test_r_reverts_only_the_change_whose_diff_is_shown(make_vault, app_for) -> None:
    """A key that reaches the view after the cursor moved but before the moved-to change's diff is
    drawn acts on nothing: it shows that change's diff and says so."""
    app = app_for(make_vault(vault_files()))
    six_changes(Writer(app.session.vault))
    journal = journal_for(app.session.vault)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert selected_id(screen) == 6 and shown(screen).startswith("change 6 ")
        table = screen.query_one("#changes-table")
        table.move_cursor(row=2)  # change 4; its highlight not handled yet
        screen.action_revert()
        await settle(app)
        await pilot.pause(0.3)
        assert journal.changes(kinds=["revert"]) == []
        assert shown(screen).startswith("change 4 ")
        assert any("whose diff was not shown" in n for n in notices(app)), notices(app)
        await pilot.press("r")  # now shown: r reverts it
        await wait_for(lambda: journal.get(4).reverted_by is not None)
        assert journal.get(6).reverted_by is None


def stepping_vault(root: Path) -> tuple[Vault, SteppingClock]:
    clock = SteppingClock(dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC))
    vault = Vault(root, clock=clock)
    vault.load()
    return vault, clock


def title_of(screen: ChangesScreen) -> str:
    return str(screen.query_one("#changes-title").render())


async def test_the_empty_session_view_says_how_many_earlier_changes_wait_and_t_lists_them(make_vault) -> None:
    """An agent worked while no TUI was open: `C` (this session) is empty, and says how many of the
    earlier changes nobody has reviewed and that `t` lists them; `t` does."""
    root = make_vault(vault_files())
    vault, clock = stepping_vault(root)
    writer = Writer(vault)
    six_changes(writer)  # headless, before the session
    clock.advance(60)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert screen.rows == []
        assert "0 · this session  6 not reviewed from before this session: t lists them" in title_of(screen)
        text = shown(screen)
        assert "no changes journaled in this session" in text
        assert "6 changes from before this session are not reviewed yet: t lists every journaled change" in text
        await pilot.press("t")
        assert [c.id for c in screen.rows] == [6, 5, 4, 3, 2, 1]
        assert "not reviewed from before" not in title_of(screen)
        await pilot.press("M", "t")  # all reviewed: nothing waits from before any more
        assert screen.rows == [] and "not reviewed from before" not in title_of(screen)
        assert "not reviewed yet" not in shown(screen)


async def test_the_session_view_counts_only_earlier_changes_not_reviewed(make_vault) -> None:
    """The count leaves out the session's own changes and the earlier ones already reviewed."""
    root = make_vault(vault_files())
    vault, clock = stepping_vault(root)
    writer = Writer(vault)
    six_changes(writer)
    journal_for(vault).mark_reviewed([1, 2], by="human")
    clock.advance(60)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(app)
        clock.advance(60)
        writer.write("Inbox/now.md", "now\n", actor=AGENT)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert [c.id for c in screen.rows] == [7]
        assert "1 · this session  4 not reviewed from before this session: t lists them" in title_of(screen)
