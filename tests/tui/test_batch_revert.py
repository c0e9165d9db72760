"""Reverting an agent session's batch from the Changes view (`R`, after a confirm that counts the
changes) and redoing it (`u` on a revert): a real agent on the app's real socket, Pilot keys."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from tui_agents import agent, wait_for
from tui_helpers import open_loaded

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import journal_for
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ChangesScreen, ConfirmScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.diffview import DiffView, plain

pytestmark = pytest.mark.usefixtures("own_state")

NOTE = "Projects/Atlas Migration.md"


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith((".trash", ".obsidian"))
    }


async def test_R_on_a_sessions_change_reverts_its_batch_after_a_confirm_and_u_redoes_it(
    tui_demo: Path, socket_path: str
):
    vault = open_loaded(tui_demo)
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await wait_for(lambda: os.path.exists(socket_path) and socket_path in app.status.parts["mcp"].plain, 10)
        async with agent(
            socket_path, "batcher", "first-session"
        ) as bot:  # an earlier session of the same agent: it stays
            r = await bot.call_tool("write", {"path": "Inbox/earlier.md", "content": "earlier\n"})
            assert not r.is_error, r.content[0].text
        before = tree(tui_demo)
        async with agent(socket_path, "batcher", "second-session") as bot:
            for tool, arguments in [
                ("write", {"path": "Inbox/b1.md", "content": "one\n"}),
                ("write", {"path": "Inbox/b2.md", "content": "two\n"}),
                ("update_frontmatter", {"path": NOTE, "set": {"status": "batched"}}),
            ]:
                r = await bot.call_tool(tool, arguments)
                assert not r.is_error, r.content[0].text
        after = tree(tui_demo)
        # the person's own write, outside the session, stays
        Writer(vault).write("Inbox/mine.md", "mine\n", actor="human:tester")
        journal = journal_for(vault)
        await wait_for(lambda: len(journal.changes(kinds=("change",))) == 5)
        if not isinstance(app.screen, ChangesScreen):
            await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        screen.reload()
        await wait_for(lambda: any(c.session for c in screen.rows))
        row = next(i for i, c in enumerate(screen.rows) if c.session)
        screen.query_one("DataTable").move_cursor(row=row)
        await pilot.pause()
        await pilot.press("R")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        shown = " ".join(str(s.render()) for s in app.screen.query("Static"))
        assert "3 change(s)" in shown and "batcher" in shown
        await pilot.press("y")
        await wait_for(lambda: not (tui_demo / "Inbox" / "b1.md").exists(), 10)
        await wait_for(lambda: {k: v for k, v in tree(tui_demo).items() if k != "Inbox/mine.md"} == before, 10)
        assert (tui_demo / "Inbox" / "mine.md").read_bytes() == b"mine\n"
        assert (tui_demo / "Inbox" / "earlier.md").read_bytes() == b"earlier\n"
        assert len(journal.changes(kinds=("revert",))) == 3

        await wait_for(lambda: any(c.kind == "revert" for c in screen.rows), 10)
        row = next(i for i, c in enumerate(screen.rows) if c.kind == "revert")
        screen.query_one("DataTable").move_cursor(row=row)
        await pilot.pause()
        await pilot.press("u")
        await wait_for(lambda: {k: v for k, v in tree(tui_demo).items() if k != "Inbox/mine.md"} == after, 10)


async def test_a_sessions_id_reads_the_same_in_the_change_and_the_confirm_and_tells_sessions_apart(
    tui_demo: Path, socket_path: str
):
    """Two sessions whose ids start alike (two bridges'): the change's header and R's confirm show
    the same id, one that names only this session (`vaultwatch revert --session` takes it back)."""
    long_lived, one_shot = "bridge-722146057f53", "bridge-7c1428f570f8"
    vault = open_loaded(tui_demo)
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await wait_for(lambda: os.path.exists(socket_path) and socket_path in app.status.parts["mcp"].plain, 10)
        for session, path in ((long_lived, "Inbox/a.md"), (one_shot, "Inbox/b.md")):
            async with agent(socket_path, "scribe", session) as bot:
                r = await bot.call_tool("write", {"path": path, "content": "text\n"})
                assert not r.is_error, r.content[0].text
        journal = journal_for(vault)
        await wait_for(lambda: len(journal.changes(kinds=("change",))) == 2)
        if not isinstance(app.screen, ChangesScreen):
            await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        screen.reload()
        await wait_for(lambda: any(c.session == long_lived for c in screen.rows))
        row = next(i for i, c in enumerate(screen.rows) if c.session == long_lived)
        screen.query_one("DataTable").move_cursor(row=row)
        await pilot.pause()
        header = plain(screen.query_one(DiffView).renderable).splitlines()[0]
        [form] = re.findall(r"\[(bridge-[0-9a-f]+)\]", header)
        assert long_lived.startswith(form) and not one_shot.startswith(form), header
        await pilot.press("R")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        shown = " ".join(str(s.render()) for s in app.screen.query("Static"))
        assert f"session {form} " in shown, shown
        await pilot.press("n")
