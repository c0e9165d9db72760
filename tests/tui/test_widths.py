"""Widths that follow the content (tried on Obsidian's help vault at 160 columns: a title got
~17 characters while three empty columns kept theirs, and an agent's call replaced the
Modified column by an Agent column)."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import access, pin_mtimes

from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.doclist import DocList

LONG_TITLE = "An Introduction to Linking Notes in Obsidian and Why It Matters"


def obsidian_vault(tmp_path: Path) -> Path:
    """A vault as Obsidian users have them: no OKF bundle, no status, trust or stale dates."""
    root = tmp_path / "v"
    (root / "Linking").mkdir(parents=True)
    (root / "Linking" / f"{LONG_TITLE}.md").write_text("# Linking\nSee [[Other]].\n")
    (root / "Other.md").write_text("---\ntags: [a]\n---\nOther note.\n")
    return pin_mtimes(root)


def header(doclist: DocList) -> list[str]:
    return doclist.render_line(0).text.split()


async def test_empty_columns_collapse_and_the_title_takes_the_room(tmp_path: Path, app_for) -> None:
    app = app_for(obsidian_vault(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        await pilot.pause()
        doclist = app.main.active_list
        assert isinstance(doclist, DocList)
        shown = header(doclist)
        assert not {"Status", "Trust", "Stale"} & set(shown), shown
        assert "Modified" in shown and "Folder" in shown
        row = next(i for i, e in enumerate(doclist.rows) if e.title == LONG_TITLE)
        line = doclist.render_line(row + 1 - int(doclist.scroll_y)).text.strip()
        shown_title = line.split("…")[0]
        assert LONG_TITLE.startswith(shown_title) and len(shown_title) >= 40, line  # was ~17


async def test_modified_stays_after_an_agent_call(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        doclist = app.main.active_list
        assert "Modified" in header(doclist)
        app.session.vault.bus.publish(access("claude", "read", ("Getting Started.md",)))
        await pilot.pause()
        await settle(app)
        assert "Modified" in header(doclist)


async def test_search_hits_with_a_common_title_start_read_apart(tmp_path: Path, app_for) -> None:
    root = tmp_path / "v"
    root.mkdir()
    for name in ("An Introduction to Linking Notes", "An Introduction to Embedding Files"):
        (root / f"{name}.md").write_text(f"# {name}\nThe zephyrword shows up here.\n")
    app = app_for(pin_mtimes(root))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        await pilot.press("slash")
        for ch in "?zephyrword":
            await pilot.press(ch if ch != "?" else "question_mark")
        await settle(app)
        await pilot.pause()
        lst = app.main.search_list
        assert len(lst.rows) == 2
        title = lst.column_x("snippet")
        shown = [lst.render_line(y).text[:title].strip() for y in (1, 2)]
        assert shown[0] != shown[1] and all(len(t) >= 20 for t in shown), shown  # "An Introduction…" twice
