"""The `vaultwatch` console entry point: the TUI by default, plus the subcommands."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import shutil
import sys
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from vaultwatch.core import settings
from vaultwatch.core.about import version
from vaultwatch.core.clock import Clock, SystemClock, parse_as_of
from vaultwatch.core.disk.storednames import stored_root
from vaultwatch.core.errors import VaultError
from vaultwatch.core.query.listing import SORTS, Query, pairs
from vaultwatch.core.serialize import entry_json
from vaultwatch.core.vault import Vault, demo_vault_path
from vaultwatch.mcp_server.commandline import CommandLine, Handler
from vaultwatch.tui.commands.changes import add_approve_option, apply_approval
from vaultwatch.tui.commands.changes import register as register_changes
from vaultwatch.tui.commands.pending import register as register_pending
from vaultwatch.tui.commands.refusals import register as register_refusals
from vaultwatch.tui.commands.shown import ShownStream, one_line, raw

if TYPE_CHECKING:
    from vaultwatch.core.query.problems import Tally


def _vault_options(p: argparse.ArgumentParser, positional: bool = True) -> None:
    if positional:
        p.add_argument(
            "vault",
            nargs="?",
            default=None,
            help="vault folder (default: [tui] vault in settings.toml, else the bundled demo vault)",
        )
    p.add_argument(
        "--as-of", metavar="DATE", default=None, help="judge staleness as of this date (YYYY-MM-DD) instead of today"
    )
    p.add_argument(
        "--okf",
        choices=["auto", "on", "off"],
        default="auto",
        help="OKF semantics: auto (when index.md declares okf_version), on or off",
    )
    p.add_argument(
        "--attachment-exts",
        metavar="EXTS",
        default=None,
        help="comma-separated attachment allowlist, or '*' for all (default: 43 types, Obsidian's among them)",
    )


def clock_from(args: argparse.Namespace) -> Clock:
    """The clock a command runs with: fixed by --as-of, else the system clock."""
    return parse_as_of(args.as_of) if getattr(args, "as_of", None) else SystemClock()


def default_vault() -> str:
    """The vault opened when none is named: `[tui] vault` of the settings file, else the demo vault."""
    from vaultwatch.tui.settings import load  # noqa: PLC0415

    return load().vault or str(demo_vault_path())


def open_vault(args: argparse.Namespace, *, load: bool = True) -> Vault:
    """Open (and by default fully load) the vault named on the command line."""
    root = args.vault or default_vault()
    vault = Vault(root, clock=clock_from(args), okf_mode=args.okf, attachment_exts=args.attachment_exts)
    vault.nested_allowed = bool(getattr(args, "allow_nested", False))
    apply_approval(args, vault)
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
    overdue_rules = None
    if args.sort == "overdue" and not vault.snapshot.is_bundle:
        from vaultwatch.core.review import triageviews  # noqa: PLC0415

        # off a bundle the STALE column's days are by the person's stale keys: sort by the same
        overdue_rules = triageviews.rules_for(vault).rules
    q = Query(
        folder=args.folder,
        recursive=not args.no_recursive,
        pattern=args.pattern,
        filters=pairs(_parse_filters(args.filter)),
        include_attachments=args.attachments,
        include_folders=args.folders,
        sort=args.sort,
        descending=args.reverse,
        limit=args.limit,
        cursor=args.cursor,
        overdue_rules=overdue_rules,
    )
    res = vault.list(q)
    snap = vault.snapshot
    if not res.total:  # a folder that is not there, a glob that cannot match: say so, not "0 entries"
        from vaultwatch.core.query.listing import why_empty  # noqa: PLC0415

        why = why_empty(snap, q)
        if why is not None:
            raise VaultError(f"{vault.root}: {why}")
    if args.json:
        for e in res.entries:
            print(json.dumps(entry_json(e, vault.clock, snap.is_bundle), ensure_ascii=False))
        if res.next_cursor:
            print(f"next cursor: {res.next_cursor}", file=sys.stderr)
        return 0
    rows = _table_rows(vault, res.entries)
    # a column no row of this listing fills is left out; the others are as wide as their widest cell
    cols = ["KIND", *(c for c in _OPTIONAL if any(row[c] for row in rows)), "MODIFIED"]
    widths = {c: min(max((_cells(row[c]) for row in rows), default=0), _MOST.get(c, 99)) for c in cols}
    widths = {c: max(w, len(c)) for c, w in widths.items()}
    longest = max((_cells(row["PATH"]) for row in rows), default=4)
    if sys.stdout.isatty():  # a person's terminal: its width (shutil honours COLUMNS), paths cut visibly
        room = shutil.get_terminal_size().columns - sum(w + 2 for w in widths.values())
        width = max(min(longest, room), 24)
    else:  # piped: whole paths, for a script or a copy
        width = max(longest, 4)
    widths = {"PATH": width, **widths}
    print("  ".join(_pad(c, w) for c, w in widths.items()).rstrip())
    for row in rows:
        print("  ".join(_pad(_cut(row[c], w), w) for c, w in widths.items()).rstrip())
    more = f"; next page: --cursor {res.next_cursor}" if res.next_cursor else ""
    print(f"{len(rows)} of {res.total} entries{more}", file=sys.stderr)
    return 0


_MOST = {"STATUS": 16}  # a longer status is cut (visibly): the path keeps the room
_OPTIONAL = ("STATUS", "STALE", "TRUST")
# the trust words of the TUI's Notes list (tui/widgets/doclist.py) off a bundle: the change journal's two
_JOURNAL_WORDS = {"unverified": "unreviewed", "human-reviewed": "reviewed"}


def _table_rows(vault: Vault, entries: Sequence[Any]) -> list[dict[str, str]]:
    """The table's cells, as the TUI's Notes list says them for the same notes, from the same core
    functions (core.review.triageviews): the status a note declares (its OKF status on a bundle; a
    link by its text; `broken` for frontmatter that does not parse, outside the templates folders), the
    days its stale date is past by the person's triage rules (OKF's `stale_after` on a bundle) and
    its trust (a bundle's `verified:` tier, else the change journal's review)."""
    from vaultwatch.core.query import problems  # noqa: PLC0415
    from vaultwatch.core.review import triageviews  # noqa: PLC0415

    snap, clock = vault.snapshot, vault.clock
    bundle = snap.is_bundle
    rules = triageviews.rules_for(vault).rules
    found = triageviews.reviews(vault)
    templates = problems.template_folders(vault.root)
    out = []
    for e in entries:
        row = {"PATH": one_line(e.path), "KIND": e.kind, "STATUS": "", "STALE": "", "TRUST": ""}
        row["MODIFIED"] = e.modified_at
        if e.kind == "note":
            row["STATUS"] = one_line(triageviews.status_shown(e, bundle, templates))
            days = triageviews.overdue_days(e, snap, rules, clock)
            row["STALE"] = "" if days is None else f"{days}d"
            word = triageviews.trust_word(e, snap, found)
            if word == triageviews.CHANGED_SINCE_REVIEW:  # as the Notes list says it; the preview in full
                row["TRUST"] = "changed"
            else:  # a bundle's tier as its `verified:` and the filters name it
                row["TRUST"] = word if bundle else _JOURNAL_WORDS.get(word, "")
        out.append(row)
    return out


def _cells(text: str) -> int:
    """Terminal cells `text` takes: wide characters two, combining marks none."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _cells(text))


