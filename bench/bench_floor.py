"""The whole listing's floor: what the client alone costs to walk vaultwatch's exact answers.

Records the lines `vaultwatch serve --stdio` writes for the whole listing (default pages and pages
of `--limit` rows) through a tap between the real Python `mcp` client and the server, then has the
client walk the same listing from a replay server: a process that answers each request with the
recorded line at once (its id put in), doing no vaultwatch work. That walk is the least any server
could take with these answers and this client. It is timed as bench_peers times the whole listing
(wall time around the walk, `mode="legacy"`, every page's paths collected), alternated with the same
walk against the real server (one session each, kept open), so the server's share is the difference.
The same two walks are timed with the official TypeScript SDK client (1.32.2, from
tests/mcp_server/ts_client's node_modules; `--ts-modules` names another) for comparison.

Then that client spawns each server (`--spawns` times each, alternated) and walks its listing in default
pages until it is complete and right, timed from the spawn: warm (the cache the walks above left), the
replay's spawn being the client's own floor, and vaultwatch cold (a cache folder of its own), each cold
spawn beside the floor of bench_peers (one process walking, reading and parsing every note).

Every walk's paths are checked against the generator's manifest. Beside the wall times: the client's
CPU (`time.process_time` around the Python walk) and the server process's CPU (all its threads, /proc).

    python -m bench.bench_floor [--notes 10000] [--rounds 5] [--limit 1000] [--vault PATH] [--spawns 3] [--no-ts]

The vault (a vaultgen vault with its manifest beside it) is copied first and never modified.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import AS_OF, OUT, ROOT, emit, vault  # noqa: E402
from bench.treerss import below  # noqa: E402

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
TS_MODULES = ROOT / "tests" / "mcp_server" / "ts_client" / "node_modules"


# ---------------------------------------------------------------------------------------------
# the tap: relays a client and a server, and keeps every line each sends


def tap(out: Path, command: list[str]) -> int:
    """Run `command` with this process's stdin and stdout relayed to it, every line written to `out`
    (b">" and a line the client sent, b"<" and a line the server sent)."""
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    lock = threading.Lock()
    sink = open(out, "wb")  # noqa: SIM115 (closed at exit below)

    def keep(mark: bytes, line: bytes) -> None:
        with lock:
            sink.write(mark + line)

    def upstream() -> None:
        assert child.stdin is not None
        for line in sys.stdin.buffer:
            keep(b">", line)
            child.stdin.write(line)
        child.stdin.close()

    threading.Thread(target=upstream, daemon=True).start()
    assert child.stdout is not None
    for line in child.stdout:
        keep(b"<", line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    with lock:
        sink.close()
    return child.wait()


# ---------------------------------------------------------------------------------------------
# the walks


def server_env(home: Path) -> dict[str, str]:
    run = Path(tempfile.mkdtemp(prefix="vwf", dir="/tmp"))
    return {
        **{k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")},
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_RUNTIME_DIR": str(run),
        "XDG_STATE_HOME": str(home / "state"),
        "PYTHONPATH": str(ROOT),
        "VAULTWATCH_SEMANTIC": "0",
    }


def serve_command(root: Path) -> list[str]:
    return [sys.executable, "-m", "vaultwatch.tui.entry", "serve", str(root), "--stdio", "--as-of", AS_OF]


def check(manifest: dict, paths: list[str]) -> list[str]:
    problems = []
    if len(paths) != manifest["notes"] or len(set(paths)) != len(paths):
        problems.append(f"{len(paths)} paths ({len(set(paths))} distinct), expected {manifest['notes']}")
    if any(part.startswith(".") for p in paths for part in p.split("/")):
        problems.append("a hidden path listed")
    return problems


def process_cpu_ms(pid: int | None) -> float:
    """CPU milliseconds of a process, all its threads (/proc, in clock ticks)."""
    if pid is None:
        return 0.0
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * TICK_MS
    return 0.0


def child_with(marker: str) -> int | None:
    """The pid of a process below this one whose command line holds `marker`."""
    for pid in below(os.getpid()):
        with contextlib.suppress(OSError):
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                return pid
    return None


async def walk(c, limit: int | None) -> tuple[list[str], int]:
    """The whole listing through the cursor, as bench_peers walks it."""
    paths: list[str] = []
    cursor, calls = None, 0
    while True:
        args: dict = {} if limit is None else {"limit": limit}
        if cursor:
            args["cursor"] = cursor
        r = await c.call_tool("list_documents", args)
        if r.is_error:
            raise RuntimeError(r.content[0].text if r.content else "isError")
        data = r.structured_content
        calls += 1
        paths.extend(row["path"] for row in data["result"])
        cursor = data.get("next_cursor")
        if not cursor:
            return paths, calls


async def until_complete(c, manifest: dict) -> None:
    while True:
        r = await c.call_tool("list_documents", {"limit": 1})
        if not r.is_error and r.structured_content and r.structured_content.get("total") == manifest["notes"]:
            return
        await asyncio.sleep(0.05)


async def record(root: Path, home: Path, manifest: dict, limit: int, out: Path) -> dict:
    """The real server's lines for the whole listing, both page sizes, through the tap."""
    from mcp import Client, StdioServerParameters

    args = ["-m", "bench.bench_floor", "--tap", str(out), "--", *serve_command(root)]
    params = StdioServerParameters(command=sys.executable, args=args, env=server_env(home), cwd=str(ROOT))
    async with Client(params, mode="legacy") as c:
        await until_complete(c, manifest)
        pages = {}
        for name, size in (("default", None), ("limit", limit)):
            paths, pages[name] = await walk(c, size)
            if problems := check(manifest, paths):
                raise RuntimeError(f"the recorded listing is wrong: {problems}")
    return pages


