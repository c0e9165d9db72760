"""Render docs/benchmarks.md from the saved benchmark results (bench/results/*.json).

    python -m bench.report            write docs/benchmarks.md
    python -m bench.report --check    exit 1 if docs/benchmarks.md differs from what the results render

The results come from `python -m bench.run_all --save [NAME ...]` (`python3 dev.py bench --save`):
one file per recipe of bench/run_all.py, each with its machine, date and command. Every row of the
page is declared once below (ROWS, PEER_ROWS): its label, the result file and JSON keys it reads, how
it shows them and its target. A key that is missing (a benchmark renamed it) stops the render with
the row, file and key named: the page never shows a stale or silently dropped figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import AS_OF

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DOC = ROOT / "docs" / "benchmarks.md"


class MissingKey(LookupError):
    """A row's key that its result file does not hold."""


@dataclass(frozen=True)
class Row:
    """One line of the table: `what` it measures, read from result file `source` at `keys` (dotted
    paths; `*` takes every item of a list or dict, `field=value` the list items whose field has that
    JSON value), shown by `show` (a format string over the keys' values in order, or a function of
    them), against `target`."""

    what: str
    source: str
    keys: tuple[str, ...]
    show: str | Callable[..., str]
    target: str


def lookup(data: Any, path: str) -> Any:
    """The value at dotted `path`; a list where the path has a `*` or a `field=value` filter."""
    return _walk(data, path.split("."), path)


def _walk(node: Any, parts: list[str], path: str) -> Any:
    if not parts:
        return node
    part, rest = parts[0], parts[1:]
    if part == "*" or ("=" in part and isinstance(node, list)):
        items = list(node.values()) if isinstance(node, dict) else node
        if not isinstance(items, list):
            raise MissingKey(f"{path}: {part!r} needs a list or a mapping")
        if part != "*":
            field, want = part.split("=", 1)
            items = [i for i in items if isinstance(i, dict) and json.dumps(i.get(field)) == want]
            if not items:
                raise MissingKey(f"{path}: no item with {part}")
        return [_walk(item, rest, path) for item in items]
    if isinstance(node, dict) and part in node:
        return _walk(node[part], rest, path)
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return _walk(node[int(part)], rest, path)
    raise MissingKey(f"{path}: no {part!r}")


def span(values: Sequence[float | None], spec: str) -> str:
    """'low–high' of the measured values (one value when they agree); unmeasured ones (None) left out."""
    have = sorted(v for v in values if v is not None)
    if not have:
        return "not measured"
    low, high = format(have[0], spec), format(have[-1], spec)
    return low if low == high else f"{low}–{high}"


def _kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB"


