"""The embedding model of semantic search: WordLlama's bundled static embeddings, text -> vectors.

Used by the app's note vectors (core.search.semantic) and by a big build's worker process
(core.search.embedprocess), which both build on this module; it needs the `semantic` extra
(numpy, tokenizers and wordllama's files), imported when an `Embedder` is made.
"""

from __future__ import annotations

import importlib.util
import json
import mmap
import struct
from pathlib import Path
from typing import Any

from vaultwatch.core.search import vectorfile

DIM = 256
MAX_TOKENS = 256  # tokens of a note that make its vector (the name, title, headings and body start first)


class Embedder:
    """WordLlama's bundled static embeddings: text -> normalised vectors, no network."""

    def __init__(self) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        # located, not imported: wordllama's __init__ imports requests, whose urllib3 opens an
        # IPv6 socket at import time to probe support (the app opens no network socket)
        spec = importlib.util.find_spec("wordllama")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("wordllama is not installed")
        pkg = Path(list(spec.submodule_search_locations)[0])
        weights = pkg / "weights" / "l2_supercat_256.safetensors"
        tokenizer = pkg / "tokenizers" / "l2_supercat_tokenizer_config.json"
        if not weights.is_file() or not tokenizer.is_file():
            raise RuntimeError(f"wordllama's bundled model is missing ({weights.name}, {tokenizer.name})")
        self._map, self._table = _map_tensor(weights, "embedding.weight")  # float16, 32000 x 256: mapped, not copied
        self._map_path = str(weights)
        self._tok = Tokenizer.from_file(str(tokenizer))
        self._tok.no_padding()
        self._tok.no_truncation()
        # its BPE model memoizes every short text it encodes (up to 10,000): each query typed or
        # asked is a new one, so that cache only grew, while without it the ids are the same and
        # encoding was no slower
        resize_cache = getattr(self._tok.model, "_resize_cache", None)
        if resize_cache is not None:
            resize_cache(0)
        self._np = np

    def embed(self, texts: list[str]) -> Any:
        """float32 (n, DIM), each row of unit length (zero for a text with no tokens)."""
        np = self._np
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        table = self._table
        # one text (a query) on this thread: encode_batch would start the tokenizers' thread pool,
        # whose threads (and their memory) then stay for good after the app's first query
        encodings = (
            self._tok.encode_batch(texts, add_special_tokens=False)
            if len(texts) > 1
            else [self._tok.encode(t, add_special_tokens=False) for t in texts]
        )
        for i, enc in enumerate(encodings):
            ids = enc.ids[:MAX_TOKENS]
            if not ids:
                continue
            uniq, counts = np.unique(np.asarray(ids, dtype=np.int32), return_counts=True)
            v = counts.astype(np.float32) @ table[uniq].astype(np.float32)
            norm = float(np.linalg.norm(v))
            if norm > 0:
                out[i] = v / norm
        return out

    def release(self) -> None:
        """Hand the table's pages back to the page cache (a query reads a few rows of it again)."""
        vectorfile.release_pages(self._map)

    def quantize(self, vecs: Any) -> Any:
        np = self._np
        return np.clip(np.rint(vecs * 127.0), -127, 127).astype(np.int8)


def _map_tensor(path: Path, name: str) -> tuple[mmap.mmap, Any]:
    """(mmap, numpy view) of one tensor of a safetensors file, mapped read-only, not copied: the
    pages a build touched can be dropped from the process afterwards (`Embedder.release`).
    The format: an 8-byte little-endian header length, a JSON header, then the raw tensors."""
    import numpy as np

    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    (size,) = struct.unpack("<Q", mm[:8])
    meta = json.loads(mm[8 : 8 + size])[name]
    dtypes = {"F16": np.float16, "F32": np.float32}
    if meta.get("dtype") not in dtypes:
        raise RuntimeError(f"unexpected tensor type {meta.get('dtype')!r} in {path.name}")
    start, end = meta["data_offsets"]
    shape = tuple(meta["shape"])
    dtype = np.dtype(dtypes[meta["dtype"]])
    if end - start != dtype.itemsize * int(np.prod(shape)):
        raise RuntimeError(f"{path.name}: the tensor's size does not match its shape")
    table = np.frombuffer(mm, dtype=dtype, count=int(np.prod(shape)), offset=8 + size + start).reshape(shape)
    return mm, table


__all__ = ["DIM", "MAX_TOKENS", "Embedder"]
