"""The embedding worker process of a big note-vector build runs under a memory cap."""

from __future__ import annotations

import resource

import pytest

from vaultwatch.core.search import embedprocess, semantic

pytestmark = pytest.mark.skipif(
    not semantic.available(), reason="the semantic extra is not installed (pip install 'vaultwatch[semantic]')"
)


def test_the_embedding_process_is_capped_and_an_allocation_past_the_cap_fails_there():
    mine = resource.getrlimit(resource.RLIMIT_DATA)
    pool = embedprocess.start()
    try:
        soft, _ = pool.apply(resource.getrlimit, (resource.RLIMIT_DATA,))
        assert soft != resource.RLIM_INFINITY and soft >= embedprocess.MEMORY_BYTES
        with pytest.raises(MemoryError):  # in the worker, reported here: the worker holds no more
            pool.apply(bytearray, (soft + embedprocess.MEMORY_BYTES,))
        assert pool.apply(embedprocess.embed_quantized, (["a note about deploying"],)).shape == (1, 256)
    finally:
        pool.terminate()
        pool.join()
    assert resource.getrlimit(resource.RLIMIT_DATA) == mine  # the cap is the worker's alone
