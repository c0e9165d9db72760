"""The note side of a full-text build: what the index stores for each note, made from its file.

`prepare` reads a batch of notes and returns, for each, its fields (file-name words, title,
aliases, headings, property values), the first four's FTS5 tokens (`fterms`), the searchable body
and that body zlib'd.
It takes plain `Job` tuples, so the same code runs in the writer's thread (live updates) and in
a pool of processes (`prepare_pooled`: a cold build of a big vault). That work is CPU-bound
Python: on a second thread it held the GIL the SQLite writer and the app wait for, and at
100,000 notes it took as long as all of SQLite's indexing.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import TYPE_CHECKING, Any, NamedTuple

from vaultwatch.core.disk.fileopen import open_file
from vaultwatch.core.errors import VaultError
from vaultwatch.core.model import NOTE, Entry
from vaultwatch.core.search.notetext import (
    FIELD_SEP,
    MAX_BODY_CHARS,
    MAX_FIELD_TERMS,
    deflate,
    note_aliases,
    note_name,
    note_props,
    note_text,
    read_capped,
    tokens_of,
)

if TYPE_CHECKING:
    import multiprocessing.context
    from multiprocessing.connection import Connection

    from vaultwatch.core.index.freshproc import FreshContext

# A build of fewer notes is prepared by a second thread of the app, written by its writer thread
# in a transaction per batch: each preparing process is a whole interpreter resident beside the
# app for the build's time, while a thread's batches come and go in the app's heap without
# raising its peak. Bigger builds get the processes (and from ftsfirst.PROCESS_MIN_NOTES on, a
# writing process of their own): there the preparing is long enough that a second core pays.
POOL_MIN_NOTES = 20_000
# words whose tokens FieldTokens keeps before it starts afresh: the words that repeat (a vault's
# vocabulary) are back after a few batches, while one-off words (a number in every title) would
# otherwise fill it, resident in each preparing process and in the app's writer for good
MAX_CACHED_WORDS = 20_000


def process_context(module: str, *, fork: bool = True) -> multiprocessing.context.ForkContext | FreshContext:
    """`core.index.parsepool.process_context`, imported when a build starts processes: a big first
    build's own process (core.search.ftsfirst) and the preparing workers import this module, and
    none of them needs the pool's module (multiprocessing's contexts, the scanner)."""
    from vaultwatch.core.index import parsepool  # noqa: PLC0415  (see the docstring)

    return parsepool.process_context(module, fork=fork)


class Job(NamedTuple):
    """What `prepare` needs of a note's index entry."""

    path: str
    size: int  # the entry's size_bytes: the read is capped near it
    title: str
    aliases: str  # note_aliases(entry)
    anchors: str  # Entry.anchors: its heading texts (then block ids), already lexed by the index
    props: str = ""  # note_props(entry)


class Prepared(NamedTuple):
    """A note as the index stores it (`fields` None: gone, unreadable or not inside the vault)."""

    path: str
    fields: tuple[str, str, str, str, str] | None  # name words, title, aliases, headings, property values
    fterms: str
    body: str
    blob: bytes


def jobs_for(paths: list[str], by_path: dict[str, Entry]) -> list[Job | str]:
    """A `Job` for each path that is a note in `by_path` (a snapshot's), else the bare path."""
    out: list[Job | str] = []
    for path in paths:
        e = by_path.get(path)
        out.append(
            Job(e.path, e.size_bytes, e.title, note_aliases(e), e.anchors, note_props(e))
            if e is not None and e.kind == NOTE
            else path
        )
    return out


class FieldTokens:
    """FTS5's tokens of the fields, word by word: a whitespace-separated word is tokenised on
    its own (FTS5's unicode61 splits at every space, and porter stems token by token), once,
    then cached, so the same word in many titles and headings costs one dict look-up."""

    def __init__(self) -> None:
        self.con = sqlite3.connect(":memory:", check_same_thread=False)
        self._words: dict[str, list[str] | tuple[str, ...]] = {}

    def close(self) -> None:
        self.con.close()

    def terms(self, rows: list[tuple[str, str, str, str]]) -> list[str]:
        """For each (name, title, aliases, headings): the distinct tokens of name+title, aliases
        and headings (at most MAX_FIELD_TERMS each), the three joined by FIELD_SEP (`docs.fterms`)."""
        words = self._words
        texts = []
        for name, title, aliases, headings in rows:
            texts += [(name + " " + title).split(), aliases.split(), headings.split()]
        missing = list({w for ws in texts for w in ws if w not in words})
        if missing:
            if len(words) + len(missing) > MAX_CACHED_WORDS:
                # start afresh: then every word of these rows is missing, the cached ones too
                words.clear()
                missing = list({w for ws in texts for w in ws})
            odd = []
            for w in missing:
                if w.isdigit() and w.isascii():  # one token, as written: no case, no stem
                    words[w] = (w,)
                else:
                    odd.append(w)
            for w, toks in zip(odd, tokens_of(self.con, odd), strict=True):
                words[w] = toks
        out = []
        for i in range(len(rows)):
            parts = []
            for ws in texts[3 * i : 3 * i + 3]:
                seen = list(dict.fromkeys([t for w in ws for t in words[w]]))
                parts.append(" ".join(seen[:MAX_FIELD_TERMS] if len(seen) > MAX_FIELD_TERMS else seen))
            out.append(FIELD_SEP.join(parts))
        return out


