"""The `vaultwatch` console entry point: the TUI by default, plus the subcommands."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from core.clock import Clock, SystemClock, parse_as_of
from core.errors import VaultError
from core.query import SORTS, Query, pairs
from core.serialize import entry_json
from core.vault import Vault, demo_vault_path

Handler = Callable[[argparse.Namespace], int]


def _vault_options(p: argparse.ArgumentParser, positional: bool = True) -> None:
    if positional:
        p.add_argument("vault", nargs="?", default=None,
                       help="vault folder (default: the bundled demo vault)")
    p.add_argument("--as-of", metavar="DATE", default=None,
                   help="judge staleness as of this date (YYYY-MM-DD) instead of today")
    p.add_argument("--okf", choices=["auto", "on", "off"], default="auto",
                   help="OKF semantics: auto (when index.md declares okf_version), on or off")
    p.add_argument("--attachment-exts", metavar="EXTS", default=None,
                   help="comma-separated attachment allowlist, or '*' for all (default: 33 common types)")


def clock_from(args: argparse.Namespace) -> Clock:
    """The clock a command runs with: fixed by --as-of, else the system clock."""
    return parse_as_of(args.as_of) if getattr(args, "as_of", None) else SystemClock()


def open_vault(args: argparse.Namespace, *, load: bool = True) -> Vault:
    """Open (and by default fully load) the vault named on the command line."""
    root = args.vault or str(demo_vault_path())
    vault = Vault(root, clock=clock_from(args), okf_mode=args.okf, attachment_exts=args.attachment_exts)
    if load:
        vault.load()
    return vault


def _parse_filters(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise VaultError(f"--filter {item!r} must look like KEY=VALUE, e.g. --filter status=deprecated")
        out[key] = value
    return out


def cmd_list(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    q = Query(folder=args.folder, recursive=not args.no_recursive, pattern=args.pattern,
              filters=pairs(_parse_filters(args.filter)), include_attachments=args.attachments,
              include_folders=args.folders, sort=args.sort, descending=args.reverse, limit=args.limit,
              cursor=args.cursor)
    res = vault.list(q)
    snap = vault.snapshot
    if args.json:
        for e in res.entries:
            print(json.dumps(entry_json(e, vault.clock, snap.is_bundle), ensure_ascii=False))
        if res.next_cursor:
            print(f"next cursor: {res.next_cursor}", file=sys.stderr)
        return 0
    rows = [entry_json(e, vault.clock, snap.is_bundle, frontmatter=False) for e in res.entries]
    width = min(max((len(r["path"]) for r in rows), default=4), 70)
    print(f"{'PATH':<{width}}  {'KIND':<10}  {'STATUS':<10}  {'STALE':<5}  {'TRUST':<17}  MODIFIED")
    for r in rows:
        stale = "" if r.get("stale") is None else ("yes" if r["stale"] else "no")
        print(f"{r['path'][:width]:<{width}}  {r['kind']:<10}  {(r.get('status') or ''):<10}  {stale:<5}  "
              f"{(r.get('trust_tier') or ''):<17}  {r['modified_at']}")
    more = f"; next page: --cursor {res.next_cursor}" if res.next_cursor else ""
    print(f"{len(rows)} of {res.total} entries{more}", file=sys.stderr)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    data = vault.stats()
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return 0
    print(f"vault               {vault.root}")
    print(f"okf bundle          {'yes' if data['okf_bundle'] else 'no'}")
    for key in ("notes", "attachments", "folders", "stale", "frontmatter_errors", "decode_errors", "skipped"):
        print(f"{key.replace('_', ' '):<20}{data[key]}")
    print("status              " + ", ".join(f"{k} {v}" for k, v in sorted(data["status"].items())))
    print("trust tier          " + ", ".join(f"{k} {v}" for k, v in data["trust_tier"].items()))
    return 0


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The argument parser for every subcommand, and each subcommand's handler."""
    parser = argparse.ArgumentParser(
        prog="vaultwatch",
        description="Watch and triage a Markdown vault while AI agents use it over MCP. "
                    "With no command, opens the TUI on VAULT (default: the bundled demo vault).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Handler] = {}

    p = sub.add_parser("list", help="list notes (and optionally attachments and folders)")
    _vault_options(p)
    p.add_argument("--folder", default=None, help="only this folder and its subfolders; '' for the root level")
    p.add_argument("--no-recursive", action="store_true", help="only the folder's direct children")
    p.add_argument("--pattern", default=None, help="case-sensitive glob on the vault-relative path, e.g. '**/*.md'")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="frontmatter equality (repeatable, ANDed); OKF keys status, stale, trust_tier")
    p.add_argument("--attachments", action="store_true", help="include attachments")
    p.add_argument("--folders", action="store_true", help="include folder entries")
    p.add_argument("--sort", choices=SORTS, default="path", help="sort order (default: path, code-point order)")
    p.add_argument("--reverse", action="store_true", help="reverse the sort order")
    p.add_argument("--limit", type=int, default=None, help="page size (default: everything)")
    p.add_argument("--cursor", default=None, help="continue after a previous page")
    p.add_argument("--json", action="store_true", help="JSON lines, one object per entry")
    handlers["list"] = cmd_list

    p = sub.add_parser("stats", help="counts by kind, status, staleness and trust tier")
    _vault_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    handlers["stats"] = cmd_stats
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    """Run the vaultwatch command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, handlers = build_parser()
    if not argv or (argv[0] not in handlers and argv[0] not in ("-h", "--help")):
        argv = ["list", *argv]  # until the TUI lands, the default view is the listing
    args = parser.parse_args(argv)
    try:
        return handlers[args.command](args)
    except (VaultError, ValueError) as exc:
        print(f"vaultwatch: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
