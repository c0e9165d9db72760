"""Ask for the as-of date that staleness is judged by (`d`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from vaultwatch.core.clock import Clock, SystemClock, parse_as_of

if TYPE_CHECKING:
    from textual.app import ComposeResult


class AsOfScreen(ModalScreen[Clock | None]):
    """A one-line form: YYYY-MM-DD (or empty for today); dismisses with the new clock
    (the system clock for today)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="asof.cancel")]

    def __init__(self, current: str, blink: bool = True) -> None:
        super().__init__()
        self.current = current
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical(id="asof-box"):
            yield Static(Text("Judge staleness as of (YYYY-MM-DD, empty = today)", style="bold"))
            yield Input(value=self.current, id="asof-input", select_on_focus=True)
            yield Static("", id="asof-error")

    def on_mount(self) -> None:
        self.query_one(Input).cursor_blink = self.blink

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self.dismiss(SystemClock())
            return
        try:
            self.dismiss(parse_as_of(text))
        except ValueError as exc:
            self.query_one("#asof-error", Static).update(Text(str(exc), style="bold red"))

    def action_cancel(self) -> None:
        self.dismiss(None)
