"""Reviewing agents' changes in the TUI (tui/flows/review.py): a real agent on the app's real socket, Pilot keys."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from tui_agents import agent, mcp_started
from tui_helpers import armed, open_loaded, paste
from waiting import TIMEOUT, await_until

from vaultwatch.core.events import DocumentsChanged
from vaultwatch.core.review import approval
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.core.review.journal import journal_for
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ApprovalScreen, ChangeScreen, ChangesScreen, ConfirmScreen, ConflictScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.activity import ActivityList
from vaultwatch.tui.widgets.diffview import DiffView, plain

pytestmark = pytest.mark.usefixtures("own_state")

NOTE = "Projects/Atlas Migration.md"


def diff_text(screen) -> str:
    """The screen's diff once composed ("" before: a screen is pushed before its children mount)."""
    views = screen.query(DiffView)
    return plain(views.first().renderable) if views else ""


def dialog_text(app) -> str:
    """The approval dialog's text once drawn ("" before)."""
    views = app.screen.query(DiffView)
    return plain(views.first().renderable) if views and views.first().renderable else ""


async def test_an_agents_edit_shows_its_diff_and_r_reverts_the_exact_bytes(tui_demo: Path, socket_path: str):
    vault = open_loaded(tui_demo)
    before = (tui_demo / NOTE).read_bytes()
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            read = await claude.call_tool("read", {"path": NOTE})
            line = next(
                x
                for x in read.structured_content["content"].splitlines()
                if x.strip() and not x.startswith(("---", "#")) and ":" not in x
            )
            changed = await claude.call_tool(
                "edit", {"path": NOTE, "old_text": line, "new_text": line + " EDITED-BY-AGENT"}
            )
            assert not changed.is_error
            activity = app.query_one(ActivityList)
            await await_until(lambda: any(r.tool == "edit" for r in activity.rows))
            activity.focus()
            await pilot.press("end", "enter")
            await await_until(lambda: isinstance(app.screen, ChangeScreen) and diff_text(app.screen))
            text = diff_text(app.screen)
            assert "claude-test/1.0" in text and "edit" in text and NOTE in text
            assert "- " + line.strip()[:20] in text.replace("  ", " ") or line.strip()[:20] in text
            assert "EDITED-BY-AGENT" in text and "+1 -1 lines" in text
            await pilot.press("r")
            await await_until(lambda: (tui_demo / NOTE).read_bytes() == before)
            reread = await claude.call_tool("read", {"path": NOTE})
            assert "EDITED-BY-AGENT" not in reread.structured_content["content"]
            history = await claude.call_tool("history", {"path": NOTE})
            rows = history.structured_content["changes"]
            assert rows[0]["kind"] == "revert" and rows[0]["who"].startswith("human:")
            assert rows[1]["reverted_by"] == rows[0]["id"]


async def test_revert_refused_after_an_outside_edit_shows_why_and_the_three_versions(tui_demo: Path):
    vault = open_loaded(tui_demo)
    from vaultwatch.core.edit.writes import Writer

    Writer(vault).write("Inbox/new.md", "agent text\n", actor="agent:bot")
    (tui_demo / "Inbox" / "new.md").write_bytes(b"person's own text\n")
    vault.refresh_paths(["Inbox/new.md"])
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert [c.kind for c in screen.rows] == ["outside", "change"]
        await pilot.press("down", "r")
        await await_until(lambda: isinstance(app.screen, ConflictScreen))
        shown = " ".join(plain(s.content) for s in app.screen.query("Static"))
        assert "changed by you outside vaultwatch" in shown
        assert "agent text" in shown and "person's own text" in shown
    assert (tui_demo / "Inbox" / "new.md").read_bytes() == b"person's own text\n"


async def test_changes_view_reverts_all_of_one_agent_after_a_confirm(tui_demo: Path):
    vault = open_loaded(tui_demo)
    from vaultwatch.core.edit.writes import Writer

    writer = Writer(vault)
    before = (tui_demo / NOTE).read_bytes()
    writer.update_frontmatter(NOTE, set={"status": "deprecated"}, actor="agent:bot")
    writer.write("Inbox/bot.md", "bot\n", actor="agent:bot")
    writer.write("Inbox/other.md", "other\n", actor="agent:other")
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        await pilot.press("down", "down")  # the frontmatter edit
        text = diff_text(screen)
        # the value as the note writes it, not its Python repr ('deprecated')
        assert "frontmatter" in text and "status: stable → deprecated" in text and "'deprecated'" not in text
        await pilot.press("R")
        await await_until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await await_until(lambda: not (tui_demo / "Inbox" / "bot.md").exists())
        await await_until(lambda: (tui_demo / NOTE).read_bytes() == before)
        assert (tui_demo / "Inbox" / "other.md").exists()


