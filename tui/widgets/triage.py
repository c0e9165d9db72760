"""The centre tabs: every note, then the triage views (deprecated, stale, trust tier, broken).

Each pane names its base core Query; the app narrows it by the folder scope and the filter
bar, runs it off the UI thread and hands the result back (`show`). Counts on the tab labels
come from the same queries.

A pane made with `lazy=True` composes its list only when `materialize()` is awaited (after
the first frame, or when its tab is opened first): hidden tabs cost the first paint nothing.
Its list object exists from the start, so rows shown before it is mounted wait for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static, TabPane

from vaultwatch.core.model import Entry
from vaultwatch.core.query import problems
from vaultwatch.core.query.listing import Query
from vaultwatch.core.review import triageviews
from vaultwatch.tui.session import Session
from vaultwatch.tui.widgets import spans
from vaultwatch.tui.widgets.doclist import DocList, sort_label
from vaultwatch.tui.widgets.problems import ProblemList, problem_count, problems_of
from vaultwatch.tui.widgets.rowlist import RowList

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from vaultwatch.core.index.snapshot import Snapshot
    from vaultwatch.core.model import Skipped

LABEL_LEVELS = 4  # tab labels from the widest (0) to the most compact (3); the widest that fits is used
TIER_GLYPHS = {"unverified": "✗", "machine-confirmed": "◐", "human-reviewed": "✓"}  # legend: `?` help
SHORT_WORDS = {"Deprecated": "Depr"}


def count_text(n: int, level: int) -> str:
    """A count as a tab shows it: 5,436 wide; 5.4k, 12k, 1.2M compact (level >= 1)."""
    if level == 0 or n < 1000:
        return f"{n:,}"
    if n < 10_000:
        return f"{n / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"


def tab_label(word: str, n: int, level: int) -> str:
    return f"{SHORT_WORDS.get(word, word) if level >= 2 else word} {count_text(n, level)}"


class TriagePane(TabPane):
    """A tab holding one list; subclasses define the base query."""

    label = "Notes"

    def __init__(self, session: Session, pane_id: str, *, lazy: bool = False) -> None:
        super().__init__(self.label, id=pane_id)
        self.session = session
        self.lazy = lazy
        self._list = self.make_list()
        self._pending: tuple[Sequence, str | None, bool] | None = None

    def make_list(self) -> RowList:
        """The pane's list widget (built once, with the pane)."""
        raise NotImplementedError

    def extras(self) -> list[Widget]:
        """Widgets shown above the list."""
        return []

    def _parts(self) -> Iterator[Widget]:
        yield from self.extras()
        yield self._list

    def compose(self) -> ComposeResult:
        if not self.lazy:
            yield from self._parts()

    async def materialize(self) -> None:
        """Mount the list of a lazy pane (no-op once done), then show what waited for it."""
        if not self.lazy:
            return
        self.lazy = False
        await self.mount_all(list(self._parts()))
        self.on_materialized()
        if self._pending is not None:
            rows, empty, keep = self._pending
            self._pending = None
            self._list.set_rows(rows, empty=empty, keep=keep)

    def on_materialized(self) -> None:
        """The pane's widgets are mounted (subclasses fill in what they show)."""

    @property
    def ready(self) -> bool:
        """True once the list is mounted."""
        return self._list.is_mounted

    @property
    def rowlist(self) -> RowList:
        return self._list

    def base_query(self) -> Query:
        return Query()

    def count_queries(self) -> dict[str, Query]:
        """Queries whose totals the tab label and pane header show."""
        return {"": self.base_query()}

    def label_for(self, counts: dict[str, int], level: int = 0) -> str:
        """The tab's label for these counts, at a compactness level (0 .. LABEL_LEVELS - 1)."""
        return tab_label(self.label, self.total(counts), level)

    def total(self, counts: dict[str, int]) -> int:
        """The number the tab shows."""
        return counts.get("", 0)

    def count(self, query: Query, snapshot: Snapshot) -> int:
        """One of the tab's counts (`count_queries`), off the UI thread: the notes `query`
        selects (no order needed: the cheapest sort)."""
        return self.session.query(replace(query, limit=1, sort="path", descending=False), snapshot).total

    def show(self, rows: Sequence, *, empty: str | None = None, keep: bool = True) -> None:
        if not self._list.is_mounted:
            self._pending = (rows, empty, keep)
            return
        self._list.set_rows(rows, empty=empty, keep=keep)

    def set_empty(self, text: str) -> None:
        """Change what an empty list says (indexing progress)."""
        self._list.set_empty(text)

    def show_counts(self, counts: dict[str, int]) -> None:
        """Update in-pane count displays (the tab label is set by the owner)."""

    def view_query(self, category: str) -> Query:
        """The triage view's query, the one agents' `triage` gets too (core.review.triageviews):
        OKF's own on a bundle, else the person's rule or the journal's notes."""
        session = self.session
        return triageviews.query(session.snapshot, category, session.triage_rules, session.reviews)

    def rule_line(self, category: str) -> str:
        """The one line saying which rule the tab applies, and where to change it."""
        session = self.session
        return triageviews.rule(session.snapshot, category, session.person_rules, session.reviews)


