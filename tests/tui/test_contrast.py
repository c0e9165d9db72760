"""Muted text and the preview's colours are readable in every built-in theme: at least 4.5:1
(WCAG AA) against the background they are drawn on. (Before: `$text-muted` resolved without
its background came out `#ffffff` in every theme, 1.3:1 on textual-light; the preview's
heading and link colours were fixed hex values.)"""
from __future__ import annotations

from pathlib import Path

from textual.color import Color

from tui.contrast import MIN_RATIO, ratio, readable
from tui.idle import settle
from tui.widgets.activity import ActivityList
from tui.widgets.noterender import THEME_COLOURS

# the ANSI themes use the terminal's own palette (colour "default"): the terminal decides
SKIP = {"ansi-dark", "ansi-light"}


def test_readable_moves_a_colour_only_as_far_as_needed() -> None:
    bg, fg = Color.parse("#ffffff"), Color.parse("#000000")
    assert readable(Color.parse("#333333"), bg, fg) == Color.parse("#333333")  # already readable
    light = readable(Color.parse("#dddddd"), bg, fg)
    assert MIN_RATIO <= ratio(light, bg) < MIN_RATIO + 0.2


async def test_muted_and_preview_colours_are_readable_in_every_theme(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        app.main.open_note("Getting Started.md")
        await settle(app)
        doclist = app.main.active_list
        activity = app.query_one(ActivityList)
        low: list[str] = []
        themes = sorted(set(app.available_themes) - SKIP)
        assert len(themes) >= 15
        for theme in themes:
            app.theme = theme
            await pilot.pause()
            for rowlist in (doclist, activity):
                rowlist._resolve_styles()
                background = Color.from_rich_color(rowlist.rich_style.bgcolor)
                for name in ("rowlist--dim", "rowlist--empty"):
                    muted = Color.from_rich_color(rowlist.cstyle(name).color)
                    if ratio(muted, background) < MIN_RATIO:
                        low.append(f"{theme} {rowlist.id} {name}: {ratio(muted, background):.2f}")
            preview = app.main.preview
            styles = preview._note_styles()
            background = preview.background_colors[1]
            assert background == Color.parse(app.get_css_variables()["surface"])
            for field in THEME_COLOURS:
                colour = Color.from_rich_color(getattr(styles, field).color)
                if ratio(colour, background) < MIN_RATIO:
                    low.append(f"{theme} preview {field}: {ratio(colour, background):.2f}")
        assert low == []
