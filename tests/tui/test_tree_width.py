"""The folder tree can be resized (< and >), remembers its width in the person's settings file,
and shows at 120 columns (it disappeared below 140 and clipped names at its fixed width)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.folders import FolderView


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


async def test_the_tree_shows_at_120_columns(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        await pilot.pause()
        tree = app.query_one(FolderView)
        assert tree.display and tree.region.width >= 16


async def test_the_tree_is_resized_by_keys_and_keeps_its_width(config_home: Path, tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, settings=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        tree = app.query_one(FolderView)
        before = tree.region.width
        app.main.active_list.focus()
        for _ in range(3):
            await pilot.press("greater_than_sign")
        await pilot.pause()
        assert tree.region.width == before + 6
        await pilot.press("less_than_sign")
        await pilot.pause()
        assert tree.region.width == before + 4
        await app.workers.wait_for_complete()
    path = config_home / "vaultwatch" / "settings.toml"
    assert tomllib.loads(path.read_text())["tui"]["tree_width"] == before + 4
    again = app_for(tui_demo, settings=True)  # the next start takes the kept width
    async with again.run_test(size=(160, 50)) as pilot:
        await settle(again)
        await pilot.pause()
        assert again.query_one(FolderView).region.width == before + 4


async def test_the_trees_border_is_dragged_to_resize_it(config_home: Path, tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, settings=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        tree = app.query_one(FolderView)
        before = tree.region.width
        await pilot.mouse_down(offset=(before - 1, 10))  # on the tree's right border
        await pilot.hover(offset=(before + 7, 10))
        await pilot.pause()
        assert tree.region.width == before + 8  # follows the pointer
        await pilot.mouse_up(offset=(before + 9, 10))
        await pilot.pause()
        assert tree.region.width == before + 10
        await app.workers.wait_for_complete()
    path = config_home / "vaultwatch" / "settings.toml"
    assert tomllib.loads(path.read_text())["tui"]["tree_width"] == before + 10