TS_WALK = r"""
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [rounds, limit, expect, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
const client = new Client({ name: "bench-floor", version: "1.0.0" });
await client.connect(transport);
async function walk(size) {
  const paths = [];
  let cursor, calls = 0;
  do {
    const a = size ? { limit: size } : {};
    if (cursor) a.cursor = cursor;
    const r = await client.callTool({ name: "list_documents", arguments: a });
    if (r.isError) throw new Error(r.content?.[0]?.text ?? "isError");
    calls += 1;
    for (const row of r.structuredContent.result) paths.push(row.path);
    cursor = r.structuredContent.next_cursor;
  } while (cursor);
  return [paths, calls];
}
while (true) {
  const r = await client.callTool({ name: "list_documents", arguments: { limit: 1 } });
  if (!r.isError && r.structuredContent?.total === Number(expect)) break;
  await new Promise((ok) => setTimeout(ok, 50));
}
const report = { default_ms: [], limit_ms: [], counts: [] };
for (let i = 0; i < Number(rounds); i++) {
  for (const [key, size] of [["default_ms", 0], ["limit_ms", Number(limit)]]) {
    const t = performance.now();
    const [paths, calls] = await walk(size);
    report[key].push(performance.now() - t);
    report.counts.push([paths.length, new Set(paths).size, calls]);
  }
}
await client.close();
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(0));
"""