def _cut(path: str, width: int) -> str:
    """`path` within `width` cells; a cut one keeps its start and its end (the note's name) around an
    ellipsis, so that it never reads as whole."""
    if _cells(path) <= width:
        return path
    tail_room = (width - 1) * 2 // 3
    head_room = width - 1 - tail_room
    head, tail = "", ""
    for c in path:
        if _cells(head + c) > head_room:
            break
        head += c
    for c in reversed(path):
        if _cells(c + tail) > tail_room:
            break
        tail = c + tail
    return f"{head}…{tail}"


def _person_triage(vault: Vault) -> dict[str, Any]:
    """Off an OKF bundle: what the TUI's Deprecated, Stale and Trust tabs hold, by the person's
    triage rules and the change journal, from the views the tabs and the agents' `triage` tool
    share (core.review.triageviews)."""
    from vaultwatch.core.review import triageviews  # noqa: PLC0415

    person = triageviews.rules_for(vault)
    snap, found = vault.snapshot, triageviews.reviews(vault)
    counts = triageviews.counts(snap, person.rules, found, vault.clock)
    out: dict = {"source": person.rules.source}
    for kind in (*triageviews.JOURNAL_TIERS, "deprecated", "stale"):
        out[kind] = counts[kind]
        out[f"{kind}_rule"] = triageviews.rule(snap, kind, person, found)
    return out


