"""The answer to `initialize` (and to a 2026-07-28 client's `server/discover`), on the standard
library: what the server says about itself.

The server's name, title, version, instructions and handshake-era capabilities are vaultwatch's
own, so they are decided here, once: `server.build_server` gives the SDK's server these values,
and the stdio front (stdiofront.py) answers a client's `initialize` from them before the SDK is
imported (~0.9 s), also on the very first start (no cache). `initialize_result` is the result as
the SDK writes it on the wire, byte for byte (tests/mcp_server/test_stdio_front.py compares the
two for every protocol version and the options that change it). The protocol versions the SDK
negotiates are read from its own `mcp_types/version.py`, without importing the package.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
from functools import cache

from .descriptions import INSTRUCTIONS, without_semantic

NAME = "vaultwatch"
TITLE = "vaultwatch"

# What the server build_server makes advertises in the handshake era (the SDK derives it from the
# handlers registered: prompts, resources with subscriptions, tools, logging/setLevel, completion/complete;
# and resources.listChanged from sdk.announce_resource_list_changes). Key order as the SDK writes it.
CAPABILITIES = {
    "completions": {},
    "logging": {},
    "prompts": {"listChanged": False},
    "resources": {"listChanged": True, "subscribe": True},
    "tools": {"listChanged": False},
}


@cache
def server_version() -> str:
    """vaultwatch's installed version, as `vaultwatch --version` shows it."""
    from vaultwatch.core.about import version

    return version()


def instructions(tool_prefix: str = "") -> str:
    """The instructions the server sends at initialization (`--tool-prefix` adds a sentence; without
    the semantic extra they name neither search by meaning nor the `similar` tool, which is not listed)."""
    from vaultwatch.core.search.semantic import offered

    text = INSTRUCTIONS if offered() else without_semantic(INSTRUCTIONS)
    if not tool_prefix:
        return text
    return text + (
        f"\n\nEvery tool name here starts with {tool_prefix!r}: {tool_prefix}read is the read tool named above."
    )


# where a 2026-07-28 result names the server (the SDK's SERVER_INFO_META_KEY)
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


@cache
def _sdk_versions() -> dict | None:
    """The names of the installed SDK's mcp_types/version.py, read as a file (the package is not
    imported); None when it cannot be read."""
    with contextlib.suppress(ImportError, ValueError, OSError, SyntaxError):
        spec = importlib.util.find_spec("mcp_types")  # finds the package without importing it
        if spec is None or not spec.submodule_search_locations:
            return None
        for folder in spec.submodule_search_locations:
            path = os.path.join(folder, "version.py")
            if os.path.isfile(path):
                names: dict = {}
                with open(path, encoding="utf-8") as fh:
                    exec(compile(fh.read(), path, "exec"), names)  # noqa: S102  (the SDK's own constants file)
                return names
    return None


@cache
def handshake_versions() -> tuple[tuple[str, ...], str] | None:
    """(the protocol versions the installed SDK negotiates in `initialize`, the one it offers instead
    of any other), from mcp_types/version.py; None when that cannot be read."""
    names = _sdk_versions()
    with contextlib.suppress(KeyError, TypeError):
        if names is not None:
            versions = tuple(names["HANDSHAKE_PROTOCOL_VERSIONS"])
            latest = names["LATEST_HANDSHAKE_VERSION"]
            if all(isinstance(v, str) for v in versions) and latest in versions:
                return versions, latest
    return None


@cache
def modern_versions() -> tuple[str, ...]:
    """The 2026-07-28-era protocol versions the installed SDK serves (no handshake: each request names
    its version in `_meta`), from mcp_types/version.py; empty when that cannot be read."""
    names = _sdk_versions()
    with contextlib.suppress(KeyError, TypeError):
        if names is not None:
            versions = tuple(names["MODERN_PROTOCOL_VERSIONS"])
            if all(isinstance(v, str) for v in versions):
                return versions
    return ()


def negotiate(requested: str) -> str | None:
    """The protocol version the server answers a client's `initialize` with (None: not known here)."""
    known = handshake_versions()
    if known is None:
        return None
    versions, latest = known
    return requested if requested in versions else latest


def server_info() -> dict[str, str]:
    """The server's name, title and version, as the handshake and every 2026-07-28 result carry them."""
    return {"name": NAME, "title": TITLE, "version": server_version()}


def initialize_result(requested: str, *, tool_prefix: str = "") -> str | None:
    """The `initialize` result for a client asking for protocol `requested`, as JSON text exactly as
    the SDK writes it; None when the negotiated version cannot be known without the SDK."""
    version = negotiate(requested)
    if version is None:
        return None
    result = {
        "capabilities": CAPABILITIES,
        "instructions": instructions(tool_prefix),
        "protocolVersion": version,
        "serverInfo": server_info(),
    }
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def discover_result(requested: str, *, tool_prefix: str = "") -> str | None:
    """The `server/discover` result for a 2026-07-28-era request at protocol `requested`, as JSON text
    exactly as the SDK writes it; None when `requested` is not a version the installed SDK serves
    (the SDK says what is wrong). The capabilities are the handshake's: server.VaultMCPServer.fixed_lists
    makes the SDK's say so too."""
    versions = modern_versions()
    if requested not in versions:
        return None
    result = {
        "cacheScope": "private",
        "capabilities": CAPABILITIES,
        "instructions": instructions(tool_prefix),
        "resultType": "complete",
        "supportedVersions": list(versions),
        "ttlMs": 0,
        "_meta": {SERVER_INFO_META: server_info()},
    }
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
