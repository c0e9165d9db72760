"""A waiting folder rename whose folder holds a note since (one the person never saw) is said to be
unable to apply before the pending screen's keys arm, and its effects read in words, as the live
approval dialog says them: "moves Daily → Inbox/Daily", not `move_from` lines."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pytest
from tui_agents import wait_for
from tui_helpers import armed, open_loaded
from waiting import TIMEOUT

from vaultwatch.core.clock import SteppingClock
from vaultwatch.core.edit.hooks import Caller, calling
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review import approval, pending, refusals
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens import pending as pending_screen
from vaultwatch.tui.screens.arming import ARM_S
from vaultwatch.tui.screens.pending import CHECKING, PendingScreen

pytestmark = pytest.mark.usefixtures("own_state")


def propose_rename(root: Path, src: str, dst: str) -> int:
    """An agent's folder rename while nobody attends the gate: it waits."""
    vault = open_loaded(root)
    approval.attach(vault, ApprovalGate("writes"))
    args = {"src": src, "dst": dst}
    with calling(Caller("bot/1.0", "s-1", "rename", args)), pytest.raises(pending.AwaitingPerson) as said:
        Writer(vault).rename(src, dst, actor="agent:bot/1.0")
    vault.stop()
    return said.value.proposal.id


def body(screen: PendingScreen) -> str:
    return str(screen.query_one("#pending-body").render())


async def test_a_note_put_in_a_waiting_renames_folder_is_said_before_the_keys_arm(tui_demo: Path) -> None:
    (tui_demo / "Daily").mkdir()
    (tui_demo / "Daily" / "2023-09-12.md").write_text("# 12\n")
    renamed = propose_rename(tui_demo, "Daily", "Inbox/Daily")
    (tui_demo / "Daily" / "2023-10-01.md").write_text("# 1 October\nwritten by the person since\n")
    app = make_app(open_loaded(tui_demo), config=fixed_config())
    async with app.run_test(size=(120, 60)) as pilot:
        await wait_for(lambda: isinstance(app.screen, PendingScreen), 10)
        screen = app.screen
        await armed(screen)
        shown = body(screen)  # as the keys arm, the staleness is on screen already
        assert (
            "CANNOT BE APPROVED AS SHOWN: it would now also move Daily/2023-10-01.md, which it did not propose"
        ) in shown, shown
        assert "moves Daily → Inbox/Daily" in shown and "moves Daily/2023-09-12.md → Inbox/Daily/2023-09-12.md" in shown
        effects = shown.split("it touches 2 paths:")[1]  # (the "why" line is the rule's, kept as proposed)
        assert "move_from" not in effects and "move_to" not in effects, shown
        # under "CANNOT BE APPROVED AS SHOWN … decline it" the footer no longer offers y Approve;
        # y says why it cannot, and approves nothing
        offered = {k: b.binding.description for k, b in screen.active_bindings.items() if b.binding.show}
        assert "Approve" not in offered.values() and offered.get("n") == "Decline", offered
        await pilot.press("y")
        await wait_for(lambda: any("cannot be approved as shown" in n.title for n in app._notifications), 10)
        assert pending.store_for(str(tui_demo.resolve())).get(renamed).state == pending.PENDING
        await pilot.press("n")
        await wait_for(lambda: screen.queue == [], 10)
    assert pending.store_for(str(tui_demo.resolve())).get(renamed).state == pending.DECLINED
    assert (tui_demo / "Daily" / "2023-10-01.md").exists()


async def test_the_keys_wait_for_the_answer_whether_the_change_still_applies(
    tui_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However long the check takes (a big folder's every note is hashed), `y` does nothing until it
    is said whether the change still applies, and a moment after."""
    (tui_demo / "Daily").mkdir()
    (tui_demo / "Daily" / "2023-09-12.md").write_text("# 12\n")
    renamed = propose_rename(tui_demo, "Daily", "Inbox/Daily")
    release = threading.Event()
    checked = pending_screen.proposal_stale

    def held(*args):  # the real check, once the test lets it go on
        release.wait(TIMEOUT)
        return checked(*args)

    monkeypatch.setattr(pending_screen, "proposal_stale", held)
    clock = SteppingClock(dt.datetime(2026, 11, 29, 11, tzinfo=dt.UTC))
    app = make_app(open_loaded(tui_demo), config=fixed_config(monotonic=lambda: clock.reference()[1]))
    store = pending.store_for(str(tui_demo.resolve()))
    try:
        async with app.run_test(size=(120, 60)) as pilot:
            await wait_for(lambda: isinstance(app.screen, PendingScreen), 10)
            screen = app.screen
            await wait_for(lambda: screen.query("#pending-body") and CHECKING in body(screen), 10)
            clock.advance(ARM_S * 4)
            await settle(app)
            await pilot.press("y")
            await settle(app)
            assert not screen.keys.armed and not screen.busy and store.get(renamed).state == pending.PENDING
            release.set()
            await wait_for(lambda: CHECKING not in body(screen), 10)
            clock.advance(ARM_S)
            await armed(screen)
    finally:
        release.set()


def test_a_declined_folder_rename_is_kept_with_every_path_as_a_live_decline_is(tui_demo: Path) -> None:
    """Finding: the refusals record read `Obsidian Sync -> Sync (+18)` for a folder rename declined
    live and `Obsidian Sync -> Sync` for the same declined as a pending change."""
    (tui_demo / "Daily").mkdir()
    for day in ("2023-09-12", "2023-09-13"):
        (tui_demo / "Daily" / f"{day}.md").write_text(f"# {day}\n")
    renamed = propose_rename(tui_demo, "Daily", "Inbox/Daily")
    root = str(tui_demo.resolve())
    pending.decline(root, renamed, "not now", by="human:me")
    [kept] = [r for r in refusals.kept(root) if r.pending == renamed]
    assert kept.where == "Daily -> Inbox/Daily (+4)", kept.paths
