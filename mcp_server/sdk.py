"""The MCP SDK's private internals, fenced: vaultwatch touches them here and nowhere else.

mcp 2.x gives no public handle on a few things the server needs, so this module reaches in:

- the tool registry (`MCPServer._tool_manager`): a tool's input schema, to refuse unknown
  argument names, and its published output schema, to compact it (`tool`, `tools`); the names,
  for `--tool-prefix` (`rename_tools`); the prompt registry, to refuse an unknown prompt as
  -32602 (`prompt_names`); the instructions, which the prefix extends (`set_instructions`);
- a session's connection (`ServerSession._connection`): the transport's session id, the exit
  stack that tells when an agent's session ends, whether initialize was accepted (`connection`);
- for the fast path only: the server's subscription bus (`MCPServer._subscriptions`), to build
  the Context a tool is called with, and the low-level server's `server_info_stamp`, to shape
  a tools/call result for the wire ourselves (`tool_context`, `server_info_stamp`); and the
  ASGI scope of the HTTP request (`request_scope`), where splice.Splice parks pre-serialised
  JSON for the response.

At import the installed SDK is compared with TESTED_SDK (the version pinned in pyproject.toml):
on any other version the fast path is off (`FAST_PATH_PROBLEM` says why) and every call takes
the SDK's ordinary path, which gives the same answers, only slower. `VAULTWATCH_SDK_FAST_PATH=0`
turns it off by hand (tests run the listing tests both ways). `check(server)` verifies, when a
server is built, that the internals the server cannot do without are there, and raises a clear
error otherwise instead of a tool silently missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vaultwatch.core import settings
from vaultwatch.core.about import dist_version

if TYPE_CHECKING:  # the SDK itself is imported only where a server is built (0.5 s)
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context

TESTED_SDK = "2.3.0"
ENV_SWITCH = "VAULTWATCH_SDK_FAST_PATH"


INSTALLED_SDK = dist_version("mcp")
FAST_PATH_PROBLEM = (
    None
    if INSTALLED_SDK == TESTED_SDK
    else f"mcp {INSTALLED_SDK} is installed but vaultwatch's fast path was written against {TESTED_SDK}; "
    "every call takes the SDK's ordinary path"
)


def fast_path_enabled() -> bool:
    """Whether built servers serve read tools through the fast path (see the module docstring)."""
    if FAST_PATH_PROBLEM is not None:
        return False
    return bool(settings.env(ENV_SWITCH))


def check(server: MCPServer) -> None:
    """Raise RuntimeError when an internal the server always needs is missing from this SDK."""
    manager = getattr(server, "_tool_manager", None)
    if (
        manager is None
        or not callable(getattr(manager, "get_tool", None))
        or not callable(getattr(manager, "list_tools", None))
    ):
        raise RuntimeError(
            f"mcp {INSTALLED_SDK}: MCPServer has no _tool_manager with get_tool/list_tools; "
            f"vaultwatch is tested with mcp {TESTED_SDK} (see mcp_server/sdk.py)"
        )


def tool(server: MCPServer, name: str) -> Any:
    """The registered tool `name` (the SDK's Tool: .parameters, .fn_metadata), or None."""
    return server._tool_manager.get_tool(name)


def tools(server: MCPServer) -> list[Any]:
    """Every registered tool (the SDK's Tool objects), in registration order."""
    return list(server._tool_manager.list_tools())


def prompt_names(server: MCPServer) -> list[str]:
    """The names of the registered prompts."""
    return [p.name for p in server._prompt_manager.list_prompts()]


def rename_tools(server: MCPServer, rename: Any) -> None:
    """Give every registered tool the name `rename(name)` (`--tool-prefix`), keeping their order."""
    manager = server._tool_manager
    registered = list(manager.list_tools())
    manager._tools.clear()
    for t in registered:
        t.name = rename(t.name)
        manager._tools[t.name] = t


def set_instructions(server: MCPServer, text: str) -> None:
    """Replace the instructions the server sends at initialization."""
    server._lowlevel_server.instructions = text


def set_request_handler(server: MCPServer, method: str, params_type: Any, handler: Any) -> None:
    """Serve `method` with `handler(ctx, params)` instead of the SDK's own (resources: paged, read from disk)."""
    server._lowlevel_server.add_request_handler(method, params_type, handler)


def on_set_logging_level(server: MCPServer, set_level: Any) -> None:
    """Serve logging/setLevel (which also advertises the logging capability): `set_level(session, level)`."""
    from mcp_types import EmptyResult, SetLevelRequestParams

    async def handle(ctx: Any, params: Any) -> Any:
        set_level(ctx.session, params.level)
        return EmptyResult()

    server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, handle)


def announce_resource_list_changes(server: MCPServer) -> None:
    """Advertise `resources.listChanged` to handshake-era clients (the SDK takes the flag only as a
    NotificationOptions argument at initialization; 2026-07-28 clients learn it from subscriptions/listen)."""
    from mcp.server import NotificationOptions

    low = server._lowlevel_server
    build = low.create_initialization_options

    def with_list_changes(notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
        return build(notification_options or NotificationOptions(resources_changed=True), *args, **kwargs)

    low.create_initialization_options = with_list_changes  # type: ignore[method-assign]


def subscription_bus(server: MCPServer) -> Any:
    """The bus whose events reach 2026-07-28 clients' subscriptions/listen streams (`await bus.publish(event)`)."""
    return server._subscriptions


def connection(session: Any) -> Any:
    """The connection behind a request's session (.session_id, .state, .exit_stack,
    .initialize_accepted), or None when the transport has none."""
    return getattr(session, "_connection", None)


def tool_context(server: MCPServer, request_context: Any) -> Context:
    """The Context the SDK would hand a tool called in `request_context` (fast path)."""
    from mcp.server.mcpserver import Context

    return Context(request_context=request_context, mcp_server=server, subscriptions=server._subscriptions)


def server_info_stamp(server: MCPServer) -> Any:
    """What the SDK puts under SERVER_INFO_META_KEY in a modern-protocol result (fast path)."""
    return server._lowlevel_server.server_info_stamp


def request_scope(request: Any) -> Mapping[str, Any] | None:
    """The ASGI scope of the HTTP request a call arrived in, or None (stdio, in-memory)."""
    scope = getattr(request, "scope", None)
    return scope if isinstance(scope, Mapping) else None


async def run_stdio(server: MCPServer, stdin: Any, stdout: Any) -> None:
    """MCPServer.run_stdio_async on the given line streams (`async for line in stdin`, `await
    stdout.write(text)` / `flush()`): the stdio front hands the SDK the lines it read first."""
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
