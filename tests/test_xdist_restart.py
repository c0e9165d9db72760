"""A test that ends its xdist worker (as pytest-timeout's thread method does to a hung test) fails
alone: a new worker takes the rest, every other test runs once, and the run ends. Under the
loadgroup scheduling that `dev.py test` uses, pytest-xdist 3.8.0 waited forever there instead
(mended by tests/xdist_restart.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

FILES = {
    "test_a.py": "def test_a1(): pass\ndef test_a2(): pass\n",
    # the worker dies on test_dies: the group's test after it still runs, on a new worker
    "test_b.py": "import os\ndef test_dies(): os._exit(1)\ndef test_after(): pass\n",
    # a hung test ended by pytest-timeout's thread method, alone in its group
    "test_c.py": ("import time, pytest\n@pytest.mark.timeout(2, method='thread')\ndef test_hangs(): time.sleep(60)\n"),
    "test_d.py": "def test_d1(): pass\n",
    "test_e.py": "import pytest\n@pytest.mark.xdist_group('g')\ndef test_e1(): pass\n",
    "conftest.py": "import xdist_restart\nxdist_restart.install()\n",
    "pytest.ini": "[pytest]\n",
}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_whose_workers_die_ends_with_each_other_test_run_once(tmp_path: Path, workers: int) -> None:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers), "--dist", "loadgroup"]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        out, _ = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"the run never ended after its workers died:\n{out[-3000:]}")
    assert "2 failed, 5 passed" in out, out[-3000:]
    assert "FAILED test_b.py::test_dies" in out and "FAILED test_c.py::test_hangs" in out, out[-3000:]