class NotesPane(TriagePane):
    label = "Notes"

    def make_list(self) -> RowList:
        return DocList(self.session, id="list-notes")


class DeprecatedPane(TriagePane):
    label = "Deprecated"

    def make_list(self) -> RowList:
        return DocList(self.session, id="list-deprecated")

    def extras(self) -> list[Widget]:
        self._info = Static(id="deprecated-info", classes="pane-info")
        return [self._info]

    def on_mount(self) -> None:
        self.show_counts({})

    def on_materialized(self) -> None:
        self.show_counts({})

    def base_query(self) -> Query:
        return self.view_query("deprecated")

    def show_counts(self, counts: dict[str, int]) -> None:
        info = getattr(self, "_info", None)
        if info is not None and info.is_mounted:
            # a bundle's deprecated is OKF's own status: the line is for the person's rules
            info.display = not self.session.snapshot.is_bundle
            info.styles.height = "auto"  # the rule and where it is set wrap rather than being cut
            info.update(Text(self.rule_line("deprecated")))


class StalePane(TriagePane):
    label = "Stale"

    def make_list(self) -> RowList:
        return DocList(self.session, sort="overdue", stale_header="Overdue", id="list-stale")

    def extras(self) -> list[Widget]:
        self._info = Static(id="stale-info", classes="pane-info")
        return [self._info]

    def on_mount(self) -> None:
        self.show_counts({})

    def on_materialized(self) -> None:
        self.show_counts({})

    def base_query(self) -> Query:
        return self.view_query("stale")

    def on_doc_list_sort_changed(self, message: DocList.SortChanged) -> None:
        self.show_counts({})  # the header says the sort (the message goes on to the screen)

    def show_counts(self, counts: dict[str, int]) -> None:
        text = Text()
        text.append("Stale as of ")
        text.append(self.session.clock.today().isoformat(), style="bold")
        rowlist = self._list
        if isinstance(rowlist, DocList) and (rowlist.sort, rowlist.descending) != ("overdue", False):
            text.append(f" · by {sort_label(rowlist.sort, rowlist.descending)} (s: most overdue first) · ")
        else:
            text.append(" · most overdue first · ")
        text.append("d", style="bold")
        text.append(" sets the date")
        info = getattr(self, "_info", None)
        if not self.session.snapshot.is_bundle:  # the person's rule, not OKF's stale_after
            text.append("\n" + self.rule_line("stale"))
            if info is not None:
                info.styles.height = "auto"  # the rule wraps rather than being cut
        if info is not None and info.is_mounted:
            info.update(spans.tidy(text))


