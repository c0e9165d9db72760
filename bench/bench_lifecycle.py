"""Server lifecycle as clients see it, with whole processes (prints JSON):

- bridge start -> first `tools/list` answered, with a server running and when the bridge has to
  start one (10k notes, warm cache);
- switch-over as an agent calling every 100 ms sees it: headless -> TUI opened -> TUI quit
  (per-call pause p95/max, failed reads, writes acknowledged / said maybe-applied / lost);
- loopback HTTP `ping` p50 (keep-alive client);
- a spawned stdio server: process start -> `initialize` answered -> first complete page of
  listing, warm and cold at 10k, side by side with the PyPI peer `obsidian-mcp` in the same run
  (installed into a venv under bench/out/, never into the project).

    python -m bench.bench_lifecycle [--notes N] [--runs R] [--skip-peer] [--skip-switch] [--only PART ...]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import pty
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script by dev.py bench

from bench.common import OUT, ROOT, emit, vault  # noqa: E402

VW = [sys.executable, "-m", "vaultwatch.tui.entry"]  # the console script's entry point
PEER = "obsidian-mcp==2.1.6"
# its June-2025 code runs only with the libraries of its day (newer fastmcp/pydantic fail to import it)
PEER_PINS = [PEER, "fastmcp==2.8.1", "mcp==1.9.4", "pydantic==2.11.7"]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
PARTS = ("bridge", "http", "switch", "spawned")
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(obj: dict) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 3)


class Lines:
    """Read JSON-RPC lines from a process's stdout with a deadline."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.buf = b""

    def until_id(self, want, timeout: float = 120.0) -> dict:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while time.monotonic() < deadline:
            while b"\n" in self.buf:
                raw, self.buf = self.buf.split(b"\n", 1)
                if raw.strip():
                    msg = json.loads(raw)
                    if msg.get("id") == want:
                        return msg
            if select.select([fd], [], [], 0.05)[0]:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"process closed stdout: {self.proc.stderr.read()[-2000:]!r}")
                self.buf += chunk
        raise TimeoutError(f"no reply {want} within {timeout} s")


def env_for(tmp: Path, cache: Path) -> dict[str, str]:
    run = Path(tempfile.mkdtemp(prefix="vwb", dir="/tmp"))
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp / "home"),
        "XDG_RUNTIME_DIR": str(run),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_CACHE_HOME": str(cache),
        "PYTHONPATH": str(ROOT),
    }


def holder_pid(root: str) -> int | None:
    sys.path.insert(0, str(ROOT))
    from vaultwatch.core.disk.vaultlock import holder

    h = holder(root)
    return h.pid if h else None


