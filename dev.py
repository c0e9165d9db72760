#!/usr/bin/env python3
"""Set up and run vaultwatch from a source checkout, with nothing but Python 3.11+.

    python3 dev.py run [ARGS...]    launch vaultwatch (default: the bundled demo vault)
    python3 dev.py test [ARGS...]   run the whole test suite (tests marked `timing` in a serial pass after)
    python3 dev.py lint             ruff check and ruff format --check on everything, mypy, lint-imports
    python3 dev.py bench [NAME]     run the benchmarks in bench/ (JSON on stdout; --save keeps each
                                    result in bench/results/ for docs/benchmarks.md: python -m bench.report)
    python3 dev.py screenshots      regenerate the SVGs in screenshots/

Each command creates or updates ./.venv first. The step is idempotent: the
virtualenv is reinstalled only when pyproject.toml changed since the last install.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".vaultwatch-installed"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")


def _want() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_venv() -> None:
    """Create ./.venv and install vaultwatch with its test extras when needed."""
    if sys.version_info < (3, 11):
        sys.exit(f"vaultwatch needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PY.exists():
        print("dev.py: creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _want():
        return
    print("dev.py: installing vaultwatch and its test dependencies into .venv", file=sys.stderr)
    pip = [str(PY), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.check_call([*pip, "install", "-e", f"{ROOT}[test]"])
    STAMP.write_text(_want())


def timing_files() -> list[str]:
    """The test files that mark tests `timing`: the serial pass collects only these, because
    collecting the whole suite to select a few dozen tests costs seconds of its own."""
    return sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if "mark.timing" in path.read_text(encoding="utf-8")
    )


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "lint", "bench", "screenshots"}:
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    ensure_venv()
    env = dict(os.environ)
    if cmd == "run":
        return subprocess.call([str(BIN / "vaultwatch"), *rest], env=env)
    if cmd == "test":
        # snapshots must not see the user's colour or theme settings
        env.pop("NO_COLOR", None)
        env.pop("TEXTUAL_THEME", None)
        pytest = [str(PY), "-m", "pytest", "-p", "no:cacheprovider", "--snapshot-warn-unused"]
        if any(a.startswith(("-n", "-m")) for a in rest):  # the caller chose workers or a selection: as asked
            return subprocess.call([*pytest, *rest], cwd=ROOT, env=env)
        # two passes: everything else in parallel, then the tests that assert on wall-clock time
        # (marked `timing`) one at a time, so no other test's load skews what they measure
        # one worker more than the cores: about a third of a worker's time is spent waiting on its
        # children (servers, bridges, killed writers), which another worker can use
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        workers = ["-n", env.get("VAULTWATCH_TEST_WORKERS", str(cores + 1)), "--dist", "loadgroup"]
        parallel = subprocess.call([*pytest, *workers, "-m", "not timing", *rest], cwd=ROOT, env=env)
        # with no paths given, only the files that hold timing tests are collected
        paths = any((ROOT / a.split("::")[0]).exists() for a in rest if not a.startswith("-"))
        where = rest if paths else [*rest, *timing_files()]
        serial = subprocess.call([*pytest, "-n", "0", "-m", "timing", *where], cwd=ROOT, env=env)
        no_tests = 5  # pytest's exit code when the selection holds none (a file without timing tests)
        failed = [code for code in (parallel, serial) if code not in (0, no_tests)]
        return failed[0] if failed else (no_tests if parallel == serial == no_tests else 0)
    if cmd == "lint":
        # every check runs even when an earlier one fails: one run reports them all
        checks = [
            [str(BIN / "ruff"), "check", "."],
            [str(BIN / "ruff"), "format", "--check", "."],
            [str(BIN / "mypy")],  # files: [tool.mypy] in pyproject.toml
            [str(BIN / "lint-imports")],  # contracts: [tool.importlinter] in pyproject.toml
        ]
        failed = [check[0] for check in checks if subprocess.call(check, cwd=ROOT, env=env) != 0]
        if failed:
            print(f"dev.py lint: failed: {', '.join(Path(name).name for name in failed)}", file=sys.stderr)
        return 1 if failed else 0
    if cmd == "bench":
        return subprocess.call([str(PY), str(ROOT / "bench" / "run_all.py"), *rest], cwd=ROOT, env=env)
    return subprocess.call([str(PY), str(ROOT / "screenshots" / "make_screenshots.py"), *rest], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