# fmt: off
ROWS: tuple[Row, ...] = (
    Row("cold index, 100k notes (no entry cache; files in the page cache)", "core",
        ("results.100000.cold_index_s",), "{0:.2f} s", "≤ 6 s"),
    Row("cold index, 10k notes", "core", ("results.10000.cold_index_s",), "{0:.3f} s", "≤ 0.8 s"),
    Row("warm start, 100k, to a complete listing", "core",
        ("results.100000.warm_start_s", "results.100000.warm_start_parsed"), "{0:.2f} s ({1:,} notes parsed)",
        "≤ 1.0 s"),
    Row("filtered listings over 100k, p50 (all, folder, pattern, status, stale, tag, attachments, page of 100)",
        "core", ("results.100000.queries.*.p50_ms",), lambda p50: f"{span(p50, '.3g')} ms", "≤ 30 ms"),
    Row("peak RSS after indexing 100k", "core", ("results.100000.peak_rss_mb",), "{0:.1f} MB", "≤ 300 MB"),
    Row("realistic notes (2–20 KB) against vaultgen's, parse cost per KB", "parse",
        ("realistic_per_kb_over_plain", "plain.parse_us_per_note", "realistic.parse_us_per_note"),
        "{0:.2f}× ({1:.1f} µs a plain note, {2:.1f} µs a realistic one)", "≤ 2×"),
    Row("outside edit → visible in listing / search, p95, 100k", "live",
        ("live.edit_visible_in_listing_ms.p95", "live.edit_visible_in_search_ms.p95"), "{0:.0f} / {1:.0f} ms",
        "≤ 300 ms"),
    Row("file burst absorbed, listing / listing + search, 100k", "live",
        ("live.burst.files", "live.burst.absorbed_in_listing_s", "live.burst.absorbed_in_listing_and_search_s"),
        "{1:.1f} s / {2:.1f} s ({0:,} files)", "≤ 5 s"),
    Row("full-text index built cold, 100k", "search", ("scale.fts_build_s", "scale.index_bytes_per_note_byte"),
        "{0:.2f} s; {1:.3f} index bytes per note byte", "≤ 15 s, ≤ 1.2"),
    Row("keyword search p50 (p95), 100k", "search", ("scale.keyword_search_ms.p50", "scale.keyword_search_ms.p95"),
        "{0:.2f} ms ({1:.1f} ms)", "≤ 10 ms (≤ 50 ms)"),
    Row("hybrid / semantic search p50, 100k (semantic extra)", "search",
        ("scale.hybrid_search_ms.p50", "scale.semantic_search_ms.p50"), "{0:.1f} / {1:.2f} ms", "hybrid ≤ 30 ms"),
    Row("note vectors for 100k notes: built in the background / RSS added when ready", "search",
        ("scale.vectors_build_s", "scale.vectors_rss_added_mb"), "{0:.1f} s / +{1:.0f} MB", "≤ 60 s / ≤ 80 MB"),
    Row("judged query set, hit@3 / MRR@10: keyword, hybrid, semantic", "search",
        ("quality.keyword.queries", "quality.keyword.hit@3", "quality.keyword.mrr@10", "quality.hybrid.hit@3",
         "quality.hybrid.mrr@10", "quality.semantic.hit@3", "quality.semantic.mrr@10"),
        "{1:.3f} / {2:.3f}, {3:.3f} / {4:.3f}, {5:.3f} / {6:.3f} ({0} queries)", "no drop"),
    Row("MCP page of 100 at 100k, p50 (p95) (raw client: the server and the wire)", "mcp",
        ("raw_v100k.page100.p50_ms", "raw_v100k.page100.p95_ms"), "{0:.2f} ms ({1:.2f} ms)", "≤ 5 ms"),
    Row("MCP status=deprecated at 10k, p50 (raw / SDK client)", "mcp",
        ("raw_v10k.deprecated_unpaged.p50_ms", "legacy_v10k.deprecated_unpaged.p50_ms"), "{0:.0f} / {1:.0f} ms",
        "≤ 40 ms"),
    Row("10 agents × 100 calls at 10k, p95; errors (raw client / SDK clients as ten processes, as agents are / "
        "ten SDK clients sharing one process's CPU)", "mcp",
        ("raw_v10k.agents_10x100.p95_ms", "legacy_v10k.agents_10x100_processes.p95_ms",
         "legacy_v10k.agents_10x100.p95_ms", "raw_v10k.agents_10x100.errors",
         "legacy_v10k.agents_10x100_processes.errors", "legacy_v10k.agents_10x100.errors"),
        "{0:.0f} / {1:.0f} / {2:.0f} ms; {3} / {4} / {5} errors", "≤ 50 ms; 0"),
    Row("vaultwatch alone over stdio at 100k (bench_peers): whole listing in default / 1,000-row pages; search p50; "
        "read p50; peak RSS of the process tree", "peers_100k",
        ("figures.whole_listing_ms (p50).vaultwatch.p50", "figures.whole_listing_limit_ms (p50).vaultwatch.p50",
         "figures.search_ms (p50).vaultwatch.p50", "figures.read_ms (p50).vaultwatch.p50",
         "figures.peak_rss_mb (max).vaultwatch.max"),
        "{0:,.0f} / {1:,.0f} ms; {2:.2f} ms; {3:.2f} ms; {4:.0f} MB", "≤ 2,500 ms; ≤ 8 ms; ≤ 1.5 ms; ≤ 300 MB"),
    Row("the same: spawn → complete listing, warm / cold (the floor: one process walking, reading and parsing every "
        "note)", "peers_100k",
        ("figures.spawn_to_listing_warm_s (p50).vaultwatch.p50", "figures.spawn_to_listing_cold_s (p50).vaultwatch.p50",
         "floor_median_s"), "{0:.2f} / {1:.2f} s (floor {2:.2f} s)", "≤ 1.2× the floor"),
    Row("the same: the Python client alone on vaultwatch's answers (recorded, then replayed at once): whole listing "
        "in default / 1,000-row pages; spawn → complete listing", "peers_100k",
        ("client_floor.whole_listing_ms", "client_floor.whole_listing_limit_ms",
         "client_floor.spawn_to_listing_warm_s"), "{0:,.0f} / {1:,.0f} ms; {2:.2f} s", "the client's floor"),
    Row("the whole 10k listing from vaultwatch over stdio (its answers replayed at once: the client's own cost), "
        "by client: the official TypeScript SDK in default / 1,000-row pages; the Python SDK in default pages",
        "floor",
        ("median.ts_vaultwatch_default_ms", "median.ts_vaultwatch_limit_ms", "median.ts_replay_default_ms",
         "median.python_vaultwatch_default_ms", "median.python_replay_default_ms"),
        "TypeScript {0:.0f} / {1:.0f} ms (replayed {2:.0f} ms); Python {3:.0f} ms (replayed {4:.0f} ms)",
        "≤ 213 ms"),
    Row("the same client spawning vaultwatch at 10k → its complete listing: warm (the replay spawned: the "
        "client's own cost) / cold (the floor: one process walking, reading and parsing every note)", "floor",
        ("median.ts_vaultwatch_spawn_warm_s", "median.ts_replay_spawn_warm_s", "median.ts_vaultwatch_spawn_cold_s",
         "median.floor_s"), "TypeScript {0:.2f} s (replayed {1:.2f} s) / {2:.2f} s (floor {3:.2f} s)",
        "warm ≤ 0.5 s; cold ≤ 1.2× the floor"),
    Row("the whole 100k listing by client, as above: TypeScript in default / 1,000-row pages; Python in default "
        "pages", "floor_100k",
        ("median.ts_vaultwatch_default_ms", "median.ts_vaultwatch_limit_ms", "median.ts_replay_default_ms",
         "median.python_vaultwatch_default_ms", "median.python_replay_default_ms"),
        "TypeScript {0:,.0f} / {1:,.0f} ms (replayed {2:,.0f} ms); Python {3:,.0f} ms (replayed {4:,.0f} ms)",
        "≤ 2,500 ms"),
    Row("the TypeScript client spawning vaultwatch at 100k → its complete listing, warm / cold", "floor_100k",
        ("median.ts_vaultwatch_spawn_warm_s", "median.ts_replay_spawn_warm_s", "median.ts_vaultwatch_spawn_cold_s",
         "median.floor_s"), "{0:.2f} s (replayed {1:.2f} s) / {2:.2f} s (floor {3:.2f} s)", "≤ 1.2× the floor"),
    Row("tools/list of every tool with the semantic extra (the 12 native alone)", "answer_sizes",
        ("tools_list_bytes_all", "tools", "tools_list_bytes_12_native"), "{0:,} bytes, {1} tools ({2:,})",
        "≤ 25,600 bytes"),
    Row("a listed row / search hit in the text content; rows in a default page", "answer_sizes",
        ("listed_row_text_bytes", "search_hit_text_bytes", "default_page_rows", "answer_budget_bytes"),
        lambda row, hit, rows, budget: f"{row:.1f} / {hit:.1f} bytes; {rows} rows within {_kib(budget)}",
        "≤ 64 KiB a message"),
    Row("TUI first paint from process start, 100k, median of 3 launches", "tui", ("launch.first_paint_s.median",),
        "{0:.3f} s", "≤ 0.5 s"),
    Row("TUI filter keystroke → list updated / painted, p95, 100k", "tui",
        ("filter_keystroke_to_list_updated.p95_ms", "filter_keystroke_to_painted.p95_ms",
         "filter_keystroke_to_painted.n"), "{0:.1f} / {1:.1f} ms ({2} keys)", "≤ 50 ms"),
    Row("TUI page-down frame work, p95 (max), 100k", "tui",
        ("scroll_pagedown_frame_work.p95_ms", "scroll_pagedown_frame_work.max_ms"), "{0:.1f} ms ({1:.1f} ms)",
        "< 16 ms"),
    Row("TUI agent call → activity row painted, p95", "tui", ("agent_call_to_row_painted.p95_ms",), "{0:.1f} ms",
        "≤ 100 ms"),
    Row("TUI full-text search keystroke → results painted, p95, 100k: keyword / hybrid", "tui",
        ("search_keystroke_to_painted.p95_ms", "search_hybrid_keystroke_to_painted.p95_ms"), "{0:.1f} / {1:.1f} ms",
        "≤ 100 ms"),
    Row("TUI long note opened → first screen, p50 (max); keys while it renders, p95", "tui",
        ("long_note_lines", "long_note_open_to_first_screen.p50_ms", "long_note_open_to_first_screen.max_ms",
         "long_note_keys_while_rendering.p95_ms"), "{1:.1f} ms ({2:.1f} ms); {3:.1f} ms ({0:,} lines)",
        "≤ 100 ms; ≤ 50 ms"),
    Row("TUI process RSS, 100k notes with MCP, watcher, full-text index and note vectors: settled / after "
        "searches / idle 65 s later (peak while searching)", "tui_searches",
        ("launch.rss_still_mb.median", "launch.rss_searched_mb.median", "launch.rss_searched_idle_mb.median",
         "launch.peak_rss_searched_mb.max"), "{0:.0f} / {1:.0f} / {2:.0f} MB (peak {3:.0f} MB)", "≤ 350 MB"),
    Row("the same on a first launch, every index built in that run", "tui_first",
        ("launch.rss_still_mb.median", "launch.rss_searched_mb.median", "launch.rss_searched_idle_mb.median",
         "launch.peak_rss_searched_mb.max"), "{0:.0f} / {1:.0f} / {2:.0f} MB (peak {3:.0f} MB)", "≤ 350 MB"),
    Row("change journal: time added to a 10 KB note's write, p50", "changes", ("journal_write.added_p50_ms",),
        "{0:.2f} ms", "≤ 1 ms"),
    Row("1 MB note's diff (every tenth line changed) computed + first screen drawn, p50 at 120 / 200 columns",
        "changes", ("diff_1mb.every_10th_line_w120_p50_ms", "diff_1mb.every_10th_line_w200_p50_ms",
                    "diff_1mb.every_10th_line_hunks"), "{0:.1f} / {1:.1f} ms ({2:,} hunks)", "≤ 100 ms"),
    Row("journal size for one-line edits of 10 KB notes", "changes",
        ("journal_size.file_mb", "journal_size.changes", "journal_size.bytes_per_change"),
        lambda mb, n, each: f"{mb:.1f} MB for {n:,} changes ({each / 1000:.1f} KB a change)", "reported"),
    Row("approve key → agent's answer (the agent its own process, on the socket), p95", "changes",
        ("approve_latency.p95_ms",), "{0:.1f} ms", "≤ 100 ms"),
    Row("approve key → agent's answer, p95, in the Pilot app", "approve",
        ("approve_key_to_answer.key_to_answer_ms_p95", "approve_key_to_answer.rounds"), "{0:.1f} ms ({1} rounds)",
        "≤ 100 ms"),
    Row("elicitation round trip: server time added beyond the person's answer, p95", "elicit",
        ("elicit_round_trip.added_server_ms_p95",), "{0:.1f} ms", "≤ 50 ms"),
    Row("completion of a note path at 20k through the TypeScript SDK over the bridge, p95: steady / first after "
        "a write (a ping on the same path)", "completion",
        ("steady.complete.p95_ms", "after_change.complete.p95_ms", "steady.ping.p95_ms", "after_change.ping.p95_ms"),
        "{0:.1f} / {1:.1f} ms ({2:.1f} / {3:.1f} ms)", "≤ 50 ms"),
    Row("bridge start → first `tools/list` at 10k, p50: server running / bridge starts one", "lifecycle",
        ("bridge_to_first_tools_list.server_running_s.p50", "bridge_to_first_tools_list.bridge_starts_one_s.p50"),
        "{0:.2f} s / {1:.2f} s", "≤ 0.3 s / ≤ 1.5 s"),
    Row("loopback HTTP `ping`, p50 (p95)", "lifecycle", ("loopback_http.ping_ms.p50", "loopback_http.ping_ms.p95"),
        "{0:.2f} ms ({1:.1f} ms)", "≤ 3 ms"),
    Row("TUI opened and quit while an agent calls every 100 ms: pause p95 (max), failed reads, acknowledged "
        "writes missing", "lifecycle",
        ("switch_over.pause_p95_s", "switch_over.pause_max_s", "switch_over.failed_reads",
         "switch_over.acknowledged_but_missing"), "{0:.3f} s ({1:.2f} s), {2}, {3}", "≤ 1 s, 0, 0"),
    Row("spawned `serve --stdio` at 10k, medians of 3: `initialize` / first page, warm (cold)", "lifecycle",
        ("spawned_stdio_server.vaultwatch.warm_median.initialize_s",
         "spawned_stdio_server.vaultwatch.warm_median.first_page_s",
         "spawned_stdio_server.vaultwatch.cold_median.initialize_s",
         "spawned_stdio_server.vaultwatch.cold_median.first_page_s"), "{0:.2f} / {1:.2f} s ({2:.2f} / {3:.2f} s)",
        "≤ 0.5 s / ≤ 1.0 s warm, ≤ 2.5 s cold"),
    Row("a small read beside two abusive agents (one heavy call each in flight), p95 / max over the rounds "
        "(the lane's quick mode off, same run)", "budgets",
        ("rounds.quick=true.p95_ms", "rounds.quick=true.max_ms", "rounds.quick=false.p95_ms",
         "rounds.quick=false.max_ms"),
        lambda p95, top, off95, offtop: f"{span(p95, '.1f')} / {span(top, '.1f')} ms "
                                        f"({span(off95, '.1f')} / {span(offtop, '.1f')} ms)", "max ≤ 250 ms"),
)
# fmt: on


