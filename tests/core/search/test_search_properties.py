"""Search finds a note by its frontmatter property values (core.search.notetext.note_props), as
Obsidian's search does: kepano-style vaults keep most of what a note says in properties. The values
are one more column of the full-text index, filled the same way by the first build (in the writer
thread, by a pool of processes, by a process of its own) and by each later write, and counted with
the common words; the keys are not searched."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vaultwatch.core.search import ftsbuild, ftscounts, ftsfirst, reuse
from vaultwatch.core.search.notetext import register_functions
from vaultwatch.core.vault import Vault

BLADE_RUNNER = """---
categories:
  - "[[Movies]]"
cover: https://m.media-amazon.com/images/M/MV5BNzQzMzJhZTEtOWM4NS00MTdhLTg0YjgtMjM4MDRkZjUwZDBl.jpg
genre:
  - "[[Sci-fi]]"
director:
  - "[[People/Ridley Scott|Sir Ridley]]"
cast:
  - "[[Harrison Ford]]"
rating: 7
year: 1982
watched: true
cssclasses: [widescreen]
---

A film about replicants.
"""

JAPAN_TRIP = """---
categories:
  - "[[Trips]]"
start: 2023-09-12
loc:
  - "[[Kyoto]]"
  - "[[Japan]]"
---

Temples every day.
"""

FUSHIMI = """---
categories: ["[[Places]]"]
loc: ["[[Kyoto]]", "[[Japan]]"]
where: {city: "[[Kyoto]]", coords: [34.9689, 135.7692]}
---

A thousand gates.
"""


def kepano_files() -> dict[str, str]:
    files = {
        "References/Blade Runner.md": BLADE_RUNNER,
        "Notes/2023 Japan Trip.md": JAPAN_TRIP,
        "References/Fushimi Inari.md": FUSHIMI,
        "References/Kyoto.md": "---\ncategories: ['[[Places]]']\n---\n\nA city in Japan.\n",
        "Notes/Kyoto mention.md": "We might go to Kyoto next year, or somewhere else entirely with the kids.\n",
    }
    files.update({f"Daily/2024-01-{d:02d}.md": f"---\ncategories: ['[[Daily]]']\n---\nDay {d}.\n" for d in range(1, 9)})
    return files


def paths(res) -> list[str]:
    return [h.path for h in res.hits]


def stored(v: Vault) -> list[tuple]:
    """Every note's row as the index holds it (docs and the text FTS5 indexed), by path."""
    con = sqlite3.connect(v.start_search().db_path)
    register_functions(con)
    try:
        return con.execute(
            "SELECT d.path, c.name, c.title, c.aliases, c.headings, c.props, c.body, d.fterms "
            "FROM docs d JOIN content c ON c.id = d.id ORDER BY d.path"
        ).fetchall()
    finally:
        con.close()


def integrity_checked(v: Vault) -> None:
    """FTS5's own check of both tables: raises when the postings and the stored text disagree."""
    con = sqlite3.connect(v.start_search().db_path)
    register_functions(con)
    try:
        for table in ("fts", "ftsf"):
            con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        con.close()


def opened(root: Path, cache: Path, clock, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    v = Vault(root, clock=clock)
    v.load()
    assert v.wait_search_ready(60)
    return v


def test_a_property_value_finds_its_note_and_a_key_does_not(make_vault, clock, monkeypatch, tmp_path):
    v = opened(make_vault(kepano_files()), tmp_path / "c", clock, monkeypatch)
    try:
        res = v.search("Ridley Scott")
        assert paths(res) == ["References/Blade Runner.md"]
        # the link as its reader sees it: the note's name and the text shown, no brackets, no folder
        assert "· **Ridley Scott** Sir **Ridley** ·" in res.hits[0].snippet
        assert paths(v.search("Sir Ridley")) == ["References/Blade Runner.md"]
        assert paths(v.search("Harrison Ford 1982")) == ["References/Blade Runner.md"]
        kyoto = paths(v.search("Kyoto"))
        assert kyoto[0] == "References/Kyoto.md"  # named for it: above the notes that point to it
        assert set(kyoto) == {
            "References/Kyoto.md",
            "Notes/2023 Japan Trip.md",
            "References/Fushimi Inari.md",  # a value in a nested mapping too
            "Notes/Kyoto mention.md",
        }
        assert paths(v.search("135.7692")) == ["References/Fushimi Inari.md"]  # numbers in lists
        for key_or_skipped in ("director", "categories", "loc", "amazon", "widescreen", "true"):
            assert v.search(key_or_skipped).total == 0, key_or_skipped
    finally:
        v.stop()


def test_edited_properties_are_indexed_as_a_fresh_build_indexes_them(make_vault, clock, monkeypatch, tmp_path):
    """A note's properties changed, added, removed, a note added and one deleted after the first build:
    the index holds what a first build of the vault as it is now holds, and FTS5's postings agree."""
    monkeypatch.setattr(reuse, "REUSE_SECONDS", 0.0)
    root = make_vault(kepano_files())
    v = opened(root, tmp_path / "live", clock, monkeypatch)
    try:
        assert paths(v.search("Ridley")) == ["References/Blade Runner.md"]
        (root / "References/Blade Runner.md").write_text(
            BLADE_RUNNER.replace("[[People/Ridley Scott|Sir Ridley]]", "[[Denis Villeneuve]]"), encoding="utf-8"
        )
        (root / "References/Kyoto.md").write_text("---\nregion: Kansai\n---\n\nA city in Japan.\n", encoding="utf-8")
        (root / "Notes/2023 Japan Trip.md").write_text("Temples every day.\n", encoding="utf-8")
        (root / "Notes/Dune.md").write_text("---\ndirector: ['[[Denis Villeneuve]]']\n---\nSand.\n", encoding="utf-8")
        (root / "References/Fushimi Inari.md").unlink()
        changed = ["References/Blade Runner.md", "References/Kyoto.md", "Notes/2023 Japan Trip.md", "Notes/Dune.md"]
        v.refresh_paths([*changed, "References/Fushimi Inari.md"])
        assert v._search.wait_synced(time.monotonic() + 30)
        assert v.search("Ridley").total == 0
        assert paths(v.search("Denis Villeneuve")) == ["Notes/Dune.md", "References/Blade Runner.md"]
        assert paths(v.search("Kansai")) == ["References/Kyoto.md"]
        assert "Notes/2023 Japan Trip.md" not in paths(v.search("Kyoto"))
        live = stored(v)
        integrity_checked(v)
    finally:
        v.stop()
    fresh = opened(root, tmp_path / "fresh", clock, monkeypatch)
    try:
        assert stored(fresh) == live
        assert any("Denis Villeneuve" in (row[5] or "") for row in live)
    finally:
        fresh.stop()


@pytest.mark.parametrize("how", ["thread", "pool", "process"])
def test_every_first_build_stores_the_properties_alike(make_vault, clock, monkeypatch, tmp_path, how):
    """The writer thread's own first build, a pool of preparing processes and a build process of its
    own store each note's property values alike."""
    files = kepano_files()
    files.update(
        {f"Many/n{i:02d}.md": f"---\nowner: '[[Person {i}]]'\ntags: [t{i % 3}]\n---\nBody {i}.\n" for i in range(30)}
    )
    root = make_vault(files)
    want = opened(root, tmp_path / "want", clock, monkeypatch)
    try:
        expected = stored(want)
    finally:
        want.stop()
    if how == "pool":
        monkeypatch.setattr(ftsbuild, "POOL_MIN_NOTES", 1)
    if how == "process":
        monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 7)
    monkeypatch.setattr(ftsbuild, "FIRST_BUILD_TRANSACTION", 15)
    v = opened(root, tmp_path / how, clock, monkeypatch)
    try:
        assert v._search.build_elsewhere is (how == "process")
        assert v._search.build_pooled is (how == "pool")
        assert stored(v) == expected
        assert {r[0]: r[5] for r in expected}["Many/n07.md"] == "Person 7 · t1"
        assert paths(v.search("Person 7")) == ["Many/n07.md"]
        integrity_checked(v)
    finally:
        v.stop()


