"""Pilot tests of the TUI's flows on real vaults on disk (test config: no server, no timers)."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, OptionList
from tui_helpers import access, paste, pin_mtimes

from tests.waiting import await_until
from vaultwatch.core.markdown import okf
from vaultwatch.core.query import problems
from vaultwatch.core.query.listing import Query
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.asof import AsOfScreen
from vaultwatch.tui.screens.help import HelpScreen
from vaultwatch.tui.widgets.activity import ActivityList
from vaultwatch.tui.widgets.doclist import DocList
from vaultwatch.tui.widgets.folders import FolderView
from vaultwatch.tui.widgets.preview import NoteBody, Preview
from vaultwatch.tui.widgets.problems import Problem, ProblemList


def paths(app) -> list[str]:
    return [e.path for e in app.main.active_list.rows]


def line_text(rowlist, y: int) -> str:
    return rowlist.render_line(y).text


async def type_filter(app, pilot, text: str, *, by_key: bool = False) -> None:
    """Enter `text` in the filter bar: pasted, unless what the test checks follows from the keys
    typed one by one (Pilot waits for the app to go idle twice per key pressed)."""
    if not isinstance(app.focused, Input):
        await pilot.press("slash")
    if by_key:
        for ch in text:
            await pilot.press(ch if ch != " " else "space")
    else:
        await paste(app, pilot, text)
    await settle(app)
    await pilot.pause()


async def test_lists_every_note_with_counts_on_tabs(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        stats = app.session.stats()
        assert len(paths(app)) == stats["notes"] == 43
        assert paths(app) == sorted(paths(app))
        labels = {pane: str(app.main.tabs.get_tab(pane).label) for pane in ("notes", "deprecated", "stale", "broken")}
        assert labels["notes"] == "Notes 43"
        assert labels["deprecated"] == f"Deprecated {stats['status']['deprecated']}"
        assert labels["stale"] == f"Stale {stats['stale']}"
        # real problems: the demo's links to notes not yet written are listed, not counted
        found = problems.vault_problems(app.session.snapshot, app.session.vault.root)
        broken = sum(p.broken for p in found)
        assert labels["broken"] == f"Broken {broken}" and broken == stats["frontmatter_errors"] + stats["skipped"]
        assert len(found) == broken + 2
        assert app.main.preview.path == paths(app)[0]
        await pilot.press("down", "down")
        await settle(app)
        assert app.main.preview.path == paths(app)[2]


async def test_filter_bar_uses_the_core_query_and_reports_bad_terms(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await type_filter(app, pilot, "status:deprecated -tag:ops")
        got = paths(app)
        want = [
            e.path
            for e in app.session.query(Query(filters=(("status", "deprecated"),), exclude=(("tags", "ops"),))).entries
        ]
        assert got == want and 0 < len(got) < 7
        assert all(app.session.snapshot.get(p).okf_status == "deprecated" for p in got)
        assert str(app.main.tabs.get_tab("notes").label) == f"Notes {len(want)}"

        await pilot.press("ctrl+u")
        await type_filter(app, pilot, "stale:maybe", by_key=True)
        error = app.query_one("#filter-error")
        assert error.display and "stale:maybe is not a boolean" in str(error.render())
        # the list keeps the last text that parsed: "stale:" was a term still being typed, so
        # the list (and its counts) went back to every note, and the error line says so
        assert paths(app) == [e.path for e in app.session.query(Query()).entries]
        assert "listed: every note" in str(error.render())

        await pilot.press("ctrl+u")
        await type_filter(app, pilot, "runbook")
        assert not app.query_one("#filter-error").display
        assert paths(app) == ["Areas/Engineering/Deploy Runbook.md"]
        await pilot.press("escape")
        assert app.focused is app.main.active_list


async def test_filter_path_and_trust_terms(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await type_filter(app, pilot, "path:Projects trust:unverified")
        got = paths(app)
        assert got and all(p.startswith("Projects/") for p in got)
        assert all(app.session.snapshot.get(p).okf_trust == "unverified" for p in got)


async def test_folder_tree_scopes_every_list_with_a_name_boundary(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        tree = app.query_one(FolderView)
        labels = {str(n.label) for n in tree.root.children}
        assert "Projects (7)" in labels and "ProjectsOld (2)" in labels
        node = tree.folder_node("Projects")
        tree.select_node(node)
        await pilot.pause()
        await settle(app)
        got = paths(app)
        assert len(got) == 7 and all(p.startswith("Projects/") for p in got)
        assert str(app.main.tabs.get_tab("deprecated").label) == "Deprecated 3"
        await pilot.press("2")
        await settle(app)
        assert all(p.startswith("Projects/Archive/") for p in paths(app))
        tree.select_node(tree.root)
        await pilot.pause()
        await settle(app)
        deprecated = {e.path for e in app.session.snapshot.entries if e.kind == "note" and e.okf_status == "deprecated"}
        assert app.main.active_pane.id == "deprecated" and len(deprecated) == 7
        assert set(paths(app)) == deprecated  # the whole vault's deprecated notes again, not only Projects'


async def test_triage_tabs(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("2")
        await settle(app)
        assert app.main.active_pane.id == "deprecated"
        assert paths(app) and all(app.session.snapshot.get(p).okf_status == "deprecated" for p in paths(app))

        await pilot.press("3")
        await settle(app)
        clock = app.session.clock
        days = [okf.overdue_days(e.stale_date, e.stale_instant, clock) for e in app.main.active_list.rows]
        assert days and None not in days and days == sorted(days, reverse=True)
        assert "Stale as of 2026-11-29" in str(app.query_one("#stale-info").render())
        assert line_text(app.main.active_list, 1).rstrip().endswith(f"{days[0]}d") or f"{days[0]}d" in line_text(
            app.main.active_list, 1
        )

        await pilot.press("4")
        await settle(app)
        tiers = {app.session.snapshot.get(p).okf_trust for p in paths(app)}
        assert tiers == {"unverified"}
        await pilot.press("right_square_bracket")
        await settle(app)
        assert {app.session.snapshot.get(p).okf_trust for p in paths(app)} == {"machine-confirmed"}

        await pilot.press("5")
        await settle(app)
        rows = app.query_one(ProblemList).rows
        assert any(r.path == "Inbox/Broken frontmatter.md" and r.kind == "frontmatter" for r in rows)
        first = app.query_one(ProblemList).current
        assert isinstance(first, Problem)
        assert app.main.preview.path == first.path


async def test_stale_tab_follows_the_as_of_date(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        before = app.session.stats()["stale"]
        await pilot.press("3", "d")
        await pilot.pause()
        assert isinstance(app.screen, AsOfScreen)
        field = app.screen.query_one(Input)
        field.value = "not a date"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, AsOfScreen)  # a bad date is explained, not fatal
        assert "invalid as-of date" in str(app.screen.query_one("#asof-error").render())
        field.value = "2030-01-01"
        await pilot.press("enter")
        await pilot.pause()
        await settle(app)
        after = app.session.stats()["stale"]
        assert after > before
        assert str(app.main.tabs.get_tab("stale").label) == f"Stale {after}"
        assert len(app.main.active_list.rows) == after
        assert "2030-01-01" in str(app.query_one("#stale-info").render())
        assert app.session.vault.clock.today().isoformat() == "2026-11-29"  # agents keep the vault's clock


async def test_preview_follows_links_and_goes_back(tmp_path: Path, app_for) -> None:
    root = tmp_path / "v"
    (root / "Sub").mkdir(parents=True)
    (root / "A.md").write_text("[[Target]] starts this note.\n\n[[Missing one]]\n")
    (root / "Sub" / "Target.md").write_text("---\ntitle: The target\n---\nBack to [[A]].\n")
    pin_mtimes(root)
    app = app_for(root)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert app.main.preview.path == "A.md"
        body = app.query_one(NoteBody)
        assert "Target" in body.plain and "Missing one" in body.plain
        await pilot.click(NoteBody, offset=(2, 0))  # the link is the first thing in the body
        await settle(app)
        assert app.main.preview.path == "Sub/Target.md"
        assert app.main.preview.backlinks == ("A.md",)
        await pilot.press("p", "backspace")
        await settle(app)
        assert app.main.preview.path == "A.md"
        links = app.query_one("#preview-links", OptionList)
        assert [o.id for o in links.options] == ["to:Sub/Target.md", "from:Sub/Target.md"]
        links.focus()
        links.highlighted = 0
        await pilot.press("enter")
        await settle(app)
        assert app.main.preview.path == "Sub/Target.md"


@pytest.mark.timing
async def test_long_note_preview_is_fast_and_complete(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        loop = asyncio.get_running_loop()
        started = loop.time()
        app.main.open_note("Areas/Engineering/Deploy Runbook.md")
        await settle(app)
        await pilot.pause()
        assert loop.time() - started < 10.0  # a freeze guard: bench/bench_tui.py times the preview
        body = app.query_one(NoteBody).plain
        assert "Rollback" in body and len(body.splitlines()) >= 400
        assert app.main.preview.virtual_size.height > 400


async def test_outside_edit_updates_list_and_keeps_selection(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        for _ in range(20):  # as key repeat sends them: Pilot would wait for idle twice per key
            app.post_message(events.Key("down", None))
        await settle(app)
        doclist = app.main.active_list
        selected = doclist.current.path
        top = doclist.scroll_y
        assert top > 0
        screen_row = doclist.cursor - top

        (tui_demo / "Areas" / "AAA new.md").write_text("---\ntitle: A new note\n---\nhello\n")
        edited = tui_demo / "Getting Started.md"
        edited.write_text(edited.read_text().replace("title: Getting Started", "title: Getting Started (edited)"))
        thread = threading.Thread(
            target=app.session.vault.refresh_paths, args=(["Areas/AAA new.md", "Getting Started.md"],)
        )
        thread.start()  # the watcher calls refresh_paths from its own thread
        thread.join()
        await pilot.pause()
        await settle(app)
        assert doclist.current.path == selected
        assert doclist.cursor - doclist.scroll_y == screen_row  # same place on screen
        assert "Areas/AAA new.md" in paths(app)
        assert app.session.snapshot.get("Getting Started.md").title == "Getting Started (edited)"
        assert "Getting Started (edited)" in [e.title for e in doclist.rows]
        assert str(app.main.tabs.get_tab("notes").label) == "Notes 44"
        tree = app.query_one(FolderView)
        assert any(str(n.label).startswith("Areas (15)") for n in tree.root.children)


async def test_preview_reloads_when_its_note_changes(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        path = app.main.preview.path
        target = tui_demo / path
        target.write_text(target.read_text() + "\n\nA line added outside vaultwatch.\n")
        st = target.stat()
        os.utime(target, (st.st_atime, st.st_mtime + 5))
        app.session.vault.refresh_paths([path])
        await pilot.pause()
        await settle(app)
        assert "A line added outside vaultwatch." in app.query_one(NoteBody).plain
        assert app.main.preview.path == path


async def test_titles_render_literally(tmp_path: Path, app_for) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text('---\ntitle: "[draft] spec [/] and [bold]x[/bold]"\n---\n# body [/]\n')
    (root / "[b].md").write_text('---\ntitle: "[red]Not red[/red]"\n---\n# body\n')
    app = app_for(root)
    async with app.run_test(size=(120, 20)) as pilot:
        await settle(app)
        rows = [line_text(app.main.active_list, y) for y in (1, 2)]
        assert rows[0].strip().startswith("[red]Not red[/red]")
        assert rows[1].strip().startswith("[draft] spec [/] and")
        await pilot.press("down", "enter")
        await settle(app)
        assert "[draft] spec [/] and [bold]x[/bold]" in app.main.preview.head_text
        tree = app.query_one(FolderView)
        assert str(tree.root.label).startswith("All notes (2)")


async def test_empty_vault(tmp_path: Path, app_for) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    app = app_for(root)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app)
        assert paths(app) == []
        assert "no notes yet" in line_text(app.main.active_list, 1)
        await pilot.press("3")
        await settle(app)
        # no OKF bundle: the Stale tab applies the person's rule, and says which
        assert "no notes yet" in line_text(app.main.active_list, 1)
        assert "Rule: stale_after / review_by / expires reached" in str(app.query_one("#stale-info").render())


async def test_background_load_shows_progress_then_the_list(tui_demo: Path) -> None:
    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.vault import Vault
    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.config import fixed_config

    vault = Vault(tui_demo, clock=parse_as_of("2026-11-29"))  # not loaded: the app starts it
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.pause()
        assert len(paths(app)) == 43


async def test_help_palette_and_keys(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = app.export_screenshot().replace("&#160;", " ")
        assert "Follow" in text and "Set as-of date" in text
        app.screen.query_one("#help-body").scroll_end(animate=False)
        await pilot.pause()
        text = app.export_screenshot().replace("&#160;", " ")
        assert "Next tier" in text and "trust:unverified" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        assert all(b.id for b in app.BINDINGS)
        for cls in (DocList, FolderView, Preview, ActivityList):
            assert all(b.id for b in cls.BINDINGS if hasattr(b, "id"))

        from vaultwatch.tui.screens.palette import NoteCommands

        provider = NoteCommands(app.screen)
        hits = [hit async for hit in provider.search("dply rnbk")]
        assert hits and hits[0].text == "Deploy Runbook"
        hits[0].command()
        await settle(app)
        assert app.main.preview.path == "Areas/Engineering/Deploy Runbook.md"
        assert app.main.active_list.current.path == "Areas/Engineering/Deploy Runbook.md"

        commands = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Show Stale", "Toggle follow mode", "Set as-of date", "Copy bridge config"} <= commands
        assert '"bridge"' in app.bridge_config()


async def test_narrow_screen_reads_in_place(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        assert not app.query_one("#tree").display and not app.main.preview.display
        await pilot.press("enter")
        await settle(app)
        assert app.main.preview.display and not app.query_one("#tabs").display
        await pilot.press("escape")
        assert app.query_one("#tabs").display and not app.main.preview.display
        await pilot.press("t")
        assert app.query_one("#tree").display


async def test_sorting_by_key_and_header_click(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        await pilot.press("s")
        await settle(app)
        titles = [e.title.casefold() for e in app.main.active_list.rows]
        assert titles == sorted(titles)
        await pilot.press("r")
        await settle(app)
        assert [e.title.casefold() for e in app.main.active_list.rows] == sorted(titles, reverse=True)
        await pilot.click("#list-notes", offset=(app.main.active_list.column_x("modified") + 1, 0))
        await settle(app)
        stamps = [e.mtime_ns for e in app.main.active_list.rows]
        assert app.main.active_list.sort == "modified" and stamps == sorted(stamps, reverse=True)


async def test_a_new_sort_keeps_the_note_and_shows_the_orders_top(tmp_path: Path, app_for) -> None:
    """`s` keeps the selected note selected; when its new row is on the first screen the list
    shows the new order from its top (keeping the row's place on screen scrolled the first rows
    out of sight), and when it is further down the row stays in view."""
    root = tmp_path / "vault"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "Fox.md").write_text("# Fox\n")  # first by path, sixth by title, 61st reversed
    for i in range(5):
        (root / "b" / f"Apple {i:02}.md").write_text(f"# Apple {i:02}\n")
    for i in range(60):
        (root / "b" / f"Note {i:02}.md").write_text(f"# Note {i:02}\n")
    pin_mtimes(root)
    app = app_for(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        lst = app.main.active_list
        assert isinstance(lst, DocList) and lst.current.path == "a/Fox.md" and lst.scroll_y == 0
        await pilot.press("s")
        await settle(app)
        assert lst.sort == "title" and lst.current.path == "a/Fox.md" and lst.cursor == 5
        assert lst.scroll_y == 0  # Apple 00 to 04 above it are in sight
        await pilot.press("r")
        await settle(app)
        body = lst.scrollable_content_region.height - 1
        assert lst.current.path == "a/Fox.md" and lst.cursor == 60 > body  # below the 60 Notes
        assert lst.scroll_y <= lst.cursor < lst.scroll_y + body  # in view
        await pilot.press("r")
        await settle(app)
        assert lst.current.path == "a/Fox.md" and lst.cursor == 5 and lst.scroll_y == 0


async def test_agent_events_show_as_activity_rows_marks_and_follow(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    bus = app.session.vault.bus
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app)
        listed = ("Projects/Atlas Migration.md", "Projects/Bold Ideas Spec.md")
        publisher = threading.Thread(target=bus.publish, args=(access("claude", "list_documents", listed),))
        publisher.start()
        publisher.join()
        await pilot.pause()
        activity = app.query_one(ActivityList)
        assert len(activity.rows) == 1 and activity.rows[0].agent == "claude"
        assert "claude" in str(app.query_one("#activity-title").render())
        marks = app.session.marks
        assert marks.get(listed[0]).kind == "listed" and marks.folder("Projects").agent == "claude"
        row = next(y for y in range(1, 45) if "Atlas Migration" in line_text(app.main.active_list, y))
        # the row's mark says an agent listed it; its Modified date stays (the Agent column comes
        # only where there is room for it beside Modified)
        assert "○" in line_text(app.main.active_list, row) and "2026-09-10" in line_text(app.main.active_list, row)
        tree = app.query_one(FolderView)
        assert any("claude" in str(n.label) for n in tree.root.children if n.data == "Projects")

        await pilot.press("f")
        assert (
            app.main.activity.following and app.main.activity.follow_agent == "claude"
        )  # the selected activity row's agent
        start = app.main.preview.path
        bus.publish(access("cursor", "read", ("People/Ben Okafor.md",), ago=1))
        await pilot.pause()
        await settle(app)
        assert app.main.preview.path == start  # another agent's read is not followed
        bus.publish(access("claude", "read", ("Getting Started.md",), ago=0))
        await pilot.pause()
        await settle(app)
        assert app.main.preview.path == "Getting Started.md"
        assert "read by agent claude just now" in app.main.preview.head_text
        activity.focus()
        await pilot.press("up")  # the cursor rode on the newest row: select cursor's row, follow cursor instead
        assert activity.current.agent == "cursor" and app.main.activity.follow_agent == "cursor"
        bus.publish(access("cursor", "read", ("People/Priya Raman.md",), ago=0))
        await pilot.pause()
        await settle(app)
        assert app.main.preview.path == "People/Priya Raman.md"
        await pilot.press("f")
        assert not app.main.activity.following


@pytest.mark.timing
async def test_activity_rows_appear_within_100ms(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)):
        await settle(app)
        activity = app.query_one(ActivityList)
        loop = asyncio.get_running_loop()
        delays = []
        for i in range(20):
            started = loop.time()
            threading.Thread(
                target=app.session.vault.bus.publish, args=(access("bot", "read", ("index.md",), ago=0),)
            ).start()
            while len(activity.rows) < i + 1:
                await asyncio.sleep(0.002)
            delays.append(loop.time() - started)
        delays.sort()
        # the bound is 100 ms; the suite shares two cores with other workers, so the test holds
        # the median to it and only catches a stall in the worst case (bench/bench_tui.py measures p95)
        assert delays[len(delays) // 2] < 0.1 and delays[-1] < 5.0, delays


async def test_outside_edits_reach_the_list_through_the_real_watcher(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, watch=True)
    assert app.services.watcher is not None
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("down", "down", "down")
        await settle(app)
        selected = app.main.active_list.current.path
        assert await asyncio.to_thread(app.services.watcher.vault.wait_watching, 10)
        (tui_demo / "Inbox" / "Dropped in by sync.md").write_text("---\ntitle: From the phone\n---\nhi\n")
        await await_until(lambda: "Inbox/Dropped in by sync.md" in paths(app), what="the new note in the list")
        assert app.main.active_list.current.path == selected
        (tui_demo / "Inbox" / "Dropped in by sync.md").unlink()
        await await_until(lambda: "Inbox/Dropped in by sync.md" not in paths(app), what="the deleted note gone")
        await pilot.press("q")


async def test_broken_tab_lists_skipped_files_with_their_reason(tmp_path: Path, app_for) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "ok.md").write_text("# fine\n")
    (root / "bad yaml.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    os.mkfifo(root / "pipe.md")
    app = app_for(root)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert str(app.main.tabs.get_tab("broken").label) == "Broken 2"
        await pilot.press("5")
        await settle(app)
        rows = {(r.path, r.kind) for r in app.query_one(ProblemList).rows}
        assert rows == {("bad yaml.md", "frontmatter"), ("pipe.md", "skipped")}
        await pilot.press("down")
        await settle(app)
        assert app.query_one(ProblemList).current.path == "pipe.md"
        assert (
            "skipped by the scan" in app.main.preview.head_text and "not a regular file" in app.main.preview.head_text
        )


async def test_themes(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, theme="nord")
    async with app.run_test(size=(120, 30)):
        await settle(app)
        assert app.theme == "nord"
    app = app_for(tui_demo, theme="no-such-theme")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.pause()
        assert app.theme == "textual-dark"
        assert any("unknown theme" in n.message for n in app._notifications)


async def test_tab_keys_faster_than_the_app_then_quit(tui_demo: Path) -> None:
    """Session 1 crashed with NoMatches '#tabs' (app.py, TabActivated -> run_active -> tabs):
    tab keys arriving faster than the app handles them left TabActivated messages that ran
    while quitting tore the screen down. Keys are posted without waiting, like key repeat,
    while the app is still starting (its index loading in the background). A second race: the
    quit from outside the queue removed the screens while a key's handler was still running
    (Textual's binding check then raised ScreenStackError; 18 runs in 30 with a busy core)."""
    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.vault import Vault
    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.config import fixed_config

    for _ in range(8):  # a race: each round reproduced it about one time in four
        app = make_app(Vault(tui_demo, clock=parse_as_of("2026-11-29")), config=fixed_config())
        async with app.run_test(size=(120, 30)):
            for key in "2345123451234":
                app.post_message(events.Key(key, key))
            while app.message_queue_size:  # the keys taken; the last may still be in its
                await asyncio.sleep(0.005)  # handler when run_test quits (the app drops it)
        # run_test re-raises an exception raised in a handler; a crashed app also exits non-zero
        assert app.return_code in (None, 0)


async def test_fast_typing_coalesces_list_queries(tui_demo: Path, app_for, monkeypatch) -> None:
    """Keys typed faster than a query runs never queue a query each: the list query thread
    takes only the newest filter when it is free, and the list ends on the last text."""
    import vaultwatch.tui.flows.querying as querying

    monkeypatch.setattr(querying, "INLINE_QUERY_NOTES", 0)  # as in a big vault: queries in a thread
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        ran: list[Query] = []
        gate = threading.Event()
        original = app.session.query

        def slow_query(q, snapshot=None):
            if q.limit is None:  # the list's own queries (tab counts ask for one row)
                ran.append(q)
                gate.wait(5)  # a 100k-note query takes a while: hold the first one
            return original(q, snapshot)

        app.session.query = slow_query
        await pilot.press("slash")
        for ch in "deploy":
            app.post_message(events.Key(ch, ch))
        await pilot.pause()
        await await_until(lambda: len(app.query_one("#filter-input", Input).value) >= 6, what="the keys typed")
        gate.set()
        await settle(app)
        assert app.query_one("#filter-input", Input).value == "deploy"
        assert len(ran) <= 3, [q.words for q in ran]  # the first key's, the last key's, maybe one between
        assert ran[-1].words == ("deploy",)
        assert paths(app) == ["Areas/Engineering/Deploy Runbook.md", "Projects/Archive/Legacy Deploy Script.md"]
        del app.session.query
        await pilot.press("ctrl+u")
        await settle(app)
        assert len(paths(app)) == 43


async def test_hidden_tabs_are_built_after_the_first_frame(tui_demo: Path) -> None:
    """Only the visible tab's list is composed for the first frame; the others are mounted
    right after it, and a tab opened before that still lists its notes."""
    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.vault import Vault
    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.config import fixed_config
    from vaultwatch.tui.widgets.triage import TriagePane

    app = make_app(Vault(tui_demo, clock=parse_as_of("2026-11-29")), config=fixed_config())
    first_frame: list[list[bool]] = []
    start_services = app._start_services

    async def after_first_frame() -> None:  # what the app runs once its first frame is painted
        first_frame.append([p.ready for p in app.query(TriagePane)])
        app.post_message(events.Key("3", "3"))  # the Stale tab, before the hidden tabs are built
        await start_services()

    app._start_services = after_first_frame
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert first_frame[0][0] and not any(first_frame[0][1:])
        assert all(p.ready for p in app.query(TriagePane))
        assert app.main.active_pane.id == "stale" and len(paths(app)) == 8
        assert app.services.host is None  # this config serves no MCP
        await pilot.press("q")


async def test_what_the_first_filter_key_needs_is_built_in_the_background(tui_demo: Path, app_for) -> None:
    """The folded titles (free words) and the tag and type lists (`tag:`, `type:`) are built
    in the background after start-up, and for a newer index generation when the bar gets the
    focus: never by the first key that needs them."""
    app = app_for(tui_demo)
    wanted = {("inverted", "@tags"), ("inverted", "fm:type")}

    def built(snapshot) -> bool:
        keys = snapshot._cache.keys()
        return wanted <= keys and any(type(k) is tuple and k[0] == "hay" for k in keys)

    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert built(app.session.snapshot)
        note = tui_demo / "Getting Started.md"
        note.write_text(note.read_text() + "\nOne more line.\n")
        app.session.vault.refresh_paths(["Getting Started.md"])
        await settle(app)
        newer = app.session.snapshot
        assert not wanted & newer._cache.keys()
        await pilot.press("slash")
        await app.workers.wait_for_complete()
        assert built(newer)


async def test_a_persons_input_holds_agents_back_until_the_screen_answers(tui_demo: Path, app_for, monkeypatch) -> None:
    """A key (or a filter edit) claims the foreground that agents' MCP calls wait for; the list
    showing the answer gives it back (long before the claim would expire on its own)."""
    import vaultwatch.tui.app as tui_app

    monkeypatch.setattr(tui_app, "HOLD_SECONDS", 30.0)
    app = app_for(tui_demo)
    fg = app.session.vault.foreground
    holds: list[float] = []
    hold = fg.hold
    monkeypatch.setattr(fg, "hold", lambda seconds: (holds.append(seconds), hold(seconds)))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("slash")
        await settle(app)
        holds.clear()
        app.post_message(events.Key("d", "d"))
        await settle(app)
        assert app.query_one("#filter-input", Input).value == "d"
        assert 30.0 in holds  # claimed by the key ...
        assert fg.remaining() == 0.0  # ... and given back once the list showed the answer
        holds.clear()
        app.query_one("#filter-input", Input).value = "deploy"  # an edit without a key (a paste)
        await settle(app)
        assert holds == [30.0] and fg.remaining() == 0.0 and len(paths(app)) == 2
