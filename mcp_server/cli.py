"""The MCP subcommands of `vaultwatch`: serve, bridge and mcp-config.

tui/commands/cli.py registers them with one call: `register(CommandLine(...))` (commandline.py).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import time
from typing import TYPE_CHECKING

from vaultwatch.core.disk.storednames import stored_root
from vaultwatch.core.vault import Vault, demo_vault_path

from .commandline import CommandLine
from .config import CLIENTS, COMPAT_SETS, check_agent, check_prefix, parse_compat

if TYPE_CHECKING:  # imported when first used: start-up time
    import threading
    from collections.abc import Callable

    from vaultwatch.core.disk.vaultlock import VaultNested
    from vaultwatch.core.events import Event

    from .host import McpHost
    from .stdiofront import StdioFront

CALLS_END_WAIT = 60.0  # s `serve --stdio` waits, once the client hung up, for the calls its front still answers
COLD_LOAD_NOTES = 3000  # notes of a first load whose parse the SDK's import may overlap (_cold_load_begun)
SEARCH_START_WAIT = 30.0  # seconds `serve --stdio` may hold the first full-text build back for a paging client


def _err(message: str) -> int:
    print(f"vaultwatch: {message}", file=sys.stderr, flush=True)
    return 2


def _vault_root(path: str | None) -> str:
    root = stored_root(path or str(demo_vault_path()))
    if not os.path.isdir(root):
        raise ValueError(f"vault folder not found: {root!r} is not a directory; pass an existing folder")
    return root


def register(cli: CommandLine) -> None:
    """Add `serve`, `bridge` and `mcp-config` to the vaultwatch command line."""

    def cmd_serve(args: argparse.Namespace) -> int:
        from vaultwatch.core.disk.vaultlock import VaultBusy, VaultLock, VaultNested

        from .locations import HostError, default_socket_path, parse_http

        try:
            compat = parse_compat(args.compat)
            _server_options(args)
        except ValueError as exc:
            return _err(str(exc))
        _log_warnings_to_stderr()
        if args.stdio:
            from . import stdiofront

            stdiofront.start(sys.argv[1:])  # the handshake is answered while the rest starts (stdiofront.py)
            stdio_vault = cli.open_vault(args, load=False)
            _report_problems_to_stderr(stdio_vault)
            try:
                return _serve_stdio(args, stdio_vault, compat)
            finally:
                stdio_vault.stop()
        # the vault's lock first, before the SDK import (~0.9 s): a refused start costs nothing, and
        # bridges starting servers at the same moment see this one at once
        lock = None
        try:
            root = _vault_root(args.vault)
            socket_path = os.path.abspath(args.socket) if args.socket else default_socket_path(root)
            lock = VaultLock(root)
            record = {"kind": "headless" if args.headless else "serve", "socket": socket_path, "http": None}
            deadline = time.monotonic() + (args.wait_lock or 0)
            if args.wait_lock:  # the SDK import overlaps the wait (the lock is polled meanwhile, not after)
                import threading

                threading.Thread(target=lambda: __import__("vaultwatch.mcp_server.host"), daemon=True).start()
            while True:
                try:
                    lock.acquire(record=record)
                    break
                except VaultBusy:
                    if time.monotonic() >= deadline:
                        raise
                    time.sleep(0.01)  # a TUI handing the vault back: it lets go within its shutdown
        except VaultBusy as busy:
            reach = (
                f"vaultwatch bridge --socket {busy.holder.socket}"
                if busy.holder.socket
                else f"vaultwatch bridge --vault {root}"
            )
            return _err(f"{busy}; quit it first, or let agents use that one ({reach})")
        except VaultNested as nested:
            return _err(_nested_said(args, nested))
        except (ValueError, HostError) as exc:
            return _err(str(exc))
        except OSError as exc:
            return _err(f"cannot lock the vault folder: {exc.strerror or exc}")
        above = _vault_above(args, root)
        if above is not None:
            lock.release()
            return _err(above)
        if args.headless:  # taking the vault over: never under a looser guard than the last server's
            _keep_the_last_guard(args, root)
        vault: Vault | None = None
        try:
            if args.http:
                parse_http(args.http)  # a bad option is refused before any thread starts
            vault = cli.open_vault(args, load=False)
            _report_problems_to_stderr(vault)
            # the index loads in the background while the SDK imports (~0.9 s); the full-text index and
            # note vectors start once the socket serves (_serve_socket), not competing with that start
            vault.start_live(search=False)
            from .host import McpHost

            host = McpHost(
                vault,
                socket_path=socket_path,
                compat=compat,
                read_only=args.read_only,
                audit_log=args.audit_log,
                http=args.http,
                kind="headless" if args.headless else "serve",
                vault_lock=lock,
                idle_exit=args.idle_exit,
                started_by_bridge=args.started_by_bridge,
                **_server_options(args),
            )
            import asyncio  # noqa: PLC0415  (a stdio server's first answers need none: stdiofront.py)

            return asyncio.run(_serve_socket(host))
        except HostError as exc:
            return _err(str(exc))
        finally:
            lock.release()  # (run() released it already; here for a start that failed before run)
            if vault is not None:  # open_vault may have failed
                vault.stop()

    p = cli.sub.add_parser(
        "serve",
        help="serve the vault to MCP agents without the TUI (until Ctrl+C)",
        description="Serve VAULT over MCP on its Unix socket (printed at start) until SIGINT, "
        "SIGTERM or SIGHUP (a second one ends it at once); agents connect through `vaultwatch bridge` or the socket itself.",
    )
    cli.vault_options(p)
    p.add_argument("--stdio", action="store_true", help="serve one client on stdin/stdout instead (no socket)")
    p.add_argument(
        "--socket",
        metavar="PATH",
        default=None,
        help="Unix socket path (default: one per vault under $XDG_RUNTIME_DIR/vaultwatch)",
    )
    p.add_argument(
        "--http",
        metavar="127.0.0.1:PORT",
        default=None,
        help="also serve loopback HTTP with a bearer token (never a network address)",
    )
    p.add_argument("--compat", metavar="SETS", default=None, help=f"add compatibility tools: {','.join(COMPAT_SETS)}")
    p.add_argument("--read-only", action="store_true", help="offer no tools that change the vault")
    p.add_argument(
        "--approve",
        choices=("none", "writes", "deletes"),
        default=None,
        help="changes that need the person's approval wait as pending changes (`vaultwatch pending`, "
        "`vaultwatch approve ID`), or are asked through the agent's client (elicitation) where settings.toml's "
        "ask_client lets it",
    )
    p.add_argument("--audit-log", metavar="PATH", default=None, help="append every agent call to PATH as JSON lines")
    add_server_options(p)
    p.add_argument(
        "--headless",
        action="store_true",
        help="a server started for agents (by `vaultwatch bridge`): the TUI takes the vault over from it; it "
        "serves under the stricter of its own --read-only, --approve, --audit-log and the last server's",
    )
    p.add_argument(
        "--idle-exit",
        metavar="SECONDS",
        type=float,
        default=None,
        help="stop after SECONDS without MCP clients (bridges start a server again when needed)",
    )
    # set by `vaultwatch bridge` when it starts the server: not for people (help hidden)
    p.add_argument("--started-by-bridge", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--wait-lock",
        metavar="SECONDS",
        type=float,
        default=None,
        help="when another vaultwatch serves the vault, wait up to SECONDS for it to stop",
    )
    cli.handlers["serve"] = cmd_serve

    from . import bridge_cli

    p = cli.sub.add_parser("bridge", help=bridge_cli.HELP, description=bridge_cli.DESCRIPTION)
    bridge_cli.add_arguments(p)
    cli.handlers["bridge"] = bridge_cli.run

    def cmd_mcp_config(args: argparse.Namespace) -> int:
        from .config import ENV_TOKEN_CLIENTS, TOKEN_ENV, WHERE, snippet
        from .locations import HostError, http_token, parse_http, token_path

        try:
            root = _vault_root(args.vault)
            prefix = check_prefix(args.tool_prefix or "")
            agent = check_agent(args.agent or "")
            if agent and args.http:
                raise ValueError("--agent names a bridge's client: URL clients (--http) cannot carry it")
            url = token = None
            if args.http:
                host, port = parse_http(args.http)
                shown = f"[{host}]" if ":" in host else host
                url = f"http://{shown}:{port}/mcp"
                token = http_token(root)
        except (ValueError, HostError) as exc:
            return _err(str(exc))
        if args.show_token:
            if token is None:
                return _err("--show-token needs --http 127.0.0.1:PORT")
            print(token)
            return 0
        clients = [args.client] if args.client else list(CLIENTS)
        for i, client in enumerate(clients):
            if len(clients) > 1:
                print(("\n" if i else "") + f"# {WHERE[client]}")
            else:
                print(f"# {WHERE[client]}", file=sys.stderr)
            print(
                snippet(
                    client,
                    root,
                    http_url=url,
                    token=token,
                    inline_token=args.inline_token,
                    tool_prefix=prefix,
                    agent=agent,
                )
            )
        if url:
            extra = f" --tool-prefix {prefix}" if prefix else ""
            print(f"# start the server with: vaultwatch serve {root} --http {args.http}{extra}", file=sys.stderr)
            if "claude-desktop" in clients:
                print(
                    "# Claude Desktop starts commands only (no URLs): its form is the stdio bridge, which reaches "
                    "the same server",
                    file=sys.stderr,
                )
            if not args.inline_token and ENV_TOKEN_CLIENTS & set(clients):
                print(
                    f"# the token is not in these files: export {TOKEN_ENV}=$(cat {token_path(root)}) where the "
                    "client starts (VS Code asks for it once); --inline-token writes it in instead, so never "
                    "commit such a file",
                    file=sys.stderr,
                )
        return 0

    p = cli.sub.add_parser(
        "mcp-config",
        help="print a ready-to-paste MCP client configuration",
        description="Print the configuration that connects an MCP client to vaultwatch for VAULT, in "
        "each client's documented format.",
    )
    p.add_argument("vault", nargs="?", default=None, help="vault folder (default: the bundled demo vault)")
    p.add_argument(
        "--client", choices=CLIENTS, default=None, help="only this client's configuration (default: all of them)"
    )
    p.add_argument(
        "--http",
        metavar="127.0.0.1:PORT",
        default=None,
        help="configure URL clients for `serve --http` instead of the stdio bridge",
    )
    p.add_argument(
        "--inline-token",
        action="store_true",
        help="with --http: write the bearer token into the configuration (never commit it)",
    )
    p.add_argument("--show-token", action="store_true", help="with --http: print only the bearer token")
    p.add_argument(
        "--tool-prefix",
        metavar="PREFIX",
        default="",
        help="the bridge shows the client every tool as PREFIX+name (e.g. vault_); with --http the "
        "server needs `serve --tool-prefix PREFIX`",
    )
    p.add_argument(
        "--agent",
        metavar="NAME",
        default="",
        help="the bridge presents the client as NAME, the name its rules in settings.toml ([agents.NAME]) use",
    )
    cli.handlers["mcp-config"] = cmd_mcp_config


def add_server_options(p: argparse.ArgumentParser) -> None:
    """The options that shape the MCP server's answers (serve and the TUI share them)."""
    from .budget import DEFAULT_ANSWER_BYTES, HARD_ANSWER_BYTES

    p.add_argument(
        "--max-answer-bytes",
        metavar="N",
        type=int,
        default=DEFAULT_ANSWER_BYTES,
        help=f"bytes of a whole tool answer (text and structured content) that does not choose its size "
        f"(default {DEFAULT_ANSWER_BYTES}; at most {HARD_ANSWER_BYTES}, the cap of any answer)",
    )
    p.add_argument(
        "--tool-prefix",
        metavar="PREFIX",
        default="",
        help="start every tool name with PREFIX (e.g. vault_), for clients that do not namespace servers",
    )
    p.add_argument(
        "--allow-nested",
        action="store_true",
        help="serve a folder inside a vault vaultwatch knows (one with a change journal or a "
        "[vaults.PATH] table) as a vault of its own, whose rules' paths start at this folder",
    )


