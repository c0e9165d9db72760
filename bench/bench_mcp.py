"""MCP over the Unix socket: `vaultwatch serve` in its own process, real `mcp` clients in this one.

Prints JSON: list_documents page of 100 at 100k notes (p50, target <= 5 ms), the whole
listing at 10k by default pages (each answer within the 64 KiB budget, following
next_cursor), status=deprecated at 10k (a default page; target <= 40 ms), and
10 concurrent agents x 100 calls at 10k (no errors, p95 <= 50 ms). Every answer is checked
against the vaultgen manifest. Timings are client-side: request, server work, JSON both
ways and the SDK's own validation of the result.

Next to the timings: `server_cpu_ms_per_call` (the serving process, from /proc) and
`client_gc_ms` (this process's own full garbage collections during the timed calls: a
10,000-row answer makes ~20,000 Python objects here, and the p95 of a big listing is mostly
those pauses). The 10 agents run twice: as tasks in this one process (its CPU is shared by
all ten clients, so with the SDK client it is the bottleneck) and as ten processes, one per
agent, as real agents are (`agents_10x100_processes`).

    python bench/bench_mcp.py [--notes 10000,100000] [--modes raw,legacy,auto]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp_types import Implementation  # noqa: E402

from bench.common import AS_OF, emit, vault  # noqa: E402


class RawResult:
    """The parts of a tools/call result the benchmark looks at."""

    def __init__(self, result: dict) -> None:
        self.is_error = result.get("isError", False)
        self.structured_content = result.get("structuredContent")
        self.meta = result.get("_meta")
        self.text = result["content"][0]["text"]


class RawClient:
    """A minimal MCP client: httpx2 POSTs on the socket and json.loads, no validation.

    Measures what the server and the wire cost; the SDK client adds its own parsing and
    schema validation on top (reported separately).
    """

    def __init__(self, sock: str, name: str) -> None:
        self.http = httpx2.AsyncClient(
            transport=httpx2.AsyncHTTPTransport(uds=sock), timeout=httpx2.Timeout(60, read=300)
        )
        self.name = name
        self.headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        self.ids = 0

    async def __aenter__(self) -> RawClient:
        await self._post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": self.name, "version": "1"},
                },
            }
        )
        self.headers["mcp-protocol-version"] = "2025-11-25"
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    async def __aexit__(self, *exc) -> None:
        await self.http.delete(URL, headers=self.headers)
        await self.http.aclose()

    async def _post(self, body: dict) -> dict | None:
        r = await self.http.post(URL, content=json.dumps(body), headers=self.headers)
        if "mcp-session-id" in r.headers:
            self.headers["mcp-session-id"] = r.headers["mcp-session-id"]
        return json.loads(r.content) if r.content else None

    async def call_tool(self, name: str, args: dict) -> RawResult:
        self.ids += 1
        reply = await self._post(
            {"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": {"name": name, "arguments": args}}
        )
        return RawResult(reply["result"])


URL = "http://localhost/mcp"


def client(sock: str, name: str, mode: str):
    if mode == "raw":
        return RawClient(sock, name)
    http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=sock), timeout=httpx2.Timeout(60, read=300))
    return Client(
        streamable_http_client(URL, http_client=http), mode=mode, client_info=Implementation(name=name, version="bench")
    )


class GcPauses:
    """Time this process spends in full (generation 2) garbage collections."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.count = 0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.ms += (time.perf_counter() - self._started) * 1000
            self.count += 1

    def since(self, mark: tuple[float, int]) -> dict[str, float]:
        return {"client_gc_ms": round(self.ms - mark[0], 1), "client_gc_count": self.count - mark[1]}

    def mark(self) -> tuple[float, int]:
        return self.ms, self.count


GC = GcPauses()


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 2),
        "max_ms": round(ordered[-1], 2),
    }


SERVER_PID: list[int] = []


