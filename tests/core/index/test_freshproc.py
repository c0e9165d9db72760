"""Worker processes of a multi-threaded process (the server, the TUI) are fresh interpreters that
end with their work (core.index.freshproc): a cold parse or a pooled full-text build leaves no
forkserver or resource tracker behind, and the answers are those of the work done in-process.

Each case runs in a process of its own (a real `python`), so that what it starts and what is
left are that process's children alone, whatever other tests of this worker started."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import textwrap
from pathlib import Path

import parseprobe
import pytest

from vaultwatch.core.index import freshproc
from vaultwatch.core.index.freshproc import FreshPool
from vaultwatch.core.index.scan import FileFact, ScanConfig, parse_chunk, walk

ROOT = Path(__file__).resolve().parents[3]

CHILDREN = textwrap.dedent(  # the scripts' own child processes, from /proc
    """
    import os

    def children():
        me = str(os.getpid())
        found = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/stat") as fh:
                        stat = fh.read()
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        cmd = fh.read().replace(b"\\0", b" ").decode()  # whole: a long checkout path pushes the module far out
                except OSError:
                    continue
                if stat.rsplit(")", 1)[1].split()[1] == me:
                    found.append(cmd)
        return found
    """
)

SCRIPT = CHILDREN + textwrap.dedent(
    """
    import json, sys, threading

    from vaultwatch.core.index import parsepool
    from vaultwatch.core.index.scan import ScanConfig
    from vaultwatch.core.search import ftsprep

    seen = set()
    done = threading.Event()

    def sample():  # the second thread: it makes this process multi-threaded, like the server
        while not done.wait(0.005):
            seen.update(children())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    root = os.path.realpath(sys.argv[1])
    here = parsepool.scan(root, ScanConfig(), workers=1)
    parsepool.PARALLEL_MIN_FILES, parsepool.CHUNK = 20, 16  # the process pool on a small vault
    parsepool.WORKERS_CHUNK = 16
    pooled = parsepool.scan(root, ScanConfig(), workers=2)
    key = lambda e: e.path
    notes = sorted((e for e in here[0] if e.kind == "note"), key=key)
    jobs = [ftsprep.Job(e.path, e.size_bytes, e.title, "", e.anchors) for e in notes]
    batches = [jobs[i : i + 25] for i in range(0, len(jobs), 25)]
    prepared = [row for rows in ftsprep.prepare_pooled(root, batches, lambda: False, [0.0], workers=2) for row in rows]
    expected = ftsprep.prepare(root, jobs, ftsprep.FieldTokens())
    done.set()
    sampler.join()
    print(json.dumps({
        "threads": threading.active_count(),
        "same_entries": sorted(pooled[0], key=key) == sorted(here[0], key=key),
        "same_skipped": sorted(pooled[1], key=key) == sorted(here[1], key=key),
        "notes": len(notes),
        "same_prepared": prepared == expected,
        "seen": sorted(seen),
        "left": children(),
    }))
    """
)


def _script_answer(script: str, *args: object, cache: Path | None = None) -> dict:
    """Run `script` in a fresh interpreter that finds this checkout (its entry cache under `cache`, when
    given), and the JSON it printed: what happened in a process of its own (its threads, its children)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    run = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _plain_vault(make_vault) -> Path:
    """300 notes in three folders, no frontmatter: enough for the pool once PARALLEL_MIN_FILES is lowered."""
    return make_vault({f"d{i % 3}/n{i}.md": f"# N{i}\n\nbody {i}\n" for i in range(300)})


def test_a_threaded_parse_and_build_leave_no_process_behind(make_vault) -> None:
    files = {
        f"d{i % 7}/n{i}.md": f"---\nstatus: draft\ntags: [t{i % 5}]\n---\n# N{i}\n\nbody {i}\n" for i in range(200)
    }
    root = make_vault(files | {"broken.md": "---\na: [\n---\n", "bad.md": b"\xff\xfe"})
    got = _script_answer(SCRIPT, root)
    assert got["same_entries"] and got["same_skipped"] and got["same_prepared"]
    assert got["notes"] == 202
    # the work ran in worker processes (fresh interpreters), not in-process after a failed start
    assert any("freshproc" in cmd for cmd in got["seen"]), got["seen"]
    assert not any("forkserver" in cmd or "resource_tracker" in cmd for cmd in got["seen"]), got["seen"]
    assert got["left"] == [], got["left"]  # nothing stays once the work is done


