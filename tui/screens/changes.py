"""The Changes view and one change's diff (tui/flows/review.py wires them in): the change journal
(core.review.journal) as the person reads it, with one-key revert (core.review.revert, run in
a worker thread), revert of all of one agent's changes after a confirm, and the three versions
when a revert is refused.

Keys: in the Changes view and a change's diff, `r` reverts the change, `R` reverts every change
of its agent (after a confirm); the Changes view groups by note or agent and filters since a time;
`m` marks the selected change reviewed, `M` every change the view shows (the journal keeps
unreviewed changes and, when they fill it, refuses agents' writes: the title says so); `x` lists
the agents' changes that did not happen (tui.screens.refusals).

Above the changes, the Changes view lists the journal's open intents (core.review.intents): an
operation that started and was never recorded, because its process was killed (INTERRUPTED) or
still runs (under way). Such a row is not a change: the change keys say so on it, and `f`
finishes every interrupted one now (core.review.resume, in a worker thread), as a start would.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, ClassVar

from rich import box
from rich.cells import cell_len, set_cell_size
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Static

from vaultwatch.core.edit.hooks import APPROVED_BY_CLIENT, is_person
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import changestate, sessionids
from vaultwatch.core.review.agentrules import shown_agent
from vaultwatch.core.review.batch import revert_session, session_changes
from vaultwatch.core.review.intents import OpenIntent, open_intents
from vaultwatch.core.review.journal import (
    At,
    Change,
    Journal,
    Within,
    journal_for,
    parse_since,
    require_journal,
    why_no_journal,
)
from vaultwatch.core.review.merge import regions
from vaultwatch.core.review.redo import redo
from vaultwatch.core.review.revert import (
    NO_RECORD,
    NOT_THERE,
    RevertRefused,
    later_edit,
    merge_revert,
    revert,
    revert_agent,
    revert_anyway,
)
from vaultwatch.core.review.visible import visible
from vaultwatch.tui.widgets.diffview import DiffDoc, DiffView, render_files
from vaultwatch.tui.widgets.spans import tidy

if TYPE_CHECKING:
    from vaultwatch.core.vault import Vault
    from vaultwatch.tui.app import VaultwatchApp


def _journal_of(vault: Vault) -> Journal:
    """The vault's journal: a VaultError, shown as the action's error, when there is none (switched
    off, or it cannot be opened: the error says which)."""
    return require_journal(vault)


def _actor(app: Any) -> str:
    try:
        return app.actions.actor
    except Exception:  # an app without the triage actions (tests): still the person
        return "human"


def _when(at: float, localtime: Callable[[float], time.struct_time] = time.localtime) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", localtime(at))


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def intent_state(intent: OpenIntent) -> str:
    """The state column of an open intent's row."""
    if intent.running:
        return f"under way (process {intent.process})" if intent.process is not None else "under way"
    return "INTERRUPTED — f finishes it"


def render_intent(
    intent: OpenIntent, localtime: Callable[[float], time.struct_time] = time.localtime
) -> RenderableType:
    """An open intent as the person reads it in the lower pane: what it was doing, what finishing
    it does and how (core.review.intents words all three)."""
    text = Text()
    if intent.running:
        text.append("operation under way", style="bold yellow")
        text.append(" (not a change yet: its process has not recorded it)\n")
    else:
        text.append("INTERRUPTED operation", style="bold red")
        text.append(" (not a change yet: its process was stopped before it recorded it)\n")
    text.append(f"{intent.actor}", style="bold magenta")
    text.append(f"  {_when(intent.at, localtime)}  ", style="dim")
    text.append(intent.operation, style="bold")
    if intent.process is not None:
        text.append(f"  process {intent.process}", style="dim")
    text.append("\n\n")
    for label, body in (
        ("what it was doing", intent.summary),
        ("paths", ", ".join(intent.paths) or "-"),
        ("finishing it", intent.will),
        ("how", intent.finish if intent.running else f"f here finishes it now; or {intent.finish}"),
    ):
        text.append(f"{label}: ", style="bold")
        text.append(f"{body}\n")
    return text


def change_title(
    change: Change,
    localtime: Callable[[float], time.struct_time] = time.localtime,
    session: str | None = None,
    state: str | None = None,
) -> Text:
    """The header of one change: id, who (and `session`, its session as shown: sessionids), when,
    tool, summary, revert state, how it was approved."""
    text = Text()
    text.append(f"change {change.id}", style="bold")
    text.append(f"  {change.who}", style="bold magenta")
    if change.session:
        text.append(f" [{session or change.session}]", style="dim")
    text.append(f"  {_when(change.at, localtime)}  ", style="dim")
    text.append(change.tool, style="bold")
    text.append(f"  {change.summary}")
    if state is None:  # (no journal to follow a redo with: the row's own words)
        state = changestate.state_said(change, changestate.lookup(None))
    if state:
        text.append(f"  ({state})", style="yellow")
    if change.approval:  # an answer through the agent's own client is only as trustworthy as that client
        text.append(f"  ({change.approval})", style="yellow" if change.approved_via == APPROVED_BY_CLIENT else "dim")
    return text


