"""The main screen's triage dispatch: what a triage or fix-it key acts on (the note the person
sees), and the keys that hand it to `tui.flows.triaging` and `tui.flows.fixit`.

A mixin of `tui.screens.main.MainScreen` (split out of it by job; its state lives there).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text

from vaultwatch.core.model import NOTE, Entry
from vaultwatch.tui.timers import once
from vaultwatch.tui.widgets.doclist import DocList
from vaultwatch.tui.widgets.problems import ProblemList

if TYPE_CHECKING:
    from vaultwatch.tui.screens.mainparts import MainParts


ACT_WAIT = 2.0  # seconds a triage key waits at most for the filter's list to be shown
ACT_STEP = 0.02  # how often it looks again


class TriageTargets:
    """Triage keys and their targets (MainScreen's part)."""

    def on_doc_list_picks_changed(self: MainParts, message: DocList.PicksChanged) -> None:
        count = len(message.doclist.picked)
        self._status.set_part("picked", Text(f"{count} marked", style="bold") if count else None)

    def on_doc_list_act(self: MainParts, message: DocList.Act) -> None:
        self._act_when_caught_up(message, time.monotonic() + ACT_WAIT)

    def _act_when_caught_up(self: MainParts, message: DocList.Act, deadline: float) -> None:
        """A triage key acts on what the screen shows once it has caught up with the keys
        before it: `/plane` enter `v` typed at once verifies the filter's first note, not the
        note previewed before the filter's list came (at most ACT_WAIT later)."""
        if not self._live():
            return
        if not self.caught_up() and time.monotonic() < deadline:
            once(self, ACT_STEP, lambda: self._act_when_caught_up(message, deadline))
            return
        doclist = message.doclist
        self.triage.dispatch(doclist, message.action, self.targets(doclist, edit=message.action == "edit"))

    def caught_up(self: MainParts) -> bool:
        """The filter's text is applied and the list it selects is shown."""
        return not self.lists.pending and self._filterbar.query_value == self.filter_query

    def on_problem_list_edit(self: MainParts, message: ProblemList.Edit) -> None:
        # the Broken tab: fix it in $EDITOR, at the problem's line
        self.triage.dispatch(self.active_list, "edit", [message.entry], message.line)

    def targets(self: MainParts, doclist: DocList, *, edit: bool = False) -> list[Entry]:
        """What a triage key acts on: the marked rows, else the note the preview shows (opened
        from the palette, a link or follow mode, it may not be the list's cursor row); the list's
        cursor row when the preview is hidden. A cursor move the preview has not caught up with
        yet is shown first, so the action and the preview agree."""
        if doclist.picked and not edit:
            return doclist.targets()
        if self._preview_timer is not None or (self._listed_unseen and doclist is self.active_list):
            # the cursor just moved, or the list was listed anew: preview its row now
            if self._preview_timer is not None:
                self._preview_timer.stop()
            self._preview_row(doclist.current)
        path = self.preview.wanted if self.preview.display else None
        entry = self.session.snapshot.get(path) if path else None
        if entry is not None and entry.kind == NOTE:
            return [entry]
        current = doclist.current
        return [current] if current is not None else []

    def seen_entry(self: MainParts) -> Entry | None:
        """The note the person looks at: the previewed one, else the list's cursor row (a
        Broken row's note); None for a skipped file or an empty list."""
        rowlist = self.active_list
        if isinstance(rowlist, DocList):
            found = self.targets(rowlist, edit=True)
            return found[0] if found else None
        path = self.preview.wanted if self.preview.display else None
        entry = self.session.snapshot.get(path) if path else None
        if entry is not None:
            return entry
        row = rowlist.current
        return getattr(row, "entry", None)

    def action_copy_path(self: MainParts) -> None:
        from vaultwatch.tui.flows import fixit  # noqa: PLC0415

        entry = self.seen_entry()
        if entry is not None:
            fixit.copy(self.app, entry.path, "path")

    def action_copy_link(self: MainParts) -> None:
        from vaultwatch.tui.flows import fixit  # noqa: PLC0415

        entry = self.seen_entry()
        if entry is not None:
            fixit.copy(self.app, fixit.wikilink(entry, self.session.snapshot), "wikilink")

    def action_open_obsidian(self: MainParts) -> None:
        entry = self.seen_entry()
        if entry is not None:
            self.triage.open_in_obsidian(entry)

    def action_undo(self: MainParts) -> None:
        self.triage.undo()

    def action_reload(self: MainParts) -> None:
        current = self.active_list.current
        self.triage.reload(current.path if isinstance(self.active_list, DocList) and current is not None else None)
