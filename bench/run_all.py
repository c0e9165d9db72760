"""Run the benchmarks in bench/ (all, or those named) and print each one's JSON.

python bench/run_all.py [core] [live] [mcp] [tui]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    status = 0
    for script in scripts:
        print(f"# {script.name}", flush=True)
        status |= subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
