"""Once the SDK runs, `serve --stdio` still answers plain reads, listings and searches in its front (mcp_server/earlycalls.py)
with the SDK's own bytes and activity: the real `mcp` client against real processes, the same session of calls
with the front on and off (VAULTWATCH_STDIO_FRONT_CALLS=0), answers and audit lines compared."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH
from test_early_calls import call
from test_stdio_front import INIT, INITIALIZED, PING

from vaultwatch.mcp_server import earlycalls

# the front started as tui/entry.py starts it; at the end it writes how many answers it sent once the SDK ran
COUNTING = """
import os, sys
from vaultwatch.mcp_server import stdiofront
front = stdiofront.start(sys.argv[1:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[1:])
with open(os.environ["COUNTS_FILE"], "w") as fh:
    fh.write(str(front.after_sdk))
sys.exit(code)
"""

# reads the front answers (successes and core's refusals), then calls it leaves to the SDK
PLAIN = [
    ("read", {"path": "Getting Started.md"}),
    ("read", {"path": "Getting Started.md", "lines": [1, 3], "max_chars": 50}),
    ("read", {"path": "Getting Started.md", "frontmatter_only": True}),
    ("read", {"path": "Missing note.md"}),  # a tool error, the same both ways
    ("read", {"path": "../outside.md"}),  # outside the vault
    ("read", {"path": "escape.md"}),  # a symlink out of the vault
    ("read", {"path": ".hidden.md"}),  # hidden: refused
    ("list_documents", {}),
    ("list_documents", {"folder": "Projects", "limit": 2}),
    ("list_documents", {"include_frontmatter": True, "limit": 50}),  # spliced from the cached rows, as the SDK's
    ("search", {"query": "project"}),
    ("search", {"query": "project", "limit": 2}),  # a page and its cursor
    ("search", {"query": "proj* -atlas", "folder": "Projects", "mode": "keyword"}),  # a prefix and an exclusion
    ("search", {"query": "deploy runbook", "filters": {"status": "stable"}, "pattern": "**/*.md"}),
    ("search", {"query": "qqqzzznothing"}),  # no hit
    ("search", {"query": "project", "cursor": "not-a-cursor"}),  # core refuses it: a tool error, the same both ways
    ("write", {"path": "Inbox/front new.md", "content": "# new\n\nbody\n"}),  # created
    ("write", {"path": "Inbox/front new.md", "content": "# again\n"}),  # exists: needs if_match or overwrite
    ("write", {"path": "Inbox/front new.md", "content": "# again\n", "overwrite": True}),  # replaced
    ("write", {"path": "Inbox/front new.md", "content": "# c\n", "if_match": "0" * 16}),  # a conflict
    ("write", {"path": "Inbox/front new.md", "content": "# again\n", "overwrite": True}),  # the same bytes: no-op
    ("write", {"path": "Getting Started.md", "content": "x", "create_only": True}),  # refused
    ("write", {"path": "../outside.md", "content": "x"}),  # outside the vault
    ("write", {"path": "escape.md", "content": "x", "overwrite": True}),  # a symlink out of the vault
    ("write", {"path": ".hidden.md", "content": "x", "overwrite": True}),  # hidden: refused
]
TO_SDK = [
    ("read", {"path": "big.md", "max_chars": 100}),  # a heavy note: the lane's
    ("read", {"path": "Getting Started.md", "offset": "3"}),  # the SDK coerces it
    # (after the writes above: each waits for the full-text index to take them, or whether an answer
    # says index_stale would depend on how busy the machine is, not on who answers)
    ("search", {"query": "project", "limit": "3", "wait_for_pending_writes": True}),  # the SDK coerces it
    ("search", {"query": "project", "filters": {"status": 1.5}, "wait_for_pending_writes": True}),  # a float: the SDK's
    ("list_tags", {}),  # another tool
    ("write", {"path": "Inbox/sdk.md", "content": "x", "overwrite": 1}),  # the SDK coerces it
    ("write", {"path": "Inbox/sdk.md", "content": "x", "mode": "append"}),  # an unknown argument: the SDK names it
    ("write", {"path": "big copy.md", "content": "words and more words\n" * 60_000}),  # a heavy write: the lane's
]
# the errors among PLAIN's answers
PLAIN_ERRORS = [False] * 3 + [True] * 4 + [False] * 3 + [False] * 5 + [True] + [False, True, False, True]
PLAIN_ERRORS += [False] + [True] * 4


def wire(result) -> str:
    blocks = [b.model_dump(mode="json", exclude_none=True) for b in result.content]
    return json.dumps([blocks, result.structured_content, result.is_error, result.meta], ensure_ascii=False)


def audit_lines(path: Path) -> list[dict]:
    """The audit log without what differs between two runs (time, duration, the process's session, and
    the journal's row ids: a write's own file event may reach the watcher before its row is journaled,
    and the "outside" row it makes meanwhile, dropped once the change explains it, takes an id)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len({e.pop("session") for e in lines}) == 1
    for e in lines:
        e.pop("at"), e.pop("duration_ms")
        if "change_ids" in e:
            e["change_ids"] = len(e["change_ids"])
    return lines


async def session(
    vault: Path, env: dict, tmp: Path, front: bool, calls: list | None = None, *extra: str, mode: str = "legacy"
) -> tuple[list[str], list[dict], int]:
    """The same calls through the real client, on a copy of `vault` of its own (the writes change it):
    (answers, audit lines, answers the front sent once the SDK ran). `mode`: the client's (legacy: the
    initialize handshake; auto: a 2026-07-28-era client, the Python SDK's default)."""
    tag = f"{front}" if mode == "legacy" else f"{front}-{mode}"
    copy = tmp / f"vault-{tag}"
    shutil.copytree(vault, copy, symlinks=True)
    counts, audit = tmp / f"counts-{tag}.txt", tmp / f"audit-{tag}.jsonl"
    server_env = {**env, "COUNTS_FILE": str(counts), earlycalls.ENV_SWITCH: "1" if front else "0"}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", COUNTING, "serve", str(copy), "--stdio", "--audit-log", str(audit), *extra],
        env=server_env,
        cwd=str(ROOT),
    )
    got = []
    progress = []  # a call with a progress token (_meta) is the SDK's

    async def on_progress(*report) -> None:
        progress.append(report)

    async with Client(params, mode=mode) as client:
        # only the SDK answers these: the SDK runs once it is answered (a 2026-07-28 client has no ping)
        await (client.send_ping() if mode == "legacy" else client.list_prompts())
        # the front takes a search only once the full-text index is built: the SDK's search waits for it
        while (await client.call_tool("search", {"query": "project"}, progress_callback=on_progress)).is_error:
            pass
        for name, args in PLAIN + TO_SDK + PLAIN[:1] if calls is None else calls:
            got.append(wire(await client.call_tool(name, args)))
        got.append(wire(await client.call_tool("read", {"path": "Getting Started.md"}, progress_callback=on_progress)))
    return got, audit_lines(audit)[-len(got) :], int(counts.read_text())


