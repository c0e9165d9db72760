"""The persistent entry cache: warm starts reuse, changes re-parse, damage rebuilds, never fatal."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.core.index.conftest import START_ERRORS, backdate
from vaultwatch.core.events import IndexProblem
from vaultwatch.core.index import entrycache as cache_mod
from vaultwatch.core.index import parsepool
from vaultwatch.core.index.entrycache import EntryCache, cache_root, decode_bucket, encode_bucket, vault_cache_dir
from vaultwatch.core.vault import Vault

pytestmark = pytest.mark.usefixtures("xdg_cache")  # every test gets its own cache folder


NOTES = {
    "index.md": '---\nokf_version: "0.2"\n---\n# Home\nSee [[Alpha]].\n',
    "Alpha.md": (
        "---\ntitle: Alpha\nstatus: deprecated\nstale_after: 2020-01-01\ntags: [a, b]\n---\nBody [[Beta#Part|b]]\n"
    ),
    "Projects/Beta.md": "# Beta\n![[diagram.png]] [x](../Alpha.md)\n",
    "Projects/Gamma.md": "---\nstale_after: 2020-01-01T10:00:00+02:00\nverified:\n  by: human:ann\n---\ntext\n",
    "Inbox/broken.md": "---\ntitle: [unclosed\n---\nbody\n",
    "Resources/diagram.png": b"\x89PNG fake",
}


def open_loaded(root: Path, clock, **kw) -> tuple[Vault, list]:
    events: list = []
    v = Vault(root, clock=clock, **kw)
    v.bus.subscribe(events.append)
    v.load()
    return v, events


def rows(v: Vault) -> list:
    return [e for e in v.snapshot.entries]


def test_cache_lives_under_xdg_cache_home_never_in_the_vault(make_vault, clock, xdg_cache):
    root = make_vault(NOTES, name="my vault")
    v, _ = open_loaded(root, clock)
    v.stop()
    d = vault_cache_dir(v.root_real)
    assert d.parent == xdg_cache / "vaultwatch" == cache_root()
    assert (d / "entries.sqlite").is_file()
    assert not any(p.suffix == ".sqlite" for p in root.rglob("*"))
    # another vault, another cache folder
    other = make_vault({"x.md": "x"}, name="other")
    assert vault_cache_dir(str(other.resolve())) != d


def test_cache_inside_the_vault_is_refused(make_vault, clock, monkeypatch):
    root = make_vault(NOTES)
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cachedir"))
    v, events = open_loaded(root, clock)
    assert v.entry_cache.disabled
    assert any(isinstance(e, IndexProblem) and "inside the vault" in e.message for e in events)
    v.stop()
    assert not (root / "cachedir").exists()
    assert v.snapshot.note_count == 5


def test_warm_start_reuses_every_entry_and_lists_the_same(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    cold, _ = open_loaded(root, clock)
    assert cold.entry_cache.last_stats.parsed == 6
    cold.stop()
    warm, events = open_loaded(root, clock)
    st = warm.entry_cache.last_stats
    assert (st.cached, st.reused, st.parsed, st.removed) == (6, 6, 0, 0)
    plain, _ = open_loaded(root, clock, cache=False)
    assert rows(warm) == rows(plain)  # every field, including frontmatter, links, OKF derivations
    assert not [e for e in events if isinstance(e, IndexProblem)]
    assert warm.list().total == plain.list().total == 5


def test_equal_links_are_one_object_after_a_warm_load(make_vault, clock):
    notes = {f"n{i}.md": "see [[Hub]] and [[Hub#Top]]\n" for i in range(40)}  # spread over buckets
    root = make_vault({**notes, "Hub.md": "hub"})
    backdate(root)
    open_loaded(root, clock)[0].stop()
    warm, _ = open_loaded(root, clock)
    assert warm.entry_cache.last_stats.reused == 41
    links = [e.links for e in warm.snapshot.entries if e.path.startswith("n")]
    assert len({cache_mod.bucket_of(f"n{i}.md") for i in range(40)}) > 1
    assert all(ln == links[0] for ln in links) and len(links[0]) == 2
    assert len({id(ln[0]) for ln in links}) == 1 and len({id(ln[1]) for ln in links}) == 1


def test_a_changed_file_is_parsed_again_and_others_are_not(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    open_loaded(root, clock)[0].stop()
    (root / "Alpha.md").write_text("---\ntitle: Alpha two\n---\nnew body\n")
    (root / "Projects" / "Gamma.md").unlink()
    (root / "New.md").write_text("# New note\n")
    v, _ = open_loaded(root, clock)
    st = v.entry_cache.last_stats
    assert (st.reused, st.parsed, st.removed) == (4, 2, 1)
    assert v.snapshot.get("Alpha.md").title == "Alpha two"
    assert v.snapshot.get("New.md").title == "New"  # the file name (a heading is never the title)
    assert v.snapshot.get("Projects/Gamma.md") is None
    v.stop()
    again, _ = open_loaded(root, clock)
    st = again.entry_cache.last_stats
    assert (st.reused, st.parsed) == (4, 2)  # the two fresh files are too new to trust; the rest is reused
    assert again.snapshot.get("Alpha.md").title == "Alpha two"


def test_same_size_rewrite_with_a_new_mtime_is_seen(make_vault, clock):
    root = make_vault({"a.md": "---\ntitle: one\n---\n"})
    backdate(root, 120)
    open_loaded(root, clock)[0].stop()
    (root / "a.md").write_text("---\ntitle: two\n---\n")  # same size; mtime moves
    backdate(root, 60)
    v, _ = open_loaded(root, clock)
    assert v.snapshot.get("a.md").title == "two"


def test_files_modified_just_before_the_cache_was_written_are_not_trusted(make_vault, clock):
    root = make_vault(NOTES)
    # mtimes ahead of the cache's write, whenever a loaded machine gets to it: within RACY_NS of it
    # (fresh mtimes alone fell out of the window when the first load took over RACY_NS)
    ahead = time.time_ns() + 3600 * 10**9
    for path in root.rglob("*.md"):
        os.utime(path, ns=(ahead, ahead))
    open_loaded(root, clock)[0].stop()
    v, _ = open_loaded(root, clock)
    assert v.entry_cache.last_stats.reused == 0
    assert v.entry_cache.last_stats.parsed == 6


def test_corrupt_cache_file_is_rebuilt_and_reported(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    first, _ = open_loaded(root, clock)
    first.stop()
    db = first.entry_cache.db_path
    db.write_bytes(b"this is not a database" * 100)
    v, events = open_loaded(root, clock)
    problems = [e.message for e in events if isinstance(e, IndexProblem)]
    assert any("corrupt" in m or "unreadable" in m for m in problems), problems
    assert v.snapshot.note_count == 5
    v.stop()
    again, events = open_loaded(root, clock)
    assert again.entry_cache.last_stats.reused == 6  # the rebuilt cache works
    assert not [e for e in events if isinstance(e, IndexProblem)]


def test_corrupt_bucket_is_reparsed_and_reported(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    first, _ = open_loaded(root, clock)
    first.stop()
    con = sqlite3.connect(first.entry_cache.db_path)
    con.execute("UPDATE buckets SET data = ?", (b"\x00garbage",))
    con.commit()
    con.close()
    v, events = open_loaded(root, clock)
    assert any(isinstance(e, IndexProblem) and "bucket" in e.message for e in events)
    assert rows(v) == rows(open_loaded(root, clock, cache=False)[0])


def test_cache_from_another_version_is_rebuilt(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    first, _ = open_loaded(root, clock)
    first.stop()
    con = sqlite3.connect(first.entry_cache.db_path)
    con.execute("UPDATE meta SET value = 'old' WHERE key = 'fingerprint'")
    con.commit()
    con.close()
    v, events = open_loaded(root, clock)
    assert v.entry_cache.last_stats.reused == 0
    assert any(isinstance(e, IndexProblem) and "another vaultwatch version" in e.message for e in events)


def test_vault_that_suddenly_looks_empty_keeps_its_cache(make_vault, clock, tmp_path):
    files = {f"n{i:02}.md": f"# Note {i}\n" for i in range(cache_mod.EMPTY_GUARD + 5)}
    root = make_vault(files)
    backdate(root)
    first, _ = open_loaded(root, clock)
    first.stop()
    db = first.entry_cache.db_path
    before = db.read_bytes()
    parked = tmp_path / "parked"
    parked.mkdir()
    for p in root.iterdir():  # an unmounted drive: the mount point is an empty folder
        p.rename(parked / p.name)
    v, events = open_loaded(root, clock)
    problems = [e.message for e in events if isinstance(e, IndexProblem)]
    assert any("looks empty" in m for m in problems), problems
    assert v.snapshot.note_count == len(files)  # served from the cache, flagged
    assert v.index_stale
    v.stop()
    assert db.read_bytes() == before  # nothing overwrote the cache
    for p in parked.iterdir():
        p.rename(root / p.name)
    back, _ = open_loaded(root, clock)
    assert back.entry_cache.last_stats.reused == len(files)
    assert not back.index_stale


def test_small_vault_emptied_on_purpose_is_empty(make_vault, clock):
    root = make_vault({"a.md": "a", "b.md": "b"})
    backdate(root)
    open_loaded(root, clock)[0].stop()
    for p in root.iterdir():
        p.unlink()
    v, _ = open_loaded(root, clock)
    assert v.snapshot.note_count == 0


def test_cache_off_writes_nothing(make_vault, clock, xdg_cache, monkeypatch):
    root = make_vault(NOTES)
    v, _ = open_loaded(root, clock, cache=False)
    v.stop()
    monkeypatch.setenv("VAULTWATCH_CACHE", "0")
    w, _ = open_loaded(root, clock)
    w.stop()
    assert v.entry_cache is None and w.entry_cache is None
    assert not xdg_cache.exists()


def test_changes_after_load_reach_the_cache(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    v, _ = open_loaded(root, clock)
    later = root / "Later.md"
    later.write_text("# Later\n")
    past = time.time() - 30
    os.utime(later, (past, past))
    v.refresh_paths(["Later.md"])
    v.stop()
    w, _ = open_loaded(root, clock)
    st = w.entry_cache.last_stats
    assert (st.reused, st.parsed) == (7, 0)  # the note added after the load was cached too
    assert w.snapshot.get("Later.md").title == "Later"


def test_bucket_round_trip_keeps_every_field(demo, clock):
    entries = [e for e in demo.snapshot.entries if e.kind != "folder"]
    table = cache_mod.LinkTable()
    written, decoded = decode_bucket(encode_bucket(entries, table, 123))
    assert written == 123
    links = cache_mod.decode_links(table.encode())
    assert [cache_mod._decode(t, links) for t in decoded] == sorted(entries, key=lambda e: e.path)
    assert any(e.stale_instant is not None or e.stale_date is not None for e in entries)


def test_a_bucket_written_in_steps_is_the_same_bytes(demo, clock, monkeypatch):
    monkeypatch.setattr(cache_mod, "PACE_ROWS", 2)
    entries = [e for e in demo.snapshot.entries if e.kind != "folder"]
    steps: list[int] = []
    whole = encode_bucket(entries, cache_mod.LinkTable(), 123)
    paced = encode_bucket(entries, cache_mod.LinkTable(), 123, pace=lambda: steps.append(1))
    assert paced == whole
    assert len(steps) == 2 * -(-len(entries) // 2)  # before every two entries, in both passes


def _flushed_while_calls_come(make_vault, clock, notes: dict, on_ask=None) -> tuple:
    """A whole-cache flush while a client's calls come the whole time, waited for without hurrying it
    (as a first search build waits): the vault's folder, the vault, and one entry per time the flush
    asked whether calls come (`on_ask(cache, asked)` runs at each)."""
    root = make_vault(notes)
    backdate(root)
    v, _ = open_loaded(root, clock)
    cache = v.entry_cache
    cache.wait_flushed(10)
    asked: list[int] = []

    def busy() -> bool:
        asked.append(1)
        if on_ask is not None:
            on_ask(cache, asked)
        return True

    cache.mark_all_dirty()
    cache.flush_soon(lambda: v.snapshot.entries, lambda msg: None, 0.0, busy)
    cache.wait_flushed(10, hurry=False)
    assert not cache.dirty
    return root, v, asked


FORTY = {f"n{i:02}.md": f"# Note {i}\n" for i in range(40)}


def test_a_background_flush_rests_between_steps_while_calls_come(make_vault, clock, monkeypatch):
    monkeypatch.setattr(cache_mod, "PACE_ROWS", 4)
    monkeypatch.setattr(cache_mod, "PACE_REST_S", 0.001)
    notes = {f"n{i:02}.md": f"# Note {i}\n[[n{(i + 1) % 40:02}]]\n" for i in range(40)}
    root, v, asked = _flushed_while_calls_come(make_vault, clock, notes)
    # it looked at the calls before every step: 40 notes, 4 a step, in both passes of each bucket
    assert len(asked) >= 2 * 40 // 4
    v.stop()
    w, _ = open_loaded(root, clock)
    assert w.entry_cache.last_stats.reused == 40
    w.stop()


def test_a_flush_rests_at_most_max_flush_wait_in_all(make_vault, clock, monkeypatch):
    """It holds the cache's write transaction while it rests: calls that never pause must not hold
    another process's write of this cache back for longer than that."""
    monkeypatch.setattr(cache_mod, "PACE_ROWS", 1)
    monkeypatch.setattr(cache_mod, "PACE_REST_S", 0.004)
    monkeypatch.setattr(cache_mod, "MAX_FLUSH_WAIT", 0.01)
    _root, v, asked = _flushed_while_calls_come(make_vault, clock, FORTY)
    assert len(asked) == 3  # three rests of 4 ms reach 10 ms: the rest of the write goes straight on
    v.stop()