async def test_rename_diff_shows_the_move_and_the_rewritten_links(tui_demo: Path):
    vault = open_loaded(tui_demo)
    from vaultwatch.core.edit.writes import Writer

    result = Writer(vault).rename(NOTE, "Archive/Atlas.md", actor="agent:mover")
    assert len(result.changed_paths) > 2
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen) and diff_text(app.screen))
        text = diff_text(app.screen)
        assert f"moved {NOTE} → Archive/Atlas.md" in text and "rewrote links in" in text
        assert "links rewritten in" in text and "[[Atlas" in text


async def test_approval_dialog_round_trips(tui_demo: Path, socket_path: str):
    """y writes, n declines, d declines with the reason typed: three calls of one agent, each
    held by its own dialog until its key (one app and one server for the three: each call
    writes its own note, so none sees another's)."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    rounds = [
        ("yes", ("y",), None),
        ("no", ("n",), "Error: the person declined this change: declined in the TUI"),
        ("why", ("d", *"not now", "enter"), "Error: the person declined this change: not now"),
    ]
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            for name, keys, answer in rounds:
                path = f"Inbox/idea-{name}.md"
                call = asyncio.create_task(claude.call_tool("write", {"path": path, "content": "# Idea\n"}))
                await await_until(
                    lambda path=path: (
                        isinstance(app.screen, ApprovalScreen)
                        and app.screen.query(DiffView)
                        and path in diff_text(app.screen)
                    )
                )
                text = diff_text(app.screen)
                assert f"claude-test/1.0 wants to write {path}" in text and "# Idea" in text
                assert not call.done()
                await await_until(lambda: "1 waiting" in app.status.parts["approval"].plain)
                await armed(app.screen)
                await pilot.press(*keys)
                result = await asyncio.wait_for(call, TIMEOUT)
                if answer is None:
                    assert not result.is_error and (tui_demo / path).read_bytes() == b"# Idea\n"
                    [change] = journal_for(vault).changes(path=path)
                    assert change.approved_via == "tui" and change.reviewed  # the person saw it in the TUI
                else:
                    assert result.is_error and result.content[0].text == answer
                    assert not (tui_demo / path).exists()
                await await_until(lambda: not isinstance(app.screen, ApprovalScreen))


async def test_the_approval_dialog_lists_every_file_a_folder_rename_moves_and_the_rule(
    tui_demo: Path, socket_path: str
):
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("none", folders=[("Projects/Archive/Retired/**", "writes")]))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            call = asyncio.create_task(claude.call_tool("rename", {"path": "Projects", "new_path": "Work"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "asks because" in dialog_text(app))
            text = diff_text(app.screen)
            assert 'asks because rule "Projects/Archive/Retired/**" = "writes" covers the change, which moves ' in text
            assert "move_from" not in text and "move_to" not in text, text  # the effects in words, the why too
            files = sum(1 for p in (tui_demo / "Projects").rglob("*") if p.is_file())
            assert f"the folder Projects and the {files} files in it move; " in text, text
            for note in ("Projects/Atlas Migration.md", "Projects/Archive/Retired/Q3 2024 Roadmap.md"):
                assert f"moves {note} → Work/{note.removeprefix('Projects/')}" in text
            await armed(app.screen)
            await pilot.press("n")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert result.is_error and (tui_demo / "Projects" / "Archive" / "Retired" / "Q3 2024 Roadmap.md").exists()


async def test_the_approval_dialog_names_a_symlinked_notes_real_target(tui_demo: Path, socket_path: str):
    os.symlink("../Projects/Atlas Migration.md", tui_demo / "Inbox" / "alias.md")
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("none", folders=[("Projects/**", "writes")]))
    before = (tui_demo / NOTE).read_bytes()
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            call = asyncio.create_task(
                claude.call_tool("update_frontmatter", {"path": "Inbox/alias.md", "set": {"status": "done"}})
            )
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "asks because" in dialog_text(app))
            assert f"rewrites {NOTE}  (named as Inbox/alias.md)" in diff_text(app.screen)
            # the person's words for the tool's, in the title
            assert "claude-test/1.0 wants to change the properties of Inbox/alias.md" in dialog_text(app)
            await armed(app.screen)
            await pilot.press("n")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert result.is_error and (tui_demo / NOTE).read_bytes() == before


async def test_g_cycles_the_approval_mode_and_the_gate_then_asks(tui_demo: Path):
    vault = open_loaded(tui_demo)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("g")
        gate = approval.gate_for(vault)
        assert gate is not None and gate.mode == "writes" and gate.attended
        assert app.status.parts["approval"].plain == "approve: writes"
        await pilot.press("g")
        assert gate.mode == "deletes" and app.status.parts["approval"].plain == "approve: deletes"
        await pilot.press("g")
        assert gate.mode == "none" and "approval" not in app.status.parts
    assert not gate.attended  # the app left: an unattended gate declines at once


async def test_the_approve_key_lets_agents_calls_go_on_at_once_and_the_dialog_closes_when_written(
    tui_demo: Path, socket_path: str
):
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)):
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            call = asyncio.create_task(claude.call_tool("write", {"path": "Inbox/idea.md", "content": "# Idea\n"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen))
            dialog = app.screen
            await armed(dialog)
            vault.foreground.hold(5.0)  # the key's person-first hold (tui.app.person_acts)
            dialog.action_approve()
            assert vault.foreground.remaining() == 0.0  # the approved call and the next ones do not wait
            assert app.screen is dialog  # open until the approved call has written (ApprovalFinished)
            result = await asyncio.wait_for(call, TIMEOUT)
            await await_until(lambda: app.screen is not dialog)
    assert not result.is_error and (tui_demo / "Inbox" / "idea.md").read_bytes() == b"# Idea\n"


async def test_following_an_agent_shows_its_newest_change_as_a_diff(tui_demo: Path, socket_path: str):
    vault = open_loaded(tui_demo)
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            await claude.call_tool("read", {"path": NOTE})
            activity = app.query_one(ActivityList)
            await await_until(lambda: len(activity.rows) >= 1)
            activity.focus()
            await pilot.press("end", "f")  # follow claude
            assert app.main.activity.following
            first = await claude.call_tool("write", {"path": "Inbox/one.md", "content": "# One FIRST-WRITE\n"})
            assert not first.is_error
            await await_until(lambda: isinstance(app.screen, ChangeScreen))
            screen = app.screen
            assert screen.following == "claude-test/1.0"
            await await_until(lambda: "FIRST-WRITE" in diff_text(screen))
            second = await claude.call_tool(
                "edit", {"path": "Inbox/one.md", "old_text": "FIRST-WRITE", "new_text": "SECOND-EDIT"}
            )
            assert not second.is_error
            await await_until(lambda: "SECOND-EDIT" in diff_text(screen))  # the same view follows on
            assert app.screen is screen and "following claude-test/1.0" in str(
                screen.query_one("#change-help").render()
            )
            await pilot.press("f")  # stop following: back to the main screen, follow mode off
            await await_until(lambda: app.screen is app.main)
            assert not app.main.activity.following
            await claude.call_tool("write", {"path": "Inbox/two.md", "content": "# Two\n"})
            await await_until(lambda: sum(1 for r in activity.rows if r.tool == "write") >= 2)
            await settle(app)
            assert app.screen is app.main  # no longer following: no diff pops up


async def since(app, pilot, text: str, *then: str) -> None:
    """`s` in the changes view, `text` entered in its time field, then the keys `then`."""
    await pilot.press("s")
    await paste(app, pilot, text)
    await pilot.press(*then)


async def test_the_changes_view_filters_since_a_time(tui_demo: Path):
    vault = open_loaded(tui_demo)
    from vaultwatch.core.edit.writes import Writer

    writer = Writer(vault)
    writer.write("Inbox/a.md", "a\n", actor="agent:bot")
    writer.write("Inbox/b.md", "b\n", actor="agent:other")
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        await pilot.press("t")  # all journaled
        assert len(screen.rows) == 2
        # the times are pasted into the field: its text is what counts (Pilot waits for the app to
        # go idle twice per key pressed)
        await since(app, pilot, "2099-01-01", "enter")
        assert screen.rows == [] and "since 2099-01-01" in str(screen.query_one("#changes-title").render())
        await since(app, pilot, "someday", "enter")  # a bad time says so and keeps the filter
        assert screen.rows == [] and screen.has_class("-since")
        await pilot.press("escape")
        assert not screen.has_class("-since") and app.screen is screen
        await since(app, pilot, "1d", "enter")
        assert [c.path for c in screen.rows] == ["Inbox/b.md", "Inbox/a.md"]
        await pilot.press("w")  # and per agent on top of the time
        assert [c.path for c in screen.rows] == ["Inbox/b.md"]


async def test_a_cli_revert_while_the_tui_runs_shows_as_the_journaled_revert(tui_demo: Path):

    vault = open_loaded(tui_demo)
    from vaultwatch.core.edit.writes import Writer

    before = (tui_demo / NOTE).read_bytes()
    change = Writer(vault).update_frontmatter(NOTE, set={"status": "deprecated"}, actor="agent:bot")
    assert change.changed
    cid = journal_for(vault).changes()[0].id
    app = make_app(vault, config=fixed_config(watch=True))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        # the views settle before the watcher's OS watches are in place (on a loaded machine, long
        # before): a revert written before then would never reach the TUI
        assert await asyncio.to_thread(vault.wait_watching, TIMEOUT)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        code, out, err = await _cli_revert(cid, tui_demo)
        assert code == 0, err
        assert (tui_demo / NOTE).read_bytes() == before
        # the TUI's watcher sees the file change: the view lists the CLI's journaled revert
        await await_until(lambda: screen.rows and screen.rows[0].kind == "revert")
        # every disk event of the revert applied, then the journal's second look at any outside row
        # they made, at once rather than after its timer (as a process about to stop has it done)
        assert await asyncio.to_thread(vault.wait_for_pending_writes, TIMEOUT)
        journal_for(vault).recheck_now()
        await settle(app)
        kinds = [c.kind for c in journal_for(vault).changes()]
        assert kinds == ["revert", "change"], kinds  # no "changed outside" row for it
        assert [c.kind for c in screen.rows] == ["revert", "change"]


# `vaultwatch revert` held after its files are back and before its row commits: the real command in
# its own process, paused at the journal's record of the revert until the test lets it go (a kill
# there leaves what a kill -9 between the write and the commit leaves)
HELD_REVERT = """
import os, sys, time
from vaultwatch.core.review.journal import Journal
record = Journal.record_revert
def held(self, *args, **kwargs):
    open(sys.argv[1], "w").close()
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.01)
    return record(self, *args, **kwargs)
