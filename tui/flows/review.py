"""Reviewing what agents change: the Changes view, a change's diff with one-key revert, and the
approval dialog of the approval gate (core.review.approval): this module wires them into the
app (the views are in tui/screens/changes.py, the dialog in tui/screens/approval.py).

The app mounts one `ReviewHost` (a hidden widget): it subscribes to the core bus, attends
the vault's approval gate (so agents' changes wait for this person instead of being declined)
and pushes an `ApprovalScreen` for each waiting change, one at a time. Everything it reads
comes from the change journal (core.review.journal); reverts run core.review.revert in a worker thread.

Keys: `C` opens the Changes view, `g` cycles the approval mode (none → writes → deletes),
enter on an agent's write in the activity panel opens that change's diff. In the Changes
view and a change's diff, `r` reverts the change, `R` reverts every change of its agent
(after a confirm); the Changes view lists interrupted operations first, and `f` there finishes
them. In the approval dialog, `y` approves, `n` declines, `d` declines with a reason, once the keys
have armed (a moment after it shows: tui.screens.arming).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.message import Message
from textual.widget import Widget

from vaultwatch.core.review import approval, rulefolders
from vaultwatch.core.review.agentrules import DEFAULT
from vaultwatch.core.review.approval import (
    ApprovalFinished,
    ApprovalModeChanged,
    ApprovalRequested,
    ApprovalSettled,
    Pending,
    RefusalKept,
    RuleFoldersChanged,
    RulesChanged,
)
from vaultwatch.core.review.journal import At, Change, ChangeRecorded, JournalUpdated, journal_for
from vaultwatch.tui.messages import LASTING_NOTICE_S
from vaultwatch.tui.screens.approval import QUICK, QUICK_GRACE_S, ApprovalScreen, render_pending
from vaultwatch.tui.screens.changes import (
    ChangeScreen,
    ChangesScreen,
    ConfirmScreen,
    ConflictScreen,
    VersionsScreen,
    render_change,
)
from vaultwatch.tui.screens.pending import PendingScreen, kept_count, waiting
from vaultwatch.tui.timers import once

if TYPE_CHECKING:
    from vaultwatch.core.events import Event

MODES_CYCLE = ("none", "writes", "deletes")
RULES_LOOK_S = 2.0  # s: how often the TUI looks whether the settings file changed (one stat)


# --- the host ---------------------------------------------------------------------------------


class ReviewHost(Widget):
    """Hidden: relays the bus's approval requests to dialogs and attends the approval gate."""

    DEFAULT_CSS = "ReviewHost { display: none; }"

    class Asked(Message):
        def __init__(self, pending: Pending) -> None:
            super().__init__()
            self.pending = pending

    class Recorded(Message):
        def __init__(self, change: Change) -> None:
            super().__init__()
            self.change = change

    class Updated(Message):
        """Another process committed to the journal."""

    class Refused(Message):
        """An agent's change was refused or declined and kept in the vault's record of them."""

    def __init__(self, vault: Any) -> None:
        super().__init__(id="review-host")
        self.vault = vault
        self.started: float | At = time.time()
        self._queue: deque[Pending] = deque()
        self._showing: ApprovalScreen | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._leave: Callable[[], None] | None = None
        self._kept = 0  # pending changes in the store (a dialog nobody answered in time, or kept with no TUI)

    @property
    def gate(self) -> approval.ApprovalGate | None:
        return approval.gate_for(self.vault)

    def on_mount(self) -> None:
        journal = journal_for(self.vault)
        if journal is not None:  # on the journal's own time: a stepped wall clock cannot move it
            self.started = At(journal.now())
        self._unsubscribe = self.vault.bus.subscribe(self._relay)
        gate = self.gate
        if gate is not None:
            self._leave = gate.attend()
            for pending in gate.pending():
                self.post_message(self.Asked(pending))
            self.show_gate()
            for notice in gate.rule_notices():  # a rule naming a folder the vault lacks, or covering nothing
                # stays until dismissed: the person may be looking at the pending screen as it comes
                self.app.notify(notice, severity="warning", title="settings", markup=False, timeout=LASTING_NOTICE_S)
        # the settings file edited while no agent writes: the status line and the agents' rules follow
        # it too (a decision reads it anyway; this is one stat now and then)
        self.set_interval(RULES_LOOK_S, self._look_at_rules, name="settings-file")
        kept = waiting(self.vault)  # changes agents proposed while no TUI was open
        self._kept = len(kept)
        self.show_gate()
        if kept:
            self.call_after_refresh(lambda: self.app.push_screen(PendingScreen(self.vault, kept)))

    def on_unmount(self) -> None:
        QUICK.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.hand_over()

    def hand_over(self) -> None:
        """The person leaves: the gate is no longer attended, and each change still waiting for a
        dialog is kept as a pending change, its agent told its id (core.review.approval), as it would
        have been with no TUI open. The app calls it before its MCP server stops, so that the agents'
        answers still go out."""
        leave, self._leave = self._leave, None
        if leave is not None:
            leave()

    class GateChanged(Message):
        pass

    class TimedOut(Message):
        def __init__(self, pending_id: int, reason: str) -> None:
            super().__init__()
            self.pending_id = pending_id
            self.reason = reason

    def on_review_host_timed_out(self, message: TimedOut) -> None:
        # the agent is told the same: nothing was declined, the change waits for the person
        self._count_kept()
        self.app.notify(
            f"{message.reason}: not applied; it waits as a pending change (P, or ctrl+p › Show pending changes)",
            title="approval",
            severity="warning",
            timeout=30,
        )

    class Finished(Message):
        def __init__(self, pending_id: int, failed: str = "") -> None:
            super().__init__()
            self.pending_id = pending_id
            self.failed = failed

    def _relay(self, event: Event) -> None:
        if isinstance(event, ApprovalFinished):
            self.post_message(self.Finished(event.id, event.failed))
        elif isinstance(event, ApprovalRequested):
            self.post_message(self.Asked(event.pending))
        elif isinstance(event, ChangeRecorded):
            self.post_message(self.Recorded(event.change))
        elif isinstance(event, JournalUpdated):
            self.post_message(self.Updated())
        elif isinstance(event, RefusalKept):
            self.post_message(self.Refused())
        elif isinstance(event, (ApprovalSettled, ApprovalModeChanged, RulesChanged, RuleFoldersChanged)):
            if isinstance(event, ApprovalSettled) and event.by == approval.TIMED_OUT:
                self.post_message(self.TimedOut(event.id, event.reason))
            self.post_message(self.GateChanged())

    def on_review_host_finished(self, message: Finished) -> None:
        if QUICK.active:  # the call's answer goes out right after this: quick handoffs a moment longer
            once(self.app, QUICK_GRACE_S, lambda: QUICK.stop(message.pending_id))
        showing = self._showing
        if showing is not None and showing.pending.id == message.pending_id and showing.decided:
            showing.close()
        if message.failed:  # approved, yet not applied: the person must not believe it was
            self.app.notify(
                f"you approved it, but it was not applied: {message.failed}",
                title="approval",
                severity="error",
                timeout=30,
            )

    def on_review_host_gate_changed(self, message: GateChanged) -> None:
        self.show_gate()
        main = getattr(self.app, "main", None)
        if main is not None:  # the agents' rules shown in the activity panel's title
            main.rules_changed()

    def _look_at_rules(self) -> None:
        gate = self.gate
        if gate is not None:
            gate.refresh()  # a change publishes RulesChanged: GateChanged redraws what shows the rules
        self._count_kept()

    class KeptCounted(Message):
        """How many pending changes the store holds, counted off the UI thread."""

        def __init__(self, count: int) -> None:
            super().__init__()
            self.count = count

    def _count_kept(self) -> None:
        """The status line's count follows the pending store: a change kept, or decided elsewhere
        (`vaultwatch decline`, the pending screen), changes it with no event of this process's bus.
        Counted in a worker: the store is SQLite another process may be writing, and this runs every
        RULES_LOOK_S whatever the person is doing."""
        self.run_worker(self._read_kept, thread=True, group="pending-count", exclusive=True, exit_on_error=False)

    def _read_kept(self) -> None:
        self.post_message(self.KeptCounted(kept_count(self.vault)))

    def on_review_host_kept_counted(self, message: KeptCounted) -> None:
        if message.count != self._kept:
            self._kept = message.count
            self.show_gate()

    def show_gate(self) -> None:
        """The status line's approval part: the mode and how many changes wait (nothing when off)."""
        gate = self.gate
        status = getattr(self.app, "status", None)
        if status is None:
            return
        now = gate.applied() if gate is not None else None  # one reading of the settings file for the part
        if now is not None and now.problem is not None:
            status.set_part("approval", Text(f"{now.problem_brief}: agents' changes refused", style="bold red"))
            return
        if (
            gate is None
            or now is None
            or (
                now.mode == "none"
                and not now.folders
                and not now.own_modes()
                and not gate.pending()
                and not self._kept
                and not gate.folders_gone()
            )
        ):
            status.set_part("approval", None)
            return
        waiting = len(gate.pending()) + self._kept
        # an agent's own mode replaces the vault's: the status line names who the mode shown does not cover
        own = ", ".join(f"{'others' if name == DEFAULT else name}: {mode}" for name, mode in now.own_modes())
        text = Text(
            f"approve: {now.mode}" + (f" ({own})" if own else "") + (" + folder rules" if now.folders else ""),
            style="bold yellow",
        )
        nevers = now.nevers()
        if nevers:  # refused to every agent, whatever the mode: the status line names them
            text.append(" · never: ", style="bold yellow")
            for i, pattern in enumerate(nevers):
                text.append(", " if i else "", style="bold yellow")
                text.append(pattern, style="bold yellow")
                if gate.matches_nothing(pattern):  # its folder went: it promises nothing while it lasts
                    text.append(" (no such folder)", style="bold red")
        said = {gate.form.key(rulefolders.literal_folder(p) or "") for p in nevers if gate.matches_nothing(p)}
        others = [folder for folder in gate.folders_gone() if gate.form.key(folder) not in said]
        if others:  # another rule (a mode, an agent's folders) matches nothing: said while it lasts
            text.append(f" · rules name missing folders: {', '.join(others)}", style="bold red")
        if waiting:
            text.append(f" · {waiting} waiting", style="bold red")
        status.set_part("approval", text, compact=self._compact_gate(now.mode, nevers, others, waiting))

    def _compact_gate(self, mode: str, nevers: tuple[str, ...], others: list[str], waiting: int) -> Text:
        """The approval part where the whole line does not fit: what asks the person to act comes
        first (the changes waiting, a rule whose folder is missing), so that the line's cut at its
        end takes the promises that still hold, not the warnings."""
        gate = self.gate
        text = Text(f"approve: {mode}", style="bold yellow")
        if waiting:
            text.append(f" · {waiting} waiting", style="bold red")
        gone = [p for p in nevers if gate is not None and gate.matches_nothing(p)]
        missing = [rulefolders.literal_folder(p) or p for p in gone] + others
        if missing:
            text.append(f" · missing folders: {', '.join(missing)}", style="bold red")
        held = [p for p in nevers if p not in gone]
        if held:
            text.append(f" · never: {', '.join(held)}", style="bold yellow")
        return text

    def on_review_host_asked(self, message: Asked) -> None:
        self._queue.append(message.pending)
        self.show_gate()
        self._next()

    def on_review_host_recorded(self, message: Recorded) -> None:
        main = getattr(self.app, "main", None)
        if main is not None and message.change.agent is not None:
            # the change is in the journal now (its note was re-listed before): the Trust tab follows it
            main.refresh_views()
        screen = self.app.screen
        if isinstance(screen, ChangesScreen):
            screen.reload()

    def on_review_host_refused(self, message: Refused) -> None:
        # the refusals view reads the record again, under a dialog too (a decline closes the dialog
        # that covered it, and the person looks at the view again)
        from vaultwatch.tui.screens.refusals import RefusalsScreen  # noqa: PLC0415  (loads when first opened)

        for screen in self.app.screen_stack:
            if isinstance(screen, RefusalsScreen):
                screen.reload()

    def on_review_host_updated(self, message: Updated) -> None:
        # `vaultwatch changes --mark-reviewed` from a shell moves notes between the Trust tiers and
        # changes the Changes view's rows without adding one: both read the journal again
        main = getattr(self.app, "main", None)
        if main is not None:
            main.refresh_views()
        screen = self.app.screen
        if isinstance(screen, ChangesScreen):
            screen.reload()

    def _next(self) -> None:
        if self._showing is not None and self._showing.is_attached:
            return
        self._showing = None
        while self._queue:
            pending = self._queue.popleft()
            if pending.settled or self.gate is None:
                continue
            self._showing = ApprovalScreen(self.gate, pending)
            self.app.push_screen(self._showing, lambda _: self._done())
            return

    def _done(self) -> None:
        self._showing = None
        self.call_after_refresh(self._next)


