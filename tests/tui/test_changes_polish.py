"""The Changes view's small glitches: spaces between styled runs, frontmatter values as the note
says them, and the state column kept on screen by cutting the summary."""

from __future__ import annotations

import pytest
from test_spans import visible_runs_start_with_text
from tui_agents import wait_for

from vaultwatch.core.edit.writes import Writer
from vaultwatch.tui.flows.review import ChangesScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.diffview import DiffView, render_diff

pytestmark = pytest.mark.usefixtures("own_state")

FILM = '---\ngenre:\n  - "[[Sci-fi]]"\n---\nA film.\n'


def test_frontmatter_values_read_as_the_note_writes_them() -> None:
    from vaultwatch.core.edit.fmedit import shown  # noqa: PLC0415

    assert shown(["idea"]) == "[idea]"
    assert shown(["[[Sci-fi]]"]) == '["[[Sci-fi]]"]'  # quoted as Obsidian quotes, not a Python list
    assert shown({"a": [1, "x: y"]}) == '{a: [1, "x: y"]}'
    doc = render_diff(FILM.encode(), FILM.replace("Sci-fi", "Science fiction").encode(), 100)
    text = doc.pieces[0].renderable().plain
    assert 'genre: ["[[Sci-fi]]"] → ["[[Science fiction]]"]' in text, text
    added = render_diff(b"body\n", b"---\ntags: [idea]\n---\nbody\n", 100).pieces[0].renderable().plain
    assert "tags: [idea]  (added)" in added, added


async def test_changes_view_keeps_its_spaces_and_its_state_column_at_80(make_vault, app_for) -> None:
    root = make_vault({"Films/Blade Runner.md": FILM, "a.md": "one\n"})
    app = app_for(root)
    writer = Writer(app.session.vault)
    long_text = "".join(f"line {n} of a long note an agent wrote in one go\n" for n in range(40))
    writer.write("Inbox/New idea with a rather long name.md", long_text, actor="agent:bot")
    writer.update_frontmatter(
        "a.md", set={"summary": "a value long enough to push the state column away " * 2}, actor="agent:bot"
    )
    async with app.run_test(size=(80, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        await settle(app)
        screen = app.screen
        title = [(seg.text, seg.style) for seg in screen.query_one("#changes-title").render_line(0)]
        assert "Changes  2 · this session" in "".join(t for t, _ in title)
        assert visible_runs_start_with_text(title), title  # a screenshot read "Changes0"
        table = screen.query_one("#changes-table")
        lines = [table.render_line(y).text for y in range(3)]
        assert "state" in lines[0], lines
        assert all(line.rstrip().endswith("not reviewed") for line in lines[1:]), lines
        assert "…" in lines[1], lines  # the summary gave way, visibly
        await pilot.press("down")  # the created note's diff
        await settle(app)
        view = screen.query_one(DiffView)
        lines = [[(seg.text, seg.style) for seg in view.render_line(y)] for y in range(4)]
        text = "\n".join("".join(t for t, _ in line) for line in lines)
        assert "change 1  agent bot" in text and "write  created" in text, text
        assert "Inbox/New idea with a rather long name.md  (created)" in text, text
        for line in lines:  # a screenshot read "change 1agent:bot", "writecreated", "md(created)"
            assert visible_runs_start_with_text(line), line


async def test_the_state_column_is_never_cut_after_a_reload_at_120(make_vault, app_for) -> None:
    """A reload fits its own rows: the columns an earlier load widened (a long path) do not keep their
    width and push the state column past the edge, cut mid-number ("reverts 1" for "reverts 11")."""
    root = make_vault(
        {f"Projects/Area {n}/A note with a long enough name to widen the path column.md": f"# {n}\n" for n in range(3)}
    )
    app = app_for(root)
    writer = Writer(app.session.vault)
    for n in range(3):
        writer.edit(
            f"Projects/Area {n}/A note with a long enough name to widen the path column.md",
            f"# {n}",
            "# x",
            actor="agent:bot",
        )
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        await settle(app)
        screen = app.screen
        writer.write(
            "b.md", "".join(f"a summary-widening line {n}\n" for n in range(30)), actor="agent:a-much-longer-agent-name"
        )
        writer.update_frontmatter(
            "b.md", set={"summary": "a value long enough to push the state column away " * 2}, actor="agent:bot"
        )
        screen.reload()
        await settle(app)
        table = screen.query_one("#changes-table")
        lines = [table.render_line(y).text.rstrip() for y in range(6)]
        assert lines[0].endswith("state"), lines
        assert all(line.endswith("not reviewed") for line in lines[1:]), lines


async def test_a_redone_change_does_not_read_as_reverted_in_the_changes_view(make_vault, app_for) -> None:
    """After a revert and its redo the agent's edit is back: its row says it was redone, the revert's
    that it was undone, in the view's state column and the detail's title (finding: "reverted by")."""
    from vaultwatch.core.review.journal import journal_for  # noqa: PLC0415
    from vaultwatch.core.review.redo import redo  # noqa: PLC0415
    from vaultwatch.core.review.revert import revert  # noqa: PLC0415

    root = make_vault({"a.md": "# a\n"})
    app = app_for(root)
    vault = app.session.vault
    writer = Writer(vault)
    writer.edit("a.md", "# a", "# b", actor="agent:bot")
    journal = journal_for(vault)
    edit = journal.changes()[0].id
    revert(writer, journal, edit)
    undo = journal.changes()[0].id
    redo(writer, journal, undo)
    again = journal.changes()[0].id
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        await settle(app)
        table = app.screen.query_one("#changes-table")
        lines = [table.render_line(y).text.rstrip() for y in range(4)]
        text = "\n".join(lines)
        assert f"reverted by {undo}, redone by {again}" in text, text
        assert f"reverts {edit}; undone by {again} (redo)" in text, text
        assert f"redoes {edit} (reverts {undo})" in text, text
