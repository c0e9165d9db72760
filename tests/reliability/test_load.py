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

import pytest
from load_agents import Agent, vault_paths
from reliability_helpers import ROOT, serve_process

from bench.vaultgen import generate

# the two load scenarios take one test worker in turn: run side by side (two sets of 20 agents on
# two cores) each would measure the other's load, which is not the scenario either describes
pytestmark = pytest.mark.xdist_group("load")


@pytest.mark.long
def test_agents_under_load_lose_no_update(tmp_path, figure, full_size):
    notes, n_agents, calls = (10_000, 20, 500) if full_size else (1_000, 8, 40)
    root = tmp_path / "vault"
    generate(root, notes)
    (root / "Load").mkdir()
    (root / "Load" / "counter.md").write_text("---\ncount: 0\n---\n# Shared counter\n")
    paths, folders = vault_paths(root)
    sock = os.path.join(os.path.realpath("/tmp"), f"vwl-{os.getpid()}-{time.monotonic_ns() % 10**6}.sock")
    proc = serve_process(root, sock)
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


def key(app, name: str) -> None:
    """Deliver one key press to the app the way its terminal driver does, without waiting for the
    app to go idle afterwards (Pilot.press does, which under load measures the harness, not the app)."""
    from textual import events

    app.post_message(events.Key(name, name if len(name) == 1 else None))


def _triage_state(app, doclist, file: Path) -> dict:
    """What a triage that never showed left behind: which screen is up, what the list shows, what is on
    disk, the app's notices and write workers (a lost key, a write refused or stuck, or a row not redrawn)."""
    current = doclist.current
    return {
        "screen": type(app.screen).__name__,
        "row": None if current is None else (current.path, current.okf_status, current.frontmatter.get("verified")),
        "on_disk": file.read_text(encoding="utf-8", errors="replace")[:300],
        "notices": [f"{n.title}: {n.message}" for n in app._notifications][-5:],
        "writers": [(w.name, w.state.name) for w in app.workers if w.group == "write"],
    }


