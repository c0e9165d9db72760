"""The filter bar's completion dropdown (issue 16, filter autocomplete): the candidates for the
word at the cursor listed under the input (keys, values of the key typed, #tags), up/down move,
tab/enter take the highlighted one, escape closes it and leaves the filter, typing narrows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from vaultwatch.tui.idle import settle

# the dropdown fills from its own worker: the preview's and the counts' pauses after each change of
# the filter's text are not what these tests look at, and settling waits them out after every word
pytestmark = pytest.mark.usefixtures("no_typing_pauses")


async def typed(app, pilot, text: str) -> None:
    if not isinstance(app.focused, Input):
        await pilot.press("slash")
    for ch in text:
        await pilot.press(ch if ch != " " else "space")
    await settle(app)
    await pilot.pause()


async def listed(app, pilot) -> list[str]:
    """The candidates the dropdown shows ([] when closed); it fills from a worker."""
    dropdown = app.query_one("#filter-complete", OptionList)
    for _ in range(50):
        if dropdown.display and dropdown.option_count:
            break
        await pilot.pause(0.02)
    if not dropdown.display:
        return []
    return [str(dropdown.get_option_at_index(i).prompt) for i in range(dropdown.option_count)]


async def test_dropdown_lists_keys_moves_takes_and_closes(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        field = app.query_one("#filter-input", Input)
        await typed(app, pilot, "sta")
        shown = await listed(app, pilot)
        assert "status:" in shown and "stale:" in shown, shown
        assert all(s.startswith("sta") for s in shown)
        await pilot.press("down")
        second = shown[1]
        await pilot.press("tab")
        await settle(app)
        assert field.value == second
        assert app.focused is field  # tab took the candidate, focus stayed
        after = await listed(app, pilot)  # now the values of that key
        assert after and all(s.startswith(second) and s != second for s in after), after
        await pilot.press("ctrl+u")
        await typed(app, pilot, "stat")
        assert await listed(app, pilot) == ["status:"]  # typing narrows it
        await pilot.press("escape", "j")  # without a pause: `j` is the list's
        await pilot.pause()
        assert not app.query_one("#filter-complete").display
        assert field.value == "stat"  # one escape closed the dropdown and left the filter
        assert app.focused is app.main.active_list


async def test_dropdown_lists_values_and_tags_enter_takes(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        field = app.query_one("#filter-input", Input)
        await typed(app, pilot, "status:")
        values = await listed(app, pilot)
        assert "status:deprecated" in values and len(values) > 1, values
        await pilot.press("ctrl+u")
        await typed(app, pilot, "#")
        tags = await listed(app, pilot)
        assert "#craft" in tags and len(tags) > 1, tags
        index = tags.index("#craft")
        for _ in range(index):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(app)
        assert field.value == "#craft" and app.focused is field  # enter took it, did not leave
        assert all(s.startswith("#craft") and s != "#craft" for s in await listed(app, pilot))


def test_dropdown_open_dark_80x24(snap_compare, tui_demo: Path) -> None:
    """The dropdown under the input at 80x24, listing the keys that start with `sta`."""
    from tui_helpers import open_loaded

    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.config import fixed_config

    async def run_before(pilot) -> None:
        await settle(pilot.app)
        await typed(pilot.app, pilot, "sta")
        await listed(pilot.app, pilot)
        await pilot.press("down")
        await pilot.pause()

    app = make_app(open_loaded(tui_demo), config=fixed_config(theme="nord"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