HANDS_SCRIPT = CHILDREN + textwrap.dedent(
    """
    import json, sys, threading

    from vaultwatch.core.index import parsepool
    from vaultwatch.core.index.scan import ScanConfig

    workers = set()
    done = threading.Event()

    def parse_workers():  # by pid: two workers' command lines may be the same
        me = str(os.getpid())
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    parent = fh.read().rsplit(")", 1)[1].split()[1]
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmd = fh.read()
            except (OSError, IndexError):
                continue
            if parent == me and b"freshproc" in cmd:
                yield int(pid)

    def sample():  # the second thread: it makes this process multi-threaded, like the server
        # the most workers alive at once: a load may start a pool more than once (a second pass over
        # notes still inside the entry cache's racy window), each with its own workers
        while not done.wait(0.002):
            alive = set(parse_workers())
            if len(alive) > len(workers):
                workers.clear()
                workers.update(alive)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    root = os.path.realpath(sys.argv[1])
    parsepool.PARALLEL_MIN_FILES, parsepool.CHUNK = 20, 4  # the process pool on a small vault
    parsepool.WORKERS_CHUNK = 4
    entries, skipped = parsepool.scan(root, ScanConfig(), workers=2)
    done.set()
    sampler.join()
    print(json.dumps({"notes": len([e for e in entries if e.kind == "note"]), "workers": sorted(workers)}))
    """
)


def test_a_threaded_parse_on_two_cores_starts_one_worker_beside_its_own_thread(make_vault) -> None:
    """Two hands on two cores: the loading thread and one fresh worker, not two workers (each a
    whole interpreter's start-up and memory on a cold start's path)."""
    got = _script_answer(HANDS_SCRIPT, _plain_vault(make_vault))
    assert got["notes"] == 300
    assert len(got["workers"]) == 1, got["workers"]


LOAD_SCRIPT = HANDS_SCRIPT.replace(
    "entries, skipped = parsepool.scan(root, ScanConfig(), workers=2)",
    "parsepool.HERE_MAX_FILES = int(sys.argv[2])\n"
    "from vaultwatch.core.vault import Vault\n"
    "entries = Vault(root).load().entries  # a cold load through the entry cache (core.index.warmscan)",
)


@pytest.mark.parametrize("big", [False, True], ids=["small", "big"])
def test_a_big_cold_load_is_parsed_by_a_worker_per_core(make_vault, tmp_path, big: bool) -> None:
    """Below parsepool.HERE_MAX_FILES the loading thread parses beside a worker per other core;
    from it, a worker per core parses and the loading thread only collects (its own parse would
    leave its notes' passing objects scattered in the server's heap for good)."""
    got = _script_answer(LOAD_SCRIPT, _plain_vault(make_vault), 100 if big else 1000000, cache=tmp_path / "cache")
    assert got["notes"] == 300
    cores = os.cpu_count() or 2
    assert len(got["workers"]) == (cores if big else cores - 1), got["workers"]


CHUNKS_SCRIPT = """
import json, sys, threading

from vaultwatch.core.events import IndexProgress
from vaultwatch.core.index import parsepool
from vaultwatch.core.vault import Vault

parsepool.PARALLEL_MIN_FILES, parsepool.CHUNK, parsepool.WORKERS_CHUNK = 20, 4, 50
parsepool.HERE_MAX_FILES = int(sys.argv[2])
done = threading.Event()
if sys.argv[3] == "threaded":  # a second thread, as in the server: fresh workers, the loading thread a hand
    threading.Thread(target=done.wait, daemon=True).start()
vault = Vault(sys.argv[1], cache=sys.argv[4] == "cache")
seen = []
vault.bus.subscribe(lambda e: seen.append(e.done) if isinstance(e, IndexProgress) else None)
notes = sum(e.kind == "note" for e in vault.load().entries)
done.set()
print(json.dumps({"notes": notes, "chunks": sorted({b - a for a, b in zip(seen, seen[1:]) if b > a})}))
"""


