"""Triage writes from the TUI: dispatching a list's action to its dialog and its write, running
the writes in thread workers (the write path is `tui.flows.actions`), $EDITOR, undo and reload, and
saying what each changed (and, loudly, what it refused to overwrite).

Writes hold agents' calls back until they are written (core.live.foreground), and the list refresh
that shows the write releases them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import SuspendNotSupported

from vaultwatch.core.errors import VaultError
from vaultwatch.tui.widgets.doclist import DocList

if TYPE_CHECKING:
    from vaultwatch.core.index.snapshot import Entry
    from vaultwatch.core.query.statuschoices import StatusChoice
    from vaultwatch.tui.app import VaultwatchApp
    from vaultwatch.tui.flows.actions import Actions, Outcome
    from vaultwatch.tui.screens.main import MainScreen
    from vaultwatch.tui.widgets.rowlist import RowList

WRITE_HOLD_SECONDS = 1.0  # a triage write holds agents' calls back until it is written, at most this long


class TriageFlow:
    """The triage actions of one main screen."""

    def __init__(self, screen: MainScreen, app: VaultwatchApp) -> None:
        self.screen = screen
        self.app = app
        self.pending = 0  # triage writes started and not finished
        self.conflicted: list[str] = []  # notes whose last action met an outside change
        self._actions: Actions | None = None

    @property
    def actions(self) -> Actions:
        """The triage actions (imported on first use: start-up does not need the write path)."""
        if self._actions is None:
            from vaultwatch.tui.flows.actions import Actions  # noqa: PLC0415

            self._actions = Actions(self.app.session.vault, user=self.app.config.user)
        return self._actions

    def dispatch(self, doclist: RowList, action: str, targets: list[Entry], line: int | None = None) -> None:
        """A list asked for `action` on `targets` (the marked rows, else the previewed note):
        ask what the dialog needs, naming the notes, then write. `doclist` is a DocList but for
        edit, which the Broken tab's ProblemList asks for too."""
        if not targets:
            return
        from vaultwatch.tui.screens.triage import ConfirmScreen, SnoozeScreen, StatusScreen, describe  # noqa: PLC0415

        app = self.app
        what = describe([e.title or e.path for e in targets])
        if action == "status":
            from vaultwatch.core.query import problems, statuschoices  # noqa: PLC0415

            snapshot = app.session.snapshot
            # the vault's own words (OKF's on a bundle), and the person's deprecated word
            offered = statuschoices.choices(
                snapshot, app.session.triage_rules, problems.template_folders(app.session.vault.root)
            )
            current = statuschoices.current(targets[0], snapshot.is_bundle) if len(targets) == 1 else None

            def chosen(status: StatusChoice | None) -> None:
                if status is not None:
                    self._confirm_bulk(
                        targets,
                        f"Set the status of {what} to {status.word}?",
                        lambda: self._act(doclist, self.actions.set_status, targets, status.word, status.value),
                    )

            app.push_screen(StatusScreen(what, offered, current, bundle=snapshot.is_bundle), chosen)
        elif action == "verify":
            # a bundle's trust is its `verified:` key; elsewhere the note is written to only when the
            # person's settings say so (write_verified), and the journal records the review
            write = app.session.snapshot.is_bundle or app.session.triage_rules.write_verified

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self._act(doclist, lambda t: self.actions.mark_reviewed(t, write=write), targets)

            # the name the file and the journal get (human:<login> when no user is configured)
            who = self.actions.actor
            if write:
                question = f"Mark {what} human-reviewed (verified by {who})?"
            else:
                question = f"Mark {what} reviewed? (vaultwatch's change journal records it; the note is not changed)"
            app.push_screen(ConfirmScreen(question), confirmed)
        elif action == "snooze":
            as_of = app.session.clock.today()

            def days_chosen(days: int | None) -> None:
                if days is not None:
                    self._confirm_bulk(
                        targets,
                        f"Snooze {what} for {days} days (stale_after {as_of + dt.timedelta(days=days)})?",
                        lambda: self._act(doclist, self.actions.snooze, targets, days, as_of),
                    )

            app.push_screen(SnoozeScreen(what, as_of.isoformat(), blink=app.config.animate), days_chosen)
        elif action == "edit":
            self.screen.run_worker(
                self._edit(targets[0], line), group="write", exit_on_error=False, description="$EDITOR"
            )

    def _confirm_bulk(self, targets: list[Entry], question: str, act: Callable[[], None]) -> None:
        """One note: the dialog's choice was the decision. Several: say how many, then confirm."""
        if len(targets) == 1:
            act()
            return
        from vaultwatch.tui.screens.triage import ConfirmScreen  # noqa: PLC0415

        def confirmed(yes: bool | None) -> None:
            if yes:
                act()

        self.app.push_screen(ConfirmScreen(question), confirmed)

    def open_in_obsidian(self, entry: Entry) -> None:
        """Hand the note's obsidian:// URI to the system opener (in a thread), saying what happened;
        the URI is copied when it could not be opened."""
        from vaultwatch.tui.flows import fixit  # noqa: PLC0415

        uri = fixit.obsidian_uri(self.app.session.vault.root, entry.path)

        def run() -> None:
            problem = fixit.open_uri(uri)
            self.app.from_thread(self._opened, entry.path, uri, problem)

        self.screen.run_worker(run, thread=True, group="open", exit_on_error=False, description="open in Obsidian")

    def _opened(self, path: str, uri: str, problem: str | None) -> None:
        if problem is None:
            self.app.notify(f"{path}\n{uri}", title="opened in Obsidian", markup=False)
            return
        self.app.copy_to_clipboard(uri)
        self.app.notify(
            f"{problem}: the URI was not opened (copied instead):\n{uri}",
            title="open in Obsidian",
            severity="warning",
            markup=False,
            timeout=10,
        )

    def _act(self, doclist: RowList, fn: Callable[..., Outcome], *args: Any) -> None:
        if isinstance(doclist, DocList):
            doclist.clear_picks()
        self.pending += 1
        self.app.person_acts(WRITE_HOLD_SECONDS)
        self.screen.run_worker(
            lambda: self._write(fn, *args), thread=True, group="write", exit_on_error=False, description="triage action"
        )

    def _write(self, fn: Callable[..., Outcome], *args: Any) -> None:
        try:
            outcome = fn(*args)
        finally:
            self.app.from_thread(self._write_done)
        self.app.from_thread(self.show_outcome, outcome)

    def _write_done(self) -> None:
        self.pending -= 1
        self.app.person_acts()  # the row showing the write is next: the list refresh releases

    async def _edit(self, entry: Entry, line: int | None = None) -> None:
        """Suspend the app, run $EDITOR on the note (at `line` where the editor takes one),
        resume and index what it saved."""
        from vaultwatch.core.disk.reader import editor_path  # noqa: PLC0415
        from vaultwatch.core.edit.writes import ConflictError  # noqa: PLC0415
        from vaultwatch.tui.flows.actions import Outcome, editor_command  # noqa: PLC0415

        app = self.app
        try:
            before = await asyncio.to_thread(self.actions.seen_bytes, entry)
            since = await asyncio.to_thread(self.actions.journal_mark)
        except VaultError as exc:
            self.show_outcome(
                Outcome("edit", conflicts=[entry.path])
                if isinstance(exc, ConflictError)
                else Outcome("edit", errors=[(entry.path, exc.message)])
            )
            return
        try:  # the editor gets a file name only after core's check (core.disk.reader.editor_path)
            command = editor_command(editor_path(app.session.vault.root_real, entry.path), line)
        except VaultError as exc:
            self.show_outcome(Outcome("edit", errors=[(entry.path, exc.message)]))
            return
        try:
            try:
                with app.suspend():
                    # the app is suspended: the editor owns the terminal until it exits
                    code = subprocess.run(command, check=False).returncode  # noqa: ASYNC221
            except SuspendNotSupported:  # headless (tests) or web: no terminal to hand over
                done = await asyncio.to_thread(
                    subprocess.run, command, check=False, stdin=subprocess.DEVNULL, capture_output=True
                )
                code = done.returncode
        except OSError as exc:
            app.notify(
                f"could not start the editor {command[0]!r}: {exc.strerror or exc}; set $EDITOR",
                severity="error",
                title="edit",
            )
            return
        outcome = await asyncio.to_thread(self.actions.edited, entry.path, before, since)
        if code:
            outcome.errors.append((entry.path, f"the editor exited with status {code}"))
        self.show_outcome(outcome)

    def undo(self) -> None:
        self.screen.run_worker(self._undo, thread=True, group="write", exit_on_error=False, description="undo")

    def _undo(self) -> None:
        outcome = self.actions.undo()
        if outcome is None:
            self.app.from_thread(lambda: self.app.notify("nothing to undo", title="undo"))
        else:
            self.app.from_thread(self.show_outcome, outcome)

    def reload(self, current: str | None) -> None:
        """Re-read the notes whose last action met a conflict (and `current`) from disk."""
        paths = list(self.conflicted)
        if current is not None:
            paths.append(current)
        self.conflicted.clear()
        if paths:
            self.screen.run_worker(
                lambda: self._reload(paths), thread=True, group="write", exit_on_error=False, description="reload"
            )

    def _reload(self, paths: list[str]) -> None:
        self.actions.reload(paths)
        self.app.from_thread(
            lambda: self.app.notify(f"reloaded {names(paths)} from disk", title="reload", markup=False)
        )

    def show_outcome(self, outcome: Outcome) -> None:
        """Say what an action changed, and loudly what it refused to overwrite."""
        notify = self.app.notify
        if outcome.done and not outcome.undoable:
            # a review recorded in the journal alone changes no note, so no index change re-lists
            # the Trust tab: re-list now
            self.screen.refresh_views()
        if outcome.done:
            lines = [f"{path}: {summary}" for path, summary in outcome.done[:5]]
            if len(outcome.done) > 5:
                lines.append(f"… and {len(outcome.done) - 5} more notes")
            if outcome.unchanged:
                lines.append(f"already so: {names(outcome.unchanged)}")
            if outcome.undoable and not outcome.label.startswith("undid"):
                lines.append("u undoes")
            notify("\n".join(lines), title=outcome.label, markup=False)
        elif outcome.unchanged and not (outcome.conflicts or outcome.errors):
            notify(f"nothing to change: {names(outcome.unchanged)}", title=outcome.label, markup=False)
        if outcome.conflicts:
            self.conflicted = list(dict.fromkeys([*self.conflicted, *outcome.conflicts]))
            notify(
                f"{names(outcome.conflicts)} changed on disk since it was shown (an agent or another "
                "editor). Nothing was written there: the current content is kept. Press ctrl+r to "
                "reload, then act again.",
                title=f"conflict: {outcome.label}",
                severity="warning",
                timeout=12,
                markup=False,
            )
        for path, message in outcome.errors:
            notify(f"{path}: {message}", title=f"failed: {outcome.label}", severity="error", markup=False)


def names(paths: list[str], limit: int = 3) -> str:
    """ "a.md, b.md and 4 more" for notifications."""
    shown = ", ".join(paths[:limit])
    return shown if len(paths) <= limit else f"{shown} and {len(paths) - limit} more"
