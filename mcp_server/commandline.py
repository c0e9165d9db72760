"""What a command module is handed to add its subcommands to the `vaultwatch` command line.

tui/commands/cli.py builds the parser and hands one `CommandLine` to each module that adds
commands (mcp_server/cli.py, tui/commands/changes.py, tui/commands/pending.py), so they all take
the same shape and a new need of theirs is added in one place. It lives in mcp_server, the
lower of the two front ends, because mcp_server may not import the TUI.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vaultwatch.core.vault import Vault

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class CommandLine:
    """The parser's subcommands, the table of their handlers, and the two vault helpers every
    command shares: `vault_options(parser)` adds VAULT and its options, `open_vault(args,
    load=...)` opens the vault they name."""

    sub: argparse._SubParsersAction
    handlers: dict[str, Handler]
    vault_options: Callable[..., None]
    open_vault: Callable[..., Vault]
