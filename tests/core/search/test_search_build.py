"""The full-text build: a big first build prepares notes in a pool of processes (core.search.ftsprep)
and commits them in big transactions with FTS5's merging deferred to one merge at the end; the
index it leaves is the one the in-thread build leaves, note for note."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from vaultwatch.core.search import ftsbuild, ftsfirst, ftsprep
from vaultwatch.core.search.notetext import note_text, register_functions
from vaultwatch.core.search.results import SearchNotReady
from vaultwatch.core.vault import Vault


def _notes() -> dict[str, str]:
    files = {}
    for i in range(45):
        files[f"Folder {i % 4}/Note {i:03d} naïve.md"] = (
            f"---\naliases: [Alias {i}, Ärger {i}]\n" + (f"title: Titled {i}\n" if i % 5 == 0 else "") + "---\n"
            f"# Heading {i} about budgets\n\nRunning the deploy keys {i}. Café résumé.\n\n"
            "```sh\n# not a heading\nsecretcode\n```\n\n"
            f"Setext {i}\n=====\n\n## Second {i} `code()` here\n\nplain words {i} ^block{i}\n" * (1 + i % 3)
        )
    files["Big.md"] = "# Big\n" + "long line of words about roadmaps\n" * 20000
    files["numbers 12345.md"] = "# 2026 12345\nnumbers only 007\n"
    files["html.md"] = "<div>\n# Inside a block\n</div>\n\n# Real heading\n"  # the HTML block's line is no heading
    files["html ids.md"] = "<div>\n# Inside a block\n</div>\n\n# Real heading\nwith an id ^b1\n"
    return files


def _stored(v: Vault) -> list[tuple]:
    con = sqlite3.connect(v._search.db_path)
    register_functions(con)
    try:
        return con.execute(
            "SELECT d.path, c.name, c.title, c.aliases, c.headings, c.body, d.fterms, d.deprecated "
            "FROM docs d JOIN content c ON c.id = d.id ORDER BY d.path"
        ).fetchall()
    finally:
        con.close()


def _config(v: Vault) -> dict:
    con = sqlite3.connect(v._search.db_path)
    try:
        return {
            t: dict(con.execute(f"SELECT k, v FROM {t}_config WHERE k IN ('automerge', 'crisismerge')"))
            for t in ("fts", "ftsf")
        }
    finally:
        con.close()


def _build(root: Path, cache: Path, clock, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    v = Vault(root, clock=clock)
    v.load()
    assert v.wait_search_ready(60)
    return v


MERGING_AS_USUAL = {"fts": {"automerge": 4, "crisismerge": 16}, "ftsf": {"automerge": 4, "crisismerge": 16}}


def _integrity_checked(v: Vault) -> None:
    """FTS5's own check of both tables: raises when the index and the stored text disagree."""
    con = sqlite3.connect(v._search.db_path)
    register_functions(con)  # the content view's vw_inflate
    try:
        for table in ("fts", "ftsf"):
            con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        con.close()


def _assert_whole(v: Vault) -> None:
    """Every note is indexed and found."""
    assert len(_stored(v)) == v.snapshot.note_count
    assert v.search("Ärger 12").hits[0].path == "Folder 0/Note 012 naïve.md"


def _stopped_after_first_progress(root: Path, clock) -> None:
    """Start a first build of `root` and stop it once it reported progress (half way, or just
    done on a fast machine)."""
    import threading

    from vaultwatch.core.events import IndexProgress

    v = Vault(root, clock=clock)
    first = threading.Event()
    v.bus.subscribe(lambda e: first.set() if isinstance(e, IndexProgress) and e.phase == "search" and e.done else None)
    v.load()
    v.start_search()
    assert first.wait(60)
    v.stop()


def _finished_by_the_next_start(root: Path, tmp_path: Path, clock, monkeypatch) -> None:
    w = _build(root, tmp_path / "c", clock, monkeypatch)
    try:
        assert len(_stored(w)) == w.snapshot.note_count
        assert _config(w) == MERGING_AS_USUAL
        assert w.search("Ärger 12").hits[0].path == "Folder 0/Note 012 naïve.md"
    finally:
        w.stop()


