"""docs/benchmarks.md is generated from bench/results/ (bench/report.py), and the results are saved by
`python -m bench.run_all --save`: the committed page is what the committed results render, every
figure it shows is a key its result holds, and a saved result carries its machine and date."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import report
from bench.run_all import RECIPES

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True
    )


def report_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """`python -m bench.report ARGS` in this process: its exit code and stderr. The module's own entry
    point runs as a real process once (the first test); every process would re-import the `mcp` SDK
    the peers' table names servers from, seconds each on a loaded machine."""
    capsys.readouterr()
    code = report.main(list(args))
    return code, capsys.readouterr().err


def test_the_committed_page_is_the_render_of_the_committed_results() -> None:
    rendered = report.render(report.load(report.RESULTS))
    assert report.DOC.read_text(encoding="utf-8") == rendered, "run `python -m bench.report` and commit the page"
    done = run("-m", "bench.report", "--check")
    assert done.returncode == 0, done.stderr


def test_every_row_reads_keys_its_result_file_holds() -> None:
    saved = report.load(report.RESULTS)
    assert report.missing_keys(saved) == []
    # every file the page reads is made by a recipe bench.run_all runs (and --list shows)
    assert {row.source for row in report.ROWS} | {report.PEERS_SOURCE} <= set(RECIPES)


def test_a_renamed_key_fails_the_render_naming_the_row_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    shutil.copytree(report.RESULTS, results)
    core = json.loads((results / "core.json").read_text(encoding="utf-8"))
    big = core["result"]["results"]["100000"]
    big["cold_s"] = big.pop("cold_index_s")  # as if bench_core renamed its key
    (results / "core.json").write_text(json.dumps(core), encoding="utf-8")
    del_peers = json.loads((results / "peers.json").read_text(encoding="utf-8"))
    del del_peers["result"]["figures"]["read_ms (p50)"]
    (results / "peers.json").write_text(json.dumps(del_peers), encoding="utf-8")

    problems = report.missing_keys(report.load(results))
    assert problems == [
        "cold index, 100k notes (no entry cache; files in the page cache): core.json has "
        "results.100000.cold_index_s: no 'cold_index_s'",
        "peers' table, read p50: peers.json has no figure 'read_ms'",
    ]
    doc = tmp_path / "benchmarks.md"
    code, err = report_main(capsys, "--results", str(results), "--doc", str(doc))
    assert code == 2
    assert "results.100000.cold_index_s: no 'cold_index_s'" in err
    assert not doc.exists()  # nothing written from results that lack a figure


def test_check_fails_on_a_page_edited_by_hand_and_passes_once_rendered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "benchmarks.md"
    page = report.DOC.read_text(encoding="utf-8")
    edited = page.replace("| what | measured | target |", "| what | measured | goal |")
    assert edited != page
    doc.write_text(edited, encoding="utf-8")
    code, err = report_main(capsys, "--check", "--doc", str(doc))
    assert code == 1
    assert "differs from the results" in err
    assert report_main(capsys, "--doc", str(doc))[0] == 0
    assert doc.read_text(encoding="utf-8") == report.DOC.read_text(encoding="utf-8")
    assert report_main(capsys, "--check", "--doc", str(doc))[0] == 0


@pytest.mark.slow  # runs bench_parse on a 20-note vault
def test_save_keeps_the_result_with_its_machine_date_and_command(tmp_path: Path) -> None:
    results = tmp_path / "results"
    # the recipe's own options, then the bench's options after `--` (a small vault, one pass)
    done = run(
        "-m",
        "bench.run_all",
        "--save",
        "--results",
        str(results),
        "parse",
        "--",
        "--notes",
        "20",
        "--repeat",
        "1",
        env={"VAULTWATCH_BENCH_DIR": str(tmp_path / "out")},
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout[done.stdout.index("{") :])  # the JSON on stdout, as before
    saved = json.loads((results / "parse.json").read_text(encoding="utf-8"))
    assert saved["result"] == printed
    assert saved["result"]["plain"]["notes"] == 20
    assert saved["command"] == "python bench/bench_parse.py --notes 20 --repeat 1"
    dt.date.fromisoformat(saved["date"])  # a day, as the page prints it
    machine = saved["machine"]
    assert machine["cpus"] == os.cpu_count()
    assert machine["python"] == ".".join(map(str, sys.version_info[:3]))
    assert machine["cpu_model"] and machine["os"]
    assert saved["seconds"] >= 0
    assert not list(results.glob(".*"))  # the partial file is gone
    # the page's parse row reads this file as it reads the committed one
    row = next(r for r in report.ROWS if r.source == "parse")
    assert report.measured(row, saved["result"]).endswith("µs a realistic one)")
    listed = run("-m", "bench.run_all", "--list", "--results", str(results))
    assert listed.stdout.splitlines()[1].startswith(f"parse         {saved['date']}, took")


def test_a_failed_run_keeps_the_saved_result(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "parse.json").write_text('{"kept": true}\n', encoding="utf-8")
    done = run("-m", "bench.run_all", "--save", "--results", str(results), "parse", "--", "--notes", "not-a-number")
    assert done.returncode != 0
    assert "parse.json left as it was" in done.stderr
    assert (results / "parse.json").read_text(encoding="utf-8") == '{"kept": true}\n'
    assert sorted(p.name for p in results.iterdir()) == ["parse.json"]


def test_a_result_without_its_machine_and_date_is_refused(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(report.RESULTS, results)
    elicit = json.loads((results / "elicit.json").read_text(encoding="utf-8"))
    (results / "elicit.json").write_text(json.dumps(elicit["result"]), encoding="utf-8")  # a bench's bare JSON
    problems = report.missing_keys(report.load(results))
    assert problems == [
        f"elicit.json has no {field!r} (save it with python -m bench.run_all --save elicit)"
        for field in ("date", "machine", "result")
    ]


def test_pending_lists_what_the_page_still_needs_re_run(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(report.RESULTS, results)
    parse = json.loads((results / "parse.json").read_text(encoding="utf-8"))
    parse.pop("hand_seeded", None)  # as a real run saves it
    (results / "parse.json").write_text(json.dumps(parse), encoding="utf-8")
    (results / "core.json").unlink()
    mcp = json.loads((results / "mcp.json").read_text(encoding="utf-8"))
    mcp["hand_seeded"] = "copied by hand"
    (results / "mcp.json").write_text(json.dumps(mcp), encoding="utf-8")

    done = run("-m", "bench.run_all", "--list", "--pending", "--results", str(results))
    assert done.returncode == 0, done.stderr
    listed = {line.split()[0]: line for line in done.stdout.splitlines()}
    seeded = {name for name, saved in report.load(report.RESULTS).items() if saved.get("hand_seeded")}
    assert set(listed) == (seeded | {"core", "mcp"}) - {"parse"}
    assert "no result yet" in listed["core"]
    assert "carried over by hand: re-run" in listed["mcp"]
    assert listed["mcp"].endswith("python bench/bench_mcp.py " + " ".join(RECIPES["mcp"][1]))
    refused = run("-m", "bench.run_all", "--pending", "parse")
    assert refused.returncode == 2 and "give no NAME" in refused.stderr