@pytest.mark.timing
async def test_tui_stays_responsive_while_agents_work(tmp_path, figure, full_size):
    """The human filters and triages in the TUI (Textual's test harness, real keys for triage)
    while agents in their own process work on the app's socket: every keystroke is timed, and
    every write acknowledged to anyone (agents and human) is on disk at the end."""
    from reliability_helpers import short_dir

    from vaultwatch.core.clock import parse_as_of
    from vaultwatch.core.markdown.parse import parse_note
    from vaultwatch.core.vault import Vault
    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.config import fixed_config
    from vaultwatch.tui.idle import settle
    from vaultwatch.tui.screens.triage import ConfirmScreen, StatusScreen

    # CI size: 80 calls each keep the six agents busy for two rounds of typing and triage
    # (the asserts below need ten keystrokes and two triage actions while they work; 40 calls ended
    # with the first round's last triage once the server answered faster); the rounds after their
    # last call only prolong this serial, timed test
    notes, n_agents, calls = (10_000, 20, 500) if full_size else (1_000, 6, 80)
    root = tmp_path / "vault"
    generate(root, notes)
    (root / "Load").mkdir()
    (root / "Load" / "counter.md").write_text("---\ncount: 0\n---\n# Shared counter\n")
    sock_dir = short_dir()
    sock = os.path.join(sock_dir, "tui.sock")
    vault = Vault(root, clock=parse_as_of("2026-11-29"))
    vault.load()
    # the human triages vault notes the agents list, read and search (but do not write); notes with
    # broken frontmatter are refused by every triage action (they belong to the Broken tab)
    rng = random.Random(5)
    snap = vault.snapshot
    pool = [
        p
        for p in vault_paths(root)[0]
        if not p.startswith("Load/")
        and p != "index.md"
        and snap.get(p) is not None
        and snap.get(p).frontmatter_error is None
    ]
    targets = rng.sample(pool, min(len(pool), 400))
    # the app as a person runs it (server, watcher, garbage collected between frames), minus timers
    app = make_app(vault, config=fixed_config(mcp=True, watch=True, socket_path=sock, user="loadtester", idle_gc=True))
    samples: list[float] = []
    triage_samples: list[float] = []  # status key or v -> the note written and its row showing it
    dialog_samples: list[float] = []  # c -> the status dialog open
    expected: dict[str, dict] = {}  # path -> what the human's triage left there
    statuses = {"draft": "1", "stable": "2", "deprecated": "3"}
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app, timeout=60)
        assert await _until(lambda: os.path.exists(sock), 20) < 20
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        agents = await asyncio.create_subprocess_exec(
            sys.executable,
            str(Path(__file__).with_name("load_agents.py")),
            sock,
            str(root),
            str(n_agents),
            str(calls),
            "5",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        reader = asyncio.create_task(agents.communicate())
        rounds = during = triage_during = 0
        filter_input = app.query_one("#filter-input")
        doclist = app.main.active_list
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
            # then triages two notes with the app's own keys: a status (c, then 1-3) and a review (v)
            for kind in ("status", "review"):
                path = targets[(2 * rounds + (kind == "review")) % len(targets)]
                busy = not reader.done()
                assert doclist.select_key(path), f"{path} is not listed"
                await pilot.pause()
                entry = doclist.current
                assert entry.path == path
                if kind == "status":
                    new = next(st for st in ("deprecated", "stable", "draft") if st != entry.okf_status)
                    t = time.perf_counter()
                    key(app, "c")
                    assert await _until(lambda: isinstance(app.screen, StatusScreen), 20) < 20, "no status dialog"
                    dialog_samples.append(time.perf_counter() - t)
                    await asyncio.sleep(0.15)
                    t = time.perf_counter()
                    key(app, statuses[new])
                    done = lambda p=path, n=new: (
                        doclist.current is not None and doclist.current.path == p and doclist.current.okf_status == n
                    )
                    expected.setdefault(path, {})["status"] = new
                else:
                    verified = entry.frontmatter.get("verified")
                    count = len(verified) if isinstance(verified, list) else int(bool(verified))
                    t = time.perf_counter()
                    key(app, "v")
                    assert await _until(lambda: isinstance(app.screen, ConfirmScreen), 20) < 20, "no confirmation"
                    key(app, "y")
                    done = lambda p=path, c=count: (
                        doclist.current is not None
                        and doclist.current.path == p
                        and len(doclist.current.frontmatter.get("verified") or ()) == c + 1
                    )
                    expected.setdefault(path, {})["reviewed"] = True
                took = await _until(done, 20)
                assert took < 20, (
                    f"triage of {path} ({kind}) not written and shown within 20 s",
                    _triage_state(app, doclist, root / path),
                )
                triage_samples.append(time.perf_counter() - t)
                triage_during += busy
                await asyncio.sleep(0.15)
            if rounds > 2000:
                break
        out, err = await reader
        await settle(app, timeout=60)
        for worker in [w for w in app.workers if w.group == "write"]:
            await worker.wait()
        refused = [
            f"{n.title}: {n.message}" for n in app._notifications if n.title.startswith(("conflict:", "failed:"))
        ]
        own = dict(app.actions._own)
    shutil.rmtree(sock_dir, ignore_errors=True)
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["errors"] == [], result["errors"][:10]
    lost = [p for p, etag in result["own"].items() if hashlib.sha256((root / p).read_bytes()).hexdigest() != etag]
    assert lost == []
    assert f"count: {result['increments']}\n" in (root / "Load" / "counter.md").read_text()
    # the human's triage: no action refused, and every acknowledged write is what is on disk
    assert refused == [], refused
    assert set(own) == set(expected), (sorted(set(expected) - set(own))[:5], sorted(set(own) - set(expected))[:5])
    human_lost = []
    for path, want in expected.items():
        data = (root / path).read_bytes()
        facts = parse_note(data, path)
        verified = facts.frontmatter.get("verified")
        ok = hashlib.sha256(data).hexdigest() == own[path]
        if "status" in want:
            ok = ok and facts.okf_status == want["status"]
        if want.get("reviewed"):
            ok = (
                ok
                and isinstance(verified, list)
                and any(v.get("by") == "human:loadtester" for v in verified if isinstance(v, dict))
            )
        if not ok:
            human_lost.append(path)
    assert human_lost == [], human_lost[:10]
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95)] * 1000
    tri = sorted(triage_samples)
    figure("agents", n_agents)
    figure("agent_calls", len(result["latencies"]))
    figure("acknowledged_writes", result["acked_writes"])
    figure("lost_updates", len(lost))
    figure("keystrokes", len(samples))
    figure("keystrokes_while_agents_ran", during)
    figure("keystroke_p50_ms", round(statistics.median(ordered) * 1000, 1))
    figure("keystroke_p95_ms", round(p95, 1))
    figure("keystroke_max_ms", round(ordered[-1] * 1000, 1))
    figure("triage_actions", len(tri))
    figure("triage_actions_while_agents_ran", triage_during)
    figure("human_notes_written", len(own))
    figure("human_lost_updates", len(human_lost))
    figure("triage_p50_ms", round(statistics.median(tri) * 1000, 1))
    figure("triage_p95_ms", round(tri[int(len(tri) * 0.95)] * 1000, 1))
    figure("triage_max_ms", round(tri[-1] * 1000, 1))
    dia = sorted(dialog_samples)
    figure("status_dialog_p95_ms", round(dia[int(len(dia) * 0.95)] * 1000, 1))
    assert during >= 10, "the agents finished before the human could type"
    assert triage_during >= 2, "the agents finished before the human could triage"
    # The target is p95 <= 100 ms: docs/reliability.md reports the figure against it (timings are
    # benchmarks' business). At CI size, sharing two cores with other tests, this only guards against
    # the TUI freezing: a bound ten times the target's scale that only a real regression crosses.
    if not full_size:
        assert p95 <= 1500, f"filter edit -> list updated p95 {p95:.0f} ms under load: the TUI froze"