def test_a_pooled_first_build_stores_what_the_in_thread_build_stores(make_vault, clock, monkeypatch, tmp_path):
    root = make_vault(_notes())
    monkeypatch.setattr(ftsbuild, "POOL_MIN_NOTES", 10**9)
    v = _build(root, tmp_path / "thread", clock, monkeypatch)
    assert not v._search.build_pooled
    in_thread = _stored(v)
    v.stop()

    monkeypatch.setattr(ftsbuild, "POOL_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 7)  # many batches over two processes
    monkeypatch.setattr(ftsbuild, "FIRST_BUILD_TRANSACTION", 15)
    v = _build(root, tmp_path / "pooled", clock, monkeypatch)
    try:
        assert v._search.build_pooled
        assert _stored(v) == in_thread
        assert len(in_thread) == v.snapshot.note_count
        # each note's headings are the lexer's reading of its file (the build takes them from the
        # index's entry when it can): block ids are no headings, code is no heading
        for path, _n, _t, _a, headings, *_ in in_thread:
            assert headings == note_text((root / path).read_bytes())[0], path
        assert _config(v) == MERGING_AS_USUAL
        _integrity_checked(v)
        assert v.search('"deploy keys 7"').hits[0].path == "Folder 3/Note 007 naïve.md"
        assert v.search("Ärger 12").hits[0].path == "Folder 0/Note 012 naïve.md"
        assert [h.path for h in v.search("roadm*").hits] == ["Big.md"]
        assert v.search("12345").hits[0].path == "numbers 12345.md"
        assert {r[0]: r[4] for r in in_thread if r[0].startswith("html")} == {
            "html.md": "Real heading",
            "html ids.md": "Real heading",
        }
    finally:
        v.stop()


@pytest.mark.parametrize(
    "error",
    [
        OSError("no processes in this sandbox"),
        # what a process start raised inside the TUI under 20 agents (the
        # nightly load test: the full-text index stopped for good)
        ValueError("bad value(s) in fds_to_keep"),
    ],
)
def test_without_processes_the_build_prepares_notes_in_a_thread(make_vault, clock, monkeypatch, tmp_path, error):
    def no_processes(module, **kw):
        raise error

    monkeypatch.setattr(ftsprep, "process_context", no_processes)
    monkeypatch.setattr(ftsbuild, "POOL_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 7)
    v = _build(make_vault(_notes()), tmp_path / "c", clock, monkeypatch)
    try:
        assert not v._search.build_pooled
        _assert_whole(v)
    finally:
        v.stop()


def test_a_first_build_cut_short_merges_as_usual_on_the_next_start(demo_vault, clock, monkeypatch, tmp_path):
    v = _build(demo_vault, tmp_path / "c", clock, monkeypatch)
    db = v._search.db_path
    v.stop()
    con = sqlite3.connect(db, isolation_level=None)  # as a build stopped half way leaves it
    for table in ("fts", "ftsf"):
        con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('automerge', 0)")
        con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('crisismerge', 2000)")
    con.close()
    v = _build(demo_vault, tmp_path / "c", clock, monkeypatch)
    try:
        assert _config(v) == MERGING_AS_USUAL
    finally:
        v.stop()


def test_a_pooled_first_build_stopped_half_way_is_finished_by_the_next_start(make_vault, clock, monkeypatch, tmp_path):
    root = make_vault(_notes())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    monkeypatch.setattr(ftsbuild, "POOL_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 2)
    monkeypatch.setattr(ftsbuild, "FIRST_BUILD_TRANSACTION", 4)
    _stopped_after_first_progress(root, clock)
    _finished_by_the_next_start(root, tmp_path, clock, monkeypatch)


def _recording_starts(monkeypatch) -> list:
    """The build processes core.search.ftsfirst starts, as they are started (their own objects)."""
    started: list = []
    real = ftsfirst.process_context

    def recording(module):
        ctx = real(module)

        class Recording:
            Pipe = staticmethod(ctx.Pipe)

            @staticmethod
            def Process(*args, **kwargs):  # noqa: N802  (multiprocessing's name)
                proc = ctx.Process(*args, **kwargs)
                started.append(proc)
                return proc

        return Recording()

    monkeypatch.setattr(ftsfirst, "process_context", recording)
    return started


def test_a_big_first_build_written_by_a_process_of_its_own_stores_what_the_writer_thread_stores(
    make_vault, clock, monkeypatch, tmp_path
):
    """core.search.ftsfirst: the app's writer thread hands a big first build to one process,
    which prepares and writes every note; the file holds what the thread's own build writes,
    and the writer thread knows each note's row id afterwards (a scoped search needs them)."""
    root = make_vault(_notes())
    v = _build(root, tmp_path / "thread", clock, monkeypatch)
    assert not v._search.build_elsewhere
    in_thread = _stored(v)
    rowids = dict(v._search._rowids)
    v.stop()

    monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 7)
    monkeypatch.setattr(ftsbuild, "FIRST_BUILD_TRANSACTION", 15)
    started = _recording_starts(monkeypatch)
    progress: list[tuple[int, int]] = []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "process"))
    v = Vault(root, clock=clock)
    v.bus.subscribe(lambda e: progress.append((e.done, e.total)) if getattr(e, "phase", None) == "search" else None)
    v.load()
    assert v.wait_search_ready(60)
    try:
        assert v._search.build_elsewhere
        assert _stored(v) == in_thread
        assert v._search._rowids.keys() == rowids.keys()
        assert _config(v) == MERGING_AS_USUAL
        _integrity_checked(v)
        n = v.snapshot.note_count
        assert progress[-1] == (n, n) and any(0 < done < n for done, _ in progress)  # it went step by step
        assert v.search("Ärger 12").hits[0].path == "Folder 0/Note 012 naïve.md"
        assert v.search("Ärger 12", folder="Folder 0").hits[0].path == "Folder 0/Note 012 naïve.md"
        # a change after the build is the writer thread's, as always
        (root / "Folder 1" / "Later.md").write_text("# Later\nquokka\n")
        v.refresh_paths(["Folder 1/Later.md"])
        assert v._search.wait_synced(time.monotonic() + 30)
        assert [h.path for h in v.search("quokka").hits] == ["Folder 1/Later.md"]
    finally:
        v.stop()
    assert len(started) == 1 and not started[0].is_alive() and started[0].exitcode == 0