def test_a_resting_flush_hurries_once_something_waits_for_it(make_vault, clock, monkeypatch):
    monkeypatch.setattr(cache_mod, "PACE_ROWS", 1)

    def search_waits(cache, asked: list[int]) -> None:
        if len(asked) == 3:  # a search starts waiting for the first full-text build (Vault.wait_search_ready)
            cache.hurry()

    _root, v, asked = _flushed_while_calls_come(make_vault, clock, FORTY, search_waits)
    assert len(asked) == 3  # no step after the hurry asked about calls, nor rested
    v.stop()


def test_a_flush_thread_being_started_is_waited_for(make_vault, clock, monkeypatch):
    """The stop waits for a background flush that another thread is starting right then (it once
    joined the thread before its start: RuntimeError, and the server exited 1)."""
    root = make_vault({f"n{i}.md": f"# {i}\n" for i in range(5)})
    backdate(root)
    v, _ = open_loaded(root, clock)
    cache = v.entry_cache
    cache.wait_flushed(10)
    real_start = threading.Thread.start
    starting = threading.Event()

    def slow_start(self, *args, **kwargs):
        if self.name == "vaultwatch-cache":
            starting.set()
            time.sleep(0.2)  # widens the moment between the thread's creation and its start
        real_start(self, *args, **kwargs)

    monkeypatch.setattr(threading.Thread, "start", slow_start)
    cache.mark_all_dirty()
    starter = threading.Thread(target=cache.flush_soon, args=(lambda: v.snapshot.entries, lambda msg: None, 0.0))
    starter.start()
    assert starting.wait(10)
    cache.wait_flushed(10)
    starter.join(10)
    assert not cache.dirty
    v.stop()