Journal.record_revert = held
from vaultwatch.tui.commands.cli import main
sys.exit(main(sys.argv[3:]))
"""


async def _cli_revert(cid: int, vault_dir: Path) -> tuple[int | None, bytes, bytes]:
    """`vaultwatch revert CID VAULT` as the person runs it from another shell: its exit code and output."""
    repo = Path(__file__).resolve().parents[2]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vaultwatch.tui.commands.cli",
        "revert",
        str(cid),
        str(vault_dir),
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out, err


async def _held_cli_revert(vault, root: Path, cid: int, tmp: Path):
    """Start a held `vaultwatch revert cid`; return it once its files are back on disk and the
    TUI's watcher has handled their disk event (the revert's row is not committed yet)."""
    seen: set[str] = set()
    # subscribed after the journal: the bus runs its handler of an event before this one
    vault.bus.subscribe(
        lambda e: seen.update(e.changed) if isinstance(e, DocumentsChanged) and e.source == "disk" else None
    )
    repo = Path(__file__).resolve().parents[2]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HELD_REVERT,
        str(tmp / "held"),
        str(tmp / "release"),
        "revert",
        str(cid),
        str(root),
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await await_until(lambda: (tmp / "held").exists() or proc.returncode is not None)
    assert proc.returncode is None, await proc.stderr.read()
    await await_until(lambda: NOTE in seen)  # the file event came while the revert's intent is open
    return proc


async def test_a_cli_revert_whose_row_commits_after_its_file_event_shows_in_the_changes_view(
    tui_demo: Path, tmp_path: Path
):
    from vaultwatch.core.edit.writes import Writer

    vault = open_loaded(tui_demo)
    before = (tui_demo / NOTE).read_bytes()
    Writer(vault).update_frontmatter(NOTE, set={"status": "deprecated"}, actor="agent:bot")
    journal = journal_for(vault)
    cid = journal.changes()[0].id
    app = make_app(vault, config=fixed_config(watch=True))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert await asyncio.to_thread(vault.wait_watching, TIMEOUT)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        proc = await _held_cli_revert(vault, tui_demo, cid, tmp_path)
        assert (tui_demo / NOTE).read_bytes() == before
        assert [c.kind for c in journal.changes()] == ["change"]  # not committed yet
        (tmp_path / "release").touch()
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err
        # the row committed after the file event: the view lists it all the same
        await await_until(lambda: screen.rows and screen.rows[0].kind == "revert")
        assert [c.kind for c in journal.changes()] == ["revert", "change"]  # no "changed outside" row
        assert [c.kind for c in screen.rows] == ["revert", "change"]


async def test_a_cli_revert_killed_before_its_row_and_finished_later_shows_in_the_changes_view(
    tui_demo: Path, tmp_path: Path
):
    """kill -9 between the file write and the commit: the view shows what the journal holds (the
    change, not reverted); `vaultwatch revert` again finishes it without writing a file (the bytes
    are back already): no disk event at all, and the view lists the revert."""
    import signal

    from vaultwatch.core.edit.writes import Writer

    vault = open_loaded(tui_demo)
    Writer(vault).update_frontmatter(NOTE, set={"status": "deprecated"}, actor="agent:bot")
    journal = journal_for(vault)
    cid = journal.changes()[0].id
    app = make_app(vault, config=fixed_config(watch=True))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert await asyncio.to_thread(vault.wait_watching, TIMEOUT)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        proc = await _held_cli_revert(vault, tui_demo, cid, tmp_path)
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        assert [c.kind for c in journal.changes()] == ["change"]
        assert [c.kind for c in screen.rows] == ["change"]
        assert journal.open_intents(interrupted=True)  # the killed revert's plan, to be finished
        code, out, err = await _cli_revert(cid, tui_demo)
        assert code == 0, err
        assert b"finished an interrupted revert" in out
        await await_until(lambda: screen.rows and screen.rows[0].kind == "revert")
        assert [c.kind for c in journal.changes()] == ["revert", "change"]
        assert [c.kind for c in screen.rows] == ["revert", "change"]


async def test_the_approval_dialogs_countdown_keeps_the_diff_where_the_person_scrolled_it(tui_demo: Path):
    import threading

    from vaultwatch.core.edit.writes import Writer

    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config())
    outcome: list = []

    def write() -> None:
        try:
            outcome.append(
                Writer(vault).write("Inbox/long.md", "".join(f"line {i}\n" for i in range(400)), actor="agent:bot")
            )
        except Exception as exc:  # a decline would land here
            outcome.append(exc)

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        # the dialog is pushed before it is composed: its diff view comes a moment later
        await await_until(lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query(DiffView))
        dialog = app.screen
        view = dialog.query_one(DiffView)
        await await_until(lambda: view.virtual_size.height > 400)
        # the person scrolls to line ~200 (again, should the first scroll land before the dialog's
        # layout gave the view its height: it is clamped then; seen once in CI beside a 100k-note run)
        await await_until(lambda: view.scroll_to(y=200, animate=False) or view.scroll_offset.y == 200)
        assert "line 19" in view.visible_text()
        dialog._tick()  # the countdown's second
        await pilot.pause()
        assert view.scroll_offset.y == 200
        await armed(app.screen)
        await pilot.press("y")
        await asyncio.get_running_loop().run_in_executor(None, thread.join, TIMEOUT)
    assert outcome and getattr(outcome[0], "changed", False)


async def test_the_approved_call_runs_with_quick_thread_handoffs_until_its_answer_is_out(
    tui_demo: Path, socket_path: str
):
    """From the key until the call has answered, the interpreter switches threads every 0.5 ms
    (the woken writer and the server's answer do not queue 5 ms behind the TUI's drawing after
    each system call); then the process's own switch interval is back."""
    import sys

    from vaultwatch.core.review.approval import ApprovalSettled
    from vaultwatch.tui.screens.approval import QUICK_SWITCH_S

    normal = sys.getswitchinterval()
    at_decision: list[float] = []
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    vault.bus.subscribe(
        lambda e: at_decision.append(sys.getswitchinterval()) if isinstance(e, ApprovalSettled) else None
    )  # published inside the decision, in the key's thread
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            for i, key in enumerate(("y", "n")):
                call = asyncio.create_task(claude.call_tool("write", {"path": f"Inbox/q{i}.md", "content": "# Q\n"}))
                await await_until(lambda: isinstance(app.screen, ApprovalScreen))
                await armed(app.screen)
                await pilot.press(key)
                result = await asyncio.wait_for(call, TIMEOUT)
                assert result.is_error == (key == "n")
                await await_until(lambda: sys.getswitchinterval() == normal)  # back once the answer is out
                await await_until(lambda: not isinstance(app.screen, ApprovalScreen))
    assert at_decision == [QUICK_SWITCH_S, QUICK_SWITCH_S] and normal > QUICK_SWITCH_S
    assert sys.getswitchinterval() == normal