TS_SPAWN = r"""
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [expect, command, ...args] = process.argv.slice(2);
const t0 = performance.now();
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
const client = new Client({ name: "bench-floor", version: "1.0.0" });
await client.connect(transport);
const initMs = performance.now() - t0;
let walks = 0, wrong = "";
while (true) {
  const paths = [];
  let cursor, failed = false;
  do {
    const a = cursor ? { cursor } : {};
    const r = await client.callTool({ name: "list_documents", arguments: a });
    if (r.isError) { failed = true; wrong = r.content?.[0]?.text ?? "isError"; break; }
    for (const row of r.structuredContent.result) paths.push(row.path);
    cursor = r.structuredContent.next_cursor;
  } while (cursor);
  walks += 1;
  if (!failed) {
    const hidden = paths.some((p) => p.split("/").some((part) => part.startsWith(".")));
    if (paths.length === Number(expect) && new Set(paths).size === paths.length && !hidden) break;
    wrong = `${paths.length} paths (${new Set(paths).size} distinct, hidden: ${hidden}), expected ${expect}`;
  }
  if (performance.now() - t0 > 300000) throw new Error(`no complete listing in 300 s: ${wrong}`);
  await new Promise((ok) => setTimeout(ok, 5));
}
const completeS = (performance.now() - t0) / 1000;
await client.close();
process.stdout.write(JSON.stringify({ init_ms: initMs, complete_s: completeS, walks }) + "\n", () => process.exit(0));
"""


