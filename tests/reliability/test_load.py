"""Load: N agents x M calls, mixed reads and writes, over the real socket of a real `vaultwatch
serve` process on a vaultgen vault. Zero unexpected errors, and zero lost updates: every
acknowledged write is on disk (each agent's notes end exactly as its last acknowledged write
left them; a shared counter incremented under if_match by every agent ends at the number of
acknowledged increments).

CI size: 8 agents x 40 calls on 1,000 notes. Nightly (VAULTWATCH_RELIABILITY_FULL=1): 20 agents x
500 calls on 10,000 notes, as the issue asks. The second test puts the agents (in their own
process) on the socket of the TUI (run headless by Textual's test harness) while the human types
a filter one character at a time, and measures each edit -> list updated.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from load_agents import Agent, vault_paths
from reliability_helpers import ROOT

VAULTGEN = ROOT.parent / "shared" / "vaultgen.py"


def _serve(root: Path, sock: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), VAULTWATCH_CACHE="0")
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", str(root), "--socket", sock],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))
    end = time.monotonic() + 60
    while not os.path.exists(sock):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "serve did not start"
        time.sleep(0.05)
    return proc


def test_agents_under_load_lose_no_update(tmp_path, figure, full_size):
    notes, n_agents, calls = (10_000, 20, 500) if full_size else (1_000, 8, 40)
    root = tmp_path / "vault"
    subprocess.run([sys.executable, str(VAULTGEN), str(root), "--notes", str(notes)], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    (root / "Load").mkdir()
    (root / "Load" / "counter.md").write_text("---\ncount: 0\n---\n# Shared counter\n")
    paths, folders = vault_paths(root)
    sock = os.path.join(os.path.realpath("/tmp"), f"vwl-{os.getpid()}-{time.monotonic_ns() % 10**6}.sock")
    proc = _serve(root, sock)
    rng = random.Random(11)
    agents = [Agent(i, calls, paths, folders, random.Random(rng.random())) for i in range(n_agents)]
    started = time.perf_counter()
    try:
        async def all_agents():
            await asyncio.gather(*(a.run(sock) for a in agents))

        asyncio.run(all_agents())
        wall = time.perf_counter() - started
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    errors = [e for a in agents for e in a.errors]
    assert errors == [], errors[:20]
    assert "Traceback" not in err, err[-2000:]
    # zero lost updates: every agent's notes are on disk exactly as its last acknowledged write left them
    lost = []
    for a in agents:
        for path, (etag, _) in a.own.items():
            data = (root / path).read_bytes()
            if hashlib.sha256(data).hexdigest() != etag:
                lost.append(path)
    assert lost == [], lost
    counter = (root / "Load" / "counter.md").read_text()
    increments = sum(a.increments for a in agents)
    assert f"count: {increments}\n" in counter, (counter, increments)
    lat = sorted(x for a in agents for x in a.latencies)
    total_calls = len(lat)
    p50 = statistics.median(lat) * 1000
    p95 = lat[int(len(lat) * 0.95)] * 1000
    figure("agents", n_agents)
    figure("operations", n_agents * calls)  # each agent's M operations (a write is followed by a read-back)
    figure("calls", total_calls)
    figure("notes", notes)
    figure("acknowledged_writes", sum(a.acked_writes for a in agents))
    figure("counter_increments", increments)
    figure("if_match_conflicts_retried", sum(a.conflicts for a in agents))
    figure("increments_abandoned_after_60_conflicts", sum(a.gave_up for a in agents))
    figure("lost_updates", len(lost))
    figure("errors", len(errors))
    figure("p50_ms", round(p50, 1))
    figure("p95_ms", round(p95, 1))
    figure("calls_per_s", round(total_calls / wall, 1))
    kinds: dict[str, int] = {}
    for a in agents:
        for k, v in a.kinds.items():
            kinds[k] = kinds.get(k, 0) + v
    figure("mix", json.dumps(dict(sorted(kinds.items()))))


async def _until(predicate, timeout: float = 10.0) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            return timeout
        await asyncio.sleep(0.001)
    return time.perf_counter() - start


async def test_tui_stays_responsive_while_agents_work(tmp_path, figure, full_size):
    from core.clock import parse_as_of
    from core.vault import Vault
    from reliability_helpers import short_dir
    from tui.app import make_app
    from tui.config import fixed_config

    notes, n_agents, calls = (10_000, 20, 500) if full_size else (1_000, 6, 80)
    root = tmp_path / "vault"
    subprocess.run([sys.executable, str(VAULTGEN), str(root), "--notes", str(notes)], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    (root / "Load").mkdir()
    (root / "Load" / "counter.md").write_text("---\ncount: 0\n---\n# Shared counter\n")
    sock_dir = short_dir()
    sock = os.path.join(sock_dir, "tui.sock")
    vault = Vault(root, clock=parse_as_of("2026-11-29"))
    vault.load()
    app = make_app(vault, config=fixed_config(mcp=True, watch=True, socket_path=sock))
    samples: list[float] = []
    async with app.run_test(size=(160, 50)):
        await app.settle(timeout=60)
        assert await _until(lambda: os.path.exists(sock), 20) < 20
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        agents = await asyncio.create_subprocess_exec(
            sys.executable, str(Path(__file__).with_name("load_agents.py")), sock, str(root), str(n_agents),
            str(calls), "5", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        reader = asyncio.create_task(agents.communicate())
        rounds = during = 0
        filter_input = app.query_one("#filter-input")
        doclist = app.active_list
        while not reader.done() or rounds < 2:
            rounds += 1
            # typing "vault" and erasing it, one character at a time, as the filter bar sees keystrokes
            for text in ("v", "va", "vau", "vaul", "vault", "vaul", "vau", "va", "v", ""):
                busy = not reader.done()
                before = doclist.updates
                t = time.perf_counter()
                filter_input.value = text
                await _until(lambda b=before: doclist.updates != b)
                samples.append(time.perf_counter() - t)
                during += busy
                await asyncio.sleep(0.15)  # a brisk typist: ~6 keys a second
            if rounds > 2000:
                break
        out, err = await reader
        await app.settle(timeout=60)
    shutil.rmtree(sock_dir, ignore_errors=True)
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["errors"] == [], result["errors"][:10]
    lost = [p for p, etag in result["own"].items() if hashlib.sha256((root / p).read_bytes()).hexdigest() != etag]
    assert lost == []
    assert f"count: {result['increments']}\n" in (root / "Load" / "counter.md").read_text()
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95)] * 1000
    figure("agents", n_agents)
    figure("agent_calls", len(result["latencies"]))
    figure("acknowledged_writes", result["acked_writes"])
    figure("lost_updates", len(lost))
    figure("keystrokes", len(samples))
    figure("keystrokes_while_agents_ran", during)
    figure("keystroke_p50_ms", round(statistics.median(ordered) * 1000, 1))
    figure("keystroke_p95_ms", round(p95, 1))
    figure("keystroke_max_ms", round(ordered[-1] * 1000, 1))
    assert during >= 10, "the agents finished before the human could type"
    # The target is p95 <= 100 ms: RELIABILITY.md reports the figure against it. At CI size
    # (sharing two cores with other tests) this guards against the TUI freezing; at nightly size the
    # agents' own process competes for the same two cores and the figure is reported, not asserted.
    if not full_size:
        assert p95 <= 250, f"filter edit -> list updated p95 {p95:.0f} ms under load"
