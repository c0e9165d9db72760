"""Pending changes in the TUI: changes agents proposed while no TUI was open are shown when it
opens, with their diff; `y` applies one as the agent's change, `n` declines one.

The proposals are made the real way: an agent's write through the write path while the gate
is on and no one attends, which keeps it as a pending change."""

from __future__ import annotations

import collections
import datetime as dt
import threading
from pathlib import Path

import pytest
from tui_agents import wait_for
from tui_helpers import armed, open_loaded
from waiting import TIMEOUT

from vaultwatch.core.clock import SteppingClock
from vaultwatch.core.edit.effects import stranded_words
from vaultwatch.core.edit.hooks import Caller, calling
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.links import resolve
from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.core.review.journal import journal_for
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens import pending as pending_screen
from vaultwatch.tui.screens.arming import ARM_S
from vaultwatch.tui.screens.pending import CHECKING, WORKING, PendingScreen

NOTE = "Projects/Atlas Migration.md"


def propose(root: Path, text: str) -> int:
    """An agent's write while nobody attends the gate (a headless server's situation)."""
    vault = open_loaded(root)
    approval.attach(vault, ApprovalGate("writes"))
    with calling(Caller("bot/1.0", "s-1", "write", {"path": NOTE})), pytest.raises(pending.AwaitingPerson) as said:
        Writer(vault).write(NOTE, text, overwrite=True, actor="agent:bot/1.0")
    vault.stop()
    return said.value.proposal.id


async def test_the_tui_shows_pending_changes_on_open_and_y_applies_n_declines(tui_demo: Path):
    before = (tui_demo / NOTE).read_bytes()
    first = propose(tui_demo, "# Atlas\nrewritten by the bot\n")
    second = propose(tui_demo, "# Atlas\nanother idea\n")
    assert (tui_demo / NOTE).read_bytes() == before
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        await wait_for(lambda: isinstance(app.screen, PendingScreen), 10)
        screen = app.screen
        assert [p.id for p in screen.queue] == [first, second]
        shown = str(screen.query_one("#pending-body").render())
        assert "+rewritten by the bot" in shown, shown
        await armed(screen)
        await pilot.press("y")
        await wait_for(lambda: [p.id for p in screen.queue] == [second], 10)
        assert (tui_demo / NOTE).read_bytes() == b"# Atlas\nrewritten by the bot\n"
        # the second was proposed over the bytes before the first: it must not apply now
        await armed(screen)
        assert "changed since" in str(screen.query_one("#pending-body").render())
        await pilot.press("y")  # it cannot apply as shown: y says so and applies nothing
        await wait_for(lambda: any("changed since" in n.message for n in app._notifications), 10)
        assert [p.id for p in screen.queue] == [second]
        await pilot.press("n")
        await wait_for(lambda: screen.queue == [], 10)
    store = pending.store_for(str(tui_demo.resolve()))
    assert [(p.id, p.state) for p in store.proposals()] == [(first, "approved"), (second, "declined")]
    [change] = [c for c in journal_for(vault).changes(path=NOTE) if c.id in store.get(first).change_ids]
    assert change.who.startswith("agent bot") and change.tool == "write"
    assert change.approved_via == "tui"  # `y` in the TUI's list of pending changes
    assert (tui_demo / NOTE).read_bytes() == b"# Atlas\nrewritten by the bot\n"


async def test_n_declines_and_leaves_the_note(tui_demo: Path):
    before = (tui_demo / NOTE).read_bytes()
    pid = propose(tui_demo, "# Atlas\nno\n")
    vault = open_loaded(tui_demo)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        await wait_for(lambda: isinstance(app.screen, PendingScreen), 10)
        await armed(app.screen)
        await pilot.press("n")
        await wait_for(lambda: app.screen.queue == [], 10)
    assert pending.store_for(str(tui_demo.resolve())).get(pid).state == "declined"
    assert (tui_demo / NOTE).read_bytes() == before


def propose_rename(root: Path, dst: str, src: str = NOTE) -> int:
    """An agent's rename while nobody attends the gate: it waits, with the links it would rewrite."""
    vault = open_loaded(root)
    approval.attach(vault, ApprovalGate("writes"))
    args = {"src": src, "dst": dst}
    with calling(Caller("bot/1.0", "s-1", "rename", args)), pytest.raises(pending.AwaitingPerson) as said:
        Writer(vault).rename(src, dst, actor="agent:bot/1.0")
    vault.stop()
    return said.value.proposal.id


def body(screen: PendingScreen) -> str:
    return str(screen.query_one("#pending-body").render())