@dataclass(frozen=True)
class PeerRow:
    """One line of the peers' table: bench_peers' `figures` (joined by " / "), against issue 34's target."""

    what: str
    figures: tuple[str, ...]
    target: str
    calls: str | None = None  # the detail key of how many calls the figure took, said beside it
    only: str | None = None  # a figure of this server alone (the peers answer a listing in one call)


PEERS_SOURCE = "peers"
PEER_ROWS: tuple[PeerRow, ...] = (
    PeerRow("whole listing (cursor pages)", ("whole_listing_ms",), "≤ 213 ms", calls="whole_listing_calls"),
    PeerRow(
        "whole listing in pages of 1,000 rows (`limit`)",
        ("whole_listing_limit_ms",),
        "≤ 213 ms",
        calls="whole_listing_limit_calls",
        only="vaultwatch",
    ),
    PeerRow("search p50", ("search_ms",), "≤ 5 ms"),
    PeerRow("read p50", ("read_ms",), "≤ 1.5 ms"),
    PeerRow("write → visible in listing p50", ("write_to_listing_ms",), "≤ 10 ms"),
    PeerRow("outside create → listing / search p95", ("outside_to_listing_ms", "outside_to_search_ms"), "≤ 30 ms"),
    PeerRow(
        "spawn → complete listing, warm / cold",
        ("spawn_to_listing_warm_s", "spawn_to_listing_cold_s"),
        "≤ 1.2× the floor; warm ≤ 0.5 s",
    ),
    PeerRow(
        "spawn → complete listing, warm, the Python client's default mode (`server/discover`)",
        ("spawn_to_listing_warm_auto_s",),
        "warm ≤ 0.5 s",
        only="vaultwatch",
    ),
    PeerRow("peak RSS of the process tree", ("peak_rss_mb",), "≤ 110 MB"),
)
PEER_LABELS = {  # the figures' names in the list of wrong answers
    "whole_listing_ms": "whole listing",
    "search_ms": "search",
    "read_ms": "read",
    "write_to_listing_ms": "write → listing",
    "outside_to_listing_ms": "outside create → listing",
    "outside_to_search_ms": "outside create → search",
    "spawn_to_listing_warm_s": "spawn → listing, warm",
    "spawn_to_listing_cold_s": "spawn → listing, cold",
    "spawn_to_listing_warm_auto_s": "spawn → listing, warm (auto)",
    "peak_rss_mb": "peak RSS",
}


