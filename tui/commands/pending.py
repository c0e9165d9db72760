"""`vaultwatch pending`, `vaultwatch approve` and `vaultwatch decline`: the person decides the
changes agents proposed while no TUI was open (core.review.pending).

    vaultwatch pending [VAULT] [--all] [--json]
    vaultwatch approve ID [VAULT]
    vaultwatch decline ID [VAULT] [--reason TEXT]

An approval applies the change through the normal write path as the agent that proposed it
(the journal records the agent's change), only if every file it touches still holds what it
held when it was proposed. While a vaultwatch (the TUI or a headless server) serves the vault,
both decisions are handed to it (mcp_server/persondesk.py), so its live index, journal and
views see them at once; otherwise they are made in this process.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from vaultwatch.core.disk.storednames import stored_root
from vaultwatch.core.edit.effects import cautions, in_words, read_as
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import approval, pending, sessionids
from vaultwatch.core.review.agentrules import shown_agent
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.review.pending import Proposal
from vaultwatch.core.review.stale import proposal_stale
from vaultwatch.core.review.textdiff import Diff, text_diff
from vaultwatch.core.review.visible import visible
from vaultwatch.mcp_server.commandline import CommandLine
from vaultwatch.tui.commands.changes import person
from vaultwatch.tui.commands.rulenotices import say_rule_notices

Links = Sequence[tuple[str, bytes, bytes]] | str  # a rename's link rewrites (pending.link_rewrites), or why not


def _when(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def diff_text(p: Proposal, links: Links | None = (), stranded: Sequence[str] = ()) -> str:
    """The change as the person reads it: its effects, what it does beyond them (a delete for good,
    links a rename leaves pointing at nothing: `stranded`, pending.stranded), then the note's diff;
    for a rename, every hunk of each note whose links it rewrites (`links`: pending.link_rewrites,
    or why they cannot be shown; None while they are worked out). What the agent wrote is shown as the
    question through its client shows it (core.review.visible): no line can hide, reorder or disguise
    another. The effects are said in words, as the approval dialog says them (core.edit.effects)."""
    relinked = None if links is None or isinstance(links, str) else [path for path, _, _ in links]
    shown = read_as(p.effects, relinked)
    lines = [f"  it touches {len(shown)} path{'s' if len(shown) != 1 else ''}:"]
    for e in shown:
        lines.append(f"    {visible(in_words(e, relinks_known=relinked is not None), keep_tab=False)}")
    lines += [f"  {caution}" for caution in cautions(p.permanent, tuple(stranded))]
    if p.before is not None or p.after is not None:
        diff = text_diff(p.before, p.after)
        lines.append(f"  +{diff.added} -{diff.removed} lines" + (" (binary)" if diff.binary else ""))
        lines.extend(_hunks(diff))
    if isinstance(links, str):
        lines.append(f"  the links it rewrites cannot be shown: {visible(links, keep_tab=False)}")
    for path, before, after in () if links is None or isinstance(links, str) else links:
        diff = text_diff(before, after)
        lines.append(
            f"  links rewritten in {visible(path, keep_tab=False)}: +{diff.added} -{diff.removed} lines"
            + (" (binary)" if diff.binary else "")
        )
        lines.extend(_hunks(diff))
    return "\n".join(lines)


def _hunks(diff: Diff) -> Iterable[str]:
    for hunk in diff.hunks:
        yield f"  {hunk.header}"
        for line in hunk.lines:
            yield f"  {line.op}{visible(line.text.rstrip(chr(10)))}"


def stale_text(stale: str) -> str:
    """The line that marks a pending change approving would refuse (core.review.stale)."""
    return f"  CANNOT BE APPROVED AS SHOWN: {visible(stale, keep_tab=False)}; approving it will be refused: decline it"


def _head(p: Proposal, stale: str = "", sessions: dict[str, str] | None = None) -> str:
    where = f"{p.path} -> {p.dest}" if p.dest else p.path
    # a session in the one short form (sessionids), never a fixed cut
    session = (sessions or {}).get(p.session, p.session) if p.session else ""
    who = (shown_agent(p.agent) if p.agent else p.actor) + (f" [{session}]" if session else "")
    state = "" if p.state == pending.PENDING else f"  [{p.state}{': ' + p.reason if p.reason else ''}]"
    head = f"pending change {p.id}  {_when(p.at)}  {who}  {p.tool}  {where}{state}"
    # one line each, whatever the agent's words, as the question through its client shows them
    out = f"{visible(head, keep_tab=False)}\n  why: {visible(p.why, keep_tab=False)}"
    return out + f"\n{stale_text(stale)}" if stale else out


def staleness(vault: Any, found: Iterable[Proposal], links: dict[int, Links]) -> dict[int, str]:
    """Why each waiting change would be refused if approved now (core.review.stale), by its id: judged
    by the person's settings as they are now, as `approve` judges it."""
    gate: Any = approval.configure(vault)
    if gate.problem is not None:  # the settings file does not parse: every agent's change is refused
        return {p.id: gate.problem for p in found if p.state == pending.PENDING}
    out = {}
    for p in found:
        if p.state == pending.PENDING:
            why = proposal_stale(vault.root_real, p, links.get(p.id, ()), gate, vault)
            if why:
                out[p.id] = why
    return out