def test_the_dialogs_quick_handoffs_and_the_lanes_share_one_owner():
    """The approval dialog and the MCP lane both lower the switch interval (core.handoffs counts
    them). In the order lane held -> key pressed -> heavy call done -> dialog's grace over, the
    process's own interval comes back; a dialog that saved and restored the interval itself put
    back the lane's 0.5 ms and left it there."""
    import sys

    from vaultwatch.core import handoffs
    from vaultwatch.tui.screens.approval import QUICK_SWITCH_S, QuickHandoffs

    normal = sys.getswitchinterval()
    quick = QuickHandoffs()
    handoffs.begin_quick()  # the lane holds an agent's heavy call
    quick.start(7)  # the person approves a change: its call runs with quick hand-offs
    quick.start(7)  # the same change again (a second key): still one block
    handoffs.end_quick()  # the heavy call is done
    assert sys.getswitchinterval() == QUICK_SWITCH_S and quick.active  # the approved call's answer is not out yet
    quick.stop(7)
    assert sys.getswitchinterval() == normal and handoffs.quick_holds() == 0 and not quick.active
    quick.start(1), quick.start(2)
    quick.stop()  # the app leaves: every block ends
    assert sys.getswitchinterval() == normal and handoffs.quick_holds() == 0


async def test_the_changes_view_marks_changes_reviewed_and_says_when_the_journal_is_full(tui_demo: Path, monkeypatch):
    """An agent fills the journal with changes nobody reviewed (its next write is refused); the
    Changes view says the journal is full and which changes are not reviewed; m marks one, M all
    shown, and then the journal has room again (reviewed changes past the zero retention age)."""
    monkeypatch.setenv("VAULTWATCH_JOURNAL_MAX_MB", "1")
    monkeypatch.setenv("VAULTWATCH_JOURNAL_AGENT_SHARE", "1")
    monkeypatch.setenv("VAULTWATCH_JOURNAL_KEEP_DAYS", "0")
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.review.journal import JournalFull

    vault = open_loaded(tui_demo)
    writer = Writer(vault)
    noise = os.urandom(60_000).hex()  # hex of random bytes: compresses to about half
    with pytest.raises(JournalFull, match="journal is full"):
        for i in range(100):
            writer.write(f"Inbox/junk{i}.md", noise[i:] + "\n", actor="agent:bot")
    journal = journal_for(vault)
    assert journal.status()["full"]
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        await pilot.press("t")  # all journaled
        title = str(screen.query_one("#changes-title").render())
        assert "journal full" in title
        newest = screen.rows[0]
        assert not newest.reviewed
        await pilot.press("m")
        await await_until(lambda: journal.get(newest.id).reviewed)
        assert len(journal.unreviewed()) == len(screen.rows) - 1
        await pilot.press("M")
        await await_until(lambda: journal.unreviewed() == [])
        await await_until(lambda: "journal full" not in str(screen.query_one("#changes-title").render()))
    writer.write("Inbox/after.md", noise + "\n", actor="agent:bot")  # room again