def load(results: Path) -> dict[str, dict]:
    """Every saved result in `results`, by name (the file's stem)."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(results.glob("*.json"))}


def missing_keys(saved: dict[str, dict]) -> list[str]:
    """Every row's source file or key that the saved results lack, as 'row: problem'."""
    problems = [
        f"{name}.json has no {field!r} (save it with python -m bench.run_all --save {name})"
        for name in sorted({row.source for row in ROWS} | {PEERS_SOURCE})
        for field in ("date", "machine", "result")
        if name in saved and field not in saved[name]
    ]
    if problems:
        return problems
    for row in ROWS:
        if row.source not in saved:
            problems.append(f"{row.what}: no result file {row.source}.json")
            continue
        for key in row.keys:
            try:
                lookup(saved[row.source]["result"], key)
            except MissingKey as exc:
                problems.append(f"{row.what}: {row.source}.json has {exc}")
    if PEERS_SOURCE not in saved:
        problems.append(f"peers' table: no result file {PEERS_SOURCE}.json")
    else:
        peers = saved[PEERS_SOURCE]["result"]
        for key in ("servers", "notes", "rounds", "floor_median_s", "figures", "detail"):
            if key not in peers:
                problems.append(f"peers' table: {PEERS_SOURCE}.json has no {key!r}")
        for prow in PEER_ROWS:
            for fig in prow.figures:
                if not any(name.startswith(f"{fig} (") for name in peers.get("figures", {})):
                    problems.append(f"peers' table, {prow.what}: {PEERS_SOURCE}.json has no figure {fig!r}")
    return problems


