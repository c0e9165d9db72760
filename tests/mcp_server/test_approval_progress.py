"""Progress while a call waits for the person's approval keeps the MCP rule: progress "MUST increase
with each notification" (and a total, once given, stays the same). Through the real server on its
socket with the real Python `mcp` client, and with the official TypeScript SDK client through the
real `vaultwatch bridge`; the person answers from another thread, as the TUI does."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from pathlib import Path

import pytest
from mcp_testing import CLIENT_DIR, VAULTWATCH, serving, uds_client

from vaultwatch.core.review import approval
from vaultwatch.core.review.approval import ApprovalGate, ApprovalRequested
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import progress as progress_module

ANSWER_WAIT = 60.0  # seconds a person waits for the client to hear enough, at most (a stuck test ends)


@pytest.fixture
def vault(tmp_path: Path, monkeypatch) -> Vault:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    # a heartbeat look every 50 ms rather than every second: the progress values are still the
    # call's seconds, so a wait of a few seconds hears a few notifications
    monkeypatch.setattr(progress_module, "HEARTBEAT", 0.05)
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\n- one\n")
    v = Vault(root)
    v.load()
    return v


class Person:
    """Approves each request once `ready` is set (by what the client heard, or `after` seconds into
    the wait), from another thread."""

    def __init__(self, gate: ApprovalGate, vault: Vault, ready: threading.Event, after: float | None = None) -> None:
        self.gate, self.ready, self.after = gate, ready, after
        self.unsubscribe = vault.bus.subscribe(self.on_event)

    def on_event(self, event) -> None:
        if isinstance(event, ApprovalRequested):
            pending_id = event.pending.id
            if self.after is not None:
                threading.Timer(self.after, self.ready.set).start()

            def answer() -> None:
                self.ready.wait(ANSWER_WAIT)
                self.gate.decide(pending_id, True)

            threading.Thread(target=answer, daemon=True).start()


def attended_gate(vault: Vault) -> ApprovalGate:
    gate = ApprovalGate("writes")
    approval.attach(vault, gate)
    gate.attend()
    return gate


def check_rule(heard: list[tuple[float, float | None, str | None]]) -> None:
    values = [p for p, _, _ in heard]
    assert all(b > a for a, b in zip(values, values[1:], strict=False)), heard  # each higher than the last
    totals = {t for _, t, _ in heard if t is not None}
    assert len(totals) == 1, heard  # the wait's total is given with every notification of it, and is one
    waiting = [m for _, t, m in heard if t is not None]
    assert all("waiting for the person to approve this edit" in (m or "") for m in waiting), heard
    # while the call waits, nothing says anything else (no alternating "still working")
    first = next(i for i, (_, t, _) in enumerate(heard) if t is not None)
    last = max(i for i, (_, t, _) in enumerate(heard) if t is not None)
    assert all(t is not None for _, t, _ in heard[first : last + 1]), heard


async def test_progress_during_an_approval_wait_increases_with_each_notification(vault, sock_dir):
    gate = attended_gate(vault)
    ready = threading.Event()
    Person(gate, vault, ready)
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        heard.append((value, total, message))
        if sum(1 for _, t, _ in heard if t is not None) >= 3:
            ready.set()

    async with serving(vault, sock_dir / "s.sock") as host, uds_client(host.socket_path) as client:
        result = await client.call_tool(
            "edit", {"path": "Plan.md", "old_text": "- one", "new_text": "- two"}, progress_callback=on_progress
        )
    assert not result.is_error, result.content[0].text
    assert (Path(vault.root) / "Plan.md").read_text() == "# Plan\n- two\n"
    check_rule(heard)
    [total] = {t for _, t, _ in heard if t is not None}
    assert gate.timeout <= total <= gate.timeout + 1  # the call's second at which the wait would time out


async def test_typescript_sdk_client_through_the_bridge_hears_increasing_progress(ts_sdk, vault, sock_dir):  # noqa: F811
    gate = attended_gate(vault)
    # the TS client's notifications are seen only once it ends: the person answers a few of the
    # call's seconds into the wait, which the heartbeat reports one by one
    Person(gate, vault, threading.Event(), after=3.5)
    async with serving(vault, sock_dir / "s.sock") as host:
        proc = await asyncio.create_subprocess_exec(
            str(ts_sdk),
            "events.mjs",
            "progress",
            "edit",
            json.dumps({"path": "Plan.md", "old_text": "- one", "new_text": "- two"}),
            *VAULTWATCH,
            "bridge",
            "--socket",
            host.socket_path,
            cwd=str(CLIENT_DIR),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 90)
    report = json.loads(out)
    assert report["ok"], report.get("error") or err.decode()[-2000:]
    assert not report["isError"], report["text"]
    heard = [(p["progress"], p.get("total"), p.get("message")) for p in report["progress"]]
    assert heard, "no progress notification during the approval wait"
    check_rule(heard)