def _children(pid: int) -> set[tuple[int, str]]:
    """The processes whose parent is `pid`, with their command lines, from /proc."""
    found = set()
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parent = fh.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, IndexError):
            continue
        if parent == str(pid):
            found.add((int(entry), cmd))
    return found


def test_a_big_first_build_process_prepares_its_notes_itself(make_vault, clock, monkeypatch, tmp_path):
    """The first build's own process prepares its notes on a thread of its own: no preparing
    process below it (a whole interpreter more, resident beside the app's index for the build's
    time, in the process tree's peak). Every note is stored, as the writer thread stores it."""
    root = make_vault({f"d{i % 5}/n{i:04d}.md": f"# Note {i}\n\nword{i % 97} body {i}\n" * 20 for i in range(600)})
    v = _build(root, tmp_path / "thread", clock, monkeypatch)
    in_thread = _stored(v)
    v.stop()

    monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "FIRST_BUILD_TRANSACTION", 50)
    started = _recording_starts(monkeypatch)
    below: set[tuple[int, str]] = set()
    done = threading.Event()

    def sample() -> None:  # what runs below the build process, every 2 ms while it works
        while not done.wait(0.002):
            for proc in list(started):
                if proc.pid is not None:
                    below.update(_children(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        v = _build(root, tmp_path / "process", clock, monkeypatch)
    finally:
        done.set()
        sampler.join()
    try:
        assert v._search.build_elsewhere
        assert _stored(v) == in_thread
    finally:
        v.stop()
    assert len(started) == 1 and started[0].exitcode == 0
    assert below == set(), below


def test_a_big_first_build_begins_once_the_entry_cache_is_written(make_vault, clock, monkeypatch, tmp_path):
    """A cold start's entry cache write and its first full-text build are due at the same pause
    of the client; the write (every distinct link, a bucket's rows at a time) ends before the
    build's process begins, so the two are never resident together beside the index. Here the
    app stays busy answering, which would otherwise hold the write back for MAX_FLUSH_WAIT."""
    root = make_vault(_notes())
    monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    v = Vault(root, clock=clock)
    v.answering = lambda: True  # a client's burst of calls that never pauses
    dirty_at_start: list[bool] = []
    real = ftsfirst.process_context

    def recording(module):
        assert v.entry_cache is not None
        dirty_at_start.append(v.entry_cache.dirty)
        return real(module)

    monkeypatch.setattr(ftsfirst, "process_context", recording)
    v.load()
    try:
        assert v.wait_search_ready(60)
        assert v._search.build_elsewhere
        assert dirty_at_start == [False]
        assert len(_stored(v)) == v.snapshot.note_count
    finally:
        v.stop()


@pytest.mark.parametrize("error", [OSError("no processes in this sandbox"), ValueError("bad value(s) in fds_to_keep")])
def test_when_no_build_process_can_start_the_writer_thread_builds(make_vault, clock, monkeypatch, tmp_path, error):
    def no_processes(module):
        raise error

    monkeypatch.setattr(ftsfirst, "process_context", no_processes)
    monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    v = _build(make_vault(_notes()), tmp_path / "c", clock, monkeypatch)
    try:
        assert not v._search.build_elsewhere
        _assert_whole(v)
    finally:
        v.stop()


def test_a_build_process_that_fails_half_way_is_finished_by_the_writer_thread(make_vault, clock, monkeypatch, tmp_path):
    """The process writes whole transactions; when it fails after some, the writer thread
    indexes the rest and says so."""
    from vaultwatch.core.events import IndexProblem

    root = make_vault(_notes())
    monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 5)
    monkeypatch.setattr(ftsbuild, "FIRST_BUILD_TRANSACTION", 10)
    started = _recording_starts(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    v = Vault(root, clock=clock)
    problems: list[str] = []
    v.bus.subscribe(lambda e: problems.append(e.message) if isinstance(e, IndexProblem) else None)
    v.load()
    # the 26th note handed to the process gets a docs row that breaks the insert: its third
    # transaction fails (after two of 10 notes); the writer thread's own rows are as usual
    real_doc_of = ftsbuild.doc_of
    calls = [0]

    def doc_of(e):
        calls[0] += 1
        return real_doc_of(e) + (("not a column",) if calls[0] == 26 else ())

    monkeypatch.setattr(ftsbuild, "doc_of", doc_of)
    assert v.wait_search_ready(60), (problems, v._search.problem)
    try:
        assert v._search.build_elsewhere
        assert any("search build process failed" in m and "indexing the rest in this process" in m for m in problems)
        _assert_whole(v)
    finally:
        v.stop()
    assert len(started) == 1 and not started[0].is_alive()


def test_a_build_process_stopped_half_way_ends_and_the_next_start_finishes(make_vault, clock, monkeypatch, tmp_path):
    root = make_vault(_notes())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 2)
    monkeypatch.setattr(ftsbuild, "FIRST_BUILD_TRANSACTION", 4)
    started = _recording_starts(monkeypatch)
    _stopped_after_first_progress(root, clock)
    assert len(started) == 1
    started[0].join(ftsfirst.STOP_WAIT_S + 5)
    assert not started[0].is_alive()  # stopped with the index, never left running
    _finished_by_the_next_start(root, tmp_path, clock, monkeypatch)


def test_a_build_process_is_handed_its_notes_a_batch_at_a_time(make_vault, clock, monkeypatch, tmp_path):
    """The first build's process asks for each batch as its preparing pool has room for it: when
    it reports its first prepared notes, the app has made the jobs of the batches in flight only
    (two per preparing process, and the one after), not of every note up front."""
    import os

    from vaultwatch.core.events import IndexProgress

    notes = 200
    root = make_vault({f"d{i % 3}/n{i:03d}.md": f"# Note {i}\n\nbody words {i}\n" for i in range(notes)})
    monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 1)
    monkeypatch.setattr(ftsbuild, "FIRST_BUILD_TRANSACTION", 20)
    handed = [0]
    real_doc_of = ftsbuild.doc_of

    def doc_of(e):
        handed[0] += 1
        return real_doc_of(e)

    monkeypatch.setattr(ftsbuild, "doc_of", doc_of)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    at_first_progress: list[int] = []
    v = Vault(root, clock=clock)
    v.bus.subscribe(
        lambda e: (
            at_first_progress.append(handed[0])
            if isinstance(e, IndexProgress) and e.phase == "search" and e.done and not at_first_progress
            else None
        )
    )
    v.load()
    assert v.wait_search_ready(60)
    try:
        assert v._search.build_elsewhere
        assert len(_stored(v)) == v.snapshot.note_count == notes
        assert handed[0] == notes
        workers = max(1, (os.cpu_count() or 2) - 1)  # ftsprep.prepare_pooled's
        assert at_first_progress and at_first_progress[0] <= 2 * workers + 1 < notes, at_first_progress
        assert [h.path for h in v.search("words 123").hits][:1] == ["d0/n123.md"]
    finally:
        v.stop()


