"""Run the benchmarks in bench/ and print each one's JSON; with --save, keep each result for the docs.

    python -m bench.run_all [--save] [--results DIR] [NAME ...] [-- BENCH OPTIONS]
    python -m bench.run_all --list [--pending]

NAME is one of RECIPES below (a benchmark run with the options docs/benchmarks.md's figures use) or
any bench_NAME.py run with its own defaults; no NAME runs every recipe. Options after `--` go to
each named benchmark as it takes them (`python -m bench.run_all core -- --sizes 10000`).

--save writes each result, with its machine, date and command, to bench/results/NAME.json (or
DIR/NAME.json), the files `python -m bench.report` renders docs/benchmarks.md from. --list shows
every recipe, its command, and the result file's date, how long that run took, and whether it
still holds figures copied by hand; --pending narrows a run or the list to the recipes with no result
or one copied by hand (`python -m bench.run_all --save --pending` re-runs what the page still needs).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script by dev.py bench

from bench.common import SAVE_ENV  # noqa: E402

RESULTS = HERE / "results"

# name -> (script, options): the runs docs/benchmarks.md's rows are read from (bench/report.py)
RECIPES: dict[str, tuple[str, list[str]]] = {
    "core": ("bench_core.py", ["--sizes", "10000,100000"]),
    "parse": ("bench_parse.py", []),
    "live": ("bench_live.py", ["--notes", "100000"]),
    "search": ("bench_search.py", ["quality", "scale", "--notes", "100000"]),
    "mcp": ("bench_mcp.py", ["--notes", "10000,100000", "--modes", "raw,legacy"]),
    "answer_sizes": ("bench_answer_sizes.py", []),
    "tui": ("bench_tui.py", ["--notes", "100000", "--launches", "3"]),
    "tui_searches": ("bench_tui.py", ["--notes", "100000", "--launches", "3", "--launch-searches", "--no-interactive"]),
    "tui_first": (
        "bench_tui.py",
        ["--notes", "100000", "--launches", "3", "--launch-searches", "--first-launches", "--no-interactive"],
    ),
    "changes": ("bench_changes.py", []),
    "approve": ("bench_approve.py", ["40"]),
    "elicit": ("bench_elicit.py", ["40"]),
    "completion": ("bench_completion.py", ["--notes", "20000"]),
    "lifecycle": ("bench_lifecycle.py", ["--notes", "10000", "--skip-peer"]),
    "budgets": ("bench_budgets.py", ["--quick", "both", "--rounds", "2"]),
    "peers": ("bench_peers.py", ["--notes", "10000", "--rounds", "3"]),
    "peers_100k": ("bench_peers.py", ["--servers", "vaultwatch", "--notes", "100000", "--rounds", "1"]),
    "floor": ("bench_floor.py", ["--notes", "10000", "--rounds", "5", "--spawns", "5"]),
    "floor_100k": ("bench_floor.py", ["--notes", "100000", "--rounds", "3", "--spawns", "3"]),
}


def command(name: str) -> tuple[Path, list[str]]:
    """The script and options a name runs: its recipe, or bench_NAME.py with the bench's defaults."""
    if name in RECIPES:
        script, options = RECIPES[name]
        return HERE / script, list(options)
    script = HERE / f"bench_{name}.py"
    if not script.is_file():
        known = sorted({*RECIPES, *(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))})
        raise SystemExit(f"run_all: no benchmark named {name!r}; known: {', '.join(known)}")
    return script, []


def run(name: str, extra: list[str], results: Path | None) -> int:
    script, options = command(name)
    env = dict(os.environ)
    target = results / f"{name}.json" if results is not None else None
    if target is not None:
        # the bench writes the record itself (bench.common.emit) to a temporary file, so a run that
        # fails keeps the last good result in place
        partial = target.with_name(f".{target.name}.partial")
        partial.unlink(missing_ok=True)
        env[SAVE_ENV] = str(partial)
    print(f"# {name}: {script.name} {' '.join([*options, *extra])}".rstrip(), flush=True)
    started = time.monotonic()
    status = subprocess.call([sys.executable, str(script), *options, *extra], cwd=HERE.parent, env=env)
    seconds = round(time.monotonic() - started, 1)
    if target is None:
        return status
    if status != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        why = f"failed (exit {status})" if status else "saved nothing (its JSON must go through bench.common.emit)"
        print(f"# {name}: {why}; {target.name} left as it was", file=sys.stderr, flush=True)
        return status or 1
    saved = json.loads(partial.read_text(encoding="utf-8"))
    saved["seconds"] = seconds  # the whole run, vault generation included: what a re-run costs
    target.write_text(json.dumps(saved, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.unlink()
    print(f"# {name}: saved {target} ({seconds} s)", file=sys.stderr, flush=True)
    return 0


def pending(results: Path) -> list[str]:
    """The recipes whose result the page still lacks or holds as copied by hand: what to re-run."""
    return [
        name
        for name in RECIPES
        if not (results / f"{name}.json").exists()
        or json.loads((results / f"{name}.json").read_text(encoding="utf-8")).get("hand_seeded")
    ]


def listing(results: Path, names: list[str]) -> str:
    """The recipes `names`, each with its command and the state of its result file."""
    lines = []
    for name in names:
        script, options = RECIPES[name]
        path = results / f"{name}.json"
        if not path.exists():
            state = "no result yet"
        else:
            saved = json.loads(path.read_text(encoding="utf-8"))
            took = f", took {saved['seconds']:.0f} s" if saved.get("seconds") is not None else ""
            state = f"{saved.get('date', '?')}{took}" + (
                ", carried over by hand: re-run" if saved.get("hand_seeded") else ""
            )
        lines.append(f"{name:<13} {state:<42} python bench/{script} {' '.join(options)}".rstrip())
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        argv, extra = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help="recipes or benchmarks (default: every recipe)")
    ap.add_argument("--save", action="store_true", help="save each result to bench/results/NAME.json")
    ap.add_argument("--results", type=Path, default=RESULTS, help="the folder --save and --list use")
    ap.add_argument("--list", action="store_true", help="list the recipes and their saved results")
    ap.add_argument(
        "--pending", action="store_true", help="only the recipes with no result or one copied by hand (to re-run)"
    )
    args = ap.parse_args(argv)
    if args.pending and args.names:
        ap.error("--pending chooses the recipes itself: give no NAME with it")
    names = pending(args.results) if args.pending else args.names or list(RECIPES)
    if args.list:
        print(listing(args.results, [n for n in names if n in RECIPES]))
        return 0
    for name in names:
        command(name)  # an unknown name stops the run before anything runs
    status = 0
    for name in names:
        status |= run(name, extra, args.results.resolve() if args.save else None)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