def cmd_stats(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    snap = vault.snapshot
    data = vault.stats(snap)
    from vaultwatch.core.query import problems  # noqa: PLC0415

    # the Broken tab's number, which the frontmatter, decode and skip counts are only parts of
    found = problems.vault_tally(snap, vault.root)
    data["broken"] = found.as_json()
    if not data["okf_bundle"]:
        data["triage"] = _person_triage(vault)
    else:  # the tiers as the Trust tab and agents' `triage` count them (core.review.triageviews)
        from vaultwatch.core.review import triageviews  # noqa: PLC0415

        data["trust_tier"] = triageviews.bundle_tier_counts(snap, data["trust_tier"], triageviews.reviews(vault))
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return 0
    print(f"vault               {vault.root}")
    print(f"okf bundle          {'yes' if data['okf_bundle'] else 'no'}")
    bundle = data["okf_bundle"]  # OKF's status, staleness and trust tiers apply to bundles only
    for key in ("notes", "attachments", "folders", "stale", "frontmatter_errors", "decode_errors", "skipped"):
        if key != "stale" or bundle:
            print(f"{key.replace('_', ' '):<20}{data[key]}")
    print(f"{'broken':<20}{_problems_line(found, kinds=True)}")
    if not bundle:
        print(
            "okf fields          not counted: status, stale and trust tier apply to OKF bundles "
            "(a root index.md with okf_version)"
        )
        triage = data["triage"]
        shown = {"unverified": "unreviewed", "human-reviewed": "reviewed"}  # as the Trust tab's tier bar
        for kind in ("deprecated", "stale", "unverified", "human-reviewed"):
            print(f"{'triage ' + shown.get(kind, kind):<20}{triage[kind]}  ({triage[kind + '_rule']})")
        return 0
    print("status              " + ", ".join(f"{k} {v}" for k, v in sorted(data["status"].items())))
    print("trust tier          " + ", ".join(f"{k} {v}" for k, v in data["trust_tier"].items()))
    return 0


def _progress_bar(done: int, total: int, what: str, width: int = 30) -> str:
    frac = done / total if total else 1.0
    filled = int(frac * width)
    return f"\r{what} [{'#' * filled}{'.' * (width - filled)}] {frac:4.0%} {done}/{total} notes"


def _search_args(args: argparse.Namespace) -> dict:
    out = {"query": args.query, "limit": args.limit}
    for key in ("folder", "pattern", "cursor", "mode"):
        if getattr(args, key, None) is not None:
            out[key] = getattr(args, key)
    filters = _parse_filters(args.filter)
    if filters:
        out["filters"] = filters
    return out


def _remote_search(args: argparse.Namespace) -> dict | None:
    """The answer of the vaultwatch already serving this vault, or None (then search here)."""
    if args.local or args.no_recursive or getattr(args, "as_of", None) or getattr(args, "okf", "auto") != "auto":
        return None  # options the running server does not take per call

    from vaultwatch.mcp_server.remote import RemoteError, call_tool

    root = stored_root(args.vault or default_vault())
    try:
        return call_tool(root, "search", _search_args(args))
    except RemoteError as exc:
        raise VaultError(str(exc)) from None


def _print_hits(rows: list[dict], as_json: bool) -> None:
    if as_json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return
    for i, row in enumerate(rows, 1):
        print(f"{i:>3}. {row['path']}  ({row['score']:.3f})")
        print(f"     {row['snippet']}")
        if row.get("duplicates"):
            print(f"     also: {', '.join(row['duplicates'])}")


def _summary(returned: int, total: int | None, match: str, mode: str, next_cursor: str | None, where: str) -> None:
    more = f"; next page: --cursor {next_cursor}" if next_cursor else ""
    of = "" if total is None else f" of {total}"
    how = (
        " (too few notes had every word: notes with any of them, ranked)"
        if match == "any" and mode == "keyword"
        else ""
    )
    print(f"{returned}{of} matching notes{how}; {mode} search{where}{more}", file=sys.stderr)


def _query_is_a_vault(args: argparse.Namespace) -> None:
    """`vaultwatch search FOLDER` with no words: the folder was read as the query, to be searched for
    in the default vault. Refuse it, naming that vault and both ways to say what was meant."""
    import os  # noqa: PLC0415

    if args.vault is not None or not os.path.isdir(args.query):
        return
    root = default_vault()
    raise VaultError(
        f"{args.query!r} is a folder and no vault was named, so it would be the query, searched for in "
        f"the default vault {root}: name the vault, then the words (vaultwatch search "
        f"{shlex.quote(args.query)} WORDS), or search the default vault for it by naming that vault "
        f"(vaultwatch search {shlex.quote(root)} {shlex.quote(args.query)})"
    )


def cmd_search(args: argparse.Namespace) -> int:
    _query_is_a_vault(args)
    remote = _remote_search(args)
    if remote is not None:
        rows = remote.get("result", [])
        if args.json:
            rows = [{k: v for k, v in r.items() if k != "tags"} for r in rows]
        _print_hits(rows, args.json)
        _summary(
            len(rows),
            remote.get("total"),
            remote.get("match", "all"),
            remote.get("mode", "keyword"),
            remote.get("next_cursor"),
            _default_named(args) + " (answered by the running vaultwatch)",
        )
        return 0
    vault = open_vault(args)
    try:
        status = vault.search_status
        _wait_with_bar(
            vault.wait_search_ready,
            lambda: (status().done, status().total, status().problem),
            "building the search index",
        )
        res = vault.search(
            args.query,
            folder=args.folder,
            recursive=False if args.no_recursive else None,
            pattern=args.pattern,
            filters=pairs(_parse_filters(args.filter)),
            limit=args.limit,
            cursor=args.cursor,
            count=True,
            mode=args.mode,
            wait=600.0 if args.mode not in (None, "keyword") else 0.0,
        )
    finally:
        vault.stop()
    bundle = vault.snapshot.is_bundle
    rows = []
    for hit in res.hits:
        row = hit.as_json()
        okf_row = entry_json(hit.entry, vault.clock, bundle, frontmatter=False)
        row.update({k: okf_row[k] for k in ("status", "stale", "trust_tier") if k in okf_row})
        rows.append(row)
    _print_hits(rows, args.json)
    _summary(len(res.hits), res.total, res.match, res.mode, res.next_cursor, _default_named(args))
    return 0


def _default_named(args: argparse.Namespace) -> str:
    """The summary's word on the vault searched when none was named: the default one, by its path."""
    return "" if args.vault is not None else f" in the default vault {default_vault()}"


def _wait_with_bar(
    ready: Callable[[float], bool], status: Callable[[], tuple[int, int, str | None]], what: str
) -> None:
    """Wait for ready() (polled every half second), with a progress bar on a terminal's stderr."""
    last = -1
    while not ready(0.5):
        done, total, problem = status()
        if problem:
            raise VaultError(problem)
        if done != last and sys.stderr.isatty():
            print(_progress_bar(done, total, what), end="", file=raw(sys.stderr))
            last = done
    if last >= 0 and sys.stderr.isatty():
        print(_progress_bar(1, 1, what)[: -len("1/1 notes")] + "done", file=raw(sys.stderr))


def cmd_similar(args: argparse.Namespace) -> int:
    """Notes like one note, nearest by meaning (the `similar` tool; needs vaultwatch[semantic])."""
    call = {"path": args.path, "limit": args.limit}
    if args.folder is not None:
        call["folder"] = args.folder
    if not args.local and not getattr(args, "as_of", None) and getattr(args, "okf", "auto") == "auto":
        from vaultwatch.mcp_server.remote import RemoteError, call_tool

        root = stored_root(args.vault or str(demo_vault_path()))
        try:
            remote = call_tool(root, "similar", call)
        except RemoteError as exc:
            raise VaultError(str(exc)) from None
        if remote is not None:
            rows = remote.get("result", [])
            if args.json:
                rows = [{k: v for k, v in r.items() if k != "tags"} for r in rows]
            _print_hits(rows, args.json)
            print(f"{len(rows)} notes like {args.path} (answered by the running vaultwatch)", file=sys.stderr)
            return 0
    vault = open_vault(args)
    try:
        vectors = vault.start_vectors()
        if vectors is None:
            raise VaultError(
                "similar needs semantic search: install vaultwatch[semantic] (or unset VAULTWATCH_SEMANTIC=0)"
            )
        search = vault.start_search()
        _wait_with_bar(
            vault.wait_search_ready, lambda: (search.done, search.total, search.problem), "building the search index"
        )
        _wait_with_bar(
            vectors.wait_ready, lambda: (vectors.done, vectors.total, vectors.problem), "computing note vectors"
        )
        res = vault.similar(args.path, folder=args.folder, limit=args.limit)
    finally:
        vault.stop()
    rows = [hit.as_json() for hit in res.hits]
    _print_hits(rows, args.json)
    print(f"{len(rows)} notes like {res.query}", file=sys.stderr)
    return 0


def cmd_links(args: argparse.Namespace) -> int:
    if args.path is None and not args.broken:
        if args.vault is None:
            print(
                "vaultwatch links: give a note's path, or --broken for every problem in the vault",
                file=sys.stderr,
            )
            return 2
        args.path, args.vault = args.vault, None  # `links NOTE` on the demo vault
    vault = open_vault(args)
    if args.broken:
        return _broken_links(vault, args.json)
    from vaultwatch.core.query import problems

    report = vault.links(args.path)
    # in the words of `--broken` (core.query.problems): a link to a note not yet written is
    # not breakage, a missing heading, block or embedded file is
    kinds = [problems.link_problem(r).kind for r in report.broken]
    if args.json:
        data = report.as_json()
        for row, kind in zip(data["broken"], kinds, strict=True):
            row["problem"] = kind
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return 0
    print(f"{report.path}")
    print(f"outgoing ({len(report.outgoing)}):")
    for r in report.outgoing:
        shown = r.link.target + (f"#{r.link.heading}" if r.link.heading else "")
        problem = problems.link_problem(r).kind if r.broken else None
        if problem is None:
            where = r.target or ""
        elif problem == problems.UNWRITTEN:
            where = problems.LABELS[problem]
        else:
            where = (f"{r.target}  " if r.target else "") + f"BROKEN: {problems.LABELS[problem]}"
        print(f"  {r.link.kind:<8} {shown}  ->  {where}")
    sources: dict[str, int] = {}
    for r in report.backlinks:
        sources[r.source] = sources.get(r.source, 0) + 1
    print(f"backlinks ({len(sources)} notes):")
    for source, n in sources.items():
        print(f"  {source}" + (f"  (x{n})" if n > 1 else ""))
    unwritten = kinds.count(problems.UNWRITTEN)
    print(f"broken ({len(kinds) - unwritten})")
    if unwritten:
        print(f"{problems.LABELS[problems.UNWRITTEN]} ({unwritten})")
    return 0


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _broken_links(vault: Vault, as_json: bool) -> int:
    """Every problem of the vault, one a line, by kind (core.query.problems, the TUI's Broken
    tab's query): missing headings, blocks and embeds, invalid frontmatter, undecodable notes,
    skipped files, then links to notes not written yet (not breakage: not counted as broken)."""
    from vaultwatch.core.query import problems

    found = problems.locate(vault.root_real, problems.vault_problems(vault.snapshot, vault.root))
    if as_json:
        for p in found:
            print(json.dumps(p.as_json(), ensure_ascii=False))
    else:
        for kind, n in problems.counts(found).items():
            print(f"{problems.LABELS[kind]} ({n})")
            for p in found:
                if p.kind == kind:
                    print(f"  {p.path}" + (f":{p.line}" if p.line else "") + f"  {p.message}")
    print(_problems_line(problems.tally(found)), file=sys.stderr)
    return 0


def _problems_line(found: Tally, *, kinds: bool = False) -> str:
    """How much is broken, in the Broken tab's count (`links --broken`'s last line, `stats`), with
    how many of each kind when `kinds`."""
    from vaultwatch.core.query.problems import LABELS  # noqa: PLC0415

    line = f"{found.broken} problem{'' if found.broken == 1 else 's'} in {_files(found.files)}"
    if kinds and found.by_kind:
        line += " (" + " · ".join(f"{n} {LABELS[kind]}" for kind, n in found.by_kind.items()) + ")"
    return line + (f"; {found.unwritten} links to notes not yet written" if found.unwritten else "")


def _tui_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--socket",
        metavar="PATH",
        default=None,
        help="serve MCP on this Unix socket (default: one per vault under $XDG_RUNTIME_DIR/vaultwatch/)",
    )
    p.add_argument("--no-mcp", action="store_true", help="do not serve MCP (the TUI only)")
    p.add_argument(
        "--compat",
        metavar="SETS",
        default="",
        help="also serve compatibility tools, comma-separated: vault-cortex,obsidian-mcp",
    )
    p.add_argument("--read-only", action="store_true", help="serve no write tools to agents")
    p.add_argument("--audit-log", metavar="PATH", default=None, help="append every agent call to PATH as JSON lines")
    p.add_argument(
        "--http", metavar="127.0.0.1:PORT", default=None, help="also serve MCP over loopback HTTP with a bearer token"
    )
    p.add_argument("--no-watch", action="store_true", help="do not follow outside edits")
    p.add_argument("--theme", default=None, help="a Textual theme name, e.g. textual-light, nord, gruvbox")
    add_approve_option(p)
    from vaultwatch.mcp_server.cli import add_server_options  # noqa: PLC0415  (--max-answer-bytes, --tool-prefix)

    add_server_options(p)


