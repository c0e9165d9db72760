"""The agents' changes that wait for the person (kept while no TUI was open), shown when the TUI
opens: one at a time with its effects and diff; `y` approves (applies it as the agent, or
refuses when a note changed since), `n` declines, `d` declines with a reason (the agent reads it
in `history`), `s` skips, escape closes.

The screen follows the store: a change decided elsewhere meanwhile (`vaultwatch approve` or
`decline`, which this app's own server may have applied) leaves the list, saying how it was
decided, and one kept meanwhile (a dialog nobody answered in time) joins it.

The same core functions as `vaultwatch approve` / `decline` (core.review.pending); the write
runs in a worker thread, and the screen is updated from its result message. So does working out
a waiting rename's link rewrites, which reads every note whose links it rewrites: a folder's
rename can take long, and the person may move on meanwhile. A rename is approved only once its
link rewrites are shown: `y` before then says to wait for them. Whether a change shown can still
apply as shown reads every file it touches (a folder's rename: every note in it), so that too is
worked out in a worker: the change shows at once, saying it is being checked, and an answer for
what is no longer shown is dropped.

`y`, `n` and `d` arm a moment after a change is shown, and again each time the change shown (or what
is shown of it: a rename's links) is replaced (tui.screens.arming): a key meant for what was shown
before does nothing but say it came too soon. They arm only once it is said whether the change still
applies (core.review.stale: a folder's rename or delete also by what was put in the folder since), so
`y` is never offered for a change before the screen can say it would be refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from vaultwatch.core.edit.hooks import APPROVED_IN_TUI
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import approval, pending
from vaultwatch.core.review.agentrules import shown_agent
from vaultwatch.core.review.pending import Proposal
from vaultwatch.core.review.stale import proposal_stale
from vaultwatch.core.review.visible import visible
from vaultwatch.tui.commands.changes import person
from vaultwatch.tui.commands.pending import diff_text, stale_text
from vaultwatch.tui.screens.arming import KeyArming, monotonic_of

if TYPE_CHECKING:
    from textual.app import ComposeResult

Links = list[tuple[str, bytes, bytes]] | str  # pending.link_rewrites's answer, or why there is none
WORKING = "  working out the links it rewrites…"
CHECKING = "checking whether it still applies as shown…"
UNSEEN_LINKS = "wait until its link rewrites are shown: approving it approves them"
STORE_LOOK_S = 1.0  # s: how often the screen reads which changes still wait (one small query)


def waiting(vault: Any) -> list[Proposal]:
    """The vault's pending changes (none when the store cannot be opened: the TUI opens anyway)."""
    try:
        return pending.store_for(vault.root_real).pending()
    except VaultError:
        return []


def kept_count(vault: Any) -> int:
    """How many pending changes wait in the vault's store (0 when it cannot be opened)."""
    try:
        return pending.store_for(vault.root_real).count()
    except VaultError:
        return 0


