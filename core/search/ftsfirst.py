"""A big first full-text build, written by a process of its own.

The first build of a big vault's full-text index (core.search.ftsbuild: nothing indexed yet, at
least PROCESS_MIN_NOTES notes) used to insert every note from the app's writer thread: its
notes' text, tokens and compressed bodies passed through the app's heap and SQLite's, and
what that churn left behind stayed resident. Here one process (`_main`) asks for the notes to
index a batch at a time, as its preparing pool has room (receiving every note's job and docs
row before starting held them all at once, a big part of the process tree's peak beside the
app's own index), prepares them on a second thread of its own (core.search.ftsprep's `prepare`,
a batch or two ahead) and writes them with the same statements (core.search.ftsrows:
`insert_rows`, big transactions, FTS5's merging deferred to one merge at the end). SQLite's
indexing runs in C with the interpreter released, so the preparing thread has it most of the
time; a preparing process beside this one would be one more whole interpreter resident, in the
process tree's peak, for the build's time. The app's writer thread only hands the work over, reports the progress
the process sends and, once it is done, reads the row ids back from the file. Readers see the
notes as each transaction commits, as before.

The batches come from the app's writer thread, which holds the next one back while a client's calls
come (core.search.ftsbuild: this process takes the cores the answers need, and a build is of no use
to a client that is not searching), within a budget, and at once when a search waits for it.

The app keeps its own writer connection open meanwhile (idle: no transaction), so the file's
schema, its checks and everything after the first build stay the writer thread's. When the
process cannot be started, fails or goes away, the writer thread compares the file again and
indexes the rest itself (a transaction is all or nothing: the file holds whole notes only).
"""

from __future__ import annotations

import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from vaultwatch.core.search import ftsprep
from vaultwatch.core.search.ftsprep import process_context
from vaultwatch.core.search.ftsrows import insert_rows, merging
from vaultwatch.core.search.notetext import register_functions

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from vaultwatch.core.index.parsepool import WorkerProcess
    from vaultwatch.core.search.ftsprep import Prepared

PROCESS_MIN_NOTES = 20_000  # smaller first builds stay in the writer thread (a process costs ~0.3 s to start)
STOP_WAIT_S = 5.0  # a stopped build's process gets this long to end its transaction, then is killed


class BuildFailed(Exception):
    """The build process reported an error or went away."""


def build(
    db_path: str,
    root_real: str,
    batches: Iterable[list[tuple[Any, tuple]]],
    stopped: Callable[[], bool],
    progress: Callable[[int], None],
    *,
    transaction: int,
) -> float | None:
    """Index the notes of `batches` (each a list of (ftsprep.Job, the docs row's leading columns
    `ftsrows.doc_of`)) into the index file at `db_path` (schema already there, no note in it)
    in a process of its own, committing every `transaction` notes; `progress(done)` as it goes.
    Each batch is drawn from `batches` when the process asks for it, so neither side holds
    every note's job at once. The CPU seconds of the processes that prepared and wrote the
    notes; None when `stopped()` became true first. Raises one of START_FAILED when the process
    cannot be started, BuildFailed when it fails or goes away."""
    from vaultwatch.core.index.parsepool import killed_at_exit  # noqa: PLC0415  (the app's side: see ftsprep.process_context)

    ctx = process_context("vaultwatch.core.search.ftsfirst")
    mine, theirs = ctx.Pipe()
    # not a daemon: it starts the preparing processes itself (a stop, or the app's end, ends it)
    proc = ctx.Process(
        target=_main, args=(theirs, db_path, root_real, transaction), name="vaultwatch-search-build", daemon=False
    )
    proc.start()
    theirs.close()
    with killed_at_exit(proc):
        return _exchange(mine, proc, batches, stopped, progress)


def _exchange(
    mine: Connection[Any, Any],
    proc: WorkerProcess,
    batches: Iterable[list[tuple[Any, tuple]]],
    stopped: Callable[[], bool],
    progress: Callable[[int], None],
) -> float | None:
    """`build`'s side of the pipe: a batch out for each request, progress and the answer in."""
    source = iter(batches)
    try:
        while True:
            if not mine.poll(0.2):
                if stopped():
                    return None
                if not proc.is_alive() and not mine.poll(0):
                    raise BuildFailed(f"the search build process went away (exit code {proc.exitcode})")
                continue
            try:
                kind, value = mine.recv()
                if kind == "more":
                    batch = next(source, None)
                    mine.send(("end", None) if batch is None else ("batch", batch))
                    continue
            except (EOFError, OSError) as exc:
                raise BuildFailed(f"the search build process went away ({exc!r})") from None
            if kind == "done":
                progress(value)
            elif kind == "ok":
                return value
            else:
                raise BuildFailed(f"the search build process failed: {value}")
    finally:
        try:
            mine.send(("stop", None))  # still building: stop
        except OSError:
            pass
        mine.close()
        proc.join(STOP_WAIT_S)
        if proc.is_alive():
            proc.kill()
            proc.join()