MALLOC_ARENAS = 2  # the TUI's glibc arenas (core.memory.limit_malloc_arenas): 16 MB less at 100k notes
# glibc's mmap threshold, fixed (core.memory.fix_mmap_threshold): blocks from 4 MB up are mapped
# apart and unmapped when freed. A first launch at 100k notes (bench_tui --first-launches, 2 runs
# each): settled 328.9, 327.3 -> 324.8, 325.2 MB; after the TUI's and an agent's searches 355.1,
# 350.8 -> 344.5, 347.5 MB. Warm launches unchanged (after searches 326.4-333.0 MB). 1 MB did no
# better; queries by meaning were no slower (p50 12.4, 12.6 ms against 13.5, 13.6 by default)
MMAP_THRESHOLD = 4 << 20


def cmd_tui(args: argparse.Namespace) -> int:
    from vaultwatch.mcp_server.cli import server_options  # noqa: PLC0415
    from vaultwatch.tui.app import make_app  # noqa: PLC0415  (textual loads only for the TUI)
    from vaultwatch.tui.config import AppConfig  # noqa: PLC0415

    try:
        options = server_options(args)
    except ValueError as exc:
        print(f"vaultwatch: {exc}", file=sys.stderr)
        return 2
    from vaultwatch.core.memory import fix_mmap_threshold, limit_malloc_arenas  # noqa: PLC0415

    limit_malloc_arenas(MALLOC_ARENAS)  # before the load, the watcher and the MCP server start threads
    fix_mmap_threshold(MMAP_THRESHOLD)
    vault = open_vault(args, load=False)  # the app loads it in the background
    config = AppConfig(
        server_options=options,
        allow_nested=args.allow_nested,
        mcp=not args.no_mcp,
        watch=not args.no_watch,
        socket_path=args.socket,
        compat=frozenset(c.strip() for c in args.compat.split(",") if c.strip()),
        read_only=args.read_only,
        audit_log=args.audit_log,
        http=args.http,
        theme=args.theme,
    )
    make_app(vault, config=config).run()
    return 0


