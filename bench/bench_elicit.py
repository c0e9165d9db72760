"""The server time an elicitation round trip adds to a gated write (no TUI open).

    python -m bench.bench_elicit [ROUNDS]      # JSON on stdout

The real server on a real Unix socket with the approval gate on ("writes") and no TUI, and a
real `mcp` client (legacy session, elicitation declared) that answers "approve" after a
fixed think time. Per round: the gated write's round trip, minus the time the client spent
answering (the person's time, measured inside the callback), minus the p50 of the same write
with the gate off (measured alternately, so both see the same load). What is left is the
time the question and its answer cost: the summary, the request on the call's stream, the
answer's way back and the wait's hand-off to the write path. Target: <= 50 ms at p95.
The client runs in this process, so its own work on the answer is counted too (an upper bound).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "mcp_server"))

from bench.common import emit  # noqa: E402

THINK_S = 0.02  # the person's answer, simulated: a fixed time inside the client's callback


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 3)


async def _round_trips(rounds: int) -> dict:
    from mcp_testing import serving, uds_client
    from mcp_types import ElicitResult

    from vaultwatch.core.review import approval
    from vaultwatch.core.vault import Vault

    tmp = Path(tempfile.mkdtemp(prefix="vw-bench-elicit-"))
    os.environ["XDG_STATE_HOME"] = str(tmp / "state")
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    results: dict[str, list[float]] = {"gated": [], "answer": [], "plain": []}
    for name in ("gated", "plain"):
        (tmp / name).mkdir()
        for i in range(rounds + 2):
            (tmp / name / f"n{i}.md").write_text(f"# Note {i}\nfirst line\n")
    vaults = {name: Vault(str(tmp / name)) for name in ("gated", "plain")}
    for v in vaults.values():
        v.load()
    approval.attach(vaults["gated"], approval.ApprovalGate("writes", ask_client=True))  # the person lets it ask
    answered: list[float] = []

    async def person(context, params) -> ElicitResult:
        started = time.perf_counter()
        await asyncio.sleep(THINK_S)
        answered.append((time.perf_counter() - started) * 1000)
        return ElicitResult(action="accept", content={"approve": True})

    async with (
        serving(vaults["gated"], tmp / "g.sock") as gated_host,
        serving(vaults["plain"], tmp / "p.sock") as plain_host,
    ):
        gated_client = uds_client(gated_host.socket_path)
        gated_client.elicitation_callback = person
        async with gated_client as gated, uds_client(plain_host.socket_path) as plain:
            for i in range(rounds + 2):
                args = {"path": f"n{i}.md", "content": f"# Note {i}\nchanged {i}\n", "overwrite": True}
                for name, client in (("gated", gated), ("plain", plain)):
                    started = time.perf_counter()
                    got = await client.call_tool("write", args)
                    took = (time.perf_counter() - started) * 1000
                    assert not got.is_error, got.content[0].text
                    if i >= 2:  # two warm-up rounds
                        results[name].append(took)
                if i >= 2:
                    results["answer"].append(answered[-1])
    base = statistics.median(results["plain"])
    added = [g - a - base for g, a in zip(results["gated"], results["answer"], strict=True)]
    return {
        "rounds": rounds,
        "think_ms": THINK_S * 1000,
        "plain_write_p50_ms": round(base, 3),
        "gated_round_trip_p50_ms": pct(results["gated"], 0.5),
        "added_server_ms_p50": pct(added, 0.5),
        "added_server_ms_p95": pct(added, 0.95),
        "target_ms_p95": 50,
        "ok": pct(added, 0.95) <= 50,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "rounds",
        nargs="?",
        type=int,
        default=40,
        help="questions put through a real client (elicitation), each answered at once (default 40)",
    )
    args = parser.parse_args()
    rounds = args.rounds
    emit({"load": os.getloadavg()[0], "elicit_round_trip": asyncio.run(_round_trips(rounds))})


if __name__ == "__main__":
    main()
