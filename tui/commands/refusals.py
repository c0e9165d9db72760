"""`vaultwatch refusals`: agents' changes that did not happen, newest first.

    vaultwatch refusals [VAULT] [--agent NAME] [--since TIME] [--declined | --refused] [--limit N] [--json]

Each one a rule of the person's refused, or the person declined (in the TUI's dialog, through the
agent's own client), or nobody decided before the wait timed out: who, when, the tool, the paths
and why, from the vault's record of them (core.review.refusals), which outlives the TUI. A change
declined with `vaultwatch decline` is kept with the pending change (`vaultwatch pending --all`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from vaultwatch.core.review import refusals, sessionids
from vaultwatch.core.review.agentrules import shown_agent
from vaultwatch.core.review.journal import Within, journal_for, parse_since
from vaultwatch.mcp_server.commandline import CommandLine
from vaultwatch.tui.commands.rulenotices import say_rule_notices
from vaultwatch.tui.commands.shown import one_line


def _when(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _line(r: refusals.Refusal, sessions: dict[str, str]) -> str:
    # the name as `vaultwatch changes` and the TUI show it: a client's claim, invisible characters written out
    who = shown_agent(r.agent) + (f" [{sessions.get(r.session, r.session)}]" if r.session else "")
    return one_line(f"{_when(r.at)}  {who:<28}  {r.kind:<8}  {r.tool[:18]:<18}  {r.where}  {r.reason}")


def register(cli: CommandLine) -> None:
    """Add `refusals` to the vaultwatch command line."""

    def cmd_refusals(args: argparse.Namespace) -> int:
        vault = cli.open_vault(args, load=False)
        since = None
        if args.since:
            now = vault.clock.now()
            given = parse_since(args.since, now)
            since = now.timestamp() - given.seconds if isinstance(given, Within) else given
        kind = refusals.DECLINED if args.declined else refusals.REFUSED if args.refused else None
        rows = [r for r in refusals.kept(vault.root_real, agent=args.agent, since=since) if kind in (None, r.kind)]
        rows = rows[: args.limit]
        if args.json:
            for r in rows:
                print(json.dumps(r.as_json(), ensure_ascii=False))
        else:
            # shown as `vaultwatch changes` shows sessions, so that one pastes into `changes --session`
            forms = sessionids.forms_among(journal_for(vault), (r.session for r in rows if r.session))
            for r in rows:
                print(_line(r, forms))
        print(
            f"{len(rows)} refused or declined change{'s' if len(rows) != 1 else ''} "
            f"(record: {refusals.refusals_path(vault.root_real)})",
            file=sys.stderr,
        )
        say_rule_notices(vault)  # a rule renamed away or misspelled matches nothing: said as `pending` says it
        return 0

    p = cli.sub.add_parser(
        "refusals",
        help="agents' changes refused by your rules, declined by you, or timed out waiting for you, newest first",
    )
    cli.vault_options(p)
    p.add_argument("--agent", metavar="NAME", default=None, help="only this agent's (its client name)")
    p.add_argument(
        "--since",
        metavar="TIME",
        default=None,
        help="only since TIME: an ISO date or time, or a duration back (30m, 2h, 1d)",
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument("--refused", action="store_true", help="only changes a rule of yours refused")
    which.add_argument("--declined", action="store_true", help="only changes you declined, or left to time out")
    p.add_argument("--limit", type=int, default=50, help="at most N (default 50)")
    p.add_argument("--json", action="store_true", help="JSON lines, one per line")
    cli.handlers["refusals"] = cmd_refusals
