"""The main screen keeps Textual's own attributes: its folder tree is `folder_view`, so
`screen.tree` is still Textual's view of the DOM (what `self.log(self.tree)` prints)."""

from __future__ import annotations

from pathlib import Path

from rich.tree import Tree

from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.folders import FolderView


async def test_the_main_screen_keeps_textuals_dom_tree(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        await pilot.pause()
        screen = app.main
        assert isinstance(screen.tree, Tree), type(screen.tree)
        assert screen.folder_view is app.query_one(FolderView)
