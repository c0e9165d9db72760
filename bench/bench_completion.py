"""completion/complete of the note template's path on a generated vault (default 20,000 notes), as a
client nobody here wrote asks for it: the official TypeScript SDK client (tests/mcp_server/ts_client,
`npm install` there first) over `vaultwatch bridge`, which starts a headless server. Prints the
latency of each request as the client measures it (p50/p95 in ms), and checks each answer against the
generator's paths: at most 100 values, every exact-prefix match counted in total.

    python bench/bench_completion.py [--notes 20000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, emit, vault  # noqa: E402

CLIENT_DIR = ROOT / "tests" / "mcp_server" / "ts_client"
# from the root (every note) to one folder's, one note's, a case-insensitive and a file-name match
PREFIXES = ["", "n", "notes/", "Notes/", "Projects/", "Areas/Craft/", "index", "readme", "zzz"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args(argv)
    node = shutil.which("node")
    if node is None or not (CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        print("needs node and `npm install` in tests/mcp_server/ts_client", file=sys.stderr)
        return 2
    root, _ = vault(args.notes)
    paths = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    state = Path(tempfile.mkdtemp(prefix="vwbc"))
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(state / "state"),
        "XDG_CACHE_HOME": str(state / "cache"),
        "XDG_RUNTIME_DIR": str(state),
        "PYTHONPATH": str(ROOT),
    }
    command = [sys.executable, "-m", "vaultwatch.tui.entry", "bridge", "--vault", str(root), "--idle-exit", "3"]
    try:
        done = subprocess.run(
            [node, "complete_timing.mjs", str(args.rounds), json.dumps(PREFIXES), *command],
            cwd=CLIENT_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        for line in subprocess.run(
            ["pgrep", "-f", f"--headless.*{root}"], capture_output=True, text=True
        ).stdout.split():
            os.kill(int(line), signal.SIGTERM)  # the headless server this run's bridge started
        shutil.rmtree(state, ignore_errors=True)
    report = json.loads(done.stdout.splitlines()[-1]) if done.stdout.strip() else {"ok": False, "error": done.stderr}
    if not report.get("ok"):
        print(report.get("error"), file=sys.stderr)
        return 1
    checks = {}
    for prefix in PREFIXES:
        answer = report["answers"][prefix]
        exact = sum(1 for p in paths if p.startswith(prefix))
        checks[prefix] = {
            "values": len(answer["values"]),
            "total": answer["total"],
            "exact_matches": exact,
            "ok": len(answer["values"]) <= 100
            and answer["total"] >= exact
            and all(v in paths for v in answer["values"])
            and answer["values"][: min(exact, 100)] == [v for v in answer["values"] if v.startswith(prefix)][:100],
        }
    samples = sorted(report["samples"])
    emit(
        {
            "benchmark": "completion",
            "notes": args.notes,
            "files": len(paths),
            "client": "@modelcontextprotocol/sdk over vaultwatch bridge",
            "requests": len(samples),
            "p50_ms": round(statistics.median(samples), 2),
            "p95_ms": round(samples[min(len(samples) - 1, int(len(samples) * 0.95))], 2),
            "max_ms": round(samples[-1], 2),
            # the same round trip with nothing to compute (ping), measured between the completions
            "ping_p50_ms": round(statistics.median(report["pings"]), 2),
            "ping_p95_ms": round(
                sorted(report["pings"])[min(len(report["pings"]) - 1, int(len(report["pings"]) * 0.95))], 2
            ),
            "answers_ok": all(c["ok"] for c in checks.values()),
            "answers": checks,
        }
    )
    return 0 if all(c["ok"] for c in checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
