"""Change review benchmarks: journaling cost, diff rendering, journal size, approval latency.

    python -m bench.bench_changes            # all four, JSON on stdout

- journal_write: a 10 KB note rewritten through core.edit.writes.Writer, with and without the
  change journal (p50 of each; the target is <= 1 ms added at p50).
- diff_1mb: a 1 MB note's diff computed and its first screen (50 lines) drawn as the TUI's
  DiffView draws it (unified at 120 columns, side by side at 200), for a few scattered edits
  and for a rewrite of every tenth line (target <= 100 ms); and once every line drawn.
- journal_size: 10,000 changes of 10 KB notes (one-line edits over 100 notes) in the journal:
  the file's size on disk.
- approve_latency: the TUI (Pilot, headless) with the approval gate on and a real agent, its
  own process, on the real socket: the person's `y` key (pressed once the dialog is drawn) ->
  the agent's answer received, p95 (target <= 100 ms), after one warm-up round; then the same
  write without the gate.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # tests/waiting.py, which the TUI test helpers use
sys.path.insert(0, str(ROOT / "tests" / "tui"))

from bench.common import emit  # noqa: E402

WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda migration vault note agent review "
    "change journal person approve link heading section"
).split()


def note_text(rng: random.Random, size: int) -> str:
    lines, total = ["---", "title: Bench", "status: draft", "---", "# Bench"], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 3)


def journal_write(n: int = 400) -> dict:
    """Two vaults written alternately (same load on both), one journaled; plus the journal's own time."""
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.review.journal import Journal, attach
    from vaultwatch.core.vault import Vault

    rng = random.Random(1)
    base = note_text(rng, 10_000)
    with tempfile.TemporaryDirectory() as tmp:
        writers, samples, journals = {}, {"off": [], "on": []}, []
        for label in ("off", "on"):
            root = Path(tmp) / label
            root.mkdir()
            (root / "n.md").write_text(base)
            vault = Vault(root, cache=False)
            vault.load()
            journal = Journal(os.path.join(tmp, "j.sqlite3"), bus=vault.bus) if label == "on" else None
            attach(vault, journal)
            writers[label] = Writer(vault)
            if journal is not None:
                journals.append(journal)
        inside: list[float] = []
        record = journals[0].record_result

        def timed_record(*args):
            t = time.perf_counter()
            try:
                return record(*args)
            finally:
                inside.append((time.perf_counter() - t) * 1000)

        journals[0].record_result = timed_record
        for i in range(n):
            lines = base.splitlines()
            lines[10 + i % 50] = f"edit {i} " + lines[10 + i % 50]
            text = "\n".join(lines) + "\n"
            for label in ("off", "on") if i % 2 else ("on", "off"):
                t = time.perf_counter()
                writers[label].write("n.md", text, overwrite=True, actor="agent:bench")
                samples[label].append((time.perf_counter() - t) * 1000)
    off, on = statistics.median(samples["off"]), statistics.median(samples["on"])
    return {
        "note_bytes": len(base.encode()),
        "writes_each": n,
        "off_p50_ms": round(off, 3),
        "on_p50_ms": round(on, 3),
        "added_p50_ms": round(on - off, 3),
        "journal_record_p50_ms": round(statistics.median(inside), 3),
        "journal_record_p95_ms": pct(inside, 0.95),
        "target_ms": 1.0,
    }