def measured(row: Row, result: dict) -> str:
    values = [lookup(result, key) for key in row.keys]
    return row.show(*values) if callable(row.show) else row.show.format(*values)


def render(saved: dict[str, dict]) -> str:
    """docs/benchmarks.md for these results."""
    problems = missing_keys(saved)
    if problems:
        raise MissingKey("the results lack what the page shows:\n  " + "\n  ".join(problems))
    used = sorted({row.source for row in ROWS} | {PEERS_SOURCE})
    lines = [*_header([saved[name] for name in used], used, saved), "", "| what | measured | target |"]
    lines.append("| --- | --- | --- |")
    for row in ROWS:
        lines.append(f"| {row.what} (`{row.source}`) | {measured(row, saved[row.source]['result'])} | {row.target} |")
    lines += ["", *_peers(saved[PEERS_SOURCE]["result"])]
    return "\n".join(lines) + "\n"


def _header(records: list[dict], used: list[str], saved: dict[str, dict]) -> list[str]:
    dates = sorted({r["date"] for r in records})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    machines = []
    for r in records:
        if r["machine"] not in machines:
            machines.append(r["machine"])
    on = "; ".join(_machine(m) for m in machines)
    out = [
        "# Benchmarks",
        "",
        "Generated by `python -m bench.report` from the results in `bench/results/`; do not edit it by hand.",
        "",
        "The benchmarks in `bench/` build vaults with the project's deterministic generator (`bench/vaultgen.py`: "
        "`python -m bench.vaultgen OUT --notes N [--realistic]`) under `bench/out/`, check every answer against the "
        f"generator's manifest of expected counts (stale notes judged as of {AS_OF}, the day the manifest uses) "
        "and print JSON. `python3 dev.py bench [NAME ...]` runs them; `python3 dev.py bench --save [NAME ...]` "
        "also saves each result, with its machine, date and command, in `bench/results/NAME.json`; "
        "`python -m bench.report` renders this page from those files and `python -m bench.report --check` "
        "fails when the page is out of date. `python -m bench.run_all --list` lists every result the page uses "
        "and the command that makes it. The name after each row is its result file.",
        "",
        f"Measured on {when}, on {on}. Reliability figures (fault, race, fuzz and load families) are in "
        "[reliability.md](reliability.md).",
    ]
    seeded = [name for name in used if saved[name].get("hand_seeded")]
    if seeded:
        out += [
            "",
            "Not re-measured since this page became generated (figures carried over from the page kept by hand and its runs): "
            f"{', '.join(f'`{n}`' for n in seeded)}; `python -m bench.run_all --save --pending` re-runs them.",
        ]
    return out


