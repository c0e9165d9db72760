"""The agents' changes that wait for the person (kept while no TUI was open), shown when the TUI
opens: one at a time with its effects and diff; `y` approves (applies it as the agent, or
refuses when a note changed since), `n` declines, `s` skips, escape closes.

The same core functions as `vaultwatch approve` / `decline` (core.review.pending); the write
runs in a worker thread, and the screen is updated from its result message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from vaultwatch.core.edit.hooks import APPROVED_IN_TUI
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import pending
from vaultwatch.core.review.pending import Proposal
from vaultwatch.core.review.visible import visible
from vaultwatch.tui.commands.changes import person
from vaultwatch.tui.commands.pending import diff_text

if TYPE_CHECKING:
    from textual.app import ComposeResult


def waiting(vault: Any) -> list[Proposal]:
    """The vault's pending changes (none when the store cannot be opened: the TUI opens anyway)."""
    try:
        return pending.store_for(vault.root_real).pending()
    except VaultError:
        return []


class PendingScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "approve", "Approve", id="pending.approve"),
        Binding("n", "decline", "Decline", id="pending.decline"),
        Binding("s", "skip", "Skip", id="pending.skip"),
        Binding("escape,q", "close", "Close", id="pending.close"),
    ]

    def __init__(self, vault: Any, proposals: list[Proposal]) -> None:
        super().__init__()
        self.vault = vault
        self.queue = list(proposals)
        self.busy = False
        self.said = ""

    def compose(self) -> ComposeResult:
        yield Static(id="pending-title")
        with VerticalScroll():
            yield Static(id="pending-body")
        yield Footer()

    def on_mount(self) -> None:
        self.show()

    @property
    def current(self) -> Proposal | None:
        return self.queue[0] if self.queue else None

    def show(self) -> None:
        p = self.current
        title = self.query_one("#pending-title", Static)
        body = self.query_one("#pending-body", Static)
        if p is None:
            title.update(Text(f"No agent changes wait for you. {self.said}", style="bold"))
            body.update("")
            return
        head = Text(f"{len(self.queue)} waiting · pending change {p.id}: ", style="bold yellow")
        where = f"{p.path} -> {p.dest}" if p.dest else p.path
        head.append(visible(f"{p.agent or p.actor} · {p.tool} · {where}", keep_tab=False))
        if self.said:
            head.append(f"\n{self.said}", style="bold")
        title.update(head)
        body.update(Text(f"why: {visible(p.why, keep_tab=False)}\n{diff_text(p, self._links(p))}"))

    def _links(self, p: Proposal) -> list[tuple[str, bytes, bytes]] | str:
        """A waiting rename's link rewrites as approving it now would make them (or why not)."""
        try:
            return pending.link_rewrites(self.vault, p)
        except VaultError as exc:
            return exc.message

    def action_approve(self) -> None:
        if self.current is not None and not self.busy:
            self.busy = True
            self._apply(self.current.id)

    @work(thread=True, exit_on_error=False)
    def _apply(self, pid: int) -> None:
        try:
            done = pending.approve(self.vault, pid, by=person(), via=APPROVED_IN_TUI)
            said = f"approved pending change {pid}: applied as {done.agent or done.actor}'s change"
            if done.reason:
                said += f", but: {visible(done.reason, keep_tab=False)}"
        except VaultError as exc:
            said = exc.message
        self.app.call_from_thread(self._settled, pid, said)

    def _settled(self, pid: int, said: str) -> None:
        self.busy = False
        self.said = said
        self.queue = [p for p in self.queue if p.id != pid]
        self.show()

    def action_decline(self) -> None:
        p = self.current
        if p is None or self.busy:
            return
        try:
            pending.decline(self.vault.root_real, p.id, "declined in the TUI", by=person())
            said = f"declined pending change {p.id}"
        except VaultError as exc:
            said = exc.message
        self._settled(p.id, said)

    def action_skip(self) -> None:
        if self.queue and not self.busy:
            self.queue.append(self.queue.pop(0))
            self.said = ""
            self.show()

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["PendingScreen", "waiting"]
