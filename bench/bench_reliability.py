"""Run the reliability families and regenerate docs/reliability.md from the run.

    python3 dev.py bench reliability                              # CI size (~1-2 min on 2 cores)
    VAULTWATCH_RELIABILITY_FULL=1 python3 dev.py bench reliability  # nightly size (10,000 fuzz cases per
                                                                    # fuzz test, 20 agents x 500 calls, ...)
    python bench/bench_reliability.py [--full] [--from-junit FILE] [--no-write] [--render-only]

It runs pytest over tests/reliability/ plus the earlier tests this suite cites instead of
repeating them, with --junitxml, then counts: tests per family, outcomes, and the figures the
tests record as JUnit properties (cases, calls, RSS, latencies, lost updates...). The results
of the latest CI-size and nightly-size runs are kept in bench/reliability_runs.json and both are
rendered into docs/reliability.md, so nothing in the table is typed by hand. Prints the run as JSON.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "bench" / "reliability_runs.json"
OUT_MD = ROOT / "docs" / "reliability.md"
REL = "tests/reliability"

FAMILIES = {  # file stem -> (family, what it covers)
    "test_hostile_vault": (
        "Hostile vault contents",
        "binary/non-UTF-8/UTF-16 notes, a 50 MB note, 10,000 files in one folder, 100 levels of "
        "nesting, names with newlines, escapes, RTL marks, emoji, undecodable bytes, symlink "
        "loops, FIFOs, sockets, devices, unreadable files (as `nobody`), files churned between "
        "scan and read, YAML bombs",
    ),
    "test_path_corpus": (
        "Path attack corpus",
        "~300 hostile paths (traversal in every spelling, absolute/drive/UNC, NUL and control "
        "characters, backslashes, hidden segments and their case variants, percent-encoded and "
        "Unicode lookalikes, NFC/NFD, symlink and symlinked-parent escapes, FIFOs) against every "
        "core operation and every MCP tool that takes a path",
    ),
    "test_fuzz_tools": (
        "Fuzzing (hypothesis)",
        "every MCP tool with generated arguments (wrong types, huge strings, Unicode edge cases, "
        "corpus paths, glob and FTS bombs, deep and wide structures, unknown names), plus raw "
        "malformed JSON-RPC",
    ),
    "test_faults": (
        "Faults",
        "disk full during an agent's write, vault deleted while serving, cache and search index "
        "corrupted, socket file removed, agent killed mid-call, a burst of thousands of files, a real "
        "overflow of the kernel's file-event queue (the watching process stopped while thousands of "
        "files appear)",
    ),
    "test_local_security": (
        "Local security",
        "socket 0600 in a 0700 folder and refused to other users, loopback HTTP token/Host/"
        "Origin matrix, no network or process activity under an audit hook, note payloads "
        "returned verbatim and never run",
    ),
    "test_load": (
        "Load",
        "N agents x M mixed calls over the real socket of `vaultwatch serve` on a vaultgen vault; the same "
        "agents on the socket of the TUI while a human (Textual's harness) types filters and triages notes "
        "with the app's keys (status, mark human-reviewed); every acknowledged write, agent's or human's, "
        "checked on disk",
    ),
    "test_races": (
        "Containment races",
        "five race families at once against the real `vaultwatch serve` and agents on its socket while "
        "the disk changes between a path's check and its use: agents racing folder renames (a folder "
        "holding a link out of the vault) against writes, edits, frontmatter updates, deletes and reads "
        "through it; the same renames made by an outside process; an outside process swapping a folder "
        "with a link out of the vault (renameat2 RENAME_EXCHANGE) while agents read, list and search; the "
        "same swap of a middle folder while agents write, edit, update frontmatter, delete and rename "
        "below it; the swap one level deeper under every kind of read; every answer checked for the "
        "outside file's text and SHA-256, the outside folders' bytes, mtimes and names compared",
    ),
    "test_budgets": (
        "Per-call budgets",
        "a well-behaved agent reading a small note every 20 ms through the real `vaultwatch serve`, "
        "alone and then beside an abusive agent cycling through the calls that run long on hostile "
        "input: edits and frontmatter updates of a 40 MB and a 10 MB note (replace_all of 2 million "
        "matches included), links and pages of a 330,000-link note, rewriting it whole, renaming it, a "
        "3 MB frontmatter block, broad searches and listings",
    ),
    "test_leftovers": (
        "Leftovers",
        "a real writer process killed with SIGKILL at random moments during 10 rounds of mixed "
        "writes (replace, frontmatter update, create): every note whole, and the next start of "
        "`vaultwatch serve` leaves no temporary file of the write path behind",
    ),
    "test_approval_gate": (
        "Approval gate bypasses",
        "a real headless `vaultwatch serve` with per-folder approval rules in its settings file and an "
        "adversarial agent on its socket: every write tool (write, edit, section edit, update_frontmatter, "
        "rename, delete) into a gated folder directly, through a symlinked note, through a folder link, by "
        "renaming the folder out or something into it, by renaming or deleting a parent, by deleting the "
        "folder, by a rename whose link rewriting reaches into it, and in NFC/NFD spellings, plus multi-step "
        "plays (move the folder away, edit, move it back; move a note out of delete protection, then delete "
        "it); every answer must be declined or refused, name the rule, and leave the vault byte for byte",
    ),
    "test_private_files": (
        "Private files",
        "a real `vaultwatch serve --stdio` under umask 022 and 000 indexes a private vault, builds its "
        "full-text index, answers the real `mcp` client's searches and a write; while it runs and after, "
        "every folder under the cache, state, config and runtime folders is 0700 and every file 0600 "
        "(SQLite's WAL included, older loose files tightened), and the `nobody` user can list or read none",
    ),
    "test_subscriptions": (
        "Bounded subscriptions",
        "through the real server and the real `mcp` client: a session's subscription cap and the URI "
        "length limit (clear errors, nothing lost), and one agent's 1,000 subscriptions costing another "
        "agent's first listing, subscribe, unsubscribe and change notification no work (counted path "
        "look-ups, not timed)",
    ),
    "test_deep_folders": (
        "Deep folders",
        "a folder 1,000 levels deep: the start-up temp-file clean-up of a real `vaultwatch serve` reaches "
        "its bottom; `rename` and `delete` of the whole tree through the real server and `mcp` client are "
        "done (not an internal error) and take the lane as heavy calls",
    ),
    "test_folder_crash": (
        "Folder rename crashes",
        "a folder of 300 notes that 400 other notes link into, renamed by an agent through a real "
        "`vaultwatch serve` killed with SIGKILL during its 700 link rewrites, and the revert of such a "
        "rename (a real `vaultwatch revert`) killed midway while a server watches: the next start (or the "
        "same revert again) rolls back or finishes it, every file back byte for byte, no temporary file "
        "left, none of its own writes journaled as outside edits",
    ),
    "test_gate_case": (
        "Case-folding file systems",
        "a real headless `vaultwatch serve` with the case-folding probe forced (no case-insensitive file "
        "system mounts on the test machine) and rules typed in another case than the folders: 23 calls "
        "writing, editing, renaming and deleting every case spelling of the gated paths; every answer held "
        "for the person or refused, the vault byte for byte",
    ),
}
# Earlier tests that already prove a part of a family: run and counted here, not repeated.
CITED = {
    "Approval gate bypasses": [
        "tests/mcp_server/test_gate_effects.py",
        "tests/mcp_server/test_gate_attacks.py",
        "tests/core/review/test_policy.py",
        "tests/mcp_server/test_changes.py",
    ],
    "Hostile vault contents": [
        "tests/core/index/test_scan.py",
        "tests/core/markdown/test_parse.py",
        "tests/core/markdown/test_fastyaml.py",
    ],
    "Path attack corpus": [
        "tests/core/disk/test_paths.py",
        "tests/core/edit/test_writes.py::test_hostile_paths_are_refused_by_every_operation",
        "tests/core/edit/test_writes.py::test_symlinked_parent_escape_is_blocked_for_new_files",
        "tests/core/edit/test_writes.py::test_writing_onto_a_folder_or_fifo_is_refused",
        "tests/core/disk/test_reader.py::test_refusals",
        "tests/core/disk/test_reader.py::test_symlink_escape_is_refused_and_inside_links_are_read",
        "tests/core/disk/test_reader.py::test_a_fifo_is_refused_without_blocking",
        "tests/mcp_server/test_write_tools.py::test_hostile_paths_for_every_write_tool",
    ],
    "Faults": [
        "tests/core/test_crash.py",
        "tests/core/index/test_cache.py::test_corrupt_cache_file_is_rebuilt_and_reported",
        "tests/core/index/test_cache.py::test_corrupt_bucket_is_reparsed_and_reported",
        "tests/core/index/test_cache.py::test_vault_that_suddenly_looks_empty_keeps_its_cache",
        "tests/core/index/test_cache.py::test_unwritable_cache_folder_is_reported_not_fatal",
        "tests/core/live/test_watch.py::test_deleted_vault_root_is_survived_and_reported",
        "tests/core/live/test_watch.py::test_vault_that_suddenly_looks_empty_is_held",
        "tests/core/live/test_watch.py::test_a_burst_of_files_is_coalesced",
        "tests/mcp_server/test_bridge.py::test_a_write_in_flight_when_the_app_goes_away_is_answered_maybe_applied_and_the_bridge_goes_on",
        "tests/mcp_server/test_bridge.py::test_bridge_follows_a_killed_server_to_the_next_one_on_its_socket",
        "tests/mcp_server/test_host.py::test_stale_socket_from_a_crash_is_replaced",
        "tests/mcp_server/test_host.py::test_stop_with_agents_connected_takes_under_a_second",
    ],
    "Local security": [
        "tests/mcp_server/test_host.py::test_socket_is_0600_in_a_0700_directory",
        "tests/mcp_server/test_host.py::test_http_needs_the_token_and_the_right_host",
        "tests/mcp_server/test_host.py::test_http_refuses_anything_but_loopback",
        "tests/mcp_server/test_host.py::test_second_instance_is_refused_with_the_first_ones_pid",
        "tests/core/edit/test_writes.py::test_agents_cannot_attest_human_review_by_any_route",
    ],
    "Containment races": [
        "tests/core/disk/test_containment.py",
        "tests/mcp_server/test_requestguard.py",
        "tests/tui/test_frontend_containment.py",
    ],
    "Per-call budgets": [
        "tests/core/search/test_search_bounds.py",
        "tests/mcp_server/test_lane.py",
        "tests/core/test_handoffs.py",
    ],
    "Load": [
        "tests/core/edit/test_writes.py::test_ten_concurrent_writers_exactly_one_wins_each_round_and_nothing_is_lost",
        "tests/core/edit/test_writes.py::test_concurrent_edits_without_if_match_serialise_and_lose_nothing",
        "tests/mcp_server/test_write_tools.py::test_concurrent_agents_with_if_match_lose_no_update",
        "tests/mcp_server/test_host.py::test_ten_agents_at_once_each_call_attributed",
    ],
}


def _exists(node: str) -> bool:
    path, _, name = node.partition("::")
    file = ROOT / path
    if not file.exists():
        return False
    return not name or re.search(rf"^(async )?def {re.escape(name)}\b", file.read_text(), re.M) is not None


def cited_nodes() -> tuple[list[str], list[str]]:
    """(cited node ids that exist, those that do not any more)."""
    nodes = [n for group in CITED.values() for n in group]
    return [n for n in nodes if _exists(n)], [n for n in nodes if not _exists(n)]


LOAD_FILE = f"{REL}/test_load.py"


def run_pytest(junit: Path, full: bool) -> tuple[int, float, list[str]]:
    """Run the suite and write one JUnit XML. The load scenarios run last and on their own:
    beside a hypothesis fuzzer on the other core they would measure that too."""
    present, missing = cited_nodes()
    env = dict(os.environ)
    if full:
        env["VAULTWATCH_RELIABILITY_FULL"] = "1"
        env.setdefault("VAULTWATCH_FUZZ_EXAMPLES", "10000")
    common = ["-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"]
    parts = [junit.with_suffix(".rest.xml"), junit.with_suffix(".load.xml")]
    runs = [
        [
            sys.executable,
            "-m",
            "pytest",
            REL,
            *present,
            f"--ignore={LOAD_FILE}",
            *common,
            "-n",
            os.environ.get("VAULTWATCH_TEST_WORKERS", "2"),
            f"--junitxml={parts[0]}",
        ],
        [sys.executable, "-m", "pytest", LOAD_FILE, *common, "-n", "0", f"--junitxml={parts[1]}"],
    ]
    started = time.perf_counter()
    rc = 0
    for cmd in runs:
        rc = max(rc, subprocess.call(cmd, cwd=ROOT, env=env, stdout=sys.stderr))
    merged = ET.Element("testsuites")
    for part in parts:
        if part.exists():
            root = ET.parse(part).getroot()
            merged.extend(root.iter("testsuite") if root.tag == "testsuites" else [root])
            part.unlink()
    ET.ElementTree(merged).write(junit, encoding="utf-8", xml_declaration=True)
    return rc, time.perf_counter() - started, missing


def _family_of(classname: str, name: str) -> str | None:
    """The family of one JUnit test case: its own file in tests/reliability, or the cited node it is."""
    stem = classname.rsplit(".", 1)[-1]
    if classname.startswith(REL.replace("/", ".") + ".") and stem in FAMILIES:
        return FAMILIES[stem][0]
    base = name.split("[", 1)[0]
    for family, nodes in CITED.items():
        for node in nodes:
            path, _, test = node.partition("::")
            if path.removesuffix(".py").replace("/", ".") == classname and (not test or test == base):
                return family
    return None


XDIST_GROUP = re.compile(r"@[\w.-]+$")


def parse_junit(junit: Path) -> dict:
    """Per family: tests, outcomes, time, and every recorded property per test."""
    tree = ET.parse(junit)
    families: dict[str, dict] = {
        name: {
            "tests": 0,
            "passed": 0,
            "failed": 0,
            "skipped": 0,
            "seconds": 0.0,
            "own_tests": 0,
            "cited_tests": 0,
            "properties": [],
            "failures": [],
        }
        for name, _ in FAMILIES.values()
    }
    for case in tree.iter("testcase"):
        # xdist's --dist loadgroup names a grouped test `test_x[id]@group`: the group is not its name
        classname, name = case.get("classname", ""), XDIST_GROUP.sub("", case.get("name", ""))
        family = _family_of(classname, name)
        if family is None:
            continue
        fam = families[family]
        fam["tests"] += 1
        own = classname.startswith(REL.replace("/", "."))
        fam["own_tests" if own else "cited_tests"] += 1
        fam["seconds"] += float(case.get("time", 0) or 0)
        if case.find("failure") is not None or case.find("error") is not None:
            fam["failed"] += 1
            fam["failures"].append(f"{classname}::{name}")
        elif case.find("skipped") is not None:
            fam["skipped"] += 1
        else:
            fam["passed"] += 1
        props = [(p.get("name"), p.get("value")) for p in case.iter("property")]
        if props:
            fam["properties"].append(
                {"test": name, "passed": case.find("failure") is None and case.find("error") is None, "props": props}
            )
    return families


def _num(value: str):
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def summarize(families: dict) -> dict:
    """Figures per family from the recorded properties (sums of counts, maxima of costs)."""
    out = {}
    for name, fam in families.items():
        figures: dict[str, object] = {}
        fixed: list[str] = []
        per_test: dict[str, dict] = {}
        for rec in fam["properties"]:
            test_figs = per_test.setdefault(rec["test"], {})
            for key, value in rec["props"]:
                if key == "fixed_bug":
                    if rec["passed"]:
                        fixed.append(value)
                    continue
                test_figs[key] = _num(value)
        figures["per_test"] = per_test
        out[name] = {
            **{k: v for k, v in fam.items() if k != "properties"},
            "fixed": sorted(set(fixed)),
            "figures": figures,
        }
    return out


def _fmt(n) -> str:
    if isinstance(n, float):
        return f"{n:,.2f}".rstrip("0").rstrip(".")
    if isinstance(n, int):
        return f"{n:,}"
    return str(n)


def _short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _sum(per_test: dict, key: str, prefix: str = "") -> int:
    return sum(v.get(key, 0) for t, v in per_test.items() if t.startswith(prefix) and isinstance(v.get(key, 0), int))


def headline(name: str, fam: dict) -> tuple[str, str]:
    """(cases run, figures) cells of one family, from its recorded figures."""
    pt = fam["figures"]["per_test"]
    g = lambda test, key, default="?": pt.get(test, {}).get(key, default)  # noqa: E731
    if name == "Hostile vault contents":
        hv = "test_hostile_vault_is_indexed_or_skipped_with_reasons"
        big = "test_a_50_mb_note_is_indexed_with_bounded_memory_and_readable"
        flat = "test_ten_thousand_files_in_one_folder"
        churn = "test_files_deleted_and_replaced_between_scan_and_read"
        cases = (
            f"{_fmt(g(hv, 'hostile_files', 0))} hostile files, a {_fmt(g(flat, 'files', 0))}-file folder, "
            f"{_fmt(g(churn, 'churn_operations', 0))} churn operations"
        )
        figs = (
            f"{_fmt(g(hv, 'hostile_files'))} hostile files: {_fmt(g(hv, 'indexed'))} entries indexed, "
            f"{_fmt(g(hv, 'skipped_with_reason'))} skipped with a reason, 0 crashes; "
            f"{_fmt(g(big, 'note_mb'))} MB note indexed in {_fmt(g(big, 'load_s'))} s, load peak RSS "
            f"{_fmt(g(big, 'load_peak_rss_mb'))} MB, {_fmt(g(big, 'retained_after_load_mb'))} MB kept after "
            f"load; reading it by 40k-character pages: page 1 in {_fmt(g(big, 'page_1_read_s'))} s (first read, "
            f"builds the page map), a late page in {_fmt(g(big, 'late_page_read_s'))} s, each read's peak "
            f"+{_fmt(g(big, 'read_peak_mb'))} MB RSS; {_fmt(g(flat, 'files'))} "
            f"files in one folder loaded in {_fmt(g(flat, 'load_s'))} s (peak RSS {_fmt(g(flat, 'rss_mb'))} MB); "
            f"{_fmt(g(churn, 'churn_operations'))} file changes raced {_fmt(g(churn, 'loads'))} loads and "
            f"{_fmt(g(churn, 'refreshes'))} refreshes without an exception"
        )
        return cases, figs
    if name == "Path attack corpus":
        core_cases = _sum(pt, "cases", "test_core_operations")
        core_ops = max((v.get("operations", 0) for t, v in pt.items() if t.startswith("test_core")), default=0)
        mcp = pt.get("test_every_mcp_tool_contains_every_hostile_path", {})
        cases = f"{_fmt(core_cases)} paths x {core_ops} core operations + {_fmt(mcp.get('tool_calls', 0))} MCP calls"
        figs = (
            f"{_fmt(core_cases * core_ops + mcp.get('tool_calls', 0))} hostile path uses; 0 reads or writes "
            f"outside the vault, 0 hidden-path accesses (canary bytes and mtimes, new files, audit events, "
            f"secret tokens in results all checked); {_fmt(mcp.get('tool_errors', 0))} structured tool errors, "
            "0 tracebacks"
        )
        return cases, figs
    if name == "Fuzzing (hypothesis)":
        r = pt.get("test_read_tools_answer_any_arguments_and_change_nothing", {})
        w = pt.get("test_write_tools_answer_any_arguments_and_stay_inside_the_vault", {})
        raw = pt.get("test_malformed_json_rpc_is_answered_and_the_server_keeps_serving", {})
        total = r.get("cases", 0) + w.get("cases", 0) + raw.get("cases", 0)
        cases = f"{_fmt(total)} generated calls"
        figs = (
            f"read tools {_fmt(r.get('cases', 0))} calls ({_fmt(r.get('tool_errors', 0))} structured errors, "
            f"vault unchanged, slowest {_fmt(r.get('slowest_call_s', 0))} s: "
            f"`{_short(str(r.get('slowest_call', '?'))).replace('`', chr(39))}`); "
            "write tools "
            f"{_fmt(w.get('cases', 0))} calls ({_fmt(w.get('tool_errors', 0))} structured errors, nothing "
            f"outside the vault or hidden touched, slowest {_fmt(w.get('slowest_call_s', 0))} s); raw JSON-RPC "
            f"{_fmt(raw.get('cases', 0))} requests, HTTP statuses {raw.get('http_statuses', '?')}; 0 crashes, "
            "0 tracebacks, 0 hangs"
        )
        return cases, figs
    if name == "Faults":
        faults = _sum(pt, "faults")
        burst = pt.get("test_a_burst_of_thousands_of_files_is_absorbed_and_listed_over_mcp", {})
        cases = f"{_fmt(faults)} injected faults + {fam['cited_tests']} cited tests"
        figs = (
            f"{_fmt(faults)} faults survived and reported; a burst of {_fmt(burst.get('burst_files', 0))} file "
            f"events absorbed in {_fmt(burst.get('absorbed_s', 0))} s and listed over MCP; old notes intact, no "
            "temporary files left"
        )
        ovf = pt.get("test_watcher_queue_overflow_is_survived_and_reported")
        if ovf:
            figs += (
                f"; a real inotify queue overflow ({_fmt(ovf.get('overflow_files', 0))} new files while the "
                f"watching process was stopped, kernel limit {_fmt(ovf.get('overflow_queue_limit', 0))} events, "
                f"overflow confirmed by a witness inotify): {_fmt(ovf.get('overflow_missed_changes', 0))} missed "
                f"changes found by the re-check, indexed and reported, index complete "
                f"{_fmt(ovf.get('overflow_converged_s', 0))} s after the stop began"
            )
        return cases, figs
    if name == "Local security":
        http = pt.get("test_loopback_http_needs_token_host_and_origin", {})
        net = pt.get("test_the_app_opens_no_network_connection_and_never_runs_note_content", {})
        cases = f"{_fmt(http.get('http_attacks_refused', 0))} HTTP attacks, {_fmt(net.get('payload_notes', 0))} payload notes"
        figs = (
            f"{_fmt(http.get('http_attacks_refused', 0))} token/Host/Origin attacks refused ({http.get('statuses', '?')}); "
            f"{_fmt(net.get('audited_events', 0))} audited socket/process events, "
            f"{_fmt(net.get('network_connections', 0))} network connections, no process started, no payload run"
        )
        return cases, figs
    if name == "Load":
        ld = pt.get("test_agents_under_load_lose_no_update", {})
        cases = f"{_fmt(ld.get('agents', 0))} agents, {_fmt(ld.get('calls', 0))} calls"
        figs = (
            f"{_fmt(ld.get('notes', 0))}-note vault; {_fmt(ld.get('acknowledged_writes', 0))} acknowledged "
            f"writes, {_fmt(ld.get('lost_updates', '?'))} lost; shared counter {_fmt(ld.get('counter_increments', 0))} "
            f"increments = its final value ({_fmt(ld.get('if_match_conflicts_retried', 0))} if_match conflicts "
            f"retried); {_fmt(ld.get('errors', '?'))} errors; p50 {_fmt(ld.get('p50_ms', 0))} ms, p95 "
            f"{_fmt(ld.get('p95_ms', 0))} ms, {_fmt(ld.get('calls_per_s', 0))} calls/s"
        )
        tui = pt.get("test_tui_stays_responsive_while_agents_work")
        if tui:
            cases += (
                f"; TUI: {_fmt(tui.get('agents', 0))} agents, {_fmt(tui.get('keystrokes', 0))} filter edits, "
                f"{_fmt(tui.get('triage_actions', 0))} triage actions"
            )
            figs += (
                f". TUI hosting the server while {_fmt(tui.get('agents', 0))} agents made "
                f"{_fmt(tui.get('agent_calls', 0))} calls ({_fmt(tui.get('acknowledged_writes', 0))} acknowledged "
                f"writes, {_fmt(tui.get('lost_updates', '?'))} lost): filter edit -> list updated p50 "
                f"{_fmt(tui.get('keystroke_p50_ms', 0))} ms, p95 {_fmt(tui.get('keystroke_p95_ms', 0))} ms "
                f"(target <= 100 ms: {'met' if tui.get('keystroke_p95_ms', 1e9) <= 100 else 'NOT met'}), max "
                f"{_fmt(tui.get('keystroke_max_ms', 0))} ms over {_fmt(tui.get('keystrokes', 0))} edits "
                f"({_fmt(tui.get('keystrokes_while_agents_ran', 0))} while agents ran)"
            )
            if "triage_actions" in tui:
                figs += (
                    f"; the human also triaged with the app's keys ({_fmt(tui.get('triage_actions', 0))} status "
                    f"changes and reviews, {_fmt(tui.get('triage_actions_while_agents_ran', 0))} while agents ran, "
                    f"{_fmt(tui.get('human_notes_written', 0))} notes written, "
                    f"{_fmt(tui.get('human_lost_updates', '?'))} lost, none refused): key -> note written and its "
                    f"row updated p50 {_fmt(tui.get('triage_p50_ms', 0))} ms, p95 "
                    f"{_fmt(tui.get('triage_p95_ms', 0))} ms, max {_fmt(tui.get('triage_max_ms', 0))} ms; c -> "
                    f"status dialog open p95 {_fmt(tui.get('status_dialog_p95_ms', 0))} ms"
                )
        return cases, figs
    if name == "Containment races":
        r = pt.get("test_race_families_run_at_once_and_never_touch_a_file_outside", {})
        fams = [
            ("agents_rename", "calls racing agents' folder renames"),
            ("process_move", "racing {} folder renames by an outside process"),
            ("exchange_read", "reads, lists and searches racing {} RENAME_EXCHANGE swaps"),
            (
                "exchange_middle_write",
                "writes, edits, frontmatter updates, deletes and renames racing {} swaps of a middle folder",
            ),
            ("exchange_deep_read", "reads racing {} swaps one level deeper"),
        ]
        calls = sum(r.get(f"race_{f}_calls", 0) for f, _ in fams)
        cases = (
            f"{_fmt(r.get('race_families', 0))} races at once x {_fmt(r.get('race_seconds', 0))} s "
            f"({_fmt(r.get('race_wall_seconds', 0))} s wall), {_fmt(calls)} agent calls + "
            f"{fam['cited_tests']} cited tests"
        )
        parts = [
            f"{_fmt(r.get(f'race_{f}_calls', 0))} " + what.format(_fmt(r.get(f"race_{f}_disk_changes", 0)))
            for f, what in fams
            if f"race_{f}_calls" in r
        ]
        figs = "; ".join(parts) + "; 0 outside reads, 0 outside writes, 0 outside hashes in any answer"
        return cases, figs
    if name == "Per-call budgets":
        b = pt.get("test_an_abusive_agent_does_not_stall_a_well_behaved_one", {})
        cases = (
            f"{_fmt(b.get('budget_abuse_calls', 0))} abusive calls, {_fmt(b.get('budget_good_calls', 0))} "
            "well-behaved reads beside them"
        )
        figs = (
            f"well-behaved read alone p50 {_fmt(b.get('budget_idle_p50_ms', 0))} ms, p95 "
            f"{_fmt(b.get('budget_idle_p95_ms', 0))} ms, max {_fmt(b.get('budget_idle_max_ms', 0))} ms; beside "
            f"{_fmt(b.get('budget_abuse_streams', 1))} abusive calls at a time p50 {_fmt(b.get('budget_busy_p50_ms', 0))} ms, p95 {_fmt(b.get('budget_busy_p95_ms', 0))}"
            f" ms, max {_fmt(b.get('budget_busy_max_ms', 0))} ms (target: no stall beyond 250 ms); heavy calls run "
            f"one at a time, with 0.5 ms hand-offs and the collector held off while one runs (mcp_server/lane.py); slowest abusive call, with its wait for the lane: {b.get('budget_slowest_abuse', '?')}; load average {_fmt(b.get('budget_load', 0))} "
            "at the start"
        )
        return cases, figs
    if name == "Leftovers":
        lo = pt.get("test_kill_9_during_mixed_writes_leaves_whole_notes_and_no_temp_files_after_restart", {})
        cases = "10 kill -9 rounds"
        figs = (
            f"every note whole after each kill; {_fmt(lo.get('temp_files_left_by_kills', 0))} temporary files "
            "left by the kills, 0 after the next start"
        )
        return cases, figs
    if name == "Approval gate bypasses":
        a = pt.get("test_an_adversarial_agent_gets_no_change_past_a_headless_gate", {})
        cases = f"{_fmt(a.get('gate_calls', 0))} adversarial calls + {fam['cited_tests']} cited tests"
        figs = (
            f"{_fmt(a.get('gate_declined', 0))} declined naming the rule, "
            f"{_fmt(a.get('gate_refused_otherwise', 0))} refused before the gate (symlink rename, confusable "
            f"name), {_fmt(a.get('gate_accepted', '?'))} accepted; the vault byte for byte as before"
        )
        return cases, figs
    if name == "Private files":
        runs = [v for k, v in pt.items() if k.startswith("test_nothing_vaultwatch_keeps_is_readable_by_another_user")]
        checked = max((v.get("private_entries_checked", 0) for v in runs), default=0)
        cases = f"{len(runs)} umasks (022, 000), up to {_fmt(checked)} folders and files each"
        figs = f"up to {_fmt(checked)} entries checked 0700/0600 while serving and after; 0 readable by `nobody`"
        return cases, figs
    if name == "Bounded subscriptions":
        cap = pt.get("test_a_session_is_capped_and_oversized_uris_refused_with_clear_errors", {})
        greedy = pt.get("test_one_agents_many_subscriptions_cost_another_agent_nothing", {})
        cases = f"{_fmt(cap.get('subscriptions_per_session', 0))} subscriptions to the cap; {_fmt(greedy.get('greedy_subscriptions', 0))} by a greedy agent"
        figs = "0 path look-ups for another agent's first listing, 1 per subscribe, unsubscribe and notification"
        return cases, figs
    if name == "Deep folders":
        up = pt.get("test_start_up_clean_up_reaches_the_bottom_of_a_deep_folder", {})
        mv = pt.get("test_rename_and_delete_of_a_deep_folder_through_the_server", {})
        cases = f"a {_fmt(up.get('deep_folder_levels', 0))}-level folder: start-up clean-up, rename, delete"
        figs = f"temp files removed at the bottom; {_fmt(mv.get('deep_entries_moved', 0))} indexed entries moved and deleted in one heavy call each"
        return cases, figs
    return "", ""


def render(runs: dict) -> str:
    lines = [
        "# RELIABILITY",
        "",
        "Generated by `bench/bench_reliability.py` from real test runs (pytest JUnit XML and the figures the tests "
        "record); do not edit by hand. Regenerate with:",
        "",
        "```",
        "python3 dev.py bench reliability                                 # CI size",
        "VAULTWATCH_RELIABILITY_FULL=1 python3 dev.py bench reliability   # nightly size",
        "```",
        "",
        "The reliability suite itself is `tests/reliability/` and runs at CI size in `python3 dev.py test`. "
        "Each family also counts the earlier tests it cites instead of repeating them (listed below). "
        "Here the load scenarios run last, one after the other, with no other test beside them: their "
        "figures are the scenario's (the agents, their process and the human on the machine's two cores).",
        "",
    ]
    for mode in ("ci", "full"):
        run = runs.get(mode)
        if not run:
            continue
        title = "CI size" if mode == "ci" else "Nightly size"
        lines += [
            f"## {title}: run of {run['when']}",
            "",
            f"{run['python']} on {run['machine']}, {run['cpus']} CPUs; pytest exit status {run['exit_status']}, "
            f"{_fmt(round(run['seconds'], 1))} s wall clock; environment: {run['env'] or 'defaults'}.",
            "",
            "| Family | Tests passed | Cases run | Failures found and fixed | Figures |",
            "|---|---|---|---|---|",
        ]
        for name, _ in FAMILIES.values():
            fam = run["families"].get(name)
            if fam is None:  # a family added after this size's last run
                lines.append(f"| {name} | not run at this size yet | | | |")
                continue
            cases, figs = headline(name, fam)
            passed = f"{fam['passed']}/{fam['tests']} ({fam['own_tests']} own + {fam['cited_tests']} cited)"
            if fam["skipped"]:
                passed += f", {fam['skipped']} skipped"
            if fam["failed"]:
                passed += f", **{fam['failed']} FAILED**"
            cell = lambda text: text.replace("\n", " ").replace("|", "\\|")  # noqa: E731
            lines.append(f"| {name} | {passed} | {cell(cases)} | {len(fam['fixed'])} | {cell(figs)} |")
        lines.append("")
        fams = run["families"]
        fixed = [(name, f) for name, _ in FAMILIES.values() for f in fams.get(name, {}).get("fixed", ())]
        if fixed:
            lines += [
                "Failures this suite found, fixed, and now guards (each line is recorded by its passing "
                "regression test):",
                "",
            ]
            lines += [f"- {name}: {f}" for name, f in fixed]
            lines.append("")
        failures = [f for name, _ in FAMILIES.values() for f in fams.get(name, {}).get("failures", ())]
        if failures:
            lines += ["Failing in this run:", ""] + [f"- `{f}`" for f in failures] + [""]
        if run.get("missing_cited"):
            lines += ["Cited tests no longer found (renamed or removed):", ""]
            lines += [f"- `{m}`" for m in run["missing_cited"]] + [""]
    lines += ["## What each family covers", ""]
    for name, what in FAMILIES.values():
        lines.append(f"- **{name}**: {what}.")
    lines += ["", "## Cited tests", ""]
    for family, nodes in CITED.items():
        lines.append(f"- {family}: " + ", ".join(f"`{n}`" for n in nodes))
    lines += [
        "",
        "## Not covered here",
        "",
        "- Keystrokes under load are timed inside the app (filter text set -> list updated; triage key -> "
        "note written), not terminal rendering.",
        f"- Queue overflows: watchfiles 1.3 discards the kernel's overflow signal (samuelcolvin/watchfiles#348), "
        "so the watcher infers a possible overflow from its causes (a stall of the process, or one batch of "
        f"{_burst_recheck()} changes or more) and re-checks the whole vault. An overflow by more than "
        f"{_inotify_queue()} events concentrated on a few files, with no stall and every batch under "
        f"{_burst_recheck()} changes, would go unnoticed until those files change again. A full disk is "
        "simulated with RLIMIT_FSIZE (EFBIG), not a real ENOSPC.",
        "- Latencies in the fuzzing row are measured at the Python MCP client, which also validates each "
        "result against the tool's output schema (for a 10,000-link `get_links` that is most of the time).",
        "",
    ]
    return "\n".join(lines)


def _burst_recheck() -> str:
    try:
        sys.path.insert(0, str(ROOT))
        from vaultwatch.core.live.watch import BURST_RECHECK

        return f"{BURST_RECHECK:,}"
    except Exception:  # noqa: BLE001 - only a figure in the text
        return "BURST_RECHECK"


def _inotify_queue() -> str:
    try:
        return f"{int(Path('/proc/sys/fs/inotify/max_queued_events').read_text()):,}"
    except (OSError, ValueError):
        return "max_queued_events"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="nightly size (also VAULTWATCH_RELIABILITY_FULL=1)")
    ap.add_argument("--from-junit", type=Path, default=None, help="count an existing JUnit XML instead of running")
    ap.add_argument("--no-write", action="store_true", help="print the JSON only; leave docs/reliability.md alone")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="rewrite docs/reliability.md from bench/reliability_runs.json without running anything",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        OUT_MD.write_text(render(json.loads(RUNS.read_text())))
        return 0
    full = args.full or os.environ.get("VAULTWATCH_RELIABILITY_FULL", "").lower() in ("1", "yes", "true", "on")
    out_dir = ROOT / "bench" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    junit = args.from_junit or out_dir / f"reliability-{'full' if full else 'ci'}.xml"
    if args.from_junit:
        rc, seconds, missing = 0, 0.0, cited_nodes()[1]
    else:
        rc, seconds, missing = run_pytest(junit, full)
    families = summarize(parse_junit(junit))
    env = {k: os.environ[k] for k in ("VAULTWATCH_RELIABILITY_FULL", "VAULTWATCH_FUZZ_EXAMPLES") if k in os.environ}
    if full:
        env.setdefault("VAULTWATCH_RELIABILITY_FULL", "1")
        env.setdefault("VAULTWATCH_FUZZ_EXAMPLES", "10000")
    run = {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "exit_status": rc,
        "seconds": seconds,
        "python": f"Python {platform.python_version()}",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "env": ", ".join(f"{k}={v}" for k, v in env.items()),
        "families": families,
        "missing_cited": missing,
    }
    mode = "full" if full else "ci"
    runs = json.loads(RUNS.read_text()) if RUNS.exists() else {}
    if not args.no_write:
        runs[mode] = run
        RUNS.write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n")
        OUT_MD.write_text(render(runs))
    print(
        json.dumps(
            {
                "mode": mode,
                "exit_status": rc,
                "seconds": round(seconds, 1),
                "families": {
                    n: {k: f[k] for k in ("tests", "passed", "failed", "own_tests", "cited_tests")}
                    | {"fixed": len(f["fixed"]), "headline": headline(n, f)}
                    for n, f in families.items()
                },
            },
            indent=1,
            ensure_ascii=False,
        )
    )
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
