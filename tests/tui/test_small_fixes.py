"""Smaller things found trying vaultwatch on public Obsidian vaults: a filter that matches
nothing left the last note in the preview, and emoji written with the presentation selector
(`❤️`, `☀️`) moved a row's border by a cell in terminals that draw them one cell wide, and
agents' calls arriving below the activity panel's view came with no sign of them."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len
from tui_helpers import access, pin_mtimes

from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.activity import ActivityList
from vaultwatch.tui.widgets.folders import FolderView


async def test_a_filter_that_matches_nothing_clears_the_preview(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        await pilot.pause()
        assert app.main.preview.path is not None  # the first row is previewed
        await pilot.press("slash")
        for ch in "zzqxnothing":
            await pilot.press(ch)
        await settle(app)
        await pilot.pause(0.3)  # the preview waits for a pause in the typing
        await settle(app)
        assert not app.main.active_list.rows
        assert app.main.preview.path is None, app.main.preview.path


def emoji_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    (root / "Sunny ☀️ days").mkdir(parents=True)
    (root / "Sunny ☀️ days" / "I ❤️ walnut.md").write_text("# I ❤️ walnut\n")
    (root / "Plain.md").write_text("plain\n")
    return pin_mtimes(root)


async def test_rows_with_presentation_selectors_keep_one_width_everywhere(tmp_path: Path, app_for) -> None:
    app = app_for(emoji_vault(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        await pilot.pause()
        doclist = app.main.active_list
        row = next(i for i, e in enumerate(doclist.rows) if "walnut" in e.title)
        strip = doclist.render_line(row + 1)
        text = strip.text
        assert "❤" in text and "\ufe0f" not in text  # drawn as `❤`: one cell to Rich and to every terminal
        assert strip.cell_length == doclist.scrollable_content_region.width
        tree = app.query_one(FolderView)
        labels = [str(node.label) for node in tree.root.children]
        assert any("☀" in label for label in labels) and not any("\ufe0f" in label for label in labels)
        assert all(cell_len(label) == len(label) for label in labels if "☀" in label)


async def test_calls_arriving_below_the_view_are_announced(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    bus = app.session.vault.bus
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        for i in range(40):
            bus.publish(access("claude", "list_documents", (), ago=60 - i))
        await pilot.pause()
        await settle(app)
        activity = app.query_one(ActivityList)
        title = app.query_one("#activity-title")
        assert len(activity.rows) == 40 and activity.size.height < 40
        activity.focus()
        await pilot.press("home")  # the person reads the first calls
        await pilot.pause()
        assert "new below" not in str(title.render())
        for i in range(3):
            bus.publish(access("cursor", "read", ("Getting Started.md",), ago=3 - i))
        await pilot.pause()
        await settle(app)
        assert activity.scroll_y == 0  # the view stays where the person put it ...
        assert "↓ 3 new below" in str(title.render())  # ... and says that calls came below
        await pilot.press("end")
        await pilot.pause()
        await settle(app)
        assert "new below" not in str(title.render())


async def test_an_agent_keeps_its_colour_across_versions_of_its_client(tui_demo: Path, app_for) -> None:
    """The activity panel colours an agent by its name: `claude/1.2` and `claude/1.3` (its client updated
    between two sessions) are drawn alike, and another agent in another colour."""
    app = app_for(tui_demo)
    bus = app.session.vault.bus
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        for i, agent in enumerate(("claude/1.2", "cursor/0.9", "claude/1.3")):
            bus.publish(access(agent, "read", ("Getting Started.md",), ago=3 - i))
        await pilot.pause()
        await settle(app)
        activity = app.query_one(ActivityList)
        columns = list(activity.all_columns())
        at = [c.key for c in columns].index("agent")
        colours = {row.agent: activity.cells(row, columns)[at][1].color for row in activity.rows}
        assert len(colours) == 3
        assert colours["claude/1.2"] == colours["claude/1.3"] != colours["cursor/0.9"]