def _vault_above(args: argparse.Namespace, root: str) -> str | None:
    """Why `root` may not be served: it lies inside, or holds, a vault the person has rules for
    (None when it does not, or `--allow-nested` says it is a vault of its own)."""
    from vaultwatch.core.review.guardenv import settings_path
    from vaultwatch.core.review.nestedvault import refusal

    if getattr(args, "allow_nested", False):
        return None
    return refusal(root, settings_path())


def _nested_said(args: argparse.Namespace, nested: VaultNested) -> str:
    """The refusal for a server running above or below `nested.root`, never advising to quit it and
    serve a folder that would then be refused too."""
    from vaultwatch.core.review.guardenv import settings_path
    from vaultwatch.core.review.nestedvault import server_refusal

    return server_refusal(nested, settings_path(), getattr(args, "allow_nested", False))


def server_options(args: argparse.Namespace) -> dict:
    """build_server's options from `add_server_options`' arguments; ValueError for a bad value."""
    return _server_options(args)


def _server_options(args: argparse.Namespace) -> dict:
    from .budget import DEFAULT_ANSWER_BYTES, check

    prefix = check_prefix(getattr(args, "tool_prefix", "") or "")
    return {
        "max_answer_bytes": check(getattr(args, "max_answer_bytes", None) or DEFAULT_ANSWER_BYTES),
        "tool_prefix": prefix,
    }


