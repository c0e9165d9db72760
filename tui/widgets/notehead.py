"""The preview's header: a note's title with its OKF facts (status, staleness, trust tier) and its
frontmatter as a key/value table, built from the index's entry (no file read)."""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from vaultwatch.core.clock import Clock
from vaultwatch.core.markdown import mdlex, okf
from vaultwatch.core.model import Entry
from vaultwatch.core.review import triageviews
from vaultwatch.core.review.agentrules import shown_agent
from vaultwatch.tui.marks import ago
from vaultwatch.tui.session import Session
from vaultwatch.tui.widgets import spans


def _okf_line(entry: Entry, session: Session, clock: Clock) -> Text:
    line = Text()
    if entry.frontmatter_error:  # as the lists say: its status and trust are not readable
        line.append("broken frontmatter", "bold red")
        return line
    status = entry.okf_status
    line.append(status, "bold red" if status == "deprecated" else ("yellow" if status == "draft" else "green"))
    line.append(" · ")  # tidy() keeps the spaces out of the next run's start
    trust = triageviews.trust_word(entry, session.snapshot, session.reviews)
    style = "green" if trust == "human-reviewed" else "yellow" if trust == triageviews.CHANGED_SINCE_REVIEW else ""
    line.append(trust, style)
    days = okf.overdue_days(entry.stale_date, entry.stale_instant, clock)
    stale = entry.stale_date or entry.stale_instant  # overdue_days is None when both are
    if days is not None and stale is not None:
        spans.append(line, f" · stale {days}d (since {stale.isoformat()}, as of {clock.today().isoformat()})", "yellow")
    elif stale is not None:
        spans.append(line, f" · fresh until {stale.isoformat()}", "dim")
    return line


def note_head(entry: Entry, session: Session, bundle: bool, clock: Clock | None = None) -> Group:
    parts: list[Any] = [Text(entry.title, style="bold"), Text(entry.path, style="dim")]
    if bundle and entry.kind == "note":
        parts.append(_okf_line(entry, session, clock or session.clock))
    if entry.kind == "attachment":
        parts.append(
            Text(f"attachment · {entry.mime_type or 'unknown type'} · {entry.size_bytes:,} bytes", style="dim")
        )
    mark = session.marks.get(entry.path)
    if mark is not None:
        verb = {"read": "read", "listed": "listed", "wrote": "written"}[mark.kind]
        when = ago(session.now() - mark.at)
        change = f" · {mark.change}" if mark.change else ""  # what an agent's write changed
        parts.append(
            Text(
                f"● {verb} by {shown_agent(mark.agent)} {'just now' if when == 'now' else when + ' ago'}{change}",
                style=Style(color=session.colors(mark.agent)),
            )
        )
    return Group(*(spans.tidy(p) if isinstance(p, Text) else p for p in parts))


def _value(value: Any) -> str:
    """A frontmatter value as Obsidian's properties show it (true, lists comma-separated; an
    empty property empty, not YAML's `null`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(_value(v) for v in value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return ""
    return str(value)


_WIKI = re.compile(r"\[\[([^\[\]\n]+)\]\]")
LINK = Style(underline=True)


def _shown(value: str, link: Style) -> Text:
    """A property's value with its wiki links (`"[[Movies]]"`) shown as Obsidian's properties
    show them: by their alias or name, drawn as links (the Links box below follows them)."""
    if "[[" not in value:
        return Text(value)
    out = Text()
    pos = 0
    for m in _WIKI.finditer(value):
        inner = m.group(1)
        s, e, heading, alias = mdlex.wiki_parts(inner)
        target = inner[s:e]
        label = alias or (f"{target} › {heading}" if target and heading else target or f"§ {heading}")
        out.append(value[pos : m.start()])
        out.append(label, link)
        pos = m.end()
    out.append(value[pos:])
    return out


class KeyValues:
    """Frontmatter as two aligned columns, values wrapped under their column.

    A rich Table draws the same, but measures every cell on each of Textual's layout passes:
    this renders in one pass, so opening a note stays cheap while the list scrolls."""

    def __init__(self, rows: list[tuple[str, Text]], key_width: int) -> None:
        self.rows = rows
        self.key_width = key_width

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.key_width + 4, options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        kw = self.key_width
        value_width = max(4, width - kw - 4)  # " key  value " : a space either side of each
        bold = Style(bold=True)
        blank = " " * (kw + 3)
        for key, value in self.rows:
            shown = Text(key)
            shown.truncate(kw, overflow="ellipsis")
            lines = value.wrap(console, value_width, overflow="fold") if value else [Text()]
            for i, line in enumerate(lines):
                if i:
                    head = [Segment(blank)]
                else:
                    head = [Segment(" "), Segment(shown.plain + " " * (kw - shown.cell_len + 2), bold)]
                tail = Segment(" " * max(0, value_width - line.cell_len + 1))
                yield from spans.separate([*head, *line.render(console), tail])
                yield Segment.line()


def note_meta(entry: Entry, link: Style = LINK, *, template: bool = False) -> Any:
    """The frontmatter table (`link`: how a property's wiki link is drawn). `template`: the note is
    in one of the vault's templates folders, whose placeholders are not YAML until the template is
    applied, so frontmatter that does not parse there is no error (as the Broken tab judges it)."""
    if entry.kind != "note":
        return ""
    if entry.frontmatter_error and template:
        return Text("template: its frontmatter is filled in when the template is applied", style="dim italic")
    if entry.frontmatter_error:
        return Text(f"frontmatter error: {entry.frontmatter_error}", style="bold red")
    if not entry.frontmatter:
        return Text("no frontmatter", style="dim italic")
    key_width = min(18, max(len(str(k)) for k in entry.frontmatter))
    rows = []
    for key, value in entry.frontmatter.items():
        shown = _value(value)
        if len(shown) > 300:
            shown = shown[:299] + "…"
        rows.append((str(key), _shown(shown, link)))
    return KeyValues(rows, key_width)
