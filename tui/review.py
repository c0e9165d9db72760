"""Reviewing what agents change: the Changes view, a change's diff with one-key revert, and the
approval dialog of the approval gate (core.review.approval).

The app mounts one `ReviewHost` (a hidden widget): it subscribes to the core bus, attends
the vault's approval gate (so agents' changes wait for this person instead of being declined)
and pushes an `ApprovalScreen` for each waiting change, one at a time. Everything it reads
comes from the change journal (core.review.journal); reverts run core.review.revert in a worker thread.

Keys: `C` opens the Changes view, `g` cycles the approval mode (none → writes → deletes),
enter on an agent's write in the activity panel opens that change's diff. In the Changes
view and a change's diff, `r` reverts the change, `R` reverts every change of its agent
(after a confirm). In the approval dialog, `y` approves, `n` denies, `d` denies with a reason.
"""
from __future__ import annotations

import datetime as dt
import time
from collections import deque
from typing import Any, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Input, Static

from core.edit.writes import Writer
from core.review import approval
from core.review.approval import ApprovalFinished, ApprovalModeChanged, ApprovalRequested, ApprovalSettled, Pending
from core.errors import VaultError
from core.review.journal import Change, ChangeRecorded, journal_for, parse_since
from core.review.revert import RevertRefused, revert, revert_agent

from .diffview import DiffDoc, DiffView, Piece, render_diff, render_files

MODES_CYCLE = ("none", "writes", "deletes")
FINISH_WAIT = 0.5  # s: the approval dialog closes at the latest this long after the decision


def _actor(app: Any) -> str:
    try:
        return app.actions.actor
    except Exception:  # an app without the triage actions (tests): still the person
        return "human"


def _when(at: float, localtime=time.localtime) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", localtime(at))


def change_title(change: Change, localtime=time.localtime) -> Text:
    """The header of one change: id, who, when, tool, summary, revert state."""
    text = Text()
    text.append(f"change {change.id}", style="bold")
    text.append(f"  {change.who}", style="bold magenta")
    if change.session:
        text.append(f" [{change.session[:12]}]", style="dim")
    text.append(f"  {_when(change.at, localtime)}  ", style="dim")
    text.append(change.tool, style="bold")
    text.append(f"  {change.summary}")
    if change.reverted_by is not None:
        text.append(f"  (reverted by change {change.reverted_by})", style="yellow")
    if change.revert_of is not None:
        text.append(f"  (reverts change {change.revert_of})", style="yellow")
    return text


def render_change(journal: Any, change: Change, width: int, localtime=time.localtime) -> RenderableType:
    """A journaled change as the person reads it: the move of a rename, then each file's diff."""
    lead: list[RenderableType] = []
    if change.kind == "outside":
        lead.append(Text("\nchanged outside vaultwatch: the journal has no before-state for these paths\n"
                         + "\n".join(f"  {p}" for p in change.paths[:50]), style="italic"))
    if change.operation == "rename" and change.src:
        move = Text("\n")
        move.append("moved ", style="bold")
        move.append(change.src, style="red")
        move.append(" → ")
        move.append(change.path, style="green")
        links = [f for f in change.files if f.role == "links"]
        move.append(f"\nrewrote links in {len(links)} note{'s' if len(links) != 1 else ''}", style="dim")
        lead.append(move)
    if change.operation == "delete":
        lead.append(Text(f"\ndeleted {change.path}" + (f" (moved to {change.moved_to})" if change.moved_to else
                                                       " permanently"), style="bold red"))
    files = []
    for f in change.files:
        before, after = journal.contents(change.id, f.seq)
        if change.operation == "delete" and f.role == "target":
            continue
        files.append((f.path, f.role, before, after))
    return render_files(change_title(change, localtime), files, width, lead)


def render_pending(pending: Pending, width: int, now: float) -> DiffDoc:
    """A waiting change: its title with the time left (the doc's first piece), then its diff."""
    title = pending_title(pending, now)
    if pending.operation in ("rename",):
        return render_files(title, [], width, [Text("\nthe note moves; links to it across the vault will be "
                                                    "rewritten", style="italic")])
    if pending.operation == "delete":
        body: RenderableType = render_diff(pending.before, None, width) if pending.before is not None else Text("")
        return render_files(title, [], width, [Text("\nthe file goes to the trash", style="italic red"), body])
    return render_files(title, [(pending.path, "target", pending.before, pending.after)], width)


