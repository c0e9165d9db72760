"""Issue 14 benchmark: parse CPU per note and per KB, on the generator's plain and realistic vaults.

    python bench/bench_parse.py [--notes 3000] [--repeat 5]

Runs core.markdown.parse.parse_note (frontmatter, core.markdown.mdlex's links, tags and hidden text) over the
same note bytes several times in one process and keeps the best pass (CPU time, so other
processes on the machine count less). The target: realistic notes (2-20 KB with code blocks,
tables, callouts, lists, dotted frontmatter keys) cost at most 2x the plain notes' per KB.
Also times markdown-it-py's CommonMark tokenizer alone on the same bodies when it is
installed (it comes with textual): the library the lexer was measured against. Prints JSON.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import emit, vault  # noqa: E402

TARGETS = {"realistic_per_kb_over_plain_max": 2.0}


def _notes(root: Path, limit: int) -> list[bytes]:
    files = sorted(p for p in root.rglob("*.md") if ".vaultwatch" not in p.parts)[:limit]
    return [p.read_bytes() for p in files]


def _best(fn, datas: list[bytes], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for d in datas:
            fn(d)
        best = min(best, time.process_time() - t)
    return best


def measure(datas: list[bytes], repeat: int) -> dict:
    from vaultwatch.core.markdown.parse import decode, parse_note, split_frontmatter

    kb = sum(map(len, datas)) / 1024
    cpu = _best(lambda d: parse_note(d, "stem"), datas, repeat)
    out = {
        "notes": len(datas),
        "kb": round(kb, 1),
        "mean_note_kb": round(kb / len(datas), 2),
        "parse_us_per_note": round(cpu / len(datas) * 1e6, 1),
        "parse_us_per_kb": round(cpu / kb * 1e6, 2),
    }
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        return out
    md = MarkdownIt("commonmark")
    bodies = [split_frontmatter(decode(d)[0])[1] for d in datas]
    best = float("inf")
    for _ in range(max(1, repeat // 2)):
        t = time.process_time()
        for b in bodies:
            md.parse(b)
        best = min(best, time.process_time() - t)
    out["markdown_it_tokenize_us_per_note"] = round(best / len(datas) * 1e6, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    plain_root, _ = vault(a.notes)
    real_root, _ = vault(a.notes, realistic=True)
    plain = measure(_notes(plain_root, a.notes), a.repeat)
    real = measure(_notes(real_root, a.notes), a.repeat)
    ratio = real["parse_us_per_kb"] / plain["parse_us_per_kb"]
    emit(
        {
            "benchmark": "parse",
            "targets": TARGETS,
            "plain": plain,
            "realistic": real,
            "realistic_per_kb_over_plain": round(ratio, 2),
            "ok": ratio <= TARGETS["realistic_per_kb_over_plain_max"],
        }
    )


if __name__ == "__main__":
    main()
