"""The conflict view (tui.screens.changes.ConflictScreen): a revert refused because the note changed
since, shown as hunks in plain words, with revert-anyway (a three-way merge) and $EDITOR. Real
vault, real journal, Pilot keys; the editor is a real process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_agents import wait_for
from tui_helpers import open_loaded

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.review.visible import visible
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ChangesScreen, ConflictScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.diffview import plain

pytestmark = pytest.mark.usefixtures("own_state")

NOTE = "Inbox/plan.md"
BODY = "".join(f"line {i}\n" for i in range(1, 31))


def edited_since(root: Path, *, overlap: bool):
    """An agent changes line 20; then the person changes line 3 (apart) or line 20 (overlapping)
    in their own editor, which the watcher journals as an outside edit."""
    (root / NOTE).write_text(BODY)
    vault = open_loaded(root)
    Writer(vault).edit(NOTE, "line 20\n", "line 20 by the agent\n", actor="agent:bot")
    now = (root / NOTE).read_text()
    later = (
        now.replace("line 20 by the agent\n", "line 20 by the agent, and me\n")
        if overlap
        else now.replace("line 3\n", "line 3, mine\n")
    )
    (root / NOTE).write_text(later)
    vault.refresh_paths([NOTE])
    return vault


def screen_text(app) -> str:
    return "\n".join(plain(s.content, 220) for s in app.screen.query("Static"))


async def open_conflict(app, pilot):
    await settle(app)
    await pilot.press("C")
    await wait_for(lambda: isinstance(app.screen, ChangesScreen))
    assert [c.kind for c in app.screen.rows] == ["outside", "change"]
    await pilot.press("down", "r")
    await wait_for(lambda: isinstance(app.screen, ConflictScreen))


async def test_the_conflict_view_shows_hunks_in_plain_words_and_reverts_the_agents_lines_anyway(tui_demo: Path):
    vault = edited_since(tui_demo, overlap=False)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await open_conflict(app, pilot)
        text = screen_text(app)
        assert "changed by you outside vaultwatch (in Obsidian or another editor) on 2026-" in text
        assert "etag" not in text and "Nothing was reverted" in text
        assert "line 20 by the agent" in text and "line 3, mine" in text
        assert "line 12" not in text  # hunks only, not three whole copies
        assert "a: revert the agent's lines anyway" in text
        await pilot.press("a")
        await wait_for(lambda: not isinstance(app.screen, ConflictScreen))
        # the revert runs in a worker: wait for its notice before reading the note
        await wait_for(lambda: any("kept the later edit" in n.message for n in app._notifications), 20)
        assert (tui_demo / NOTE).read_text() == BODY.replace("line 3\n", "line 3, mine\n")
    journal = journal_for(vault)
    [revert_row] = journal.changes(kinds=["revert"])
    assert revert_row.who.startswith("human") and journal.get(revert_row.revert_of).reverted_by == revert_row.id


async def test_overlapping_edits_are_not_reverted_and_e_opens_the_note_in_the_editor(
    tui_demo: Path, tmp_path: Path, monkeypatch
):
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[-1], 'a').write('fixed by hand\\n')\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    vault = edited_since(tui_demo, overlap=True)
    later = (tui_demo / NOTE).read_text()
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await open_conflict(app, pilot)
        text = screen_text(app)
        assert "the later edit touches the agent's lines (line 20 of the note now)" in text
        assert "revert the agent's lines anyway" not in text
        await pilot.press("a")
        await wait_for(lambda: any(n.title == "not reverted" for n in app._notifications))
        assert (tui_demo / NOTE).read_text() == later  # nothing lost
        await pilot.press("e")
        await wait_for(lambda: not isinstance(app.screen, ConflictScreen), 20)
    assert (tui_demo / NOTE).read_text() == later + "fixed by hand\n"
    assert journal_for(vault).changes(kinds=["revert"]) == []


def test_snapshot_the_conflict_view(snap_compare, tui_demo: Path) -> None:
    app = make_app(edited_since(tui_demo, overlap=False), config=fixed_config())

    async def run_before(pilot) -> None:
        await open_conflict(pilot.app, pilot)
        await settle(pilot.app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 40), run_before=run_before)


@pytest.mark.parametrize("name", ["\u200bhuman:root", "\u04bbuman:root", "hu\u200dman"])
async def test_a_later_change_by_an_agent_named_like_the_person_reads_as_an_agents(tui_demo: Path, name: str):
    """An agent's name is its client's claim: one spelled to read as the person's label (an
    invisible character in front, a lookalike letter, a joiner inside) is drawn as an agent's,
    `agent <name>` with the invisible characters escaped, in the Changes view's rows and in the
    conflict view's words of who changed the note since."""
    (tui_demo / NOTE).write_text(BODY)
    vault = open_loaded(tui_demo)
    Writer(vault).edit(NOTE, "line 20\n", "line 20 by the agent\n", actor="agent:bot")
    Writer(vault).edit(NOTE, "line 3\n", "line 3, by whom?\n", actor=f"agent:{name}")
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        table = app.screen.query_one(DataTable)
        whos = [str(table.get_row_at(i)[2]) for i in range(table.row_count)]
        assert whos == [f"agent {visible(name)}", "agent bot"], whos
        await pilot.press("down", "r")
        await wait_for(lambda: isinstance(app.screen, ConflictScreen))
        text = screen_text(app)
        assert f"was changed by agent {visible(name)} on 2026-" in text, text
        assert "changed by you" not in text and "after agent bot's change" in text


async def test_a_note_moved_while_nothing_watched_is_said_where_it_is_and_not_reverted_there(tui_demo: Path):
    """An agent edits Inbox/plan.md; vaultwatch quits and the person moves it to Projects/ while
    nothing watches. The Changes view says where the one note holding the agent's bytes is, and
    the refused revert says what to do there; the note there is never written."""
    (tui_demo / NOTE).write_text(BODY)
    vault = open_loaded(tui_demo)
    Writer(vault).edit(NOTE, "line 20\n", "line 20 by the agent\n", actor="agent:bot")
    vault.stop()
    (tui_demo / NOTE).rename(tui_demo / "Projects/plan.md")
    left = (tui_demo / "Projects/plan.md").read_bytes()
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        if not app.screen.rows:  # a change from before this session
            await pilot.press("t")
            await wait_for(lambda: bool(app.screen.rows))
        table = app.screen.query_one(DataTable)
        where = str(table.get_row_at(0)[4])
        assert "a note holding exactly what this change left is at Projects/plan.md" in where, where
        await pilot.press("r")
        await wait_for(lambda: isinstance(app.screen, ConflictScreen))
        text = screen_text(app)
        assert "A note holding exactly what the change left is at Projects/plan.md" in text, text
        assert f"move it back to {NOTE} and revert again" in text and "no record" not in text
    assert (tui_demo / "Projects/plan.md").read_bytes() == left
