"""Reading pages of a 50 MB note: time and peak memory per read (core.disk.reader).

    python bench/bench_reader.py [--mb 50] [--json-out FILE]

Builds a note of about 50 MB (the reliability suite's hostile note: frontmatter, then a long
run of lines with links and tags) in a temporary vault, loads the vault in a fresh child
interpreter, then times each read and measures that read's own peak RSS (the kernel's
high-water mark, reset before each read through /proc/self/clear_refs). Each read is done
twice in two modes: `whole_decode` (the path notes under reader.WINDOWED_MIN_BYTES take, and
every note took before core.disk.textmap) and `windowed`, where the first ("cold") call of a note
version builds its page map and later ("warm") calls only stream the file for the etag and
decode the page asked for. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = "Lorem ipsum [[Target]] dolor #tag sit `code` amet, [md](Other.md) consectetur adipiscing.\n"

CHILD = r"""
import json, sys, time
from vaultwatch.core.vault import Vault
from vaultwatch.core.disk import reader
from vaultwatch.core.disk.reader import read

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

v = Vault(sys.argv[1], cache=False)
v.load()
cases = {
    "page_1": dict(),
    "late_page": dict(offset=int(sys.argv[2])),
    "lines_late": dict(lines=(int(sys.argv[3]), int(sys.argv[3]) + 10)),
    "frontmatter_only": dict(frontmatter_only=True),
}
windowed_min = reader.WINDOWED_MIN_BYTES
out = {}
for mode in ("whole_decode", "windowed"):
    # whole_decode: the path small notes take (and every note took before the page map)
    reader.WINDOWED_MIN_BYTES = 1 << 62 if mode == "whole_decode" else windowed_min
    for name, kw in cases.items():
        for attempt in ("cold", "warm"):
            if attempt == "cold":
                reader._MAPS.clear()  # the first read of this version of the note
            reset_peak()
            base = rss()
            t = time.perf_counter()
            r = read(v, "Big.md", **kw)
            took = time.perf_counter() - t
            out.setdefault(mode, {})[f"{name}_{attempt}"] = {
                "ms": round(took * 1000, 1), "peak_rss_over_base_mb": hwm() - base,
                "chars": len(r.content or ""), "start_line": r.start_line, "etag": r.etag[:12]}
print(json.dumps(out))
"""


def build(root: Path, mb: int) -> tuple[int, int]:
    root.mkdir(parents=True)
    n = mb * 2**20 // len(LINE)
    with open(root / "Big.md", "w") as f:
        f.write("---\ntitle: Big\nstatus: draft\n---\n# Big\n")
        f.write(LINE * n)
    (root / "Small.md").write_text("# Small\n")
    return (root / "Big.md").stat().st_size, n


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--json-out", type=Path, default=None)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="vw-bigread-"))
    try:
        size, lines = build(tmp / "vault", args.mb)
        env = dict(os.environ, PYTHONPATH=str(ROOT), VAULTWATCH_CACHE="0")
        late_offset = int(size * 0.6)
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(tmp / "vault"), str(late_offset), str(int(lines * 0.8))],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(ROOT),
            timeout=600,
        )
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        reads = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    result = {"note_mb": round(size / 2**20, 1), "late_offset": late_offset, "reads": reads, "uptime": load}
    text = json.dumps(result, indent=1)
    if args.json_out:
        args.json_out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