def test_a_first_build_of_a_few_thousand_notes_starts_no_process(make_vault, clock, monkeypatch, tmp_path):
    """A vault of a few thousand notes builds its full-text index with no process beside the app
    (a preparing process is a whole interpreter, resident for the build's time, and the tree's
    peak is the sum): a second thread prepares, the writer thread writes, and every note is found."""
    notes = 3000
    root = make_vault({f"d{i % 10}/n{i:04d}.md": f"# Note {i}\n\nword{i % 97} body {i}\n" for i in range(notes)})
    started: list[str] = []
    for module in (ftsprep, ftsfirst):
        real = module.process_context

        def recording(name, *args, _real=real, **kw):
            started.append(name)
            return _real(name, *args, **kw)

        monkeypatch.setattr(module, "process_context", recording)
    v = _build(root, tmp_path / "c", clock, monkeypatch)
    try:
        assert len(_stored(v)) == v.snapshot.note_count == notes
        assert not v._search.build_pooled and not v._search.build_elsewhere
        assert [h.path for h in v.search("body 2345").hits][:1] == ["d5/n2345.md"]
    finally:
        v.stop()
    assert started == []


def _built_while_calls_come(
    root: Path, cache: Path, clock, monkeypatch, on_ask=None, rest_budget: float | None = None
) -> tuple[Vault, list[str]]:
    """A first build (in-process; or by a process of its own resting `rest_budget` seconds at most) while
    the app answers a client's calls the whole time, waited for without hurrying it: the threads that
    asked whether calls come, one entry per question."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    if rest_budget is not None:
        monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
        monkeypatch.setattr(ftsbuild, "BATCH", 7)
        monkeypatch.setattr(ftsbuild, "PROCESS_REST_S", 0.01)
        monkeypatch.setattr(ftsbuild, "PROCESS_REST_BUDGET_S", rest_budget)
    monkeypatch.setattr(ftsbuild, "PACE_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "PACE_NOTES", 4)
    monkeypatch.setattr(ftsbuild, "PACE_REST_S", 0.001)
    v = Vault(root, clock=clock)
    v.load()
    v.entry_cache.wait_flushed(10)
    asked: list[str] = []

    def answering() -> bool:
        name = threading.current_thread().name
        if name.startswith("vaultwatch-search"):
            asked.append(name)
            if on_ask is not None:
                on_ask(v, asked)
        return True

    v.answering = answering
    v.start_search()
    deadline = time.monotonic() + 60
    while not v._search.ready:  # not wait_search_ready: a waiting search hurries the build
        assert time.monotonic() < deadline and not v._search.problem
        time.sleep(0.01)
    return v, asked


def test_a_first_build_rests_between_steps_while_calls_come_and_stores_the_same(
    make_vault, clock, monkeypatch, tmp_path
):
    root = make_vault(_notes())
    plain = _build(root, tmp_path / "plain", clock, monkeypatch)
    try:
        want = _stored(plain)
    finally:
        plain.stop()
    v, asked = _built_while_calls_come(root, tmp_path / "paced", clock, monkeypatch)
    try:
        assert _stored(v) == want
        assert len(asked) >= v.snapshot.note_count // 4  # before every four notes it looked at the calls
        _assert_whole(v)
    finally:
        v.stop()


def test_a_resting_build_hurries_once_a_search_waits_for_it(make_vault, clock, monkeypatch, tmp_path):
    def search_waits(v: Vault, asked: list[str]) -> None:
        if len(asked) == 3:
            v._search.hurry()  # as Vault.wait_search_ready does, every time it looks

    v, asked = _built_while_calls_come(make_vault(_notes()), tmp_path / "c", clock, monkeypatch, search_waits)
    try:
        assert len(asked) == 3  # no step after the hurry asked about calls, nor rested
        _assert_whole(v)
    finally:
        v.stop()


def test_a_first_build_by_its_own_process_waits_while_calls_come_within_its_budget(
    make_vault, clock, monkeypatch, tmp_path
):
    """The build's process takes the cores a client's calls need: while calls come, the app holds its next
    batch back a step at a time, PROCESS_REST_BUDGET_S in all at most, then lets it finish."""
    root = make_vault(_notes())
    plain = _build(root, tmp_path / "plain", clock, monkeypatch)
    try:
        want = _stored(plain)
    finally:
        plain.stop()
    v, asked = _built_while_calls_come(root, tmp_path / "c", clock, monkeypatch, rest_budget=0.2)
    try:
        assert v._search.build_elsewhere
        assert _stored(v) == want
        assert len(asked) == 20  # a rest of 0.01 s each time it asked, up to its 0.2 s budget; then none
        _assert_whole(v)
    finally:
        v.stop()


def test_a_first_build_by_its_own_process_stops_waiting_once_a_search_waits(make_vault, clock, monkeypatch, tmp_path):
    def search_waits(v: Vault, asked: list[str]) -> None:
        if len(asked) == 3:
            v._search.hurry()

    started = time.monotonic()
    root = make_vault(_notes())
    v, asked = _built_while_calls_come(root, tmp_path / "c", clock, monkeypatch, search_waits, rest_budget=600.0)
    try:
        assert v._search.build_elsewhere
        assert len(asked) == 3 and time.monotonic() - started < 60
        _assert_whole(v)
    finally:
        v.stop()


def _resting_process_build(root: Path, cache: Path, clock, monkeypatch) -> Vault:
    """A loaded vault whose first build, by a process of its own, rests for calls that never pause (600 s
    at most): returned once the build has asked three times whether calls come."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(ftsfirst, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setattr(ftsbuild, "BATCH", 7)
    monkeypatch.setattr(ftsbuild, "PROCESS_REST_BUDGET_S", 600.0)
    v = Vault(root, clock=clock)
    v.load()
    v.entry_cache.wait_flushed(10)
    asked = threading.Semaphore(0)

    def answering() -> bool:
        if threading.current_thread().name.startswith("vaultwatch-search"):
            asked.release()
        return True

    v.answering = answering
    v.start_search()
    try:
        for _ in range(3):
            assert asked.acquire(timeout=30)
    except BaseException:
        v.stop()
        raise
    return v