def with_odd_notes(vault: Path, tmp: Path) -> Path:
    (tmp / "secret.md").write_text("# outside-the-vault-marker\n", encoding="utf-8")
    (vault / "escape.md").symlink_to(tmp / "secret.md")
    (vault / ".hidden.md").write_text("# hidden\n", encoding="utf-8")
    (vault / "big.md").write_text("# big\n" + "words and more words\n" * 60_000, encoding="utf-8")  # over 1 MiB
    return vault


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_steady_state_calls_are_the_sdks_answers_and_activity(demo_vault, env, tmp_path, mode):
    vault = with_odd_notes(demo_vault, tmp_path)
    front, front_audit, front_count = await session(vault, env, tmp_path, True, mode=mode)
    sdk, sdk_audit, sdk_count = await session(vault, env, tmp_path, False, mode=mode)
    assert front == sdk
    assert front_audit == sdk_audit and len(front_audit) == len(front)
    assert sdk_count == 0
    assert front_count == len(PLAIN) + 1  # the plain calls and the last plain read; none of TO_SDK, no progress
    answers = [json.loads(a) for a in front]
    assert [a[2] for a in answers[: len(PLAIN)]] == PLAIN_ERRORS
    searches = PLAIN.index(("search", {"query": "project"}))
    found = [a[1] for a in answers[searches : searches + 5]]
    assert [s["total"] > 0 for s in found] == [True] * 4 + [False]  # the searches found what they should
    assert found[1]["next_cursor"] and found[1]["returned"] == 2
    assert "outside-the-vault-marker" not in json.dumps(answers)  # the symlink's target is never read
    assert not answers[len(PLAIN)][2]  # the heavy read, answered by the SDK
    written_to = tmp_path / ("vault-True" if mode == "legacy" else f"vault-True-{mode}")
    assert (written_to / "Inbox" / "front new.md").read_text(encoding="utf-8") == "# again\n"
    assert (tmp_path / "secret.md").read_text(encoding="utf-8") == "# outside-the-vault-marker\n"
    assert not (tmp_path / "outside.md").exists()
    written = [e for e in front_audit if e["tool"] == "write"]
    assert len(written) == 9 + 3 and all(e["write"] for e in written[:9])  # the front's, marked as the SDK marks them


