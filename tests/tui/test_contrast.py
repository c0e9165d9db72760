"""Muted text and the preview's colours are readable in every built-in theme: at least 4.5:1
(WCAG AA) against the background they are drawn on. (Before: `$text-muted` resolved without
its background came out `#ffffff` in every theme, 1.3:1 on textual-light; the preview's
heading and link colours were fixed hex values.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color

from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.activity import ActivityList
from vaultwatch.tui.widgets.contrast import MIN_RATIO, ratio, readable
from vaultwatch.tui.widgets.noterender import THEME_COLOURS

# the ANSI themes use the terminal's own palette (colour "default"): the terminal decides
SKIP = {"ansi-dark", "ansi-light"}


def test_readable_moves_a_colour_only_as_far_as_needed() -> None:
    bg, fg = Color.parse("#ffffff"), Color.parse("#000000")
    assert readable(Color.parse("#333333"), bg, fg) == Color.parse("#333333")  # already readable
    light = readable(Color.parse("#dddddd"), bg, fg)
    assert MIN_RATIO <= ratio(light, bg) < MIN_RATIO + 0.2


def _low_muted_and_preview(app, theme: str) -> list[str]:
    """The lists' muted runs (against the list's background) and the preview's colours (against
    the preview's), under MIN_RATIO."""
    low = []
    for rowlist in (app.main.active_list, app.query_one(ActivityList)):
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
    return low


def _low_on_cursor_row(rowlist, theme: str, where: str) -> list[str]:
    """Coloured runs of the cursor's row (dim folder, highlighted words) whose colour is under
    MIN_RATIO against the cursor's background (the normal text of the row is the theme's own)."""
    rowlist._resolve_styles()
    cursor = rowlist._cursor
    own = cursor.color
    line = rowlist.render_line(rowlist.cursor - int(rowlist.scroll_y) + 1)
    out = []
    for seg in line:
        style = seg.style
        if not seg.text.strip() or style is None or style.color is None or style.color == own:
            continue
        assert style.bgcolor == cursor.bgcolor, (theme, seg)
        fg, bg = Color.from_rich_color(style.color), Color.from_rich_color(style.bgcolor)
        if ratio(fg, bg) < MIN_RATIO:
            out.append(f"{theme} {where} {seg.text.strip()!r}: {ratio(fg, bg):.2f}")
    return out


@pytest.mark.long
@pytest.mark.usefixtures("no_typing_pauses")  # each change of the filter's text is settled
async def test_muted_cursor_row_and_preview_colours_are_readable_in_every_theme(tui_demo: Path, app_for) -> None:
    """The selected row's folder and matched words, in search mode and on a tab, focused or not:
    drawn on the cursor's colour, not on the list's (the folder of search mode's selected row was
    muted grey on the cursor's blue). And on the tab, the lists' muted text and the preview's
    colours. (One app for all: switching its theme is most of the cost.)"""
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 24)) as pilot:  # wide as before: the same columns drawn
        await settle(app)
        doclist = app.main.active_list
        await pilot.press("ctrl+f")
        for ch in "deploy":
            await pilot.press(ch)
        await settle(app, timeout=60)
        search = app.main.search_list
        assert search.rows
        filter_input = app.query_one("#filter-input")
        searched = filter_input.value
        filter_input.value = ""  # back to the tab's list
        await settle(app)
        assert app.main.active_list is doclist and doclist.rows
        app.main.open_note("Getting Started.md")
        await settle(app)
        low: list[str] = []
        themes = sorted(set(app.available_themes) - SKIP)
        assert len(themes) >= 15
        # each theme is set once and both views are looked at in it: switching the theme (the
        # whole stylesheet parsed and applied again) costs more than going in and out of search
        for theme in themes:
            app.theme = theme
            await pilot.pause()
            low += _low_on_cursor_row(doclist, theme, "tab")
            low += _low_muted_and_preview(app, theme)
            filter_input.value = searched  # search mode again, the same hits
            await settle(app)
            assert app.main.active_list is search and search.rows
            for focused in (False, True):
                if focused:
                    search.focus()
                else:
                    filter_input.focus()
                await pilot.pause()
                low += _low_on_cursor_row(search, theme, f"search focused={focused}")
            filter_input.value = ""
            await settle(app)
            assert app.main.active_list is doclist
        assert low == [], "\n".join(low)
