"""Apps started in one process share their parsed CSS (tui.stylecache), per theme."""

from __future__ import annotations

from textual.color import Color

from vaultwatch.tui.app import VaultwatchApp


async def started(app: VaultwatchApp) -> tuple[list, Color]:
    """The app's parsed rules once its first screen is up, and the filter bar's background
    (app.tcss: `$panel`)."""
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        return list(app.stylesheet.rules), app.query_one("#filterbar").styles.background


async def test_a_second_app_reuses_the_first_apps_parsed_rules(tui_demo, app_for):
    first, _ = await started(app_for(tui_demo))
    second, _ = await started(app_for(tui_demo))
    assert len(second) == len(first) > 100  # app.tcss and the widgets' DEFAULT_CSS
    assert all(a is b for a, b in zip(first, second, strict=True))


async def test_another_theme_parses_its_own_rules_and_draws_in_its_colours(tui_demo, app_for):
    dark, dark_panel = await started(app_for(tui_demo))
    light, light_panel = await started(app_for(tui_demo, theme="textual-light"))
    assert not any(a is b for a, b in zip(dark, light, strict=True))
    assert dark_panel != light_panel
    again, again_panel = await started(app_for(tui_demo))  # back on the first theme: its rules again
    assert all(a is b for a, b in zip(dark, again, strict=True))
    assert again_panel == dark_panel
