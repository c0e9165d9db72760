"""Offline semantic search, the optional `semantic` extra (`pip install 'vaultwatch[semantic]'`).

WordLlama's static token embeddings (l2_supercat, 256 dimensions, MIT licence) ship inside
its wheel; they are read from the installed package, never downloaded (WordLlama.load()
would try the network for its tokenizer, so this module opens both files itself). A note's
vector is the mean of its tokens' embeddings over its name, title, aliases, headings and the
start of its body, normalised and stored as int8 (256 bytes a note).

`VectorIndex` computes the vectors in a background thread once the full-text index is
ready, keeps them in `vectors.npz` beside it (reused on a warm start for unchanged notes)
and follows the live index's changes. Without the extra `available()` is False and nothing
here is imported by the rest of core.

Memory (100k notes): the published state is the int8 matrix (25.6 MB) and the keys (2.4 MB),
both mapped from the cache file once it is written (`core.search.vectorfile`: the pages a scan
touched are taken out of the process again after it, they stay in the OS's page cache), and
the snapshot's own path strings. A warm start reads the cache with whole-array operations (no
Python object per note: a dict of 100k rows of tuples and numpy views cost ~50 MB of peak and
left the interpreter's arenas fragmented), and the tokenizer (~18 MB, ~0.3 s to load) is
loaded only when a text has to be embedded: a changed note, or the first query by meaning,
and dropped again after EMBEDDER_IDLE_S unused. A big build (a first start, many notes
changed) embeds in a worker process instead (core.search.embedprocess), so that neither the
tokenizer nor what its thread pool allocated stays behind in the app.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultwatch.core import settings
from vaultwatch.core.events import IndexProblem, IndexProgress
from vaultwatch.core.live.follower import ChangeFollower
from vaultwatch.core.memory import release_free_memory
from vaultwatch.core.model import NOTE
from vaultwatch.core.search import vectorfile
from vaultwatch.core.search.embedder import DIM, Embedder

if TYPE_CHECKING:  # vault.py imports this module
    from vaultwatch.core.model import Entry
    from vaultwatch.core.search.fulltext import SearchIndex
    from vaultwatch.core.vault import Vault

PASSAGE_CHARS = 1200
BATCH = 256
SCORE_CHUNK = 2048  # rows widened to float32 at a time (2 MB, which the C heap keeps)
EMBEDDER_IDLE_S = 60.0  # the embedder (its tokenizer ~16 MB) is dropped after this long unused
CACHE_VERSION = 2  # 2: paths as UTF-8 bytes


def available() -> bool:
    """Whether the semantic extra (wordllama with numpy and tokenizers) is installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("wordllama", "numpy", "tokenizers", "safetensors"))


def offered() -> bool:
    """Installed and not turned off (VAULTWATCH_SEMANTIC=0)."""
    return settings.env("VAULTWATCH_SEMANTIC") and available()


def passage(name: str, title: str, aliases: str, headings: str, body: str) -> str:
    """The text a note's vector is made of."""
    return "\n".join(p for p in (name, title, aliases, headings.replace("\n", ". "), body[:PASSAGE_CHARS]) if p)


