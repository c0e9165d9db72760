"""completion/complete of the note template's path on a generated vault (default 20,000 notes), as a
client nobody here wrote asks for it: the official TypeScript SDK client (tests/mcp_server/ts_client,
`npm install` there first) over `vaultwatch bridge`, which starts a headless server.

Two phases through the client, each completion followed by a ping on the same path (the transport's
own cost, measured in the same run): `steady` (each prefix `--rounds` times on one index generation)
and `after_change` (the client writes a new note, then completes: each completion is the first on a
new generation; the notes are deleted at the end). Prints p50/p95 in ms of both, as the client
measures them, and checks each steady answer against the generator's paths: at most 100 values, every
exact-prefix match counted in total, exact-prefix matches first.

`server` is the server's own time per completion (core.query.complete in this process, on the same
vault): per prefix on one generation, the first completion after a one-note change (tables patched),
and the first on a fresh index (tables built).

    python bench/bench_completion.py [--notes 20000] [--rounds 20] [--changes 40]
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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, emit, vault  # noqa: E402

CLIENT_DIR = ROOT / "tests" / "mcp_server" / "ts_client"
# bench.vaultgen's layout: every path; a letter; a folder; the same ignoring case; deeper folders; file
# names (root notes and notes in folders); one note; nothing
PREFIXES = [
    "",
    "P",
    "Projects/",
    "projects/",
    "People/notes/",
    "Knowledge/Ops/archive/old/",
    "meeting",
    "graph 0110",
    "zzz",
]
SCRATCH = "zz-bench-completion"  # the after-change phase's notes (deleted afterwards)


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 3),
        "max_ms": round(ordered[-1], 3),
    }


def _phase(phase: dict) -> dict:
    """Latency at the client, and CPU time per request in the server and the bridge (median and mean:
    the server's background threads add to the mean, now and then)."""

    def cpu(kind: str, who: int) -> dict[str, float]:
        per = [request[who] for request in phase["cpu"][kind]]
        return {"median_ms": round(statistics.median(per), 3), "mean_ms": round(statistics.mean(per), 3)}

    return {
        "requests": len(phase["samples"]),
        "complete": _ms(phase["samples"]),
        "ping": _ms(phase["pings"]),
        "cpu_per_request": {kind: {"server": cpu(kind, 0), "bridge": cpu(kind, 1)} for kind in ("complete", "ping")},
    }


def server_side(root: Path, changes: int) -> dict:
    """The server's own time per completion, in this process (no transport)."""
    from vaultwatch.core.query.complete import complete_path
    from vaultwatch.core.vault import Vault

    v = Vault(root, cache=False)
    v.load()
    started = time.perf_counter()
    complete_path(v.snapshot, "")
    built_ms = (time.perf_counter() - started) * 1000
    steady = {}
    for prefix in PREFIXES:
        samples = []
        for _ in range(50):
            t = time.perf_counter()
            complete_path(v.snapshot, prefix)
            samples.append((time.perf_counter() - t) * 1000)
        steady[prefix] = _ms(samples)
    scratch = root / SCRATCH
    scratch.mkdir(exist_ok=True)
    after = []
    try:
        for c in range(changes):
            rel = f"{SCRATCH}/in-process {c:03d}.md"
            (root / rel).write_text(f"# {c}\n", encoding="utf-8")
            v.refresh_paths([SCRATCH, rel])
            t = time.perf_counter()
            found = complete_path(v.snapshot, PREFIXES[c % len(PREFIXES)])
            after.append((time.perf_counter() - t) * 1000)
            assert complete_path(v.snapshot, SCRATCH + "/").values[0] == rel, found
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "first_on_fresh_index_ms": round(built_ms, 2),
        "steady": steady,
        "first_after_one_note_change": _ms(after),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--changes", type=int, default=40)
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
    options = {
        "rounds": args.rounds,
        "prefixes": PREFIXES,
        "changes": args.changes,
        "scratch": SCRATCH,
        "vault": str(root),
    }
    command = [sys.executable, "-m", "vaultwatch.tui.entry", "bridge", "--vault", str(root), "--idle-exit", "3"]
    try:
        done = subprocess.run(
            [node, "complete_timing.mjs", json.dumps(options), *command],
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
        shutil.rmtree(root / SCRATCH, ignore_errors=True)  # a run that failed before its deletes
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
    phases = report["phases"]
    emit(
        {
            "benchmark": "completion",
            "notes": args.notes,
            "files": len(paths),
            "client": "@modelcontextprotocol/sdk over vaultwatch bridge",
            "load_average": os.getloadavg()[0],
            "server_settled": report["settled"],  # quiet before measuring (its first indexing done)
            "changes_settled": report.get("settled_changes", 0),  # of --changes: quiet again after the write
            # each completion, then a ping on the same path (what the transport alone costs, same run)
            "steady": _phase(phases["steady"]),
            "after_change": _phase(phases["after_change"]),
            "server": server_side(root, args.changes),
            "answers_ok": all(c["ok"] for c in checks.values()),
            "answers": checks,
        }
    )
    return 0 if all(c["ok"] for c in checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
