"""What a `serve --stdio` spawn runs beside a client's first calls: real processes, the front as
tui/entry.py starts it, raw JSON-RPC lines, a recorder around the front's answers.

- The SDK is not imported during a cold load's parse, nor while a client pages through a warm
  start: the front answers the handshake, the client's tools/list (the list shipped with the
  package) and the listing without it. Only without a shipped list does its import overlap the
  parse (the client's tools/list would wait for it after the parse).
- The first full-text build waits until a client paging through front answers pauses: it takes
  a core and a process of its own, of no use to a client that has not searched yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

from test_stdio_front import INIT, INITIALIZED, LISTING, PING, ROOT, TOOLS, exchange

from bench.vaultgen import generate
from vaultwatch.mcp_server.cli import COLD_LOAD_NOTES

RECORD = """
import sys
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import stdiofront
started = []
start_search = Vault.start_search
def start_recorded(self):
    if not started:
        started.append(True)
        print("search started", file=sys.stderr, flush=True)
    return start_search(self)
Vault.start_search = start_recorded
from vaultwatch.core.index.entrycache import EntryCache
written = []
flush = EntryCache.flush
def flush_recorded(self, entries, *pace):
    if not written:
        written.append(True)
        print("cache written", file=sys.stderr, flush=True)
    return flush(self, entries, *pace)
EntryCache.flush = flush_recorded
import os
if os.environ.get("NO_SHIPPED_TOOL_LIST"):  # as with toollist.json made for another SDK
    from vaultwatch.mcp_server import toollist
    toollist.installed = lambda: {"mcp": "another"}
at = []  # per answer the front sent: (the SDK's import begun, the full-text index started, the cache written)
send = stdiofront.StdioFront._send_result
def recorded(self, id_text, result):
    sdk = "mcp" in sys.modules or "vaultwatch.mcp_server.server" in sys.modules
    at.append((sdk, bool(started), bool(written)))
    send(self, id_text, result)
stdiofront.StdioFront._send_result = recorded
front = stdiofront.start(sys.argv[1:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[1:])
print(f"after={front.after_sdk} at={at}", file=sys.stderr, flush=True)
sys.exit(code)
"""


def recorded_at(err: str) -> list[tuple[bool, bool, bool]]:
    line = next(line for line in err.splitlines() if line.startswith("after="))
    return eval(line.split(" at=", 1)[1])  # noqa: S307  (the recorder's own repr of a list of bool triples)


def test_the_sdk_waits_for_a_cold_load_and_a_warm_client_and_answers_nothing_they_asked(tmp_path, env):
    vault = tmp_path / "vault"
    generate(vault, COLD_LOAD_NOTES + 100)
    # notes written moments before a cache is are re-read at the next start (entrycache.RACY_NS): on a
    # slow machine the cold run ends that soon, and the warm start would parse them all again
    an_hour_ago = time.time() - 3600
    for path in vault.rglob("*"):
        os.utime(path, (an_hour_ago, an_hour_ago))
    script = [sys.executable, "-c", RECORD, "serve", str(vault), "--stdio"]
    # no entry cache and no handshake cache: every note is parsed, the tools/list is the shipped one
    _, cold = exchange(script, env, INIT, INITIALIZED, LISTING, TOOLS)
    _, warm = exchange(script, env, INIT, INITIALIZED, LISTING, TOOLS)
    # the initialize and tools/list (during the load) and the listing (once it ended): the SDK loaded at each?
    assert [sdk for sdk, _, _ in recorded_at(cold)] == [False, False, False], cold[-2000:]
    assert [sdk for sdk, _, _ in recorded_at(warm)] == [False, False, False], warm[-2000:]


def test_without_a_shipped_tool_list_the_sdk_imports_while_a_cold_load_parses(tmp_path, env):
    vault = tmp_path / "vault"
    generate(vault, COLD_LOAD_NOTES + 100)
    script = [sys.executable, "-c", RECORD, "serve", str(vault), "--stdio"]
    _, cold = exchange(script, {**env, "NO_SHIPPED_TOOL_LIST": "1"}, INIT, INITIALIZED, LISTING)
    # the initialize (before the load) and the listing (once it ended): the SDK's import begun at each?
    assert [sdk for sdk, _, _ in recorded_at(cold)] == [False, True], cold[-2000:]


def test_the_first_search_build_and_cache_write_wait_until_a_paging_client_pauses(demo_vault, env):
    """A first start (no entry cache): the SDK runs (a ping needed it) and the client keeps three
    listing calls in flight, so the front is never idle: no front answer is sent after the
    full-text index started or the entry cache began to be written; once the client stops
    calling, both happen."""
    script = [sys.executable, "-c", RECORD, "serve", str(demo_vault), "--stdio"]
    proc = subprocess.Popen(
        script, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    err: list[bytes] = []
    search_started, cache_written = threading.Event(), threading.Event()

    def read_stderr() -> None:
        for line in proc.stderr:
            err.append(line)
            if b"search started" in line:
                search_started.set()
            if b"cache written" in line:
                cache_written.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    calls = 30
    try:

        def send(message: dict) -> None:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()

        def answer() -> dict:
            return json.loads(proc.stdout.readline())

        for message in (INIT, INITIALIZED, PING):  # at once: the SDK owes the ping from the start
            send(message)
        assert answer()["id"] == 1
        assert answer()["id"] == "ping"  # the SDK runs now
        answers = []
        for i in range(calls):
            send({**LISTING, "id": 100 + i})
            if i >= 2:  # two calls always waiting behind the one being answered
                answers.append(answer())
        answers += [answer(), answer()]
        assert sorted(a["id"] for a in answers) == list(range(100, 100 + calls))
        assert all(a["result"]["structuredContent"]["returned"] == 2 for a in answers)
        assert search_started.wait(60), b"".join(err).decode()[-2000:]  # the client paused
        assert cache_written.wait(60), b"".join(err).decode()[-2000:]
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    text = b"".join(err).decode()
    assert f"after={calls} " in text, text[-2000:]  # every listing was the front's
    assert [(search, cache) for _, search, cache in recorded_at(text)] == [(False, False)] * (calls + 1), text[-2000:]
