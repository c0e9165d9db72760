"""`vaultwatch changes` and `vaultwatch revert`, and the `--approve` option of the TUI and serve.

    vaultwatch changes [VAULT] [--agent NAME] [--since TIME] [--path PATH] [--limit N] [--unreviewed] [--json]
    vaultwatch changes [VAULT] --mark-reviewed IDS|all [--agent NAME]
    vaultwatch changes [VAULT] --finish      (finish what a killed vaultwatch left half done, as a start does)
    vaultwatch revert CHANGE_ID [VAULT]      (again after a crash: finishes the interrupted revert)
    vaultwatch revert --agent NAME [VAULT] --yes
    vaultwatch revert --session ID [VAULT] --yes  (a session's changes as one unit, all or nothing)
    vaultwatch redo REVERT_ID [VAULT]             (re-apply what a revert, or its whole batch, undid)

Both read the vault's change journal (core.review.journal) in the state folder; a revert writes
through core.edit.writes.Writer as the person (`human:<login>`), so it is journaled too. The write
path and the revert modules are imported by the commands that use them: every command loads this
module, and a `serve --stdio` start's first answer (a listing) needs neither.
"""

from __future__ import annotations

import argparse
import datetime as dt
import getpass
import json
import sys
from typing import TYPE_CHECKING, cast

from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import approval, changestate, sessionids
from vaultwatch.core.review.journal import Change, Journal, Within, parse_since, require_journal
from vaultwatch.mcp_server.commandline import CommandLine
from vaultwatch.tui.commands.rulenotices import say_rule_notices
from vaultwatch.tui.commands.shown import one_line

if TYPE_CHECKING:
    from vaultwatch.core.review.intents import OpenIntent
    from vaultwatch.core.vault import Vault


def add_approve_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--approve",
        choices=approval.MODES,
        default=None,
        help="agents' writes (or only deletes) wait for the person's approval in the TUI; "
        "headless, they are kept as pending changes (`vaultwatch pending`), or asked through the agent's "
        "client where settings.toml's ask_client lets it (default: none, or [approve] in settings.toml)",
    )


def apply_approval(args: argparse.Namespace, vault: Vault) -> None:
    """Attach the approval gate `--approve` and the settings file ask for: every server and the TUI
    get one, rules or none, which reads the settings file again whenever it changes."""
    if hasattr(args, "approve"):
        approval.configure(vault, args.approve)


def person() -> str:
    try:
        return "human:" + getpass.getuser()
    except (KeyError, OSError):
        return "human"