def render_change(
    journal: Any, change: Change, width: int, localtime: Callable[[float], time.struct_time] = time.localtime
) -> RenderableType:
    """A journaled change as the person reads it: the move of a rename, then each file's diff."""
    lead: list[RenderableType] = []
    if change.kind == "outside":
        # a moved folder's files are listed once, at their new place (the summary names the move)
        olds = [str(pair[0]) for pair in change.arguments.get("moved", ()) if pair]
        paths = [p for p in change.paths if not any(p == o or p.startswith(o + "/") for o in olds)]
        lead.append(
            Text(
                "\nchanged outside vaultwatch: the journal has no before-state for these paths\n"
                + "\n".join(f"  {p}" for p in paths[:50]),
                style="italic",
            )
        )
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
        lead.append(
            Text(
                f"\ndeleted {change.path}"
                + (f" (moved to {change.moved_to})" if change.moved_to else " for good (not to the trash)"),
                style="bold red",
            )
        )
    found = journal.whereabouts([change]).get(change.id)
    now_at = found.path if found is not None and found.there else None
    said = found.words(change.path) if found is not None and not found.there else None
    if said:  # not where the journal left it: revert refuses, and says what to do
        lead.append(Text(f"\n{said}", style="bold"))
    if now_at:
        # a rename's revert is a move back, which would undo the later move too: it is refused there
        there = "move it back to revert it" if change.operation == "rename" else "r reverts it there"
        lead.append(Text(f"\nnow at {now_at}: the note moved since ({there})", style="bold"))
    files = []
    for f in change.files:
        before, after = journal.contents(change.id, f.seq)
        if change.operation == "delete" and f.role == "target":
            continue
        files.append((f.path, f.role, before, after))
    session = sessionids.shown(change.session, journal.sessions()) if change.session else None
    state = changestate.state_said(change, changestate.lookup(journal))
    return render_files(change_title(change, localtime, session, state), files, width, lead)


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

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, style="bold"))
            yield Static(Text("y: yes   n: no", style="dim"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def _unmatched(lines: tuple[bytes, ...], other: tuple[bytes, ...]) -> set[int]:
    """Indexes of `lines` that `other` does not have (what an edit put there)."""
    matcher = SequenceMatcher(None, lines, other, autojunk=False)
    kept = {i + k for i, _, n in matcher.get_matching_blocks() for k in range(n)}
    return set(range(len(lines))) - kept


def _cell(lines: tuple[bytes, ...], first: int, marked: set[int], style: str) -> Text:
    text = Text()
    for i, line in enumerate(lines):
        body = line.decode("utf-8", "replace").rstrip("\r\n")
        text.append(f"{first + i + 1:>4} ", style="dim")
        text.append(body or " ", style=style if i in marked else "")
        text.append("\n")
    if not lines:
        text.append("     (no lines)", style="italic dim")
    return text


def later_words(
    later: Change | None, localtime: Callable[[float], time.struct_time] = time.localtime, *, gone: bool = False
) -> str:
    """Who changed the note since the agent's change (`gone`: removed it), and when, in plain words."""
    if later is None:  # gone with no journaled row that removed it: the journal cannot say what did
        return NOT_THERE if gone else f"changed since {NO_RECORD}"
    at = time.strftime("%H:%M", localtime(later.at))
    day = time.strftime("%Y-%m-%d", localtime(later.at))
    if later.kind == "outside":
        done = "removed or moved out of the vault" if gone else "changed"
        return f"{done} by you outside vaultwatch (in Obsidian or another editor) on {day} at {at} (change {later.id})"
    if gone and later.operation == "delete":
        return f"deleted by {later.who} on {day} at {at} (change {later.id})"
    if later.agent is None and is_person(later.actor):  # who the change was, never how its name reads
        return f"changed by you ({later.who}) in vaultwatch on {day} at {at} (change {later.id})"
    return f"changed by {later.who} on {day} at {at} (change {later.id})"


def render_conflict(
    refused: RevertRefused,
    change: Change | None,
    later: Change | None,
    width: int,
    localtime: Callable[[float], time.struct_time] = time.localtime,
) -> RenderableType:
    """A refused revert as the person reads it: what happened in plain words, then only the hunks,
    the three versions aligned side by side (before the change, what it wrote, now)."""
    agent = change.who if change is not None else None
    head = Text()
    head.append(f"{refused.path}", style="bold")
    if refused.moved_from:
        head.append(f" (moved since from {refused.moved_from})")
    by = f"{agent}'s change" if agent else "the change"
    head.append(f" was {later_words(later, localtime, gone=refused.current is None)}, after {by}")
    if change is not None:
        head.append(f" (change {change.id}, {_when(change.at, localtime)})")
    head.append(".\nNothing was reverted.\n")
    if refused.found_at:  # a copy found by name is said, never reverted in the note's place
        head.append(
            f"A note holding exactly what the change left is at {refused.found_at} (moved there while vaultwatch "
            f"was not watching?): if it is the note, move it back to {refused.path} and revert again, or revert "
            "it there by hand.\n",
            style="bold",
        )
    if refused.written is None or refused.current is None:
        gone = f"nothing is at {refused.path} now" if refused.current is None else "the change removed the note"
        head.append(f"{gone}: there are no lines to compare.", style="italic")
        return head
    table = Table(expand=True, show_lines=True, box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("before the change", ratio=1, overflow="fold")
    table.add_column(f"what {agent or 'the change'} wrote", ratio=1, overflow="fold")
    table.add_column("now", ratio=1, overflow="fold")
    for r in regions(refused.written, refused.current, refused.before or b""):  # created: nothing before
        table.add_row(
            _cell(r.theirs, r.theirs_start, _unmatched(r.theirs, r.base), "bold red"),
            _cell(r.base, r.base_start, _unmatched(r.base, r.theirs), "bold green"),
            _cell(r.ours, r.ours_start, _unmatched(r.ours, r.base), "bold yellow"),
        )
    key = Text(
        "red: lines the agent replaced or removed · green: the agent's lines · yellow: changed since\n", style="dim"
    )
    return Group(head, key, table)


class ConflictScreen(ModalScreen[None]):
    """A revert refused because the note changed since: why in plain words, only the hunks (three
    versions aligned), and a way forward: revert the agent's lines anyway when the later edit does
    not touch them (core.review.revert.revert_anyway), or open the note in $EDITOR."""

    app: VaultwatchApp

    DEFAULT_CSS = """
    ConflictScreen { align: center middle; }
    ConflictScreen > Vertical { width: 95%; height: 90%; border: round $error; background: $surface; padding: 0 1; }
    ConflictScreen #conflict-hunks { height: 1fr; }
    ConflictScreen #conflict-keys { height: auto; background: $panel; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "anyway", "Revert the agent's lines anyway", id="conflict.anyway"),
        Binding("e", "editor", "Open in $EDITOR", id="conflict.editor"),
        Binding("escape,q", "close", "Cancel", id="conflict.close"),
    ]

    def __init__(self, refused: RevertRefused, change: Change | None = None) -> None:
        super().__init__()
        self.refused = refused
        self.change = change
        self.merge = merge_revert(refused)

    def compose(self) -> ComposeResult:
        later = None
        localtime = getattr(getattr(self.app, "config", None), "localtime", time.localtime)
        if self.change is None and self.refused.change_id is not None:  # a batch's refusal names its change
            try:
                self.change = _journal_of(self.app.session.vault).get(self.refused.change_id)
            except Exception:  # dropped from the journal since: the refusal's words still stand
                self.change = None
        if self.change is not None and self.refused.path:
            try:
                later = later_edit(_journal_of(self.app.session.vault), self.change, self.refused.path)
            except Exception:  # a journal gone since: still show the versions
                later = None
        with Vertical():
            with VerticalScroll(id="conflict-hunks"):
                yield Static(render_conflict(self.refused, self.change, later, self.app.size.width, localtime))
            yield Static(self._keys(), id="conflict-keys")

    def _keys(self) -> Text:
        text = Text()
        if self.merge is not None and self.merge.merged is not None:
            text.append("a", style="bold")
            text.append(": revert the agent's lines anyway (the later edit does not touch them)   ")
        elif self.merge is not None:
            lines = ", ".join(str(h.ours_start + 1) for h in self.merge.conflicts)
            text.append(f"the later edit touches the agent's lines (line {lines} of the note now)   ", style="yellow")
        text.append("e", style="bold")
        text.append(": open the note in $EDITOR   ")
        text.append("escape", style="bold")
        text.append(": cancel")
        return text

    def action_anyway(self) -> None:
        if self.change is None or self.merge is None or self.merge.merged is None:
            self.app.notify(
                "the later edit touches the agent's lines: open the note in $EDITOR (e)",
                severity="warning",
                title="not reverted",
            )
            return
        vault = self.app.session.vault
        actor = _actor(self.app)
        change_id = self.change.id

        def work() -> None:
            try:
                outcome = revert_anyway(Writer(vault), _journal_of(vault), change_id, actor=actor)
            except VaultError as exc:
                self.app.call_from_thread(self.app.notify, exc.message, severity="error", title="not reverted")
                return
            self.app.call_from_thread(self._done, outcome.revert.summary)

        self.app.run_worker(work, thread=True, group="revert", exit_on_error=False, description="revert anyway")

    def _done(self, message: str) -> None:
        self.app.notify(message, title="revert")
        self.dismiss(None)

    async def action_editor(self) -> None:
        from vaultwatch.core.disk.reader import editor_path  # noqa: PLC0415
        from vaultwatch.tui.flows.actions import editor_command  # noqa: PLC0415

        rel = self.refused.path
        if not rel:
            return
        vault = self.app.session.vault
        try:
            command = editor_command(editor_path(vault.root_real, rel), None)
        except VaultError as exc:
            self.app.notify(exc.message, severity="error", title="edit")
            return
        try:
            try:
                with self.app.suspend():
                    # the editor owns the terminal until it exits
                    subprocess.run(command, check=False)  # noqa: ASYNC221
            except SuspendNotSupported:  # headless (tests) or web: no terminal to hand over
                await asyncio.to_thread(
                    subprocess.run, command, check=False, stdin=subprocess.DEVNULL, capture_output=True
                )
        except OSError as exc:
            self.app.notify(
                f"could not start the editor {command[0]!r}: {exc.strerror or exc}; set $EDITOR",
                severity="error",
                title="edit",
            )
            return
        await asyncio.to_thread(vault.refresh_paths, [rel])
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


VersionsScreen = ConflictScreen  # the name the review module exported before


class _Reverting:
    """Revert actions shared by the Changes view and a change's diff."""

    app: Any

    def _journal(self) -> Journal | None:
        return journal_for(self.app.session.vault)

    def revert_change(self, change: Change) -> None:
        vault = self.app.session.vault
        actor = _actor(self.app)

        def work() -> None:
            try:
                outcome = revert(Writer(vault), _journal_of(vault), change.id, actor=actor)
            except RevertRefused as exc:
                self.app.call_from_thread(self._refused, exc, change)
                return
            except Exception as exc:  # a write error: say it, lose nothing
                self.app.call_from_thread(self.app.notify, str(exc), severity="error", title="revert")
                return
            # the journal's summary already says "reverted change N"
            self.app.call_from_thread(self._reverted, outcome.revert.summary)

        self.app.run_worker(work, thread=True, group="revert", exit_on_error=False, description="revert")

    def revert_all(self, change: Change) -> None:
        agent = change.agent
        if not agent:
            self.app.notify("this change was not made by an agent", severity="warning", title="revert")
            return
        vault = self.app.session.vault
        actor = _actor(self.app)
        count = len([c for c in _journal_of(vault).changes(agent=agent, kinds=("change",)) if c.reverted_by is None])

        def answered(yes: bool | None) -> None:
            if not yes:
                return

            def work() -> None:
                outcome = revert_agent(Writer(vault), _journal_of(vault), agent, actor=actor)
                message = f"reverted {len(outcome.reverted)} change(s) of {agent}"
                if outcome.refused:
                    message += f"; {len(outcome.refused)} refused: " + "; ".join(m for _, m in outcome.refused[:3])
                self.app.call_from_thread(self._reverted, message, bool(outcome.refused))

            self.app.run_worker(work, thread=True, group="revert", exit_on_error=False, description="revert all")

        self.app.push_screen(
            ConfirmScreen(
                f"Revert all {count} change(s) of {agent} not reverted yet, newest "
                "first? Changes edited since are left alone and listed."
            ),
            answered,
        )

    def _refused(self, exc: RevertRefused, change: Change | None = None) -> None:
        if not exc.path:  # not a note changed since (already reverted, outside edit): the reason is all
            self.app.notify(exc.message, severity="error", title="not reverted", timeout=8)
            return
        self.app.push_screen(ConflictScreen(exc, change), lambda _: self.reload())

    def revert_batch(self, change: Change) -> None:
        """R on an agent session's change: revert the session's batch, as one unit, after a confirm."""
        session = change.session
        if not session:
            self.revert_all(change)
            return
        vault = self.app.session.vault
        actor = _actor(self.app)
        try:
            journal = _journal_of(vault)
            count = len(session_changes(journal, session))
        except VaultError as exc:
            self.app.notify(exc.message, severity="warning", title="revert")
            return
        shown = sessionids.shown(session, journal.sessions())  # as `vaultwatch revert --session` takes it

        def answered(yes: bool | None) -> None:
            if not yes:
                return

            def work() -> None:
                try:
                    outcome = revert_session(Writer(vault), _journal_of(vault), session, actor=actor)
                except RevertRefused as exc:
                    self.app.call_from_thread(self._refused, exc)
                    return
                except Exception as exc:  # a write error: say it (a rerun finishes the batch)
                    self.app.call_from_thread(self.app.notify, str(exc), severity="error", title="revert")
                    return
                message = f"reverted {len(outcome.reverted)} change(s) of session {shown} as one batch"
                self.app.call_from_thread(self._reverted, message)

            self.app.run_worker(work, thread=True, group="revert", exit_on_error=False, description="revert session")

        self.app.push_screen(
            ConfirmScreen(
                f"Revert the {count} change(s) of {change.who}'s session {shown} not reverted yet, as one "
                "unit, newest first? If any of its notes changed since, nothing is reverted."
            ),
            answered,
        )

    def redo_revert(self, change: Change) -> None:
        """u on a revert: re-apply what it (or its whole batch) undid."""
        if change.kind != "revert":
            self.app.notify("select a revert to redo it", severity="warning", title="redo")
            return
        vault = self.app.session.vault
        actor = _actor(self.app)

        def work() -> None:
            try:
                outcome = redo(Writer(vault), _journal_of(vault), change.id, actor=actor)
            except RevertRefused as exc:
                self.app.call_from_thread(self._refused, exc)
                return
            except Exception as exc:  # a write error: say it, lose nothing
                self.app.call_from_thread(self.app.notify, str(exc), severity="error", title="redo")
                return
            self.app.call_from_thread(self._reverted, f"redid {len(outcome.redone)} change(s)")

        self.app.run_worker(work, thread=True, group="revert", exit_on_error=False, description="redo")

    def _reverted(self, message: str, warn: bool = False) -> None:
        self.app.notify(message, severity="warning" if warn else "information", title="revert")
        self.reload()

    def reload(self) -> None:  # overridden
        pass


class ChangeScreen(Screen[None], _Reverting):
    """The diff of one or more changes (an agent's call), with r / R to revert."""

    app: VaultwatchApp

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

    def compose(self) -> ComposeResult:
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
        if main is not None and panel is not None and panel.following:
            main.action_toggle_follow()
        self.dismiss(None)

    def on_mount(self) -> None:
        self.reload()

    def changes(self) -> list[Change]:
        journal = self._journal()
        if journal is None:
            return []
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


COLUMNS = ("#", "time", "who", "tool", "path", "summary", "state")
GIVES_WAY = {5: 8, 4: 12, 3: 8, 2: 8}  # column → its least width: the summary gives way first, then path, tool, who
TABLE_CHROME = 2  # the table's vertical scrollbar


def fitted(rows: list[tuple[list[str | Text], str]], width: int) -> list[tuple[list[str | Text], str]]:
    """The table's rows with their summaries (then paths, tools, agents) cut, with an ellipsis, so that
    every column fits `width` cells: a long summary would push the state column ("not reviewed") off
    screen."""
    widths = [max([cell_len(h), *(cell_len(str(cells[k])) for cells, _ in rows)]) for k, h in enumerate(COLUMNS)]
    over = sum(w + 2 for w in widths) + TABLE_CHROME - width  # each cell has a space either side
    room = dict.fromkeys(GIVES_WAY, 0)
    for k, least in GIVES_WAY.items():
        room[k] = max(least, widths[k] - max(over, 0))
        over -= widths[k] - room[k]
    out = []
    for cells, key in rows:
        cut = list(cells)
        for k, most in room.items():
            text = str(cut[k])
            if cell_len(text) > most:
                cut[k] = set_cell_size(text, most - 1) + "…"
        out.append((cut, key))
    return out


FINISH_GROUP = "finish-interrupted"  # the worker of `f`: one at a time
FINISH_READY_WAIT_S = 120.0  # how long `f` waits for the first index before it gives up


class ChangesScreen(Screen[None], _Reverting):
    """Every journaled change of this session (or all), per note and per agent, with its diff.

    The selection is a change (its id), not a row number: it stays on that change across reloads,
    and the change keys act only on the change whose diff is shown."""

    app: VaultwatchApp

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
        Binding("R", "revert_all", "Revert this session (or agent)", id="changes.revert_all"),
        Binding("u", "redo", "Redo a revert", id="changes.redo"),
        Binding("n", "by_note", "This note only", id="changes.note"),
        Binding("w", "by_agent", "This agent only", id="changes.agent"),
        Binding("t", "toggle_since", "Session / all", id="changes.since"),
        Binding("s", "ask_since", "Since…", id="changes.since_time"),
        Binding("m", "mark_reviewed", "Reviewed", id="changes.reviewed"),
        Binding("M", "mark_all_reviewed", "All shown reviewed", id="changes.reviewed_all"),
        Binding("f", "finish", "Finish interrupted", id="changes.finish"),
        Binding("x", "refusals", "Refused and declined", id="changes.refusals"),
    ]

    def __init__(self, since: float | At | None) -> None:
        super().__init__()
        self.session_since = since
        self.since: float | Within | At | None = since
        self.note: str | None = None
        self.agent: str | None = None
        self.rows: list[Change] = []  # the journaled changes, listed below the intents
        self.intents: list[OpenIntent] = []  # the open intents, newest first, listed first
        self._laid_width = 0  # the screen width the rows' summaries were cut to
        self._shown: str | None = None  # the key of the row whose detail the lower pane shows

    def compose(self) -> ComposeResult:
        yield Static(id="changes-title")
        table: DataTable[str | Text] = DataTable(id="changes-table", cursor_type="row", zebra_stripes=False)
        yield table
        yield DiffView(id="changes-diff")
        yield Input(
            placeholder="since when? 30m, 2h, 1d, 2026-12-01 or 2026-12-01T09:00 (enter applies, escape goes back)",
            id="changes-since",
        )
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        self.reload()
        table.focus()

    def reload(self) -> None:
        journal = self._journal()
        table = self.query_one(DataTable)
        # the selection is the change (or intent) under the cursor, not its row number: a revert
        # or an agent's new change adds a row at the top, and the same row number would then be
        # another change, which `r` would revert
        was_row = table.cursor_row if self.rows or self.intents else None
        was = self._key_at(was_row)
        # an operation a kill cut off has no row yet but leaves the vault half done: it comes first,
        # whatever the filters, as `vaultwatch changes` lists it
        self.intents = (
            list(reversed(open_intents(journal, self.app.session.vault.root_real))) if journal is not None else []
        )
        self.rows = journal.changes(agent=self.agent, since=self.since, path=self.note, limit=2000) if journal else []
        # the columns too: a DataTable's column only ever widens to its cells, so a long summary of
        # an earlier load kept its width and pushed the state column past the edge, cut mid-number
        # ("reverts 1" for "reverts 11"); `fitted` sizes this load's rows to the screen
        table.clear(columns=True)
        table.add_columns(*COLUMNS)
        localtime = self.app.config.localtime
        rows: list[tuple[list[str | Text], str]] = []
        for i in self.intents:
            cells: list[str | Text] = [
                "—",
                time.strftime("%H:%M:%S", localtime(i.at)),
                visible(i.actor, keep_tab=False),
                i.operation,
                (" → " if i.operation == "rename" else ", ").join(i.paths),
                i.summary,
                Text(intent_state(i), style="bold yellow" if i.running else "bold red"),
            ]
            rows.append((cells, f"intent-{i.intent}"))
        whereabouts = journal.whereabouts(self.rows) if journal is not None else {}
        get = changestate.lookup(journal, self.rows)
        for c in self.rows:
            where = f"{c.src} → {c.path}" if c.src else c.path
            said = whereabouts[c.id].words(c.path) if c.id in whereabouts else None
            if said:  # moved since, or not where the journal left it: where the note is now
                where += f" ({said})"
            state = changestate.state_said(c, get)
            if not c.reviewed:
                state = (state + " · " if state else "") + "not reviewed"
            cells = [str(c.id), time.strftime("%H:%M:%S", localtime(c.at)), c.who, c.tool, where, c.summary, state]
            rows.append((cells, str(c.id)))
        self._laid_width = self.app.size.width
        for cells, key in fitted(rows, self._laid_width):
            table.add_row(*cells, key=key)
        title = Text("Changes", style="bold")
        if isinstance(self.since, Within):
            scope = f"last {_duration(self.since.seconds)}"
        elif isinstance(self.since, At):
            scope = "this session"
        else:
            scope = (
                "this session"
                if self.since is not None and self.since == self.session_since
                else ("all journaled" if self.since is None else "since " + _when(self.since, localtime))
            )
        title.append(f"  {len(self.rows)} · {scope}", style="dim")
        interrupted = sum(1 for i in self.intents if not i.running)
        if interrupted:
            title.append(f"  {interrupted} interrupted: f finishes", style="bold red")
        if self.note:
            title.append(f" · note {self.note}", style="dim")
        if self.agent:
            title.append(f" · {shown_agent(self.agent)}", style="dim")
        if journal is None:  # switched off, or it cannot be opened: the person reads which
            title.append(f"  {why_no_journal(self.app.session.vault)}", style="bold red")
        status = journal.status() if journal else None
        earlier = self._unreviewed_before(journal, status)
        if earlier:  # an agent that worked while no TUI was open: its changes are not this session's
            title.append(f"  {earlier} not reviewed from before this session: t lists them", style="bold yellow")
        if status is not None and status["full"]:
            title.append(
                f"  journal full: {status['unreviewed']} not reviewed; agents' writes are refused until you "
                "review (m / M) or raise VAULTWATCH_JOURNAL_MAX_MB",
                style="bold red",
            )
        title.append(
            "   r revert · R revert all of agent · m reviewed · M all shown · n note · w agent · t session/all"
            " · s since…",
            style="dim",
        )
        self.query_one("#changes-title", Static).update(tidy(title))  # "Changes  0", not "Changes0" in a screenshot
        keys = [key for _, key in rows]
        if keys:
            row = self._place(was, was_row, keys)
            table.move_cursor(row=row)
            self._show_selected()
            if was is not None and keys[row] != was:  # never another change silently under r
                self.app.notify(
                    f"{self._row_words(was)} is no longer listed here: the cursor is on "
                    f"{self._row_words(keys[row])} now",
                    severity="warning",
                    title="changes",
                )
        else:
            self._shown = None
            empty = Text(
                "no changes journaled"
                + ("" if self.since is None else " in this session" if scope == "this session" else f" ({scope})"),
                style="italic dim",
            )
            if earlier:
                empty.append(
                    f"\n\n{earlier} change{'s' if earlier != 1 else ''} from before this session "
                    f"{'are' if earlier != 1 else 'is'} not reviewed yet: t lists every journaled change",
                    style="bold",
                )
            self.query_one(DiffView).show(empty)

    def _unreviewed_before(self, journal: Journal | None, status: dict[str, Any] | None) -> int:
        """How many changes from before this session nobody has reviewed, when the view lists this
        session's changes (unfiltered): the ones the person would not see without `t`."""
        if journal is None or status is None or self.note or self.agent:
            return 0
        if self.since is None or self.since != self.session_since:
            return 0
        return max(0, status["unreviewed"] - len(journal.changes(since=self.since, unreviewed=True)))

    def _key_at(self, row: int | None) -> str | None:
        """The key of the row at `row` in the rows as listed now: "intent-N" or the change's id."""
        if row is None or row < 0:
            return None
        if row < len(self.intents):
            return f"intent-{self.intents[row].intent}"
        at = row - len(self.intents)
        return str(self.rows[at].id) if at < len(self.rows) else None

    @staticmethod
    def _place(was: str | None, was_row: int | None, keys: list[str]) -> int:
        """The row to select among `keys`: the one selected before (`was`), wherever it is now; when it
        is gone, the next older change (the one in its place), else the last row."""
        if was is None:
            return 0
        if was in keys:
            return keys.index(was)
        if was.isdigit():
            older = [n for n, key in enumerate(keys) if key.isdigit() and int(key) < int(was)]
            return older[0] if older else len(keys) - 1
        return min(was_row or 0, len(keys) - 1)

    @staticmethod
    def _row_words(key: str) -> str:
        return f"change {key}" if key.isdigit() else "the interrupted or running operation"

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._laid_width:  # the summaries are cut to the width
            self.reload()

    def selected(self) -> Change | None:
        """The journaled change under the cursor: None on an open intent's row (not a change)."""
        table = self.query_one(DataTable)
        if table.cursor_row is None:
            return None
        at = table.cursor_row - len(self.intents)
        if at < 0 or at >= len(self.rows):
            return None
        return self.rows[at]

    def selected_intent(self) -> OpenIntent | None:
        """The open intent under the cursor (its rows come first), or None."""
        table = self.query_one(DataTable)
        if table.cursor_row is None or not 0 <= table.cursor_row < len(self.intents):
            return None
        return self.intents[table.cursor_row]

    def _chosen(self, title: str, *, shown: bool = False) -> Change | None:
        """The selected change for a change's key; on an intent's row, says why the key does nothing.
        With `shown`, only the change whose detail the lower pane shows: a key acting on another
        (the cursor moved, its diff not drawn yet) shows that one and does nothing."""
        intent = self.selected_intent()
        if intent is not None:
            self.app.notify(
                "this row is an operation "
                + ("still under way" if intent.running else "that was interrupted")
                + ", not a change yet: "
                + ("it becomes one when its process records it" if intent.running else "f finishes it"),
                severity="warning",
                title=title,
            )
            return None
        change = self.selected()
        if shown and change is not None and self._shown != str(change.id):
            self._show_selected()
            self.app.notify(
                f"the cursor is on change {change.id}, whose diff was not shown: it is now; press the key again for it",
                severity="warning",
                title=title,
            )
            return None
        return change

    def _show(self, change: Change) -> None:
        self._shown = None  # until it is drawn
        self.query_one(DiffView).show(
            render_change(self._journal(), change, self.app.size.width, self.app.config.localtime)
        )
        self._shown = str(change.id)

    def _show_selected(self) -> None:
        intent = self.selected_intent()
        if intent is not None:
            self.query_one(DiffView).show(render_intent(intent, self.app.config.localtime))
            self._shown = f"intent-{intent.intent}"
            return
        change = self.selected()
        if change is not None:
            self._show(change)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_selected()

    def action_close(self) -> None:
        if self.has_class("-since"):  # typing a time: escape goes back to the list, not out of the view
            self._close_since()
            return
        self.dismiss(None)

    def action_revert(self) -> None:
        change = self._chosen("revert", shown=True)
        if change is not None:
            self.revert_change(change)

    def action_revert_all(self) -> None:
        change = self._chosen("revert", shown=True)
        if change is not None:
            self.revert_batch(change)

    def action_redo(self) -> None:
        change = self._chosen("redo", shown=True)
        if change is not None:
            self.redo_revert(change)

    def action_mark_reviewed(self) -> None:
        """m: the selected change is reviewed (the journal may drop it once past its retention age)."""
        change = self._chosen("reviewed", shown=True)
        journal = self._journal()
        if change is not None and journal is not None:
            journal.mark_reviewed([change.id], by=_actor(self.app))
            self.reload()
            self._reviews_changed()

    def action_mark_all_reviewed(self) -> None:
        """M: every change the view shows is reviewed."""
        journal = self._journal()
        if journal is not None and self.rows:
            marked = journal.mark_reviewed([c.id for c in self.rows], by=_actor(self.app))
            self.app.notify(f"marked {len(marked)} change(s) reviewed", title="changes")
            self.reload()
            self._reviews_changed()

    def _reviews_changed(self) -> None:
        """The main screen's Trust tab and column list reviewed notes apart: re-list them."""
        main = getattr(self.app, "main", None)
        if main is not None:
            main.refresh_views()

    def action_by_note(self) -> None:
        change = None if self.note else self._chosen("this note only")
        self.note = None if self.note or change is None else change.path
        self.reload()

    def action_by_agent(self) -> None:
        change = None if self.agent else self._chosen("this agent only")
        self.agent = None if self.agent or change is None else change.agent
        self.reload()

    def action_refusals(self) -> None:
        """`x`: the agents' changes that did not happen (the journal keeps only what was written)."""
        self.app.action_refusals()

    def action_finish(self) -> None:
        """f: finish every interrupted operation now, as a start or `vaultwatch changes --finish`
        does, in a worker thread (it writes notes); then say how each went and list again."""
        if any(w.group == FINISH_GROUP and not w.is_finished for w in self.app.workers):
            self.app.notify("already finishing the interrupted operations", title="finish")
            return
        journal = self._journal()
        if journal is None:
            self.app.notify(why_no_journal(self.app.session.vault), title="finish", markup=False)
            return
        if not journal.open_intents(interrupted=True):
            running = len(journal.open_intents())
            self.app.notify(
                "nothing interrupted to finish"
                + (f" ({running} operation{'s' if running != 1 else ''} under way)" if running else ""),
                title="finish",
            )
            self.reload()
            return
        vault = self.app.session.vault
        app = self.app

        def work() -> None:
            # the resume modules load the whole write path: only when there is something to finish
            from vaultwatch.core.review.resume import resume_interrupted  # noqa: PLC0415

            if not vault.wait_ready(FINISH_READY_WAIT_S):  # its writes refresh the index: it must be there
                app.call_from_thread(finished, "the index is still loading: press f again once it is", True)
                return
            try:
                # not resume_and_report: its bus messages would reach the person a second time
                done = resume_interrupted(Writer(vault), journal)
            except Exception as exc:  # the intents stay open: f again, or the next start, tries again
                app.call_from_thread(finished, f"finishing an interrupted operation failed: {exc}", True)
                return
            if done is None:
                app.call_from_thread(
                    finished,
                    "another vaultwatch is finishing the interrupted operations right now; this view lists "
                    "what they become",
                    True,
                )
                return
            said = [message for _, message in done]
            left = len(journal.open_intents(interrupted=True))
            if left:
                said.append(
                    f"{left} interrupted operation{'s' if left != 1 else ''} could not be finished "
                    "(their rows say what finishing does)"
                )
            app.call_from_thread(finished, "\n".join(said) or "nothing was left to finish", bool(left))

        def finished(message: str, warn: bool) -> None:
            app.notify(message, severity="warning" if warn else "information", title="finish", timeout=10)
            screen = app.screen  # the person may have left this view and opened another meanwhile
            if isinstance(screen, ChangesScreen):
                screen.reload()

        app.run_worker(work, thread=True, group=FINISH_GROUP, exit_on_error=False, description="finish interrupted")

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


__all__ = [
    "ChangeScreen",
    "ChangesScreen",
    "ConfirmScreen",
    "ConflictScreen",
    "VersionsScreen",
    "render_conflict",
    "change_title",
    "render_change",
    "render_intent",
]
