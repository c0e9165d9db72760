"""Small dialogs of the triage actions: pick a status or type a new one (`c`), snooze for N days
(`z`), and the one-key confirmation of the human attestation (`v`). Each names the note(s) it acts
on."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from vaultwatch.core.query.statuschoices import StatusChoice, typed

if TYPE_CHECKING:
    from collections.abc import Sequence

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


class StatusScreen(ModalScreen[StatusChoice | None]):
    """Choose one of the vault's statuses (`core.query.statuschoices`): 1 to 9 or enter; or tab to
    the field below and type a new word (enter sets it, or says why it cannot be one); escape
    cancels."""

    DEFAULT_CSS = DIALOG_CSS.format(name="StatusScreen") + "StatusScreen OptionList { max-height: 9; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="status.cancel"),
        *(Binding(str(n), f"pick({n - 1})", f"Status {n}", show=False, id=f"status.pick{n}") for n in range(1, 10)),
    ]

    def __init__(
        self, what: str, choices: Sequence[StatusChoice], current: str | None = None, *, bundle: bool = False
    ) -> None:
        super().__init__()
        self.question = f"Set the status of {what}"
        self.choices = tuple(choices)
        self.current = current
        self.bundle = bundle  # an OKF bundle's statuses are OKF's three: a typed word must be one

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, style="bold"))
            yield OptionList(*(self._option(i, c) for i, c in enumerate(self.choices)), id="status-options")
            # no max_length: a word too long is refused saying so, never silently cut
            yield Input(placeholder="tab, then type a new status (enter sets it)", id="status-typed")
            yield Static("", classes="dialog-error", id="status-error")

    @staticmethod
    def _option(index: int, choice: StatusChoice) -> Option:
        label = Text(f"{index + 1}  {choice.word}")
        if choice.notes:
            label.append(f"  {choice.notes:,} note{'' if choice.notes == 1 else 's'}", style="dim")
        elif choice.rule:  # no note holds it yet: say why it is offered
            label.append("  the Deprecated tab's rule", style="dim")
        return Option(label, id=str(index))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        words = [c.word.casefold() for c in self.choices]
        if self.current is not None and self.current.casefold() in words:
            options.highlighted = words.index(self.current.casefold())
        if self.choices:
            options.focus()
        else:  # nothing to pick: straight to typing one
            self.query_one("#status-typed", Input).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.choices[event.option_index])

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.query_one("#status-error", Static).update("")  # what was refused is being corrected

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        found = typed(event.value, self.choices, self.bundle)
        if isinstance(found, str):  # refused: the field keeps what was typed, to be mended
            self.query_one("#status-error", Static).update(Text(found, style="bold red"))
            return
        self.dismiss(found)

    def action_pick(self, index: int) -> None:
        if index < len(self.choices):
            self.dismiss(self.choices[index])

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
