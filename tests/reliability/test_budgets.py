"""Per-call budgets (issue 13): no single agent call stalls the others.

The real `vaultwatch serve` process; a well-behaved agent reads a small note every 20 ms, first
alone, then while two abusive agents, each with one call in flight (two at once), cycle through the
calls that run long on hostile input: edits and frontmatter updates of a 40 MB note on disk (over
the write cap) and of a 10 MB note (under it), the links and pages of a 3.85 MB note of 330,000 wiki
links, rewriting that note whole, renaming it (its link rewrite is refused before any change), a
frontmatter block of 3 MB, broad searches and listings. vaultwatch serves agents from worker threads of one interpreter, so a call that holds
the interpreter in one long C call (splitting a 40 MB note into words for an error hint, say) stops
every other agent for as long; six heavy calls at once put a small read at p95 458 ms, load ~11 (the
lane of mcp_server/lane.py runs heavy calls one at a time, with 0.5 ms hand-offs and the
collector held off while one runs; tests/mcp_server/test_lane.py proves that mechanism, and
bench/bench_budgets.py times this scenario with and without the quick mode).

The test's bound is generous (a real stall of seconds crosses it, the machine's load does not);
the exact figures (the well-behaved agent's p50/p95/max alone and beside the abuser) go to
docs/reliability.md. Phase lengths: 2 s + until each abusive stream made every call of its list
once (20 s at most) at CI size, 10 s + 90 s nightly.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import time
from pathlib import Path

import pytest
from reliability_helpers import serve_process, uds_client

FULL = os.environ.get("VAULTWATCH_RELIABILITY_FULL", "").lower() in ("1", "yes", "true", "on")  # as conftest.py

pytestmark = pytest.mark.xdist_group("budgets")

# at CI size 1 s of idle reads (~50 of them at one per 20 ms) only set the bound's floor, which
# is 1 s anyway unless an idle read already took 250 ms (fewer of them can only lower the bound)
IDLE_S, ABUSE_S = (10.0, 90.0) if FULL else (1.0, 20.0)
STREAMS = 1  # calls in flight per abusive agent (two agents: two heavy calls at once, which the lane serialises)


def _vault(root: Path) -> None:
    root.mkdir()
    for i in range(200):
        (root / f"n{i}.md").write_text(f"---\nstatus: draft\n---\n# n{i}\n[[n{i + 1}]] text #tag{i % 7}\n")
    (root / "big40.md").write_text("---\ntitle: big\n---\n" + "line of text here\n" * 2_300_000)  # 41 MB
    (root / "big10.md").write_text("# big\n" + "word " * 2_000_000)  # 10 MB, no line breaks
    (root / "links.md").write_text("".join(f"[[t{i}]] " for i in range(330_000)))  # 3.85 MB
    (root / "bigfm.md").write_text("---\n" + "".join(f"k{i}: {'v' * 50}\n" for i in range(60_000)) + "---\nbody\n")


LINKS = "".join(f"[[u{i}]] " for i in range(330_000))
ABUSE = [
    ("edit", {"path": "big40.md", "old_text": "line  of text x", "new_text": "y"}),
    ("edit", {"path": "big40.md", "old_text": "title: big", "new_text": "title: big2"}),
    ("update_frontmatter", {"path": "big40.md", "set": {"status": "x"}}),
    ("edit", {"path": "big10.md", "old_text": "word  word x", "new_text": "y"}),
    ("edit", {"path": "big10.md", "old_text": "word", "new_text": "wort", "replace_all": True}),
    ("edit", {"path": "big10.md", "old_text": "wort", "new_text": "word", "replace_all": True}),
    ("get_links", {"path": "links.md"}),
    ("read", {"path": "links.md"}),
    ("read", {"path": "big40.md", "offset": 20_000_000}),
    ("write", {"path": "w.md", "content": LINKS, "overwrite": True}),
    ("rename", {"path": "links.md", "new_path": "links2.md"}),
    ("update_frontmatter", {"path": "bigfm.md", "set": {"status": "x"}}),
    ("search", {"query": "word text line"}),
    ("list_documents", {"limit": 100000}),
]


async def _scenario(sock: str) -> dict:
    async with (
        uds_client(sock, name="well-behaved") as good,
        uds_client(sock, name="abuser") as bad,
        uds_client(sock, name="abuser2") as bad2,
    ):

        async def probe(seconds: float, until: list[asyncio.Event] | None = None) -> list[float]:
            out = []
            end = time.monotonic() + seconds
            while time.monotonic() < end and not (until and all(e.is_set() for e in until)):
                t = time.perf_counter()
                r = await good.call_tool("read", {"path": "n1.md"})
                out.append(time.perf_counter() - t)
                assert not r.is_error, r
                await asyncio.sleep(0.02)
            return out

        await probe(1.0)  # the first calls import and warm up
        idle = await probe(IDLE_S)
        durations: dict[str, float] = {}
        calls = 0
        stop = asyncio.Event()
        through = [asyncio.Event() for _ in range(2 * STREAMS)]  # set once a stream made every call of ABUSE

        async def abuse(bad, k: int, done: asyncio.Event) -> None:
            nonlocal calls
            first = k
            while not stop.is_set():
                tool, args = ABUSE[k % len(ABUSE)]
                k += 1
                t = time.perf_counter()
                r = await bad.call_tool(tool, args)
                key = f"{tool} {args.get('path')}"
                durations[key] = max(durations.get(key, 0.0), time.perf_counter() - t)
                calls += 1
                if k - first >= len(ABUSE):
                    done.set()
                if tool == "rename" and not r.is_error:  # (it is refused: over the rewrite bound)
                    await bad.call_tool("rename", {"path": "links2.md", "new_path": "links.md"})

        streams = [(client, k * 3) for client in (bad, bad2) for k in range(STREAMS)]
        tasks = [
            asyncio.create_task(abuse(client, k, done)) for (client, k), done in zip(streams, through, strict=True)
        ]
        try:
            # at CI size the well-behaved agent reads beside the abusers until each stream has made
            # every call of the list once (a call that stalls the others does it the first time),
            # ABUSE_S at most; nightly the whole ABUSE_S
            busy = await probe(ABUSE_S, until=None if FULL else through)
        finally:
            stop.set()
            await asyncio.gather(*tasks)
    return {"idle": idle, "busy": busy, "calls": calls, "durations": durations}


def _q(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


@pytest.mark.long
def test_an_abusive_agent_does_not_stall_a_well_behaved_one(tmp_path, figure):
    root = tmp_path / "vault"
    _vault(root)
    sock = os.path.join(os.path.realpath("/tmp"), f"vwb-{os.getpid()}-{time.monotonic_ns() % 10**6}.sock")
    proc = serve_process(root, sock)
    load = os.getloadavg()[0]
    try:
        res = asyncio.run(_scenario(sock))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    idle, busy = res["idle"], res["busy"]
    ms = lambda s: round(s * 1000, 1)  # noqa: E731
    figure("budget_load", round(load, 1))
    figure("budget_abuse_calls", res["calls"])
    figure("budget_abuse_streams", 2 * STREAMS)
    figure("budget_good_calls", len(busy))
    figure("budget_idle_p50_ms", ms(statistics.median(idle)))
    figure("budget_idle_p95_ms", ms(_q(idle, 0.95)))
    figure("budget_idle_max_ms", ms(max(idle)))
    figure("budget_busy_p50_ms", ms(statistics.median(busy)))
    figure("budget_busy_p95_ms", ms(_q(busy, 0.95)))
    figure("budget_busy_max_ms", ms(max(busy)))
    slowest = max(res["durations"].items(), key=lambda kv: kv[1])
    figure("budget_slowest_abuse", f"{slowest[0]} {slowest[1]:.2f} s")
    assert "Traceback" not in err, err[-2000:]
    assert res["calls"] >= len(ABUSE), res  # the abuser went through its whole list at least once
    # generous: the machine's load slows every call alike; a call holding the interpreter for
    # seconds (as the 40 MB edit did) crosses it
    bound = max(1.0, 4 * max(idle))
    assert max(busy) <= bound, (
        f"well-behaved read stalled {max(busy):.2f} s beside the abuser (alone: max "
        f"{max(idle):.2f} s); slowest abusive call: {slowest}"
    )
    figure(
        "fixed_bug",
        "an agent's edit of a 40 MB note (over the write cap) stalled every other agent for seconds: "
        "the edit split the whole note into words for a 'matches up to whitespace' hint, in one C "
        "call holding the interpreter, and only then found the result over the cap; core/edit/writes.py "
        "now refuses edits of notes over the cap before the work, gives the hint only up to 1 MB, "
        "counts lines before splitting them, and core/markdown/sections.py finds the frontmatter's fence "
        "without splitting the whole note into lines",
    )
