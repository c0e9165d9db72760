"""A cold start of a real `serve --stdio` leaves no process behind once its work is done: the
parse pool's workers end with their work, and no multiprocessing forkserver or resource tracker
stays for the server's life (core/index/freshproc.py). The vault is big enough for the parse
pool (parsepool.PARALLEL_MIN_FILES) and, below ftsprep.POOL_MIN_NOTES, its first full-text build
runs in the server's own threads: no process beside it (the tree's peak is the sum)."""

from __future__ import annotations

import asyncio
import base64
import os
import pickle
import sys
import threading

import mcp_testing
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT

from bench.vaultgen import generate
from vaultwatch.core.index.parsepool import PARALLEL_MIN_FILES
from vaultwatch.core.search.ftsprep import POOL_MIN_NOTES

NOTES = PARALLEL_MIN_FILES + 200
assert NOTES < POOL_MIN_NOTES


def _runs(argv: list[str]) -> str:
    """What a child runs: its command line, or for a fresh worker the function it was started with
    (named in its payload, the last argument: base64 of a pickle, core/index/freshproc.py)."""
    cmd = " ".join(argv)
    if "freshproc" not in cmd:
        return cmd
    _path, module, qualname, _args = pickle.loads(base64.b64decode(next(a for a in reversed(argv) if a)))
    return f"fresh worker: {module}.{qualname}"


def children(pid: int) -> list[tuple[int, str]]:
    """The processes whose parent is `pid`, with what they run."""
    return [(child, _runs(argv)) for child, argv in mcp_testing.children(pid)]


async def cold_start(vault, env) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(what ran below the server while it worked, what is left once the listing is complete and
    search is ready)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultwatch.tui.entry", "serve", str(vault), "--stdio"],
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    seen: set[tuple[int, str]] = set()
    done = threading.Event()
    found: list[int] = []

    def sample() -> None:
        # workers live for a second or less: looked for every 10 ms, on a thread of the test's own,
        # from before the server is spawned, so that none of its load's is missed
        while not done.wait(0.01):
            if not found:
                found.extend(pid for pid, cmd in children(os.getpid()) if "vaultwatch.tui.entry" in cmd)
            if found:
                seen.update(children(found[0]))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        async with Client(params, mode="legacy") as client:
            server = next(pid for pid, cmd in children(os.getpid()) if "vaultwatch.tui.entry" in cmd)
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
    finally:
        done.set()
        sampler.join()
    return sorted(seen), left


def test_a_cold_start_leaves_no_process_behind(tmp_path, env) -> None:
    vault = tmp_path / "vault"
    generate(vault, NOTES)
    seen, left = asyncio.run(cold_start(vault, env))
    assert left == [], left
    ran = {what for _, what in seen}
    # the parse pool's workers: fresh interpreters, or forks of the server when its load began
    # while it ran one thread (parsepool.process_context), which a loaded machine's timing allows
    forked = [what for what in ran if "vaultwatch.tui.entry serve" in what]
    assert "fresh worker: vaultwatch.core.index.freshproc._pool_worker" in ran or forked, ran
    assert not [what for what in ran if "vaultwatch.core.search" in what], ran  # the build's: none
