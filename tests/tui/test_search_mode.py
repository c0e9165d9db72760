"""Full-text search in the TUI (issue 16, item 9): the filter bar's `?` mode (or ctrl+f) lists
the hits of the same core search the MCP `search` tool answers from, ranked, with the matched
words highlighted in the snippet, scoped by the bar's key:value terms and the folder tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_app import SharedApp
from textual.widgets import Input
from tui_helpers import paste

from vaultwatch.core.query.listing import Query
from vaultwatch.tui.idle import settle

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),  # most tests share one app (shared_app), running in this loop
    pytest.mark.xdist_group("search_mode"),
]


from vaultwatch.tui.widgets.searchlist import SearchList


async def type_text(app, pilot, text: str, *, by_key: bool = False) -> None:
    """Enter `text` in the focused bar: pasted, unless what the test checks follows from the keys
    typed one by one (Pilot waits for the app to go idle twice per key, and each is a search)."""
    if by_key:
        for ch in text:
            await pilot.press(ch if ch != " " else "space")
    else:
        await paste(app, pilot, text)
    await settle(app, timeout=60)
    await pilot.pause()


def hits(app) -> list[str]:
    return [h.path for h in app.main.search_list.rows]


@pytest.mark.usefixtures("no_typing_pauses")  # each change of the text is settled
async def test_question_mark_searches_the_text_ranked_with_highlights(shared: SharedApp) -> None:
    app, pilot = await shared.ready()
    await pilot.press("slash")
    await type_text(app, pilot, "?deploy")
    lst = app.main.search_list
    assert app.main.active_list is lst and lst.display and not app.main.tabs.display
    want = app.session.vault.search("deploy", Query(), limit=50)
    assert hits(app) == [h.path for h in want.hits] and len(want.hits) >= 2
    assert f"{want.total} hits" in str(app.main.status.render())
    # the snippet's matched word is drawn in the highlight style
    line = lst.render_line(1)  # row 0 under the header
    marked = [seg.text for seg in line if seg.style is not None and seg.style.bold]
    assert any("deploy" in t.casefold() for t in marked), [s.text for s in line]
    # the first hit is previewed
    assert app.main.preview.path == hits(app)[0]
    await pilot.press("escape")  # to the hits
    assert app.focused is lst
    await pilot.press("down")
    await settle(app)
    assert app.main.preview.path == hits(app)[1]


async def test_a_space_or_a_stop_word_typed_keeps_the_listed_hits(shared: SharedApp, monkeypatch) -> None:
    """A space or a stop word typed after the words searches the same words: the answer is shown
    for the new text, but the list is not drawn again (issue 19: a redraw of the hits per key)."""
    from vaultwatch.core.search import reuse

    # the last answer is reused for 1 s: on a loaded machine typing " in a" took longer
    monkeypatch.setattr(reuse, "REUSE_SECONDS", 600.0)
    app, pilot = await shared.ready()
    await pilot.press("ctrl+f")
    await type_text(app, pilot, "deploy")
    lst, flow = app.main.search_list, app.main.searcher
    before, updates, shown = hits(app), lst.updates, flow.shown_seq
    assert before and flow._result.mode == "keyword"
    await type_text(app, pilot, " in a", by_key=True)  # "i", "in", "a": stop words
    assert flow.shown_seq > shown and flow._result.query == "deploy in a"  # answered, for this text
    assert hits(app) == before and lst.updates == updates  # the same hits: not drawn again
    await type_text(app, pilot, " runbook", by_key=True)
    assert lst.updates > updates and hits(app)[0] == "Areas/Engineering/Deploy Runbook.md"


@pytest.mark.usefixtures("no_typing_pauses")  # each change of the text is settled
async def test_key_value_terms_and_excluded_words_scope_the_search(shared: SharedApp) -> None:
    app, pilot = await shared.ready()
    await pilot.press("slash")
    await paste(app, pilot, "?deploy -legacy status:deprecated")  # the text applied is what counts
    await settle(app)
    want = app.session.vault.search("deploy -legacy", Query(filters=(("status", "deprecated"),)), limit=50)
    assert hits(app) == [h.path for h in want.hits]
    assert all(app.session.snapshot.get(p).okf_status == "deprecated" for p in hits(app))
    every = app.session.vault.search("deploy", Query(), limit=50).total
    assert want.total < every


@pytest.mark.usefixtures("no_typing_pauses")  # each change of the text is settled
async def test_ctrl_f_enters_search_mode_and_deleting_the_mark_leaves_it(shared: SharedApp) -> None:
    app, pilot = await shared.ready()
    await pilot.press("ctrl+f")
    field = app.query_one("#filter-input", Input)
    assert app.focused is field and field.value == "?"
    await type_text(app, pilot, "runbook")
    assert isinstance(app.main.active_list, SearchList) and hits(app)
    await pilot.press("home", "delete")  # the `?` goes: a filter again
    await settle(app)
    assert field.value == "runbook"
    assert app.main.tabs.display and not app.main.search_list.display
    assert [e.path for e in app.main.active_list.rows] == ["Areas/Engineering/Deploy Runbook.md"]
    assert " hits" not in str(app.main.status.render())


@pytest.mark.usefixtures("no_typing_pauses")  # each change of the text is settled
async def test_more_than_a_page_of_hits_loads_as_the_cursor_nears_the_end(tui_demo: Path, app_for) -> None:
    """Search lists every hit, a page (LIMIT) at a time: moving to the end of the list loads the next
    page under it, in core's order, and the status says how many of how many are listed (before:
    the first 50 only)."""
    from vaultwatch.tui.flows.searching import LIMIT

    for i in range(130):
        (tui_demo / "Bulk").mkdir(exist_ok=True)
        (tui_demo / "Bulk" / f"Marmot {i:03d}.md").write_text(f"# Marmot {i}\n\nA marmot note, number {i}.\n")
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        await pilot.press("ctrl+f")
        await type_text(app, pilot, "marmot")
        every = app.session.vault.search("marmot", Query(), limit=1000)
        assert every.total == 130 and LIMIT < 130
        assert hits(app) == [h.path for h in every.hits[:LIMIT]]
        assert f"{LIMIT} of 130 hits" in str(app.main.status.render())
        await pilot.press("escape")  # to the hits
        for _ in range(3):
            await pilot.press("end")
            await settle(app, timeout=60)
            await pilot.pause()
        assert hits(app) == [h.path for h in every.hits]  # every page, in order, once
        assert "130 hits" in str(app.main.status.render()) and " of 130" not in str(app.main.status.render())
        # a new text starts again from its first page
        field = app.query_one("#filter-input", Input)
        field.focus()
        await type_text(app, pilot, " note", by_key=True)
        assert len(hits(app)) == LIMIT


@pytest.mark.long
async def test_typing_in_the_bar_lays_nothing_out_and_a_long_text_still_scrolls(
    tui_demo: Path, app_for, monkeypatch
) -> None:
    """Each key typed in the bar redrew its line and no more (issue 19: Textual's Input asked for a
    layout of the whole screen per key, its virtual size following the text, and the layout left
    scrollbars to redraw across the screen in the next frame). The line still scrolls along a text
    longer than it, the cursor in view."""
    from textual.screen import Screen

    app = app_for(tui_demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app)
        await pilot.press("ctrl+f")
        await type_text(app, pilot, "qqxz")  # no hits: the list's rows stay () from key to key
        layouts: list[int] = []
        refresh_layout = Screen._refresh_layout
        monkeypatch.setattr(
            Screen, "_refresh_layout", lambda screen, *a, **k: layouts.append(1) or refresh_layout(screen, *a, **k)
        )
        await type_text(app, pilot, "wvy", by_key=True)
        assert app.main.searcher._result.query == "qqxzwvy" and not hits(app)
        assert layouts == []
        field = app.query_one("#filter-input", Input)
        # longer than the line (100 columns), by a third: pasted, then the last keys typed (a key
        # per character would be a search each, and Pilot waits twice per key), so the line
        # scrolls along keys typed past its end
        await paste(app, pilot, " " + "long words " * 11)
        await type_text(app, pilot, "long words ", by_key=True)
        assert len(field.value) > 4 * field.content_region.width // 3
        assert field.scroll_x > 0
        x = field.cursor_screen_offset.x
        assert field.region.x <= x < field.region.right


async def test_the_status_line_is_not_redrawn_for_the_same_text(shared: SharedApp, monkeypatch) -> None:
    """A search answered with the same count as the last one leaves the status line as it is: its
    redraw, in the same frame as the hits', widened that frame's repaint to the whole screen."""
    app, _pilot = await shared.ready()
    status = app.main.status
    asked: list[bool] = []
    refresh = status.refresh
    monkeypatch.setattr(status, "refresh", lambda *a, **k: asked.append(True) or refresh(*a, **k))
    status.set_part("search", "7 hits")
    assert asked and "7 hits" in status.plain
    asked.clear()
    status.set_part("search", "7 hits")
    assert asked == []
    status.set_part("search", "8 hits")
    assert asked and "8 hits" in status.plain


@pytest.mark.usefixtures("no_typing_pauses")  # each change of the text is settled
async def test_escape_in_the_hits_leaves_the_full_text_search(shared: SharedApp) -> None:
    """Escape in the filter goes to the hits; escape in the hits leaves the search: the tabs
    are back, the bar's `?` text is cleared and the tab's list has the focus (before, the
    hits stayed on screen whatever was pressed)."""
    app, pilot = await shared.ready()
    await pilot.press("slash")
    await type_text(app, pilot, "?deploy")
    assert hits(app)
    await pilot.press("escape", "escape")
    await settle(app)
    await pilot.pause()
    assert not app.main.searcher.active
    assert app.main.tabs.display and not app.main.search_list.display
    assert app.query_one("#filter-input", Input).value == ""
    assert app.focused is app.main.active_pane.rowlist
    assert len(app.main.active_list.rows) == app.session.snapshot.note_count