class VectorIndex(ChangeFollower):
    """Note vectors for one vault, built after the full-text index and kept in step with it."""

    thread_name = "vaultwatch-vectors"

    def __init__(self, vault: Vault, search_index: SearchIndex, cache_path: Path) -> None:
        import numpy as np

        super().__init__(vault)
        self._np = np
        self.search = search_index
        self.cache_path = cache_path
        self._lock = threading.Lock()
        self._model_lock = threading.Lock()
        self.embedder: Embedder | None = None
        self.embedder_idle_s = EMBEDDER_IDLE_S
        self._used_at = 0.0  # when the embedder was last asked for (under _model_lock)
        self._dropper: threading.Thread | None = None  # waits to drop an idle embedder
        # published state (replaced whole under _lock; readers take a reference)
        self._paths: list[str] = []  # the snapshot's own path strings, in row order (no path -> row dict: 8 MB at 100k)
        self._keys = np.zeros((0, 3), dtype=np.int64)
        self._mat = np.zeros((0, DIM), dtype=np.int8)
        self._file: vectorfile.Mapped | None = None  # the cache file _keys and _mat are views of, if they are
        self.version = 0  # bumped whenever the published vectors change (hybrid search reuses an answer within one)
        self.ready = False
        self.done = 0
        self.total = 0
        self.problem: str | None = None
        self.build_seconds: float | None = None

    def _run(self) -> None:
        try:
            while not self.search.ready:
                if self._stop.is_set() or self.search.problem:
                    return
                time.sleep(0.1)
            self._build()
            while not self._stop.is_set():
                with self._cond:
                    while not self._queue and not self._stop.is_set():
                        self._cond.wait(1.0)
                    batch = list(self._queue)
                    self._queue.clear()
                if batch and not self._stop.is_set():
                    self._update(batch)
        except Exception as exc:  # reported, never fatal: keyword search goes on
            self.problem = f"semantic search is unavailable: {exc!r}"
            self.vault.bus.publish(IndexProblem(self.problem, "warning"))

    # building ---------------------------------------------------------------------------------
    def _key(self, e: Entry) -> tuple[int, int, int]:
        return (e.size_bytes, e.mtime_ns, e.inode)

    @property
    def _model(self) -> Embedder:
        """The embedder, loaded on first use (a warm start with every vector cached needs none)
        and dropped again once unused for `embedder_idle_s` (`_drop_when_idle`)."""
        loaded = False
        with self._model_lock:
            if self.embedder is None:
                self.embedder = Embedder()
                loaded = True
            self._used_at = time.monotonic()
            embedder = self.embedder
            start = self._dropper is None
            if start:
                self._dropper = threading.Thread(
                    target=self._drop_when_idle, name="vaultwatch-embedder-idle", daemon=True
                )
                dropper = self._dropper
        if start:
            dropper.start()
        if loaded:
            release_free_memory()  # reading the tokenizer's JSON left ~5 MB of freed C heap resident
        return embedder

    def _drop_when_idle(self) -> None:
        """Drop the embedder once nobody asked for it for `embedder_idle_s`: its tokenizer is
        ~16 MB of RSS (at 100k notes the app's RSS after a query by meaning went from ~349 to
        ~365-380 MB and stayed there). A caller still embedding keeps its own reference; the next
        query loads it again (~0.3 s; the TUI's search pane asks for it when it opens)."""
        while True:
            with self._model_lock:
                left = self._used_at + self.embedder_idle_s - time.monotonic()
                if left <= 0:
                    self.embedder = None
                    self._dropper = None
                    break
            if self._stop.wait(left):
                with self._model_lock:
                    self._dropper = None
                return
        release_free_memory()

    def _load_cache(self) -> tuple[bytes, vectorfile.Mapped] | None:
        """(paths as UTF-8 lines, the file mapped: its keys and vectors) of the cache file, or
        None when it is missing, damaged or not this vault's."""
        cached = vectorfile.load(self.cache_path, self.vault.root_real, CACHE_VERSION)
        if cached is None:
            return None
        raw, mapped = cached
        count = raw.count(b"\n") + 1 if raw else 0
        if mapped.keys.shape != (count, 3) or mapped.vecs.shape != (count, DIM) or mapped.vecs.dtype != self._np.int8:
            return None
        return cached

    def _save_cache(self) -> None:
        """Write the published state to the cache file and publish the file's mapped arrays in
        place of the in-memory ones (unless a newer state was published meanwhile)."""
        with self._lock:  # published arrays are replaced whole, never changed in place: no copies
            paths, keys, mat = self._paths, self._keys, self._mat
        try:
            mapped = vectorfile.save(self.cache_path, self.vault.root_real, CACHE_VERSION, paths, keys, mat)
        except OSError as exc:
            self.vault.bus.publish(IndexProblem(f"could not write the vector cache: {exc}", "warning"))
            return
        if mapped is None:
            return
        with self._lock:
            if self._paths is paths and self._mat is mat:
                self._keys, self._mat, self._file = mapped.keys, mapped.vecs, mapped
        mapped.release()  # the pages the write touched

    def _texts(self, entries: Iterable[Entry]) -> list[str]:
        """Passages for entries, from the full-text index's stored text (no second read of the files)."""
        return self.search.passages([e.path for e in entries], passage)

    def _note_keys(self, notes: Sequence[Entry]) -> Any:
        """(n, 3) int64 keys of entries, filled without a Python tuple per note."""
        np = self._np
        flat = np.fromiter(
            (k for e in notes for k in (e.size_bytes, e.mtime_ns, e.inode)), dtype=np.int64, count=3 * len(notes)
        )
        return flat.reshape(-1, 3)

    def _build(self) -> None:
        np = self._np
        started = time.perf_counter()
        snap = self.vault.snapshot
        notes = [e for e in snap.entries if e.kind == NOTE]
        paths = [e.path for e in notes]
        keys = self._note_keys(notes)
        cached = self._load_cache()
        mapped = None  # the cache file, when the matrix is its view
        same_notes = cached is not None and cached[0] == "\n".join(paths).encode("utf-8")
        if same_notes:  # the usual warm start: the same notes in the same order
            assert cached is not None
            file = cached[1]
            mat = file.vecs
            todo = np.flatnonzero((file.keys != keys).any(axis=1)).tolist()
            if not todo:  # nothing to embed: publish the file's own arrays
                mapped, keys = file, file.keys
            file.release()
        else:
            if cached is None:
                mat = np.zeros((len(notes), DIM), dtype=np.int8)
                todo = list(range(len(notes)))
            else:  # notes added, removed or renamed since: take the rows still valid
                c_raw, file = cached
                c_keys, c_mat = file.keys, file.vecs
                where = {p: i for i, p in enumerate(c_raw.decode("utf-8").split("\n") if c_raw else ())}
                rows = np.fromiter((where.get(p, -1) for p in paths), dtype=np.int64, count=len(paths))
                del where, cached, c_raw
                same = rows >= 0
                same[same] = (c_keys[rows[same]] == keys[same]).all(axis=1)
                if len(c_mat):
                    mat = c_mat[np.where(same, rows, 0)]  # one new matrix, no masked temporaries
                    mat[~same] = 0
                else:
                    mat = np.zeros((len(notes), DIM), dtype=np.int8)
                del c_mat, c_keys
                file.release()
                todo = np.flatnonzero(~same).tolist()
        cached = None
        if todo and (mat.base is not None or not mat.flags.writeable):
            mat = mat.copy()  # a matrix of its own to fill (not the file's read-only view)
        self.total, self.done = len(todo), 0
        bus = self.vault.bus
        bus.publish(IndexProgress("vectors", 0, self.total))
        for idx, vecs in self._embedded(notes, todo):
            mat[idx] = vecs
            self.done += len(idx)
            bus.publish(IndexProgress("vectors", self.done, self.total))
            time.sleep(0)
        if self._stop.is_set():
            return
        with self._lock:
            self._paths, self._keys, self._mat, self._file = paths, keys, mat, mapped
            self.version += 1
        self.build_seconds = time.perf_counter() - started
        if self.embedder is not None:
            self.embedder.release()  # the table's rows are read again only for the odd query or change
        self.search.close_reader()  # this thread's read connection: its page cache holds the notes' text
        release_free_memory()  # the batches' token arrays and passages are garbage now
        self.ready = True
        if todo or not same_notes:  # a note computed, removed or renamed: the file says so next time
            self._save_cache()
            release_free_memory()

    def _embedded(self, notes: Sequence[Entry], todo: list[int]) -> Iterator[tuple[Any, Any]]:
        """(rows, int8 vectors) for the notes at positions `todo`, BATCH at a time: in a worker
        process for a big build (core.search.embedprocess), else (or where no process can be
        started) by this process's embedder. Stops early once the index is stopped."""
        batches = (
            (idx, self._texts([notes[i] for i in idx]))
            for idx in (todo[b : b + BATCH] for b in range(0, len(todo), BATCH))
        )
        # the worker's module (multiprocessing) loads with a build: `offered()`, which the handshake
        # asks, does not need it
        from vaultwatch.core.index.parsepool import START_FAILED
        from vaultwatch.core.search import embedprocess

        pool = None
        if len(todo) >= embedprocess.PROCESS_MIN_NOTES:
            try:
                pool = embedprocess.start()
            except START_FAILED:
                pass  # no process to be had: embed here
        if pool is not None:
            yield from embedprocess.embedded(pool, batches, self._stop.is_set)
            return
        for idx, texts in batches:
            if self._stop.is_set():
                return
            yield idx, self._model.quantize(self._model.embed(texts))

    def _update(self, batch: list[str]) -> None:
        """Re-embed changed notes, add new ones, drop removed ones (a new published matrix)."""
        np = self._np
        deadline = time.monotonic() + 10
        while self.search.pending > 0 and time.monotonic() < deadline and not self._stop.is_set():
            time.sleep(0.02)  # the passages come from the full-text index: let it apply the change first
        snap = self.vault.snapshot
        with self._lock:
            paths, keys, mat = list(self._paths), self._keys, self._mat
        live = [snap.by_path[p] for p in batch if p in snap.by_path and snap.by_path[p].kind == NOTE]
        gone = {p for p in batch if p not in snap.by_path or snap.by_path[p].kind != NOTE}
        vecs = self._model.quantize(self._model.embed(self._texts(live))) if live else None
        if gone:
            keep = [i for i, p in enumerate(paths) if p not in gone]
            paths = [paths[i] for i in keep]
            keys, mat = keys[keep], mat[keep]
        add_paths, add_keys, add_vecs = [], [], []
        mat = mat.copy()
        keys = keys.copy()
        row = {p: i for i, p in enumerate(paths)}
        for j, e in enumerate(live):
            assert vecs is not None  # live is not empty
            i = row.get(e.path)
            if i is not None:
                mat[i] = vecs[j]
                keys[i] = self._key(e)
            else:
                add_paths.append(e.path)
                add_keys.append(self._key(e))
                add_vecs.append(vecs[j])
        if add_paths:
            paths += add_paths
            keys = np.concatenate([keys, np.array(add_keys, dtype=np.int64).reshape(-1, 3)])
            mat = np.concatenate([mat, np.stack(add_vecs)])
        with self._lock:
            self._paths, self._keys, self._mat, self._file = paths, keys, mat, None
            self.version += 1
        if self.embedder is not None:
            self.embedder.release()
        self.search.close_reader()
        self._save_cache()

    # queries ----------------------------------------------------------------------------------
    def prepare_queries(self) -> None:
        """Load the tokenizer a query by meaning needs, in the background (a front end about to
        search calls it, so the first query does not wait ~0.3 s for it)."""
        if self.embedder is None:
            threading.Thread(target=lambda: self._model, name="vaultwatch-tokenizer", daemon=True).start()

    def wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.ready:
            if self.problem or time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def rank(self, query_vec: Any, allowed: set[str] | None, k: int) -> list[tuple[str, float]]:
        """The `k` notes nearest to a unit query vector (cosine), optionally only paths in `allowed`."""
        np = self._np
        with self._lock:
            paths, mat, mapped = self._paths, self._mat, self._file
        if not paths:
            return []
        q = query_vec.astype(np.float32) / 127.0
        sims = np.empty(len(paths), dtype=np.float32)
        for i in range(0, len(paths), SCORE_CHUNK):  # int8 rows widened a chunk at a time (2 MB, not 100)
            # einsum, not BLAS: its threads spin against each other on a busy 2-core machine (7x slower)
            sims[i : i + SCORE_CHUNK] = np.einsum("ij,j->i", mat[i : i + SCORE_CHUNK], q)
        if mapped is not None:
            mapped.release()  # the rows go back to the page cache (module docstring)
        if allowed is not None:
            mask = np.fromiter((p in allowed for p in paths), dtype=bool, count=len(paths))
            sims = np.where(mask, sims, -np.inf)
        k = min(k, len(paths))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(paths[i], float(sims[i])) for i in top if np.isfinite(sims[i])]

    def query(self, text: str, allowed: set[str] | None, k: int) -> list[tuple[str, float]]:
        model = self._model
        vec = model.embed([text])[0]
        model.release()  # the table's rows the query read (up to ~2 MB of mapped pages after a few)
        if not vec.any():
            return []
        return self.rank(vec, allowed, k)

    def vector_of(self, path: str) -> Any:
        with self._lock:
            paths, mat = self._paths, self._mat
        try:
            i = paths.index(path)  # a scan (~1 ms at 100k notes), for one similar() call
        except ValueError:
            return None
        return mat[i].astype(self._np.float32) / 127.0
