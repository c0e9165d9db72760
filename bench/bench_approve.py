"""Approve key -> the agent's answer, in the TUI.

    python -m bench.bench_approve [ROUNDS]      # JSON on stdout

The Textual app runs in this process under Pilot, hosting the MCP server on its real Unix
socket with the approval gate on ("writes"); the agent is the real `mcp` client on that socket.
Per round the agent writes a note, its call waits for the person, the approval dialog shows the
change, and the benchmark presses `y`: measured from just before the key is pressed to the
moment the agent's call returns its answer (a callback on the client's task). The key is
pressed once the app has drawn the dialog, its keys have armed (tui.screens.arming: a key
before that does nothing) and the app has settled (a person reads the diff first), so the
figure is the key's own path, not the dialog's first paint nor the arming delay. Warm-up rounds are dropped. Target: <= 100 ms at p95. The client, the app and the server share one event
loop here, so the client's own work on the answer is counted too (an upper bound).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # tests/waiting.py, which the TUI test helpers use
sys.path.insert(0, str(ROOT / "tests" / "tui"))

from bench.common import emit  # noqa: E402

WARMUP = 3
TARGET_MS = 100.0


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 3)


async def _until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("bench_approve: a condition was not reached in time")
        await asyncio.sleep(0.005)


async def _rounds(rounds: int) -> dict:
    from test_agents import agent  # the real `mcp` client on the app's socket (tests/tui)

    from vaultwatch.core.review import approval
    from vaultwatch.core.vault import Vault, demo_vault_path
    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.config import fixed_config
    from vaultwatch.tui.flows.review import ApprovalScreen
    from vaultwatch.tui.idle import settle
    from vaultwatch.tui.widgets.diffview import DiffView

    tmp = Path(tempfile.mkdtemp(prefix="vw-bench-approve-"))
    os.environ["XDG_STATE_HOME"] = str(tmp / "state")
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    root = tmp / "vault"
    shutil.copytree(demo_vault_path(), root)
    sock = str(tmp / "tui.sock")
    vault = Vault(str(root))
    vault.load()
    approval.attach(vault, approval.ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=sock))
    samples: list[float] = []
    try:
        async with app.run_test(size=(120, 50)) as pilot:
            await settle(app)
            await _until(lambda: os.path.exists(sock) and sock in app.status.parts["mcp"].plain)
            async with agent(sock, "bench-agent") as client:
                for i in range(rounds + WARMUP):
                    path = f"Inbox/bench-{i}.md"
                    content = f"# Bench {i}\nwritten after the person's approval\n"
                    call = asyncio.create_task(client.call_tool("write", {"path": path, "content": content}))
                    answered: list[float] = []
                    call.add_done_callback(lambda _t, out=answered: out.append(time.perf_counter()))
                    await _until(
                        lambda: (
                            isinstance(app.screen, ApprovalScreen)
                            and bool(app.screen.query(DiffView))
                            and app.screen.query_one(DiffView).renderable is not None
                        )
                    )
                    dialog = app.screen
                    await _until(lambda d=dialog: d.keys.armed)  # y acts only a moment after it shows
                    await settle(app)  # the person reads the diff: the app has drawn it and waits
                    pressed = time.perf_counter()
                    await pilot.press("y")
                    result = await asyncio.wait_for(call, 30)
                    assert not result.is_error, result.content[0].text
                    assert (root / path).read_text() == content  # the approved change, byte for byte
                    if i >= WARMUP:
                        samples.append((answered[0] - pressed) * 1000)
                    await _until(lambda d=dialog: app.screen is not d)  # closed once written
    finally:
        vault.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    p95 = pct(samples, 0.95)
    return {
        "rounds": len(samples),
        "key_to_answer_ms_p50": pct(samples, 0.5),
        "key_to_answer_ms_p95": p95,
        "key_to_answer_ms_max": round(max(samples), 3),
        "target_ms_p95": TARGET_MS,
        "ok": p95 <= TARGET_MS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "rounds",
        nargs="?",
        type=int,
        default=40,
        help="approve key presses in the Pilot app, each answered to a real agent (default 40)",
    )
    args = parser.parse_args()
    rounds = max(30, args.rounds)
    load = os.getloadavg()[0]
    emit({"load": load, "approve_key_to_answer": asyncio.run(_rounds(rounds))})


if __name__ == "__main__":
    main()