@pytest.mark.parametrize(
    ("big", "process", "entry_cache", "chunk"),
    [
        (False, "threaded", "cache", 4),
        (True, "threaded", "cache", 50),
        (False, "threaded", "no-cache", 4),
        (False, "single", "no-cache", 50),
    ],
    ids=["threaded", "threaded-big", "threaded-no-cache", "forked"],
)
def test_only_a_parse_the_loading_thread_shares_gets_small_chunks(
    make_vault, tmp_path, big: bool, process: str, entry_cache: str, chunk: int
) -> None:
    """With the loading thread among the hands (a threaded process, fewer than HERE_MAX_FILES files), small
    chunks keep the hands ending together. Workers alone (a big load, or a single-threaded process, which
    forks them) get chunks parsepool.WORKERS_CHUNK long: each chunk is a message the loading thread wakes
    to collect beside the app's work. Seen in the load's progress steps."""
    root = _plain_vault(make_vault)
    got = _script_answer(CHUNKS_SCRIPT, root, 100 if big else 1000000, process, entry_cache, cache=tmp_path / "cache")
    assert got["notes"] == 300
    assert got["chunks"] == [chunk], got["chunks"]


def _fails(item: int) -> int:
    raise ValueError(f"bad item {item}")


def _exits(item: int) -> int:
    os._exit(3)


def _double(item: int) -> int:
    return 2 * item


@pytest.mark.parametrize("fn", [_fails, _exits], ids=["raises", "goes-away"])
def test_a_pool_worker_that_fails_raises_for_the_caller_to_work_in_process(fn) -> None:
    with FreshPool(2) as pool, pytest.raises(RuntimeError, match="parse process"):
        list(pool.imap_unordered(fn, range(10)))
    assert all(not p.is_alive() for p in pool.procs)


def test_a_pool_answers_every_item_once() -> None:
    with FreshPool(2) as pool:
        assert sorted(pool.imap_unordered(_double, iter(range(50)))) == [2 * i for i in range(50)]
    assert all(p.exitcode == 0 for p in pool.procs)  # each ended on its own when told to


def test_a_shared_pool_has_the_calling_thread_work_too() -> None:
    """One worker process and this thread: every item answered once, by both."""
    with FreshPool(1) as pool:
        ran = list(pool.imap_shared(parseprobe.pid, range(200)))
    assert len(ran) == 200
    assert set(ran) == {os.getpid(), pool.procs[0].pid}, set(ran)


def test_a_parse_worker_imports_the_parser_not_the_pool(make_vault) -> None:
    """A parse worker is a fresh interpreter: what it imports is its start-up and its memory,
    on a cold start's path. It needs the scanner and the note parser, not the pool's module
    (multiprocessing's pools, the sharing of values across a load)."""
    root = make_vault(
        {f"n{i}.md": f"---\nstatus: draft\n---\n# N{i}\n" for i in range(20)} | {"b.md": "---\na: [\n---\n"}
    )
    facts = [f for f in walk(os.path.realpath(root), ScanConfig()) if isinstance(f, FileFact)]
    with FreshPool(1) as pool:
        parsed = [e for chunk in pool.imap_unordered(parse_chunk, [facts[:10], facts[10:]]) for e in chunk]
        modules = next(pool.imap_unordered(parseprobe.modules, [None]))
    assert sorted(e.path for e in parsed) == sorted(f.rel for f in facts)
    assert "vaultwatch.core.markdown.parse" in modules  # it did parse
    unneeded = {
        "vaultwatch.core.index.parsepool",
        "vaultwatch.core.index.sharing",
        "vaultwatch.core.memory",
        "multiprocessing",  # the worker's end of its pipe is a freshproc.Channel
        "subprocess",
    }
    assert not unneeded & set(modules), unneeded & set(modules)


