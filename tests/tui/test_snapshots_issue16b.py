"""SVG snapshots of the layouts issue 16's part B added: the filter bar's full-text mode (hits
with highlighted snippets) and its hints, at 80x24 and 160x50, in a light and a dark theme.
Look at every changed SVG before accepting it (`--snapshot-update`)."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import open_loaded, paste

from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle

WIDE = (160, 50)
SMALL = (80, 24)


def themed(root: Path, theme: str):
    return make_app(open_loaded(root), config=fixed_config(theme=theme))


def typed(text: str):
    async def run_before(pilot) -> None:
        await settle(pilot.app)
        await pilot.press("slash")
        # pasted: the screen shows the answer to the text, whatever keys built it (Pilot waits for
        # the app to go idle twice per key pressed)
        await paste(pilot.app, pilot, text)
        await settle(pilot.app, timeout=60)
        await pilot.press("escape")
        await settle(pilot.app, timeout=60)
        await pilot.pause()

    return run_before


def test_search_light_80x24(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "textual-light"), terminal_size=SMALL, run_before=typed("?deploy"))


def test_search_dark_80x24(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "nord"), terminal_size=SMALL, run_before=typed("?deploy"))


def test_search_light_160x50(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "catppuccin-latte"), terminal_size=WIDE, run_before=typed("?deploy"))


def test_search_dark_160x50(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "catppuccin-mocha"), terminal_size=WIDE, run_before=typed("?deploy"))


def test_filter_hint_light_160x50(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "textual-light"), terminal_size=WIDE, run_before=typed("stauts:draft"))


def test_filter_hint_dark_80x24(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "nord"), terminal_size=SMALL, run_before=typed("stauts:draft"))