def prepare(root_real: str, jobs: list[Job | str], tokens: FieldTokens) -> list[Prepared]:
    """`Prepared` for each job, read from the vault at `root_real` (a bare path: not a note now)."""
    read: list[tuple[Job | str, tuple[str, str] | None]] = []
    for job in jobs:
        if isinstance(job, str):
            read.append((job, None))
            continue
        try:
            # opened as read opens it: beneath the vault's descriptor (never through a folder swapped
            # for an outside link), a regular file (a FIFO would stop the indexer), not hard-linked
            fd, _st = open_file(root_real, job.path)
            with os.fdopen(fd, "rb") as f:
                data = read_capped(f, job.size, MAX_BODY_CHARS * 4 + 4096)
        except (OSError, VaultError):
            read.append((job, None))  # gone or unreadable: the next event re-indexes it
            continue
        # the index lexed these headings already (Entry.anchors) when it read this file at this
        # size, whole (within both caps), and they hold no block id ("^" lines)
        known = (
            job.anchors if (len(data) == job.size and len(data) <= MAX_BODY_CHARS and "^" not in job.anchors) else None
        )
        read.append((job, note_text(data, known)))
    fields = [
        (note_name(job.path), job.title, job.aliases, text[0], job.props)
        for job, text in read
        if text is not None and isinstance(job, Job)
    ]
    terms = iter(tokens.terms([f[:4] for f in fields]) if fields else ())  # the ranking's fields: no properties
    fields_it = iter(fields)
    out = []
    for job, text in read:
        if isinstance(job, str):
            out.append(Prepared(job, None, "", "", b""))
        elif text is None:
            out.append(Prepared(job.path, None, "", "", b""))
        else:
            out.append(Prepared(job.path, next(fields_it), next(terms), text[1], deflate(text[1])))
    return out


def _worker(conn: Connection[Any, Any], root_real: str) -> None:
    """A pool process: `prepare` each batch it is sent (None: stop), answering (rows, CPU seconds)
    or ("error", what went wrong)."""
    tokens = FieldTokens()
    try:
        while True:
            try:
                jobs = conn.recv()
            except EOFError:
                return
            if jobs is None:
                return
            started = time.process_time()
            try:
                rows = prepare(root_real, jobs, tokens)
            except Exception as exc:  # the writer raises it
                conn.send(("error", f"{exc!r}"))
                return
            conn.send((rows, time.process_time() - started))
    finally:
        tokens.close()
        conn.close()


class PoolBroke(RuntimeError):
    """A pool process failed or went away; `done` batches had been handed out."""

    def __init__(self, message: str, done: int) -> None:
        super().__init__(message)
        self.done = done


def prepare_pooled(
    root_real: str,
    batches: Iterable[list[Job | str]],
    stopped: Callable[[], bool],
    cpu: list[float],
    workers: int | None = None,
) -> Iterator[list[Prepared]]:
    """`prepare` of each batch, in order, by `workers` processes (default: one per core but the
    writer's; batch i by worker i mod workers, each given up to two at a time: bounded memory);
    the workers' CPU seconds are added to cpu[0]. `batches` is drawn as workers have room, so an
    iterator that makes (or receives) its batches on demand is never held whole here. The answers
    are read here, on the consumer's thread (a multiprocessing.Pool's helper threads spun on every
    big answer, at a cost a big build noticed). Raises one of parsepool.START_FAILED when no
    process can be started, PoolBroke when one fails later."""
    # one core is the writer's (SQLite's indexing takes about as long as the preparing): more
    # workers than the other cores only wait on it, and each is a process of its own in memory
    workers = max(1, workers or (os.cpu_count() or 2) - 1)
    if isinstance(batches, Sized):
        workers = max(1, min(workers, len(batches)))
    # never forked: the first build's process holds its notes' jobs when it starts its workers
    ctx = process_context("vaultwatch.core.search.ftsprep", fork=False)
    procs = []
    conns = []
    finished = False
    try:
        for _ in range(workers):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(theirs, root_real), name="vaultwatch-search-prep", daemon=True)
            proc.start()
            theirs.close()
            procs.append(proc)
            conns.append(mine)
        source = iter(batches)
        sent = 0

        def hand_next() -> None:
            nonlocal sent
            batch = next(source, None)
            if batch is not None:
                conns[sent % workers].send(batch)
                sent += 1

        for _ in range(2 * workers):
            hand_next()
        i = 0
        while i < sent:
            conn = conns[i % workers]
            while not conn.poll(0.2):
                if stopped():
                    return
                if not procs[i % workers].is_alive() and not conn.poll(0):
                    raise PoolBroke("a search indexing process went away", i)
            try:
                rows, used = conn.recv()
            except (EOFError, OSError) as exc:
                raise PoolBroke(f"a search indexing process went away ({exc!r})", i) from None
            if rows == "error":
                raise PoolBroke(f"a search indexing process failed: {used}", i)
            cpu[0] += used
            i += 1
            hand_next()
            yield rows
        finished = True
    finally:
        for conn in conns:
            if finished:
                try:
                    conn.send(None)
                except OSError:
                    pass
            conn.close()
        for proc in procs:  # stopped or failed half way: a worker may be busy or blocked on its answer
            proc.join(1.0 if finished else 0)
            if proc.is_alive():
                proc.kill()
                proc.join()
