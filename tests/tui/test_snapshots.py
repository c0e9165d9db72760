"""SVG snapshots of the main screens (pytest-textual-snapshot). Deterministic: the demo vault
with pinned mtimes, the clock at 2026-11-29, a frozen wall clock, no blink, no animation, no
MCP server or watcher, UTC activity times, and NO_COLOR/TEXTUAL_THEME removed (conftest).

Regenerate with `--snapshot-update`, then look at the SVGs before accepting them.
"""

from __future__ import annotations

from pathlib import Path

from tui_helpers import access, open_loaded

from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.folders import FolderView

WIDE = (160, 50)
SMALL = (80, 24)


def app_on(root: Path):
    return make_app(open_loaded(root), config=fixed_config())


def keys(*presses: str):
    async def run_before(pilot) -> None:
        await settle(pilot.app)
        for key in presses:
            await pilot.press(key)
            await settle(pilot.app)
        await pilot.pause()

    return run_before


def test_main_80x24(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=SMALL, run_before=keys())


def test_main_160x50(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=keys())


def test_tab_deprecated(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=keys("2"))


def test_tab_stale_most_overdue_first(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=keys("3"))


def test_tab_trust_machine_confirmed(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=keys("4", "right_square_bracket"))


def test_tab_broken_notes(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=keys("5"))


def test_filter_applied(snap_compare, tui_demo: Path, no_typing_pauses) -> None:
    typed = [c if c != " " else "space" for c in "tag:ops -status:deprecated"]
    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=keys("slash", *typed, "enter"))


def test_filter_error(snap_compare, tui_demo: Path, no_typing_pauses) -> None:
    typed = [c if c != " " else "space" for c in "status:draft stale:maybe"]
    assert snap_compare(app_on(tui_demo), terminal_size=(120, 30), run_before=keys("slash", *typed))


def test_folder_scope(snap_compare, tui_demo: Path) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot.app)
        tree = pilot.app.query_one(FolderView)
        tree.select_node(tree.folder_node("Areas/Engineering"))
        await pilot.pause()
        await settle(pilot.app)
        await pilot.pause()

    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=run_before)


def test_preview_long_note(snap_compare, tui_demo: Path) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot.app)
        pilot.app.main.open_note("Areas/Engineering/Deploy Runbook.md")
        await settle(pilot.app)
        await pilot.press("p", "pagedown", "pagedown")
        await settle(pilot.app)
        await pilot.pause()

    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=run_before)


def test_narrow_reading_mode(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=SMALL, run_before=keys("down", "down", "enter"))


async def two_agents(pilot, follow: bool = False) -> None:
    app = pilot.app
    await settle(app)
    if follow:  # the preview follows any agent (no row selected yet): reads and writes
        await pilot.press("f")
    bus = app.session.vault.bus
    bus.publish(
        access(
            "claude-desktop/0.9",
            "list_documents",
            (
                "Areas/Engineering/Deploy Runbook.md",
                "Areas/Engineering/Oncall Handbook.md",
                "Areas/Engineering/Incident Template.md",
            ),
            summary='folder="Areas/Engineering"',
            ago=42,
            ms=2.1,
        )
    )
    bus.publish(
        access("cursor/1.4", "search", ("Projects/Atlas Migration.md",), summary='query="postgres 16"', ago=30, ms=7.8)
    )
    bus.publish(
        access(
            "claude-desktop/0.9",
            "read",
            ("Areas/Engineering/Deploy Runbook.md",),
            summary='path="Areas/Engineering/Deploy Runbook.md"',
            ago=20,
            ms=1.4,
        )
    )
    bus.publish(
        access(
            "cursor/1.4",
            "read",
            ("../secrets.md",),
            summary='path="../secrets.md"',
            ago=8,
            ms=0.3,
            count=0,
            error="path traversal blocked: '..' leaves the vault",
        )
    )
    bus.publish(
        access(
            "cursor/1.4",
            "read",
            ("Projects/Atlas Migration.md",),
            summary='path="Projects/Atlas Migration.md"',
            ago=3,
            ms=1.9,
        )
    )
    await pilot.pause()
    await settle(app)
    await pilot.pause()


def test_activity_two_agents(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=WIDE, run_before=two_agents)


def test_ticker_80x24_light(snap_compare, tui_demo: Path) -> None:
    """80x24: no room for the activity panel, the newest call in a one-line ticker."""
    assert snap_compare(themed(tui_demo, "textual-light"), terminal_size=SMALL, run_before=two_agents)


def test_ticker_80x24_dark(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "nord"), terminal_size=SMALL, run_before=two_agents)


def test_follow_160x50_light(snap_compare, tui_demo: Path) -> None:
    """Follow mode: the newest call in view, the preview on the last followed read."""
    assert snap_compare(
        themed(tui_demo, "catppuccin-latte"),
        terminal_size=WIDE,
        run_before=lambda pilot: two_agents(pilot, follow=True),
    )


def test_follow_160x50_dark(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(
        themed(tui_demo, "catppuccin-mocha"),
        terminal_size=WIDE,
        run_before=lambda pilot: two_agents(pilot, follow=True),
    )


def test_help_screen(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=(120, 44), run_before=keys("question_mark"))


def test_command_palette(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=(120, 40), run_before=keys("ctrl+p"))


def test_as_of_dialog(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(app_on(tui_demo), terminal_size=(120, 30), run_before=keys("3", "d"))


def test_empty_vault(snap_compare, tmp_path: Path) -> None:
    root = tmp_path / "empty-vault"
    root.mkdir()
    assert snap_compare(app_on(root), terminal_size=SMALL, run_before=keys())


def themed(root: Path, theme: str):
    return make_app(open_loaded(root), config=fixed_config(theme=theme))


def test_light_theme_80x24(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "textual-light"), terminal_size=SMALL, run_before=keys())


def test_light_theme_160x50(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "catppuccin-latte"), terminal_size=WIDE, run_before=keys())


def test_dark_theme_80x24(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "nord"), terminal_size=SMALL, run_before=keys())


def test_dark_theme_160x50(snap_compare, tui_demo: Path) -> None:
    assert snap_compare(themed(tui_demo, "catppuccin-mocha"), terminal_size=WIDE, run_before=keys())