def _machine(m: dict) -> str:
    ram = f", {m['ram_gib']} GiB RAM" if m.get("ram_gib") else ""
    return f"{m['cpus']} CPUs ({m['cpu_model']}){ram}, {m['os']}, Python {m['python']}"


def _peers(peers: dict) -> list[str]:
    servers: list[str] = peers["servers"]
    out = [
        "## Against the peers (`peers`)",
        "",
        f"Each server spawned over stdio by the real Python `mcp` client on its own copy of the "
        f"{peers['notes']:,}-note vaultgen vault, one at a time, interleaved, medians of {peers['rounds']} rounds. "
        'Each figure is followed by its ratio to the fastest server whose answers were correct; "wrong" means '
        "the answers differed from the generator's manifest (listed below the table). The floor is one process "
        f"walking, reading and parsing every note: {peers['floor_median_s']:.2f} s in the same run.",
        "",
    ]
    client = peers.get("client_floor") or {}
    if client:
        out += [
            "The last column is the Python client alone: vaultwatch's answers, recorded once before the rounds, "
            "replayed by a process that answers each request at once, spawned and walked as vaultwatch is in "
            "every round. What the client spends there (validating each answer, its resource_link blocks) is "
            "the least a listing of those answers can cost it, whatever the server.",
            "",
        ]
        if "warm_load_s" in client:
            out += [
                "A fresh process that imports vaultwatch's core and loads the vault from a warm entry cache, "
                "and does nothing else, said it was loaded "
                f"{client['warm_load_s']:.2f} s after its spawn (median of the rounds): the least a warm "
                "spawn's first page costs vaultwatch, before the client's walk.",
                "",
            ]
    extra = [CLIENT_COLUMN] if client else []
    out += [
        "| figure | " + " | ".join([*(_server(s) for s in servers), *extra]) + " | target (issue 34) |",
        "| --- | " + " | ".join("---" for _ in [*servers, *extra]) + " | --- |",
    ]
    for prow in PEER_ROWS:
        cells = [" / ".join(_peer_cell(peers, fig, server) for fig in prow.figures) for server in servers]
        if prow.calls is not None:
            calls = [peers["detail"][s].get(prow.calls) for s in servers]
            cells = [f"{c}, {n} call{'' if n == 1 else 's'}" for c, n in zip(cells, calls, strict=True)]
        if prow.only is not None:
            cells = [c if s == prow.only else "—" for c, s in zip(cells, servers, strict=True)]
        if client:
            cells.append(" / ".join(_client_cell(client, fig) for fig in prow.figures))
        out.append(f"| {prow.what} | " + " | ".join(cells) + f" | {prow.target} |")
    wrong = [
        f"- {server}, {label}: {_problems(fig, figure['problems'])}"
        for server in servers
        for fig, label in PEER_LABELS.items()
        if isinstance(figure := peers["detail"][server].get(fig), dict)
        and not figure.get("correct", True)
        and figure.get("problems")
    ]
    if wrong:
        out += ["", "What the peers answered wrong (the first case of each figure):", "", *wrong]
    return out