def server_cpu_s() -> float:
    """CPU seconds the serving process has used (user + system), from /proc."""
    if not SERVER_PID:
        return 0.0
    with open(f"/proc/{SERVER_PID[-1]}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def timed_calls(c, name: str, args: dict, repeat: int) -> tuple[dict, object]:
    samples, last = [], None
    cpu, gc_mark = server_cpu_s(), GC.mark()
    for _ in range(repeat):
        t = time.perf_counter()
        last = await c.call_tool(name, args)
        samples.append((time.perf_counter() - t) * 1000)
        assert not last.is_error, last
    out = stats(samples)
    out["server_cpu_ms_per_call"] = round((server_cpu_s() - cpu) * 1000 / repeat, 2)
    out.update(GC.since(gc_mark))
    return out, last


async def whole_listing(c, notes: int, repeat: int) -> dict:
    """The complete listing as an agent gets it now: default pages (the answer budget), following
    next_cursor until it is null; timed end to end, every row checked to come once."""
    samples, pages = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        seen, cursor, pages = 0, None, 0
        while True:
            r = await c.call_tool("list_documents", {"cursor": cursor} if cursor else {})
            assert not r.is_error, r
            seen += r.structured_content["returned"]
            pages += 1
            cursor = r.structured_content["next_cursor"]
            if not cursor:
                break
        samples.append((time.perf_counter() - t) * 1000)
        assert seen == notes, (seen, notes)
    return {**stats(samples), "pages": pages}


class Served:
    """`vaultwatch serve VAULT` on a private socket, until closed."""

    def __init__(self, root: Path) -> None:
        self.dir = tempfile.mkdtemp(prefix="vwb", dir="/tmp")
        self.sock = os.path.join(self.dir, "b.sock")
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vaultwatch.tui.commands.cli",
                "serve",
                str(root),
                "--socket",
                self.sock,
                "--as-of",
                AS_OF,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parent.parent,
        )
        SERVER_PID.append(self.proc.pid)
        line = self.proc.stdout.readline()
        if self.sock not in line:
            raise RuntimeError(f"serve did not start: {line}{self.proc.stderr.read()}")
        self.socket_ready_s = round(time.perf_counter() - started, 3)

    async def wait_loaded(self, mode: str) -> float:
        """Seconds until the listing is complete; then wait for background indexing (full-text
        index, cache) to settle so it does not share the CPU with the measured calls."""
        started = time.perf_counter()
        async with client(self.sock, "bench-probe", mode) as c:
            while True:
                r = await c.call_tool("list_documents", {"limit": 1})
                if not (r.meta or {}).get("index_loading"):
                    loaded = round(time.perf_counter() - started, 3)
                    break
        deadline = time.perf_counter() + 180
        while time.perf_counter() < deadline:
            before = server_cpu_s()
            await asyncio.sleep(1.0)
            if server_cpu_s() - before < 0.05:
                break
        return loaded

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


async def bench_100k(root: Path, manifest: dict, mode: str) -> dict:
    served = Served(root)
    try:
        loaded = await served.wait_loaded(mode)
        async with client(served.sock, "bench", mode) as c:
            first, r = await timed_calls(c, "list_documents", {"limit": 100}, 200)
            assert r.structured_content["total"] == manifest["notes"] and r.structured_content["returned"] == 100
            cursor = r.structured_content["next_cursor"]
            deep, _ = await timed_calls(c, "list_documents", {"limit": 100, "cursor": cursor}, 100)
            folder, _ = await timed_calls(c, "list_documents", {"limit": 100, "folder": "Projects"}, 100)
            deprecated, r = await timed_calls(
                c, "list_documents", {"limit": 100, "filters": {"status": "deprecated"}}, 100
            )
            assert r.structured_content["total"] == manifest["status"]["deprecated"]
        return {
            "notes": manifest["notes"],
            "socket_ready_s": served.socket_ready_s,
            "index_loaded_s": loaded,
            "page100": first,
            "page100_second_page": deep,
            "page100_folder": folder,
            "page100_deprecated": deprecated,
            "target_page100_p50_ms": 5,
        }
    finally:
        served.close()


async def bench_10k(root: Path, manifest: dict, mode: str) -> dict:
    served = Served(root)
    try:
        await served.wait_loaded(mode)
        async with client(served.sock, "bench", mode) as c:
            full = await whole_listing(c, manifest["notes"], 10)
            deprecated, r = await timed_calls(c, "list_documents", {"filters": {"status": "deprecated"}}, 50)
            assert r.structured_content["total"] == manifest["status"]["deprecated"]
            stale, r = await timed_calls(c, "list_documents", {"filters": {"stale": "true"}}, 30)
            assert r.structured_content["total"] == manifest["stale_true"]
            payload = len(r.text if isinstance(r, RawResult) else r.content[0].text)
        agents = await many_agents(served.sock, mode, manifest)
        processes = await agent_processes(served.sock, mode)
        return {
            "notes": manifest["notes"],
            "whole_listing_by_pages": full,
            "deprecated_unpaged": deprecated,
            "target_deprecated_ms": 40,
            "stale_unpaged": stale,
            "stale_text_bytes": payload,
            "agents_10x100": agents,
            "agents_10x100_processes": processes,
        }
    finally:
        served.close()


MIX = [
    ("list_documents", {"folder": "Projects", "limit": 50}),
    ("read", {"path": "index.md", "frontmatter_only": True}),
    ("list_documents", {"filters": {"status": "deprecated"}, "limit": 20}),
    ("triage", {}),
    ("list_documents", {"pattern": "Journal/**/*.md", "limit": 25}),
    ("read", {"path": "index.md"}),
]


