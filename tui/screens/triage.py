"""Small dialogs of the triage actions: pick a status (`c`), snooze for N days (`z`), and the
one-key confirmation of the human attestation (`v`). Each names the note(s) it acts on."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from vaultwatch.core.markdown.okf import STATUSES

if TYPE_CHECKING:
    from textual.app import ComposeResult

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 56; height: auto; padding: 1 2;
    border: round $accent; background: $surface;
}}
{name} OptionList {{ height: auto; max-height: 5; }}
{name} .dialog-error {{ height: auto; }}
"""


def describe(titles: list[str], limit: int = 3) -> str:
    """The notes an action is about: a title, or "3 notes: A, B and C" (at most `limit` named)."""
    if len(titles) == 1:
        return titles[0]
    named = ", ".join(titles[:limit])
    more = f" and {len(titles) - limit} more" if len(titles) > limit else ""
    return f"{len(titles)} notes: {named}{more}"


class StatusScreen(ModalScreen[str | None]):
    """Choose draft, stable or deprecated (1, 2, 3 or enter); escape cancels."""

    DEFAULT_CSS = DIALOG_CSS.format(name="StatusScreen")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="status.cancel"),
        Binding("1", "pick(0)", "Draft", show=False, id="status.draft"),
        Binding("2", "pick(1)", "Stable", show=False, id="status.stable"),
        Binding("3", "pick(2)", "Deprecated", show=False, id="status.deprecated"),
    ]

    def __init__(self, what: str, current: str | None = None) -> None:
        super().__init__()
        self.question = f"Set the status of {what}"
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, style="bold"))
            yield OptionList(*(Option(f"{i + 1}  {s}", id=s) for i, s in enumerate(STATUSES)), id="status-options")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.current in STATUSES:
            options.highlighted = STATUSES.index(self.current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_pick(self, index: int) -> None:
        self.dismiss(STATUSES[index])

    def action_cancel(self) -> None:
        self.dismiss(None)


class SnoozeScreen(ModalScreen[int | None]):
    """Ask for a number of days (default 14); dismisses with it, or None on escape."""

    DEFAULT_CSS = DIALOG_CSS.format(name="SnoozeScreen")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="snooze.cancel")]
    MAX_DAYS = 3650

    def __init__(self, what: str, as_of: str, days: int = 14, blink: bool = True) -> None:
        super().__init__()
        self.as_of, self.days, self.blink = as_of, days, blink
        self.question = f"Snooze {what}: stale_after = {as_of} + days"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, style="bold"))
            yield Input(value=str(self.days), id="snooze-days", select_on_focus=True)
            yield Static("", classes="dialog-error", id="snooze-error")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = self.blink
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        try:
            days = int(text)
        except ValueError:
            days = 0
        if not 1 <= days <= self.MAX_DAYS:
            self.query_one("#snooze-error", Static).update(
                Text(f"enter a whole number of days from 1 to {self.MAX_DAYS}, e.g. 14", style="bold red")
            )
            return
        self.dismiss(days)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A one-key confirmation: `y` or enter does it, any other key (escape, a letter typed on
    by mistake) cancels, so no stray typing can confirm a write."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmScreen")

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, style="bold"), id="confirm-question")
            yield Static(Text("y or enter: yes · any other key: no", style="italic"), id="confirm-keys")

    def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        self.dismiss(event.key in ("y", "enter"))
