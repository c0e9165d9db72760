"""Issue 16, items 5-7, 10-12: tabs and status line that fit from 80 columns, a one-line
activity ticker at 80x24, reading mode's footer, sorting that shows itself, follow mode that
keeps the newest call in view and follows writes, the folder tree as Obsidian's explorer."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from rich.text import Text
from textual.widgets import OptionList, Tab
from tui_helpers import access, pin_mtimes

from vaultwatch.core.markdown import okf
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.activity import ActivityList, ActivityTicker
from vaultwatch.tui.widgets.doclist import DocList
from vaultwatch.tui.widgets.folders import FolderView
from vaultwatch.tui.widgets.footer import KeyFooter
from vaultwatch.tui.widgets.statusline import StatusLine
from vaultwatch.tui.widgets.triage import count_text


def header(rowlist) -> str:
    return rowlist.render_line(0).text


def tabs_on_screen(app) -> list[str]:
    """The labels of the tabs drawn wholly inside the screen."""
    width = app.size.width
    return [str(t.label) for t in app.query(Tab) if t.region.width and t.region.right <= width]


async def test_every_tab_and_the_status_counts_fit_at_80x24(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        await pilot.pause()
        shown = tabs_on_screen(app)
        assert len(shown) == 5, shown
        assert any(label.startswith("Trust ✗") and "◐" in label and "✓" in label for label in shown)
        status = app.query_one(StatusLine).plain
        broken_tab = next(label for label in shown if label.startswith("Broken"))
        # the counts are on the line, and its broken count is the Broken tab's
        assert "43 notes" in status and f"{broken_tab.split()[1]} broken" in status, status


async def test_tab_labels_shorten_to_fit_big_counts(tui_demo: Path, app_for) -> None:
    assert [count_text(n, 1) for n in (999, 5_436, 10_000, 100_000, 1_250_000)] == [
        "999",
        "5.4k",
        "10k",
        "100k",
        "1.2M",
    ]
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        big = {
            "notes": {"": 100_000},
            "deprecated": {"": 12_345},
            "stale": {"": 23_456},
            "trust": {"unverified": 54_360, "machine-confirmed": 22_260, "human-reviewed": 23_380},
            "broken": {"": 1_234},
        }
        app.main._relabel(big)
        await pilot.pause()
        await pilot.pause()
        shown = tabs_on_screen(app)
        assert len(shown) == 5, shown  # 10k notes at 160x50 put Broken off screen before
        assert "Notes 100k" in shown


async def test_status_line_keeps_counts_and_agents_when_narrow(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        status = app.query_one(StatusLine)

        class Host:
            socket_path = "/run/user/1000/vaultwatch/a-rather-long-socket-folder-name/demo-vault.sock"

        status.show_agents(Host(), ["claude-desktop/0.9"], app.session.colors)
        await pilot.pause()
        assert "claude-desktop/0.9" in status.plain and "43 notes" in status.plain, status.plain
        assert "demo-vault.sock" not in status.plain  # the socket path gives way first
        await pilot.resize_terminal(200, 40)
        await pilot.pause()
        assert "demo-vault.sock" in status.plain  # wide: everything


async def test_a_one_line_ticker_shows_the_newest_call_at_80x24(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        ticker = app.query_one(ActivityTicker)
        assert ticker.display and not app.main.activity.display
        app.session.vault.bus.publish(access("claude", "read", ("Getting Started.md",), summary="Getting Started.md"))
        await pilot.pause()
        await settle(app)
        assert (
            "claude read Getting Started.md" in ticker.plain
            and "1 call" in ticker.plain
            and "1 calls" not in ticker.plain
        )
        await pilot.press("a")  # the panel shown: the ticker goes
        assert app.main.activity.display and not ticker.display


async def test_reading_mode_footer_offers_escape_not_a_dead_back(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        await pilot.press("enter")  # read the note: the preview replaces the list
        await settle(app)
        assert app.main.reading
        active = app.screen.active_bindings
        assert active["escape"].binding.action == "back_to_list" and active["escape"].binding.show
        assert "backspace" not in active or not active["backspace"].enabled  # no history: no Back
        await pilot.press("escape")
        assert not app.main.reading
        assert app.screen.active_bindings["escape"].binding.action == "focus_list"  # not shown in the footer


async def test_the_footer_is_redrawn_once_per_change_of_its_keys_and_never_lays_out(tui_demo: Path, app_for) -> None:
    """A focus change sends Textual's bindings signal twice, and Textual's Footer (every key a
    widget) was rebuilt each time, then the whole screen laid out: 30-50 ms in front of the
    next key at 160x50 (issue 16). The footer is one line redrawn once per change of its keys,
    without a layout; opening notes that leave the keys as they are does not redraw it."""
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        footer = app.query_one(KeyFooter)
        rows = app.main.active_list.rows
        app.main.open_note(rows[1].path)
        await settle(app)
        await pilot.pause()
        before = footer.redraws
        on_list = footer.keys
        assert "q" in on_list and "s" in on_list  # the list's keys
        layouts: list[str] = []
        refresh = footer.refresh

        def counted(*regions, layout: bool = False, **kwargs):
            if layout:
                layouts.append("footer")
            return refresh(*regions, layout=layout, **kwargs)

        footer.refresh = counted
        app.main.preview.focus()  # list -> preview: other keys in the footer
        await settle(app)
        await pilot.pause()
        assert footer.redraws == before + 1
        assert footer.keys != on_list and "s" not in footer.keys  # the preview's keys are shown
        for row in rows[2:5]:  # back was there already: the same keys
            app.main.open_note(row.path)
            await settle(app)
        await pilot.pause()
        assert footer.redraws == before + 1
        app.main.active_list.focus()
        await settle(app)
        await pilot.pause()
        assert footer.redraws == before + 2 and footer.keys == on_list
        assert layouts == []


async def test_a_click_on_a_footer_key_presses_it(tui_demo: Path, app_for) -> None:
    """As on Textual's Footer: a click on a key acts as the key; the palette's key on the right
    opens the palette."""
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        footer = app.query_one(KeyFooter)
        await pilot.pause()
        help_at = next(start for start, _end, shown in footer._spans if shown.key == "question_mark")
        await pilot.click(KeyFooter, offset=(help_at + 1, 0))
        await settle(app)
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        await settle(app)
        palette_at = footer._spans[-1][0]
        await pilot.click(KeyFooter, offset=(palette_at + 1, 0))
        await settle(app)
        assert type(app.screen).__name__ == "CommandPalette"


async def test_each_tab_shows_its_sort_and_s_gets_back_to_the_default(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        notes = app.main.active_list
        assert "Title · path ▲" in header(notes)  # no Folder column at 80: the title says the sort
        await pilot.press("3")
        await settle(app)
        stale = app.main.active_list
        assert isinstance(stale, DocList) and stale.sort == "overdue"
        assert "Overdue ▼" in header(stale)  # the most overdue first: the days go down
        days = [okf.overdue_days(e.stale_date, e.stale_instant, app.session.clock) for e in stale.rows]
        assert len(days) > 2 and days == sorted(days, reverse=True)
        info = str(app.query_one("#stale-info").render())
        assert "most overdue first" in info
        seen = []
        for _ in range(5):
            await pilot.press("s")
            await settle(app)
            seen.append(stale.sort)
        assert seen == ["path", "title", "modified", "size", "overdue"]  # back to the tab's own sort
        await pilot.press("s")
        await settle(app)
        info = str(app.query_one("#stale-info").render())
        assert "by path ▲" in info and "Title · path ▲" in header(stale)


async def test_follow_keeps_the_newest_call_in_view_and_follows_writes(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    bus = app.session.vault.bus
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        for i in range(3):
            bus.publish(access("claude", "read", ("Getting Started.md",), ago=30 - i))
        await pilot.pause()
        activity = app.query_one(ActivityList)
        activity.focus()
        await pilot.press("home")  # select the first row (an agent to follow), then follow
        await pilot.press("f")
        assert app.main.activity.following
        for i in range(12):
            bus.publish(access("claude", "list_documents", (), ago=20 - i))
        bus.publish(
            dataclasses.replace(
                access("claude", "write", ("People/Priya Raman.md",), ago=1), write=True, diff_summary="+2 -1 lines"
            )
        )
        await pilot.pause()
        await settle(app)
        newest = len(activity.rows) - 1
        assert activity.cursor == newest
        assert activity.scroll_y <= newest - 1 < activity.scroll_y + activity.size.height  # in view, under the header
        assert app.main.preview.path == "People/Priya Raman.md"  # the write is followed, with what it changed
        assert "written by agent claude" in app.main.preview.head_text and "+2 -1 lines" in app.main.preview.head_text


async def test_tree_keeps_open_orders_as_obsidian_and_reveals_the_note(tmp_path: Path, app_for) -> None:
    root = tmp_path / "v"
    for folder, name in (("Zettel", "z"), ("people", "p"), ("alpha/deep", "a"), ("Archive/Ignored", "x")):
        (root / folder).mkdir(parents=True)
        (root / folder / f"{name}.md").write_text(f"# {name}\n")
    (root / ".vaultwatchignore").write_text("Archive/Ignored/\n")
    pin_mtimes(root)
    app = app_for(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        tree = app.query_one(FolderView)
        assert [n.data for n in tree.root.children] == ["alpha", "people", "Zettel"]  # no Archive (0)
        tree.focus()
        tree.move_cursor(tree.root)
        await pilot.press("enter")  # "All notes": scope to the vault, the tree stays open
        await settle(app)
        assert tree.root.is_expanded and [n.data for n in tree.root.children] == ["alpha", "people", "Zettel"]
        app.main.open_note("alpha/deep/a.md")
        await settle(app)
        await pilot.pause()
        assert tree.cursor_node is not None and tree.cursor_node.data == "alpha/deep"


async def test_a_note_opened_before_the_trees_first_sync_is_revealed(tui_demo: Path, app_for, monkeypatch) -> None:
    """The first note can open before the tree has read its folders (the two race at start-up):
    its folder is revealed once the tree has them, in either order (issue 16)."""
    held: list[FolderView] = []
    sync = FolderView.sync

    def first_sync_held(self) -> None:
        if not held:
            held.append(self)  # the first sync comes after the first note opened
            return
        sync(self)

    monkeypatch.setattr(FolderView, "sync", first_sync_held)
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        tree = app.query_one(FolderView)
        first = app.main.preview.path
        assert held and first is not None and "/" in first
        sync(tree)
        await settle(app)
        await pilot.pause()
        assert tree.cursor_node is not None and tree.cursor_node.data == first.rsplit("/", 1)[0]


async def test_opening_a_note_finds_its_row_without_a_python_call_per_row(tui_demo: Path, app_for, monkeypatch) -> None:
    """open_note puts the list cursor on the note: at 100k rows a `row_key` call per row held the
    UI thread ~30 ms on every open (bench_tui's long-note step), so the list scans its keys in C;
    and it does so once the preview shows the note (the scan, 15 ms at 100k rows, held the
    preview's worker on its way to the first screen)."""
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 40)):
        await settle(app)
        rows = app.main.active_list.rows
        assert len(rows) > 10
        calls: list[str] = []
        row_key = DocList.row_key

        def counted(self, row):
            calls.append(row.path)
            return row_key(self, row)

        monkeypatch.setattr(DocList, "row_key", counted)
        last = rows[-1].path
        app.main.open_note(last)
        assert app.main.active_list.current.path != last  # not yet: the cursor follows the preview
        await settle(app)
        assert app.main.preview.path == last
        assert app.main.active_list.current.path == last
        assert len(calls) <= 2  # the hint row at most, not every row before the note