def pending_title(pending: Pending, now: float) -> Text:
    title = Text()
    title.append(pending.agent or pending.actor, style="bold magenta")
    title.append(" wants to ")
    title.append(pending.operation, style="bold")
    title.append(f" {pending.path}", style="bold underline")
    if pending.dest:
        title.append(" → ")
        title.append(pending.dest, style="bold underline green")
    title.append(f"\n{pending.remaining(now):.0f} s left: ", style="dim")
    title.append("y", style="bold reverse")
    title.append(" approve  ", style="dim")
    title.append("n", style="bold reverse")
    title.append(" deny  ", style="dim")
    title.append("d", style="bold reverse")
    title.append(" deny with a reason", style="dim")
    return title


# --- dialogs ---------------------------------------------------------------------------------

class ConfirmScreen(ModalScreen[bool]):
    """y / enter confirms, n / escape cancels."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 70; height: auto; padding: 1 2; border: round $warning; background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self):
        with Vertical():
            yield Static(Text(self.question, style="bold"))
            yield Static(Text("y: yes   n: no", style="dim"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class VersionsScreen(ModalScreen[None]):
    """Why a revert was refused, and the three versions side by side: before, written, now."""

    DEFAULT_CSS = """
    VersionsScreen { align: center middle; }
    VersionsScreen > Vertical { width: 95%; height: 90%; border: round $error; background: $surface; padding: 0 1; }
    VersionsScreen #versions { height: 1fr; }
    VersionsScreen .version { width: 1fr; border-right: vkey $foreground 20%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,enter", "close", "Close", id="versions.close")]

    def __init__(self, refused: RevertRefused) -> None:
        super().__init__()
        self.refused = refused

    def compose(self):
        with Vertical():
            yield Static(Text(self.refused.message, style="bold red"), id="versions-reason")
            if self.refused.path:
                with Horizontal(id="versions"):
                    for name, data in self.refused.versions.items():
                        label = {"before": "before the change", "written": "what the change wrote",
                                 "current": "now"}[name]
                        with VerticalScroll(classes="version"):
                            yield Static(Text(label, style="bold underline"))
                            yield Static(Text("(absent)", style="italic") if data is None
                                         else Text(data.decode("utf-8", "replace")))

    def action_close(self) -> None:
        self.dismiss(None)


class _Reverting:
    """Revert actions shared by the Changes view and a change's diff."""

    app: Any

    def _journal(self):
        return journal_for(self.app.session.vault)

    def revert_change(self, change: Change) -> None:
        vault = self.app.session.vault
        actor = _actor(self.app)

        def work() -> None:
            journal = journal_for(vault)
            try:
                outcome = revert(Writer(vault), journal, change.id, actor=actor)
            except RevertRefused as exc:
                self.app.call_from_thread(self._refused, exc)
                return
            except Exception as exc:  # a write error: say it, lose nothing
                self.app.call_from_thread(self.app.notify, str(exc), severity="error", title="revert")
                return
            self.app.call_from_thread(self._reverted, f"reverted change {change.id}: {outcome.revert.summary}")

        self.app.run_worker(work, thread=True, group="revert", exit_on_error=False, description="revert")

    def revert_all(self, change: Change) -> None:
        agent = change.agent
        if not agent:
            self.app.notify("this change was not made by an agent", severity="warning", title="revert")
            return
        vault = self.app.session.vault
        actor = _actor(self.app)
        count = len([c for c in self._journal().changes(agent=agent, kinds=("change",)) if c.reverted_by is None])

        def answered(yes: bool | None) -> None:
            if not yes:
                return

            def work() -> None:
                outcome = revert_agent(Writer(vault), journal_for(vault), agent, actor=actor)
                message = f"reverted {len(outcome.reverted)} change(s) of {agent}"
                if outcome.refused:
                    message += f"; {len(outcome.refused)} refused: " + "; ".join(m for _, m in outcome.refused[:3])
                self.app.call_from_thread(self._reverted, message, bool(outcome.refused))

            self.app.run_worker(work, thread=True, group="revert", exit_on_error=False, description="revert all")

        self.app.push_screen(ConfirmScreen(f"Revert all {count} change(s) of {agent} not reverted yet, newest "
                                           "first? Changes edited since are left alone and listed."), answered)

    def _refused(self, exc: RevertRefused) -> None:
        self.app.notify(exc.message, severity="error", title="not reverted", timeout=8)
        self.app.push_screen(VersionsScreen(exc))

    def _reverted(self, message: str, warn: bool = False) -> None:
        self.app.notify(message, severity="warning" if warn else "information", title="revert")
        self.reload()

    def reload(self) -> None:  # overridden
        pass


class ChangeScreen(Screen[None], _Reverting):
    """The diff of one or more changes (an agent's call), with r / R to revert."""

    DEFAULT_CSS = """
    ChangeScreen #change-help { height: 1; background: $panel; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="change.close"),
        Binding("r", "revert", "Revert", id="change.revert"),
        Binding("R", "revert_all", "Revert all of this agent", id="change.revert_all"),
        Binding("f", "unfollow", "Stop following", id="change.unfollow"),
    ]

    def __init__(self, change_ids: tuple[int, ...], *, following: str | None = None) -> None:
        super().__init__()
        self.change_ids = change_ids
        self.following = following  # an agent whose newest change this view shows (follow mode)

    def compose(self):
        yield Static(self._help(), id="change-help")
        yield DiffView(id="change-diff")
        yield Footer()

    def _help(self) -> Text:
        text = Text()
        if self.following:
            text.append(f"following {self.following}: its newest change  ", style="bold reverse")
            text.append(" f: stop following   ", style="dim")
        text.append("r: revert   R: revert all of this agent   escape: back", style="dim")
        return text

    def follow(self, change_ids: tuple[int, ...]) -> None:
        """The followed agent changed something again: show that change."""
        self.change_ids = change_ids
        self.reload()

    def action_unfollow(self) -> None:
        """f: stop following (the main screen's follow mode too) and go back."""
        self.following = None
        main = getattr(self.app, "main", None)
        panel = getattr(main, "_activity_panel", None)
        if panel is not None and panel.following:
            main.action_toggle_follow()
        self.dismiss(None)

    def on_mount(self) -> None:
        self.reload()

    def changes(self) -> list[Change]:
        journal = self._journal()
        out = []
        for cid in self.change_ids:
            try:
                out.append(journal.get(cid))
            except Exception:
                continue
        return out

    def reload(self) -> None:
        journal = self._journal()
        width = self.app.size.width
        changes = self.changes()
        body: RenderableType = Text("the journal no longer holds this change", style="italic")
        if changes:
            body = DiffDoc()
            for c in changes:
                body.add(render_change(journal, c, width, self.app.config.localtime))
        self.query_one(DiffView).show(body)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_revert(self) -> None:
        for change in reversed(self.changes()):
            self.revert_change(change)

    def action_revert_all(self) -> None:
        changes = self.changes()
        if changes:
            self.revert_all(changes[0])


class ChangesScreen(Screen[None], _Reverting):
    """Every journaled change of this session (or all), per note and per agent, with its diff."""

    DEFAULT_CSS = """
    ChangesScreen #changes-title { height: 1; background: $panel; padding: 0 1; }
    ChangesScreen #changes-table { height: 40%; }
    ChangesScreen #changes-diff { border-top: hkey $foreground 20%; }
    ChangesScreen #changes-since { display: none; }
    ChangesScreen.-since #changes-since { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="changes.close"),
        Binding("r", "revert", "Revert", id="changes.revert"),
        Binding("R", "revert_all", "Revert all of this agent", id="changes.revert_all"),
        Binding("n", "by_note", "This note only", id="changes.note"),
        Binding("w", "by_agent", "This agent only", id="changes.agent"),
        Binding("t", "toggle_since", "Session / all", id="changes.since"),
        Binding("s", "ask_since", "Since…", id="changes.since_time"),
    ]

    def __init__(self, since: float | None) -> None:
        super().__init__()
        self.session_since = since
        self.since: float | None = since
        self.note: str | None = None
        self.agent: str | None = None
        self.rows: list[Change] = []

    def compose(self):
        yield Static(id="changes-title")
        table = DataTable(id="changes-table", cursor_type="row", zebra_stripes=False)
        yield table
        yield DiffView(id="changes-diff")
        yield Input(placeholder="since when? 30m, 2h, 1d, 2026-12-01 or 2026-12-01T09:00 (enter applies, escape "
                                "goes back)", id="changes-since")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "time", "who", "tool", "path", "summary", "state")
        self.reload()
        table.focus()

    def reload(self) -> None:
        journal = self._journal()
        table = self.query_one(DataTable)
        keep = table.cursor_row if self.rows else 0
        self.rows = journal.changes(agent=self.agent, since=self.since, path=self.note, limit=2000) if journal else []
        table.clear()
        localtime = self.app.config.localtime
        for c in self.rows:
            where = f"{c.src} → {c.path}" if c.src else c.path
            state = (f"reverted by {c.reverted_by}" if c.reverted_by is not None
                     else f"reverts {c.revert_of}" if c.revert_of is not None else "")
            table.add_row(str(c.id), time.strftime("%H:%M:%S", localtime(c.at)), c.who, c.tool, where, c.summary,
                          state, key=str(c.id))
        title = Text("Changes", style="bold")
        scope = "this session" if self.since is not None and self.since == self.session_since else (
            "all journaled" if self.since is None else "since " + _when(self.since, localtime))
        title.append(f"  {len(self.rows)} · {scope}", style="dim")
        if self.note:
            title.append(f" · note {self.note}", style="dim")
        if self.agent:
            title.append(f" · agent {self.agent}", style="dim")
        title.append("   r revert · R revert all of agent · n note · w agent · t session/all · s since…", style="dim")
        self.query_one("#changes-title", Static).update(title)
        if self.rows:
            table.move_cursor(row=min(keep, len(self.rows) - 1))
            self._show(self.rows[min(keep, len(self.rows) - 1)])
        else:
            self.query_one(DiffView).show(Text("no changes journaled" + (" in this session" if self.since else ""),
                                               style="italic dim"))

    def selected(self) -> Change | None:
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row is None or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def _show(self, change: Change) -> None:
        self.query_one(DiffView).show(render_change(self._journal(), change, self.app.size.width,
                                                    self.app.config.localtime))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        change = self.selected()
        if change is not None:
            self._show(change)

    def action_close(self) -> None:
        if self.has_class("-since"):  # typing a time: escape goes back to the list, not out of the view
            self._close_since()
            return
        self.dismiss(None)

    def action_revert(self) -> None:
        change = self.selected()
        if change is not None:
            self.revert_change(change)

    def action_revert_all(self) -> None:
        change = self.selected()
        if change is not None:
            self.revert_all(change)

    def action_by_note(self) -> None:
        change = self.selected()
        self.note = None if self.note or change is None else change.path
        self.reload()

    def action_by_agent(self) -> None:
        change = self.selected()
        self.agent = None if self.agent or change is None else change.agent
        self.reload()

    def action_toggle_since(self) -> None:
        self.since = None if self.since is not None else self.session_since
        self.reload()

    def action_ask_since(self) -> None:
        """s: only the changes since a time (as `vaultwatch changes --since`)."""
        self.set_class(True, "-since")
        self.query_one("#changes-since", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            since = parse_since(event.value, self.app.session.vault.clock.now())
        except VaultError as exc:
            self.app.notify(exc.message, severity="error", title="since")
            return
        self.since = since
        self._close_since()
        self.reload()

    def _close_since(self) -> None:
        self.set_class(False, "-since")
        self.query_one("#changes-since", Input).value = ""
        self.query_one(DataTable).focus()



class ApprovalScreen(ModalScreen[None]):
    """One waiting change: its diff, the time left, y approve / n deny / d deny with a reason."""

    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical { width: 95%; height: 90%; border: thick $warning; background: $surface; padding: 0 1; }
    ApprovalScreen #approval-reason { display: none; }
    ApprovalScreen.-reason #approval-reason { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "approve", "Approve", id="approval.approve"),
        Binding("n", "deny", "Deny", id="approval.deny"),
        Binding("d", "deny_with_reason", "Deny with a reason", id="approval.reason"),
    ]

    def __init__(self, gate: approval.ApprovalGate, pending: Pending) -> None:
        super().__init__()
        self.gate = gate
        self.pending = pending

    def compose(self):
        with Vertical():
            yield DiffView(id="approval-diff")
            yield Input(placeholder="why not? (enter sends, escape goes back)", id="approval-reason")

    decided = False  # the person answered; the dialog stays until the call has finished (see _answer)

    def on_mount(self) -> None:
        self._draw()
        self.set_interval(1.0, self._tick)

    def _draw(self) -> None:
        self._doc = render_pending(self.pending, self.app.size.width, time.monotonic())
        self.query_one(DiffView).show(self._doc)

    def _tick(self) -> None:
        if self.pending.settled and not self.decided:
            self.dismiss(None)
            return
        if not self.decided:  # the time left: the title only, the diff and the scroll position stay
            self._doc.pieces[0] = Piece(pending_title(self.pending, time.monotonic()))
            self.query_one(DiffView).show(self._doc, keep_scroll=True)

    def _answer(self, approved: bool, reason: str = "") -> None:
        """Decide, let agents' calls go on at once (the person's key is answered), and close the
        dialog when the call has finished (ApprovalFinished) or after FINISH_WAIT: closing it
        repaints the screen below, which would otherwise run in the same moments as the write."""
        if self.decided:
            return
        self.decided = True
        self.gate.decide(self.pending.id, approved, reason)
        release = getattr(getattr(self.app, "session", None), "vault", None)
        if release is not None:
            release.foreground.release()
        self.set_timer(FINISH_WAIT, self.close)

    def close(self) -> None:
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)

    def action_approve(self) -> None:
        self._answer(True)

    def action_deny(self) -> None:
        self._answer(False, "")

    def action_deny_with_reason(self) -> None:
        if self.decided:
            return
        self.set_class(True, "-reason")
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._answer(False, event.value)

    def key_escape(self) -> None:
        if self.has_class("-reason"):
            self.set_class(False, "-reason")
            self.focus()


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

    def __init__(self, vault: Any) -> None:
        super().__init__(id="review-host")
        self.vault = vault
        self.started = time.time()
        self._queue: deque[Pending] = deque()
        self._showing: ApprovalScreen | None = None
        self._unsubscribe = None
        self._leave = None

    @property
    def gate(self) -> approval.ApprovalGate | None:
        return approval.gate_for(self.vault)

    def on_mount(self) -> None:
        journal = journal_for(self.vault)
        if journal is not None:
            self.started = journal._clock()
        self._unsubscribe = self.vault.bus.subscribe(self._relay)
        gate = self.gate
        if gate is not None:
            self._leave = gate.attend()
            for pending in gate.pending():
                self.post_message(self.Asked(pending))
            self.show_gate()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._leave is not None:
            self._leave()

    class GateChanged(Message):
        pass

    class Finished(Message):
        def __init__(self, pending_id: int) -> None:
            super().__init__()
            self.pending_id = pending_id

    def _relay(self, event) -> None:
        if isinstance(event, ApprovalFinished):
            self.post_message(self.Finished(event.id))
        elif isinstance(event, ApprovalRequested):
            self.post_message(self.Asked(event.pending))
        elif isinstance(event, ChangeRecorded):
            self.post_message(self.Recorded(event.change))
        elif isinstance(event, (ApprovalSettled, ApprovalModeChanged)):
            self.post_message(self.GateChanged())

    def on_review_host_finished(self, message: Finished) -> None:
        showing = self._showing
        if showing is not None and showing.pending.id == message.pending_id and showing.decided:
            showing.close()

    def on_review_host_gate_changed(self, message: GateChanged) -> None:
        self.show_gate()

    def show_gate(self) -> None:
        """The status line's approval part: the mode and how many changes wait (nothing when off)."""
        gate = self.gate
        status = getattr(self.app, "status", None)
        if status is None:
            return
        if gate is None or (gate.mode == "none" and not gate.folders and not gate.pending()):
            status.set_part("approval", None)
            return
        waiting = len(gate.pending())
        text = Text(f"approve: {gate.mode}" + (" + folder rules" if gate.folders else ""), style="bold yellow")
        if waiting:
            text.append(f" · {waiting} waiting", style="bold red")
        status.set_part("approval", text)

    def on_review_host_asked(self, message: Asked) -> None:
        self._queue.append(message.pending)
        self.show_gate()
        self._next()

    def on_review_host_recorded(self, message: Recorded) -> None:
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


def open_changes(app: Any) -> None:
    """`C`: the Changes view (this session's changes first)."""
    host = app.query_one(ReviewHost)
    app.push_screen(ChangesScreen(host.started))


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
    """`g`: approval mode none → writes → deletes → none (agents' writes wait for this person)."""
    gate = approval.gate_for(app.session.vault)
    if gate is None:
        gate = approval.ApprovalGate("none", bus=app.session.vault.bus)
        approval.attach(app.session.vault, gate)
        app.query_one(ReviewHost)._leave = gate.attend()
    mode = MODES_CYCLE[(MODES_CYCLE.index(gate.mode) + 1) % len(MODES_CYCLE)]
    gate.set_mode(mode)
    app.query_one(ReviewHost).show_gate()
    what = {"none": "agents' changes go through without asking",
            "writes": "every agent write waits for your approval",
            "deletes": "agents' deletes wait for your approval"}[mode]
    app.notify(f"approval: {mode} ({what})", title="approval mode")


__all__ = ["ApprovalScreen", "ChangeScreen", "ChangesScreen", "ConfirmScreen", "ReviewHost", "VersionsScreen",
           "cycle_mode", "follow_changes", "open_call", "open_changes", "render_change", "render_pending"]