def diff_1mb(repeat: int = 5, screen: int = 50) -> dict:
    """A 1 MB note's diff computed and its first screen drawn the way DiffView draws it (the
    pieces on screen only), unified at 120 columns and side by side at 200; plus, once, every
    line of the diff drawn (the person scrolled it end to end)."""
    from rich.console import Console

    from vaultwatch.core.review.textdiff import text_diff
    from vaultwatch.tui.widgets.diffview import LazyLines, render_diff

    rng = random.Random(2)
    before = note_text(rng, 1_000_000)
    lines = before.splitlines()
    scattered = list(lines)
    for k in range(0, len(scattered), len(scattered) // 8):
        scattered[k] = scattered[k] + " changed here"
    every_tenth = [line + " x" if i % 10 == 0 else line for i, line in enumerate(lines)]
    out = {"note_bytes": len(before.encode()), "lines": len(lines), "screen_lines": screen, "target_ms": 100}
    for label, after_lines in (("scattered_8_edits", scattered), ("every_10th_line", every_tenth)):
        after = "\n".join(after_lines) + "\n"
        for width in (120, 200):
            console = Console(width=width, file=open(os.devnull, "w"), color_system="truecolor")
            samples, cpu = [], []
            for _ in range(repeat):
                t, c = time.perf_counter(), time.process_time()
                doc = render_diff(before.encode(), after.encode(), width)
                view = LazyLines(doc, width, console)
                view.lines(0, screen)
                samples.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
            out[f"{label}_w{width}_p50_ms"] = round(statistics.median(samples), 1)
            out[f"{label}_w{width}_cpu_p50_ms"] = round(statistics.median(cpu), 1)  # less swayed by the load
            t = time.perf_counter()
            view.lines(0, view.height)
            out[f"{label}_w{width}_all_{view.height}_lines_ms"] = round((time.perf_counter() - t) * 1000, 1)
        diff = text_diff(before.encode(), after.encode())
        out[f"{label}_hunks"] = len(diff.hunks)
    return out


def journal_size(changes: int = 10_000, notes: int = 100) -> dict:
    from vaultwatch.core.edit.hooks import FileWrite, Scope
    from vaultwatch.core.review.journal import Journal

    rng = random.Random(3)
    texts = [note_text(rng, 10_000) for _ in range(notes)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "j.sqlite3")
        journal = Journal(path, max_changes=changes)
        scope = Scope(journal, None, "edit", "agent:bench", {})
        t = time.perf_counter()
        for i in range(changes):
            k = i % notes
            before = texts[k].encode()
            lines = texts[k].splitlines()
            j = 5 + (i // notes) % (len(lines) - 5)
            lines[j] = " ".join(rng.choice(WORDS) for _ in range(8))
            texts[k] = "\n".join(lines) + "\n"
            scope.files = [FileWrite(f"Notes/n{k}.md", before, texts[k].encode(), "target")]
            journal._insert(
                dict(
                    kind="change",
                    actor="agent:bench",
                    agent="bench/1",
                    session="s",
                    tool="edit",
                    operation="edit",
                    path=f"Notes/n{k}.md",
                    summary="+1 -1 lines",
                    arguments={"path": f"Notes/n{k}.md", "old_text": "x" * 60, "new_text": "y" * 60},
                ),
                scope.files,
                [f"Notes/n{k}.md"],
            )
        seconds = time.perf_counter() - t
        journal.checkpoint()
        stats = journal.stats()
        journal.close()
        return {
            "changes": changes,
            "note_bytes": 10_000,
            "file_mb": round(os.path.getsize(path) / 2**20, 1),
            "content_mb": round(stats["content_bytes"] / 2**20, 1),
            "bytes_per_change": round(os.path.getsize(path) / changes),
            "insert_ms_mean": round(seconds * 1000 / changes, 3),
        }


AGENT = """
import asyncio, json, os, sys, time
sys.path.insert(0, sys.argv[2])
sys.path.insert(0, os.path.dirname(sys.argv[2]))  # tests/: waiting.py, which test_agents uses
from test_agents import agent

async def main():
    async with agent(sys.argv[1], "bench-agent") as client:
        print("ready", flush=True)
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            path = line.strip()
            result = await client.call_tool("write", {"path": path, "content": "# " + path + "\\n"})
            print(json.dumps({"at": time.monotonic(), "error": result.is_error}), flush=True)

asyncio.run(main())
"""


async def quiet(app) -> None:
    """The app's work after a round is done (bounded: a screen closed under settle's refresh wait)."""
    from vaultwatch.tui.idle import settle

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(settle(app), 10)


async def _approve_latency(rounds: int) -> dict:
    """The agent is its own process (as agents are): it takes the time its answer arrives, on the
    machine-wide monotonic clock this process reads before the person's key."""
    import json

    from test_agents import wait_for
    from tui_helpers import copy_demo, open_loaded

    from vaultwatch.core.review import approval
    from vaultwatch.core.review.approval import ApprovalGate
    from vaultwatch.tui.app import make_app
    from vaultwatch.tui.config import fixed_config
    from vaultwatch.tui.flows.review import ApprovalScreen
    from vaultwatch.tui.idle import settle

    with tempfile.TemporaryDirectory(prefix="vwb-") as tmp:
        os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "state")
        root = copy_demo(Path(tmp) / "demo")
        sock = os.path.join(tmp, "s.sock")
        vault = open_loaded(root)
        approval.attach(vault, ApprovalGate("writes"))
        app = make_app(vault, config=fixed_config(mcp=True, socket_path=sock))
        samples, plain = [], []
        async with app.run_test(size=(120, 50)) as pilot:
            await settle(app)
            await wait_for(lambda: os.path.exists(sock) and sock in app.status.parts["mcp"].plain, 20)
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                AGENT,
                sock,
                str(ROOT / "tests" / "tui"),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            assert proc.stdin is not None and proc.stdout is not None
            try:
                assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"ready"

                async def call(path: str) -> dict:
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(path.encode() + b"\n")
                    await proc.stdin.drain()
                    return proc.stdout.readline()  # type: ignore[return-value]

                for i in range(-1, rounds):  # round -1 warms up (the first dialog, the first approved write)
                    answer = asyncio.ensure_future(await call(f"Inbox/b{i}.md"))
                    await wait_for(lambda: isinstance(app.screen, ApprovalScreen), 20)
                    await wait_for(lambda: app.screen.keys.armed, 20)  # y acts only a moment after it shows
                    await quiet(app)  # the dialog drawn: the person reads the diff before the key
                    t = time.monotonic()
                    await pilot.press("y")
                    got = json.loads(await asyncio.wait_for(answer, 20))
                    if i >= 0:
                        samples.append((got["at"] - t) * 1000)
                    assert not got["error"]
                    await wait_for(lambda: not isinstance(app.screen, ApprovalScreen), 20)
                    await quiet(app)
                approval.gate_for(vault).set_mode("none")  # the same write without the gate, same app and load
                for i in range(rounds):
                    t = time.monotonic()
                    got = json.loads(await asyncio.wait_for(await call(f"Inbox/p{i}.md"), 20))
                    plain.append((got["at"] - t) * 1000)
                    assert not got["error"]
                    await quiet(app)
            finally:
                proc.stdin.close()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
    print("approve samples ms:", [round(x) for x in samples], file=sys.stderr)
    return {
        "rounds": rounds,
        "p50_ms": round(statistics.median(samples), 1),
        "p95_ms": pct(samples, 0.95),
        "max_ms": round(max(samples), 1),
        "target_p95_ms": 100,
        "plain_write_round_trip_p50_ms": round(statistics.median(plain), 1),
        "plain_write_round_trip_p95_ms": pct(plain, 0.95),
    }


def main() -> None:
    which = sys.argv[1:] or ["journal_write", "diff_1mb", "journal_size", "approve_latency"]
    out: dict = {"load": os.getloadavg()[0]}
    for name in which:
        if name == "approve_latency":
            out[name] = asyncio.run(_approve_latency(30))
        else:
            out[name] = globals()[name]()
    emit(out)


if __name__ == "__main__":
    main()