def _keep_the_last_guard(args: argparse.Namespace, root: str) -> None:
    """A headless server (the TUI's hand-back, a bridge's start) serves under the stricter of its own
    options and the guard the vault's last server kept (guardflags.py); called with the vault's lock
    held, so the kept guard cannot change meanwhile."""
    from .guardflags import Guard, kept

    last, doubt = kept(root)
    if doubt is not None:
        print(f"vaultwatch: warning: {doubt}; serving {root} read-only", file=sys.stderr, flush=True)
    guard = Guard.of(args.read_only, args.approve, args.audit_log).stricter(last)
    args.read_only, args.approve, args.audit_log = guard.read_only, guard.approve, guard.audit_log
    # its log is where the person looks for who serves the vault once the TUI has quit
    idle = f"it stops by itself after {args.idle_exit:g} s with no agent connected; " if args.idle_exit else ""
    print(
        f"vaultwatch: this headless server (pid {os.getpid()}) holds {root} now and serves its agents; "
        f"{guard.plainly()}; {idle}opening the TUI on the vault takes it over",
        file=sys.stderr,
        flush=True,
    )


def _report_problems_to_stderr(vault: Vault) -> None:
    """Headless: the problems the TUI would show (vault folder gone, cache rebuilt, socket file removed...)
    go to stderr as they happen, one line each."""
    from vaultwatch.core.events import IndexProblem
    from vaultwatch.core.review import approval

    def show(event: Event) -> None:
        if isinstance(event, IndexProblem):
            print(f"vaultwatch: {event.severity}: {event.message}", file=sys.stderr, flush=True)

    vault.bus.subscribe(show)
    gate = approval.gate_for(vault)
    for notice in gate.rule_notices() if gate is not None else ():  # rules that match nothing, said
        print(f"vaultwatch: warning: {notice}", file=sys.stderr, flush=True)


