"""The full-text index's rows as the first build writes them: the docs row of a note, the new
notes' rows inserted in one statement per table, and FTS5's merge settings during a first build.

Shared by the app's writer thread (core.search.ftsbuild) and a big first build's own process
(core.search.ftsfirst), which both build on this module.
"""

from __future__ import annotations

import sqlite3

from vaultwatch.core.model import Entry
from vaultwatch.core.search.ftsprep import Prepared
from vaultwatch.core.search.notetext import COLUMNS, FIELD_COLUMNS

_MERGE_DEFAULTS = (("automerge", 4), ("crisismerge", 16))  # FTS5's own
_MERGE_BUILDING = (("automerge", 0), ("crisismerge", 2000))


def doc_of(e: Entry) -> tuple:
    """The docs table's leading columns for a note: path, size, mtime_ns, inode and its OKF columns."""
    return (e.path, e.size_bytes, e.mtime_ns, e.inode, *okf_cols(e))


def insert_rows(con: sqlite3.Connection, new: list[tuple[int, tuple, Prepared]]) -> None:
    """Insert (row id, `doc_of` the note, its prepared row) for notes the index does not hold:
    each table in one statement (the writer thread's first build, and core.search.ftsfirst's process)."""
    con.executemany(
        f"INSERT INTO docs (id, {DOC_COLUMNS}) VALUES (?, {DOC_MARKS})",
        [(i, *doc, *(row.fields or ()), row.blob, row.fterms) for i, doc, row in new],
    )
    con.executemany(
        f"INSERT INTO fts (rowid, {', '.join(COLUMNS)}) VALUES ({', '.join('?' * (1 + len(COLUMNS)))})",
        [(i, doc[0], *(row.fields or ()), row.body) for i, doc, row in new],
    )
    con.executemany(
        f"INSERT INTO ftsf (rowid, {', '.join(FIELD_COLUMNS)}) VALUES ({', '.join('?' * (1 + len(FIELD_COLUMNS)))})",
        [(i, *(row.fields or ())[: len(FIELD_COLUMNS)]) for i, _doc, row in new],
    )


def merging(con: sqlite3.Connection, building: bool, merge: bool = False) -> None:
    """FTS5's merge settings for a first build (no automatic merges), or back to its defaults,
    merging each table's segments into one first when `merge`."""
    con.execute("BEGIN IMMEDIATE")
    try:
        for table in ("fts", "ftsf"):
            if merge:
                con.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
            for key, value in _MERGE_BUILDING if building else _MERGE_DEFAULTS:
                con.execute(f"INSERT INTO {table} ({table}, rank) VALUES (?, ?)", (key, value))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


_DOC_NAMES = (
    "path, size, mtime_ns, inode, deprecated, stale_day, stale_at, name, title, aliases, headings, props, body, fterms"
).split(", ")
DOC_COLUMNS = ", ".join(_DOC_NAMES)
DOC_MARKS = ", ".join("?" * len(_DOC_NAMES))  # a value for each of DOC_COLUMNS


def okf_cols(e: Entry) -> tuple:
    """The docs table's OKF columns of a note: deprecated, stale day (ordinal), stale instant."""
    return (
        e.okf_status == "deprecated",
        e.stale_date.toordinal() if e.stale_date is not None else None,
        e.stale_instant.timestamp() if e.stale_instant is not None else None,
    )


__all__ = ["DOC_COLUMNS", "DOC_MARKS", "doc_of", "insert_rows", "merging", "okf_cols"]
