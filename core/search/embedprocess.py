"""Passages embedded in a process of their own, for a big note-vector build.

Embedding 100k notes in the app's process loaded the tokenizer there and ran its thread pool
in it. A build of at least PROCESS_MIN_NOTES notes (core.search.semantic) hands its batches
to one worker process instead: the worker loads the embedder (with the tokenizer's own thread
pool, so the build is as fast) and what it allocated goes away with it. The batches are
pipelined: the next batch's passages are read while the worker embeds the current one.

Measured at 100k notes: the app's CPU for the build 31.2 -> 2.2 s; a first launch settled at
341.5 MB against 351.6 MB. It still holds ~25 MB more than a warm start does: free memory
left in the C heap during the build, which this move did not remove (nor did reading the
passages in the worker as well, tried and not kept).

A machine where no process can be started (parsepool.START_FAILED) embeds in-process.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from vaultwatch.core.index.parsepool import pool_context
from vaultwatch.core.platform import limit_data_memory
from vaultwatch.core.search.embedder import Embedder

if TYPE_CHECKING:
    import multiprocessing.pool

PROCESS_MIN_NOTES = 2048  # builds with fewer notes to embed stay in the app's process
BATCH_TIMEOUT_S = 300.0  # a batch not back by then: the worker is gone (a Pool would wait forever)
# The worker's memory cap: what it starts with plus this (core.platform.limit_data_memory). A
# build's batches need far less; a worker past it fails its batch (MemoryError), the build
# reports that semantic search is unavailable, and keyword search goes on.
MEMORY_BYTES = 512 * 2**20

_embedder: Any = None  # the worker process's own


def embed_quantized(texts: list[str]) -> Any:
    """int8 vectors of `texts` (in the worker process, which loads its embedder once)."""
    global _embedder
    if _embedder is None:
        _embedder = Embedder()
    return _embedder.quantize(_embedder.embed(texts))


def _answer(job: multiprocessing.pool.AsyncResult[Any]) -> Any:
    try:
        return job.get(BATCH_TIMEOUT_S)
    except multiprocessing.TimeoutError:
        raise RuntimeError(f"the embedding process gave no answer in {BATCH_TIMEOUT_S:.0f} s") from None


def bound_memory() -> None:
    """The worker's start (the pool's initializer): its memory capped where the platform allows."""
    limit_data_memory(MEMORY_BYTES)


def start() -> multiprocessing.pool.Pool:
    """The one-process pool a build embeds with, its memory bounded (MEMORY_BYTES). Raises one
    of parsepool.START_FAILED when its process cannot be started."""
    return pool_context("vaultwatch.core.search.embedprocess").Pool(1, initializer=bound_memory)


def embedded(
    pool: multiprocessing.pool.Pool, batches: Iterator[tuple[Any, list[str]]], stopped: Callable[[], bool]
) -> Iterator[tuple[Any, Any]]:
    """(tag, int8 vectors) for each (tag, texts) of `batches`, in order, embedded by `pool`'s
    process (`start`); one batch is read ahead while the worker embeds. Stops early once
    `stopped()`; the pool is ended either way."""
    try:
        pending = None
        for tag, texts in batches:
            if stopped():
                return
            job = pool.apply_async(embed_quantized, (texts,))
            if pending is not None:
                yield pending[0], _answer(pending[1])
            pending = (tag, job)
        if pending is not None and not stopped():
            yield pending[0], _answer(pending[1])
    finally:
        pool.terminate()  # the worker and all it allocated
        pool.join()