def headless_for(root: str) -> set[int]:
    """Headless servers of exactly this bench vault (from /proc): stragglers a phase left."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--headless" in argv and os.fsencode(root) in argv:
                found.add(int(entry))
    return found


def wait_free(root: str, timeout: float = 30) -> None:
    for pid in headless_for(root):
        stop_pid(pid)
    deadline = time.monotonic() + timeout
    while holder_pid(root) is not None and time.monotonic() < deadline:
        time.sleep(0.05)


def stop_pid(pid: int | None) -> None:
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def serve(root: Path, env: dict, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [*VW, "serve", str(root), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    first = proc.stdout.readline()
    if not first.startswith("vaultwatch: serving"):
        raise RuntimeError(f"serve did not start: {first!r}")
    return proc


def bridge_to_tools(root: Path, env: dict, cpu: list[float] | None = None) -> float:
    """Seconds from spawning a bridge to its first tools/list answer (and, into `cpu`, the CPU seconds
    the bridge and the vault's server had used by then: the server may be one the bridge started)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*VW, "bridge", "--vault", str(root), "--idle-exit", "20"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(line(INIT) + line(INITIALIZED) + line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    proc.stdin.flush()
    reply = Lines(proc).until_id(2)
    took = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(tree_cpu(proc.pid, holder_pid(str(root))))
    assert "result" in reply, reply
    proc.stdin.close()
    proc.wait(15)
    return took


def bench_bridge(root: Path, tmp: Path, cache: Path, runs: int) -> dict:
    env = env_for(tmp, cache)
    server = serve(root, env)  # also warms the cache for what follows
    try:
        running = [bridge_to_tools(root, env) for _ in range(runs)]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(20)
    starts: list[float] = []
    cpu: list[float] = []
    for _ in range(runs):
        wait_free(str(root))
        starts.append(bridge_to_tools(root, env, cpu))
        stop_pid(holder_pid(str(root)))
    wait_free(str(root))
    return {
        "server_running_s": {
            "p50": round(statistics.median(running), 3),
            "max": round(max(running), 3),
            "runs": [round(x, 3) for x in running],
            "target": 0.3,
        },
        "bridge_starts_one_s": {
            "p50": round(statistics.median(starts), 3),
            "max": round(max(starts), 3),
            "runs": [round(x, 3) for x in starts],
            "target": 1.5,
            "cpu_s_runs": [round(x, 3) for x in cpu],
        },
    }


def bench_http_ping(root: Path, tmp: Path, cache: Path, n: int = 200) -> dict:
    import httpx2

    env = env_for(tmp, cache)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = serve(root, env, "--http", f"127.0.0.1:{port}")
    try:
        sys.path.insert(0, str(ROOT))
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        from vaultwatch.mcp_server.locations import http_token

        token = http_token(str(root))
        url = f"http://127.0.0.1:{port}/mcp"
        headers = {
            "authorization": f"Bearer {token}",
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        with httpx2.Client(timeout=30) as http:
            r = http.post(url, json=INIT, headers=headers)
            sid = r.headers.get("mcp-session-id")
            h = {**headers, "mcp-session-id": sid, "mcp-protocol-version": r.json()["result"]["protocolVersion"]}
            http.post(url, json=INITIALIZED, headers=h)
            samples = []
            for i in range(n):
                t = time.perf_counter()
                http.post(url, json={"jsonrpc": "2.0", "id": 10 + i, "method": "ping"}, headers=h)
                samples.append((time.perf_counter() - t) * 1000)
        return {
            "ping_ms": {"p50": round(statistics.median(samples), 2), "p95": p(samples, 0.95), "n": n, "target_p50": 3.0}
        }
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(20)


def tree_cpu(*pids: int | None) -> float:
    """CPU seconds (user + system) of processes `pids` and every descendant, running or ended (a parse pool's
    workers are the forkserver's children), each counted once, from /proc: what a start cost whatever the
    machine's load."""
    tick = os.sysconf("SC_CLK_TCK")
    procs: dict[int, tuple[int, int]] = {}  # pid -> (parent, its CPU ticks and its reaped children's)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            procs[int(entry)] = (int(fields[1]), sum(int(f) for f in fields[11:15]))  # utime stime cutime cstime
    tree, total = {p for p in pids if p}, 0
    while True:
        more = {p for p, (parent, _) in procs.items() if parent in tree and p not in tree}
        if not more:
            break
        tree |= more
    for p in tree:
        total += procs.get(p, (0, 0))[1]
    return total / tick


def first_page(cmd: list[str], env: dict, call: dict) -> dict:
    """Process start -> initialize answered -> first listing page answered (seconds, and the CPU
    seconds the process had used by then)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        reader = Lines(proc)
        proc.stdin.write(line(INIT))
        proc.stdin.flush()
        reader.until_id(1)
        t_init = time.perf_counter() - t0
        proc.stdin.write(line(INITIALIZED) + line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        proc.stdin.flush()
        reply = reader.until_id(2, timeout=300)
        t_page = time.perf_counter() - t0
        cpu = tree_cpu(proc.pid)
        ok = "result" in reply and not reply["result"].get("isError")
        return {
            "initialize_s": round(t_init, 3),
            "first_page_s": round(t_page, 3),
            "first_page_cpu_s": round(cpu, 3),
            "ok": ok,
        }
    finally:
        # the session ends as a client ends it: stdin closed, a kill only after a grace period (a server killed
        # at once may not have written its entry cache yet, and the next "warm" run would start cold)
        try:
            proc.stdin.close()
            proc.wait(15)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait(10)


def peer_python() -> Path | None:
    venv = OUT / "peer-venv"
    exe = venv / "bin" / "obsidian-mcp"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *PEER_PINS], capture_output=True, text=True)
        if done.returncode != 0:
            return None
    return exe


def bench_spawned(root: Path, tmp: Path, runs: int, with_peer: bool) -> dict:
    out: dict = {"vaultwatch": {"warm": [], "cold": []}}
    peer = peer_python() if with_peer else None
    if peer:
        out[PEER] = {"warm": [], "cold": []}
    vw_call = {"name": "list_documents", "arguments": {}}
    peer_call = {"name": "list_notes_tool", "arguments": {}}
    for i in range(runs):
        cold_cache = tmp / f"cold-cache-{i}"
        env = env_for(tmp, cold_cache)
        wait_free(str(root))
        out["vaultwatch"]["cold"].append(first_page([*VW, "serve", str(root), "--stdio"], env, vw_call))
        wait_free(str(root))
        out["vaultwatch"]["warm"].append(first_page([*VW, "serve", str(root), "--stdio"], env, vw_call))
        if peer:
            penv = {**env, "HOME": str(tmp / f"peer-home-{i}"), "OBSIDIAN_VAULT_PATH": str(root)}
            os.makedirs(penv["HOME"], exist_ok=True)
            for kind in ("cold", "warm"):
                try:
                    out[PEER][kind].append(first_page([str(peer)], penv, peer_call))
                except (RuntimeError, TimeoutError) as exc:
                    out[PEER][kind].append(
                        {
                            "initialize_s": float("nan"),
                            "first_page_s": float("nan"),
                            "first_page_cpu_s": float("nan"),
                            "ok": False,
                            "error": str(exc)[-300:],
                        }
                    )
    for name in list(out):
        for kind in ("warm", "cold"):
            rows = out[name][kind]
            out[name][f"{kind}_median"] = {
                k: round(statistics.median(r[k] for r in rows), 3)
                for k in ("initialize_s", "first_page_s", "first_page_cpu_s")
            }
    out["targets"] = {"initialize_s": 0.5, "first_page_warm_s": 1.0, "first_page_cold_s": 2.5}
    return out


class Tui:
    def __init__(self, args: list[str], env: dict) -> None:
        self.master, slave = pty.openpty()
        os.set_blocking(self.master, False)
        self.proc = subprocess.Popen(
            [*VW, *args],
            cwd=ROOT,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env, "TERM": "xterm-256color"},
            close_fds=True,
        )
        os.close(slave)

    def drain(self) -> None:
        while select.select([self.master], [], [], 0)[0]:
            try:
                if not os.read(self.master, 1 << 16):
                    return
            except OSError:
                return

    def quit(self) -> None:
        os.write(self.master, b"q")
        deadline = time.monotonic() + 30
        while self.proc.poll() is None and time.monotonic() < deadline:
            self.drain()
            time.sleep(0.05)
        if self.proc.poll() is None:
            self.proc.kill()
        os.close(self.master)


def bench_switch(root: Path, tmp: Path, cache: Path) -> dict:
    env = env_for(tmp, cache)
    work = root / "Bench-switch"
    shutil.rmtree(work, ignore_errors=True)
    rows: list[dict] = []

    async def run() -> None:
        proc = await asyncio.create_subprocess_exec(
            *VW,
            "bridge",
            "--vault",
            str(root),
            "--idle-exit",
            "20",
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        proc.stdin.write(line(INIT))
        await proc.stdin.drain()
        await proc.stdout.readline()
        proc.stdin.write(line(INITIALIZED))
        stop = asyncio.Event()
        phase = {"name": "headless"}

        async def agent() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                write = n % 5 == 0
                call = (
                    {"name": "write", "arguments": {"path": f"Bench-switch/w{n}.md", "content": f"w{n}\n"}}
                    if write
                    else {"name": "list_documents", "arguments": {"limit": 1}}
                )
                t = time.monotonic()
                proc.stdin.write(line({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}))
                await proc.stdin.drain()
                reply = json.loads(await proc.stdout.readline())
                rows.append(
                    {
                        "t": t,
                        "s": time.monotonic() - t,
                        "write": write,
                        "phase": phase["name"],
                        "ok": "result" in reply and not reply["result"].get("isError"),
                        "maybe": "error" in reply and "may or may not" in reply["error"].get("message", ""),
                        "path": call["arguments"].get("path"),
                    }
                )
                await asyncio.sleep(0.1)

        task = asyncio.create_task(agent())
        await asyncio.sleep(3)
        tui = Tui([str(root)], env)
        phase["name"] = "tui-opening"
        deadline = time.monotonic() + 60
        while holder_pid(str(root)) != tui.proc.pid and time.monotonic() < deadline:
            tui.drain()
            await asyncio.sleep(0.05)
        phase["name"] = "tui"
        for _ in range(40):
            tui.drain()
            await asyncio.sleep(0.05)
        phase["name"] = "tui-quitting"
        await asyncio.to_thread(tui.quit)
        await asyncio.sleep(4)
        stop.set()
        await task
        proc.stdin.close()
        await proc.wait()
        stop_pid(holder_pid(str(root)))

    asyncio.run(run())
    wait_free(str(root))
    lat = [r["s"] for r in rows]
    gaps = [b["t"] - a["t"] - 0.1 for a, b in itertools.pairwise(rows)]
    reads = [r for r in rows if not r["write"]]
    writes = [r for r in rows if r["write"]]
    acked = [r for r in writes if r["ok"]]
    lost = [r for r in acked if not (root / r["path"]).is_file()]
    shutil.rmtree(work, ignore_errors=True)
    return {
        "calls": len(rows),
        "pause_p95_s": p(gaps, 0.95),
        "pause_max_s": round(max(gaps), 3),
        "latency_p95_s": p(lat, 0.95),
        "failed_reads": sum(1 for r in reads if not r["ok"]),
        "writes": len(writes),
        "writes_acknowledged": len(acked),
        "writes_said_maybe_applied": sum(1 for r in writes if r["maybe"]),
        "acknowledged_but_missing": len(lost),
        "target": {"pause_p95_s": 1.0, "failed_reads": 0, "lost_or_doubled": 0},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--skip-switch", action="store_true")
    ap.add_argument(
        "--only",
        nargs="+",
        choices=PARTS,
        default=list(PARTS),
        metavar="PART",
        help=f"run only these parts ({', '.join(PARTS)})",
    )
    args = ap.parse_args()
    parts = set(args.only) - ({"switch"} if args.skip_switch else set())
    root, _ = vault(args.notes)
    root = root.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="lifecycle-", dir=OUT))
    cache = tmp / "cache"
    result: dict = {"notes": args.notes, "loadavg_start": os.getloadavg()}
    try:
        if "bridge" in parts:
            result["bridge_to_first_tools_list"] = bench_bridge(root, tmp, cache, args.runs)
        if "http" in parts:
            result["loopback_http"] = bench_http_ping(root, tmp, cache)
        if "switch" in parts:
            result["switch_over"] = bench_switch(root, tmp, cache)
        if "spawned" in parts:
            result["spawned_stdio_server"] = bench_spawned(root, tmp, args.runs, not args.skip_peer)
    finally:
        result["loadavg_end"] = os.getloadavg()
        shutil.rmtree(tmp, ignore_errors=True)
    emit(result)


if __name__ == "__main__":
    main()
