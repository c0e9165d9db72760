"""Search calls through the real client, against another checkout, answer by answer.

Both servers run at once (spawned over stdio by the Python `mcp` client as `bench.bench_calls` spawns
them, on their own copies of the vaultgen vault, the semantic extra off) and every search alternates
between them, the order flipping each round. Two sets of queries: the issue's figure, title queries
(file names, as `bench_calls` and `bench_peers` ask them, limit 10), and keyword queries of every kind
(`bench_search`'s: common pairs, a phrase, prefixes, a question, the any-word fallback), asked without
a limit (a default page, cut to the answer budget). Every answer (text, links, structured content) is
compared between the two servers: `answers_equal` says whether all were byte for byte the same. A third
set asks the title queries again, each right after a note written through the server is searchable
(`title_after_write_ms`: an agent's search after its own write).

Besides the wall-clock p50, the CPU each call costs, which load inflates far less: the server's (every
thread of its process, from /proc's schedstat) and the client's (its process time), as means per call.
On a quiet machine a call takes about the two together.

    VAULTWATCH_BENCH_DIR=/tmp/vw/out python -m bench.bench_search_calls --baseline /work/base [--rounds 5] [--notes 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client  # noqa: E402

from bench.bench_calls import Side, params, ready, wire  # noqa: E402
from bench.common import OUT, ROOT, emit, vault  # noqa: E402


def cpu_ns(pid: int) -> int:
    """CPU time used so far by every thread of process `pid` (Linux /proc schedstat), in ns."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total


def server_pid(root: Path) -> int:
    """The pid of the vaultwatch server serving `root` (the client spawned it)."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                args = (proc / "cmdline").read_bytes().split(b"\0")
                if b"serve" in args and str(root).encode() in args:
                    return int(proc.name)
    raise RuntimeError(f"no server process for {root}")


KEYWORDS = [
    "latency socket",
    "budget roadmap",
    "vault triage",
    '"review meeting"',
    "budg*",
    "laten*",
    "how do I rotate the deploy keys",
    "notes about the roadmap review",
    "quokka budg*",
    "stale index -draft",
]


async def written(s: Side, word: str) -> None:
    """Write a note holding `word` through the server, and return once a search finds it."""
    r = await s.c.call_tool(
        "write", {"path": f"bench-written/{word}.md", "content": f"# {word}\n\n{word} was written\n"}
    )
    if r.is_error:
        raise RuntimeError(f"{s.name} did not write {word}: {wire(r)[:300]}")
    deadline = time.monotonic() + 30
    while not (await s.c.call_tool("search", {"query": word, "limit": 1})).structured_content.get("result"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{s.name} never found {word}")
        await asyncio.sleep(0.01)


async def main(baseline: Path, rounds: int, notes: int) -> dict:
    base, manifest = vault(notes)
    work = OUT / "search-calls"
    shutil.rmtree(work, ignore_errors=True)
    files = sorted(str(p.relative_to(base)) for p in base.rglob("*.md") if not p.name.startswith("."))
    files = [f for f in files if not any(part.startswith(".") for part in f.split("/"))]
    step = max(1, len(files) // 20)
    titles = [Path(p).stem for p in files[step // 2 :: step][:10]]
    checkouts = {"vaultwatch": ROOT, "vaultwatch@baseline": baseline}
    diffs: list[str] = []
    compared = 0
    async with asyncio.timeout(3600):
        clients = {}
        for name, checkout in checkouts.items():
            root = work / name / "vault"
            shutil.copytree(base, root)
            home = work / name / "home"
            home.mkdir(parents=True, exist_ok=True)
            clients[name] = Client(params(checkout, root, home), mode="legacy")
        sides: dict[str, Side] = {}
        async with contextlib.AsyncExitStack() as stack:
            for name, client in clients.items():
                sides[name] = Side(name, await stack.enter_async_context(client))
            for s in sides.values():
                await ready(s, manifest["notes"])
                while (await s.c.call_tool("search", {"query": titles[0], "limit": 10})).is_error:
                    await asyncio.sleep(0.2)  # the full-text index is still being built
            pids = {name: server_pid(work / name / "vault") for name in sides}
            cpu: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
            order = list(sides.values())
            for rnd in range(rounds):
                order.reverse()
                got: dict[str, list[str]] = {s.name: [] for s in order}
                calls = [("title_search_ms", {"query": q, "limit": 10}) for q in titles]
                calls += [("keyword_search_ms", {"query": q}) for q in KEYWORDS]
                calls += [("title_after_write_ms", {"query": q, "limit": 10}) for q in titles]
                for i, (key, args) in enumerate(calls):
                    if key == "title_after_write_ms":
                        for s in order:
                            await written(s, f"zqw{rnd}x{i}")
                    for s in order:
                        server0, client0 = cpu_ns(pids[s.name]), time.process_time_ns()
                        r = await s.timed(key, s.c.call_tool("search", args))
                        client = time.process_time_ns() - client0
                        spent = cpu[s.name].setdefault(key, [0.0, 0.0, 0.0])
                        spent[0] += (cpu_ns(pids[s.name]) - server0) / 1e6
                        spent[1] += client / 1e6
                        spent[2] += 1
                        got[s.name].append(wire(r))
                a, b = got.values()
                compared += len(a)
                for i, (x, y) in enumerate(zip(a, b, strict=True)):
                    if x != y and len(diffs) < 3:
                        diffs.append(f"round {rnd}, {calls[i][1]}: {x[:300]} / {y[:300]}")
    out = {s.name: {k: round(statistics.median(v), 2) for k, v in s.samples.items()} for s in sides.values()}
    cpu_ms = {
        name: {
            key.replace("_ms", "_server_cpu_ms"): round(server / n, 2) for key, (server, _client, n) in kinds.items()
        }
        | {key.replace("_ms", "_client_cpu_ms"): round(client / n, 2) for key, (_server, client, n) in kinds.items()}
        for name, kinds in cpu.items()
    }
    return {
        "benchmark": "search_calls",
        "notes": manifest["notes"],
        "rounds": rounds,
        "baseline": str(baseline),
        "load_avg": os.getloadavg(),
        "p50": out,
        "ratio_to_baseline": {
            k: round(out["vaultwatch"][k] / out["vaultwatch@baseline"][k], 3) for k in out["vaultwatch"]
        },
        "cpu_per_call": cpu_ms,
        "answers_compared": compared,
        "answers_equal": not diffs,
        "differences": diffs,
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--notes", type=int, default=10_000)
    ns = ap.parse_args()
    emit(asyncio.run(main(ns.baseline, ns.rounds, ns.notes)))
