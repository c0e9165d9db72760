"""The active tab's underline follows its label when the counts change the label's width."""

from __future__ import annotations

from pathlib import Path

from vaultwatch.tui.idle import settle


def underline_span(app) -> tuple[int, int]:
    underline = app.query_one("Underline")  # Textual's Tabs draw it
    return underline.highlight_start, underline.highlight_end


def active_tab_span(app) -> tuple[int, int]:
    tab = app.main.tabs.get_tab(app.main.active_pane.id)
    return tab.virtual_region.shrink(tab.styles.gutter).column_span


async def test_the_underline_stays_under_a_relabelled_active_tab(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        assert underline_span(app) == active_tab_span(app)
        before = active_tab_span(app)
        counts = {"notes": {"": 123_456}, "deprecated": {"": 2}, "stale": {"": 3}, "broken": {"": 4}}
        app.main._relabel(counts)  # what new counts do (a vault grown to 123k notes)
        await settle(app)
        await pilot.pause()
        assert active_tab_span(app) != before  # "Notes 123k" is wider than "Notes 43"
        assert underline_span(app) == active_tab_span(app)
