"""The `vaultwatch` console entry point. `vaultwatch bridge` (spawned by MCP clients, which wait
for its first answer) starts on the standard library and the relay alone; `serve --stdio` starts
its stdio front first (mcp_server/stdiofront.py); every command then loads the whole command
line (tui/commands/cli.py)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the vaultwatch command line; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # answered without loading the command line
        from vaultwatch.core.about import version

        print(f"vaultwatch {version()}")
        return 0
    if args[:1] == ["bridge"]:
        from vaultwatch.mcp_server.bridge_cli import main as bridge

        return bridge(args[1:])
    if args[:1] == ["serve"] and "--stdio" in args and not {"-h", "--help"} & set(args):
        from vaultwatch.mcp_server import stdiofront

        stdiofront.start(args)  # answers the client's handshake while the SDK imports (stdiofront.py)
    from vaultwatch.tui.commands.cli import main as full

    return full(args)


if __name__ == "__main__":
    sys.exit(main())