async def agent_calls(c, i: int, calls: int, samples: list[float], errors: list[str]) -> None:
    """Agent number `i`'s share of the mix, on an open client."""
    for k in range(calls):
        name, args = MIX[(i + k) % len(MIX)]
        t = time.perf_counter()
        r = await c.call_tool(name, args)
        samples.append((time.perf_counter() - t) * 1000)
        if r.is_error:
            errors.append(str(r))


async def many_agents(sock: str, mode: str, manifest: dict, agents: int = 10, calls: int = 100) -> dict:
    samples: list[float] = []
    errors: list[str] = []

    async def agent(i: int) -> None:
        async with client(sock, f"agent-{i}", mode) as c:
            await agent_calls(c, i, calls, samples, errors)

    started = time.perf_counter()
    cpu, gc_mark = server_cpu_s(), GC.mark()
    await asyncio.gather(*(agent(i) for i in range(agents)))
    wall = time.perf_counter() - started
    server_cpu = round((server_cpu_s() - cpu) * 1000 / (agents * calls), 2)
    return {
        "agents": agents,
        "calls_each": calls,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        **stats(samples),
        "server_cpu_ms_per_call": server_cpu,
        **GC.since(gc_mark),
        "wall_s": round(wall, 2),
        "calls_per_s": round(agents * calls / wall, 1),
        "target_p95_ms": 50,
    }


async def one_agent_process(sock: str, mode: str, i: int, calls: int) -> None:
    """`--agent I`: one agent in this process; connects, says "ready", waits for a line on
    stdin, makes its calls and prints its latencies and errors as JSON."""
    samples: list[float] = []
    errors: list[str] = []
    async with client(sock, f"agent-{i}", mode) as c:
        await c.call_tool(*MIX[i % len(MIX)])  # warm: the handshake and the tool list are done
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        await agent_calls(c, i, calls, samples, errors)
    print(json.dumps({"samples": samples, "errors": errors}), flush=True)


async def agent_processes(sock: str, mode: str, agents: int = 10, calls: int = 100) -> dict:
    """The same mix as many_agents, with each agent in its own process (as real agents are)."""
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--agent",
            str(i),
            "--socket",
            sock,
            "--modes",
            mode,
            "--calls",
            str(calls),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        for i in range(agents)
    ]
    try:
        for p in procs:
            line = await asyncio.wait_for(p.stdout.readline(), 60)
            if line.strip() != b"ready":
                raise RuntimeError(f"agent process did not start: {line!r}")
        started = time.perf_counter()
        cpu = server_cpu_s()
        for p in procs:
            p.stdin.write(b"go\n")
            await p.stdin.drain()
        outs = [json.loads(await asyncio.wait_for(p.stdout.readline(), 300)) for p in procs]
        wall = time.perf_counter() - started
        server_cpu = round((server_cpu_s() - cpu) * 1000 / (agents * calls), 2)
    finally:
        for p in procs:
            if p.returncode is None:
                p.stdin.close()
            await p.wait()
    samples = [s for o in outs for s in o["samples"]]
    errors = [e for o in outs for e in o["errors"]]
    return {
        "agents": agents,
        "calls_each": calls,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        **stats(samples),
        "server_cpu_ms_per_call": server_cpu,
        "wall_s": round(wall, 2),
        "calls_per_s": round(agents * calls / wall, 1),
        "target_p95_ms": 50,
    }


async def main(sizes: list[int], modes: list[str]) -> dict:
    out: dict = {
        "benchmark": "mcp",
        "transport": "streamable HTTP over a Unix socket",
        "server": "vaultwatch serve (separate process)",
        "clients": {
            "raw": "httpx2 + json.loads (server and wire cost)",
            "legacy": "mcp Python SDK Client, handshake era (adds SDK parsing + jsonschema)",
            "auto": "mcp Python SDK Client, 2026-07-28 era",
        },
    }
    for mode in modes:
        for notes in sizes:
            root, manifest = vault(notes)
            runner = bench_100k if notes >= 100_000 else bench_10k
            out[f"{mode}_v{notes // 1000}k"] = await runner(root, manifest, mode)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", default="10000,100000")
    ap.add_argument("--modes", default="raw,legacy", help="clients: raw, legacy, auto (comma-separated)")
    ap.add_argument("--agent", type=int, help=argparse.SUPPRESS)  # internal: one agent process
    ap.add_argument("--socket", help=argparse.SUPPRESS)
    ap.add_argument("--calls", type=int, default=100, help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns.agent is not None:
        asyncio.run(one_agent_process(ns.socket, ns.modes, ns.agent, ns.calls))
    else:
        emit(asyncio.run(main([int(n) for n in ns.notes.split(",")], ns.modes.split(","))))
