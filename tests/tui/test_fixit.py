"""Fix-it flows (issue 16, item 8): `e` on every tab, copy path and [[wikilink]] (OSC 52,
honest where there is no terminal), open in Obsidian through the system opener, bulk triage
of every listed note or a marked range with a count and a confirm, and undo."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from tui_helpers import open_loaded, paste

from vaultwatch.core.query import problems
from vaultwatch.tui.flows import fixit
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.triage import ConfirmScreen, StatusScreen

PLANE = "Areas/Craft/Woodworking/Hand Plane Setup (2023).md"


def recorder(tmp_path: Path, name: str) -> Path:
    """A stand-in program `name` on PATH that appends its arguments to a log file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / f"{name}.log"
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return log


async def finish(app, pilot) -> None:
    for _ in range(3):
        for worker in [w for w in app.workers if w.group in ("write", "open")]:
            await worker.wait()
        await pilot.pause()
    await settle(app)


def notes_said(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


def test_obsidian_uri_encodes_every_value() -> None:
    # Obsidian's help ("Obsidian URI"): values percent-encoded, '/' as %2F, spaces as %20
    uri = fixit.obsidian_uri("/home/ana/My Vault/", "Areas/Craft/Hand Plane Setup (2023).md")
    assert uri == ("obsidian://open?vault=My%20Vault&file=Areas%2FCraft%2FHand%20Plane%20Setup%20%282023%29.md")
    assert fixit.obsidian_uri("/v/Notes", "a&b=c?.md") == "obsidian://open?vault=Notes&file=a%26b%3Dc%3F.md"
    assert fixit.obsidian_uri("/v/Café", "é.md") == "obsidian://open?vault=Caf%C3%A9&file=%C3%A9.md"


@pytest.mark.parametrize(
    "env, says",
    [
        ({"TERM_PROGRAM": "Apple_Terminal"}, "nothing was copied"),
        ({"TMUX": "/tmp/tmux-1/default,1,0"}, "set-clipboard on"),
        ({"STY": "1.pts-0"}, "GNU screen"),
        ({"TERM_PROGRAM": "WezTerm"}, None),
    ],
)
def test_clipboard_caveats_name_terminals_without_osc52(env: dict, says: str | None) -> None:
    caveat = fixit.clipboard_caveat(env)
    assert (caveat is None) if says is None else (says in caveat)


async def test_copy_path_and_wikilink_of_the_previewed_note(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        app.main.open_note(PLANE)
        await settle(app)
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == PLANE
        await pilot.press("Y")
        await pilot.pause()
        assert app.clipboard == "[[Hand Plane Setup (2023)]]"
        said = notes_said(app)
        # a test app has no terminal: it says so instead of claiming a copy
        assert any("no terminal to copy to" in s and "[[Hand Plane Setup (2023)]]" in s for s in said), said
        await pilot.press("5")  # the Broken tab: its row's note
        await settle(app)
        row = app.main.active_list.current
        app.main.preview.show(row.path)
        await settle(app)
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == row.path


def test_a_name_two_notes_share_links_by_path(tmp_path: Path) -> None:
    for path in ("A/Same.md", "B/same.md", "B/Only.md"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("# x\n")
    snap = open_loaded(tmp_path).snapshot
    # Obsidian's "shortest path when possible": the name alone unless another file has it
    assert fixit.wikilink(snap.get("A/Same.md"), snap) == "[[A/Same]]"
    assert fixit.wikilink(snap.get("B/same.md"), snap) == "[[B/same]]"
    assert fixit.wikilink(snap.get("B/Only.md"), snap) == "[[Only]]"


async def test_open_in_obsidian_says_when_there_is_no_opener_and_else_hands_it_the_uri(
    tui_demo: Path, app_for, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a system opener on PATH the URI is copied and the notice says so; with one, the
    opener gets the URI (looked up at each `o`, so one app sees both machines)."""
    log = recorder(tmp_path, "xdg-open")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        app.main.open_note(PLANE)
        await settle(app)
        await pilot.press("o")
        await finish(app, pilot)
        said = notes_said(app)
        assert any("no system opener" in s and "obsidian://open?vault=" in s for s in said), said
        assert app.clipboard.startswith("obsidian://open?vault=")
        assert not log.exists()

        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
        await pilot.press("o")
        await finish(app, pilot)
        assert log.read_text().splitlines() == [fixit.obsidian_uri(str(tui_demo), PLANE)]
        assert any("opened in Obsidian" in s for s in notes_said(app))


async def test_e_opens_the_seen_note_in_the_editor_on_every_tab(
    tui_demo: Path, app_for, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = recorder(tmp_path, "fake-editor")
    monkeypatch.setenv("EDITOR", str(tmp_path / "bin" / "fake-editor"))
    monkeypatch.delenv("VISUAL", raising=False)
    app = app_for(tui_demo)
    opened: list[str] = []
    # one app visits every tab: the recording editor changes no note, so each tab lists what it
    # lists at start (an app per tab cost a start each and proved nothing more)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        for tab in "12345":
            await pilot.press(tab)
            await settle(app)
            shown = app.main.seen_entry()
            assert shown is not None, f"tab {tab} of the demo lists a note"
            await pilot.press("e")
            await finish(app, pilot)
            opened.append(str(tui_demo / shown.path))
            assert log.read_text().splitlines() == opened, f"tab {tab}"


async def test_bulk_status_of_every_listed_note_confirms_with_a_count_and_undoes(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user="tester")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("slash")
        await paste(app, pilot, "status:draft")  # the filter's text is what counts, not its keys
        await pilot.press("enter")
        await settle(app)
        listed = [e.path for e in app.main.active_list.rows]
        assert len(listed) > 2
        before = {p: (tui_demo / p).read_bytes() for p in listed}
        await pilot.press("asterisk")  # every listed note
        await pilot.pause()
        assert app.main.active_list.picked == set(listed)
        assert f"{len(listed)} marked" in str(app.main.status.render())
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, StatusScreen) and f"{len(listed)} notes" in app.screen.question
        await pilot.press("2")  # stable
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert f"{len(listed)} notes" in app.screen.question and "stable" in app.screen.question
        await pilot.press("enter")
        await finish(app, pilot)
        assert all(app.session.snapshot.get(p).okf_status == "stable" for p in listed)
        await pilot.press("escape", "u")
        await finish(app, pilot)
        assert {p: (tui_demo / p).read_bytes() for p in listed} == before


async def test_a_marked_range_and_a_declined_confirm_write_nothing(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo, user="tester")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        rows = [e.path for e in app.main.active_list.rows]
        before = {p: (tui_demo / p).read_bytes() for p in rows}
        await pilot.press("shift+down", "shift+down", "shift+down")
        await pilot.pause()
        assert app.main.active_list.picked == set(rows[:3])
        await pilot.press("shift+up")  # as in a file manager: marks the row under the cursor, moves up
        await pilot.pause()
        assert app.main.active_list.picked == set(rows[:4])
        assert app.main.active_list.current.path == rows[2]
        await pilot.press("z")
        await pilot.pause()
        await pilot.press("enter")  # 14 days
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and "4 notes" in app.screen.question
        await pilot.press("n")
        await finish(app, pilot)
        assert {p: (tui_demo / p).read_bytes() for p in rows} == before
        await pilot.press("asterisk")  # every listed note, then again: none
        await pilot.press("asterisk")
        await pilot.pause()
        assert app.main.active_list.picked == set()


async def test_the_preview_header_calls_a_broken_note_broken_as_the_list_does(tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)):
        await settle(app)
        broken = next(e for e in app.session.snapshot.entries if e.kind == "note" and e.frontmatter_error)
        app.main.open_note(broken.path)
        await settle(app)
        head = app.main.preview.head_text
        assert "broken frontmatter" in head and "stable · unverified" not in head, head


@pytest.mark.parametrize(
    "path, width, want",
    [
        ("Projects/Archive/Retired/Quarterly Plan.md", 26, "Projec…/Quarterly Plan.md"),
        ("Projects/Archive/Retired/Quarterly Plan.md", 32, "Projects/…/Quarterly Plan.md"),
        ("Projects/Archive/Retired/Quarterly Plan.md", 60, "Projects/Archive/Retired/Quarterly Plan.md"),
        ("Inbox/Broken frontmatter.md", 27, "Inbox/Broken frontmatter.md"),
    ],
)
def test_broken_paths_keep_their_file_name(path: str, width: int, want: str) -> None:
    from vaultwatch.tui.widgets.problems import elide_path

    assert elide_path(path, width) == want


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_the_broken_tab_shows_each_file_name(tui_demo: Path, app_for, size) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=size) as pilot:
        await settle(app)
        await pilot.press("5")
        await settle(app)

        def misses() -> list[tuple[str, str]]:
            return [
                (row.path, lst.render_line(y).text)
                for y, row in enumerate(lst.rows, start=1)
                if row.path.rsplit("/", 1)[-1] not in lst.render_line(y).text
            ]

        # the tab switch and its rows can land a frame after settle (seen in CI runs: the old tab's
        # lines), so the list is looked up again on every try, and only the Broken tab's counts
        for _ in range(50):
            lst = app.main.active_list
            if app.main.active_pane.id == "broken" and lst.rows and not misses():
                break
            await pilot.pause(0.1)
        assert app.main.active_pane.id == "broken"
        assert lst.rows and misses() == []


async def test_a_broken_rows_whole_problem_is_in_its_tooltip(tui_demo: Path, app_for) -> None:
    """At 80 columns the Problem column cuts a long problem; the row under the pointer says the
    whole problem, with its line, in its tooltip."""
    app = app_for(tui_demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app)
        await pilot.press("5")
        await settle(app)
        for _ in range(50):  # as above: the Broken tab's list may land a frame after settle
            lst = app.main.active_list
            if (
                app.main.active_pane.id == "broken"
                and lst.rows
                and any(r.message not in lst.render_line(y).text for y, r in enumerate(lst.rows, 1))
            ):
                break
            await pilot.pause(0.1)
        assert app.main.active_pane.id == "broken"
        cut = [(y, r) for y, r in enumerate(lst.rows, start=1) if r.message not in lst.render_line(y).text]
        assert cut, "no problem is cut at 80 columns: the test needs a longer one"
        y, row = cut[0]
        await pilot.hover(lst, offset=(10, y))
        await pilot.pause()
        assert lst.tooltip == f"{row.path}:{row.line}\n{problems.LABELS[row.kind]}: {row.message}"
        await pilot.hover(lst, offset=(10, 0))  # the header: no tooltip
        await pilot.pause()
        assert lst.tooltip is None


@pytest.mark.parametrize("key, pane", [("5", "broken"), ("2", "deprecated")])
async def test_a_tab_key_typed_at_launch_is_not_undone(tui_demo: Path, app_for, key: str, pane: str) -> None:
    """A tab's key pressed at once, before the app's first focus lands on the Notes list: the
    tab stays, with its own list focused (the focus used to pull the tabs back to Notes)."""
    app = app_for(tui_demo)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press(key)
        await settle(app)
        assert app.main.active_pane.id == pane
        assert app.focused is app.main.active_pane.rowlist
