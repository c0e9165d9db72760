"""Build the MCP server over one Vault: the read tools, the compatibility sets, room for more.

    server, activity = build_server(vault, compat={"vault-cortex"}, extra_tools=[register_write_tools])

`extra_tools` are functions `(server: MCPServer, env: ToolEnv) -> None` that add tools.
Left as None it is the `history` tool and the write tools (`mcp_server/write_tools.py`'s `register`, which checks
`env.read_only` itself and adds nothing in read-only mode). Every call passes through
`Activity.middleware`, which publishes an `AgentAccess` event on `vault.bus`, then `Lane.middleware`
(mcp_server/lane.py), which runs heavy calls one at a time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from vaultwatch.core.review.idlesessions import IdleSessions
from vaultwatch.core.vault import Vault

from . import briefing, budget, completions, descriptions, handshake, progress, prompts, resources, schemas, sdk, splice
from . import compat as compat_tools
from . import tools as native_tools
from .activity import Activity
from .answers import Answer, modern_result, wire_result
from .config import check_prefix
from .history_tool import register as register_history
from .lane import Lane
from .results import answer_of, fail, forget_answers, keep_answers, log
from .tools import ToolEnv
from .write_tools import register as register_write_tools

ToolRegistrar = Callable[[MCPServer, ToolEnv], None]

INSTRUCTIONS = descriptions.INSTRUCTIONS


def quiet_logging() -> None:
    """Keep the SDK's log output off the terminal (a TUI owns it; headless serve prints its own lines).

    MCPServer() calls logging.basicConfig with a Rich handler on stderr; basicConfig does
    nothing once the root logger has a handler, so give it a NullHandler first.
    """
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())
    for name in ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx2", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _argument_help(tool: str, schema: Mapping[str, Any] | None, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        got = err.get("input")
        shown = repr(got)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        what = err.get("msg", "invalid value")
        parts.append(f"{loc or 'arguments'}: {what}" + ("" if err.get("type") == "missing" else f" (got {shown})"))
    names = ", ".join(sorted((schema or {}).get("properties", {}))) or "none"
    return (
        f"invalid arguments for {tool}: {'; '.join(parts)}. This tool takes: {names}; "
        "fix the arguments to match its input schema and call again"
    )


class VaultMCPServer(MCPServer):
    """MCPServer whose tool errors always read `Error: <what happened and what to do>`.

    Argument validation failures are reworded for an agent (field, problem, the accepted
    arguments), unknown argument names are refused instead of silently ignored, and an
    unexpected exception never shows a traceback.

    Tools named in `fast_tools` (the read tools) take a shorter way out: their results are
    already JSON-safe, so `fast_path` puts them on the wire as they are instead of letting the
    SDK dump, validate and re-dump them (four passes over a 10,000-row listing, ~60% of its
    cost). Anything unusual about a request sends it down the SDK's ordinary path. On the
    socket and on stdio, a listing's rows and text do not even pass through the SDK: they are
    cached JSON (core.serialize.RowCache) that splice.py puts on the wire as it is.
    """

    fast_tools: set[str]
    # where a stdio server's fast path parks pre-serialised JSON: the stdio front's, which fills it as
    # each line leaves (splice.LineParking); None for every other server
    line_parking: splice.LineParking | None = None
    client_log: progress.ClientLog
    resource_subscriptions: resources.Subscriptions

    async def fast_path(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        """Server middleware: serve a read tool's tools/call and shape the wire result directly."""
        params = ctx.params
        if ctx.method != "tools/call" or not isinstance(params, Mapping):
            return await call_next(ctx)
        name, arguments = params.get("name"), params.get("arguments")
        conn = sdk.connection(ctx.session)
        if (
            name not in self.fast_tools
            or not isinstance(arguments, (Mapping, type(None)))
            or set(params) - {"name", "arguments", "_meta"}
            or conn is None
            or not conn.initialize_accepted
        ):
            return await call_next(ctx)
        context = sdk.tool_context(self, ctx)
        values = splice.scope_values(ctx.request)
        token = splice.enable(self.line_parking if values is None and ctx.request is None else values)
        kept: dict[int, Any] = {}
        kept_token = keep_answers(kept)
        try:
            result = await self.call_tool(name, dict(arguments or {}), context)
        finally:
            forget_answers(kept_token)
            splice.reset(token)
        return self._wire(result, ctx.protocol_version, answer_of(result, kept))

    def _wire(self, result: CallToolResult, version: str, answer: Answer | None = None) -> dict[str, Any]:
        """The wire form of a CallToolResult, as the SDK's per-version sieve would shape it; from the plain
        `answer` it was made from when there is one (the same fields, without dumping the content models)."""
        if answer is not None:
            out = wire_result(answer)
            out.pop("_meta", None)
        else:
            out = {
                "content": [
                    block.model_dump(by_alias=True, mode="json", exclude_none=True) for block in result.content
                ],
                "isError": result.is_error,
            }
            if result.structured_content is not None:
                out["structuredContent"] = result.structured_content
        if result.meta:
            out["_meta"] = dict(result.meta)
        if version in MODERN_PROTOCOL_VERSIONS:
            return modern_result(out, sdk.server_info_stamp(self))
        return out

    @staticmethod
    async def fixed_lists(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        """Server middleware: a 2026-07-28 client's server/discover says tools and prompts never change
        (listChanged false). The SDK derives all three listChanged flags from whether
        subscriptions/listen is served, which it is for resources; vaultwatch's tool and prompt lists
        are fixed when the server is built, so only resources announce changes, as in the handshake era."""
        result = await call_next(ctx)
        if ctx.method == "server/discover" and isinstance(result, dict):  # the wire form of the result
            caps = result.get("capabilities")
            for name in ("tools", "prompts"):
                cap = caps.get(name) if isinstance(caps, dict) else None
                if isinstance(caps, dict) and isinstance(cap, dict) and cap.get("listChanged"):
                    caps[name] = {**cap, "listChanged": False}
        return result

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = sdk.tool(self, name)
        if tool is None:  # a protocol error, as the spec has it (-32602), not a tool result
            known = ", ".join(sorted(t.name for t in sdk.tools(self)))
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name!r}; this server offers {known}")
        allowed = set(tool.parameters.get("properties", {}))
        extra = sorted(k for k in arguments if k not in allowed)
        if extra:
            return fail(
                f"unknown argument{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} for {name}: "
                f"it takes {', '.join(sorted(allowed)) or 'no arguments'}; check the spelling and call again"
            )
        started = time.monotonic()
        try:
            result = await progress.around(context, super().call_tool(name, arguments, context))
            await self._log_call(context, name, result, started)
            return result
        except UnexpectedToolError as exc:
            log.error("tool %s failed unexpectedly", name, exc_info=exc.__cause__ or exc)
            return fail(
                f"internal error in {name} ({type(exc.__cause__).__name__}); the vault was not changed by "
                "this call; try again, and report it if it repeats"
            )
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return fail(_argument_help(name, tool.parameters, exc.__cause__))
            return fail(str(exc).removeprefix(f"Error executing tool {name}: "))

    async def _log_call(self, context: Any, name: str, result: Any, started: float) -> None:
        """Tell a client that asked (logging/setLevel) how the call went."""
        if context is None or not self.client_log.levels:
            return
        await self.client_log.send(context, "debug", f"{name}: {1000 * (time.monotonic() - started):.1f} ms")
        meta = getattr(result, "meta", None) or {}
        if meta.get("index_stale"):
            await self.client_log.send(
                context,
                "warning",
                f"{name}: the answer may miss writes still in flight "
                "(pass wait_for_pending_writes=true to wait for them)",
            )

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        if name not in sdk.prompt_names(self):
            known = ", ".join(sorted(sdk.prompt_names(self))) or "none"
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name!r}; this server offers {known}")
        return await super().get_prompt(name, arguments, context)


