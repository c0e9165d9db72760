"""The help screen (`?`) fits the terminal: at 80x24 every key's description reads whole (a section
title in the key column made it 40 cells wide and cut the descriptions to six), and at 200x50 it
spreads wider than at 80 so less of it is scrolled."""

from __future__ import annotations

from pathlib import Path

from textual.geometry import Region

from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.help import HelpScreen


async def help_lines(app_for, root: Path, size: tuple[int, int]) -> tuple[list[str], int, int]:
    """The keys' lines of the help screen as drawn at `size`, the help box's width, and how many
    ellipses the keys' own words hold (`Since…`): any more is a cut."""
    app = app_for(root)
    async with app.run_test(size=size) as pilot:
        await settle(app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = app.screen.query_one("#help-keys")
        lines = [strip.text.rstrip() for strip in keys.render_lines(Region(0, 0, keys.size.width, keys.size.height))]
        own = sum(f"{k} {what}".count("…") for _, rows in app.key_help() for k, what in rows)
        return lines, app.screen.query_one("#help-body").size.width, own


async def test_the_help_reads_whole_at_80x24_and_uses_the_room_at_200x50(tui_demo: Path, app_for) -> None:
    narrow, narrow_box, own = await help_lines(app_for, tui_demo, (80, 24))
    assert sum(line.count("…") for line in narrow) == own
    # one key a line, its description beside it: `q, ^q` then Quit and its ids
    assert any(line.split() == ["q,", "^q", "Quit", "(app.quit,", "app.quit_now)"] for line in narrow)
    wide, wide_box, own = await help_lines(app_for, tui_demo, (200, 50))
    assert sum(line.count("…") for line in wide) == own
    # two keys a line where there is room, so it takes fewer lines
    assert any("Quit  (app.quit, app.quit_now)" in line and "Filter  (app.filter)" in line for line in wide)
    assert wide_box > narrow_box and len(wide) < len(narrow) * 2 // 3
