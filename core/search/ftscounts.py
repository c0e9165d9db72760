"""How many notes each common word is in, counted once a full-text index is synced and kept with it.

BM25 ranks by each query word's document frequency. SQLite's FTS5 keeps no such count: it walks the
word's whole doclist to get it, and for a word most notes hold that walk is the most expensive part of a
search (milliseconds in a big vault), paid again by every search that asks a word for the first time
since the index last changed. One pass of `fts5vocab` over the whole index counts every word at once for
about the price of a few dozen such walks, so the writer takes that pass when a whole sync ends and the
readers look the common words up instead of walking them. A write of a few notes moves them by the common
words of each note it takes out and puts in (`Tally`, in FTS5's own tokens: the numbers a walk would give);
a bigger one drops them (the readers count for themselves again). Either way the writer counts anew once the
writes pause, and keeps what it counted.

The counts are kept in the index's `meta` table beside a key of the index's state (FTS5's structure
record, which every write changes, and the number of notes), so a start whose sync changed nothing loads
them rather than counting again, and counts from any other state are never taken for these.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import NamedTuple

from vaultwatch.core.search.notetext import distinct_tokens

COMMON_MIN_NOTES = 500  # a word in fewer notes costs a search little to count itself
GIVE_UP_STEPS = 100  # SQLite steps between two questions of `give_up`
STRUCTURE_ROWID = 10  # FTS5's structure record in `<table>_data`: rewritten by every write to the index


class Counts(NamedTuple):
    notes: int  # rows in `docs`
    words: dict[str, int]  # token -> notes it is in, for tokens in COMMON_MIN_NOTES notes or more


class Tally:
    """The counts as a write leaves them: those it began from, moved by each note it takes out of the index or
    puts in (its values for the full-text table's columns, in order), by the common words the note holds."""

    def __init__(self, con: sqlite3.Connection, counts: Counts) -> None:
        self._con = con  # the writer's: its temp tables tokenise
        self.notes = counts.notes
        self.words = dict(counts.words)

    def taken_out(self, values: Sequence[str | None]) -> None:
        self._move(values, -1)

    def put_in(self, values: Sequence[str | None]) -> None:
        self._move(values, 1)

    def _move(self, values: Sequence[str | None], step: int) -> None:
        self.notes += step
        words = self.words
        if not words:  # no common word (a small vault): nothing to tokenise for
            return
        # a note's words in any of its columns are what its row of the index holds
        for term in distinct_tokens(self._con, " ".join(v for v in values if v)):
            if term in words:  # (a word that becomes common is walked by the searches until the next count)
                words[term] += step

    def counts(self) -> Counts:
        return Counts(self.notes, self.words)


def state_key(con: sqlite3.Connection) -> str | None:
    """A key of the index's current content, or None when it has no structure record yet."""
    row = con.execute("SELECT block FROM fts_data WHERE id = ?", (STRUCTURE_ROWID,)).fetchone()
    if row is None or not isinstance(row[0], bytes):
        return None
    notes = con.execute("SELECT count(*) FROM docs").fetchone()[0]
    return f"{notes}:{hashlib.sha256(row[0]).hexdigest()}"


def _counts(key: str, words: dict[str, int]) -> Counts:
    return Counts(int(key.split(":", 1)[0]), words)  # the note count leads `state_key`'s key


def loaded(con: sqlite3.Connection, key: str) -> Counts | None:
    """The counts kept for the index state `key`, or None (none kept, kept for another state, damaged)."""
    got = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('counts_key', 'counts')").fetchall())
    if got.get("counts_key") != key or "counts" not in got:
        return None
    try:
        raw = json.loads(got["counts"])
    except ValueError:
        return None
    if not isinstance(raw, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in raw.values()):
        return None
    return _counts(key, raw)


def counted(con: sqlite3.Connection, key: str, give_up: Callable[[], bool] | None = None) -> Counts | None:
    """Count the common words in one pass over the index and keep the counts under `key`.
    Called by the index's one writer, between its write transactions. None when `give_up()` said so
    during the pass (asked every few steps: a change waiting to be indexed need not wait for the count)."""
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vw_rows USING fts5vocab(main, fts, row)")
    if give_up is not None:
        con.set_progress_handler(lambda: 1 if give_up() else 0, GIVE_UP_STEPS)
    try:
        words = dict(con.execute("SELECT term, doc FROM temp.vw_rows WHERE doc >= ?", (COMMON_MIN_NOTES,)).fetchall())
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            return None
        raise
    finally:
        if give_up is not None:
            con.set_progress_handler(None, 0)
    con.execute("BEGIN IMMEDIATE")
    try:
        con.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [("counts_key", key), ("counts", json.dumps(words, separators=(",", ":")))],
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return _counts(key, words)


def kept_or_counted(con: sqlite3.Connection, give_up: Callable[[], bool] | None = None) -> Counts | None:
    """The counts of the index's current state: kept ones when they are for it, else counted now
    (None: no index yet, or `give_up()` said so during the count)."""
    key = state_key(con)
    if key is None:
        return None
    return loaded(con, key) or counted(con, key, give_up)