class TierBar(Static):
    """The three trust tiers with their counts; click one (or press [ and ]) to list it."""

    class Picked(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def action_pick(self, index: int) -> None:
        self.post_message(self.Picked(index))


JOURNAL_WORDS = {"unverified": "unreviewed", "human-reviewed": "reviewed"}  # as the Trust column says them


class TrustPane(TriagePane):
    """On an OKF bundle, OKF's three tiers from `verified:` (a note a person attested that an agent
    changed since, and nobody has reviewed, is unverified); elsewhere the two a person who lets
    agents write needs, from the change journal: notes an agent changed that nobody has reviewed
    since, and notes whose agents' changes the person reviewed (core.review.triageviews)."""

    label = "Trust"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("[", "tier(-1)", "Prev tier", id="trust.prev"),
        Binding("]", "tier(1)", "Next tier", id="trust.next"),
    ]

    def __init__(self, session: Session, pane_id: str, *, lazy: bool = False) -> None:
        self.tier = 0
        self._counts: dict[str, int] = {}
        super().__init__(session, pane_id, lazy=lazy)

    def make_list(self) -> RowList:
        return DocList(self.session, id="list-trust")

    def extras(self) -> list[Widget]:
        self._bar = TierBar(id="tier-bar", classes="pane-info")
        return [self._bar]

    def on_mount(self) -> None:
        self.show_counts({})

    def on_materialized(self) -> None:
        self.show_counts({})

    def tiers(self) -> tuple[str, ...]:
        """The tiers this vault has: OKF's three on a bundle, else the journal's two."""
        return triageviews.tiers(self.session.snapshot)

    def base_query(self) -> Query:
        tiers = self.tiers()
        return self.view_query(tiers[min(self.tier, len(tiers) - 1)])

    def count_queries(self) -> dict[str, Query]:
        return {tier: self.view_query(tier) for tier in self.tiers()}

    def label_for(self, counts: dict[str, int], level: int = 0) -> str:
        """ "Trust ✗21 ◐10 ✓12": unverified, machine-confirmed, human-reviewed (off a bundle
        "Trust ✗2 ✓5": agent-changed and not reviewed, reviewed; the legend is in the help
        screen); the most compact level keeps the unverified count only."""
        tiers = self.tiers()[:1] if level >= 3 else self.tiers()
        return "Trust " + " ".join(f"{TIER_GLYPHS.get(t, '')}{count_text(counts.get(t, 0), level)}" for t in tiers)

    def show_counts(self, counts: dict[str, int]) -> None:
        self._counts = counts or self._counts
        bar = getattr(self, "_bar", None)
        if bar is None or not bar.is_mounted:
            return
        bundle = self.session.snapshot.is_bundle
        tiers = self.tiers()
        text = Text()
        for i, tier in enumerate(tiers):
            if i:
                text.append("  ")
            click = Style(meta={"@click": f"pick({i})"})
            chosen = i == min(self.tier, len(tiers) - 1)
            # the pads differ in style from the label (see tui.widgets.spans)
            pad = Style(reverse=True) + click if chosen else Style(dim=True) + click
            word = tier if bundle else JOURNAL_WORDS[tier]
            text.append(" ", pad)
            text.append(
                f"{word} {self._counts.get(tier, 0):,}", (Style(bold=True, reverse=True) if chosen else Style()) + click
            )
            text.append(" ", pad)
        spans.append(text, "   [ ] switch", "dim")
        # the chosen tier's rule (on a bundle too: the journal moves an attested note an agent
        # changed to unverified, which verified: alone does not explain), and off a bundle what v does
        bar.styles.height = "auto"
        text.append("\n" + self.rule_line(tiers[min(self.tier, len(tiers) - 1)]))
        if not bundle:
            if self.session.reviews.journal_on:
                text.append(
                    " · v marks it reviewed (the note is not changed)"
                    if not self.session.triage_rules.write_verified
                    else " · v marks it reviewed"
                )
        bar.update(spans.tidy(text))

    def on_tier_bar_picked(self, event: TierBar.Picked) -> None:
        self._set_tier(event.index)

    def action_tier(self, delta: int) -> None:
        self._set_tier((self.tier + delta) % len(self.tiers()))

    def _set_tier(self, index: int) -> None:
        if index != self.tier and index < len(self.tiers()):
            self.tier = index
            self.show_counts({})
            self.post_message(Requery())


class BrokenPane(TriagePane):
    label = "Broken"

    def make_list(self) -> RowList:
        return ProblemList(id="list-broken")

    def extras(self) -> list[Widget]:
        self._info = Static(id="broken-info", classes="pane-info")
        return [self._info]

    def base_query(self) -> Query:
        return Query(broken=True)

    def count(self, query: Query, snapshot: Snapshot) -> int:
        """The tab's number: the real problems of the notes `query` selects, and the skipped
        files (links to notes not yet written are listed, not counted)."""
        entries = self.session.query(replace(query, limit=None, sort="path", descending=False), snapshot).entries
        return problem_count(entries, snapshot, self.session.vault.root)

    def show(self, rows: Sequence, *, empty: str | None = None, keep: bool = True) -> None:
        super().show(rows, empty=empty, keep=keep)
        self.show_kinds(rows)

    def show_kinds(self, rows: Sequence) -> None:
        """The line above the list: how many problems of each kind it holds, in its order."""
        text = Text()
        found = problems.counts(rows)
        broken = sum(n for kind, n in found.items() if kind != problems.UNWRITTEN)
        text.append(f"{broken:,} problem{'' if broken == 1 else 's'}", style="bold")
        parts = [f"{n:,} {problems.LABELS[kind]}" for kind, n in found.items() if kind != problems.UNWRITTEN]
        if parts:
            text.append(": " + " · ".join(parts))
        unwritten = found.get(problems.UNWRITTEN, 0)
        if unwritten:
            text.append(f" · then {unwritten:,} link{'' if unwritten == 1 else 's'} to notes not yet written", "dim")
        info = getattr(self, "_info", None)
        if info is not None and info.is_mounted:
            info.update(spans.tidy(text))
        else:
            self._kinds = text

    def on_materialized(self) -> None:
        waiting = getattr(self, "_kinds", None)
        if waiting is not None:
            self._info.update(spans.tidy(waiting))


class Requery(Message):
    """A pane changed what it lists (tier, sort): the app re-runs its query."""


def rows_for(
    pane: TriagePane, entries: Sequence[Entry], skipped: Sequence[Skipped], snapshot: Snapshot | None = None
) -> Sequence[Any]:
    """The rows a pane's list shows for a query result (of `snapshot`)."""
    if isinstance(pane, BrokenPane) and snapshot is not None:
        vault = pane.session.vault
        return tuple(problems_of(entries, snapshot, vault.root, vault.root_real))
    return entries


PANES: tuple[tuple[str, type[TriagePane]], ...] = (
    ("notes", NotesPane),
    ("deprecated", DeprecatedPane),
    ("stale", StalePane),
    ("trust", TrustPane),
    ("broken", BrokenPane),
)
