"""One lane for agents' heavy calls: at most one runs at a time (the per-call budgets).

vaultwatch serves agents from worker threads of one interpreter, which runs one thread at a
time. A call on a big note (a 10 MB edit with replace_all, the links of a 330k-link note, a
3.85 MB write) needs the interpreter for a few hundred milliseconds, handed over in slices;
a small call beside it waits for a slice at each step. One such call slows a small call by a
bounded amount. Eight of them at once (one agent's parallel requests, or several agents) left
a small call a ninth of the interpreter: a well-behaved agent's 5 ms read took up to 0.67 s.

So a tool call is weighed on the event loop before it runs (a dictionary look-up: the size of
the note its `path` names, its links, the length of the `content` it writes), and a call of
HEAVY_BYTES or more takes the lane first. A heavy call that finds the lane taken waits without
using the CPU, up to WAIT_S, and is then refused with an error that says to retry (it changed
nothing). Small calls never wait here. A heavy call that waits for the person's approval
gives the lane up while it waits (its bytes are already on disk in a temporary file; what
remains after the key is small), so the person's pace never blocks other agents' big calls.
The person's own actions (TUI, CLI) do not go through the MCP layer and never wait here.

One heavy call at a time still shares the interpreter with every small call. Measured beside
two abusive agents (tests/reliability/test_budgets.py's scenario, bench/bench_budgets.py), a
small call's wait came from three places: (1) hand-offs: a small call needs the interpreter many
times (each wake of the event loop, the hand-over to its worker thread and back, each system
call of the read), and each time a thread running a heavy call's Python keeps it up to CPython's
switch interval, 5 ms; (2) full collections: heavy calls' allocations (objects kept alive across
many young collections while the call runs) set off the cyclic collector's full passes over
every object of the index, 50-85 ms each in one C call during which no other thread runs (5-6
per 20 s of abuse); (3) single C calls of a heavy call over a whole 10 MB note (count, replace,
decode: 5-55 ms each under load). Work on the event loop itself was rare (6 loop turns over
20 ms in 18,000). So while a heavy call holds the lane, the switch interval is 0.5 ms
(core.handoffs, the one owner of that process-global) and the collector's automatic passes wait
(core.memory's counted pause): a small call then waits at most ~0.5 ms per hand-off plus the
heavy call's current C call, and no full pass starts inside a heavy call (its short-lived
objects die before the collector next runs, so they no longer set off full passes: 3 per 20 s).
Both come back when the lane is given up, also while its holder waits for the person. Side by
side in six pairs of 20 s rounds at load 2.3-3.8, the small read's p95 went from 38-61 ms
(median 48) to 31-45 ms (median 34), its max from 96-208 ms (median 141) to 79-147 ms (median
110), and the abusers got more calls done (283 -> 330 on average). Source (3): edit's counts and
replaces over a big note run in 1 MiB pieces (core.edit.pieces, the builtins' exact answers),
so the interpreter can be handed over between pieces (three more pairs at load 1.9-4.2: p95 25-30
ms against 29-37 ms with those calls whole); a heavy call's other single C calls (decoding and
encoding the note) are still whole, a few to tens of milliseconds each.
`VAULTWATCH_LANE_QUICK=0` turns the quick mode off (for those before/after figures).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from vaultwatch.core import handoffs, memory, settings
from vaultwatch.core.disk.paths import normalize
from vaultwatch.core.edit.hooks import current_caller
from vaultwatch.core.model import FOLDER
from vaultwatch.core.vault import Vault

HEAVY_BYTES = 1024 * 1024  # a call whose weight reaches this takes the lane
LINK_BYTES = 120  # what one link weighs in a get_links answer (its JSON, encoded twice to fit the budget)
# what one entry beneath a moved or deleted folder weighs: the move re-reads each into the index
# (a deep tree's entries cost their depth each), as reading a small note would
MOVED_ENTRY_BYTES = 4096
FOLDER_TOOLS = ("rename", "delete")  # the tools that move a whole folder named by `path` (any --tool-prefix)
WAIT_S = 30.0  # the longest a heavy call waits for the lane before it is refused
POLL_S = 0.02  # how often a waiting call looks at the lane (cancellable; no thread is held while waiting)

ENV_SWITCH = "VAULTWATCH_LANE_QUICK"  # "0": the lane does not touch the switch interval or the collector (A/B figures)
QUICK = bool(settings.env(ENV_SWITCH))

_LANE = threading.Lock()  # one lane per process: every server (socket, stdio, HTTP) shares the interpreter
_stats_lock = threading.Lock()
stats = {"heavy": 0, "waited": 0, "refused": 0, "running": 0, "most_running": 0}  # figures and tests


def weight(vault: Vault, arguments: Mapping[str, Any], tool: str = "") -> int:
    """Roughly how many bytes a call with these arguments works through (0 when it names nothing big).
    A `tool` of FOLDER_TOOLS naming a folder weighs what lies beneath it (one bisection)."""
    w = 0
    content = arguments.get("content")
    if isinstance(content, str):
        w = len(content)
    path = arguments.get("path")
    if isinstance(path, str):
        try:
            entry = vault.snapshot.get(normalize(path))
        except Exception:  # a bad path: the tool refuses it at once
            entry = None
        if entry is not None:
            w = max(w, entry.size_bytes, len(entry.links) * LINK_BYTES)
            if entry.kind == FOLDER and tool.endswith(FOLDER_TOOLS):
                lo, hi = vault.snapshot.span(entry.path)
                w = max(w, (hi - lo) * MOVED_ENTRY_BYTES)
    return w


def _refusal(tool: str) -> dict[str, Any]:
    text = (
        f"Error: vaultwatch is busy with another agent's large operation (a big note or a large write "
        f"runs one at a time) and {tool} waited {WAIT_S:g} s for it without starting; nothing was changed. "
        "Call it again in a moment, or work on a smaller part of the note."
    )
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _count(key: str, delta: int = 1) -> None:
    with _stats_lock:
        stats[key] += delta
        if key == "running":
            stats["most_running"] = max(stats["most_running"], stats["running"])


def _take() -> bool:
    """Take the lane without waiting; while it is held, hand-offs are quick and the collector waits (module doc)."""
    if not _LANE.acquire(blocking=False):
        return False
    if QUICK:
        handoffs.begin_quick()
        memory.pause_collector()
    return True


def _give() -> None:
    """Give the lane up: the switch interval and the collector are as they were (unless others hold them)."""
    if QUICK:
        memory.resume_collector()
        handoffs.end_quick()
    _LANE.release()


class Lane:
    """Server middleware that runs heavy tool calls one at a time (see the module doc)."""

    def __init__(self, vault: Vault, clock: Callable[[], float] = time.monotonic) -> None:
        self.vault = vault
        self._clock = clock

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        arguments = params.get("arguments")
        if (
            ctx.method != "tools/call"
            or not isinstance(arguments, Mapping)
            or weight(self.vault, arguments, str(params.get("name", ""))) < HEAVY_BYTES
        ):
            return await call_next(ctx)
        import asyncio  # noqa: PLC0415  (the SDK's by now; the stdio front weighs calls without it)

        _count("heavy")
        if not _take():
            _count("waited")
            deadline = self._clock() + WAIT_S
            while not _take():
                if self._clock() >= deadline:
                    _count("refused")
                    return _refusal(str(params.get("name", "the call"))[:100])
                await asyncio.sleep(POLL_S)
        held = True
        _count("running")
        try:
            caller = current_caller()
            task = asyncio.ensure_future(call_next(ctx))
            try:
                while True:
                    done, _ = await asyncio.wait([task], timeout=0.1)
                    if done:
                        return task.result()
                    if held and caller is not None and caller.waiting is not None:
                        held = False  # waiting for the person: let other heavy calls run meanwhile
                        _count("running", -1)
                        _give()
            finally:
                if not task.done():
                    task.cancel()
        finally:
            if held:
                _count("running", -1)
                _give()