def _log_warnings_to_stderr() -> None:
    """Headless: warnings and errors (a tool that crashed, a failed shutdown step) go to stderr."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("vaultwatch: %(levelname)s %(name)s: %(message)s"))
        handler.setLevel(logging.WARNING)
        root.addHandler(handler)


def _start_search_soon(vault: Vault) -> None:
    """Start the full-text index on a thread. Note vectors wait for the first query by meaning
    (core.vault.Vault.start_live says why)."""
    import threading

    threading.Thread(target=vault.start_search, name="vaultwatch-search-start", daemon=True).start()


def _cold_load_begun(vault: Vault) -> tuple[threading.Event, Callable[[], None]]:
    """An event set once the first load starts parsing COLD_LOAD_NOTES notes or more (no entry cache,
    or most of it stale). Such a parse runs in worker processes for a second or more, and the front
    can answer no listing until it ends. When the front cannot answer the client's first `tools/list`
    (no list shipped with the package for this server, toollist.py), the SDK's import overlaps the
    parse (it costs no answer anything then, where after the load it would hold up that `tools/list`);
    otherwise the import waits for a request that needs it. Returns the event and the unsubscribe the
    caller calls once it no longer asks (no listener then stays on the bus for the process's life)."""
    import threading

    from vaultwatch.core.events import IndexProgress

    begun = threading.Event()

    def seen(event: Event) -> None:
        if (
            isinstance(event, IndexProgress)
            and event.phase == "parse"
            and event.done < event.total  # under way (a warm load reports only its end)
            and event.total >= COLD_LOAD_NOTES
        ):
            begun.set()
            unsubscribe()

    unsubscribe = vault.bus.subscribe(seen)
    return begun, unsubscribe


def _start_search_after_burst(vault: Vault, front: StdioFront) -> Callable[[], None]:
    """Start the full-text index once the client pauses the calls the front answers (or a search
    starts it first: Vault.search). A first build takes a core and a process of its own for
    seconds; a client paging through a listing right after a cold spawn would share the cores
    with it page by page, while the build is of no use to that client until it searches.
    Returns what the server calls as it stops: no build starts after it (one starting now is
    whole first, so that the vault's stop stops it)."""
    import threading

    gate = threading.Lock()
    stopped = threading.Event()

    def start() -> None:
        front.wait_calls_paused(vault.wait_ready, SEARCH_START_WAIT)
        with gate:
            if not stopped.is_set():
                vault.start_search()

    def stop() -> None:
        with gate:
            stopped.set()

    threading.Thread(target=start, name="vaultwatch-search-start", daemon=True).start()
    return stop


async def _serve_socket(host: McpHost) -> int:
    import asyncio  # noqa: PLC0415

    loop = asyncio.get_running_loop()
    # as `serve --stdio` (stdiofront.stop_on_signals): the first stop signal stops the server in order,
    # and the next finds the default action again and ends the process at once; a signal the process
    # was started with ignored (nohup) is left as it is (SIGINT's handler is asyncio.run's own by now)
    caught = [sig for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if signal.getsignal(sig) != signal.SIG_IGN]

    def stop() -> None:
        for sig in caught:
            loop.remove_signal_handler(sig)
            signal.signal(sig, signal.SIG_DFL)
        host.stop()

    for sig in caught:
        loop.add_signal_handler(sig, stop)
    ready = asyncio.Event()
    task = asyncio.create_task(host.run(ready))
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
    if ready.is_set():
        print(f"vaultwatch: serving {host.vault.root} on {host.socket_path} (Ctrl+C stops)", flush=True)
        _start_search_soon(host.vault)
        if host.http_url:
            from .host import token_path

            print(
                f"vaultwatch: loopback HTTP on {host.http_url} (bearer token in {token_path(host.vault.root_real)})",
                flush=True,
            )
    waiter.cancel()
    await task  # raises HostError when it could not start
    return _stopped()


def _stopped() -> int:
    """The end of a server that stopped in order (a socket `serve` on SIGTERM, SIGINT or SIGHUP, a stdio one
    on a stop signal: stdiofront.stop_on_signals): said on stderr, exit status 0."""
    print("vaultwatch: stopped", file=sys.stderr, flush=True)
    return 0


def _serve_stdio(args: argparse.Namespace, vault: Vault, compat: frozenset[str]) -> int:
    from vaultwatch.core.disk.vaultlock import VaultBusy, VaultLock, VaultNested

    from . import stdiofront

    front = stdiofront.start(sys.argv[1:])  # started already by tui/entry.py, unless run another way
    lock = VaultLock(vault.root_real)
    try:
        lock.acquire(record={"kind": "stdio", "socket": None, "http": None})
    except (VaultBusy, VaultNested) as busy:
        if isinstance(busy, VaultNested):
            message = _nested_said(args, busy)
        else:
            reach = f"--socket {busy.holder.socket}" if busy.holder.socket else f"--vault {vault.root_real}"
            message = f"{busy}; quit it first, or have this client run `vaultwatch bridge {reach}` instead"
        front.refuse(f"vaultwatch: {message}")  # the client sees it as the answer to every request, initialize too
        _err(message)
        front.ended.wait()  # until the client hangs up (it owns this process)
        return 2
    above = _vault_above(args, vault.root_real)
    if above is not None:
        lock.release()
        front.refuse(f"vaultwatch: {above}")
        _err(above)
        front.ended.wait()
        return 2
    import uuid

    from . import earlycalls, sdk, toollist
    from .activity import Activity, AuditLog

    options = _server_options(args)
    audit = None
    stop_search_start: Callable[[], None] | None = None
    try:
        audit = AuditLog(args.audit_log).attach(vault.bus) if args.audit_log else None
        activity = Activity(vault.bus, foreground=vault.foreground, session=uuid.uuid4().hex)
        # the front's answers are shaped as the SDK's fast path shapes them: none when it is off (sdk.py)
        calls = (
            earlycalls.EarlyCalls(
                vault,
                activity,
                max_answer_bytes=options["max_answer_bytes"],
                tool_prefix=options["tool_prefix"],
                writes=not args.read_only,
            )
            if sdk.fast_path_enabled() and earlycalls.enabled()
            else None
        )
        from vaultwatch.core.search.semantic import offered

        tool_list = toollist.shipped(
            read_only=args.read_only, compat=compat, semantic=offered(), prefix=options["tool_prefix"]
        )
        # the handshake, a first tools/list and a first listing now
        front.serve(tool_prefix=options["tool_prefix"], calls=calls, tool_list=tool_list)
        cold, stop_watching_load = _cold_load_begun(vault)
        vault.answering = lambda: not front.calls_paused()  # the first load's cache write waits for a burst
        vault.start_live(search=False)  # watch, and load in the background
        # the first full-text build needs no SDK: it waits for the client's first pause, not for the import
        stop_search_start = _start_search_after_burst(vault, front)  # (vectors: on first use)
        # the SDK's import (CPU on the client's path, and memory kept) waits until a request needs it; with no
        # tools/list of its own the front has the import overlap a cold load's parse (the client's first
        # tools/list would wait for the import after the parse)
        front.wait_before_sdk(now=cold if tool_list is None else None)
        stop_watching_load()
        if front.hung_up():
            if calls is not None:
                calls.idle.wait(CALLS_END_WAIT)  # a write under way is finished, and its journal row
            # the client hung up with every request answered, or a stop signal came (a request still
            # waiting for the SDK was not begun): the SDK has nothing to do
            if front.stopped_by is not None or not front.owes_sdk():
                if calls is not None:
                    calls.ended()
                return _stopped() if front.stopped_by is not None else 0
        from .server import build_server

        # brief=False: the front answered `initialize` before the SDK (the general instructions, as
        # cached), and the SDK's answer must be the same bytes for the cache to stay true
        server, _ = build_server(
            vault, compat=compat, read_only=args.read_only, activity=activity, brief=False, **options
        )
        import asyncio  # noqa: PLC0415  (imported by the SDK by now; the first answers needed none)

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(front.run(server))
        if calls is not None:
            calls.idle.wait(CALLS_END_WAIT)  # the front's calls still under way (a write) end before the process
        if front.stopped_by is not None:
            return _stopped()
    finally:
        if stop_search_start is not None:
            stop_search_start()
        if audit is not None:
            audit.close()
        lock.release()
    return 0
