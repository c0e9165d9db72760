"""The help screen (`?`): every key the app binds, and the filter-bar syntax."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.app import ComposeResult

FILTER_HELP = (
    ("words", "free text: each word in the title or path, regardless of case and accents (cafe finds Café)"),
    ('"two words"', "a quoted phrase (also for words starting with - or containing :)"),
    ("status:deprecated", "what the Deprecated tab lists; any frontmatter key:value works"),
    ("trust:unverified", "trust tier: unverified, machine (machine-confirmed), human (human-reviewed)"),
    ("stale:true", "what the Stale tab lists as of the as-of date (stale:false: the rest)"),
    ("tag:craft  #craft", "a tag from the frontmatter or the body"),
    ("type:howto", "a property's value as the lists show it: any case, a link by its text, a list's by membership"),
    ("path:Projects/**", "glob on the path; path:projects means that folder, in any case"),
    ("-status:draft  -path:Archive", "exclude notes matching key:value, or under a folder"),
    ("tab  →", "take the suggested key, value, tag or folder; a term that selects nothing says why"),
    ("?words  ctrl+f", "full-text search of the notes' text, ranked; key:value terms and -word narrow it"),
    ("enter  escape", "to the list (escape also closes the suggestions; in the search hits, leaves the search)"),
)


class HelpScreen(ModalScreen[None]):
    """Keys and filter syntax; escape, q or ? closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss_help", "Close", id="help.close"),
    ]

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        keys = Table(show_header=False, box=None, padding=(0, 2, 0, 0), expand=True)
        for _ in range(2):
            keys.add_column(style="bold", no_wrap=True)
            keys.add_column(ratio=1)
        for title, rows in self.sections:
            if not rows:
                continue
            keys.add_row(Text(title, style="bold underline"), "", "", "")
            for i in range(0, len(rows), 2):
                pair = rows[i : i + 2] + [("", "")] * (2 - len(rows[i : i + 2]))
                keys.add_row(Text(pair[0][0]), Text(pair[0][1]), Text(pair[1][0]), Text(pair[1][1]))
        syntax = Table(
            title="Filter bar ( / )",
            title_justify="left",
            title_style="bold underline",
            show_header=False,
            box=None,
            padding=(0, 2, 0, 0),
        )
        syntax.add_column(style="bold", no_wrap=True)
        syntax.add_column()
        for term, what in FILTER_HELP:
            syntax.add_row(Text(term), Text(what))
        with VerticalScroll(id="help-body"):
            yield Static(
                Text("vaultwatch", style="bold") + Text(" · watch and triage a vault while agents use it"),
                id="help-title",
            )
            yield Static(keys)
            yield Static(syntax, id="help-syntax")
            yield Static(
                Text(
                    "Terms AND together. Agents reach this vault over MCP on the socket shown in the "
                    "status line; ctrl+p › Copy bridge config gives a client configuration. "
                    "Settings (theme, default vault, [keymap] of the ids in brackets): "
                    "$XDG_CONFIG_HOME/vaultwatch/settings.toml. escape closes this screen.",
                    style="dim",
                ),
                id="help-foot",
            )

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
