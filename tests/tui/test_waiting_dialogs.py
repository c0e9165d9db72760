"""A change waiting in the TUI's approval dialog is never lost or misreported: quitting asks first and
keeps what still waits as a pending change the agent is told about (a real agent on the app's real
socket, Pilot keys)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from tui_agents import agent, mcp_started
from tui_helpers import armed, open_loaded, paste
from waiting import TIMEOUT, await_until

from vaultwatch.core.edit.hooks import Caller, calling
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review import approval, pending, refusals
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.mcp_server.locations import default_socket_path
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ApprovalScreen, ConfirmScreen
from vaultwatch.tui.screens import pending as pending_screen
from vaultwatch.tui.screens.pending import PendingScreen
from vaultwatch.tui.widgets.diffview import DiffView, plain

pytestmark = pytest.mark.usefixtures("own_state")

NOTE = "Inbox/idea.md"


async def test_quitting_with_a_dialog_open_asks_and_the_change_waits_as_a_pending_change(
    tui_demo: Path, socket_path: str
):
    key = "ctrl+q"  # the quit key of every screen, the dialog's too
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            call = asyncio.create_task(claude.call_tool("write", {"path": NOTE, "content": "# Idea\n"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen))
            await pilot.press(key)
            await await_until(lambda: isinstance(app.screen, ConfirmScreen))
            asked = str(app.screen.question)
            assert "1 change waits for your approval: quit anyway?" in asked, asked
            assert "pending change" in asked, asked
            await pilot.press("n")  # not now: the dialog is back, the call still waits
            await await_until(lambda: isinstance(app.screen, ApprovalScreen))
            assert not call.done() and app.is_running
            await pilot.press(key)
            await await_until(lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    text = result.content[0].text
    assert result.is_error and "not applied yet" in text and "the person declined" not in text, text
    assert "The person did not decide it (they closed vaultwatch's TUI first)" in text, text
    [kept] = pending.store_for(str(tui_demo.resolve())).pending()
    assert f"pending change {kept.id}" in text and kept.path == NOTE and kept.tool == "write"
    assert not (tui_demo / NOTE).exists()


PLANNED = "Projects/Atlas Migration.md"


def propose(root: Path, text: str) -> int:
    """An agent's write while nobody attends the gate (a headless server's situation): it waits."""
    vault = open_loaded(root)
    approval.attach(vault, ApprovalGate("writes"))
    with calling(Caller("bot/1.0", "s-1", "write", {"path": PLANNED})), pytest.raises(pending.AwaitingPerson) as said:
        Writer(vault).write(PLANNED, text, overwrite=True, actor="agent:bot/1.0")
    vault.stop()
    return said.value.proposal.id


async def cli(root: Path, *args: str) -> tuple[int | None, str, str]:
    """`vaultwatch ARGS` as the person runs it from another shell: its exit code and output."""
    repo = Path(__file__).resolve().parents[2]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vaultwatch.tui.commands.cli",
        *args,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode, out.decode(), err.decode()


def title(screen: PendingScreen) -> str:
    return str(screen.query_one("#pending-title").render())


async def test_the_pending_screen_follows_an_approval_made_elsewhere_and_d_declines_with_a_reason(
    tui_demo: Path, socket_path: str, monkeypatch: pytest.MonkeyPatch
):
    # what the pending screen says on its look at the store is checked here, not how often it looks
    monkeypatch.setattr(pending_screen, "STORE_LOOK_S", 0.1)
    first = propose(tui_demo, "# Atlas\nrewritten by the bot\n")
    second = propose(tui_demo, "# Atlas\nanother idea\n")
    # the vault's own socket, where `vaultwatch approve` finds the app serving it
    monkeypatch.setenv("XDG_RUNTIME_DIR", os.path.dirname(socket_path))
    socket_path = default_socket_path(str(tui_demo.resolve()))
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    store = pending.store_for(str(tui_demo.resolve()))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        await await_until(lambda: isinstance(app.screen, PendingScreen))
        screen = app.screen
        assert [p.id for p in screen.queue] == [first, second]
        # the person approves the first from another shell: this app's own server applies it
        code, out, err = await cli(tui_demo, "approve", str(first), str(tui_demo))
        assert code == 0 and f"pending change {first}" in out and "pid" in out, (out, err)
        await await_until(lambda: [p.id for p in screen.queue] == [second])
        # (a look at the store while the other process applies it says so first, then this)
        await await_until(lambda: f"pending change {first} was approved elsewhere" in title(screen))
        await armed(screen)
        await pilot.press("d")
        await paste(app, pilot, "keep the old plan")
        await pilot.press("enter")
        await await_until(lambda: screen.queue == [])
    assert store.get(first).state == "approved"
    declined = store.get(second)
    assert declined.state == "declined" and declined.reason == "keep the old plan"


async def test_a_change_applying_elsewhere_is_said_again_once_it_settles(tui_demo: Path, monkeypatch):
    """A look at the store may find a change another process is still applying: the screen says that,
    and says how it ended once it does, not "was applying elsewhere" for good."""
    monkeypatch.setattr(pending_screen, "STORE_LOOK_S", 0.1)
    first = propose(tui_demo, "# Atlas\nrewritten by the bot\n")
    second = propose(tui_demo, "# Atlas\nanother idea\n")
    vault = open_loaded(tui_demo)
    app = make_app(vault, config=fixed_config())
    store = pending.store_for(str(tui_demo.resolve()))
    async with app.run_test(size=(120, 40)):
        screen = PendingScreen(vault, store.pending())
        await app.push_screen(screen)
        assert store.settle(first, pending.APPLYING, by="another shell")
        await await_until(lambda: f"pending change {first} is being applied elsewhere" in title(screen))
        assert [p.id for p in screen.queue] == [second]
        assert store.settle(first, pending.APPROVED, by="another shell", expect=pending.APPLYING)
        await await_until(lambda: f"pending change {first} was approved elsewhere" in title(screen))


def dialog_text(app) -> str:
    views = app.screen.query(DiffView)
    return plain(views.first().renderable) if views and views.first().renderable else ""


@pytest.mark.parametrize("meanwhile", ["edit", "folder", "move"])
async def test_the_dialog_says_when_its_change_can_no_longer_apply_and_y_then_tells_the_person(
    tui_demo: Path, socket_path: str, meanwhile: str
):
    """The note edited, or its folder moved, while the dialog waits: it says so; `y` then tells the
    person that nothing was applied, as the agent is told."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path, watch=True))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "claude-test") as claude:
            call = asyncio.create_task(
                claude.call_tool("update_frontmatter", {"path": PLANNED, "set": {"status": "done"}})
            )
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "asks because" in dialog_text(app))
            dialog = app.screen
            assert "cannot apply as shown" not in dialog_text(app)
            if meanwhile == "edit":  # the person's editor appends a line
                with open(tui_demo / PLANNED, "a") as note:
                    note.write("a line of the person's\n")
                why = f"{PLANNED} was edited since"
            elif meanwhile == "move":  # the person's file manager moves the note
                os.rename(tui_demo / PLANNED, tui_demo / "Inbox" / "Atlas Migration.md")
                why = f"{PLANNED} was moved, renamed or deleted since"
            else:  # the person's file manager renames the folder
                os.rename(tui_demo / "Projects", tui_demo / "Work")
                why = "its folder Projects was moved, renamed or removed since"
            await await_until(lambda: "cannot apply as shown" in dialog_text(app))
            assert why in dialog_text(app), dialog_text(app)
            if meanwhile != "edit":  # the watcher's outside move in the journal, which says where it went
                await await_until(lambda: vault.journal is not None and vault.journal.moves())
            await armed(dialog)
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
            assert result.is_error
            await await_until(lambda: any("it was not applied" in n.message for n in app._notifications))
            said = result.content[0].text
            if meanwhile == "folder":  # told where the note went, not to retry where it is gone
                assert "it is now at 'Work/Atlas Migration.md': read it there" in said, said
            elif meanwhile == "move":
                assert "was moved to 'Inbox/Atlas Migration.md'" in said and "retry there" in said, said
        # kept with what did not happen, once, as a pending change approved too late is
        kept = [r for r in refusals.kept(vault.root_real) if "could not apply" in r.reason]
        assert len(kept) == 1 and kept[0].paths == [PLANNED] and kept[0].tool == "update_frontmatter", kept
        assert kept[0].kind == refusals.REFUSED and kept[0].agent.startswith("claude-test"), kept
        assert kept[0].reason.startswith("approved in vaultwatch's TUI, but could not apply: "), kept[0].reason


