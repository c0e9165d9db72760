"""Decision keys that arm a moment after what they decide is shown, as browsers' permission prompts do.

An agent's change can put a dialog in front of the person at any moment, while they are typing
somewhere else: the keys they type on before they notice it (the `y` of "every", typed into the
filter) would otherwise answer a change they never read. So a screen's decision keys (approve,
decline, deny) do nothing for ARM_S after the change is shown, and again after the change shown
is replaced; a key pressed before then is still taken by the screen (it never reaches a binding
of the screen below or of the app) and only says that it came too soon.

How long it has been is read on the app's injected monotonic clock (AppConfig.monotonic; a test
steps it instead of sleeping); a Textual timer (tui.timers.once, which never drops a late tick)
looks at it again when the moment should have come, to arm the keys and redraw the hint.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text

from vaultwatch.tui.timers import Scheduling, once

if TYPE_CHECKING:
    from textual.timer import Timer

# s: long enough for a person typing elsewhere to notice that a dialog came up and stop (keys
# already on their way are spent on it), short enough not to be felt by one reading the change
ARM_S = 0.5
ARMING = "keys arm in a moment"


def monotonic_of(app: Any) -> float:
    """Now, on the app's injected monotonic clock (the process's own for an app without one)."""
    config = getattr(app, "config", None)
    return (getattr(config, "monotonic", None) or time.monotonic)()


class KeyArming:
    """Whether a screen's decision keys act yet; `changed` redraws what shows it (`hint`); `now`
    reads the monotonic clock the delay is counted on."""

    def __init__(self, node: Scheduling, changed: Callable[[], None], now: Callable[[], float]) -> None:
        self._node = node
        self._changed = changed
        self._now = now
        self._timer: Timer | None = None
        self._since: float | None = None  # when what the keys decide was shown (None: not armed soon)
        self.armed = False
        self.too_soon = ""  # what a key pressed before arming would have done ("" when none was)
        self._covered = False  # another screen was pushed over this one since it was shown

    def arm_soon(self) -> None:
        """What the keys decide was (re)placed on screen: they act ARM_S from now."""
        self.disarm()
        self._since = self._now()
        self._look_in(ARM_S)

    def covered(self) -> None:
        """Another screen was pushed over this one: what the keys decide is not being read."""
        self._covered = True
        self.disarm()

    def uncovered(self) -> bool:
        """This screen is shown again: True when it had been covered (not its first showing, which arms
        on its own), and the caller arms the keys anew after the next frame, so that a key meant for
        the screen that covered it (a double tap, a held key) does not answer the change it reveals."""
        was, self._covered = self._covered, False
        return was

    def disarm(self) -> None:
        """The keys do nothing until arm_soon is called again."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._since = None
        self.armed = False
        self.too_soon = ""

    @property
    def counting(self) -> bool:
        """Whether the keys arm by themselves once ARM_S has passed (a change is shown, not yet read)."""
        return self._since is not None and not self.armed

    def _left(self) -> float | None:
        """Seconds until the keys arm (None: they are not to arm until arm_soon)."""
        return None if self._since is None else ARM_S - (self._now() - self._since)

    def _look_in(self, delay: float) -> None:
        self._timer = once(self._node, delay, self._look, name="arm-keys")

    def _look(self) -> None:
        self._timer = None
        left = self._left()
        if left is None or self.armed:
            return
        if left <= 0:
            self._arm()
        else:  # the clock has not come so far yet (a stepped one in a test): look again then
            self._look_in(max(left, ARM_S / 10))

    def _arm(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.armed = True
        self.too_soon = ""
        self._changed()

    def allows(self, what: str) -> bool:
        """A decision key was pressed to `what` (e.g. "approve"): True when it may act now; else
        it is spent here, and the hint says so. The clock decides, not whether the timer has run."""
        left = self._left()
        if not self.armed and left is not None and left <= 0:
            self._arm()
        if self.armed:
            return True
        self.too_soon = what
        self._changed()
        return False

    def hint(self) -> Text | None:
        """What shows that the keys are not armed yet (None once they are)."""
        if self.armed:
            return None
        if self.too_soon:
            return Text(f"too soon: {self.too_soon} did nothing; {ARMING}", style="bold red")
        return Text(ARMING, style="italic yellow")


__all__ = ["ARMING", "ARM_S", "KeyArming", "monotonic_of"]