def test_a_first_build_by_its_own_process_that_waits_for_calls_to_pause_stops_at_once(
    make_vault, clock, monkeypatch, tmp_path
):
    """A stop (the app's end) does not wait out the build's rests, and leaves no process behind."""
    started = _recording_starts(monkeypatch)
    v = _resting_process_build(make_vault(_notes()), tmp_path / "c", clock, monkeypatch)
    search = v._search
    t = time.monotonic()
    v.stop()
    assert time.monotonic() - t < 5
    assert not search.ready
    assert len(started) == 1 and not started[0].is_alive()


def test_a_search_that_does_not_wait_ends_a_first_builds_rests(make_vault, clock, monkeypatch, tmp_path):
    """A search asked while the first build rests for a client's calls, without waiting (the TUI's search
    shows the build's progress and asks again), still says the index is wanted: the build goes on at once."""
    v = _resting_process_build(make_vault(_notes()), tmp_path / "c", clock, monkeypatch)
    try:
        with pytest.raises(SearchNotReady):
            v.search("budgets")
        deadline = time.monotonic() + 30
        while not v._search.ready:
            assert time.monotonic() < deadline and not v._search.problem
            time.sleep(0.01)
        assert v.search("Ärger 12").hits[0].path == "Folder 0/Note 012 naïve.md"
    finally:
        v.stop()
