"""An agent's write approved by the person, killed (SIGKILL) after it landed and before the
journal's row, is journaled with how the person approved it (`approved_via`), as an uncut write is:

- approved through the agent's own client (MCP elicitation), the server killed: `vaultwatch changes
  --finish` journals the write, approved through the client and unreviewed;
- approved with `vaultwatch approve` (acting in its own process), the command killed: `--finish`
  puts the note back and the change waits again; approved again, it is journaled as approved with
  `vaultwatch approve` (reviewed: the person saw it whole in `vaultwatch pending`).

Real parts: the Python `mcp` client with an elicitation callback, a real `serve --stdio` process
(the server the client spawns) or `vaultwatch approve` paused at a stage of its write (Writer's
fault_hook, installed before the command line runs) and SIGKILLed there, `vaultwatch changes` and
`vaultwatch approve` as processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import test_pending
from killed_cli import cli
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, stop_headless_servers
from mcp_types import ElicitResult, Implementation
from waiting import await_until

place = test_pending.place  # the vault, settings and environment of the pending-change tests

# `vaultwatch ARGS` with every Writer pausing at one stage of its write until it is killed
PAUSED = textwrap.dedent("""
    import os, sys, threading
    from vaultwatch.core.edit import writes

    stage_at, mark = sys.argv[1], sys.argv[2]

    def hook(stage):
        if stage == stage_at:
            with open(mark + ".tmp", "w") as fh:
                fh.write(str(os.getpid()))
            os.rename(mark + ".tmp", mark)
            threading.Event().wait()  # until the test kills this process

    init = writes.Writer.__init__

    def paused(self, vault, **options):
        options.setdefault("fault_hook", hook)
        init(self, vault, **options)

    writes.Writer.__init__ = paused
    from vaultwatch.tui.entry import main
    sys.exit(main(sys.argv[3:]))
""")

WANTED = "# Plan\nwritten by the agent after the person said yes\n"


@pytest.fixture
def asking(place) -> tuple[Path, dict[str, str]]:
    root, env = place
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text('[approve]\nmode = "writes"\nask_client = true\n')
    return root, {**env, "PYTHONPATH": str(ROOT)}


def changes(root: Path, env: dict[str, str]) -> list[dict]:
    done = cli("changes", str(root), "--json", env=env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_killed_write_approved_through_the_client_is_finished_with_how_it_was_approved(
    asking, tmp_path: Path, mode: str
) -> None:
    root, env = asking
    mark = tmp_path / "paused"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", PAUSED, "replaced", str(mark), "serve", str(root), "--stdio"],
        env=env,
    )
    asked: list[str] = []

    async def accept(context, params) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": True})

    async def write() -> None:
        async with Client(
            server, mode=mode, elicitation_callback=accept, client_info=Implementation(name="scribe", version="1")
        ) as client:
            await client.call_tool("write", {"path": "Notes/plan.md", "content": WANTED, "overwrite": True})

    call = asyncio.create_task(write())
    try:
        await await_until(lambda: mark.exists() or call.done(), what="the write paused after it landed")
        assert mark.exists(), f"the call ended before the write landed: {call.exception()!r}"
        os.kill(int(mark.read_text()), signal.SIGKILL)
    finally:
        call.cancel()
        with contextlib.suppress(BaseException):
            await call
    assert (root / "Notes" / "plan.md").read_text() == WANTED, "the kill did not land after the write"
    assert len(asked) == 1 and "+written by the agent after the person said yes" in asked[0], asked

    [shown] = changes(root, env)  # an interrupted write, not yet a row
    assert (shown["kind"], shown["operation"]) == ("interrupted", "write"), shown
    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert "journaled agent scribe/1's write of Notes/plan.md" in finished.stdout, finished.stdout

    [row] = changes(root, env)
    assert (row["kind"], row["agent"], row["operation"], row["path"]) == (
        "change",
        "scribe/1",
        "write",
        "Notes/plan.md",
    )
    # as an uncut write approved this way: through the agent's own client, which reviews nothing
    assert (row["approved_via"], row["reviewed"]) == ("agent-client", False), row
    shown_text = cli("changes", str(root), env=env)
    assert "[approved through the agent's own client (MCP elicitation)]" in shown_text.stdout, shown_text.stdout


async def test_a_killed_approve_command_waits_again_and_is_journaled_as_approved_with_it(place, tmp_path: Path) -> None:
    root, env = place
    env = {**env, "PYTHONPATH": str(ROOT)}
    async with Client(test_pending.bridged(root, env)) as client:  # a client that cannot be asked
        got = await client.call_tool("write", {"path": "Notes/plan.md", "content": WANTED, "overwrite": True})
        pid = test_pending.pending_id(got)
    stop_headless_servers(root)  # else `approve` hands the change to the running server
    mark = tmp_path / "paused"
    approving = subprocess.Popen(
        [sys.executable, "-c", PAUSED, "replaced", str(mark), "approve", str(pid), str(root)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        await await_until(lambda: mark.exists() or approving.poll() is not None, what="the approval's write landed")
        assert mark.exists(), approving.communicate()
        os.kill(approving.pid, signal.SIGKILL)
    finally:
        if approving.poll() is None:
            approving.kill()
        approving.communicate(timeout=60)
    assert (root / "Notes" / "plan.md").read_text() == WANTED, "the kill did not land after the write"

    finished = cli("changes", str(root), "--finish", env=env)
    assert finished.returncode == 0, finished.stderr
    assert f"rolled back the interrupted approval of pending change {pid}" in finished.stdout, finished.stdout
    assert (root / "Notes" / "plan.md").read_bytes() == test_pending.NOTE.encode()
    # (the put-back is journaled as the recovery's); no row of the agent's: nothing of it stayed
    assert [r for r in changes(root, env) if (r["agent"] or "").startswith("scribe")] == []

    again = test_pending.vaultwatch(env, "approve", str(pid), str(root))
    assert again.returncode == 0, again.stderr
    assert (root / "Notes" / "plan.md").read_text() == WANTED
    [row] = [r for r in changes(root, env) if r["agent"] and r["agent"].startswith("scribe")]
    assert (row["operation"], row["approved_via"], row["reviewed"]) == ("write", "approve-command", True), row