def test_a_few_property_edits_move_the_common_word_counts_as_a_count_would(make_vault, clock, monkeypatch, tmp_path):
    """The counts a write of a few notes moves (ftscounts.Tally) take the property values in and out
    with the rest of the note: they are the counts a fresh count of the index gives."""
    monkeypatch.setattr(ftscounts, "COMMON_MIN_NOTES", 4)
    monkeypatch.setattr(ftsbuild, "COUNT_IDLE_S", 3600.0)  # no count again: the moved counts stay
    root = make_vault({f"n{i:02d}.md": f"---\nsite: '[[Beacon Hill]]'\n---\nNote {i}.\n" for i in range(10)})
    v = opened(root, tmp_path / "c", clock, monkeypatch)
    try:
        index = v.start_search()
        assert index._counts is not None and index._counts[1].words["beacon"] == 10
        (root / "n01.md").write_text("Note 1.\n", encoding="utf-8")  # its property gone
        (root / "n02.md").write_text("---\nsite: '[[Harbour]]'\n---\nNote 2.\n", encoding="utf-8")
        (root / "n20.md").write_text("---\nsite: [Beacon Hill, Beacon Hill]\n---\nNote 20.\n", encoding="utf-8")
        v.refresh_paths(["n01.md", "n02.md", "n20.md"])
        assert index.wait_synced(time.monotonic() + 30)
        moved = index._counts
        assert moved is not None and moved[0] == index._writes  # moved by the write, not counted again
        con = sqlite3.connect(index.db_path)
        try:
            counted = ftscounts.counted(con, ftscounts.state_key(con) or "")
        finally:
            con.close()
        assert counted is not None
        assert moved[1].words == counted.words and moved[1].notes == counted.notes == 11
        assert moved[1].words["beacon"] == 9
    finally:
        v.stop()


def test_search_on_the_command_line_finds_a_property_value(make_vault, tmp_path):
    """`vaultwatch search` as a real process, with its index in a cache folder of its own."""
    root = make_vault(kepano_files())
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cli-cache")
    proc = subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "search", str(root), "Ridley Scott", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    hits = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert [h["path"] for h in hits] == ["References/Blade Runner.md"]
    assert "**Ridley Scott**" in hits[0]["snippet"]


def test_dates_are_left_to_filters_and_the_other_values_kept() -> None:
    """Each date is three to six terms nearly every note holds another of: the first build of a big
    vault paid for them in every note, and a date is asked for by filters and sorts."""
    from vaultwatch.core.model import Entry
    from vaultwatch.core.search.notetext import note_props

    fm = {
        "created": "2023-09-14",
        "verified": [{"by": "agent:x", "at": "2025-08-23T09:30:00Z"}],
        "updated": "2024-01-02 10:11",
        "year": 1982,
        "director": "[[Ridley Scott]]",
        "note": "due 2023-09-14 at the latest",  # a date inside words is words
    }
    props = note_props(Entry(path="a.md", kind="note", size_bytes=1, mtime_ns=1, title="a", frontmatter=fm))
    assert props.split(" · ") == ["1982", "Ridley Scott", "due 2023-09-14 at the latest"]  # who checked it: no content