async def test_a_waiting_renames_link_rewrites_are_shown_for_the_change_still_shown(tui_demo: Path):
    """The links a waiting rename rewrites are worked out off the UI thread and shown with it; an
    answer for a change the person has moved on from leaves the one shown alone, and is kept for
    when that change is shown again."""
    renamed = propose_rename(tui_demo, "Projects/Atlas.md")
    wrote = propose(tui_demo, "# Atlas\nrewritten by the bot\n")
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(app)
        await wait_for(lambda: isinstance(app.screen, PendingScreen), 10)
        screen = app.screen
        assert [p.id for p in screen.queue] == [renamed, wrote]
        await wait_for(lambda: "links rewritten in People/Ben Okafor.md" in body(screen), 10)
        shown = body(screen)
        assert "-after [[Atlas Migration]] and the [[Deploy Runbook]]." in shown, shown
        assert "+after [[Atlas]] and the [[Deploy Runbook]]." in shown, shown
        assert "working out" not in shown, shown

        await pilot.press("s")  # the person moves on to the write
        assert "+rewritten by the bot" in body(screen)
        # the rename's links, worked out (again) while the write is shown, must not replace it
        late = [("Elsewhere.md", b"see [[Atlas Migration]]\n", b"see [[Atlas]]\n")]
        screen.post_message(PendingScreen.LinksWorkedOut(renamed, vault.snapshot.generation, late))
        await settle(app)
        shown = body(screen)
        assert "+rewritten by the bot" in shown and "Elsewhere.md" not in shown, shown

        await pilot.press("s")  # back to the rename: its links as last worked out, not read again
        shown = body(screen)
        assert "links rewritten in Elsewhere.md" in shown and "+see [[Atlas]]" in shown, shown


async def test_the_pending_screen_says_what_a_rename_leaves_and_a_delete_does(tui_demo: Path):
    """A waiting rename without link rewriting says how many notes' links it leaves pointing at
    nothing, and a waiting permanent delete that it deletes for good, not to the trash."""
    vault = open_loaded(tui_demo)
    linking = len(resolve.backlinks(vault.snapshot, NOTE))
    approval.attach(vault, ApprovalGate("writes"))
    args = {"src": NOTE, "dst": "Projects/Atlas.md", "update_links": False}
    with calling(Caller("bot/1.0", "s-1", "rename", args)), pytest.raises(pending.AwaitingPerson):
        Writer(vault).rename(NOTE, "Projects/Atlas.md", update_links=False, actor="agent:bot/1.0")
    args = {"path": NOTE, "permanent": True, "confirm_path": NOTE}
    with calling(Caller("bot/1.0", "s-1", "delete", args)), pytest.raises(pending.AwaitingPerson):
        Writer(vault).delete(NOTE, permanent=True, confirm_path=NOTE, actor="agent:bot/1.0")
    vault.stop()
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(app)
        await wait_for(lambda: isinstance(app.screen, PendingScreen), 10)
        screen = app.screen
        said = stranded_words(linking)
        await wait_for(lambda: said in body(screen), 10)
        await pilot.press("s")  # on to the delete
        assert "deleted for good (not to the trash)" in body(screen), body(screen)


def stepped() -> SteppingClock:
    """The app's monotonic clock, stepped by the test: "before the keys arm" is the clock not moved."""
    return SteppingClock(dt.datetime(2026, 11, 29, 11, tzinfo=dt.UTC))


def on_screen(app) -> str:
    """The pending screen's body once it is up and composed ("" before)."""
    screen = app.screen
    return body(screen) if isinstance(screen, PendingScreen) and screen.query("#pending-body") else ""


def title(screen: PendingScreen) -> str:
    return str(screen.query_one("#pending-title").render())


WAIT_FOR_LINKS = "wait until its link rewrites are shown"


def told_to_wait(app) -> bool:
    return any(WAIT_FOR_LINKS in n.message for n in app._notifications)


async def test_y_and_n_arm_a_moment_after_each_change_is_shown(tui_demo: Path):
    """A key pressed as the screen comes up, or as the next change replaces the one approved,
    does nothing but say it came too soon; once the change has been on screen a moment it acts."""
    first = propose(tui_demo, "# Atlas\nrewritten by the bot\n")
    second = propose(tui_demo, "# Atlas\nanother idea\n")
    clock = stepped()
    vault = open_loaded(tui_demo)
    app = make_app(vault, config=fixed_config(monotonic=lambda: clock.reference()[1]))
    store = pending.store_for(str(tui_demo.resolve()))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(lambda: "+rewritten" in on_screen(app), 10)
        screen = app.screen
        await pilot.press("y", "n")
        await settle(app)
        assert not screen.busy and [p.id for p in screen.queue] == [first, second]
        assert store.get(first).state == "pending" and store.get(second).state == "pending"
        assert "too soon: decline did nothing; keys arm in a moment" in title(screen)
        clock.advance(ARM_S)
        await pilot.press("y")
        await wait_for(lambda: [p.id for p in screen.queue] == [second], 10)
        assert store.get(first).state == "approved"
        await pilot.press("n")  # as the second change replaces the first: too soon for it
        await settle(app)
        assert store.get(second).state == "pending" and "too soon: decline did nothing" in title(screen)
        clock.advance(ARM_S)
        await pilot.press("n")
        await wait_for(lambda: screen.queue == [], 10)
    assert store.get(second).state == "declined"


