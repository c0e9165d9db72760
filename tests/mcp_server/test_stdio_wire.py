"""`serve --stdio` writes the SDK's lines itself (mcp_server/stdiofront.py `_Out`): a listing's cached rows
and text are spliced into the line as it leaves (splice.LineParking), and a line goes out at once while the
pipe has room, the rest from a thread. Real processes: raw JSON-RPC lines, and the real `mcp` client."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT
from test_early_calls import call, result_bytes
from test_stdio_front import INIT, INITIALIZED, PING, by_id, exchange

from vaultwatch.mcp_server import earlycalls, sdk

# the front started as tui/entry.py starts it; at the end it reports what it spliced and how it wrote
COUNTING = """
import os, sys
from vaultwatch.mcp_server import stdiofront
front = stdiofront.start(sys.argv[1:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[1:])
parking = front.parking
said = f"spliced={parking.filled if parking else 0} inline={front.inline_writes} threaded={front.thread_writes}"
print(said, file=sys.stderr, flush=True)
if os.environ.get("COUNTS_FILE"):
    with open(os.environ["COUNTS_FILE"], "w") as fh:
        fh.write(said)
sys.exit(code)
"""
# a string of the placeholders' form that no call parked: note text, kept as it is
LOOKALIKE = "vaultwatch-splice:" + "0123456789abcdef" * 2
TRICKY = {
    "Tricky/quotes.md": '---\ntitle: "Quote \\" back\\\\slash, tab\\t, newline\\n, café ✓ 🦊"\nstatus: draft\n---\n# Q\n',
    "Tricky/lookalike.md": f'---\ntitle: "{LOOKALIKE}"\ntags: ["{LOOKALIKE}"]\n---\nbody\n',
    "Tricky/Überblick ☃.md": "---\ntitle: Unicode path\n---\n# Ü\n",
    "Tricky/broken.md": "---\ntitle: [unclosed\n---\n# broken yaml\n",
}


def counts(err: str) -> dict[str, int]:
    line = next(ln for ln in err.splitlines() if ln.startswith("spliced="))
    return {k: int(v) for k, v in (part.split("=") for part in line.split())}


def counting_serve(vault: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", COUNTING, "serve", str(vault), "--stdio", *extra]


def with_tricky_notes(vault: Path) -> Path:
    for rel, text in TRICKY.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    return vault


CALLS = [
    {},  # cut to the small budget: next_cursor
    {"include_frontmatter": True},
    {"folder": "Tricky", "include_frontmatter": True},
    {"limit": 3},
    {"pattern": "*.md", "include_attachments": True},
    {"folder": "../outside"},  # a tool error: nothing to splice
]


def test_spliced_listings_are_the_bytes_of_the_unspliced_answer(demo_vault, env):
    """The front's early answers are spliced by the front itself (earlycalls.py, its own parked JSON); the same
    calls once the SDK serves (after a ping the SDK owes) are spliced through the front's LineParking, and equal
    them."""
    vault = with_tricky_notes(demo_vault)
    early = [call(10 + i, args) for i, args in enumerate(CALLS)]
    later = [call(20 + i, args) for i, args in enumerate(CALLS)]
    cmd = counting_serve(vault, "--max-answer-bytes", "4096")
    lines, err = exchange(cmd, env, INIT, INITIALIZED, *early, PING, *later)
    answers = by_id(lines)
    for i, args in enumerate(CALLS):
        assert result_bytes(answers[20 + i]) == result_bytes(answers[10 + i]), args
    assert b"vaultwatch-splice" not in b"".join(answers[20 + i] for i in range(len(CALLS))).replace(
        LOOKALIKE.encode(), b""
    )
    tricky = json.loads(answers[22])["result"]["structuredContent"]["result"]
    assert {r["path"] for r in tricky} == set(TRICKY)
    assert LOOKALIKE in json.loads(answers[22])["result"]["content"][0]["text"]
    assert json.loads(answers[20])["result"]["structuredContent"]["next_cursor"]  # a page cut by the budget
    assert json.loads(answers[25])["result"]["isError"]
    # every successful listing the SDK served had its rows, its text and its resource_link blocks spliced
    assert counts(err)["spliced"] == 3 * (len(CALLS) - 1)


def wire(result) -> str:
    """A result as the client received it: every content block and the structured content."""
    blocks = [b.model_dump(mode="json", exclude_none=True) for b in result.content]
    return json.dumps([blocks, result.structured_content, result.is_error], ensure_ascii=False)


async def whole_listing(vault: Path, env: dict, counts_file: Path, fast_path: bool, mode: str) -> list[str]:
    """Every page of the listing through the cursor, as the real client received them."""
    # the SDK serves every call (the front would answer plain listings itself: earlycalls.py)
    server_env = {**env, "COUNTS_FILE": str(counts_file), earlycalls.ENV_SWITCH: "0"}
    if not fast_path:
        server_env[sdk.ENV_SWITCH] = "0"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", COUNTING, "serve", str(vault), "--stdio", "--max-answer-bytes", "4096"],
        env=server_env,
        cwd=str(ROOT),
    )
    pages: list[str] = []
    async with Client(params, mode=mode) as client:
        assert not (await client.call_tool("read", {"path": "Tricky/quotes.md"})).is_error
        for frontmatter in (False, True):
            cursor = None
            while True:
                args: dict = {"include_frontmatter": frontmatter}
                if cursor:
                    args["cursor"] = cursor
                result = await client.call_tool("list_documents", args)
                assert not result.is_error, result.content[0].text
                pages.append(wire(result))
                cursor = result.structured_content.get("next_cursor")
                if not cursor:
                    break
    return pages


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_real_client_gets_the_sdks_own_answers_from_the_spliced_wire(demo_vault, env, tmp_path, mode):
    """Through the real `mcp` client over stdio (handshake era and 2026-07-28 era), every page of the whole
    listing (cut to a small budget, with and without frontmatter) is what the SDK's ordinary path gives with
    the fast path off."""
    vault = with_tricky_notes(demo_vault)
    spliced_counts, ordinary_counts = tmp_path / "spliced.txt", tmp_path / "ordinary.txt"
    spliced = await whole_listing(vault, env, spliced_counts, fast_path=True, mode=mode)
    ordinary = await whole_listing(vault, env, ordinary_counts, fast_path=False, mode=mode)
    assert len(spliced) > 4
    assert spliced == ordinary
    assert counts(spliced_counts.read_text())["spliced"] == 3 * len(spliced)  # text, rows, links
    assert counts(ordinary_counts.read_text())["spliced"] == 0


def test_answers_bigger_than_the_pipe_go_out_whole_and_in_order(tmp_path, env):
    """A client that does not read while the server answers: the pipe fills, the rest of a line waits for room
    on a thread, and every line arrives whole, none torn by another."""
    vault = tmp_path / "big"
    vault.mkdir()
    for i in range(700):
        (vault / f"note {i:04d}.md").write_text(
            f"---\ntitle: A long title for note {i:04d} {'x' * 120}\nstatus: draft\ntags: [a, b, c]\n---\n# {i}\n",
            encoding="utf-8",
        )
    big = [call(30 + i, {"limit": 700, "include_frontmatter": True}) for i in range(4)]
    proc = subprocess.Popen(
        counting_serve(vault),
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(
            b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, INITIALIZED, PING, *big, {**PING, "id": "last"}))
        )
        proc.stdin.flush()
        # the server answers into a pipe nobody reads: wait until it has filled it (the pipe holds 64 KiB)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _pipe_full(proc):
            time.sleep(0.05)
        assert _pipe_full(proc), "the server never filled the pipe"
        lines, buf = [], b""
        while len(lines) < 7:
            assert select.select([proc.stdout], [], [], 60)[0], "no answer within 60 s"
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            assert chunk, "stdout closed early"
            *done, buf = (buf + chunk).split(b"\n")
            lines += done
        proc.stdin.close()
        assert proc.wait(60) == 0
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    answers = by_id(lines)  # every line is one whole JSON message (the SDK answers requests as they finish)
    assert buf == b"" and set(answers) == {1, "ping", 30, 31, 32, 33, "last"}
    big_lines = [answers[30 + i] for i in range(4)]
    pages = [json.loads(line)["result"] for line in big_lines]
    assert all(len(p["structuredContent"]["result"]) == 700 and not p["isError"] for p in pages)
    assert len({result_bytes(line) for line in big_lines}) == 1
    assert min(len(line) for line in big_lines) > 4 * 65536  # each line is bigger than the pipe
    said = counts(err)
    assert said["threaded"] >= 1 and said["inline"] >= 1 and said["spliced"] == 12


def _pipe_full(proc: subprocess.Popen) -> bool:
    """Whether the server's stdout pipe is full: it holds 64 KiB (a Linux pipe's default size), less what the
    last page of the pipe's buffer could not take of a write."""
    import fcntl
    import termios

    buf = bytearray(4)
    fcntl.ioctl(proc.stdout.fileno(), termios.FIONREAD, buf)
    return int.from_bytes(buf, sys.byteorder) > 65536 - 4096