def _server(name: str) -> str:
    """A peer's name with the version bench_peers pins for it."""
    from bench.bench_peers import PEER_VENVS  # the pins live with the benchmark that installs them

    pins = [p for p in PEER_VENVS.get(name, []) if p.split("[")[0].split("==")[0] == name and "==" in p]
    return f"{name} {pins[0].split('==')[1]}" if pins else name


def _peer_cell(peers: dict, fig: str, server: str) -> str:
    (name,) = [n for n in peers["figures"] if n.startswith(f"{fig} (")]
    stat = name[len(fig) + 2 : -1]
    cell = peers["figures"][name].get(server)
    if cell is None or cell[stat] is None:
        return "never right"
    value = cell[stat]
    ratio = cell.get("vs_fastest_correct")
    notes = [f"{ratio:.2f}×" if ratio < 10 else f"{ratio:,.0f}×"] if ratio is not None else []
    if not cell["correct"]:
        notes.append("wrong")
    return _amount(fig, value) + (f" ({', '.join(notes)})" if notes else "")


def _amount(fig: str, value: float) -> str:
    """A peers' figure with its unit: seconds to the hundredth, milliseconds and MB to three figures or so."""
    unit = " s" if fig.endswith("_s") else " MB" if fig.endswith("_mb") else " ms"
    text = f"{value:,.2f}" if fig.endswith("_s") or value < 10 else f"{value:,.1f}" if value < 100 else f"{value:,.0f}"
    return text + unit