async def test_a_rename_is_approved_only_once_its_link_rewrites_are_shown(
    tui_demo: Path, monkeypatch: pytest.MonkeyPatch
):
    """`y` while the rename's link rewrites are still being worked out approves nothing and says
    to wait for them; once they are shown (and have been a moment), `y` applies the rename."""
    renamed = propose_rename(tui_demo, "Projects/Atlas.md")
    linking = tui_demo / "People" / "Ben Okafor.md"
    before = linking.read_text()
    release = threading.Event()
    worked_out = pending.link_rewrites

    def held(vault, proposal):  # the real work, once the test lets it go on (a big vault's slow read)
        release.wait(TIMEOUT)
        return worked_out(vault, proposal)

    monkeypatch.setattr(pending, "link_rewrites", held)
    clock = stepped()
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(monotonic=lambda: clock.reference()[1]))
    store = pending.store_for(str(tui_demo.resolve()))
    try:
        async with app.run_test(size=(120, 60)) as pilot:
            await wait_for(lambda: WORKING.strip() in on_screen(app), 10)
            screen = app.screen
            await wait_for(lambda: CHECKING not in body(screen), 10)  # the keys arm once this is said
            clock.advance(ARM_S)  # the keys have armed: only the links are not shown yet
            await pilot.press("y")
            await settle(app)
            assert not screen.busy and store.get(renamed).state == "pending"
            assert told_to_wait(app)
            assert WORKING.strip() in body(screen)

            release.set()
            await wait_for(lambda: "links rewritten in People/Ben Okafor.md" in body(screen), 10)
            await pilot.press("y")  # the links just came up: what `y` approves grew, so it re-arms
            await settle(app)
            assert not screen.busy and store.get(renamed).state == "pending"
            await wait_for(lambda: CHECKING not in body(screen), 10)
            clock.advance(ARM_S)
            await pilot.press("y")
            await wait_for(lambda: screen.queue == [], 20)
    finally:
        release.set()
    assert store.get(renamed).state == "approved"
    assert linking.read_text() != before and "[[Atlas]]" in linking.read_text()


async def test_a_rename_no_note_links_to_is_approved_once_the_keys_arm(tui_demo: Path):
    (tui_demo / "Inbox" / "Lonely scratch.md").write_text("# Lonely scratch\nnothing links here\n")
    renamed = propose_rename(tui_demo, "Inbox/Scratch.md", src="Inbox/Lonely scratch.md")
    clock = stepped()
    vault = open_loaded(tui_demo)
    app = make_app(vault, config=fixed_config(monotonic=lambda: clock.reference()[1]))
    store = pending.store_for(str(tui_demo.resolve()))
    async with app.run_test(size=(120, 40)) as pilot:
        # its links worked out (none) and shown
        await wait_for(lambda: "why:" in on_screen(app), 10)
        screen = app.screen
        await wait_for(lambda: WORKING.strip() not in body(screen), 10)
        await pilot.press("y")
        await settle(app)
        assert store.get(renamed).state == "pending"  # too soon
        clock.advance(ARM_S)
        await pilot.press("y")
        await wait_for(lambda: screen.queue == [], 10)
    assert store.get(renamed).state == "approved" and not told_to_wait(app)
    assert (tui_demo / "Inbox" / "Scratch.md").exists() and not (tui_demo / "Inbox" / "Lonely scratch.md").exists()


async def test_links_shown_over_an_older_vault_are_worked_out_again_before_y_approves(tui_demo: Path):
    """The index moved on after the rename's links were shown (another note changed): what
    approving would rewrite is worked out and shown again before `y` approves."""
    renamed = propose_rename(tui_demo, "Projects/Atlas.md")
    clock = stepped()
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(monotonic=lambda: clock.reference()[1]))
    store = pending.store_for(str(tui_demo.resolve()))
    async with app.run_test(size=(120, 60)) as pilot:
        await wait_for(lambda: "links rewritten in People/Ben Okafor.md" in on_screen(app), 10)
        screen = app.screen
        await wait_for(lambda: CHECKING not in body(screen), 10)  # the keys arm once this is said
        clock.advance(ARM_S)
        (tui_demo / "Inbox" / "unrelated.md").write_text("# Unrelated\n")
        vault.refresh_paths(["Inbox/unrelated.md"])  # a new generation of the index
        await pilot.press("y")
        await settle(app)
        assert not screen.busy and store.get(renamed).state == "pending" and told_to_wait(app)
        await wait_for(lambda: "links rewritten in People/Ben Okafor.md" in body(screen), 10)  # shown again
        await wait_for(lambda: WORKING.strip() not in body(screen) and CHECKING not in body(screen), 10)
        clock.advance(ARM_S)
        await pilot.press("y")
        await wait_for(lambda: screen.queue == [], 20)
    assert store.get(renamed).state == "approved"