def _when(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _line(c: Change, sessions: dict[str, str], now_at: str | None = None, said: str = "") -> str:
    """One change; `now_at`: what core.review.moves.Where.words says of where its note is now;
    `said`: its revert state in words (core.review.changestate)."""
    state = f"  ({said})" if said else ""
    if not c.reviewed:
        state += "  [not reviewed]"
    if c.approval:  # how it was approved, for the person's audit: an agent's client is only as good as it
        state += f"  [{c.approval}]"
    where = f"{c.src} -> {c.path}" if c.src else c.path
    if now_at:  # moved since (renamed, or moved outside vaultwatch), or not where the journal left it
        where += f" ({now_at})"
    # the session in its one short form (core.review.sessionids), which `--session` takes back
    who = c.who[:28] + (f" [{sessions.get(c.session, c.session)}]" if c.session else "")
    return one_line(f"{c.id:>6}  {_when(c.at)}  {who:<28}  {c.tool[:18]:<18}  {where}  {c.summary}{state}")


def _intent_lines(i: OpenIntent) -> str:
    """An open intent in `vaultwatch changes`: where the change lines have an id, it says what it is."""
    state = f"under way (process {i.process})" if i.running else f"INTERRUPTED (process {i.process} is gone)"
    head = one_line(f"{'open':>6}  {_when(i.at)}  {i.actor[:28]:<28}  {i.operation[:18]:<18}  {state}: {i.summary}")
    return f"{head}\n        what happens: {one_line(i.will)}\n        to finish it: {one_line(i.finish)}"


def _say_full(journal: Journal) -> None:
    status = journal.status()
    if status["full"]:
        print(
            f"vaultwatch: the change journal is full ({status['kept_bytes'] / 2**20:.1f} MB it must keep of "
            f"{status['max_bytes'] / 2**20:.0f} MB, {status['unreviewed']} changes not reviewed): agents' writes "
            "are refused until you review changes (`vaultwatch changes --unreviewed`, then --mark-reviewed) "
            "or raise VAULTWATCH_JOURNAL_MAX_MB",
            file=sys.stderr,
        )


def register(cli: CommandLine) -> None:
    """Add `changes` and `revert` to the vaultwatch command line."""

    def cmd_changes(args: argparse.Namespace) -> int:
        vault = cli.open_vault(args, load=False)
        journal = require_journal(vault)
        if args.mark_reviewed is not None:
            return _mark(journal, args)
        if args.finish:
            return _finish(vault, journal)
        from vaultwatch.core.review.intents import open_intents  # noqa: PLC0415  (reads only)

        unfinished = open_intents(journal, vault.root_real, args.vault)
        since = parse_since(args.since, vault.clock.now()) if args.since else None
        sessions = journal.sessions()
        # a prefix naming several sessions is refused, as `revert --session` refuses it: listing
        # them together would pass two agent runs off as one
        session = sessionids.resolve(args.session, sessions) if args.session else None
        changes = journal.changes(
            agent=args.agent,
            since=since,
            path=args.path,
            limit=args.limit,
            unreviewed=args.unreviewed,
            session=session,
        )
        # an operation a kill cut off has no row yet, but leaves the vault half done: it comes first,
        # whatever the filters, saying what finishing it does and how to have it finished
        whereabouts = journal.whereabouts(changes)
        if any(not w.there for w in whereabouts.values()) and not vault.snapshot.loaded:
            # a note not where the journal left it is looked for among the index's notes of its name:
            # the index is loaded (from its cache) only then, so a plain listing stays quick
            vault.load()
            whereabouts = journal.whereabouts(changes)
        if args.json:
            for i in reversed(unfinished):
                print(json.dumps(i.as_json(), ensure_ascii=False))
            for c in changes:
                w = whereabouts.get(c.id)
                now_at = w.path if w is not None and w.there else None
                found_at = w.holder if w is not None and not w.there else None
                print(json.dumps({**c.as_json(), "now_at": now_at, "found_at": found_at}, ensure_ascii=False))
        else:
            for i in reversed(unfinished):
                print(_intent_lines(i))
            forms = sessionids.shown_forms(sessions)
            get = changestate.lookup(journal, changes)
            for c in changes:
                w = whereabouts.get(c.id)
                print(_line(c, forms, w.words(c.path) if w is not None else None, changestate.state_said(c, get)))
        print(f"{len(changes)} change{'s' if len(changes) != 1 else ''} (journal: {journal.path})", file=sys.stderr)
        interrupted = [i for i in unfinished if not i.running]
        if interrupted:
            n = len(interrupted)
            print(
                f"vaultwatch: {n} interrupted operation{'s' if n != 1 else ''} not finished (listed first): "
                f"{interrupted[-1].finish}",
                file=sys.stderr,
            )
        _say_full(journal)
        say_rule_notices(vault)  # a rule renamed away or misspelled matches nothing: said as `pending` says it
        return 0

    def _finish(vault: Vault, journal: Journal) -> int:
        from vaultwatch.core.events import IndexProblem  # noqa: PLC0415
        from vaultwatch.core.review.intents import open_intents  # noqa: PLC0415
        from vaultwatch.core.review.resume import resume_and_report  # noqa: PLC0415  (the write path)

        if not journal.open_intents(interrupted=True):
            running = [i for i in open_intents(journal, vault.root_real) if i.running]
            print(
                "nothing interrupted to finish"
                + (
                    f" ({len(running)} operation{'s' if len(running) != 1 else ''} under way in another process)"
                    if running
                    else ""
                )
            )
            return 0
        vault.load()  # the writes refresh the index: it must be there first
        problems: list[str] = []
        vault.bus.subscribe(
            lambda e: problems.append(e.message) if isinstance(e, IndexProblem) and e.severity == "error" else None
        )
        try:
            done = resume_and_report(vault, journal)  # (the killed run's temporary files swept too)
        finally:
            vault.stop()
        if done is None:
            print(
                "vaultwatch: another vaultwatch is finishing the interrupted operations right now; "
                "`vaultwatch changes` shows when they are done",
                file=sys.stderr,
            )
            return 1
        for _change_id, said in done:
            print(said)
        left = journal.open_intents(interrupted=True)
        for message in problems:
            print(f"vaultwatch: {message}", file=sys.stderr)
        if left:
            print(
                f"vaultwatch: {len(left)} interrupted operation{'s' if len(left) != 1 else ''} could not be finished "
                "(said above why); `vaultwatch changes` lists them",
                file=sys.stderr,
            )
            return 1
        return 0

    def _mark(journal: Journal, args: argparse.Namespace) -> int:
        raw = args.mark_reviewed.strip().lower()
        ids = None
        if raw != "all":
            try:
                ids = [int(part) for part in raw.replace(",", " ").split()]
            except ValueError:
                raise VaultError(
                    f"--mark-reviewed {args.mark_reviewed!r}: give change ids (12 or 12,13) or all"
                ) from None
        marked = journal.mark_reviewed(ids, agent=args.agent, by=person())
        print(f"marked {len(marked)} change{'s' if len(marked) != 1 else ''} reviewed")
        _say_full(journal)
        return 0

    p = cli.sub.add_parser(
        "changes", help="changes made through vaultwatch (agents, the person, reverts), newest first"
    )
    cli.vault_options(p)
    p.add_argument("--agent", metavar="NAME", default=None, help="only this agent's changes (its client name)")
    p.add_argument(
        "--since",
        metavar="TIME",
        default=None,
        help="only changes since TIME: an ISO date or time, or a duration back (30m, 2h, 1d)",
    )
    p.add_argument("--path", metavar="PATH", default=None, help="only changes touching this vault path")
    p.add_argument("--session", metavar="ID", default=None, help="only this agent session's changes (id or prefix)")
    p.add_argument("--limit", type=int, default=None, help="at most N changes")
    p.add_argument("--json", action="store_true", help="JSON lines, one change per line")
    p.add_argument("--unreviewed", action="store_true", help="only changes nobody has reviewed yet")
    p.add_argument(
        "--mark-reviewed",
        metavar="IDS|all",
        default=None,
        help="mark these changes (12 or 12,13; all: every unreviewed one, of --agent if given) reviewed; "
        "the journal may drop reviewed changes older than its retention age to make room",
    )
    p.add_argument(
        "--finish",
        action="store_true",
        help="finish (or roll back) now the operations a killed vaultwatch left half done (an interrupted "
        "rename, revert, redo or approval), as the next start of vaultwatch on the vault would",
    )
    cli.handlers["changes"] = cmd_changes

    def cmd_revert(args: argparse.Namespace) -> int:
        from vaultwatch.core.edit.writes import Writer  # noqa: PLC0415  (module doc: imported when used)
        from vaultwatch.core.review.revert import RevertRefused, revert, revert_agent  # noqa: PLC0415

        if args.session is not None:
            return _revert_session(args)
        if args.change_id is not None and not args.change_id.isdigit():
            if args.vault is not None or args.agent is None:
                raise VaultError(f"CHANGE_ID must be a number from `vaultwatch changes`, not {args.change_id!r}")
            args.vault, args.change_id = args.change_id, None  # `revert --agent NAME VAULT`
        if args.change_id is not None:
            args.change_id = int(args.change_id)
        if (args.change_id is None) == (args.agent is None):
            raise VaultError("give a CHANGE_ID (from `vaultwatch changes`), or --agent NAME to revert all its changes")
        if args.agent is not None and not args.yes:
            raise VaultError(
                f"reverting every change of {args.agent!r} needs --yes (list them first with "
                f"`vaultwatch changes --agent {args.agent}`)"
            )
        vault = cli.open_vault(args)
        journal = require_journal(vault)
        writer = Writer(vault)
        try:
            if args.agent is not None:
                outcome = revert_agent(writer, journal, args.agent, actor=person())
                for done in outcome.reverted:
                    print(f"reverted change {done.change_id} (revert is change {done.revert.id})")
                for _change_id, why in outcome.refused:
                    print(f"not reverted: {why}", file=sys.stderr)
                return 1 if outcome.refused else 0
            try:
                # an int here: exactly one of CHANGE_ID and --agent was given (checked above)
                done = revert(writer, journal, cast(int, args.change_id), actor=person())
            except RevertRefused as exc:
                print(f"vaultwatch: {exc.message}", file=sys.stderr)
                if args.show_versions and exc.path:
                    for name, data in exc.versions.items():
                        print(f"--- {name} ---", file=sys.stderr)
                        print("(absent)" if data is None else data.decode("utf-8", "replace"), file=sys.stderr)
                return 1
            print(f"{done.revert.summary} (revert is change {done.revert.id})")  # the summary names the change
            return 0
        finally:
            stop = getattr(vault, "stop", None)
            if callable(stop):
                stop()

    def _revert_session(args: argparse.Namespace) -> int:
        from vaultwatch.core.edit.writes import Writer  # noqa: PLC0415  (module doc: imported when used)
        from vaultwatch.core.review.batch import revert_session  # noqa: PLC0415
        from vaultwatch.core.review.revert import RevertRefused  # noqa: PLC0415

        if args.change_id is not None:  # `revert --session ID VAULT`
            if args.vault is not None or args.agent is not None:
                raise VaultError("give either a CHANGE_ID, --agent NAME or --session ID")
            args.vault, args.change_id = args.change_id, None
        if not args.yes:
            raise VaultError(
                f"reverting every change of session {args.session!r} needs --yes (list them first with "
                f"`vaultwatch changes --session {args.session}`)"
            )
        vault = cli.open_vault(args)
        journal = require_journal(vault)
        try:
            try:
                since = None
                if args.since:  # a time range of the session (of an agent's stateless session)
                    when = parse_since(args.since, vault.clock.now())
                    since = journal.now() - when.seconds if isinstance(when, Within) else float(when)
                outcome = revert_session(Writer(vault), journal, args.session, since=since, actor=person())
            except RevertRefused as exc:
                print(f"vaultwatch: {exc.message}", file=sys.stderr)
                return 1
            for done in outcome.reverted:
                print(f"reverted change {done.change_id} (revert is change {done.revert.id})")
            n = len(outcome.reverted)
            print(
                f"reverted {n} change{'s' if n != 1 else ''} of session {outcome.session} as batch {outcome.batch}"
                + (" (finished an interrupted batch revert)" if outcome.finished else "")
            )
            return 0
        finally:
            stop = getattr(vault, "stop", None)
            if callable(stop):
                stop()

    p = cli.sub.add_parser("revert", help="revert a change from the journal (or every change of one agent)")
    p.add_argument("change_id", nargs="?", default=None, help="the change's id (`vaultwatch changes`)")
    cli.vault_options(p)
    p.add_argument("--agent", metavar="NAME", default=None, help="revert every change of this agent, newest first")
    p.add_argument(
        "--session",
        metavar="ID",
        default=None,
        help="revert every change of this agent session (its id or a prefix) as one unit, newest first",
    )
    p.add_argument(
        "--since",
        metavar="TIME",
        default=None,
        help="with --session: only its changes since TIME (a duration back: 30m, 2h; or an ISO time)",
    )
    p.add_argument("--yes", action="store_true", help="confirm reverting all of an agent's or a session's changes")
    p.add_argument(
        "--show-versions", action="store_true", help="when refused, print the three versions (before, written, current)"
    )
    cli.handlers["revert"] = cmd_revert
    _register_redo(cli)


def _register_redo(cli: CommandLine) -> None:
    def cmd_redo(args: argparse.Namespace) -> int:
        from vaultwatch.core.edit.writes import Writer  # noqa: PLC0415  (module doc: imported when used)
        from vaultwatch.core.review.redo import redo  # noqa: PLC0415
        from vaultwatch.core.review.revert import RevertRefused  # noqa: PLC0415

        if not args.revert_id.isdigit():
            raise VaultError(
                f"REVERT_ID must be the number of a revert from `vaultwatch changes`, not {args.revert_id!r}"
            )
        vault = cli.open_vault(args)
        journal = require_journal(vault)
        try:
            try:
                outcome = redo(Writer(vault), journal, int(args.revert_id), actor=person())
            except RevertRefused as exc:
                print(f"vaultwatch: {exc.message}", file=sys.stderr)
                return 1
            for row in outcome.redone:
                print(f"{row.summary} (change {row.id})")
            n = len(outcome.redone)
            print(
                f"redid {n} change{'s' if n != 1 else ''}"
                # a batch's id says which changes went together: for one change it is noise
                + (f" (batch {outcome.batch})" if outcome.batch and n > 1 else "")
                + (" (finished an interrupted redo)" if outcome.finished else "")
            )
            return 0
        finally:
            stop = getattr(vault, "stop", None)
            if callable(stop):
                stop()

    p = cli.sub.add_parser("redo", help="re-apply what a revert undid (a batch revert: the whole batch)")
    p.add_argument("revert_id", help="the revert's change id (`vaultwatch changes`)")
    cli.vault_options(p)
    cli.handlers["redo"] = cmd_redo


__all__ = ["add_approve_option", "apply_approval", "person", "register"]
