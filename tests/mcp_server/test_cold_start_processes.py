"""A cold start of a real `serve --stdio` leaves no process behind once its work is done: the
parse pool and the full-text build's workers end with their work, and no multiprocessing
forkserver or resource tracker stays for the server's life (core/index/freshproc.py). The vault
is big enough for both pools (parsepool.PARALLEL_MIN_FILES, ftsprep.POOL_MIN_NOTES)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import mcp_testing
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT

from bench.vaultgen import generate
from vaultwatch.core.index.parsepool import PARALLEL_MIN_FILES
from vaultwatch.core.search.ftsprep import POOL_MIN_NOTES

NOTES = max(PARALLEL_MIN_FILES, POOL_MIN_NOTES) + 200


def children(pid: int) -> list[tuple[int, str]]:
    """The processes whose parent is `pid`, with their command lines."""
    return [(child, " ".join(argv)) for child, argv in mcp_testing.children(pid)]


async def cold_start(vault, env) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(what ran below the server while it worked, what is left once the listing is complete and
    search is ready)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultwatch.tui.entry", "serve", str(vault), "--stdio"],
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    seen: dict[int, str] = {}
    done = threading.Event()

    def sample(server: int) -> None:  # the workers live while the server works, between calls too
        while not done.wait(0.01):
            seen.update(children(server))

    async with Client(params, mode="legacy") as client:
        server = next(pid for pid, cmd in children(os.getpid()) if "vaultwatch.tui.entry" in cmd)
        sampler = threading.Thread(target=sample, args=(server,), daemon=True)
        sampler.start()
        while True:  # the whole listing, complete once the index is loaded
            res = await client.call_tool("list_documents", {"limit": 1})
            if not (res.meta or {}).get("index_loading") and res.structured_content["total"] >= NOTES:
                break
            await asyncio.sleep(0.05)
        while True:  # the first full-text build is done once search answers
            res = await client.call_tool("search", {"query": "note", "limit": 1})
            if not res.is_error:
                break
            assert "still building" in res.content[0].text, res.content[0].text
            await asyncio.sleep(0.05)
        done.set()
        sampler.join()
        left = children(server)
        for _ in range(200):  # a worker told to stop may take a moment to exit
            if not left:
                break
            await asyncio.sleep(0.05)
            left = children(server)
    return sorted(seen.items()), left


def test_a_cold_start_leaves_no_process_behind(tmp_path, env) -> None:
    vault = tmp_path / "vault"
    generate(vault, NOTES)
    seen, left = asyncio.run(cold_start(vault, env))
    assert left == [], left
    assert any("freshproc" in cmd for _, cmd in seen), seen  # the pools ran, in processes of their own
