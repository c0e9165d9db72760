"""The lane for heavy calls (mcp_server/lane.py, issue 13): real server, real socket, real clients.

Heavy calls (here get_links of a note of 10,000 links, over lane.HEAVY_BYTES) run one at a
time however many agents send them at once; small calls never wait for them; a heavy call that
cannot get the lane in time is refused saying so, and one waiting for the person's approval
lets the others run. The note's links are looked up through the real Vault; the test only
records when each lookup ran (and holds one back where a test needs a long call).
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.core import handoffs, memory
from vaultwatch.core.review import approval
from vaultwatch.core.review.approval import ApprovalGate, ApprovalRequested
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import lane

LINKS = 10_000


@pytest.fixture
def vault(tmp_path: Path, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "small.md").write_text("# small\n[[links]]\n")
    (root / "links.md").write_text("".join(f"[[t{i}]] " for i in range(LINKS)))
    v = Vault(root)
    v.load()
    assert lane.weight(v, {"path": "links.md"}) >= lane.HEAVY_BYTES > lane.weight(v, {"path": "small.md"})
    return v


class Recorder:
    """Wraps vault.links: records (start, end) of every lookup; `hold` makes the first one wait."""

    def __init__(self, vault: Vault, seconds: float = 0.0, hold: threading.Event | None = None) -> None:
        self.real, self.seconds, self.hold = vault.links, seconds, hold
        self.spans: list[tuple[float, float]] = []
        self.started = threading.Event()
        self.calls = 0
        vault.links = self  # type: ignore[method-assign]

    def __call__(self, path: str):
        start = time.perf_counter()
        self.calls += 1
        first = self.calls == 1
        self.started.set()
        if self.hold is not None and first:
            assert self.hold.wait(20)
        report = self.real(path)
        time.sleep(self.seconds)  # a long call, without the interpreter: calls beside it could run
        self.spans.append((start, time.perf_counter()))
        return report


async def test_heavy_calls_run_one_at_a_time_and_small_calls_do_not_wait_for_them(vault, sock_dir):
    rec = Recorder(vault, seconds=0.3)
    async with serving(vault, sock_dir / "s.sock") as host:
        clients = [uds_client(host.socket_path, name=f"agent{i}") for i in range(4)]
        async with clients[0] as a, clients[1] as b, clients[2] as c, clients[3] as small:
            await small.call_tool("read", {"path": "small.md"})
            done: dict[str, float] = {}

            async def heavy(client, key):
                result = await client.call_tool("get_links", {"path": "links.md"})
                assert not result.is_error, result
                assert len(result.structured_content["outgoing"]) > 0
                done[key] = time.perf_counter()

            async def read():
                await asyncio.sleep(0.1)  # once the heavy calls are in
                result = await small.call_tool("read", {"path": "small.md"})
                assert not result.is_error
                done["read"] = time.perf_counter()

            await asyncio.gather(heavy(a, "a"), heavy(b, "b"), heavy(c, "c"), heavy(a, "a2"), read())
    spans = sorted(rec.spans)
    assert len(spans) == 4
    overlaps = [(x, y) for x, y in itertools.pairwise(spans) if y[0] < x[1]]
    assert not overlaps, f"heavy calls ran at the same time: {overlaps}"
    assert done["read"] < max(done[k] for k in ("a", "b", "c", "a2")), "the small read waited behind the heavy calls"


async def test_a_heavy_call_that_cannot_get_the_lane_in_time_is_refused_saying_to_retry(vault, sock_dir, monkeypatch):
    monkeypatch.setattr(lane, "WAIT_S", 0.5)
    hold = threading.Event()
    rec = Recorder(vault, hold=hold)
    async with serving(vault, sock_dir / "s.sock") as host:
        async with (
            uds_client(host.socket_path, name="first") as first,
            uds_client(host.socket_path, name="second") as second,
        ):
            long_call = asyncio.ensure_future(first.call_tool("get_links", {"path": "links.md"}))
            await asyncio.to_thread(rec.started.wait, 10)
            refused = await second.call_tool("get_links", {"path": "links.md"})
            small = await second.call_tool("get_links", {"path": "small.md"})
            hold.set()
            answered = await long_call
    assert refused.is_error
    text = refused.content[0].text
    assert "busy with another agent's large operation" in text and "waited 0.5 s" in text, text
    assert "nothing was changed" in text and "again" in text
    assert not small.is_error and not answered.is_error
    assert len(rec.spans) == 2  # the first call and the small one; the refused call never ran


async def test_a_heavy_write_waiting_for_approval_lets_other_heavy_calls_run(vault, sock_dir):
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    gate.attend()
    requested = threading.Event()
    vault.bus.subscribe(lambda e: requested.set() if isinstance(e, ApprovalRequested) else None)
    big = "# big\n" + "word " * 260_000  # 1.3 MB: heavy
    async with serving(vault, sock_dir / "s.sock") as host:
        async with (
            uds_client(host.socket_path, name="writer") as writer,
            uds_client(host.socket_path, name="reader") as reader,
        ):
            write = asyncio.ensure_future(writer.call_tool("write", {"path": "new.md", "content": big}))
            assert await asyncio.to_thread(requested.wait, 20)
            links = await asyncio.wait_for(reader.call_tool("get_links", {"path": "links.md"}), 20)
            assert not write.done()
            [pending] = gate.pending()
            gate.decide(pending.id, True)
            written = await write
    assert not links.is_error and not written.is_error, (links, written)
    assert (Path(vault.root) / "new.md").read_text() == big


class Watch:
    """Samples, from its own thread, what the interpreter runs under while a lookup is held."""

    def __init__(self, rec: Recorder) -> None:
        self.rec, self.seen = rec, []
        self.collections: list[int] = []  # automatic collections that started while a heavy call ran

    def look(self) -> None:
        self.seen.append((sys.getswitchinterval(), gc.isenabled(), memory.collector_pauses(), lane.stats["running"]))

    def on_gc(self, phase: str, info: dict) -> None:
        if phase == "start" and lane.stats["running"]:
            self.collections.append(info["generation"])


async def test_while_a_heavy_call_runs_hand_offs_are_quick_and_the_collector_waits(vault, sock_dir):
    """The lane's quick mode (module doc): measured through the real server, from outside the call."""
    before = (sys.getswitchinterval(), gc.isenabled(), memory.collector_pauses())
    assert before[0] > handoffs.QUICK_S and before[1], "the test needs CPython's defaults to start from"
    hold = threading.Event()
    rec = Recorder(vault, hold=hold)
    watch = Watch(rec)
    gc.callbacks.append(watch.on_gc)
    try:
        async with serving(vault, sock_dir / "s.sock") as host:
            async with (
                uds_client(host.socket_path, name="heavy") as heavy,
                uds_client(host.socket_path, name="small") as small,
            ):
                call = asyncio.ensure_future(heavy.call_tool("get_links", {"path": "links.md"}))
                assert await asyncio.to_thread(rec.started.wait, 10)
                watch.look()  # the heavy call holds the lane (its lookup is held back)
                garbage = [[[] for _ in range(100)] for _ in range(2000)]  # would set off collections
                del garbage
                read = await small.call_tool("read", {"path": "small.md"})  # small calls still run
                watch.look()
                hold.set()
                answered = await call
                for _ in range(100):  # the lane is given up just after the answer is sent
                    if not lane.stats["running"]:
                        break
                    await asyncio.sleep(0.02)
                watch.look()
    finally:
        gc.callbacks.remove(watch.on_gc)
    assert not answered.is_error and not read.is_error, (answered, read)
    quick = (handoffs.QUICK_S, False, 1, 1)
    assert watch.seen[:2] == [quick, quick], watch.seen
    assert watch.seen[2] == (*before, 0), watch.seen  # as it was once the lane is free
    assert watch.collections == [], "the collector ran while a heavy call held the lane"


async def test_a_heavy_call_waiting_for_approval_gives_up_quick_mode_with_the_lane(vault, sock_dir):
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    gate.attend()
    requested = threading.Event()
    vault.bus.subscribe(lambda e: requested.set() if isinstance(e, ApprovalRequested) else None)
    before = (sys.getswitchinterval(), gc.isenabled())
    async with serving(vault, sock_dir / "s.sock") as host:
        async with uds_client(host.socket_path, name="writer") as writer:
            write = asyncio.ensure_future(writer.call_tool("write", {"path": "new.md", "content": "x" * 1_100_000}))
            assert await asyncio.to_thread(requested.wait, 20)
            for _ in range(100):  # the lane looks at the caller's wait every 0.1 s
                if not lane.stats["running"]:
                    break
                await asyncio.sleep(0.02)
            waiting = (sys.getswitchinterval(), gc.isenabled(), lane.stats["running"])
            [pending] = gate.pending()
            gate.decide(pending.id, True)
            written = await write
    assert not written.is_error, written
    assert waiting == (*before, 0), waiting
    assert (sys.getswitchinterval(), gc.isenabled(), handoffs.quick_holds()) == (*before, 0)
