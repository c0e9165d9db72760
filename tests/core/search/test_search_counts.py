"""The number of notes each common word is in, counted once when a whole sync of the full-text index ends and
kept with the index (core.search.ftscounts): a search looks those words up instead of walking their doclists,
and answers exactly as it did; a write, or counts kept for another state of the index, are never taken."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from vaultwatch.core.search import ftsbuild, ftscounts, reuse
from vaultwatch.core.search.notetext import COLUMNS, FIELD_COLUMNS, register_functions
from vaultwatch.core.vault import Vault

QUERIES = ["vault beacon", "vault 0007", "beacon", "vault note", "keeps the vault", "note 0012 beacon"]


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(ftscounts, "COMMON_MIN_NOTES", 4)  # the vault's common words: "vault", "note", "beacon"
    monkeypatch.setattr(reuse, "REUSE_SECONDS", 0.0)
    root = tmp_path / "vault"
    for i in range(40):
        extra = " and a beacon" if i % 3 == 0 else ""
        (root / "notes").mkdir(parents=True, exist_ok=True)
        (root / "notes" / f"Note {i:04d}.md").write_text(
            f"# Note {i:04d}\n\nThe vault keeps note {i:04d}{extra}.\n", encoding="utf-8"
        )
    return root


def opened(root: Path, cache: Path, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    v = Vault(root)
    v.load()
    assert v.wait_search_ready(60)
    return v


def built(root: Path, cache: Path, monkeypatch) -> Path:
    """The search index file of a vault opened, built and stopped."""
    v = opened(root, cache, monkeypatch)
    db = v.start_search().db_path
    v.stop()
    return db


def answers(v: Vault) -> dict[str, list]:
    return {q: [(h.path, h.score) for h in v.search(q, limit=50).hits] for q in QUERIES}


def traced_answers(v: Vault) -> tuple[dict[str, list], list[str]]:
    """`answers(v)`, and the SQL its searches ran."""
    index = v.start_search()
    with index._reader() as reader:  # given back to the pool: the searches borrow it next
        con = reader.con
    seen: list[str] = []
    con.set_trace_callback(seen.append)
    try:
        return answers(v), seen
    finally:
        con.set_trace_callback(None)


def meta(db: Path, key: str) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]
    finally:
        con.close()


def counts_in(db: Path) -> dict[str, int]:
    return json.loads(meta(db, "counts"))


def key_in(db: Path) -> str:
    return meta(db, "counts_key")


def until(done, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def set_counts(db: Path, words: dict[str, int], *, drop: str | None = None) -> None:
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("UPDATE meta SET value = ? WHERE key = 'counts'", (json.dumps(words),))
        if drop is not None:  # a note taken out of the index behind the writer's back: the next start puts it back
            register_functions(con)
            for table, cols in (("fts", COLUMNS), ("ftsf", FIELD_COLUMNS)):
                listed = ", ".join(cols)
                con.execute(
                    f"INSERT INTO {table} ({table}, rowid, {listed}) SELECT 'delete', id, {listed} "
                    "FROM content WHERE path = ?",
                    (drop,),
                )
            con.execute("DELETE FROM docs WHERE path = ?", (drop,))
    finally:
        con.close()


def truth(root: Path, tmp_path: Path, monkeypatch) -> dict[str, list]:
    v = opened(root, tmp_path / "fresh-cache", monkeypatch)
    try:
        return answers(v)
    finally:
        v.stop()


def test_a_search_looks_common_words_up_and_answers_the_same(root, tmp_path, monkeypatch):
    want = None
    monkeypatch.setattr(ftscounts, "COMMON_MIN_NOTES", 10**9)  # no word counted: every search walks its own
    v = opened(root, tmp_path / "uncounted", monkeypatch)
    try:
        want = answers(v)
    finally:
        v.stop()
    monkeypatch.setattr(ftscounts, "COMMON_MIN_NOTES", 4)
    v = opened(root, tmp_path / "counted", monkeypatch)
    try:
        db = v.start_search().db_path
        assert counts_in(db) == {
            **dict.fromkeys(("vault", "note", "keep", "the", "md"), 40),
            **dict.fromkeys(("beacon", "and", "a"), 14),
        }
        got, seen = traced_answers(v)
    finally:
        v.stop()
    assert got == want
    assert sum(len(hits) for hits in got.values()) > 40  # the queries find notes
    walked = {s for s in seen if "vw_rows WHERE term" in s}
    assert walked and not any(f"'{w}'" in s for s in walked for w in ("vault", "note", "beacon")), walked


def test_counts_kept_with_the_index_are_taken_by_the_next_start_and_counted_again_after_a_write(
    root, tmp_path, monkeypatch
):
    monkeypatch.setattr(ftsbuild, "COUNT_IDLE_S", 0.2)
    want = truth(root, tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    db = built(root, cache, monkeypatch)
    set_counts(db, {**counts_in(db), "vault": 1, "beacon": 2})  # wrong on purpose: shows whether they are read
    v = opened(root, cache, monkeypatch)
    try:
        assert answers(v) != want  # the kept counts were taken: nothing changed since they were counted
        before = key_in(db)
        (root / "notes" / "Note 0001.md").write_text("# Note 0001\n\nThe vault keeps note 0001.\n", encoding="utf-8")
        v.refresh_paths(["notes/Note 0001.md"])
        until(lambda: key_in(db) != before)  # the writes paused: counted again for the index as it is
        assert answers(v) == want
    finally:
        v.stop()


def test_a_few_notes_written_move_the_counts_as_a_count_would(root, tmp_path, monkeypatch):
    monkeypatch.setattr(ftsbuild, "COUNT_IDLE_S", 3600.0)  # no count again: the searches take the moved counts
    v = opened(root, tmp_path / "cache", monkeypatch)
    notes = root / "notes"
    try:
        (notes / "Note 0001.md").write_text("# Note 0001\n\nA beacon, kept.\n", encoding="utf-8")  # +beacon -vault
        (notes / "Note 0003.md").write_text("# Note 0003\n\nThe vault keeps note 0003.\n", encoding="utf-8")  # -beacon
        (notes / "Note 0004.md").unlink()
        (notes / "Note 0005.md").rename(notes / "Moved 0005.md")
        (notes / "Note 0100.md").write_text("---\naliases: [Beacon tower]\n---\n# Note 0100\n", encoding="utf-8")
        (notes / "Note 0101.md").write_text("# Note 0101\n\nNothing common here.\n", encoding="utf-8")
        changed = ["Note 0001.md", "Note 0003.md", "Note 0004.md", "Note 0005.md", "Moved 0005.md", "Note 0100.md"]
        changed.append("Note 0101.md")  # one note more than the count began with
        v.refresh_paths([f"notes/{name}" for name in changed])
        until(lambda: not v.search_status().pending)
        got, seen = traced_answers(v)
        db = v.start_search().db_path
    finally:
        v.stop()
    con = sqlite3.connect(db, isolation_level=None)
    try:  # each old version's postings went with it (FTS5 compares its index with the content)
        register_functions(con)
        for table in ("fts", "ftsf"):
            con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        con.close()
    assert got == truth(root, tmp_path, monkeypatch)  # the same scores: the same counts as a fresh index's
    walked = [s for s in seen if "vw_rows WHERE term" in s]
    assert not [s for s in walked if any(f"'{w}'" in s for w in ("vault", "note", "beacon"))], walked


def test_counts_kept_for_another_state_of_the_index_are_not_taken(root, tmp_path, monkeypatch):
    want = truth(root, tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    db = built(root, cache, monkeypatch)
    set_counts(db, {**counts_in(db), "vault": 1, "beacon": 2}, drop="notes/Note 0003.md")
    v = opened(root, cache, monkeypatch)
    try:
        assert answers(v) == want
        assert counts_in(db)["beacon"] == 14  # counted again and kept for this state
    finally:
        v.stop()


def test_the_writer_counts_again_once_the_writes_pause(root, tmp_path, monkeypatch):
    monkeypatch.setattr(ftsbuild, "COUNT_IDLE_S", 0.2)
    v = opened(root, tmp_path / "cache", monkeypatch)
    try:
        db = v.start_search().db_path
        before = key_in(db)
        (root / "notes" / "Note 0002.md").write_text("# Note 0002\n\nThe vault keeps a beacon.\n", encoding="utf-8")
        v.refresh_paths(["notes/Note 0002.md"])
        until(lambda: key_in(db) != before)  # counted again for the index as the write left it
        assert counts_in(db)["beacon"] == 15
        got, seen = traced_answers(v)
    finally:
        v.stop()
    assert got == truth(root, tmp_path, monkeypatch)
    assert not [s for s in seen if "vw_rows WHERE term = 'vault'" in s]


def test_a_count_gives_up_when_asked_and_keeps_nothing(root, tmp_path, monkeypatch):
    db = built(root, tmp_path / "cache", monkeypatch)
    set_counts(db, {"vault": 1})
    con = sqlite3.connect(db, isolation_level=None)
    try:
        key = ftscounts.state_key(con)
        assert key is not None
        asked = []
        assert ftscounts.counted(con, key, lambda: asked.append(1) or True) is None
        assert asked
        assert counts_in(db) == {"vault": 1}
        counts = ftscounts.counted(con, key, lambda: False)
    finally:
        con.close()
    assert counts is not None and counts.words["vault"] == 40 and counts_in(db)["vault"] == 40


@pytest.mark.parametrize("kept", ["{not json", '["vault", 40]', '{"vault": true}', '{"vault": "40"}'])
def test_damaged_kept_counts_are_counted_again(root, tmp_path, monkeypatch, kept):
    db = built(root, tmp_path / "cache", monkeypatch)
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("UPDATE meta SET value = ? WHERE key = 'counts'", (kept,))
        key = ftscounts.state_key(con)
        assert key == key_in(db)  # kept for this very state: only the value is damaged
        counts = ftscounts.kept_or_counted(con)
    finally:
        con.close()
    assert counts is not None and counts.words["vault"] == 40 and counts.notes == 40
    assert counts_in(db)["vault"] == 40
