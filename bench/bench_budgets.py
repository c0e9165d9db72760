"""Per-call budgets: a small call's latency beside abusive agents, through the real server.

The scenario of tests/reliability/test_budgets.py (a real `vaultwatch serve` on a socket; a
well-behaved agent reads a small note every 20 ms, alone and then beside two abusive agents
cycling through the calls that run long on hostile input), timed for longer and reported as
JSON: the small read's p50/p95/p99/max beside the abusers against the 250 ms target, the
machine's load, and the CPU seconds of the server and of this client process.

`--quick off` runs the server with VAULTWATCH_LANE_QUICK=0 (the lane without its quick mode,
mcp_server/lane.py) and `--quick both` alternates rounds of each, for before/after figures
taken side by side at the same load.

    python -m bench.bench_budgets --seconds 20 --rounds 2 --quick both
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script by dev.py bench
sys.path.insert(0, str(ROOT / "tests" / "reliability"))  # the scenario is the reliability test's own

import test_budgets as scenario  # noqa: E402
from reliability_helpers import serve_process  # noqa: E402

from bench.common import emit  # noqa: E402

TARGET_MS = 250.0  # the target: no single agent call stalls the others beyond this


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float:
    """Peak resident memory of process `pid` (VmHWM), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _ms(values: list[float], q: float) -> float:
    return round(sorted(values)[min(len(values) - 1, int(q * len(values)))] * 1000, 1)


def one_round(quick: bool, idle_s: float, abuse_s: float) -> dict:
    """One server, one idle phase and one abuse phase; the figures of that round."""
    scenario.IDLE_S, scenario.ABUSE_S = idle_s, abuse_s
    os.environ["VAULTWATCH_LANE_QUICK"] = "1" if quick else "0"  # read by the server process
    with tempfile.TemporaryDirectory(prefix="vwbudget", dir="/tmp") as tmp:
        root = Path(tmp) / "vault"
        scenario._vault(root)
        sock = os.path.join(tmp, "s.sock")
        proc = serve_process(root, sock)
        try:
            load0, cpu0, own0, wall0 = os.getloadavg()[0], _cpu_s(proc.pid), time.process_time(), time.monotonic()
            res = asyncio.run(scenario._scenario(sock))
            cpu1, own1, wall1 = _cpu_s(proc.pid), time.process_time(), time.monotonic()
            peak = _peak_rss_mb(proc.pid)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
    busy, idle = res["busy"], res["idle"]
    return {
        "quick": quick,
        "load_start": round(load0, 2),
        "load_end": round(os.getloadavg()[0], 2),
        "wall_s": round(wall1 - wall0, 1),
        "server_cpu_s": round(cpu1 - cpu0, 1),
        "client_cpu_s": round(own1 - own0, 1),
        "server_peak_rss_mb": peak,
        "abusive_calls": res["calls"],
        "small_calls": len(busy),
        "idle_p50_ms": round(statistics.median(idle) * 1000, 1),
        "idle_max_ms": round(max(idle) * 1000, 1),
        "p50_ms": round(statistics.median(busy) * 1000, 1),
        "p95_ms": _ms(busy, 0.95),
        "p99_ms": _ms(busy, 0.99),
        "max_ms": round(max(busy) * 1000, 1),
        "over_100_ms": sum(b > 0.1 for b in busy),
        "over_target": sum(b * 1000 > TARGET_MS for b in busy),
        "target_ms": TARGET_MS,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="abuse phase of each round (default 20)")
    ap.add_argument("--idle", type=float, default=3.0, help="idle phase of each round (default 3)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds per mode (default 1)")
    ap.add_argument("--quick", choices=("on", "off", "both"), default="on")
    args = ap.parse_args()
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.quick]
    rounds = [one_round(q, args.idle, args.seconds) for _ in range(args.rounds) for q in modes]
    emit({"bench": "budgets", "target_max_ms": TARGET_MS, "rounds": rounds})


if __name__ == "__main__":
    main()