def test_a_fresh_process_gets_its_connection_and_arguments() -> None:
    mine, theirs = freshproc.CONTEXT.Pipe()
    proc = freshproc.FreshProcess(_echo, (theirs, "hello", 3))
    proc.start()
    theirs.close()
    assert mine.recv() == ("hello", 3, os.getpid())
    proc.join(60)
    assert proc.exitcode == 0 and not proc.is_alive()


def _echo(conn, word: str, n: int) -> None:
    conn.send((word, n, os.getppid()))


def _mirror(conn) -> None:
    """Answer each message reversed until told to stop, saying whether one was waiting first."""
    while True:
        waiting = conn.poll(5.0)
        message = conn.recv()
        if message is None:
            conn.close()
            return
        conn.send((waiting, message[::-1]))


@pytest.mark.parametrize("size", [0, 10, 16384, 16385, 3 << 20])
def test_a_worker_end_speaks_multiprocessing_wire_format(size: int) -> None:
    """A fresh worker's end of its pipe is a freshproc.Channel, its parent's a multiprocessing
    Connection: messages of every size class cross both ways intact."""
    mine, theirs = freshproc.CONTEXT.Pipe()
    proc = freshproc.FreshProcess(_mirror, (theirs,))
    proc.start()
    theirs.close()
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    mine.send(data)
    assert mine.recv() == (True, data[::-1])
    mine.send(None)
    with pytest.raises(EOFError):  # the worker closed its end
        mine.recv()
    proc.join(60)
    assert proc.exitcode == 0


BUILD_SCRIPT = CHILDREN + textwrap.dedent(
    """
    import json, sys, threading

    from vaultwatch.core.search import ftsprep

    root = os.path.realpath(sys.argv[1])
    jobs = [ftsprep.Job(f"n{i}.md", 20, f"Note {i}", "", "") for i in range(40)]
    batches = [jobs[i : i + 4] for i in range(0, 40, 4)]
    workers = []
    for rows in ftsprep.prepare_pooled(root, batches, lambda: False, [0.0], workers=2):
        workers = workers or children()  # asked while the workers are there, from this one thread
    print(json.dumps({"threads": threading.active_count(), "workers": workers, "mine": sys.argv[0]}))
    """
)


def test_a_single_threaded_build_process_starts_fresh_workers_not_forks(make_vault) -> None:
    """The first build's own process is single-threaded and holds every note's job by the time
    it starts its workers: forked, each would count that memory again."""
    root = make_vault({f"n{i}.md": f"# Note {i}\n\nbody {i}\n" for i in range(40)})
    got = _script_answer(BUILD_SCRIPT, root)
    assert got["threads"] == 1
    assert len(got["workers"]) == 2 and all("freshproc" in cmd for cmd in got["workers"]), got["workers"]


def test_without_an_interpreter_a_start_fails_as_a_start_failure(monkeypatch) -> None:
    from vaultwatch.core.index.parsepool import START_FAILED

    monkeypatch.setattr(sys, "executable", None)  # what an embedded interpreter may report
    with pytest.raises(START_FAILED):
        FreshPool(2)


def test_a_channel_polls_a_descriptor_numbered_past_select_s_limit() -> None:
    """select() refuses descriptors numbered 1024 or more ("filedescriptor out of range"), which a
    process holding many files and sockets reaches: a worker's channel there still polls."""
    r, w = os.pipe()
    high = 1500
    os.dup2(r, high)
    os.close(r)
    try:
        with pytest.raises(ValueError):  # what the channel must not rely on
            select.select([high], [], [], 0)
        channel = freshproc.Channel(high)
        assert not channel.poll(0)
        os.write(w, b"x")
        assert channel.poll(0) and channel.poll(None)
    finally:
        os.close(high)
        os.close(w)
