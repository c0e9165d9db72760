"""The `tools/list` answer shipped with the package, so a first start answers it without the SDK.

A client's first `tools/list` (the Python client asks it before it trusts a tool's structured
result; most hosts ask it right after the handshake) is the SDK's answer, and importing the SDK
takes most of a second of CPU and much of the process's memory. The stdio front (stdiofront.py) answers it from a cache
of the SDK's own earlier answer, but a first start has no cache. The list is fixed once the server
is built, by what the command line and the installed packages decide: the read-only mode, the
compatibility sets, whether search by meaning is offered (the semantic extra, VAULTWATCH_SEMANTIC),
the protocol version and the tool prefix. So `toollist.json` holds the SDK's own answer, as the text
it writes on the wire, for every such variant (the prefix is applied here, as `--tool-prefix` renames
the SDK's tools); the front sends it byte for byte, then lets the SDK answer the same request once it
runs and compares (a difference is logged and the SDK's answer is cached for the next start).

The file is generated from the real SDK (`python -m vaultwatch.mcp_server.toollist`), and used only
where the installed SDK and pydantic are the versions it was generated with (the SDK's wire form and
pydantic's schemas are theirs); tests/mcp_server/test_tool_list_shipped.py fails when it differs from
what the SDK answers now, and says how to regenerate it. Reading it needs the standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterable
from functools import cache
from typing import Any

from . import handshake

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "toollist.json")
REGENERATE = "python -m vaultwatch.mcp_server.toollist"
# the distributions whose versions decide the SDK's answer: its wire form, and pydantic's JSON schemas
DISTRIBUTIONS = ("mcp", "mcp-types", "pydantic", "pydantic-core")
COMPAT_SETS = ("vault-cortex", "obsidian-mcp")  # as config.COMPAT_SETS (not imported: the front starts lean)
# a 2026-07-28-era tools/list result around the tools (the server's name, with its version, is added as it is
# now: handshake.server_info)
MODERN_HEAD = '{"cacheScope":"private","resultType":"complete","tools":['
MODERN_TAIL = '],"ttlMs":0,"_meta":'


def variant(*, read_only: bool, compat: Iterable[str], semantic: bool) -> str:
    """The key of one server variant's list (everything but the protocol version and the prefix)."""
    return f"read_only={int(read_only)} semantic={int(semantic)} compat={','.join(sorted(compat))}"


def installed() -> dict[str, str | None]:
    """The installed versions of DISTRIBUTIONS (read from their metadata, without importing them)."""
    from vaultwatch.core.about import dist_version

    return {name: dist_version(name) for name in DISTRIBUTIONS}


@cache
def _shipped() -> dict[str, Any] | None:
    """toollist.json when it was generated for the installed SDK and pydantic, else None."""
    with contextlib.suppress(OSError, ValueError):
        with open(PATH, encoding="utf-8") as fh:
            data = json.load(fh)
        if isinstance(data, dict) and data.get("versions") == installed():
            return data
    return None


class ToolList:
    """One variant's shipped lists: `result(protocol_version)` is the result text of its tools/list."""

    def __init__(self, tools: list[list[str]], lists: dict[str, list[int]], prefix: str) -> None:
        self._entries, self._lists, self._prefix = tools, lists, prefix

    def result(self, protocol_version: str) -> str | None:
        """The tools/list result as the SDK writes it for `protocol_version`; None when not shipped."""
        picked = self._lists.get(protocol_version)
        if picked is None:
            return None
        entries = []
        for i in picked:
            head, name, tail = self._entries[i]
            entries.append(head + json.dumps(self._prefix + name, ensure_ascii=False) + tail)
        if protocol_version in handshake.modern_versions():
            return MODERN_HEAD + ",".join(entries) + _modern_tail()
        return '{"tools":[' + ",".join(entries) + "]}"


def _modern_tail() -> str:
    info = {handshake.SERVER_INFO_META: handshake.server_info()}
    return MODERN_TAIL + json.dumps(info, ensure_ascii=False, separators=(",", ":")) + "}"


def shipped(*, read_only: bool, compat: Iterable[str], semantic: bool, prefix: str = "") -> ToolList | None:
    """The shipped tools/list of this variant (see module doc), or None when there is none for it (no
    file, another SDK or pydantic installed): then only the SDK (or its cached answer) can answer."""
    data = _shipped()
    if data is None:
        return None
    lists = data["lists"].get(variant(read_only=read_only, compat=compat, semantic=semantic))
    return None if lists is None else ToolList(data["tools"], lists, prefix)


# -- generating it from the SDK (a dev command: imports the SDK) ---------------------------------
def variants(semantic: bool) -> list[dict[str, Any]]:
    """build_server's options of every variant with this semantic setting (module doc)."""
    subsets: list[list[str]] = [[]] + [[name] for name in COMPAT_SETS] + [sorted(COMPAT_SETS)]
    return [{"read_only": read_only, "compat": compat} for read_only in (False, True) for compat in subsets]