class _Feed:
    """The build process's side of the pipe: batches asked for one at a time (their docs rows
    kept until the notes are written), and whether the app said stop (or went away)."""

    def __init__(self, conn: Connection[Any, Any]) -> None:
        self.conn = conn
        self.docs: dict[str, tuple] = {}
        self.stop = False

    def batches(self) -> Iterator[list[Any]]:
        """Each batch's jobs, asked for as the preparing pool has room for it."""
        while not self.stop:
            self.conn.send(("more", None))
            kind, value = self._recv()
            if kind != "batch":  # the end, or a stop
                return
            jobs = []
            for job, doc in value:
                jobs.append(job)
                self.docs[job.path] = doc
            yield jobs

    def stopped(self) -> bool:
        while not self.stop and self.conn.poll():
            self._recv()  # only a stop comes unasked
        return self.stop

    def _recv(self) -> tuple[str, Any]:
        try:
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            kind, value = "stop", None
        if kind == "stop":
            self.stop = True
        return kind, value


def _main(conn: Connection[Any, Any], db_path: str, root_real: str, transaction: int) -> None:
    """The build process: ask for the batches one by one, prepare and insert them, answer
    ("done", notes prepared or written) as it goes and ("ok", its and the preparing processes'
    CPU seconds) at the end, or ("error", what went wrong). A stop from the app (or its end) stops
    it after the current transaction."""
    try:
        feed = _Feed(conn)
        stopped = feed.stopped
        con = sqlite3.connect(db_path, timeout=30.0, isolation_level=None)
        try:
            register_functions(con)
            con.execute("PRAGMA synchronous=NORMAL")
            next_id = (con.execute("SELECT max(id) FROM docs").fetchone()[0] or 0) + 1
            cpu = [0.0]
            merging(con, building=True)
            try:
                held: list = []
                written = 0

                def write() -> None:
                    nonlocal next_id, written, held
                    new = []
                    for row in held:
                        doc = feed.docs.pop(row.path)
                        if row.fields is not None:
                            new.append((next_id, doc, row))
                            next_id += 1
                    con.execute("BEGIN IMMEDIATE")
                    try:
                        insert_rows(con, new)
                        con.execute("COMMIT")
                    except BaseException:
                        con.execute("ROLLBACK")
                        raise
                    written += len(held)
                    held = []
                    conn.send(("done", written))

                for rows in _prepared(root_real, feed.batches(), stopped):
                    held += rows
                    if len(held) < transaction:
                        conn.send(("done", written + len(held)))
                        continue
                    write()
                    if stopped():
                        return
                if held and not stopped():
                    write()
            finally:
                merging(con, building=False, merge=not stopped())
            if stopped():
                return
            con.execute("PRAGMA optimize")
            try:  # a cold build leaves a WAL the size of the index: fold it in and truncate it
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError:
                pass
        finally:
            con.close()
        conn.send(("ok", cpu[0] + time.process_time()))  # its CPU, the preparing thread's included
    except Exception as exc:  # the app falls back to building the rest itself
        try:
            conn.send(("error", repr(exc)))
        except OSError:
            pass
    finally:
        conn.close()


def _prepared(root_real: str, batches: Iterator[list], stopped: Callable[[], bool]) -> Iterator[list[Prepared]]:
    """The batches prepared in order by a second thread, up to two batches ahead of the caller
    (who writes them). The batches are drawn here, on the caller's thread: drawing one talks to
    the app over the pipe, which stays this thread's alone."""
    jobs: queue.Queue[list | None] = queue.Queue()
    done: queue.Queue[list[Prepared] | BaseException] = queue.Queue()
    quit_ = threading.Event()

    def prepare_all() -> None:
        tokens = ftsprep.FieldTokens()
        try:
            while (batch := jobs.get()) is not None and not quit_.is_set():
                done.put(ftsprep.prepare(root_real, batch, tokens))
        except BaseException as exc:  # raised again on the writer's thread
            done.put(exc)
        finally:
            tokens.close()

    preparer = threading.Thread(target=prepare_all, name="vaultwatch-search-prep", daemon=True)
    preparer.start()
    ahead = 0
    try:
        for batch in batches:
            jobs.put(batch)
            ahead += 1
            if ahead < 2:
                continue
            yield _next_prepared(done)
            ahead -= 1
            if stopped():
                return
        while ahead:
            yield _next_prepared(done)
            ahead -= 1
    finally:
        quit_.set()
        jobs.put(None)
        preparer.join()


def _next_prepared(done: queue.Queue[list[Prepared] | BaseException]) -> list[Prepared]:
    rows = done.get()
    if isinstance(rows, BaseException):
        raise rows
    return rows