async def test_a_write_that_needs_the_person_goes_to_the_sdk_from_the_front(demo_vault, env, tmp_path):
    """With approval on, the front hands a write that needs the person to the SDK before anything is
    written (core.edit.hooks.HandOver): the SDK's path keeps it for the person (no TUI, no elicitation),
    once. The same answers, audit lines and pending changes as with the front off; a read the front
    answers before and after."""
    calls = [
        ("read", {"path": "Getting Started.md"}),
        ("write", {"path": "Inbox/asks.md", "content": "# asks\n"}),
        ("read", {"path": "Inbox/asks.md"}),  # not written
        ("write", {"path": "Inbox/asks.md", "content": "# asks\n"}),  # kept again, its own pending change
    ]
    front, front_audit, front_count = await session(demo_vault, env, tmp_path, True, calls, "--approve", "writes")
    sdk, sdk_audit, _ = await session(demo_vault, env, tmp_path, False, calls, "--approve", "writes")
    assert front == sdk and front_audit == sdk_audit and len(front_audit) == len(calls) + 1  # + session()'s read
    answers = [json.loads(a) for a in front]
    assert [a[2] for a in answers] == [False, True, True, True, False]
    assert "pending" in answers[1][0][0]["text"] and answers[1][0][0]["text"] != answers[3][0][0]["text"]
    assert front_count == 2  # the two reads without a progress token; the writes were the SDK's
    for copy in ("vault-True", "vault-False"):
        assert not (tmp_path / copy / "Inbox" / "asks.md").exists()


def spawn(vault: Path, env: dict, counts: Path | None = None) -> subprocess.Popen:
    """`serve --stdio` on raw pipes: as the console script starts it, or, given `counts`, with the front's
    count of the answers it sent once the SDK ran written there at the end (COUNTING)."""
    if counts is None:
        cmd, env = [*VAULTWATCH, "serve", str(vault), "--stdio"], env
    else:
        cmd, env = [sys.executable, "-c", COUNTING, "serve", str(vault), "--stdio"], {**env, "COUNTS_FILE": str(counts)}
    return subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )


class Lines:
    """A spawned server's answers by id, read as they come."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc, self.buf, self.by_id = proc, b"", {}

    def send(self, *messages: dict) -> None:
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def until(self, request_id) -> dict:
        deadline = time.monotonic() + 120
        while request_id not in self.by_id:
            assert time.monotonic() < deadline, f"no answer to {request_id!r}"
            if select.select([self.proc.stdout], [], [], 0.5)[0]:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                assert chunk, "stdout closed early"
                *done, self.buf = (self.buf + chunk).split(b"\n")
                for line in done:
                    message = json.loads(line)
                    assert message.get("id") not in self.by_id, f"two answers to {message.get('id')!r}"
                    self.by_id[message.get("id")] = message
        return self.by_id[request_id]

    def close(self) -> None:
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        assert self.proc.wait(60) == 0
        for line in (self.buf + rest).splitlines():
            self.by_id.setdefault(json.loads(line).get("id"), json.loads(line))


def cancel(request_id) -> dict:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


def test_order_and_cancellation_once_the_sdk_runs(demo_vault, env, tmp_path):
    """The front answers a plain write and a read right behind it in order (the read sees the write); a read
    right behind an edit waits for the SDK (it must see the edit); a cancelled call of the front's gets no
    answer, as the SDK answers none."""
    counts = tmp_path / "counts.txt"
    lines = Lines(spawn(demo_vault, env, counts))
    try:
        lines.send(INIT, INITIALIZED, PING)
        lines.until("ping")
        write = call("w", {"path": "Inbox/new.md", "content": "# new\n"}, name="write")
        lines.send(write, call("r0", {"path": "Inbox/new.md"}, name="read"))
        assert lines.until("r0")["result"]["structuredContent"]["content"] == "# new\n"
        assert lines.until("w")["result"]["structuredContent"]["created"]
        edit = call("e", {"path": "Inbox/new.md", "old_text": "# new", "new_text": "# newer"}, name="edit")
        lines.send(edit, call("r1", {"path": "Inbox/new.md"}, name="read"))
        lines.until("r1")  # the SDK's (it may run beside the edit, as the SDK runs requests): counted below
        lines.until("e")
        lines.send(call("r2", {"path": "Inbox/new.md"}, name="read"))
        assert lines.until("r2")["result"]["structuredContent"]["content"] == "# newer\n"
        # a burst of the front's reads, the second half cancelled as soon as sent, then one more read: the
        # worker answers in order, so once the last is answered every earlier one was answered or dropped
        burst = [call(f"b{i}", {"path": "Getting Started.md"}, name="read") for i in range(40)]
        lines.send(*burst, *(cancel(f"b{i}") for i in range(20, 40)), call("end", {"path": "Inbox/new.md"}, "read"))
        lines.until("end")
    finally:
        lines.close()
    assert all(f"b{i}" in lines.by_id for i in range(20))
    dropped = [i for i in range(20, 40) if f"b{i}" not in lines.by_id]
    assert dropped and dropped == list(range(dropped[0], 40))  # from some point on, every cancelled one
    assert int(counts.read_text()) == 2 + 1 + 20 + (20 - len(dropped)) + 1  # w, r0, r2, the burst's answers, end


def test_a_call_while_the_person_has_the_foreground_goes_to_the_sdk(demo_vault_ro):
    """In-process (a stdio server has no TUI to hold it): while the person's input is answered, the front
    takes no call (the SDK's path waits for the person's turn); once released, it answers."""
    import threading

    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server.activity import Activity
    from vaultwatch.mcp_server.earlycalls import EarlyCalls

    vault = Vault(demo_vault_ro)
    vault.load()
    try:
        calls = EarlyCalls(vault, Activity(vault.bus, foreground=vault.foreground, session="s"), max_answer_bytes=65536)
        sent, done = [], threading.Event()

        def send(id_text, data) -> None:
            sent.append((id_text, json.loads(data)))
            done.set()

        params = {"name": "read", "arguments": {"path": "Getting Started.md"}}
        vault.foreground.hold(60)
        assert not calls.take(params, "1", "agent/1", send, lambda: None)
        vault.foreground.release()
        assert calls.take(params, "2", "agent/1", send, lambda: None)
        assert done.wait(30)
        assert sent[0][0] == "2" and not sent[0][1]["isError"]
    finally:
        vault.stop()


@pytest.mark.parametrize("prefix", ["", "vault_"])
async def test_a_write_the_front_hands_over_asks_the_person_through_the_client(demo_vault, env, tmp_path, prefix):
    """A client that can ask its person (elicitation) is asked about a write that needs approval, also
    when the front took the call first and under a tool prefix: the SDK's path asks, the front's never
    decides it alone (it would keep the change for later instead of asking)."""
    from mcp_types import ElicitResult

    seen: list[str] = []

    async def approve(context, params) -> ElicitResult:
        seen.append(params.message)
        return ElicitResult(action="accept", content={"approve": True})

    counts = tmp_path / "counts.txt"
    extra = ["--tool-prefix", prefix] if prefix else []
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text("[approve]\nask_client = true\n")  # the person lets it ask
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", COUNTING, "serve", str(demo_vault), "--stdio", "--approve", "writes", *extra],
        env={**env, "COUNTS_FILE": str(counts), "XDG_CONFIG_HOME": str(config)},
        cwd=str(ROOT),
    )
    async with Client(params, mode="legacy", elicitation_callback=approve) as client:
        assert not (await client.call_tool(prefix + "read", {"path": "Getting Started.md"})).is_error
        done = await client.call_tool(prefix + "write", {"path": "Inbox/asked.md", "content": "# asked\n"})
        assert not done.is_error, done.content[0].text
    assert (demo_vault / "Inbox" / "asked.md").read_text(encoding="utf-8") == "# asked\n"
    [asked] = seen
    assert "  creates Inbox/asked.md" in asked.splitlines(), asked  # the effect, in the dialog's words
    assert int(counts.read_text()) == 0  # the read came before the SDK; the write was the SDK's


async def test_writes_that_get_around_a_path_still_meet_the_gate_through_the_front(demo_vault, env, tmp_path):
    """An agent's ways around a folder rule, tried through the front and through the SDK alone: a
    symlinked note whose target is in a gated folder, the folder's name in another Unicode form, a
    folder its own rule denies. The front hands each gated one over before writing anything; the
    answers, audit lines and files are the same both ways."""
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text(
        '[approve.folders]\n"Private/**" = "writes"\n"Caf\u00e9/**" = "writes"\n[agents.mcp]\ndeny = ["Locked/**"]\n',
        encoding="utf-8",
    )
    for folder in ("Private", "Caf\u00e9", "Locked"):
        (demo_vault / folder).mkdir()
    (demo_vault / "Private" / "secret.md").write_text("# secret\n", encoding="utf-8")
    (demo_vault / "Inbox" / "link.md").symlink_to("../Private/secret.md")
    calls = [
        ("write", {"path": "Inbox/link.md", "content": "# mine\n", "overwrite": True}),  # the target is Private's
        ("write", {"path": "Private/new.md", "content": "# new\n"}),
        ("write", {"path": "Cafe\u0301/new.md", "content": "# new\n"}),  # NFD: the same folder as the rule's NFC
        ("write", {"path": "Locked/new.md", "content": "# new\n"}),  # this agent's rule denies it
        ("write", {"path": "Inbox/fine.md", "content": "# fine\n"}),
    ]
    env = {**env, "XDG_CONFIG_HOME": str(config)}
    front, front_audit, front_count = await session(demo_vault, env, tmp_path, True, calls)
    sdk, sdk_audit, _ = await session(demo_vault, env, tmp_path, False, calls)
    assert front == sdk and front_audit == sdk_audit
    answers = [json.loads(a) for a in front]
    assert [a[2] for a in answers] == [True, True, True, True, False, False]  # + session()'s read
    assert all("pending change" in a[0][0]["text"] for a in answers[:2]), answers[:2]
    assert "the existing one" in answers[2][0][0]["text"]  # refused as a second spelling of the folder
    assert "Locked/**" in answers[3][0][0]["text"]
    assert front_count == 3  # the refused, the denied and the fine one; the gated ones were the SDK's
    for copy in ("vault-True", "vault-False"):
        root = tmp_path / copy
        assert (root / "Private" / "secret.md").read_text(encoding="utf-8") == "# secret\n"
        assert sorted(p.name for p in (root / "Private").iterdir()) == ["secret.md"]
        assert not list((root / "Caf\u00e9").iterdir()) and not list((root / "Locked").iterdir())
        assert (root / "Inbox" / "fine.md").read_text(encoding="utf-8") == "# fine\n"


def test_a_client_that_hangs_up_during_a_write_still_gets_it_whole_and_journaled(demo_vault, env):
    """stdin ends right behind a write the front took: the process finishes the write, journals it and
    answers it before it exits (without the SDK: nothing else was asked), never a half-done change."""
    body = "# big\n" + "a line of the note\n" * 40_000  # ~760 KB: under the lane's weight, a while to write
    proc = spawn(demo_vault, env)
    lines = Lines(proc)
    lines.send(INIT, INITIALIZED)
    lines.until(1)
    lines.send(call("w", {"path": "Inbox/last words.md", "content": body}, name="write"))
    lines.close()  # at once: stdin ends while the write is under way
    assert lines.by_id["w"]["result"]["structuredContent"]["created"]
    assert (demo_vault / "Inbox" / "last words.md").read_text(encoding="utf-8") == body
    journal = subprocess.run(
        [*VAULTWATCH, "changes", str(demo_vault), "--json"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert journal.returncode == 0, journal.stderr
    changes = [json.loads(line) for line in journal.stdout.splitlines()]  # JSON lines, newest first
    assert len(changes) == 1, [(c["kind"], c["actor"], c["path"], c["at"]) for c in changes]  # (what else, if it fails)
    [change] = changes
    assert (change["actor"], change["agent"], change["path"]) == ("agent:raw", "raw/1", "Inbox/last words.md")
    assert change["files"][0]["after_size"] == len(body.encode())


def test_a_server_killed_during_a_front_write_leaves_the_old_note_or_the_new_one(demo_vault, env):
    """kill -9 of `serve --stdio` at moments through an 800 KB write the front took (nine delays, from
    before the write to after it: some land while its temporary file exists): the note is always the
    old bytes or one of the new ones, never a mix; the next start serves it and removes what a killed
    write left."""
    import signal

    note = demo_vault / "Getting Started.md"
    versions = {note.read_bytes()}
    for round_, delay in enumerate((0.0, 0.01, 0.02, 0.025, 0.03, 0.035, 0.04, 0.05, 0.1)):
        body = f"# round {round_}\n" + f"line of round {round_}\n" * 50_000
        versions.add(body.encode())
        proc = spawn(demo_vault, env)
        lines = Lines(proc)
        lines.send(INIT, INITIALIZED)
        lines.until(1)
        args = {"path": "Getting Started.md", "content": body, "overwrite": True}
        lines.send(call("w", args, name="write"))
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc.stdin.close()
        proc.stdout.close()
        assert note.read_bytes() in versions, f"round {round_}: the note is neither the old nor a new version"
    lines = Lines(spawn(demo_vault, env))
    lines.send(INIT, INITIALIZED, call("r", {"path": "Getting Started.md"}, name="read"))
    read = lines.until("r")["result"]["structuredContent"]  # a page of the note (a read's default size)
    assert any(v.decode().startswith(read["content"]) for v in versions) and note.read_bytes() in versions
    deadline = time.monotonic() + 30
    while [p.name for p in demo_vault.iterdir() if p.name.startswith(".vaultwatch-") and p.name.endswith(".tmp")]:
        assert time.monotonic() < deadline, "a killed write's temporary file was not cleaned up"
        time.sleep(0.1)
    lines.close()


def test_a_second_handshake_leaves_the_calls_to_the_sdk_which_names_its_client(demo_vault, env, tmp_path):
    """A client that handshakes as `raw`, then again as `reader` (read-only by the person's rule): the SDK
    attributes the calls after it to the latest handshake, so the write is refused as reader's; the front,
    which knew only the first name, leaves the calls to the SDK from then on (it wrote it as raw's)."""
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text("[agents.reader]\nread_only = true\n")
    proc = spawn(demo_vault, {**env, "XDG_CONFIG_HOME": str(config)})
    lines = Lines(proc)
    lines.send(INIT, INITIALIZED)
    lines.until(1)
    lines.send({**INIT, "id": 2, "params": {**INIT["params"], "clientInfo": {"name": "reader", "version": "1"}}})
    lines.until(2)  # the SDK answered the second handshake: it owes the client nothing now
    lines.send(call("w", {"path": "Inbox/second.md", "content": "x\n"}, name="write"))
    result = lines.until("w")["result"]
    lines.close()
    assert result["isError"] and "read-only" in result["content"][0]["text"]
    assert not (demo_vault / "Inbox" / "second.md").exists()