async def test_the_changes_views_session_and_since_survive_a_clock_stepped_back(tui_demo: Path):
    """The wall clock steps back 2 h after the app started: the agent's changes made then are
    still in "this session" and in `s 30m` (the journal's own time, not the wall clock)."""
    import datetime as dt

    from vaultwatch.core.clock import SteppingClock
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.vault import Vault

    clock = SteppingClock(dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC))
    vault = Vault(tui_demo, clock=clock)
    vault.load()
    writer = Writer(vault)
    writer.write("Inbox/before.md", "before\n", actor="agent:bot")  # before the session: not in it
    clock.advance(60)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        clock.advance(60)
        clock.step_wall(-2 * 3600)
        writer.write("Inbox/a.md", "a\n", actor="agent:bot")
        clock.advance(60)
        writer.write("Inbox/b.md", "b\n", actor="agent:bot")
        clock.step_wall(2 * 3600)
        await pilot.press("C")
        await await_until(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert [c.path for c in screen.rows] == ["Inbox/b.md", "Inbox/a.md"]
        assert "this session" in str(screen.query_one("#changes-title").render())
        await pilot.press("s", *"30m", "enter")
        assert [c.path for c in screen.rows] == ["Inbox/b.md", "Inbox/a.md", "Inbox/before.md"]
        assert "last 30m" in str(screen.query_one("#changes-title").render())
