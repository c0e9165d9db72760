"""A screen the person closes leaves memory with its widgets. The pinned Textual keeps the style
cache of every widget that drew a line in a memo of its own (tui/leaks.py), and with it every
line the widget cached: opening and closing a dialog over and over grew the app's memory and
the pauses of each full collection without end. Here the help screen is opened and closed
twenty times: the style caches alive afterwards are the ones of the screens still open."""

from __future__ import annotations

import gc
from pathlib import Path

from textual._styles_cache import StylesCache

from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.help import HelpScreen


def style_caches() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, StylesCache))


async def test_closing_a_dialog_lets_its_widgets_go(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)

        async def open_and_close() -> None:
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)
            await settle(app)

        await open_and_close()
        before = style_caches()
        for _ in range(20):
            await open_and_close()
        assert style_caches() <= before + 5, (before, style_caches())
