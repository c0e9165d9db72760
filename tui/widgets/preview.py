"""The preview: a note's OKF facts and frontmatter table, its rendered body, links and backlinks.

The note is read, lexed, rendered and wrapped in a thread worker (never on the UI thread), in
slices with rests between them (and the garbage it makes collected there: `_rested`): the
first screenful is shown as soon as it is ready and the rest extends the body
(`NoteBody`, drawn with the Line API) while keys stay live; wiki links are clickable (and listed below the body for the keyboard: tab to the list, enter to follow);
`backspace` goes back. The notes it embeds are read by the same worker (core.links.embeds), never
on the UI thread. The preview re-reads its note when the index says it, or a note it embeds,
changed. Its
header (title, OKF facts, frontmatter table) is built in `notehead`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group
from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.color import Color, ColorParseError
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from vaultwatch.core.clock import Clock
from vaultwatch.core.disk.reader import note_bytes
from vaultwatch.core.errors import VaultError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.links import resolve as linkmap
from vaultwatch.core.links.embeds import EmbedReader
from vaultwatch.core.links.graph import missing_part
from vaultwatch.core.markdown.lines import Line, iter_styled_lines
from vaultwatch.core.markdown.parse import decode
from vaultwatch.core.memory import collect, pending_objects
from vaultwatch.core.model import Entry
from vaultwatch.core.query import problems
from vaultwatch.tui.flows.similarity import similar_paths
from vaultwatch.tui.session import Session
from vaultwatch.tui.widgets import spans
from vaultwatch.tui.widgets.notebody import NoteBody
from vaultwatch.tui.widgets.notedoc import NoteDoc, note_doc
from vaultwatch.tui.widgets.notehead import note_head, note_meta
from vaultwatch.tui.widgets.noterender import Context, Styles, body_lines, theme_styles, without_frontmatter
from vaultwatch.tui.widgets.problems import Problem
from vaultwatch.tui.widgets.sizing import content_sized_free, expect_size

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.worker import Worker

    from vaultwatch.core.model import Link

MAX_READ_BYTES = 4 * 1024 * 1024
MAX_LINES = 10_000  # source lines rendered (then a line says how many more there are)
FIRST_LINES = 80  # display lines in the first batch: a screenful at 240x70
FIRST_CHARS = 16_000  # a longer note's first screen is lexed from a prefix this long (~4 ms)
WORK_S = 0.002  # the worker renders this long, then rests REST_S (keys stay live meanwhile)
REST_S = 0.003
FIRST_PAINT_WAIT_S = 0.5  # the worker waits (at most) this long for the first screen to be painted
BATCH_S = 0.1  # the body's height follows the rendered lines at most this often
YOUNG_OBJECTS = 2_000  # the worker collects the young generations itself past this many (_rested)


def _rested(worker: Worker[Any]) -> bool:
    """Between two of the worker's slices: collect the young generations once YOUNG_OBJECTS
    objects piled up, then hand the interpreter to the UI thread for REST_S. False when the load
    was cancelled.

    The UI thread gets the interpreter at once (a thread that holds it makes every hop of the
    event loop wait its switch interval, 5 ms). The collection: the app collects garbage itself
    (tui.gcpolicy), when input is quiet, or, while keys come, once 100,000 young objects piled
    up; a 5,000-line note's lexed lines and rich Texts are most of that many, so the pass over
    all of them (30-45 ms at 100k notes) fell on the UI thread between two keys. A pass over the
    few thousand of the last slices takes 0.1-1 ms here, and what survives it (the note's lines)
    goes to the old generation, out of the collector's young passes."""
    if pending_objects() >= YOUNG_OBJECTS:
        collect(1)
    time.sleep(REST_S)
    return not worker.is_cancelled


def _lexed(text: str, worker: Worker[Any]) -> list[Line] | None:
    """The whole note's lines (as noterender.body_lines), read from the lexer in slices of
    WORK_S with a rest after each (None: the load was cancelled)."""
    lines: list[Line] = []
    found = iter_styled_lines(text)
    deadline = time.perf_counter() + WORK_S
    for line in found:
        if line is not None:  # (None: between the lexer's passes over the whole text)
            lines.append(line)
        if time.perf_counter() >= deadline:
            if not _rested(worker):
                return None
            deadline = time.perf_counter() + WORK_S
    return without_frontmatter(lines)


@dataclass(frozen=True, slots=True)
class Rendered:
    """Everything the preview shows for one note, built off the UI thread."""

    path: str
    entry: Entry
    head: Any
    meta: Any
    body: NoteDoc
    links: list
    backlinks: tuple[str, ...]
    outgoing: list  # the index's outgoing links, properties' too: the Links box
    complete: bool = True
    similar: tuple[str, ...] = ()  # notes like this one, by meaning (tui.flows.similarity)
    first_line: int = 1  # the file's line number of the body's first source line (after the frontmatter)


class Preview(VerticalScroll, can_focus=True):
    """Preview of one note (or of a skipped file's problem)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("backspace,b", "back", "Back", id="preview.back"),
    ]

    # sized by the main screen, never by its content (tui.widgets.sizing): opening a note of
    # another length cost one layout more, 20-30 ms at 160x50, in front of the next key
    virtual_size = content_sized_free()

    class FollowLink(Message):
        """A link in the body was clicked."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Opened(Message):
        """The preview now shows `path` (None: nothing)."""

        def __init__(self, path: str | None) -> None:
            super().__init__()
            self.path = path

    def __init__(self, session: Session, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.session = session
        self._body_width: int | None = None  # what tables in the body are fitted to
        self.path: str | None = None
        self.entry: Entry | None = None
        self.wanted: str | None = None  # the note asked for last (shown, or on its way): triage's target
        self.history: list[str] = []
        self.links: list = []  # the body's links, by their `@click` index
        self.outgoing: list = []  # (Link, resolved path) of the note's links, its properties' too
        self.backlinks: tuple[str, ...] = ()
        self.similar: tuple[str, ...] = ()
        self.head_text = ""  # the header as plain text (for tests and the follow-mode status)
        self._head = Static(Text("Select a note to preview it", style="italic"), id="preview-head")
        # the rest is mounted after the app's first frame (build_parts): the first frame shows
        # only the header's "Select a note"
        self._meta = Static("", id="preview-meta")
        self._body = NoteBody(id="preview-body")
        self._seq = 0  # the load whose batches the body takes (a later load drops an earlier one's)
        self._applied_seq = 0  # the load whose first screen is shown
        self._first_line = 1  # the shown note's file line of its body's first line
        self._goto: tuple[str, int | None] | None = None  # (path, file line) to scroll to once shown
        self.goto_y: int | None = None  # the scroll offset the last goto asked for (tests)
        self._links = OptionList(id="preview-links")
        self._built = False
        self._pending_parts: tuple | None = None
        self._styles: tuple[str, Styles] | None = None  # (theme name, the body's styles for it)

    def compose(self) -> ComposeResult:
        yield self._head

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        """Draw the note again in the new theme's colours."""
        if self.path is not None and self.entry is not None:
            self._load(self.path, self.session.snapshot, self.session.clock, True)

    @property
    def built(self) -> bool:
        """True once the body and links widgets are mounted."""
        return self._body.is_mounted

    async def build_parts(self) -> None:
        """Mount the frontmatter, body and links widgets (once), then show what waited."""
        if self._built:
            return
        self._built = True
        await self.mount(self._meta, self._body, self._links)
        if self._pending_parts is not None:
            parts, self._pending_parts = self._pending_parts, None
            meta, body, links, backlinks, complete = parts
            self._set_parts(meta, body, links, backlinks, complete=complete, similar=self.similar)
        elif not self._links.option_count:
            self._links.display = False

    # -- opening -------------------------------------------------------------------------
    def on_resize(self) -> None:
        width = self._measure_body()
        if width != self._body_width:
            self._body_width = width
            if self.path is not None and self.entry is not None:  # refit the tables
                self._load(self.path, self.session.snapshot, self.session.clock, True)

    def _measure_body(self) -> int | None:
        # the body's width with a vertical scrollbar (a long note has one)
        width = self.scrollable_content_region.width - (
            0 if self.show_vertical_scrollbar else self.styles.scrollbar_size_vertical
        )
        return width if width > 0 else None

    def show(self, path: str | None, *, push: bool = False, keep_scroll: bool = False) -> None:
        """Preview the note at `path` (push: remember the current one for `back`)."""
        if self._body_width is None:
            self._body_width = self._measure_body()
        if path is None:
            self._clear("Select a note to preview it")
            return
        if path == self.wanted and not keep_scroll:
            # shown or on its way (the list's cursor catching up with a note opened elsewhere):
            # loading it again would start a long note's render over and scroll it home
            return
        if push and self.path is not None and self.path != path:
            if not self.history:  # `back` becomes available: the footer shows it
                self.refresh_bindings()  # (only then: the footer is built anew each time, 10-30 ms)
            self.history.append(self.path)
            del self.history[:-100]
        self.wanted = path
        self._load(path, self.session.snapshot, self.session.clock, keep_scroll)

    def show_problem(self, problem: Problem) -> None:
        """Preview a broken file: the note itself when indexed, scrolled to the problem's line,
        else the scan's reason."""
        if problem.entry is not None:
            self.goto_line(problem.path, problem.line)
            self.show(problem.path)
            return
        self.path, self.entry = problem.path, None
        self.wanted = None
        self._set_head(
            Group(Text(problem.path, style="bold"), Text(f"skipped by the scan: {problem.message}", style="red"))
        )
        self.outgoing = []
        self._set_parts("", [], [], ())
        self.post_message(self.Opened(None))

    def goto_line(self, path: str, line: int | None) -> None:
        """Scroll the note at `path` to the file's `line` once it is shown (now, if it is)."""
        self._goto = (path, line) if line else None
        if self._goto is not None and self.path == path and self.wanted == path and not self.rendering_first:
            self._scroll_to_goto()

    @property
    def rendering_first(self) -> bool:
        """True while the note asked for last is still on its way (its first screen not applied)."""
        return self._applied_seq != self._seq

    def _scroll_to_goto(self) -> None:
        goto = self._goto
        if goto is None or goto[0] != self.path or not self._body.is_mounted:
            return
        self._goto = None
        source_index = goto[1] - self._first_line  # type: ignore[operator]
        if source_index < 0:  # in the frontmatter: the top shows it
            self.scroll_home(animate=False, immediate=True)
            self.goto_y = 0
            return
        index = self._body.doc.display_index(source_index)
        self._body.grown()
        self.goto_y = self._body.virtual_region.y + index
        self.call_after_refresh(lambda: self.scroll_to(y=self.goto_y, animate=False, immediate=True))

    def _clear(self, message: str) -> None:
        self.path, self.entry = None, None
        self.wanted = None
        self._seq += 1
        self._set_head(Group(Text(message, style="italic")))
        self.outgoing = []
        self._set_parts("", [], [], ())
        self.post_message(self.Opened(None))

    def refresh_if_changed(self) -> None:
        """Re-read the note when a new index generation changed (or removed) it."""
        if self.path is None:
            return
        snapshot = self.session.snapshot
        current = snapshot.get(self.path)
        if current is None:
            if self.entry is not None:
                self._clear(f"{self.path} was deleted or moved")
            return
        embeds = self._body.doc.ctx.embeds if self._body.doc.ctx is not None else None
        embedded = embeds.entries if embeds is not None else {}
        if current is not self.entry or any(snapshot.get(p) is not e for p, e in embedded.items()):
            # the note, or a note it shows embedded, changed
            self._load(self.path, snapshot, self.session.clock, True)

    def refresh_marks(self) -> None:
        """Redraw the header (agent marks or the as-of date changed)."""
        if self.entry is not None and self.path is not None:
            self._set_head(note_head(self.entry, self.session, self.session.snapshot.is_bundle))

    def _load(self, path: str, snapshot: Snapshot, clock: Clock, keep_scroll: bool) -> None:
        styles = self._note_styles()  # read on the UI thread's last write; a frozen dataclass
        self._seq += 1
        upto = int(self.scroll_y) + max(self.size.height, 1) if keep_scroll else 0  # the lines on screen
        self._load_worker(path, snapshot, clock, keep_scroll, styles, self._seq, upto)

    def _note_styles(self) -> Styles:
        """The body's styles from the app's theme (headings primary, links accent, broken
        links error, code warning, embeds success, tags secondary), each readable (4.5:1)
        against the preview's background."""
        theme = self.app.theme
        if self._styles is None or self._styles[0] != theme:
            variables = self.app.get_css_variables()
            try:  # the preview's background (app.tcss: $surface), from the theme itself: the
                # widget's own colours may not have followed a theme change yet
                background = Color.parse(variables["surface"])
            except (KeyError, ColorParseError):
                background = self.background_colors[1]
            self._styles = (theme, theme_styles(variables, background))
        return self._styles[1]

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False, description="preview")
    def _load_worker(
        self, path: str, snapshot: Snapshot, clock: Clock, keep_scroll: bool, styles: Styles, seq: int, upto: int = 0
    ) -> None:
        worker = get_current_worker()
        width = self._body_width or 80
        entry = snapshot.get(path)
        if entry is None:
            self.app.call_from_thread(self._clear, f"{path} is not in the index")
            return
        head = note_head(entry, self.session, snapshot.is_bundle, clock)
        if entry.kind != "note":  # attachments and folders: their facts, never their bytes
            result = Rendered(
                path,
                entry,
                head,
                "",
                NoteDoc.fixed([]),
                [],
                linkmap.backlinks(snapshot, path),
                linkmap.outgoing(snapshot, path),
            )
            if not worker.is_cancelled:
                self.app.call_from_thread(self._apply, result, keep_scroll, seq)
            return
        try:
            data, _st = note_bytes(self.session.vault.root_real, path, limit=MAX_READ_BYTES + 1)  # core's safe open
        except (OSError, VaultError) as exc:
            self.app.call_from_thread(self._clear, f"cannot read {path}: {exc}")
            return
        text, _bad = decode(data[:MAX_READ_BYTES])
        # the Links box lists the note's links as the index (`vaultwatch links`, the agents'
        # get_links) has them: the properties' links too, which the rendered body has not
        outgoing = linkmap.outgoing(snapshot, path)
        if len(data) > MAX_READ_BYTES:
            text += f"\n\n… the note is larger than {MAX_READ_BYTES // (1024 * 1024)} MB; the rest is not shown"

        def resolve(link: Link) -> str | None:
            return linkmap.resolve(snapshot, path, link)

        def missing(link: Link, target: str) -> str | None:
            return missing_part(snapshot, target, link)

        # the notes it embeds are drawn in place, read as this note was (core's safe open), once
        # each, by this worker: the body's UI-thread renders leave an embed not read yet to it
        embeds = EmbedReader(snapshot, self.session.vault.root_real)

        def context() -> Context:
            return Context(resolve, [], styles, width, missing, embeds, path)

        # the first screen from the lexer's reading of a prefix (a 5,000-line note lexes in
        # ~0.1 s, its first 16 KB in ~4 ms); a reload of the note on screen (keep_scroll) reads
        # it whole and renders what is on screen before it replaces it: no flicker
        prefix = len(text) > 2 * FIRST_CHARS and not keep_scroll
        lines = body_lines(text, FIRST_CHARS if prefix else None)
        first_line = text.count("\n", 0, lines[0].start) + 1 if lines else 1
        cut = lines[-1].start + len(lines[-1].text) if lines else 0
        more = text.count("\n", cut) if prefix else 0  # the rest's lines: the scrollbar spans the note
        doc = note_doc(lines, context(), width, MAX_LINES, more=more, final=not prefix)
        doc.extend(max(FIRST_LINES, upto), 10.0)
        if worker.is_cancelled:
            return
        if not doc.complete:
            result = Rendered(
                path,
                entry,
                head,
                note_meta(entry, styles.link, template=self._template(path)),
                doc,
                doc.links,
                (),
                outgoing,
                complete=False,
                first_line=first_line,
            )
            painted = doc.painted = threading.Event()
            self.app.call_from_thread(self._apply, result, keep_scroll, seq)
            # the first screen is painted before the rest is lexed and rendered: a frame drawn
            # while this thread runs gets the interpreter only every switch interval (5 ms)
            painted.wait(FIRST_PAINT_WAIT_S)
            # what the app made showing the first screen is collected here (while keys come, the
            # collector's quiet pass does not)
            if not _rested(worker):
                return
            if prefix:
                whole_lines = _lexed(text, worker)
                if whole_lines is None:
                    return
                whole = note_doc(whole_lines, context(), width, MAX_LINES)
                self.app.call_from_thread(self._adopt, whole, seq)
                doc = whole
            posted = time.monotonic()
            while not doc.complete:
                doc.extend(None, WORK_S)
                if not _rested(worker):
                    return
                if time.monotonic() - posted >= BATCH_S:
                    self.app.call_from_thread(self._more, seq)
                    posted = time.monotonic()
            backlinks = linkmap.backlinks(snapshot, path)
            similar = similar_paths(self.session.vault, path)
            if not worker.is_cancelled:
                self.app.call_from_thread(self._finish, doc.links, backlinks, seq, similar)
            return
        backlinks = linkmap.backlinks(snapshot, path)
        similar = similar_paths(self.session.vault, path)
        if worker.is_cancelled:
            return
        result = Rendered(
            path,
            entry,
            head,
            note_meta(entry, styles.link, template=self._template(path)),
            doc,
            doc.links,
            backlinks,
            outgoing,
            similar=similar,
            first_line=first_line,
        )
        self.app.call_from_thread(self._apply, result, keep_scroll, seq)

    def _template(self, path: str) -> bool:
        """Whether `path` is in one of the vault's templates folders (read from Obsidian's settings
        as the Broken tab reads them: a render reads two small files at most)."""
        return problems.in_folders(path, problems.template_folders(self.session.vault.root))

    def _apply(self, r: Rendered, keep_scroll: bool, seq: int) -> None:
        if seq != self._seq:
            return  # a later load is on its way
        same = r.path == self.path
        self.path, self.entry = r.path, r.entry
        self.outgoing = r.outgoing
        self._set_head(r.head)
        self._set_parts(r.meta, r.body, r.links, r.backlinks, complete=r.complete, similar=r.similar)
        if not (keep_scroll and same):
            self.scroll_home(animate=False, immediate=True)
        self._applied_seq = seq
        self._first_line = r.first_line
        if self._goto is not None and self._goto[0] == r.path:
            self.call_after_refresh(self._scroll_to_goto)  # once the body is laid out
        self.post_message(self.Opened(r.path))

    def _adopt(self, doc: NoteDoc, seq: int) -> None:
        """The whole note's doc replaces the prefix's, keeping the lines rendered from it."""
        if seq != self._seq:
            return
        if self._body.is_mounted:
            self._body.adopt(doc, doc.adopt(self._body.doc))
        elif self._pending_parts is not None:
            meta, old, links, backlinks, complete = self._pending_parts
            doc.adopt(old)
            self._pending_parts = (meta, doc, doc.links, backlinks, complete)
        self.links = doc.links

    def _more(self, seq: int) -> None:
        if seq == self._seq and self._body.is_mounted:
            self._body.grown()

    def _finish(self, links: list, backlinks: tuple[str, ...], seq: int, similar: tuple[str, ...] = ()) -> None:
        if seq != self._seq:
            return
        if not self._body.is_mounted:  # the first batch waits for the parts: take the whole note
            meta, body, _links, _back, _complete = self._pending_parts or ("", NoteDoc.fixed([]), [], (), True)
            self._set_parts(meta, body, links, backlinks, similar=similar)
            return
        self._body.grown()
        self._set_links(links, backlinks, similar)

    @property
    def rendering(self) -> bool:
        """True while the body's later lines are still being rendered."""
        return not self._body.complete

    def _set_head(self, head: Group) -> None:
        self.head_text = "\n".join(t.plain for t in head.renderables if isinstance(t, Text))
        self._head.update(head)
        expect_size(self._head)

    def _set_parts(
        self,
        meta: Any,
        body: NoteDoc | list[Text],
        links: list,
        backlinks: tuple[str, ...],
        *,
        complete: bool = True,
        similar: tuple[str, ...] = (),
    ) -> None:
        self.links, self.backlinks, self.similar = links, backlinks, similar
        doc = body if isinstance(body, NoteDoc) else NoteDoc.fixed(body)
        if not self._body.is_mounted:
            self._pending_parts = (meta, doc, links, backlinks, complete)
            return
        self._meta.update(meta)
        expect_size(self._meta)
        self._body.set_doc(doc)
        self._set_links(links, backlinks, similar)

    def _set_links(self, links: list, backlinks: tuple[str, ...], similar: tuple[str, ...] = ()) -> None:
        self.links, self.backlinks, self.similar = links, backlinks, similar
        options = self._links
        options.clear_options()
        seen: set[str] = set()
        items: list[Option] = []
        for _link, target in self.outgoing:
            if target is None or target in seen or target == self.path:
                continue
            seen.add(target)
            items.append(Option(self._named("→ ", target), id=f"to:{target}"))
        for source in backlinks:
            items.append(Option(self._named("← ", source), id=f"from:{source}"))
        for other in similar:
            items.append(Option(self._named("≈ ", other), id=f"like:{other}"))
        options.add_options(items)
        options.display = bool(items)
        options.border_title = f"Links {len(seen)} · Backlinks {len(backlinks)}" + (
            f" · Similar {len(similar)}" if similar else ""
        )

    def _named(self, arrow: str, path: str) -> Text:
        """A linked note by its title, its folder dimmed after it (an attachment by its name)."""
        entry = self.session.snapshot.get(path)
        folder, _, name = path.rpartition("/")
        title = entry.title if entry is not None and entry.kind == "note" and entry.title else name
        text = Text(arrow, style="dim")
        text.append(title)
        if folder:
            text.append("  ")
            text.append(folder, style="dim")
        return spans.tidy(text)

    # -- following ------------------------------------------------------------------------
    def on_preview_follow_link(self, event: FollowLink) -> None:
        event.stop()
        if 0 <= event.index < len(self.links):
            target = self.links[event.index][1]
            if target is not None:
                self.open_target(target)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        self.open_target(option_id.split(":", 1)[1])

    def open_target(self, target: str) -> None:
        """Follow a link to `target` (a note, or an attachment shown by its facts)."""
        self.show(target, push=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return bool(self.history)  # nothing to go back to: not offered (the footer shows Esc)
        return True

    def action_back(self) -> None:
        if self.history:
            self.show(self.history.pop())
            if not self.history:  # nothing left to go back to: the footer stops offering it
                self.refresh_bindings()
        else:
            self.app.bell()