class PendingScreen(Screen[None]):
    DEFAULT_CSS = """
    PendingScreen #pending-reason { display: none; }
    PendingScreen.-reason #pending-reason { display: block; }
    """

    class LinksWorkedOut(Message):
        """A waiting rename's link rewrites, worked out off the UI thread over the index's
        `generation` (the vault as it was read)."""

        def __init__(self, pid: int, generation: int, links: Links, stranded: list[str] | None = None) -> None:
            super().__init__()
            self.pid = pid
            self.generation = generation
            self.links = links
            self.stranded = stranded or []  # the notes whose links it leaves pointing at nothing

    class StaleChecked(Message):
        """Whether the change shown by the body's drawing `check` would be refused if approved now
        (core.review.stale: "" when it would apply as shown), read off the UI thread."""

        def __init__(self, check: int, stale: str) -> None:
            super().__init__()
            self.check = check
            self.stale = stale

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "approve", "Approve", id="pending.approve"),
        # in place of Approve while the change shown cannot apply as shown: says why instead of
        # offering it (approving would only be refused)
        Binding("y", "cannot_approve", "Approve", show=False, id="pending.cannot_approve"),
        Binding("n", "decline", "Decline", id="pending.decline"),
        Binding("d", "decline_with_reason", "Decline with a reason", id="pending.reason"),
        Binding("s", "skip", "Skip", id="pending.skip"),
        Binding("escape,q", "close", "Close", id="pending.close"),
    ]

    def __init__(self, vault: Any, proposals: list[Proposal]) -> None:
        super().__init__()
        self.vault = vault
        self.queue = list(proposals)
        self.busy = False
        self.said = ""
        # changes that left the list while another process was still applying them: what is said of
        # them is said again once they settle (approved, or refused after all)
        self._settling: set[int] = set()
        # (pending change id, index generation) -> its link rewrites: a change shown again over the
        # same vault is not read again, and one shown after the vault changed (an approval applied)
        # is, since what its rename would rewrite may have changed with it
        self._links: dict[tuple[int, int], tuple[Links, list[str]]] = {}
        self._working: set[tuple[int, int]] = set()
        self._shown_links: tuple[int, int] | None = None  # the (id, generation) whose links the body shows
        # each drawing of the body asks anew whether its change still applies; only the answer for
        # the latest drawing is shown (the person may have moved on while the disk was read)
        self._check = 0
        self._stale: str | None = None  # the answer for the latest drawing (None: not come yet)
        self._drawn: tuple[Proposal, Links | None, list[str]] | None = None
        # y and n act only a moment after a change shows
        self.keys = KeyArming(self, self._title, lambda: monotonic_of(self.app))

    AUTO_FOCUS = "VerticalScroll"  # the body, not the reason's field above it (hidden until d)

    def compose(self) -> ComposeResult:
        yield Static(id="pending-title")
        # right under the title that says what d does, not below a tall diff (hidden until d)
        yield Input(placeholder="why not? (enter declines, escape goes back)", id="pending-reason")
        with VerticalScroll():
            yield Static(id="pending-body")
        yield Footer()

    def on_mount(self) -> None:
        self.show()
        self.set_interval(STORE_LOOK_S, self.follow_store, name="pending-store")

    def follow_store(self) -> None:
        """Which changes wait now: one decided elsewhere leaves the list (saying how), one kept
        since joins it at the end. Not while this screen's own approval is being applied."""
        if self.busy:
            return
        if self._settling and any(self._state_of(pid) != pending.APPLYING for pid in self._settling):
            self.said = "; ".join(self._decided_elsewhere(pid) for pid in sorted(self._settling))
            self._title()
        now = waiting(self.vault)
        ids = {p.id for p in now}
        gone = [p for p in self.queue if p.id not in ids]
        known = {p.id for p in self.queue}
        came = [p for p in now if p.id not in known]
        if not gone and not came:
            return
        head = self.current
        if gone:
            self.said = "; ".join(self._decided_elsewhere(p.id) for p in gone)
            self.queue = [p for p in self.queue if p.id in ids]
        self.queue.extend(came)
        if self.current is not head:
            self._reason(False)
            self.show()  # another change is shown now: its keys arm anew
        else:
            self._title()

    def _found(self, pid: int) -> Proposal | None:
        try:
            return pending.store_for(self.vault.root_real).get(pid)
        except VaultError:
            return None

    def _state_of(self, pid: int) -> str | None:
        found = self._found(pid)
        return None if found is None else found.state

    def _decided_elsewhere(self, pid: int) -> str:
        found = self._found(pid)
        if found is not None and found.state == pending.APPLYING:
            self._settling.add(pid)
            return f"pending change {pid} is being applied elsewhere"
        self._settling.discard(pid)
        if found is None:
            return f"pending change {pid} is gone"
        why = f": {visible(found.reason, keep_tab=False)}" if found.reason else ""
        return f"pending change {pid} was {found.state} elsewhere{why}"

    def on_screen_suspend(self) -> None:
        self.keys.covered()

    def on_screen_resume(self) -> None:
        if self.keys.uncovered() and (self.current is None or self._stale is not None):
            self.call_after_refresh(self.keys.arm_soon)

    @property
    def current(self) -> Proposal | None:
        return self.queue[0] if self.queue else None

    def show(self) -> None:
        """The change at the head of the queue (its keys armed anew)."""
        p = self.current
        self._shown_links = None
        self.refresh_bindings()
        self.keys.arm_soon()
        self._title()
        body = self.query_one("#pending-body", Static)
        if p is None:
            self._check += 1  # nothing shown: a late answer has nothing to go with
            self._drawn = None
            body.update("")
            return
        if p.method != "rename":
            self._body(p, [])
            return
        key = (p.id, self.vault.snapshot.generation)
        found = self._links.get(key)
        if found is not None:
            self._body(p, *found)
            self._shown_links = key
            return
        self._body(p, None)
        if key not in self._working:
            self._working.add(key)
            self._work_out_links(p, key[1])

    def _title(self) -> None:
        """The change's head line, what was last said, and whether its keys are armed yet."""
        found = self.query("#pending-title") if self.is_attached else None
        if not found:  # (a key can come before the screen has composed)
            return
        p = self.current
        title = found.first(Static)
        if p is None:
            title.update(Text(f"No agent changes wait for you. {self.said}", style="bold"))
            return
        head = Text(f"{len(self.queue)} waiting · pending change {p.id}: ", style="bold yellow")
        where = f"{p.path} -> {p.dest}" if p.dest else p.path
        who = shown_agent(p.agent) if p.agent else p.actor  # `agent <name>`: none passes for the person
        head.append(visible(f"{who} · {p.tool} · {where}", keep_tab=False))
        if self.said:
            head.append(f"\n{self.said}", style="bold")
        hint = self.keys.hint()
        if hint is not None:
            head.append("\n")
            head.append(hint)
        title.update(head)

    def _body(self, p: Proposal, links: Links | None, stranded: list[str] | None = None) -> None:
        """The change's reason and diff (None for links still being worked out), saying it is being
        checked until a worker says whether approving it now would be refused, and why."""
        self._check += 1
        self._stale = None
        self.refresh_bindings()
        self._drawn = (p, links, list(stranded or ()))
        # the keys arm only once it is said whether the change still applies (and then a moment later)
        self.keys.disarm()
        self._draw(None)
        self._check_stale(self._check, p, links or [], approval.gate_for(self.vault))

    def _draw(self, stale: str | None) -> None:
        """The body as last asked for, with what is known of its staleness (None: not yet)."""
        if self._drawn is None:
            return
        p, links, stranded = self._drawn
        shown = Text()
        if stale is None:
            shown.append(CHECKING + "\n", style="dim italic")
        elif stale:
            shown.append(stale_text(stale).strip() + "\n", style="bold red")
        shown.append(f"why: {visible(p.why, keep_tab=False)}\n{diff_text(p, links, stranded)}")
        if links is None:
            shown.append(f"\n{WORKING}")
        self.query_one("#pending-body", Static).update(shown)

    @work(thread=True, exit_on_error=False, group="pending-stale")
    def _check_stale(self, check: int, p: Proposal, links: Links, gate: Any) -> None:
        """Hashes every file the change touches: off the UI thread, since a folder's rename touches
        every note in it."""
        try:
            stale = proposal_stale(self.vault.root_real, p, links, gate, self.vault)
        except VaultError as exc:
            stale = exc.message
        self.post_message(self.StaleChecked(check, stale))

    def on_pending_screen_stale_checked(self, message: StaleChecked) -> None:
        if message.check == self._check:  # else the body was drawn anew since: its own answer comes
            self._stale = message.stale
            self._draw(message.stale)
            self.keys.arm_soon()
            self._title()
            self.refresh_bindings()  # y Approve is offered only for a change that can still apply

    @work(thread=True, exit_on_error=False)
    def _work_out_links(self, p: Proposal, generation: int) -> None:
        """A waiting rename's link rewrites as approving it now would make them (or why not)."""
        stranded: list[str] = []
        try:
            links: Links = pending.link_rewrites(self.vault, p)
            stranded = pending.stranded(self.vault, p)
        except VaultError as exc:
            links = exc.message
        self.post_message(self.LinksWorkedOut(p.id, generation, links, stranded))

    def on_pending_screen_links_worked_out(self, message: LinksWorkedOut) -> None:
        key = (message.pid, message.generation)
        self._working.discard(key)
        mine = [k for k in self._links if k[0] == message.pid]
        if any(k[1] > message.generation for k in mine):
            return  # worked out over an older vault than what is already kept (and shown) for it
        for old in mine:
            del self._links[old]  # an older vault's: never shown again
        self._links[key] = (message.links, message.stranded)
        p = self.current
        if p is not None and p.id == message.pid:  # the person may have moved on, approved or declined
            self._body(p, message.links, message.stranded)  # what the key approves has grown: read it first
            self._shown_links = key
            self._title()

    def links_shown(self) -> bool:
        """Whether what approving the current change would do is all on screen: for a rename, the
        link rewrites it would make over the vault as it is now."""
        p = self.current
        if p is None or p.method != "rename":
            return True
        return self._shown_links == (p.id, self.vault.snapshot.generation)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # once said that the change shown cannot apply as shown, the footer no longer offers y
        # Approve under that line: y says why it cannot, and n or d decline it
        cannot = bool(self._stale) and self.current is not None
        if action == "approve":
            return not cannot
        if action == "cannot_approve":
            return cannot
        return True

    def action_cannot_approve(self) -> None:
        p = self.current
        if p is None or not self._stale:
            return
        self.notify(
            f"{visible(self._stale, keep_tab=False)}: approving it would be refused; n or d declines it",
            title=f"pending change {p.id} cannot be approved as shown",
            severity="warning",
        )

    def action_approve(self) -> None:
        p = self.current
        if p is None or self.busy or not self.keys.allows("approve"):
            return
        if not self.links_shown():
            self.notify(UNSEEN_LINKS, title=f"pending change {p.id}", severity="warning")
            if (p.id, self.vault.snapshot.generation) not in self._working:
                self.show()  # the vault changed since they were shown: worked out (and shown) anew
            return
        self.busy = True
        self._apply(p.id)

    @work(thread=True, exit_on_error=False)
    def _apply(self, pid: int) -> None:
        try:
            done = pending.approve(self.vault, pid, by=person(), via=APPROVED_IN_TUI)
            who = shown_agent(done.agent) if done.agent else done.actor
            said = f"approved pending change {pid}: applied as {who}'s change"
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
        if p is None or self.busy or not self.keys.allows("decline"):
            return
        self._decline(p, "declined in the TUI")

    def _decline(self, p: Proposal, reason: str) -> None:
        try:
            done = pending.decline(self.vault.root_real, p.id, reason, by=person())
            said = f"declined pending change {p.id}: {visible(done.reason, keep_tab=False)}"
        except VaultError as exc:
            said = exc.message
        self._settled(p.id, said)

    def action_decline_with_reason(self) -> None:
        """`d`: the reason's field; enter declines with what it says (the agent reads it in `history`)."""
        p = self.current
        if p is None or self.busy or not self.keys.allows("decline"):
            return
        self._reason(True)

    def _reason(self, shown: bool) -> None:
        field = self.query_one("#pending-reason", Input)
        self.set_class(shown, "-reason")
        if shown:
            field.value = ""
            field.focus()
        elif field.has_focus:
            self.query_one(VerticalScroll).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        p = self.current
        self._reason(False)
        if p is not None and not self.busy:
            self._decline(p, event.value.strip() or "declined in the TUI")

    def action_skip(self) -> None:
        if self.queue and not self.busy:
            self.queue.append(self.queue.pop(0))
            self.said = ""
            self._reason(False)
            self.show()

    def action_close(self) -> None:
        if self.has_class("-reason"):  # escape in the reason's field: back to the change
            self._reason(False)
            return
        self.dismiss(None)


__all__ = ["PendingScreen", "kept_count", "waiting"]
