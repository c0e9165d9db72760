"""vaultwatch against another checkout of itself, call by call, over stdio through the real client.

For a before/after under the same load: both servers run at once (each spawned by the Python
`mcp` client, `mode="legacy"`, on its own copy of the vaultgen vault, the semantic extra off),
and every measured call alternates between them (the order flips each round), so load that
moves during the run falls on both alike. Per server: the whole listing through the cursor, in
default pages (cut by the server's 64 KiB message budget) and in pages the agent sizes with
`limit` (`--limit`, 1,000 rows by default: see `SIZED_PAGE`), with the page counts; search p50 over
title queries, read p50, write -> visible in its folder's listing. Beside each timed figure, the CPU
the server spent on it (`*_server_cpu_ms`: its threads that answer calls, the event loop's and the
workers', from /proc; the index's own threads (`vaultwatch-*`) left out), which the machine's load
moves far less than the wall time (a mean: /proc counts it in 10 ms ticks). Every page, search and read answer (text and structured content) is compared between
the two servers: `answers_equal` says whether they were byte for byte the same, and the first
difference if not.

    VAULTWATCH_BENCH_DIR=/tmp/vwperf/out python -m bench.bench_calls --baseline /work/main [--rounds 5] [--limit 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client, StdioServerParameters  # noqa: E402

from bench.bench_floor import child_with  # noqa: E402
from bench.common import AS_OF, OUT, ROOT, emit, vault  # noqa: E402

# Rows in a page the agent sizes itself. 1,000 listing rows make a message of ~0.5 MB (each row ~240 bytes
# of structured content, ~150 of escaped text table and ~110 of resource_link): far inside the 10 MiB a
# TypeScript SDK client reads and the server's 2 MiB hard cap of one answer's text. A model-facing call keeps
# the default budget (Claude Code caps what reaches the model at 25k tokens and moves longer output to a
# file); a bulk reader (an indexer, a sync) picks its page size.
SIZED_PAGE = 1000


def params(checkout: Path, root: Path, home: Path) -> StdioServerParameters:
    run = Path(tempfile.mkdtemp(prefix="vwc", dir="/tmp"))
    env = {
        **{k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")},
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_RUNTIME_DIR": str(run),
        "XDG_STATE_HOME": str(home / "state"),
        "PYTHONPATH": str(checkout),
        "VAULTWATCH_SEMANTIC": "0",
    }
    args = ["-m", "vaultwatch.tui.entry", "serve", str(root), "--stdio", "--as-of", AS_OF]
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(checkout))


def wire(result) -> str:
    """A result as the client received it: every content block and the structured content."""
    blocks = [b.model_dump(mode="json", exclude_none=True) for b in result.content]
    return json.dumps([blocks, result.structured_content, result.is_error], ensure_ascii=False)


# a note the benchmark writes carries the second its server wrote it (modified_at): the two servers' writes
# of one note may fall in two seconds, so the answers are compared without it (the time in the note's own
# row; a resource_link block, which has none, ends at its "type" before any other row's time)
_WRITTEN_AT = re.compile(r"(bench-new/r\d+-\d+\.md(?:(?!type).){0,240}?)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", re.DOTALL)


def untimed(answer: str | list[str]) -> str | list[str]:
    """An answer (or a listing's pages) with the written notes' times replaced by a mark."""
    if isinstance(answer, list):
        return [_WRITTEN_AT.sub(r"\1<written>", page) for page in answer]
    return _WRITTEN_AT.sub(r"\1<written>", answer)


TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def server_pid(root: Path) -> int | None:
    """The pid of the server process serving `root` (a child of this process), or None (not on Linux)."""
    return child_with(str(root))


def answering_cpu_ms(pid: int | None) -> float:
    """CPU milliseconds the server's threads that answer calls have used (all but the index's own threads)."""
    if pid is None:
        return 0.0
    total = 0
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/task/{task}/comm").read_text().startswith("vaultwatch-"):
                    continue
                fields = Path(f"/proc/{pid}/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
    return total * TICK_MS


class Side:
    def __init__(self, name: str, client, pid: int | None = None) -> None:
        self.name, self.c, self.pid = name, client, pid
        self.samples: dict[str, list[float]] = {}
        self.pages: dict[str, int] = {}

    def add(self, key: str, ms: float) -> None:
        self.samples.setdefault(key, []).append(ms)

    async def listing(self, limit: int | None = None) -> list[str]:
        """The whole listing through the cursor: default pages, or pages of `limit` rows."""
        answers, cursor = [], None
        while True:
            args: dict = {} if limit is None else {"limit": limit}
            if cursor:
                args["cursor"] = cursor
            r = await self.c.call_tool("list_documents", args)
            answers.append(wire(r))
            cursor = r.structured_content.get("next_cursor")
            if not cursor:
                self.pages["pages" if limit is None else "pages_limit"] = len(answers)
                return answers

    async def timed(self, key: str, coro) -> object:
        cpu = answering_cpu_ms(self.pid)
        t = time.perf_counter()
        out = await coro
        self.add(key, (time.perf_counter() - t) * 1000)
        if self.pid is not None:
            self.add(key.removesuffix("_ms") + "_server_cpu_ms", answering_cpu_ms(self.pid) - cpu)
        return out


async def ready(side: Side, expect: int) -> None:
    while True:
        r = await side.c.call_tool("list_documents", {"limit": 1})
        if r.structured_content and r.structured_content.get("total") == expect:
            return
        await asyncio.sleep(0.05)


async def main(baseline: Path, rounds: int, notes: int, limit: int = SIZED_PAGE, source: Path | None = None) -> dict:
    if source is None:
        base, manifest = vault(notes)
    else:  # a vaultgen vault made elsewhere (its manifest beside it), copied, never changed
        base, manifest = source, json.loads(Path(f"{source}.manifest.json").read_text(encoding="utf-8"))
    work = OUT / "calls"
    shutil.rmtree(work, ignore_errors=True)
    files = sorted(str(p.relative_to(base)) for p in base.rglob("*.md") if not p.name.startswith("."))
    files = [f for f in files if not any(part.startswith(".") for part in f.split("/"))]
    step = max(1, len(files) // 20)
    reads = files[::step][:20]
    queries = [Path(p).stem for p in files[step // 2 :: step][:10]]
    checkouts = {"vaultwatch": ROOT, "vaultwatch@baseline": baseline}
    diffs: list[str] = []
    async with asyncio.timeout(1800):
        clients = {}
        for name, checkout in checkouts.items():
            root = work / name / "vault"
            shutil.copytree(base, root)
            home = work / name / "home"
            home.mkdir(parents=True, exist_ok=True)
            clients[name] = Client(params(checkout, root, home), mode="legacy")
        sides = {}
        async with contextlib.AsyncExitStack() as stack:
            for name, client in clients.items():
                entered = await stack.enter_async_context(client)
                sides[name] = Side(name, entered, server_pid(work / name / "vault"))
            for s in sides.values():
                await ready(s, manifest["notes"])
            order = list(sides.values())
            for rnd in range(rounds):
                order.reverse()
                got: dict[str, list] = {s.name: [] for s in order}
                for _ in range(2):
                    for s in order:
                        got[s.name].append(await s.timed("whole_listing_ms", s.listing()))
                    for s in order:
                        got[s.name].append(await s.timed("whole_listing_limit_ms", s.listing(limit)))
                for q in queries:
                    for s in order:
                        r = await s.timed("search_ms", s.c.call_tool("search", {"query": q, "limit": 10}))
                        got[s.name].append(wire(r))
                for p in reads:
                    for s in order:
                        r = await s.timed("read_ms", s.c.call_tool("read", {"path": p}))
                        got[s.name].append(wire(r))
                for i in range(5):
                    for s in order:
                        rel = f"bench-new/r{rnd}-{i}.md"
                        t = time.perf_counter()
                        await s.c.call_tool("write", {"path": rel, "content": f"# r{rnd} {i}\n\nnew\n"})
                        while True:
                            r = await s.c.call_tool("list_documents", {"folder": "bench-new"})
                            if rel in [row["path"] for row in r.structured_content["result"]]:
                                break
                        s.add("write_to_listing_ms", (time.perf_counter() - t) * 1000)
                a, b = ([untimed(x) for x in answers] for answers in got.values())
                if a != b and len(diffs) < 3:
                    first = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
                    diffs.append(f"round {rnd}, answer {first}: {str(a[first])[:300]} / {str(b[first])[:300]}")
    out: dict = {}
    for s in sides.values():
        # the server's CPU as a mean: /proc counts it in clock ticks (10 ms), more than one read takes
        out[s.name] = {
            k: round((statistics.mean if k.endswith("_server_cpu_ms") else statistics.median)(v), 2)
            for k, v in s.samples.items()
        }
        out[s.name].update(s.pages)
    ratio = {
        k: round(out["vaultwatch"][k] / out["vaultwatch@baseline"][k], 3)
        for k in out["vaultwatch"]
        if k.endswith("_ms") and out["vaultwatch@baseline"].get(k)
    }
    return {
        "benchmark": "calls",
        "notes": manifest["notes"],
        "rounds": rounds,
        "baseline": str(baseline),
        "limit": limit,
        "load_avg": os.getloadavg(),
        "p50": out,  # the *_server_cpu_ms figures are means
        "ratio_to_baseline": ratio,
        "answers_equal": not diffs,
        "differences": diffs,
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--limit", type=int, default=SIZED_PAGE, help="rows in a sized page (see SIZED_PAGE)")
    ap.add_argument(
        "--vault", type=Path, help="this vaultgen vault instead (its manifest beside it: PATH.manifest.json)"
    )
    ns = ap.parse_args()
    emit(asyncio.run(main(ns.baseline, ns.rounds, ns.notes, ns.limit, ns.vault)))