def many_notes(root: Path, folder: str, count: int) -> list[str]:
    (root / folder).mkdir()
    for n in range(count):
        (root / folder / f"n{n}.md").write_text(f"# Note {n}\nbody {n}\n")
    return [f"{folder}/n{n}.md" for n in range(count)]


def held_stale(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[int, threading.Event], list[int]]:
    """The real staleness check of each change, once the test lets it go on (a big folder's
    hashing), on whichever thread calls it; returns each change's release and the ids asked."""
    gates: dict[int, threading.Event] = collections.defaultdict(threading.Event)
    asked: list[int] = []
    checked = pending_screen.proposal_stale

    def held(root_real, proposal, links=(), gate=None, vault=None):
        asked.append(proposal.id)
        gates[proposal.id].wait(TIMEOUT)
        return checked(root_real, proposal, links, gate, vault)

    monkeypatch.setattr(pending_screen, "proposal_stale", held)
    return gates, asked


def checking(app) -> int:
    """How many staleness checks are still running (a worker's answer is posted before it ends)."""
    return len([w for w in app.workers if w.group == "pending-stale" and w.is_running])


async def test_a_waiting_folder_rename_shows_at_once_and_says_later_whether_it_still_applies(
    tui_demo: Path, monkeypatch: pytest.MonkeyPatch
):
    """Whether a waiting change still applies hashes every file it touches (a folder's rename:
    every note in it): the screen shows the change at once, saying it is being checked, and the
    answer replaces that when it comes."""
    notes = many_notes(tui_demo, "Bulk", 300)
    renamed = propose_rename(tui_demo, "Archive/Bulk", src="Bulk")
    (tui_demo / notes[7]).write_text("# Note 7\nedited by the person since\n")
    gates, _asked = held_stale(monkeypatch)
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config())
    try:
        async with app.run_test(size=(120, 60)):
            # the UI thread is free while the check is held: the change and "checking" are shown
            await wait_for(lambda: CHECKING in on_screen(app), 10)
            screen = app.screen
            assert [p.id for p in screen.queue] == [renamed]
            assert "Bulk" in title(screen)
            gates[renamed].set()
            said = f"CANNOT BE APPROVED AS SHOWN: {notes[7]} changed since it was proposed"
            await wait_for(lambda: said in body(screen) and WORKING.strip() not in body(screen), 20)
            await wait_for(lambda: CHECKING not in body(screen), 10)
            assert said in body(screen), body(screen)
    finally:
        gates[renamed].set()


async def test_an_answer_for_a_change_no_longer_shown_is_dropped(tui_demo: Path, monkeypatch: pytest.MonkeyPatch):
    """The person moves on while a stale change is checked: its answer (it cannot apply) never
    marks the change shown meanwhile, which still can."""
    notes = many_notes(tui_demo, "Bulk", 50)
    renamed = propose_rename(tui_demo, "Archive/Bulk", src="Bulk")
    wrote = propose(tui_demo, "# Atlas\nrewritten by the bot\n")
    (tui_demo / notes[3]).write_text("# Note 3\nedited since\n")
    gates, asked = held_stale(monkeypatch)
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config())
    try:
        async with app.run_test(size=(120, 60)) as pilot:
            await wait_for(lambda: CHECKING in on_screen(app), 10)
            screen = app.screen
            assert [p.id for p in screen.queue] == [renamed, wrote]
            await wait_for(lambda: renamed in asked and WORKING.strip() not in body(screen), 10)
            await pilot.press("s")  # on to the write while the rename is still being checked
            await wait_for(lambda: "+rewritten by the bot" in body(screen) and wrote in asked, 10)
            gates[renamed].set()  # the rename's answers come while the write is shown
            await wait_for(lambda: checking(app) == 1, 20)
            await settle(app)
            shown = body(screen)
            assert "+rewritten by the bot" in shown and CHECKING in shown, shown
            assert "CANNOT BE APPROVED" not in shown, shown
            gates[wrote].set()
            await wait_for(lambda: CHECKING not in body(screen), 10)
            shown = body(screen)
            assert "+rewritten by the bot" in shown and "CANNOT BE APPROVED" not in shown, shown
    finally:
        for gate in (renamed, wrote):
            gates[gate].set()