TALL = "".join(f"line {i} of the agent's long note\n" for i in range(300))


async def test_d_shows_the_reasons_field_next_to_the_keys_above_a_tall_change(tui_demo: Path, socket_path: str):
    """The approval dialog of a 300-line write, read down to its end: `d` put the reason's field at the
    dialog's foot, below the diff, away from the title that says what d does. It comes up at the top,
    right above the diff that starts with that title, focused; escape hides it and gives the diff the
    focus back, so `n` then denies."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "scribe") as scribe:
            call = asyncio.create_task(scribe.call_tool("write", {"path": "Inbox/long.md", "content": TALL}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "line 299" in dialog_text(app))
            screen = app.screen
            diff = screen.query_one(DiffView)
            assert diff.has_focus
            # the person declines a waiting change (as `vaultwatch decline` and the pending screen
            # say); a rule denies a folder
            assert "y approve  n decline  d decline with a reason" in dialog_text(app), dialog_text(app)
            assert "deny" not in dialog_text(app)
            await armed(screen)
            await pilot.press("end")  # the person read the diff to its end
            await pilot.press("d")
            field = screen.query_one("#approval-reason")
            await await_until(lambda: field.has_focus and field.region.height > 0)
            dialog = screen.query_one("Vertical")
            assert field.region.y == dialog.content_region.y and field.region.bottom == diff.region.y, (
                field.region,
                diff.region,
            )
            await pilot.press("escape")
            await await_until(lambda: diff.has_focus and field.region.height == 0)
            await pilot.press("n")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert result.is_error and not (tui_demo / "Inbox" / "long.md").exists()


async def test_d_on_the_pending_screen_shows_the_reasons_field_under_its_title(tui_demo: Path, socket_path: str):
    """A tall waiting change: the reason's field comes up right under the title that says what d does,
    not below the change's 300 lines."""
    first = propose(tui_demo, TALL)
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        await await_until(lambda: isinstance(app.screen, PendingScreen))
        screen = app.screen
        await armed(screen)
        await pilot.press("d")
        field = screen.query_one("#pending-reason")
        await await_until(lambda: field.has_focus and field.region.height > 0)
        assert field.region.y == screen.query_one("#pending-title").region.bottom, field.region
        await paste(app, pilot, "too long")
        await pilot.press("enter")
        await await_until(lambda: screen.queue == [])
    declined = pending.store_for(str(tui_demo.resolve())).get(first)
    assert declined.state == "declined" and declined.reason == "too long"