def register(cli: CommandLine) -> None:
    """Add `pending`, `approve` and `decline` to the vaultwatch command line."""

    def cmd_pending(args: argparse.Namespace) -> int:
        vault = cli.open_vault(args, load=False)
        store = pending.store_for(vault.root_real)
        found = store.proposals() if args.all else store.pending()
        links, stranded = _link_rewrites(cli, args, found)
        stale = staleness(vault, found, links)
        # among the journal's sessions too: the form `vaultwatch changes` shows and `--session` takes
        forms = sessionids.forms_among(journal_for(vault), (p.session for p in found if p.session))
        for p in found:
            left = stranded.get(p.id, [])
            if args.json:
                row = p.as_json(bytes_too=True)
                row["cautions"] = list(cautions(p.permanent, tuple(left)))
                row["diff"] = diff_text(p, links.get(p.id, ()), left)
                if p.id in stale:
                    row["cannot_apply"] = stale[p.id]
                print(json.dumps(row, ensure_ascii=False))
            else:
                print(_head(p, stale.get(p.id, ""), forms))
                print(diff_text(p, links.get(p.id, ()), left))
        what = "change" if len(found) == 1 else "changes"
        print(f"{len(found)} {'' if args.all else 'pending '}{what} (store: {store.path})", file=sys.stderr)
        for refused in store.refusing():
            print(f"vaultwatch: {refused}", file=sys.stderr)
        # a rule renamed away or misspelled matches nothing; the journal tells this vault's folders apart
        say_rule_notices(vault)
        return 0

    p = cli.sub.add_parser("pending", help="agents' changes waiting for your approval (made while no TUI was open)")
    cli.vault_options(p)
    p.add_argument("--all", action="store_true", help="also those already approved, declined or refused")
    p.add_argument("--json", action="store_true", help="JSON lines, one change per line, with its diff")
    cli.handlers["pending"] = cmd_pending

    def cmd_approve(args: argparse.Namespace) -> int:
        try:
            handed = _at_server(args, {"action": "approve", "id": args.id, "by": person()})
        except pending.ApprovalRefused as exc:
            print(f"vaultwatch: {exc.message}", file=sys.stderr)
            return 1
        if handed is not None:
            done = handed["proposal"]
            ids = ", ".join(str(i) for i in done.get("change_ids", ())) or "none"
            print(
                f"approved pending change {done['id']}: applied as {done.get('agent') or 'the agent'}'s change "
                f"by the vaultwatch serving the vault (pid {handed['pid']}; journal: {ids})"
            )
            if done.get("reason"):
                print(f"  but: {done['reason']}")
            return 0
        vault = cli.open_vault(args)  # loaded: a rename rewrites the links the index knows of
        # the agent's own rules still apply, and the one-shot grant is checked by the gate
        approval.configure(vault)
        try:
            done = pending.approve(vault, args.id, by=person())
        except pending.ApprovalRefused as exc:
            print(f"vaultwatch: {exc.message}", file=sys.stderr)
            return 1
        finally:
            stop = getattr(vault, "stop", None)
            if callable(stop):
                stop()
        ids = ", ".join(str(i) for i in done.change_ids) or "none"
        print(f"approved pending change {done.id}: applied as {done.agent or done.actor}'s change (journal: {ids})")
        if done.reason:
            print(f"  but: {done.reason}")
        return 0

    p = cli.sub.add_parser(
        "approve",
        help="apply an agent's pending change (`vaultwatch pending` lists them)",
        description="apply an agent's pending change (`vaultwatch pending` lists them)",
    )
    p.add_argument("id", type=_pending_id, help="the pending change's id")
    cli.vault_options(p)
    cli.handlers["approve"] = cmd_approve

    def cmd_decline(args: argparse.Namespace) -> int:
        handed = _at_server(args, {"action": "decline", "id": args.id, "by": person(), "reason": args.reason or ""})
        if handed is not None:
            print(f"declined pending change {handed['proposal']['id']}: {handed['proposal'].get('reason', '')}")
            return 0
        vault = cli.open_vault(args, load=False)
        done = pending.decline(vault.root_real, args.id, args.reason or "", by=person())
        print(f"declined pending change {done.id}: {done.reason}")
        return 0

    p = cli.sub.add_parser(
        "decline",
        help="decline an agent's pending change; nothing is changed",
        description="decline an agent's pending change; nothing is changed",
    )
    p.add_argument("id", type=_pending_id, help="the pending change's id")
    cli.vault_options(p)
    p.add_argument("--reason", metavar="TEXT", default=None, help="why (the agent sees it in history)")
    cli.handlers["decline"] = cmd_decline


