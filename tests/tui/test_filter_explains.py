"""The filter bar explains itself (issue 16, item 9): hints for keys, values, tags and folders
that select nothing, counts that follow the text applied, accent-insensitive words, path: and
-path:, and completion of keys, values and tags."""

from __future__ import annotations

import pytest
from shared_app import SharedApp
from textual.widgets import Input
from tui_helpers import paste

from vaultwatch.core.query.listing import Query
from vaultwatch.tui.idle import settle

pytestmark = [
    pytest.mark.usefixtures("no_typing_pauses"),  # every change of the filter's text here is settled before the next
    pytest.mark.asyncio(loop_scope="module"),  # the tests share one app (shared_app), running in this loop
    pytest.mark.xdist_group("filter_explains"),
]


def paths(app) -> list[str]:
    return [e.path for e in app.main.active_list.rows]


def said(app) -> str:
    line = app.query_one("#filter-error")
    return str(line.render()) if line.display else ""


async def type_filter(app, pilot, text: str) -> None:
    if not isinstance(app.focused, Input):
        await pilot.press("slash")
    # pasted, not typed key by key: what is checked is the text applied (Pilot waits for the app
    # to go idle twice per key pressed)
    await paste(app, pilot, text)
    await settle(app)
    await pilot.pause()


async def clear(app, pilot) -> None:
    await pilot.press("ctrl+u")
    await settle(app)


async def test_a_key_or_value_no_note_has_gets_a_hint(shared: SharedApp) -> None:
    app, pilot = await shared.ready()
    await type_filter(app, pilot, "stauts:deprecated")
    assert paths(app) == []
    assert "no note has `stauts`; did you mean `status`?" in said(app)
    assert not app.main.query_one("#filterbar").has_class("-error")  # a hint, not an error
    await clear(app, pilot)
    await type_filter(app, pilot, "status:deprecatd")
    assert "did you mean `deprecated`?" in said(app)
    await clear(app, pilot)
    await type_filter(app, pilot, "status:deprecated")
    assert paths(app) and said(app) == ""
    listed = paths(app)
    await clear(app, pilot)
    await type_filter(app, pilot, "status:Deprecated")  # a value matches in any case
    assert paths(app) == listed and said(app) == ""


async def test_counts_follow_the_text_applied_while_a_term_is_typed(shared: SharedApp) -> None:
    app, pilot = await shared.ready()
    every = len(paths(app))
    await type_filter(app, pilot, "status")
    assert str(app.main.tabs.get_tab("notes").label) == f"Notes {len(paths(app))}" and len(paths(app)) < every
    await type_filter(app, pilot, ":")  # "status:" is being typed: not an error, and not the word "status"
    assert len(paths(app)) == every and str(app.main.tabs.get_tab("notes").label) == f"Notes {every}"
    assert "has no value" in said(app) and "listed: every note" in said(app)
    assert not app.main.query_one("#filterbar").has_class("-error")
    await type_filter(app, pilot, "deprecated")
    want = [e.path for e in app.session.query(Query(filters=(("status", "deprecated"),))).entries]
    assert paths(app) == want and said(app) == ""


async def test_accents_path_and_minus_path(shared: SharedApp) -> None:
    app, pilot = await shared.ready()
    every = len(paths(app))
    await type_filter(app, pilot, "cafe")
    got = paths(app)
    assert got and all("café" in (app.session.snapshot.get(p).title + p).casefold() for p in got)
    await clear(app, pilot)
    await type_filter(app, pilot, "path:projects")
    inside = paths(app)
    assert len(inside) == 7 and all(p.startswith("Projects/") for p in inside)
    await clear(app, pilot)
    await type_filter(app, pilot, "-path:projects")
    outside = paths(app)
    assert len(outside) == every - 7 and not any(p.startswith("Projects/") for p in outside)
    assert said(app) == ""


async def test_completion_of_keys_values_and_tags(shared: SharedApp) -> None:
    app, pilot = await shared.ready()
    field = app.query_one("#filter-input", Input)
    for typed, done in (
        ("stat", "status:"),
        ("status:dep", "status:deprecated"),
        ("#cra", "#craft"),
        ("tag:cr", "tag:craft"),
    ):
        await clear(app, pilot)
        await type_filter(app, pilot, typed)
        for _ in range(50):  # the suggestion comes from a worker
            if field._suggestion:
                break
            await pilot.pause(0.02)
        await pilot.press("tab")
        await settle(app)
        assert field.value == done, typed
        assert app.focused is field