def sdk_answer(server: Any, protocol_version: str) -> str:
    """The tools/list result text the SDK writes after an initialize at `protocol_version` (a 2026-07-28-era
    version: for a request naming it in `_meta`), on its own stdio transport (sdk.run_stdio, as `serve --stdio`
    runs it) over in-memory lines: exactly what `serve --stdio` writes."""
    import anyio

    from . import sdk

    modern = {
        "io.modelcontextprotocol/protocolVersion": protocol_version,
        "io.modelcontextprotocol/clientInfo": {"name": "toollist", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": protocol_version,
                "capabilities": {},
                "clientInfo": {"name": "toollist", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
    ]
    if protocol_version in handshake.modern_versions():
        messages = [{"jsonrpc": "2.0", "id": "list", "method": "tools/list", "params": {"_meta": modern}}]
    want = {json.dumps(m["id"]) for m in messages if "id" in m}
    results: dict[str, str] = {}

    class Input:
        def __init__(self) -> None:
            self.answered = anyio.Event()

        async def __aiter__(self) -> Any:
            for message in messages:
                yield json.dumps(message, ensure_ascii=False) + "\n"
            await self.answered.wait()

    class Output:
        async def write(self, text: str) -> None:
            reply = json.loads(text)
            id_text = json.dumps(reply.get("id"))
            prefix = '{"jsonrpc":"2.0","id":' + id_text + ',"result":'
            body = text.rstrip("\n")
            if body.startswith(prefix) and body.endswith("}"):
                results[reply["id"]] = body[len(prefix) : -1]
            else:
                raise RuntimeError(f"the SDK answered {body[:300]!r}")
            if want <= {json.dumps(k) for k in results}:
                stdin.answered.set()

        async def flush(self) -> None:
            return None

    stdin = Input()
    anyio.run(sdk.run_stdio, server, stdin, Output())
    return results["list"]


def _split(entry: str, name: str) -> list[str]:
    """A tool's entry text as [before its name's value, the name, after it]."""
    marker = '"name":' + json.dumps(name, ensure_ascii=False)
    if entry.count(marker) != 1:
        raise RuntimeError(f"cannot find the name of tool {name!r} once in its entry")
    head, tail = entry.split(marker)
    return [head + '"name":', name, tail]


def generate_here() -> dict[str, Any]:
    """This process's half of the file: every variant with its own semantic setting, from the SDK."""
    import tempfile

    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    from vaultwatch.core.search.semantic import offered
    from vaultwatch.core.vault import Vault

    from .server import build_server

    semantic = offered()
    tools: list[list[str]] = []
    lists: dict[str, dict[str, list[int]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        vault = Vault(folder)
        vault.load()
        try:
            for options in variants(semantic):
                server, _ = build_server(vault, **options)
                key = variant(semantic=semantic, **options)
                lists[key] = {}
                for version in (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS):
                    text = sdk_answer(server, version)
                    entries = json.loads(text)["tools"]
                    picked = []
                    if version in MODERN_PROTOCOL_VERSIONS:
                        if not (text.startswith(MODERN_HEAD) and text.endswith(_modern_tail())):
                            raise RuntimeError(
                                f"the SDK's tools/list is not the shape toollist.py writes: {text[:200]!r}"
                            )
                        rest = text.removeprefix(MODERN_HEAD).removesuffix(_modern_tail())
                    else:
                        rest = text.removeprefix('{"tools":[').removesuffix("]}")
                    for tool in entries:  # each entry's own text, as the SDK wrote it
                        one = json.dumps(tool, ensure_ascii=False, separators=(",", ":"))
                        if not rest.startswith(one):
                            raise RuntimeError(f"the SDK's tools/list is not plain JSON at {rest[:200]!r}")
                        rest = rest[len(one) :].removeprefix(",")
                        split = _split(one, tool["name"])
                        if split not in tools:
                            tools.append(split)
                        picked.append(tools.index(split))
                    if rest:
                        raise RuntimeError(f"the SDK's tools/list has more than tools: {rest[:200]!r}")
                    lists[key][version] = picked
        finally:
            vault.stop()
    return {"tools": tools, "lists": lists}


def generate() -> dict[str, Any]:
    """The whole file: both semantic settings (the other one in a child process: tools.py reads the
    setting once, at import) merged, with the versions of the SDK and pydantic it was made with."""
    import subprocess

    from vaultwatch.core.search.semantic import available

    if not available():
        raise RuntimeError("the semantic extra is not installed: install it to generate its variants too")
    halves = []
    for setting in ("1", "0"):
        env = {**os.environ, "VAULTWATCH_SEMANTIC": setting}
        code = "import json, sys; from vaultwatch.mcp_server import toollist; json.dump(toollist.generate_here(), sys.stdout)"
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True, text=True)
        halves.append(json.loads(out.stdout))
    tools: list[list[str]] = []
    lists: dict[str, dict[str, list[int]]] = {}
    for half in halves:
        for key, by_version in half["lists"].items():
            lists[key] = {}
            for version, picked in by_version.items():
                lists[key][version] = []
                for i in picked:
                    if half["tools"][i] not in tools:
                        tools.append(half["tools"][i])
                    lists[key][version].append(tools.index(half["tools"][i]))
    return {"generated_by": REGENERATE, "versions": installed(), "tools": tools, "lists": dict(sorted(lists.items()))}


def main() -> int:
    data = generate()
    with open(PATH, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    print(f"wrote {PATH}: {len(data['lists'])} variants, {len(data['tools'])} distinct tool entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