def _scope_options(p: argparse.ArgumentParser, pattern_example: str = "") -> None:
    """The options that narrow `list` and `search` alike (one Query scope, see cmd_list)."""
    p.add_argument("--folder", default=None, help="only this folder and its subfolders; '' for the root level")
    p.add_argument("--no-recursive", action="store_true", help="only the folder's direct children")
    p.add_argument("--pattern", default=None, help="case-sensitive glob on the vault-relative path" + pattern_example)
    p.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="frontmatter equality (repeatable, ANDed); OKF keys status, stale, trust_tier",
    )


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The argument parser for every subcommand, and each subcommand's handler."""
    parser = argparse.ArgumentParser(
        prog="vaultwatch",
        description="Watch and triage a Markdown vault while AI agents use it over MCP. "
        "With no command, opens the TUI on VAULT (default: the bundled demo vault).",
    )
    parser.add_argument("--version", action="version", version=f"vaultwatch {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Handler] = {}

    p = sub.add_parser("list", help="list notes (and optionally attachments and folders)")
    _vault_options(p)
    _scope_options(p, pattern_example=", e.g. '**/*.md'")
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

    p = sub.add_parser("search", help="full-text search (ranked, with snippets) scoped like list")
    _vault_options(p)
    p.add_argument("query", help='words, "phrases", prefix* and -excluded words')
    _scope_options(p)
    p.add_argument("--limit", type=int, default=20, help="hits per page (default 20, at most 500)")
    p.add_argument("--cursor", default=None, help="continue after a previous page")
    p.add_argument(
        "--mode",
        choices=("hybrid", "keyword", "semantic"),
        default=None,
        help="hybrid/semantic need vaultwatch[semantic] (default: hybrid when a running vaultwatch "
        "has note vectors, else keyword)",
    )
    p.add_argument(
        "--local", action="store_true", help="search in this process even when a running vaultwatch serves the vault"
    )
    p.add_argument("--json", action="store_true", help="JSON lines, one object per hit")
    handlers["search"] = cmd_search

    p = sub.add_parser("similar", help="notes like one note, nearest by meaning (needs vaultwatch[semantic])")
    _vault_options(p)
    p.add_argument("path", help="vault-relative path of the note, e.g. 'Projects/Atlas Migration.md'")
    p.add_argument("--folder", default=None, help="only notes in this folder and its subfolders")
    p.add_argument("--limit", type=int, default=10, help="notes to show (default 10, at most 100)")
    p.add_argument("--local", action="store_true", help="compute here even when a running vaultwatch serves the vault")
    p.add_argument("--json", action="store_true", help="JSON lines, one object per note")
    handlers["similar"] = cmd_similar

    p = sub.add_parser(
        "links",
        help="outgoing links, backlinks and broken links of one note, or (--broken) every problem in the vault",
    )
    _vault_options(p)
    p.add_argument(
        "path", nargs="?", default=None, help="vault-relative path of the note, e.g. 'Projects/Atlas Migration.md'"
    )
    p.add_argument(
        "--broken",
        action="store_true",
        help="list every problem: missing headings, blocks and embeds, invalid frontmatter, links to notes not yet written",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    handlers["links"] = cmd_links

    p = sub.add_parser("tui", help="open the TUI and serve MCP on the vault's socket (the default command)")
    _vault_options(p)
    _tui_options(p)
    handlers["tui"] = cmd_tui

    from vaultwatch.mcp_server.cli import register as register_mcp

    commands = CommandLine(sub, handlers, _vault_options, open_vault)
    register_mcp(commands)
    register_changes(commands)
    register_pending(commands)
    register_refusals(commands)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "commands and their options (`vaultwatch COMMAND --help` explains each):\n" + "\n".join(
        "  " + " ".join(cp.format_usage().split()[1:]) for cp in sub.choices.values()
    )
    return parser, handlers


# commands whose streams are not for reading: the TUI's terminal, and the protocol on serve's and
# bridge's stdout. Every other command's output passes through ShownStream.
OWN_STREAMS = frozenset({"tui", "serve", "bridge"})

# core's errors name the MCP tool that shows what exists (agents read them); a person at the
# prompt needs the command that does
_LIST_HINT = "list_documents shows what exists"


def _in_cli_words(message: str, args: argparse.Namespace) -> str:
    """An error's message with its pointer to the MCP listing tool made `vaultwatch list`."""
    if _LIST_HINT not in message:
        return message
    vault = getattr(args, "vault", None)
    command = "vaultwatch list" + (f" {shlex.quote(vault)}" if vault else "")
    return message.replace(_LIST_HINT, f"`{command}` shows what exists")


def _mistyped_command(word: str, handlers: dict) -> bool:
    """Whether `word`, first on the command line, reads as a command that does not exist rather than
    a vault folder: a plain word (no path separator, not an option) naming nothing on disk."""
    return (
        word not in handlers
        and not word.startswith(("-", "~", "."))
        and os.sep not in word
        and "/" not in word
        and not os.path.exists(word)
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the vaultwatch command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, handlers = build_parser()
    if argv and _mistyped_command(argv[0], handlers):
        near = difflib.get_close_matches(argv[0], sorted(handlers), n=1)
        hint = f"did you mean `vaultwatch {near[0]}`? " if near else ""
        print(
            f"vaultwatch: {argv[0]!r} is no command, and no folder of that name is here: {hint}"
            f"`vaultwatch --help` lists the commands (an agent's tool such as `history` is not one: "
            "`vaultwatch changes` lists the journal)",
            file=sys.stderr,
        )
        return 2
    if not argv or (argv[0] not in handlers and argv[0] not in ("-h", "--help")):
        argv = ["tui", *argv]  # no command (or a VAULT path first): the TUI
    args = parser.parse_args(argv)
    streams = sys.stdout, sys.stderr
    if args.command not in OWN_STREAMS:
        sys.stdout, sys.stderr = ShownStream(sys.stdout), ShownStream(sys.stderr)
    try:
        for problem in settings.problems():  # a mistyped variable is said, not silently ignored
            print(f"vaultwatch: {problem}", file=sys.stderr)
        return handlers[args.command](args)
    except (VaultError, ValueError) as exc:
        print(f"vaultwatch: {_in_cli_words(str(exc), args)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    finally:
        sys.stdout, sys.stderr = streams


if __name__ == "__main__":
    sys.exit(main())