CLIENT_COLUMN = "the Python client alone"


def _client_cell(client: dict, fig: str) -> str:
    """The client floor's figure (bench_peers.ClientFloor), or a dash where it has none."""
    value = client.get(fig)
    return "—" if value is None else _amount(fig, value)


def _problems(fig: str, problems: list[str]) -> str:
    """The first case (a listing's every problem), without the per-folder detail."""
    parts = [part for text in (problems if fig == "whole_listing_ms" else problems[:1]) for part in text.split("; ")]
    return "; ".join(part for part in parts if not part.startswith("per-folder"))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the page differs from the results' render")
    ap.add_argument("--results", type=Path, default=RESULTS, help="the saved results (default bench/results)")
    ap.add_argument("--doc", type=Path, default=DOC, help="the page (default docs/benchmarks.md)")
    args = ap.parse_args(argv)
    try:
        text = render(load(args.results))
    except MissingKey as exc:
        print(f"bench.report: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = args.doc.read_text(encoding="utf-8") if args.doc.exists() else ""
        if current != text:
            print(f"bench.report: {args.doc} differs from the results; run `python -m bench.report`", file=sys.stderr)
            return 1
        return 0
    args.doc.write_text(text, encoding="utf-8")
    print(f"bench.report: wrote {args.doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