def quit_question(app: Any) -> str | None:
    """What to ask before quitting while agents' changes wait in dialogs (None: nothing waits)."""
    gate = approval.gate_for(app.session.vault)
    waiting = len(gate.pending()) if gate is not None else 0
    if not waiting:
        return None
    what = "1 change waits" if waiting == 1 else f"{waiting} changes wait"
    them = "it" if waiting == 1 else "each"
    return (
        f"{what} for your approval: quit anyway? Nothing is applied: {them} will wait as a pending change "
        "(`vaultwatch pending`, `vaultwatch approve ID`; listed when vaultwatch opens again), and the agent "
        "is told its id."
    )


def hand_over(app: Any) -> None:
    """Before the app's MCP server stops: every change waiting in a dialog becomes a pending change."""
    for host in app.query(ReviewHost):
        host.hand_over()


def open_changes(app: Any) -> None:
    """`C`: the Changes view (this session's changes first)."""
    host = app.query_one(ReviewHost)
    app.push_screen(ChangesScreen(host.started))


def open_pending(app: Any) -> None:
    """`P` (or the palette): the pending changes, kept for the person (a dialog nobody answered in
    time, a change made while no TUI was open), at any time, not only when vaultwatch opens."""
    if isinstance(app.screen, PendingScreen):
        return
    app.push_screen(PendingScreen(app.session.vault, waiting(app.session.vault)))


