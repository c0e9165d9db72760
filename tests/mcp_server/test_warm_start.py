"""What a warm `serve --stdio` start loads before its first listing answer: a real process, the
front as tui/entry.py starts it, raw JSON-RPC lines. Every module loaded before that answer is
time the client waits; the ones named here are needed only to parse a note, to write, to match
ignore rules or to read a distribution's metadata, none of which a warm first listing does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from test_stdio_front import INIT, INITIALIZED, LISTING, ROOT, by_id, exchange

# as test_stdio_front's LEAN, recording the modules below that were loaded when the first tools/call
# answer (the listing) was sent
NOT_BEFORE_THE_FIRST_ANSWER = (
    "yaml",
    "frontmatter",
    "pathspec",
    "importlib.metadata",
    "vaultwatch.core.markdown.parse",
    "vaultwatch.core.disk.reader",
    "vaultwatch.core.edit.writes",
    "vaultwatch.core.review.revert",
)
RECORD = f"""
import sys
from vaultwatch.mcp_server import stdiofront
loaded = []
sdk_at = []  # per answer the front sent: whether the SDK's server module was imported by then
send = stdiofront.StdioFront._send_result
def recorded(self, id_text, result):
    if id_text == "3" and not loaded:
        loaded.append(sorted(m for m in {NOT_BEFORE_THE_FIRST_ANSWER!r} if m in sys.modules))
    sdk_at.append("vaultwatch.mcp_server.server" in sys.modules)
    send(self, id_text, result)
stdiofront.StdioFront._send_result = recorded
front = stdiofront.start(sys.argv[1:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[1:])
print(f"early={{front.answered_early}} loaded={{loaded}} sdk_at={{sdk_at}}", file=sys.stderr, flush=True)
sys.exit(code)
"""


def test_a_warm_first_listing_loads_no_parser_writer_ignore_matcher_or_metadata_reader(demo_vault, env):
    (demo_vault / ".vaultwatchignore").unlink()  # a vault without ignore rules needs no matcher for them
    an_hour_ago = time.time() - 3600  # notes edited seconds before the cache was written are parsed again
    for path in demo_vault.rglob("*"):
        if not path.is_symlink():
            os.utime(path, (an_hour_ago, an_hour_ago))
    script = [sys.executable, "-c", RECORD, "serve", str(demo_vault), "--stdio"]
    exchange(script, env, INIT, INITIALIZED, LISTING)  # a first start: it parses every note and writes the cache
    lines, err = exchange(script, env, INIT, INITIALIZED, LISTING)
    assert "early=2 loaded=[[]]" in err, err[-2000:]  # answered by the front, none of those modules loaded
    answer = json.loads(by_id(lines)[3])["result"]["structuredContent"]
    assert answer["returned"] == 2 and answer["total"] > 2


def test_the_version_of_a_distribution_is_importlib_metadatas(tmp_path, monkeypatch):
    from importlib.metadata import PackageNotFoundError, version

    from vaultwatch.core.about import dist_version

    def metadata(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    for name in ("vaultwatch", "mcp", "mcp-types", "MCP_Types", "pydantic", "PyYAML", "no-such-distribution"):
        assert dist_version(name) == metadata(name), name
    # an .egg-info earlier on the path (a source checkout's) is importlib.metadata's to read: the same answer
    egg = tmp_path / "mcp.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: mcp\nVersion: 0.0.1\n\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert metadata("mcp") == "0.0.1"
    assert dist_version("mcp") == "0.0.1"


def test_a_client_paging_right_after_spawn_is_not_held_up_by_the_sdks_import(demo_vault, env):
    """A client that pages through a listing as soon as it is spawned, one page after the other: the
    front answers every page, and the SDK (whose import holds the interpreter for most of a second)
    is not imported while the client keeps calling."""
    script = [sys.executable, "-c", RECORD, "serve", str(demo_vault), "--stdio"]
    exchange(script, env, INIT, INITIALIZED, LISTING)  # a first start writes the entry cache
    proc = subprocess.Popen(
        script, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:

        def ask(message: dict) -> dict:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            return json.loads(proc.stdout.readline())

        ask(INIT)
        proc.stdin.write(json.dumps(INITIALIZED).encode() + b"\n")
        cursor, pages = None, 0
        while True:
            arguments = {"limit": 3, **({"cursor": cursor} if cursor else {})}
            call = {**LISTING, "id": 10 + pages, "params": {"name": "list_documents", "arguments": arguments}}
            page = ask(call)["result"]["structuredContent"]
            pages += 1
            cursor = page.get("next_cursor")
            if not cursor:
                break
        proc.stdin.close()
        err = proc.stderr.read().decode()
        assert proc.wait(60) == 0, err[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert pages > 10
    assert f"early={pages + 1} " in err, err[-2000:]  # the initialize and every page: the front's
    assert f"sdk_at={[False] * (pages + 1)}" in err, err[-2000:]