def ts_spawn(modules: Path, command: list[str], env: dict, expect: int) -> dict:
    """The TypeScript SDK client spawning `command` and walking its listing in default pages until it is
    complete and right (the time from the spawn; the node process's own start is not counted)."""
    with tempfile.TemporaryDirectory(prefix="vwts") as tmp:
        (Path(tmp) / "node_modules").symlink_to(modules)
        (Path(tmp) / "spawn.mjs").write_text(TS_SPAWN)
        done = subprocess.run(
            ["node", "spawn.mjs", str(expect), *command], cwd=tmp, env=env, capture_output=True, text=True, timeout=600
        )
    if done.returncode != 0:
        raise RuntimeError(f"the TypeScript spawn failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def ts_walks(modules: Path, command: list[str], env: dict, rounds: int, limit: int, expect: int) -> dict:
    """The TypeScript SDK client's whole listings against `command` (spawned by it, once)."""
    with tempfile.TemporaryDirectory(prefix="vwts") as tmp:
        (Path(tmp) / "node_modules").symlink_to(modules)
        (Path(tmp) / "walk.mjs").write_text(TS_WALK)
        done = subprocess.run(
            ["node", "walk.mjs", str(rounds), str(limit), str(expect), *command],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    if done.returncode != 0:
        raise RuntimeError(f"the TypeScript walk failed: {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    for n, distinct, _ in report["counts"]:
        if n != expect or distinct != expect:
            raise RuntimeError(f"the TypeScript walk listed {n} paths ({distinct} distinct), expected {expect}")
    return report


def med(samples: list[float]) -> float:
    return round(statistics.median(samples), 1)


async def main(notes: int, rounds: int, limit: int, source: Path | None, ts: bool, modules: Path, spawns: int) -> dict:
    from mcp import Client, StdioServerParameters

    if source is None:
        source, manifest = vault(notes)
    else:
        manifest = json.loads(Path(f"{source}.manifest.json").read_text())
    work = OUT / "floor" / source.name
    shutil.rmtree(work, ignore_errors=True)
    root, home = work / "vault", work / "home"
    shutil.copytree(source, root)
    home.mkdir(parents=True)
    recording = work / "recording.jsonl"
    pages = await record(root, home, manifest, limit, recording)
    env = server_env(home)
    sides = {
        "replay": [sys.executable, "-m", "bench.replay", str(recording)],
        "vaultwatch": serve_command(root),
    }
    samples: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        samples.setdefault(key, []).append(value)

    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for name, command in sides.items():
            params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(ROOT))
            clients[name] = await stack.enter_async_context(Client(params, mode="legacy"))
            await until_complete(clients[name], manifest)
        pids = {name: child_with(command[-1] if name == "replay" else str(root)) for name, command in sides.items()}
        order = list(sides)
        for _ in range(rounds):
            order.reverse()
            for kind, size in (("default", None), ("limit", limit)):
                for name in order:
                    cpu, server_cpu = time.process_time(), process_cpu_ms(pids[name])
                    t = time.perf_counter()
                    paths, _ = await walk(clients[name], size)
                    add(f"python_{name}_{kind}_ms", (time.perf_counter() - t) * 1000)
                    add(f"python_{name}_{kind}_client_cpu_ms", (time.process_time() - cpu) * 1000)
                    add(f"python_{name}_{kind}_server_cpu_ms", process_cpu_ms(pids[name]) - server_cpu)
                    if problems := check(manifest, paths):
                        raise RuntimeError(f"{name}: {problems}")
    out: dict = {k: med(v) for k, v in samples.items()}
    if ts:
        for name in ("replay", "vaultwatch"):
            report = ts_walks(modules, sides[name], env, rounds, limit, manifest["notes"])
            out[f"ts_{name}_default_ms"] = med(report["default_ms"])
            out[f"ts_{name}_limit_ms"] = med(report["limit_ms"])
    if ts and spawns:
        from bench.bench_peers import floor_s

        for rnd in range(spawns):
            # warm: the cache the sessions above left; the replay's spawn is the client's own floor
            for name in ("replay", "vaultwatch") if rnd % 2 else ("vaultwatch", "replay"):
                report = ts_spawn(modules, sides[name], env, manifest["notes"])
                add(f"ts_{name}_spawn_warm_s", report["complete_s"])
                add(f"ts_{name}_spawn_init_ms", report["init_ms"])
            # cold: a cache folder of its own (no entry cache, no handshake cache), beside the floor
            with tempfile.TemporaryDirectory(prefix="vwcold", dir=home) as cold:
                report = ts_spawn(modules, sides["vaultwatch"], {**env, "XDG_CACHE_HOME": cold}, manifest["notes"])
            add("ts_vaultwatch_spawn_cold_s", report["complete_s"])
            add("floor_s", floor_s(root))
        for key in ("ts_replay_spawn_warm_s", "ts_vaultwatch_spawn_warm_s", "ts_vaultwatch_spawn_cold_s", "floor_s"):
            out[key] = round(statistics.median(samples[key]), 3)
        for key in ("ts_replay_spawn_init_ms", "ts_vaultwatch_spawn_init_ms"):
            out[key] = med(samples[key])
        out["ts_spawn_cold_to_floor"] = round(out["ts_vaultwatch_spawn_cold_s"] / out["floor_s"], 2)
    for client in ("python", "ts") if ts else ("python",):
        for kind in ("default", "limit"):
            real, floor = out.get(f"{client}_vaultwatch_{kind}_ms"), out.get(f"{client}_replay_{kind}_ms")
            if real and floor:
                out[f"{client}_{kind}_server_share_ms"] = round(real - floor, 1)
    size = recording.stat().st_size
    shutil.rmtree(root, ignore_errors=True)
    return {
        "benchmark": "floor",
        "notes": manifest["notes"],
        "vault": str(source),
        "rounds": rounds,
        "spawns": spawns if ts else 0,
        "limit": limit,
        "pages": pages,
        "recording_bytes": size,
        "load_avg": os.getloadavg(),
        "median": out,
    }


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--tap":
        sys.exit(tap(Path(sys.argv[2]), sys.argv[4:]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000, help="a vaultgen vault of this many notes (bench/out)")
    ap.add_argument("--vault", type=Path, help="this vault instead (its manifest beside it: PATH.manifest.json)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--limit", type=int, default=1000, help="rows in a sized page (bench_calls.SIZED_PAGE)")
    ap.add_argument("--spawns", type=int, default=3, help="spawns of each kind by the TypeScript client (0: none)")
    ap.add_argument("--no-ts", action="store_true", help="leave out the TypeScript SDK client")
    ap.add_argument("--ts-modules", type=Path, default=TS_MODULES, help="node_modules with the TypeScript SDK")
    ns = ap.parse_args()
    emit(asyncio.run(main(ns.notes, ns.rounds, ns.limit, ns.vault, not ns.no_ts, ns.ts_modules, ns.spawns)))
