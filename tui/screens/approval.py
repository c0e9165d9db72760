"""The approval dialog (tui/flows/review.py's ReviewHost pushes one per waiting change): an agent's
change as a diff with the time left, `y` approves, `n` declines, `d` declines with a reason
(core.review.approval decides; the agent's call goes on at once). Those keys arm a moment after
the dialog is on screen (tui.screens.arming): keys the person was typing elsewhere when it came up
do nothing but say they came too soon.

Between the key and the agent's answer this process runs three threads: the writer that was
waiting, the MCP server's loop that sends the answer, and the TUI, which right after the key
has work of its own (the status line, the index's change, the dialog's close: in a trace at
120x50, Pilot's press returned 150-350 ms after the key). CPython hands the interpreter to a
waiting thread only every switch interval (5 ms), and the writer and the server wait for it
after each system call (the switch, the folder's fsync, the socket write): traced, that
queueing was most of the approve -> answer time. `QUICK` lowers the switch interval to 0.5 ms from the key until the
call has finished and its answer has gone out (QUICK_GRACE_S after ApprovalFinished), then
puts it back.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input

from vaultwatch.core import handoffs
from vaultwatch.core.edit import effects as fx
from vaultwatch.core.review import approval
from vaultwatch.core.review.agentrules import shown_agent
from vaultwatch.core.review.approval import Pending
from vaultwatch.core.review.stale import why_stale
from vaultwatch.core.review.visible import visible
from vaultwatch.tui.screens.arming import KeyArming, monotonic_of
from vaultwatch.tui.timers import once
from vaultwatch.tui.widgets.diffview import DiffDoc, DiffView, Piece, render_diff, render_files
from vaultwatch.tui.widgets.footer import KeyFooter

if TYPE_CHECKING:
    from textual.app import ComposeResult

FINISH_WAIT = 0.5  # s: the approval dialog closes at the latest this long after the decision
QUICK_SWITCH_S = (
    handoffs.QUICK_S
)  # s: the interpreter's switch interval while an answered change is written and answered
QUICK_GRACE_S = 0.3  # s: kept this long after the call finished (its answer is sent after that)


class QuickHandoffs:
    """The process's switch interval at QUICK_SWITCH_S while any decided change's call runs (see module
    doc): one counted quick block of core.handoffs (the interval's one owner) per change, so it
    overlaps the MCP lane's own blocks without either putting back a stale interval."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: set[int] = set()

    def start(self, pending_id: int) -> None:
        with self._lock:
            if pending_id not in self._ids:
                self._ids.add(pending_id)
                handoffs.begin_quick()

    def stop(self, pending_id: int | None = None) -> None:
        """That call's answer is out (None: all of them, e.g. the app leaves)."""
        with self._lock:
            ended = set(self._ids) if pending_id is None else self._ids & {pending_id}
            self._ids -= ended
            for _ in ended:
                handoffs.end_quick()

    @property
    def active(self) -> bool:
        return bool(self._ids)


QUICK = QuickHandoffs()


def render_pending(pending: Pending, width: int, now: float, hint: Text | None = None, stale: str = "") -> DiffDoc:
    """A waiting change: its title with the time left (the doc's first piece), every file it
    touches (what the person approves), then its diff (a rename's: every hunk of each note whose
    links it rewrites, what each link becomes). What the agent wrote (its name, the paths, the
    diff) is shown as core.review.visible shows it, as the question through an agent's client is.
    `hint`: what the title says while the keys are not armed (tui.screens.arming); `stale`: why the
    change can no longer apply as shown (core.review.stale)."""
    title = pending_title(pending, now, hint, stale)
    touched = effects_text(pending)
    if pending.operation in ("rename",):
        files: list[tuple[str, str, bytes | None, bytes | None]] = [(p, "links", b, a) for p, b, a in pending.links]
        notes = len(files)
        said = (
            f"the links in {notes} note{'s' if notes != 1 else ''} will be rewritten, as shown below"
            if files
            else fx.stranded_words(len(pending.stranded))
            if pending.stranded
            else "no link needs rewriting"
        )
        style = "italic red" if pending.stranded else "italic"
        return render_files(
            title,
            files,
            width,
            [Text(f"\n{visible(fx.what_moves(pending.effects), keep_tab=False)}; {said}", style=style), touched],
            escaped=True,
        )
    if pending.operation == "delete":
        body: RenderableType = (
            render_diff(pending.before, None, width, escaped=True) if pending.before is not None else Text("")
        )
        gone = fx.FOR_GOOD if pending.permanent else "the file goes to the trash"
        return render_files(title, [], width, [Text(f"\n{gone}", style="italic red"), touched, body], escaped=True)
    return render_files(
        title, [(pending.path, "target", pending.before, pending.after)], width, [touched], escaped=True
    )


def effects_text(pending: Pending) -> Text:
    """Which rule asked, and every path the change touches (core.edit.effects), one a line: a
    folder's rename lists each file it moves, a symlinked note its real target."""
    out = Text("\n")
    if pending.decision is not None:
        out.append(f"asks because {visible(pending.decision.why, keep_tab=False)}\n", style="yellow")
    # a rename's links were worked out before it was shown (Pending.links), and the write path
    # rewrites exactly those: a note that only might have needed it is not touched, so it is not listed
    shown = fx.read_as(pending.effects, [path for path, _, _ in pending.links])
    out.append(f"it touches {len(shown)} path{'s' if len(shown) != 1 else ''}:", style="dim")
    for e in shown:
        out.append(f"\n  {fx.verb(e)} ", style="dim")
        out.append(visible(e.path, keep_tab=False), style="bold")
        if e.dest:
            out.append(" → ")
            out.append(visible(e.dest, keep_tab=False), style="bold green")
        if e.via:
            out.append(f"  (named as {visible(e.via, keep_tab=False)})", style="italic")
    return out


def pending_title(pending: Pending, now: float, hint: Text | None = None, stale: str = "") -> Text:
    title = Text()
    # `agent <name>`, as in every other view: no agent passes for the person (`human:alice`)
    who = shown_agent(pending.agent) if pending.agent else pending.actor
    title.append(visible(who, keep_tab=False), style="bold magenta")
    title.append(" wants to ")
    title.append(fx.doing_verb(pending.operation), style="bold")
    title.append(f" {visible(pending.path, keep_tab=False)}", style="bold underline")
    if pending.dest:
        title.append(" → ")
        title.append(visible(pending.dest, keep_tab=False), style="bold underline green")
    title.append(f"\n{pending.remaining(now):.0f} s left: ", style="dim")
    title.append("y", style="bold reverse")
    title.append(" approve  ", style="dim")
    title.append("n", style="bold reverse")
    title.append(" decline  ", style="dim")
    title.append("d", style="bold reverse")
    title.append(" decline with a reason", style="dim")
    if hint is not None:
        title.append("  ")
        title.append(hint)
    if stale:
        title.append(f"\ncannot apply as shown: {visible(stale, keep_tab=False)}; ", style="bold red")
        title.append("approving it will change nothing (n declines it)", style="bold red")
    return title


class ApprovalScreen(ModalScreen[None]):
    """One waiting change: its diff, the time left, y approve / n decline / d decline with a reason (once
    the keys have armed)."""

    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical { width: 95%; height: 90%; border: thick $warning; background: $surface; padding: 0 1; }
    ApprovalScreen #approval-reason { display: none; }
    ApprovalScreen.-reason #approval-reason { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "approve", "Approve", id="approval.approve"),
        Binding("n", "deny", "Decline", id="approval.deny"),
        Binding("d", "deny_with_reason", "Decline with a reason", id="approval.reason"),
    ]

    def __init__(self, gate: approval.ApprovalGate, pending: Pending) -> None:
        super().__init__()
        self.gate = gate
        self.pending = pending
        self._doc: DiffDoc | None = None  # (drawn once mounted)
        self.stale = ""  # why the change can no longer apply as shown (core.review.stale), "" while it can
        # y, n and d act only a moment after it shows
        self.keys = KeyArming(self, self._retitle, lambda: monotonic_of(self.app))

    def compose(self) -> ComposeResult:
        with Vertical():
            # above the diff, where the title says what d does: below a tall diff it was out of the
            # person's sight (hidden until d, so the dialog's focus starts on the diff)
            yield Input(placeholder="why not? (enter sends, escape goes back)", id="approval-reason")
            yield DiffView(id="approval-diff")
        # its own keys: below it the main screen's footer offered `q Quit`, which does nothing here
        yield KeyFooter()

    # the reason's field comes first (above the diff) but is hidden until d: focus starts on the diff
    AUTO_FOCUS = "#approval-diff"

    decided = False  # the person answered; the dialog stays until the call has finished (see _answer)

    def on_mount(self) -> None:
        self._draw()
        self.set_interval(1.0, self._tick)
        self._look()
        self.call_after_refresh(self.keys.arm_soon)  # counted from the first frame that shows it

    def on_screen_suspend(self) -> None:
        self.keys.covered()

    def on_screen_resume(self) -> None:
        if self.keys.uncovered():
            self.call_after_refresh(self.keys.arm_soon)

    def _draw(self) -> None:
        self._doc = render_pending(self.pending, self.app.size.width, time.monotonic(), self.keys.hint(), self.stale)
        self.query_one(DiffView).show(self._doc)

    def _tick(self) -> None:
        if self.pending.settled and not self.decided:
            self.dismiss(None)
            return
        self._retitle()
        self._look()

    @work(thread=True, exclusive=True, group="approval-stale", exit_on_error=False)
    def _look(self) -> None:
        """Whether the change can still apply as shown: the disk is read off the UI thread."""
        p = self.pending
        if not self.gate.root_real:  # a gate attached to no vault folder: nothing to read
            return
        why = why_stale(self.gate.root_real, p.operation, p.path, p.before, p.effects, p.links)
        if why != self.stale:
            self.app.call_from_thread(self._stale_is, why)

    def _stale_is(self, why: str) -> None:
        self.stale = why
        self._retitle()

    def _retitle(self) -> None:
        """The title only (the time left, whether the keys are armed): the diff and its scroll stay."""
        # (a key can come before the dialog has mounted and drawn itself)
        if not self.decided and self.is_attached and self._doc is not None:
            self._doc.pieces[0] = Piece(pending_title(self.pending, time.monotonic(), self.keys.hint(), self.stale))
            self.query_one(DiffView).show(self._doc, keep_scroll=True)

    def _answer(self, approved: bool, reason: str = "") -> None:
        """Decide, let agents' calls go on at once (the person's key is answered), and close the
        dialog when the call has finished (ApprovalFinished) or after FINISH_WAIT: closing it
        repaints the screen below, which would otherwise run in the same moments as the write."""
        if self.decided:
            return
        self.decided = True
        QUICK.start(self.pending.id)  # before the decision: the woken writer is the first to need it
        if not self.gate.decide(self.pending.id, approved, reason):
            QUICK.stop(self.pending.id)  # no longer waiting (timed out meanwhile): no call goes on
        release = getattr(getattr(self.app, "session", None), "vault", None)
        if release is not None:
            release.foreground.release()
        once(self, FINISH_WAIT, self.close)

    def close(self) -> None:
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)

    def _may(self, what: str) -> bool:
        """A decision key: False when the person already answered or it came before the keys armed
        (then it is spent here, never passed on to the screen below)."""
        return not self.decided and self.keys.allows(what)

    def action_approve(self) -> None:
        if self._may("approve"):
            self._answer(True)

    def action_deny(self) -> None:
        if self._may("decline"):
            self._answer(False, "")

    def action_deny_with_reason(self) -> None:
        if not self._may("decline"):
            return
        self.set_class(True, "-reason")
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._answer(False, event.value)

    def key_escape(self) -> None:
        if self.has_class("-reason"):
            self.set_class(False, "-reason")
            # the diff: focusing the screen left the hidden field, first in the dialog, the focus
            # (and so the next y or n)
            self.query_one(DiffView).focus()


__all__ = [
    "FINISH_WAIT",
    "QUICK",
    "QUICK_GRACE_S",
    "QUICK_SWITCH_S",
    "ApprovalScreen",
    "QuickHandoffs",
    "effects_text",
    "pending_title",
    "render_pending",
]
