"""Snippets for a page of hits come from a small temporary FTS5 table (core/search/snippets.py): the page's
notes go in, their snippets come out, and the notes are gone again before the next page (the insert is
rolled back), so a later page never finds an earlier page's notes, and no transaction is left open."""

from __future__ import annotations

import sqlite3

from vaultwatch.core.search.notetext import COLUMNS
from vaultwatch.core.search.snippets import page_snippets


def content_db() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:", isolation_level=None)
    con.execute(f"CREATE TABLE content (id INTEGER PRIMARY KEY, {', '.join(COLUMNS)})")
    notes = {
        1: ("a.md", "a", "Harbour log", "", "", "", "The **harbour** opens at dawn; see [[Tides|the tides]]."),
        2: ("b.md", "b", "Harbour map", "", "", "", "Boats leave the harbour at noon."),
        3: ("c.md", "c", "Fields", "", "", "", "Nothing about the sea here, only fields and harbour walls."),
    }
    con.executemany(
        f"INSERT INTO content VALUES (?, {', '.join('?' * len(COLUMNS))})", [(i, *n) for i, n in notes.items()]
    )
    return con


def test_each_page_gets_its_own_notes_snippets_and_leaves_nothing_behind():
    con = content_db()
    first = page_snippets(con, "harbour", {1: "a.md", 2: "b.md"})
    assert first["a.md"][0] == "The **harbour** opens at dawn; see the tides."
    assert first["b.md"][0] == "Boats leave the **harbour** at noon."
    assert con.execute("SELECT count(*) FROM temp.vw_snip").fetchone()[0] == 0
    assert not con.in_transaction
    second = page_snippets(con, "harbour", {3: "c.md"})
    assert set(second) == {"c.md"}
    assert second["c.md"][0] == "Nothing about the sea here, only fields and **harbour** walls."
    assert con.execute("SELECT count(*) FROM temp.vw_snip").fetchone()[0] == 0