def _link_rewrites(
    cli: CommandLine, args: argparse.Namespace, found: list[Proposal]
) -> tuple[dict[int, Links], dict[int, list[str]]]:
    """Each waiting rename's link rewrites as approving it now would make them, and the notes whose
    links it would leave pointing at nothing: computed now, from the notes as they are (the rename
    has not happened), with the vault loaded for it (which notes link to what is the index's),
    only when a rename waits."""
    renames = [p for p in found if p.method == "rename" and p.state == pending.PENDING]
    if not renames:
        return {}, {}
    vault = cli.open_vault(args)
    out: dict[int, Links] = {}
    left: dict[int, list[str]] = {}
    try:
        for p in renames:
            try:
                out[p.id] = pending.link_rewrites(vault, p)
                left[p.id] = pending.stranded(vault, p)
            except VaultError as exc:
                out[p.id] = exc.message
    finally:
        stop = getattr(vault, "stop", None)
        if callable(stop):
            stop()
    return out, left


def _at_server(args: argparse.Namespace, request: dict) -> dict | None:
    """The answer of the vaultwatch serving the vault, which decides in its own process (its live
    index, its journal and the agent's session see the change at once); None when none serves it
    (then the decision is made here)."""

    from vaultwatch.mcp_server.remote import person_decides  # noqa: PLC0415
    from vaultwatch.tui.commands.cli import default_vault  # noqa: PLC0415  (cli imports this module)

    root = stored_root(args.vault or default_vault())
    answer = person_decides(root, {**request, "store": pending.pending_path(root)})
    if answer is None or answer["ok"]:
        return answer
    if answer.get("code") == pending.ApprovalRefused.code:
        raise pending.ApprovalRefused(answer["message"])
    raise VaultError(answer["message"])


def _pending_id(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"ID must be a number from `vaultwatch pending`, not {text!r}")
    return int(text)


__all__ = ["diff_text", "register", "stale_text", "staleness"]
