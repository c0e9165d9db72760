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
import signal
import subprocess
import sys
import threading
import time
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


def _children_of(pids: set[int]) -> set[int]:
    """Every live descendant of `pids`, read from /proc (empty where there is no /proc)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            # the command name sits in parentheses and may hold spaces: the state and the parent pid follow
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if state != "Z":  # a zombie has ended: only its exit status is left to collect
            parent[int(entry.name)] = int(ppid)
    found: set[int] = set()
    todo = set(pids)
    while todo:
        todo = {pid for pid, ppid in parent.items() if ppid in todo} - found
        found |= todo
    return found


def _adopt_orphans() -> bool:
    """Make this process the subreaper of everything the tests start (Linux): a worker that the
    timeout ends leaves its servers behind, and one of them holding the output pipe open kept a CI
    job waiting after the last test; as their subreaper, this process finds and stops them."""
    if sys.platform != "linux":
        return False
    import ctypes

    pr_set_child_subreaper = 36
    return ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0


def _reap(stop: threading.Event, keep: set[int]) -> None:
    """Collect adopted orphans as they exit, so none lingers as a zombie that a test's liveness
    check would take for alive; the pytest process itself is left to Popen.wait."""
    while not stop.is_set():
        try:  # polled, never blocking: the pass joins this thread before the next one starts
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT | os.WNOHANG)
        except ChildProcessError:
            info = None
        if info is None or info.si_pid in keep:
            stop.wait(0.05)
            continue
        try:
            os.waitpid(info.si_pid, 0)
        except ChildProcessError:
            pass


def run_bounded(cmd: list[str], env: dict[str, str], minutes: float) -> int:
    """Run one pytest pass; past `minutes`, make every test process print its threads' stacks
    (tests/conftest.py registers SIGUSR1 for that) and stop the pass. Whatever the tests left
    running is stopped afterwards and named, so a run always ends."""
    adopted = _adopt_orphans()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    stop = threading.Event()
    # reaps only while this pass runs: a reaper left over would take the next pass's pytest process
    # for an orphan, and Popen.wait would then see no exit status
    reaper = threading.Thread(target=_reap, args=(stop, {proc.pid}), daemon=True)
    if adopted:
        reaper.start()
    try:
        code = proc.wait(timeout=minutes * 60)
    except KeyboardInterrupt:  # pytest has the same ^C: let it print its summary
        code = proc.wait()
    except subprocess.TimeoutExpired:
        print(f"dev.py: the pass ran past {minutes:g} minutes; the test processes' stacks follow", file=sys.stderr)
        for pid in [proc.pid, *filter(_is_worker, _children_of({proc.pid}))]:
            _signal(pid, signal.SIGUSR1)
            time.sleep(1)  # one at a time: their dumps share the output
        proc.kill()
        code = proc.wait()
        code = code if code > 0 else 1
    left = _children_of({os.getpid()}) - {proc.pid}
    if left:
        names = sorted({_name(pid) for pid in left})
        print(f"dev.py: stopping {len(left)} processes the tests left running: {', '.join(names)}", file=sys.stderr)
        for pid in left:
            _signal(pid, signal.SIGKILL)
    time.sleep(0.3 if left else 0)
    stop.set()
    if reaper.is_alive():
        reaper.join()
    return code


def _is_worker(pid: int) -> bool:
    """An xdist worker: execnet starts each one with this bootstrap as its command line (the
    worker sets PYTEST_XDIST_WORKER itself, after its start, so its /proc environ lacks it)."""
    return "exec(eval(sys.stdin.readline()))" in _name(pid)


def _name(pid: int) -> str:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split()
    except OSError:
        words = []
    return " ".join(words)[:80] or f"pid {pid} (exited)"


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


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
            return run_bounded([*pytest, *rest], env, minutes=30)
        # two passes: everything else in parallel, then the tests that assert on wall-clock time
        # (marked `timing`) one at a time, so no other test's load skews what they measure
        # one worker more than the cores: about a third of a worker's time is spent waiting on its
        # children (servers, bridges, killed writers), which another worker can use
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        workers = ["-n", env.get("VAULTWATCH_TEST_WORKERS", str(cores + 1)), "--dist", "loadgroup"]
        parallel = run_bounded([*pytest, *workers, "-m", "not timing", *rest], env, minutes=30)
        # with no paths given, only the files that hold timing tests are collected
        paths = any((ROOT / a.split("::")[0]).exists() for a in rest if not a.startswith("-"))
        where = rest if paths else [*rest, *timing_files()]
        serial = run_bounded([*pytest, "-n", "0", "-m", "timing", *where], env, minutes=10)
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