def add_prefix(server: VaultMCPServer, prefix: str) -> None:
    """Rename every tool to `prefix + name` (`--tool-prefix vault_`), for clients that do not namespace
    servers: read, write, edit, delete and search collide with filesystem servers' tools."""
    if not check_prefix(prefix):
        return
    sdk.rename_tools(server, lambda name: prefix + name)
    server.fast_tools = {prefix + name for name in server.fast_tools}
    sdk.set_instructions(server, handshake.instructions(prefix))  # what the stdio front answers too


def build_server(
    vault: Vault,
    *,
    compat: Iterable[str] = (),
    read_only: bool = False,
    extra_tools: Sequence[ToolRegistrar] | None = None,
    activity: Activity | None = None,
    name: str = handshake.NAME,
    max_answer_bytes: int = budget.DEFAULT_ANSWER_BYTES,
    tool_prefix: str = "",
    brief: bool = True,
) -> tuple[VaultMCPServer, Activity]:
    """The MCP server for `vault` and the Activity that attributes its calls (see module doc).

    `max_answer_bytes` is the budget of a default answer's whole message (mcp_server/budget.py);
    `tool_prefix` starts every tool's name (add_prefix); `brief`: add the agent's own paragraph to
    its `initialize` answer (briefing.py). ValueError for a value out of range.
    """
    budget.check(max_answer_bytes)
    quiet_logging()
    activity = activity or Activity(vault.bus, foreground=vault.foreground, sessions=IdleSessions(vault.clock))
    # name, title, version and instructions: handshake.py's, which the stdio front answers with before the SDK
    server = VaultMCPServer(
        name,
        title=handshake.TITLE,
        version=handshake.server_version(),
        instructions=handshake.instructions(),
        middleware=[activity.middleware, Lane(vault).middleware],
        log_level="WARNING",
    )
    env = ToolEnv(vault, read_only=read_only, compat=frozenset(compat), max_answer_bytes=max_answer_bytes)
    native_tools.register(server, env)
    compat_tools.register(server, env)
    sdk.check(server)
    server.middleware.append(server.fixed_lists)
    if brief:
        server.middleware.append(briefing.middleware(lambda: vault.approval_gate))  # the agent's own situation
    server.fast_tools = {t.name for t in sdk.tools(server)}
    if sdk.fast_path_enabled():
        server.middleware.append(server.fast_path)
    if extra_tools is None:
        extra_tools = [register_history, register_write_tools]
    for registrar in extra_tools:
        registrar(server, env)
    for tool in sdk.tools(server):
        tool.parameters = schemas.compact_input(tool.parameters)
        if tool.fn_metadata.output_schema:  # published only; results are still checked against the model
            tool.fn_metadata.output_schema = schemas.compact(tool.fn_metadata.output_schema)
            tool.fn_metadata.output_schema.pop("description", None)  # the model's docstring: the description says it
        if tool.annotations is not None and tool.annotations.title == tool.title:
            tool.annotations = tool.annotations.model_copy(update={"title": None})  # said once, as the tool's title
    prompts.register(server, env)
    server.resource_subscriptions = resources.register(server, vault)
    completions.register(server, vault)
    server.client_log = progress.ClientLog()
    sdk.on_set_logging_level(server, server.client_log.set_level)
    add_prefix(server, tool_prefix)
    activity.tool_prefix = tool_prefix  # the write tools under their prefixed names may still ask the person
    return server, activity


__all__ = ["ToolEnv", "ToolRegistrar", "VaultMCPServer", "build_server", "quiet_logging"]