async def test_titles_scoped_to_a_folder_name_only_the_folders_below_it(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        tree = app.query_one(FolderView)
        node = tree.folder_node("Areas")
        tree.select_node(node)
        await settle(app)
        await pilot.pause()
        doclist = app.main.active_list
        lines = [doclist.render_line(y).text for y in range(1, len(doclist.rows) + 1)]
        assert lines and not any("Areas/" in line for line in lines), lines
        assert any("Craft/" in line or "Engineering" in line for line in lines)


async def test_links_are_listed_by_title(tmp_path: Path, app_for) -> None:
    root = tmp_path / "v"
    (root / "Sub").mkdir(parents=True)
    (root / "A.md").write_text("[[Target]] starts this note.\n")
    (root / "Sub" / "Target.md").write_text("---\ntitle: The target\n---\nBack to [[A]].\n")
    pin_mtimes(root)
    app = app_for(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        await pilot.pause()
        links = app.query_one("#preview-links", OptionList)
        prompt = str(links.get_option_at_index(0).prompt)
        assert prompt.startswith("→ The target") and "Sub" in prompt and "Sub/Target.md" not in prompt


async def test_bridge_config_is_honest_and_saved(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        app.action_copy_bridge_config()
        await pilot.pause()
        message = list(app._notifications)[-1].message
        assert "OSC 52" in message and "ignores it" in message and "copied" not in message
        saved = Path(os.environ["XDG_STATE_HOME"]) / "vaultwatch" / "bridge-config.json"
        assert "mcpServers" in json.loads(saved.read_text())
        assert str(saved) in message


async def test_screenshot_without_a_downloads_folder(tui_demo: Path, app_for, tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user-dirs.dirs
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        app.action_screenshot("shot.svg")
        # Textual writes the file from a thread, and the file exists (empty, or its first 64 KiB)
        # before the writing ends: wait for all of it (under load "exists" came too early)
        shot = home / "shot.svg"
        for _ in range(500):
            if shot.exists() and shot.read_text().rstrip().endswith("</svg>"):
                break
            await pilot.pause(0.02)
        assert shot.read_text().startswith("<svg")


async def test_the_footer_redraws_on_hover_only_when_another_key_is_under_the_pointer(tui_demo: Path, app_for) -> None:
    """The pointer moving along one key leaves the line as it is; onto the next key, the line is
    redrawn with that key highlighted."""
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        footer = app.query_one(KeyFooter)
        await pilot.pause()
        first, second = footer._spans[0], footer._spans[1]
        asked: list[bool] = []
        refresh = footer.refresh
        footer.refresh = lambda *a, **k: asked.append(True) or refresh(*a, **k)  # type: ignore[method-assign]
        await pilot.hover(KeyFooter, offset=(first[0], 0))
        assert len(asked) == 1
        for x in range(first[0] + 1, first[1]):  # along the same key
            await pilot.hover(KeyFooter, offset=(x, 0))
        assert len(asked) == 1
        await pilot.hover(KeyFooter, offset=(second[0], 0))
        assert len(asked) == 2
        hovered = footer.get_component_rich_style("footer-key--hover")
        strip = footer.render_line(0)
        cells = [seg for seg in strip if seg.text.strip()]
        assert any(seg.style.bgcolor == hovered.bgcolor for seg in cells)


async def test_a_part_set_late_keeps_its_full_form_while_the_earlier_ones_make_room(tui_demo: Path, app_for) -> None:
    """The parts' compact forms are taken one more at a time, in the parts' order: dropping the
    socket path is enough at 150 columns, and the rules' part set after it stays whole."""
    app = app_for(tui_demo)
    async with app.run_test(size=(150, 24)) as pilot:
        await settle(app)
        status = app.query_one(StatusLine)

        class Host:
            socket_path = "/run/user/1000/vaultwatch/a-rather-long-socket-folder-name/demo-vault.sock"

        status.show_agents(Host(), ["claude-desktop/0.9"], app.session.colors)
        full = Text("approve: none (scribe: deletes) + folder rules · never: Templates/**")
        status.set_part("late", full, compact=Text("approve: none · never: Templates/**"))
        await pilot.pause()
        assert "demo-vault.sock" not in status.plain and full.plain in status.plain, status.plain
        await pilot.resize_terminal(100, 24)
        await pilot.pause()
        assert "approve: none · never: Templates/**" in status.plain, status.plain
