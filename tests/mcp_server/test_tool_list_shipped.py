"""The tools/list shipped with the package (mcp_server/toollist.py) is the SDK's answer byte for byte, and
a first `serve --stdio` start (no cache) answers a client's tools/list from it before the SDK is imported."""

from __future__ import annotations

import json
import sys

import pytest
from test_stdio_front import INIT, INITIALIZED, PING, TOOLS, by_id, exchange, initialize, sdk_answers

from vaultwatch.mcp_server import toollist


def test_the_shipped_list_is_the_sdks_answer_for_every_variant():
    """Every variant (read-only, compatibility sets, search by meaning on and off) and protocol version,
    generated anew from the installed SDK, equals toollist.json."""
    with open(toollist.PATH, encoding="utf-8") as fh:
        shipped = json.load(fh)
    now = toollist.generate()
    assert shipped["versions"] == now["versions"], f"toollist.json is for other versions: run `{toollist.REGENERATE}`"
    assert set(shipped["lists"]) == set(now["lists"]), f"toollist.json is out of date: run `{toollist.REGENERATE}`"
    for key, by_version in now["lists"].items():
        for version in by_version:
            got = toollist.ToolList(shipped["tools"], shipped["lists"].get(key, {}), "").result(version)
            want = toollist.ToolList(now["tools"], by_version, "").result(version)
            assert got == want, f"toollist.json is out of date ({key}, {version}): run `{toollist.REGENERATE}`"


@pytest.mark.parametrize(
    "built",
    [{"tool_prefix": "vault_"}, {"tool_prefix": "vw-", "read_only": True, "max_answer_bytes": 20000}],
)
def test_the_prefix_is_applied_as_the_sdks_renaming(demo_vault_ro, built):
    """The shipped list with `--tool-prefix` applied is what the SDK answers for a server built with it
    (on another vault than the one it was generated on; the answer budget does not change it)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    from vaultwatch.core.search.semantic import offered
    from vaultwatch.core.vault import Vault
    from vaultwatch.mcp_server.server import build_server

    tool_list = toollist.shipped(
        read_only=built.get("read_only", False), compat=(), semantic=offered(), prefix=built["tool_prefix"]
    )
    assert tool_list is not None
    vault = Vault(demo_vault_ro)
    try:
        server, _ = build_server(vault, **built)
        for version in (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS):
            assert tool_list.result(version) == toollist.sdk_answer(server, version), version
    finally:
        vault.stop()


# the front started as tui/entry.py starts it; it records, for each answer it sends itself, whether the SDK
# (any module of the `mcp` package, or the server module that imports it) was loaded in this process then
LOADED = """
import sys
from vaultwatch.mcp_server import stdiofront
loaded = []
send = stdiofront.StdioFront._send_result
def recorded(self, id_text, result):
    sdk = "mcp" in sys.modules or "vaultwatch.mcp_server.server" in sys.modules
    loaded.append((id_text, sdk))
    send(self, id_text, result)
stdiofront.StdioFront._send_result = recorded
front = stdiofront.start(sys.argv[1:])
from vaultwatch.tui.commands.cli import main
code = main(sys.argv[1:])
print(f"loaded={loaded}", file=sys.stderr, flush=True)
sys.exit(code)
"""

FIRST_STARTS = [
    ((), {}, "2025-06-18"),
    (("--read-only", "--tool-prefix", "vw_"), {"read_only": True, "tool_prefix": "vw_"}, "2024-11-05"),
    (("--compat", "obsidian-mcp,vault-cortex"), {"compat": ["obsidian-mcp", "vault-cortex"]}, "2025-11-25"),
]


@pytest.mark.parametrize(("options", "built", "version"), FIRST_STARTS, ids=[v for *_, v in FIRST_STARTS])
def test_a_first_start_answers_tools_list_before_the_sdk_with_its_bytes(demo_vault_ro, env, options, built, version):
    """No cache yet (a fresh cache folder): the client's tools/list is answered by the front with the SDK
    not loaded, byte for byte as the SDK answers it; once the SDK runs (the ping needs it) it answers the
    same request too, and finds nothing to correct."""
    reference = sdk_answers(demo_vault_ro, built, initialize(version), INITIALIZED, TOOLS)
    lines, err = exchange(
        [sys.executable, "-c", LOADED, "serve", str(demo_vault_ro), "--stdio", *options],
        env,
        initialize(version),
        INITIALIZED,
        TOOLS,
        PING,
    )
    answers = by_id(lines)
    assert set(answers) == {1, "tools-é", "ping"}
    assert answers["tools-é"] == reference["tools-é"]
    line = next(line for line in err.splitlines() if line.startswith("loaded="))
    assert line == "loaded=[('1', False), ('\"tools-é\"', False)]", err[-2000:]
    assert "differs" not in err, err[-2000:]


def test_without_a_shipped_list_the_sdk_answers_a_first_tools_list(demo_vault_ro, env):
    """toollist.json made for another SDK: the front does not use it, and the SDK answers (its answer then
    fills the cache, as before)."""
    script = LOADED.replace(
        "front = stdiofront.start",
        "from vaultwatch.mcp_server import toollist\n"
        "toollist.installed = lambda: {'mcp': 'another'}\n"
        "front = stdiofront.start",
    )
    reference = sdk_answers(demo_vault_ro, {}, INIT, INITIALIZED, TOOLS)
    lines, err = exchange(
        [sys.executable, "-c", script, "serve", str(demo_vault_ro), "--stdio"], env, INIT, INITIALIZED, TOOLS
    )
    assert by_id(lines)["tools-é"] == reference["tools-é"]
    line = next(line for line in err.splitlines() if line.startswith("loaded="))
    assert line == "loaded=[('1', False)]", err[-2000:]  # tools/list was the SDK's
