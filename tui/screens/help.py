"""The help screen (`?`): every key the app binds, and the filter-bar syntax."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
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


TWO_PAIRS = 100  # from this many cells the keys take two key-description pairs a line


class KeyTables:
    """The keys, a table a section, as wide as they are drawn: one key and its description a line
    when narrow, two side by side when there is room. The key column is as wide as the widest key
    (a section's title is above its table, never in that column), the same in every section so
    they line up."""

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]) -> None:
        self.sections = [(title, rows) for title, rows in sections if rows]
        self.key_width = max((cell_len(key) for _, rows in self.sections for key, _ in rows), default=1)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        pairs = 2 if options.max_width >= TWO_PAIRS else 1
        for n, (title, rows) in enumerate(self.sections):
            table = Table(
                title=title,
                title_justify="left",
                title_style="bold underline",
                show_header=False,
                box=None,
                padding=(0, 2, 0, 0),
                expand=True,
            )
            if n:
                yield Text("")
            for _ in range(pairs):
                table.add_column(style="bold", no_wrap=True, width=self.key_width)
                table.add_column(ratio=1)
            for i in range(0, len(rows), pairs):
                cells: list[Text] = []
                for key, what in rows[i : i + pairs]:
                    cells += [Text(key), Text(what)]
                table.add_row(*cells, *[Text("")] * (2 * pairs - len(cells)))
            yield table


class HelpScreen(ModalScreen[None]):
    """Keys and filter syntax; escape, q or ? closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss_help", "Close", id="help.close"),
    ]

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        keys = KeyTables(self.sections)
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
            yield Static(keys, id="help-keys")
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
