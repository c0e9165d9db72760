"""`vaultwatch bridge`: its options and its start. Light on purpose: MCP clients spawn the bridge
and wait for its first answer, so this imports the standard library, the relay and the vault
lock's reader, never the SDK, the index or the TUI (tui/entry.py runs it without the rest of the
command line; tui/commands/cli.py registers the same options for `vaultwatch --help`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

DESCRIPTION = (
    "Relay an MCP client's stdin/stdout to the vaultwatch serving a vault, starting a headless one "
    "when none runs, and following the vault when the TUI opens or quits. Exits when stdin ends."
)
HELP = "relay stdio to the vault's vaultwatch (for MCP clients that spawn commands)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vault", metavar="VAULT", default=None, help="the vault (default: the bundled demo vault)")
    p.add_argument(
        "--socket",
        metavar="PATH",
        default=None,
        help="the socket to use (with --vault: where a started server listens; alone: only that socket)",
    )
    p.add_argument(
        "--idle-exit",
        metavar="SECONDS",
        type=float,
        default=None,
        help="a server this bridge starts stops after SECONDS without clients (default 600)",
    )
    p.add_argument("--no-start", action="store_true", help="never start a server; wait for the TUI or `serve`")
    p.add_argument(
        "--tool-prefix",
        metavar="PREFIX",
        default="",
        help="show this client every tool as PREFIX+name (e.g. vault_), whichever server serves the vault",
    )
    p.add_argument(
        "--agent",
        metavar="NAME",
        default="",
        help="present this client to vaultwatch as NAME (the name its agent rules in settings.toml use)",
    )


def _vault_root(path: str | None) -> str:
    if path is None:
        from vaultwatch.core.vault import demo_vault_path  # only for the demo default (it loads the index's modules)

        path = str(demo_vault_path())
    from vaultwatch.core.disk.storednames import stored_root  # noqa: PLC0415  (a bridge's start imports no more)

    root = stored_root(path)
    if not os.path.isdir(root):
        raise ValueError(f"vault folder not found: {root!r} is not a directory; pass an existing folder")
    return root


def _vault_of(socket_path: str, read_info: Callable[[str], dict[str, Any] | None]) -> str | None:
    """The vault a server last served on `socket_path`, from its `.json` (left behind when that server
    crashed) in a folder of ours that nobody else may enter, or None."""
    import stat as stat_mod

    try:
        st = os.lstat(os.path.dirname(socket_path) or "/")
    except OSError:
        return None
    if not stat_mod.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # another user could have written it
    info = read_info(socket_path) or {}
    vault = info.get("vault")
    return vault if isinstance(vault, str) and os.path.isdir(vault) else None


def run(args: argparse.Namespace) -> int:
    from .bridge import BridgeError, probe, run_bridge
    from .config import check_agent, check_prefix
    from .launch import IDLE_EXIT_DEFAULT, locate
    from .locations import HostError, default_socket_path, read_info

    try:
        prefix = check_prefix(args.tool_prefix or "")
        agent = check_agent(args.agent or "")
    except ValueError as exc:
        print(f"vaultwatch: bridge: {exc}", file=sys.stderr, flush=True)
        return 2
    if args.socket and not args.vault:
        bare = os.path.abspath(args.socket)
        try:
            probe(bare, None)  # a server there: follow that socket only, as asked (never start one)
        except BridgeError:
            args.vault = _vault_of(bare, read_info)  # none: a crashed server's .json may name its vault
        if args.vault is None:  # nothing to start a server for: the client hears why on each call

            def find_bare(grace: float) -> tuple[str, int | None]:
                try:
                    return bare, probe(bare, None)
                except BridgeError as exc:
                    if not str(exc).startswith("no vaultwatch is running"):
                        raise
                    raise BridgeError(
                        f"{exc}; or configure the client with `vaultwatch bridge --vault VAULT`, "
                        "which starts a server when none runs"
                    ) from None

            return run_bridge(bare, None, locate=find_bare, tool_prefix=prefix, agent=agent)
    try:
        root = _vault_root(args.vault)
    except ValueError as exc:
        print(f"vaultwatch: bridge: {exc}", file=sys.stderr, flush=True)
        return 2
    refusal = None
    try:
        path: str | None = os.path.abspath(args.socket) if args.socket else default_socket_path(root)
    except HostError as exc:  # e.g. the runtime folder belongs to another user: said to the client, on each call
        path, refusal = None, str(exc)
    idle = args.idle_exit if args.idle_exit is not None else IDLE_EXIT_DEFAULT

    def find(grace: float) -> tuple[str, int | None]:
        return locate(root, path, spawn=not args.no_start, idle_exit=idle, grace=grace, refusal=refusal)

    return run_bridge(path or "", root, locate=find, tool_prefix=prefix, agent=agent)


def main(argv: Sequence[str]) -> int:
    """`vaultwatch bridge ARGS...` without the rest of the command line."""
    p = argparse.ArgumentParser(prog="vaultwatch bridge", description=DESCRIPTION)
    add_arguments(p)
    return run(p.parse_args(list(argv)))