def test_a_line_over_the_request_limit_is_answered_without_being_read_whole(tmp_path, env):
    """A line kept in one buffer was split anew at every chunk read: a 50 MB write took the server
    half a minute and half a gigabyte before its write cap refused it. A line over the socket's
    request limit is now answered as the socket answers it, with the id from its head or its tail."""
    from vaultwatch.mcp_server import requestguard, stdiofront

    assert stdiofront.MAX_LINE_BYTES == requestguard.MAX_REQUEST_BYTES  # one limit on both transports
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    big = "x" * (stdiofront.MAX_LINE_BYTES + 5 * 2**20)
    head_id = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "write", "arguments": {}}}
    head_id["params"]["arguments"] = {"path": "big.md", "content": big}
    tail_id = {"method": "tools/call", "params": {"name": "write", "arguments": {"path": "b.md", "content": big}}}
    tail_id.update(jsonrpc="2.0", id="eight")
    lines, _err = exchange(
        [sys.executable, "-m", "vaultwatch.tui.entry", "serve", str(vault), "--stdio"],
        env,
        INIT,
        INITIALIZED,
        head_id,
        tail_id,
        PING,
    )
    answers = {key: json.loads(raw) for key, raw in by_id(lines).items()}
    for rid in (7, "eight"):
        assert answers[rid]["error"]["code"] == -32600 and "request too large" in answers[rid]["error"]["message"]
    assert "result" in answers[PING["id"]]  # and it goes on reading
    assert sorted(p.name for p in vault.iterdir()) == ["a.md"]