def open_call(app: Any, event: Any) -> bool:
    """Enter on an activity row: the diff of the changes that call made (False: it made none)."""
    ids = tuple(getattr(event, "change_ids", ()) or ())
    if not ids:
        return False
    app.push_screen(ChangeScreen(ids))
    return True


def follow_changes(app: Any, events: Any, agent: str | None) -> bool:
    """Follow mode: the followed agent's newest change shows as a diff (a ChangeScreen that
    keeps following it). From the main screen only: a dialog or another view is left alone."""
    latest = next((e for e in reversed(events) if getattr(e, "change_ids", ()) and agent in (None, e.agent)), None)
    if latest is None:
        return False
    screen = app.screen
    if isinstance(screen, ChangeScreen) and screen.following is not None:
        screen.following = latest.agent
        screen.follow(tuple(latest.change_ids))
        return True
    if screen is getattr(app, "main", None):
        app.push_screen(ChangeScreen(tuple(latest.change_ids), following=latest.agent))
        return True
    return False


def cycle_mode(app: Any) -> None:
    """`g`: the vault's approval mode none → writes → deletes → none. An agent with an approval mode
    of its own keeps it (the person chose it for that agent): the notice and the status line name
    those agents, so the mode never reads as covering more than it does."""
    gate = approval.gate_for(app.session.vault)
    if gate is None:
        gate = approval.ApprovalGate("none", bus=app.session.vault.bus)
        approval.attach(app.session.vault, gate)
        app.query_one(ReviewHost)._leave = gate.attend()
    mode = MODES_CYCLE[(MODES_CYCLE.index(gate.mode) + 1) % len(MODES_CYCLE)]
    gate.set_mode(mode)
    app.query_one(ReviewHost).show_gate()
    app.notify(f"approval: {mode} ({gate.applied().mode_said()})", title="approval mode", markup=False)


__all__ = [
    "ApprovalScreen",
    "ChangeScreen",
    "ChangesScreen",
    "ConfirmScreen",
    "ConflictScreen",
    "ReviewHost",
    "open_pending",
    "VersionsScreen",
    "cycle_mode",
    "follow_changes",
    "hand_over",
    "open_call",
    "open_changes",
    "quit_question",
    "render_change",
    "render_pending",
]