def test_a_note_changed_while_a_flush_reads_the_snapshot_is_written_next(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    v, _ = open_loaded(root, clock)
    cache = v.entry_cache
    cache.wait_flushed(10)
    later = root / "Later.md"
    later.write_text("# Later\n")
    past = time.time() - 30
    os.utime(later, (past, past))
    before = v.snapshot.entries
    reads: list[int] = []

    def latest():
        reads.append(1)
        if len(reads) == 1:  # the note lands while this flush reads the snapshot: marked, not in these
            v.refresh_paths(["Later.md"])
            return before
        return v.snapshot.entries

    cache.mark_dirty(["Alpha.md"])
    cache.flush_soon(latest, lambda msg: None, 0.0)
    cache.wait_flushed(10)
    v.stop()
    w, _ = open_loaded(root, clock)
    st = w.entry_cache.last_stats
    assert (st.reused, st.parsed) == (7, 0)  # the note that landed meanwhile was written by the next round
    w.stop()


def test_warm_scan_without_fork_gives_the_same_entries(make_vault, clock, monkeypatch):
    root = make_vault(NOTES)
    backdate(root)
    open_loaded(root, clock)[0].stop()
    monkeypatch.setenv("VAULTWATCH_NO_FORK", "1")
    v, _ = open_loaded(root, clock)
    assert v.entry_cache.last_stats.reused == 6
    assert rows(v) == rows(open_loaded(root, clock, cache=False)[0])


@START_ERRORS
def test_a_warm_scan_whose_process_start_fails_parses_here(make_vault, clock, monkeypatch, failing_starts, start_error):
    root = make_vault(NOTES | {f"many/n{i}.md": f"---\ntags: [t{i % 3}]\n---\n# N{i}\n[[Alpha]]\n" for i in range(40)})
    backdate(root)
    open_loaded(root, clock)[0].stop()
    past = time.time() - 30
    for i in range(0, 40, 2):  # changed since the cache was written: these are parsed again
        (root / "many" / f"n{i}.md").write_text(f"---\ntitle: changed {i}\n---\n[[Beta]]\n")
        os.utime(root / "many" / f"n{i}.md", (past, past))
    monkeypatch.setattr(parsepool, "PARALLEL_MIN_FILES", 5)  # the process pool for a few changed files
    monkeypatch.setattr(parsepool, "CHUNK", 4)
    monkeypatch.setattr(parsepool, "WORKERS_CHUNK", 4)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    tried = failing_starts(start_error)
    v, events = open_loaded(root, clock)
    assert tried  # the pool was tried, and its start failed
    st = v.entry_cache.last_stats
    assert (st.reused, st.parsed) == (26, 20)
    assert v.snapshot.get("many/n4.md").title == "changed 4"
    assert rows(v) == rows(open_loaded(root, clock, cache=False)[0])
    assert not [e for e in events if isinstance(e, IndexProblem) and e.severity == "error"]


def test_unwritable_cache_folder_is_reported_not_fatal(make_vault, clock, monkeypatch, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    root = make_vault(NOTES)
    v, events = open_loaded(root, clock)
    assert v.snapshot.note_count == 5
    assert any(isinstance(e, IndexProblem) and "caching is off" in e.message for e in events)
    v.stop()


def test_entry_cache_flush_is_idempotent(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    v, _ = open_loaded(root, clock)
    v.stop()
    c = EntryCache(v.root_real)
    assert c.flush(v.snapshot.entries) is None  # nothing dirty: nothing written
    c.mark_all_dirty()
    assert c.flush(v.snapshot.entries) is None
    assert not c.dirty


def test_caches_of_vanished_vaults_are_pruned(make_vault, clock, monkeypatch):
    root = make_vault(NOTES, name="short-lived")
    v, _ = open_loaded(root, clock)
    v.stop()
    folder = v.entry_cache.dir
    assert (folder / "vault.txt").read_text().strip() == v.root_real
    keep = make_vault({"k.md": "k"}, name="kept")
    kept, _ = open_loaded(keep, clock)
    kept.stop()
    import shutil

    shutil.rmtree(root)
    monkeypatch.setattr(cache_mod, "_pruned", False)
    assert cache_mod.prune_caches(max_age_s=3600) == 0  # recently used: kept a while
    monkeypatch.setattr(cache_mod, "_pruned", False)
    assert cache_mod.prune_caches(max_age_s=0) == 1
    assert not folder.exists() and kept.entry_cache.dir.exists()


def test_the_fingerprint_reads_every_parser_source_it_names():
    """A source that moved would silently drop out of the fingerprint: a parser change would then
    keep serving stale cached entries. Every named file must exist next to core's modules."""
    missing = [name for name in cache_mod._PARSER_SOURCES if not (cache_mod._CORE / name).is_file()]
    assert missing == []
    assert "markdown/mdlex.py" in cache_mod._PARSER_SOURCES


def stored_links(v: Vault) -> list:
    con = sqlite3.connect(v.entry_cache.db_path)
    try:
        return cache_mod.decode_links(con.execute("SELECT data FROM links WHERE id = 0").fetchone()[0])
    finally:
        con.close()


def edit(root: Path, rel: str, text: str, v: Vault) -> None:
    (root / rel).write_text(text)
    past = time.time() - 30
    os.utime(root / rel, (past, past))
    v.refresh_paths([rel])


def test_a_link_added_after_the_load_is_in_the_next_warm_load(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    v, _ = open_loaded(root, clock)
    v.stop()
    before = len(stored_links(v))
    edit(root, "Alpha.md", "Body [[Beta#Part|b]] and [[New note]] and ![[diagram.png]]\n", v)
    v.stop()  # a partial flush: one bucket, the links table extended
    assert len(stored_links(v)) == before + 1
    w, _ = open_loaded(root, clock)
    assert w.entry_cache.last_stats.parsed == 0
    assert rows(w) == rows(open_loaded(root, clock, cache=False)[0])
    beta = w.snapshot.get("Projects/Beta.md").links[0]
    assert w.snapshot.get("Alpha.md").links[2] is beta  # one Link object per distinct link, across buckets


def test_an_outgrown_links_table_is_rewritten_with_only_the_links_in_use(make_vault, clock, monkeypatch):
    monkeypatch.setattr(cache_mod, "LINKS_SLACK", 3)
    root = make_vault(NOTES)
    backdate(root)
    v, _ = open_loaded(root, clock)
    v.stop()
    in_use = {ln for e in v.snapshot.entries for ln in e.links}
    assert set(stored_links(v)) == in_use
    for i in range(4):  # each edit replaces the note's links: the table keeps the stale ones...
        edit(root, "Alpha.md", f"[[gone {i}]] [[gone {i}b]]\n", v)
        v.stop()
    assert len(stored_links(v)) == len(in_use) + 8  # 4 + 8 > 2 * 4 + 3: the next flush rewrites it all
    edit(root, "Alpha.md", "[[gone 4]] [[gone 4b]]\n", v)
    v.stop()
    table = stored_links(v)
    in_use = {ln for e in v.snapshot.entries for ln in e.links}
    assert set(table) == in_use and len(table) == len(in_use)
    w, _ = open_loaded(root, clock)
    assert w.entry_cache.last_stats.parsed == 0
    assert rows(w) == rows(open_loaded(root, clock, cache=False)[0])


def test_corrupt_links_table_is_reparsed_and_reported(make_vault, clock):
    root = make_vault(NOTES)
    backdate(root)
    first, _ = open_loaded(root, clock)
    first.stop()
    con = sqlite3.connect(first.entry_cache.db_path)
    con.execute("UPDATE links SET data = ?", (b"\x00garbage",))
    con.commit()
    con.close()
    v, events = open_loaded(root, clock)
    assert any(isinstance(e, IndexProblem) and "links table" in e.message for e in events)
    assert v.entry_cache.last_stats.parsed == 6
    assert rows(v) == rows(open_loaded(root, clock, cache=False)[0])
    v.stop()
    again, _ = open_loaded(root, clock)
    assert again.entry_cache.last_stats.parsed == 0


MANY = NOTES | {f"many/{i % 7}/n{i}.md": f"---\ntags: [t{i % 3}]\n---\n# N{i}\n[[Alpha]]\n" for i in range(150)}


def test_a_first_start_parses_before_its_cache_file_is_made(make_vault, clock, monkeypatch):
    """Making the cache file waits on the disk (its first writes are synced): a first start parses
    meanwhile. Here the making waits for the parse to begin, which it would never see if the load
    waited for it first."""
    from vaultwatch.core.events import IndexProgress

    root = make_vault(MANY)
    backdate(root)
    began = threading.Event()
    waited: list[bool] = []
    real = EntryCache.load_entries

    def made_once_the_parse_began(self):
        waited.append(began.wait(10))
        return real(self)

    monkeypatch.setattr(EntryCache, "load_entries", made_once_the_parse_began)
    v = Vault(root, clock=clock)
    v.bus.subscribe(lambda e: began.set() if isinstance(e, IndexProgress) and e.phase == "parse" else None)
    v.load()
    assert waited == [True]
    assert rows(v) == rows(open_loaded(root, clock, cache=False)[0])
    v.stop()
    warm, _ = open_loaded(root, clock)
    assert warm.entry_cache.last_stats.reused == len(MANY)
    warm.stop()
