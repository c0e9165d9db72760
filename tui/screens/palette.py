"""Command-palette (ctrl+p) provider: open a note by fuzzy title.

The other vault commands (switch panel, toggle follow, set the as-of date, copy the bridge
configuration) are the app's system commands, so they also show before anything is typed.
"""

from __future__ import annotations

import asyncio
import re
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import Hit, Hits, Matcher, Provider
from textual.content import Content
from textual.markup import escape

from vaultwatch.core.model import NOTE

if TYPE_CHECKING:
    from vaultwatch.tui.app import VaultwatchApp

MAX_HITS = 60
BATCH = 4000


class NoteCommands(Provider):
    """Every note, matched fuzzily by title (and path)."""

    async def search(self, query: str) -> Hits:
        app = cast("VaultwatchApp", self.app)  # Textual types a provider's app as App[object]
        session = getattr(app, "session", None)
        query = query.strip()
        if session is None or not query:
            return
        matcher = self.matcher(query)
        # a cheap subsequence pre-filter in C keeps 100k titles responsive
        rx = re.compile(".*?".join(map(re.escape, query)), re.IGNORECASE)
        found: list[tuple[float, str, str]] = []
        entries = session.snapshot.entries
        for start in range(0, len(entries), BATCH):
            for e in entries[start : start + BATCH]:
                if e.kind != NOTE or rx.search(e.title) is None:
                    continue
                score = matcher.match(e.title)
                if score > 0:
                    found.append((score, e.title, e.path))
            await asyncio.sleep(0)
        found.sort(key=lambda t: (-t[0], t[2]))
        for score, title, path in found[:MAX_HITS]:
            yield Hit(
                score, _highlight(matcher, title), partial(app.main.open_note, path), text=title, help=escape(path)
            )


def _highlight(matcher: Matcher, title: str) -> Content:
    """The title with the matched letters marked; literal text (Matcher.highlight parses markup)."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize("bold underline", offset, offset + 1)
    return content
