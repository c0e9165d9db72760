"""The filter bar's full-text mode (`?words key:value…`, or ctrl+f): ranked hits from the same
core search the MCP `search` tool answers from (`Vault.search`: the full-text index, its ranking
and snippets, hybrid with note vectors when the semantic extra has them ready), scoped by the
bar's key:value terms, the folder tree's scope and nothing else.

Searches run in a thread, one at a time; a newer text supersedes a request not yet started
(typing fast never queues a search per key), and a result is painted only while its text is
still the bar's. While the full-text index is still being built, the list says how far it is
and the search is retried until it can answer. The list shows LIMIT hits at first; moving the
cursor near its end loads the next LIMIT (core's paging cursor), up to every hit.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text

from vaultwatch.core.errors import QueryError
from vaultwatch.core.query.listing import Query
from vaultwatch.core.review import triageviews
from vaultwatch.core.search.fulltext import SearchNotReady
from vaultwatch.tui.timers import once

if TYPE_CHECKING:
    from textual.timer import Timer

    from vaultwatch.core.search.results import SearchResult
    from vaultwatch.tui.screens.main import MainScreen

LIMIT = 50  # hits listed at first and added per page, a screen or so (each hit's snippet costs)
NEAR_END = 5  # rows from the end of the list at which the next page loads
RETRY = 0.3  # seconds between tries while the full-text index is being built


class SearchFlow:
    """The search of one main screen: the newest request wins, the rows go to its SearchList."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.active = False  # the bar is in search mode
        self.text = ""
        self.scope = Query()
        self._lock = threading.Lock()
        self._next: tuple[int, str, Query, str | None] | None = None  # (seq, text, scope, page cursor)
        self._busy = False
        self._seq = 0
        self._retry: Timer | None = None
        self.shown_seq = 0
        self._more: str | None = None  # the shown result's cursor to its next page
        self._result: SearchResult | None = None  # the shown result (its total, mode)
        self._paging = False  # a next page was asked for and not shown yet
        self._scope_now = Query()  # the scope (with the folder tree's) of the shown search

    @property
    def pending(self) -> bool:
        return self._busy or self._next is not None or self._retry is not None

    def state(self) -> str:
        """What keeps the search pending, in words (for tui.settle's error)."""
        return f"busy={self._busy} queued={self._next is not None} retry={self._retry is not None}"

    @property
    def more(self) -> bool:
        """More hits than the list shows are there to load."""
        return self._more is not None

    def load_more(self) -> None:
        """Add the next page of hits to the list (the cursor came near its end)."""
        if not self.active or self._more is None or self._paging:
            return
        self._paging = True
        self._queue((self.shown_seq, self.text, self._scope_now, self._more))

    def request(self, text: str, scope: Query) -> None:
        """Search `text` within `scope` (coalesced with requests made while one runs)."""
        session = self.screen.app.session
        if not self.active and session.config.semantic:
            session.vault.prepare_semantic_queries()  # the note vectors start (and the tokenizer loads) meanwhile
        self.active = True
        self.text, self.scope = text, scope
        self._scope_now = scope
        self.run()

    def run(self) -> None:
        """(Re-)run the current search: after a new text, a folder scope, an index change."""
        if not self.active:
            return
        if self._retry is not None:
            self._retry.stop()
            self._retry = None
        screen = self.screen
        lst = screen.search_list
        if not self.text.strip():
            self._seq += 1
            lst.set_rows(
                (), empty="Type words to search the text of every note (key:value terms narrow it)", keep=False
            )
            screen.status.set_part("search", None)
            return
        self._seq += 1
        self._more, self._paging = None, False
        session = screen.session
        # the bar's status:deprecated, stale: and trust: terms scope a search as they narrow a list
        scope = triageviews.narrow(self.scope, session.snapshot, session.triage_rules, session.reviews)
        self._scope_now = replace(scope, folder=screen.scope)
        self._queue((self._seq, self.text, self._scope_now, None))

    def _queue(self, request: tuple[int, str, Query, str | None]) -> None:
        with self._lock:
            self._next = request
            if self._busy:
                return
            self._busy = True
        self.screen.run_worker(self._work, thread=True, group="search", exit_on_error=False, description="search")

    def stop(self) -> None:
        """Leave search mode (the bar's text no longer starts with `?`)."""
        self.active = False
        self._seq += 1
        if self._retry is not None:
            self._retry.stop()
            self._retry = None
        self.screen.status.set_part("search", None)

    def _work(self) -> None:
        app = self.screen.app
        vault = app.session.vault
        try:
            while True:
                with self._lock:
                    request, self._next = self._next, None
                    if request is None or app.quitting:
                        self._busy = False
                        return
                seq, text, scope, page = request
                if seq != self._seq:
                    continue  # superseded while it waited
                try:
                    result = vault.search(text, scope, limit=LIMIT, cursor=page)
                except SearchNotReady as exc:
                    app.from_thread(self._not_ready, seq, exc.message)
                    continue
                except QueryError as exc:
                    app.from_thread(self._failed, seq, exc.message)
                    continue
                if self._next is None:
                    app.from_thread(self._add if page else self._show, seq, result)
        except BaseException:
            with self._lock:
                self._busy = False
            raise

    def _current(self, seq: int) -> bool:
        return seq == self._seq and self.active and self.screen.is_attached

    def _show(self, seq: int, result: SearchResult) -> None:
        if not self._current(seq):
            return
        self.shown_seq = seq
        self._result, self._more, self._paging = result, result.next_cursor, False
        lst = self.screen.search_list
        if result.hits and result.hits is lst.rows:
            # the same hits as listed (core answered a space or a stop word typed with its last
            # answer): the list is not drawn again, the status line alone is (a frame of one line
            # shows that this text is answered, as every answer is painted)
            self.screen.status.refresh()
        else:
            lst.set_rows(result.hits, empty=f"No note contains {self.text!r}", keep=False)
        self._say()
        self.screen.call_after_refresh(self.screen.app.answered)

    def _add(self, seq: int, result: SearchResult) -> None:
        """A next page: its hits go under the shown ones (the cursor stays where it is)."""
        self._paging = False
        if not self._current(seq) or seq != self.shown_seq:
            return
        lst = self.screen.search_list
        seen = {h.path for h in lst.rows}
        lst.set_rows((*lst.rows, *(h for h in result.hits if h.path not in seen)), keep=True)
        self._result, self._more = result, result.next_cursor
        self._say()
        lst.near_end()  # the cursor may still be near the end (a short page)

    def _say(self) -> None:
        result = self._result
        if result is None:  # nothing shown yet
            return
        listed = len(self.screen.search_list.rows)
        how = {"all": "", "any": " (not every word: notes with any)"}.get(result.match, "")
        shown = f"{listed:,} of " if self._more is not None else ""
        part = Text(f"{shown}{result.total:,} {'hit' if result.total == 1 else 'hits'}{how}", style="bold")
        if self._more is not None:
            part.append(" · more below", style="italic")
        if result.mode != "keyword":
            part.append(f" · {result.mode}")
        if result.index_stale:
            part.append(" · catching up", style="italic")
        self.screen.status.set_part("search", part)

    def _not_ready(self, seq: int, message: str) -> None:
        if not self._current(seq):
            return
        self.screen.search_list.set_rows((), empty=message, keep=False)
        self._retry = once(self.screen, RETRY, self._again)

    def _again(self) -> None:
        self._retry = None
        self.run()

    def _failed(self, seq: int, message: str) -> None:
        if self._current(seq):
            self.screen.search_list.set_rows((), empty=message, keep=False)
            self.screen.status.set_part("search", None)
