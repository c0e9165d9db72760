"""What a `serve --stdio` spawn runs beside a client's first calls: real processes, the front as
tui/entry.py starts it, raw JSON-RPC lines, a recorder around the front's answers.

- The SDK's import overlaps a cold load's parse (the front can answer no listing before the load
  ends, so the import costs no answer), and waits for a client paging through a warm start.
- The first full-text build waits until a client paging through front answers pauses: it takes
  a core and a process of its own, of no use to a client that has not searched yet."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

from test_stdio_front import INIT, INITIALIZED, LISTING, PING, ROOT, exchange

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
at = []  # per answer the front sent: (the SDK's import begun, the full-text index started)
send = stdiofront.StdioFront._send_result
def recorded(self, id_text, result):
    at.append(("mcp" in sys.modules, bool(started)))
    send(self, id_text, result)
stdiofront.StdioFront._send_result = recorded
front = stdiofront.start(sys.argv[1:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[1:])
print(f"after={front.after_sdk} at={at}", file=sys.stderr, flush=True)
sys.exit(code)
"""


def recorded_at(err: str) -> list[tuple[bool, bool]]:
    line = next(line for line in err.splitlines() if line.startswith("after="))
    return eval(line.split(" at=", 1)[1])  # noqa: S307  (the recorder's own repr of a list of bool pairs)


def test_the_sdk_imports_while_a_cold_load_parses_and_not_while_a_warm_client_pages(tmp_path, env):
    vault = tmp_path / "vault"
    generate(vault, COLD_LOAD_NOTES + 100)
    script = [sys.executable, "-c", RECORD, "serve", str(vault), "--stdio"]
    _, cold = exchange(script, env, INIT, INITIALIZED, LISTING)  # no entry cache: every note is parsed
    _, warm = exchange(script, env, INIT, INITIALIZED, LISTING)
    # the initialize (before the load) and the listing (once it ended), each: (SDK import begun, search started)
    assert [sdk for sdk, _ in recorded_at(cold)] == [False, True], cold[-2000:]
    assert [sdk for sdk, _ in recorded_at(warm)] == [False, False], warm[-2000:]


def test_the_first_full_text_build_waits_until_a_paging_client_pauses(demo_vault, env):
    """The SDK runs (a ping needed it) and the client keeps three listing calls in flight, so the
    front is never idle: no front answer is sent after the full-text index started; once the
    client stops calling, it starts."""
    script = [sys.executable, "-c", RECORD, "serve", str(demo_vault), "--stdio"]
    proc = subprocess.Popen(
        script, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    err: list[bytes] = []
    search_started = threading.Event()

    def read_stderr() -> None:
        for line in proc.stderr:
            err.append(line)
            if b"search started" in line:
                search_started.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    calls = 30
    try:

        def send(message: dict) -> None:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()

        def answer() -> dict:
            return json.loads(proc.stdout.readline())

        send(INIT)
        assert answer()["id"] == 1
        send(INITIALIZED)
        send(PING)
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
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    text = b"".join(err).decode()
    assert f"after={calls} " in text, text[-2000:]  # every listing was the front's
    assert [search for _, search in recorded_at(text)] == [False] * (calls + 1), text[-2000:]
