"""Note vectors start at the first query by meaning, not with the server.

The embedding model (and, for a big build, the worker process it runs in) is the biggest part of
the server's memory: an agent that lists, reads and searches by words never needs it, so a server
only starts the vectors once a search asks by meaning (`mode` semantic or hybrid) or `similar` is
called. A hybrid search that comes while they are being computed answers with the keyword hits
and says so (`mode` "keyword", `_meta.note`), instead of failing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH, children, serving, uds_client

from vaultwatch.core.search import semantic
from vaultwatch.core.vault import Vault, demo_vault_path
from vaultwatch.mcp_server import tools

pytestmark = pytest.mark.skipif(
    not semantic.available(), reason="the semantic extra is not installed (pip install 'vaultwatch[semantic]')"
)

MODEL_LIBRARIES = ("_multiarray_umath", "tokenizers")  # numpy's core and the tokenizer's native module


def _server_pid(vault: Path) -> int:
    """The `serve --stdio` process this test's client spawned (a child of this process)."""
    for pid, argv in children(os.getpid()):
        if "serve" in argv and str(vault) in argv:
            return pid
    raise AssertionError(f"no server process for {vault}")


def _model_mapped(pid: int) -> list[str]:
    """The model's native libraries mapped into the process (present once its vectors started)."""
    with open(f"/proc/{pid}/maps") as fh:
        return sorted({line.split()[-1] for line in fh if any(name in line for name in MODEL_LIBRARIES)})


async def test_serve_stdio_loads_no_model_until_a_search_asks_by_meaning(tmp_path: Path, env: dict) -> None:
    root = tmp_path / "vault"
    shutil.copytree(demo_vault_path(), root)
    params = StdioServerParameters(
        command=VAULTWATCH[0], cwd=str(ROOT), env=env, args=[*VAULTWATCH[1:], "serve", str(root), "--stdio"]
    )
    async with Client(params, mode="legacy") as client:
        listed = await client.call_tool("list_documents", {})
        assert not listed.is_error and listed.structured_content["result"]
        found = await client.call_tool("search", {"query": "deploy runbook"})  # words only (the default mode)
        assert not found.is_error and found.structured_content["mode"] == "keyword"
        assert found.structured_content["result"]
        pid = _server_pid(root)
        assert _model_mapped(pid) == []  # nothing of the model loaded: no vectors, no numpy
        assert not list((tmp_path / "cache").rglob("vectors.npz"))
        deadline = time.monotonic() + 120
        while True:  # the first query by meaning starts the vectors; it answers once they are ready
            meant = await client.call_tool("search", {"query": "deploy runbook", "mode": "semantic"})
            if not meant.is_error or time.monotonic() > deadline:
                break
            assert "being computed" in meant.content[0].text, meant.content[0].text
            await asyncio.sleep(0.05)
        assert not meant.is_error, meant.content[0].text
        assert meant.structured_content["mode"] == "semantic" and meant.structured_content["result"]
        assert _model_mapped(pid)
    assert list((tmp_path / "cache").rglob("vectors.npz"))  # computed, and kept for the next start


async def test_a_hybrid_search_while_the_vectors_are_computed_answers_by_words_and_says_so(
    tmp_path: Path, sock_dir: Path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tools, "SEARCH_BUILD_WAIT", 0.05)  # the call's wait for the vectors: they are held
    held = threading.Event()
    build = semantic.VectorIndex._build

    def held_build(self: semantic.VectorIndex) -> None:
        held.wait(120)
        build(self)

    monkeypatch.setattr(semantic.VectorIndex, "_build", held_build)
    root = tmp_path / "vault"
    shutil.copytree(demo_vault_path(), root)
    vault = Vault(root)
    vault.start_live()
    try:
        assert await asyncio.to_thread(vault.wait_search_ready, 60)
        assert vault.semantic_status()["started"] is False
        async with serving(vault, sock_dir / "s.sock"), uds_client(sock_dir / "s.sock") as client:
            words = await client.call_tool("search", {"query": "deploy runbook", "mode": "keyword"})
            assert vault.semantic_status()["started"] is False  # words alone start no vectors
            both = await client.call_tool("search", {"query": "deploy runbook", "mode": "hybrid"})
            assert not both.is_error, both.content[0].text
            assert vault.semantic_status()["started"] is True and not vault.semantic_status()["ready"]
            assert both.structured_content["mode"] == "keyword"
            assert both.structured_content["result"] == words.structured_content["result"]
            assert "note vectors are being computed" in both.meta["note"]
            assert "keyword results" in both.meta["note"]
            assert "note" not in (words.meta or {})
            held.set()
            deadline = time.monotonic() + 120
            while not vault.semantic_status()["ready"] and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            both = await client.call_tool("search", {"query": "deploy runbook", "mode": "hybrid"})
            assert both.structured_content["mode"] == "hybrid" and "note" not in (both.meta or {})
    finally:
        held.set()
        vault.stop()
