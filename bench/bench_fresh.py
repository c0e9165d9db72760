"""Freshness through a real client: write -> visible in listing, outside create -> visible in
listing and in search, for vaultwatch and (with --baseline) vaultwatch from another checkout,
interleaved in the same run.

Each round spawns each server over stdio with the real Python `mcp` client (as bench_peers
does, `serve --stdio` on its own copy of the vaultgen vault), waits until its listing is
complete and its search index answers, then:

- write -> visible in listing: a new note through the `write` tool, then the folder's listing
  until the note is in it (timed from before the write call; bench_peers' figure);
- outside create -> visible: a file written straight to disk, then the folder's listing until
  it shows it and a search for a word only it holds until that finds it, each polled on its
  own and timed from the create (bench_peers' figure), a pause between creates.

Prints JSON: p50/p95 per server, each figure's ratio to the baseline's, and the load average.
The vector index is off unless --semantic (its first build at 10k runs for minutes beside the
calls and would be most of the noise); bench_peers measures with it on.

    python -m bench.bench_fresh [--notes 10000] [--rounds 3] [--writes 20] [--creates 20]
                                [--baseline CHECKOUT] [--semantic]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script by dev.py bench

from mcp import Client  # noqa: E402

from bench.bench_peers import NEW_FOLDER, OUTSIDE_FOLDER, TIMEOUT_S, Vaultwatch, pct  # noqa: E402
from bench.common import OUT, ROOT, emit, vault  # noqa: E402

FIGURES = ("write_to_listing_ms", "outside_to_listing_ms", "outside_to_search_ms")


class Fresh:
    """One server's copy of the vault and its samples over the rounds."""

    def __init__(self, server: Vaultwatch, base: Path, work: Path, semantic: bool) -> None:
        self.server = server
        self.semantic = semantic
        self.dir = work / server.name
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.root = self.dir / "vault"
        shutil.copytree(base, self.root, symlinks=True)
        (self.root / NEW_FOLDER).mkdir()
        (self.root / OUTSIDE_FOLDER).mkdir()
        self.samples: dict[str, list[float]] = {f: [] for f in FIGURES}
        self.missed: dict[str, int] = {f: 0 for f in FIGURES}

    async def round(self, rnd: int, writes: int, creates: int, probe: tuple[str, str]) -> None:
        home = self.dir / "home"
        home.mkdir(exist_ok=True)
        params = self.server.params(self.root, home, self.dir / f"cache-{rnd}")
        if not self.semantic:
            params.env["VAULTWATCH_SEMANTIC"] = "0"
        s = self.server
        async with Client(params, mode="legacy") as c:
            deadline = time.perf_counter() + 300
            while True:  # loaded and searchable
                try:
                    if probe[1] in await s.search(c, probe[0]):
                        break
                except RuntimeError:  # the search index is still being built
                    pass
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"{s.name}: search never found {probe[1]!r}")
                await asyncio.sleep(0.05)
            for i in range(writes):
                rel = f"{NEW_FOLDER}/w{rnd}-{i}.md"
                t = time.perf_counter()
                await s.write(c, rel, f"# w{rnd} {i}\n\nwritten through the server\n")
                while time.perf_counter() - t < TIMEOUT_S:
                    if rel in await s.list_folder(c, NEW_FOLDER):
                        self.samples["write_to_listing_ms"].append((time.perf_counter() - t) * 1000)
                        break
                else:
                    self.missed["write_to_listing_ms"] += 1
            await asyncio.sleep(0.2)
            for i in range(creates):
                word = f"zqx{rnd}k{i}fresh{s.name.replace('-', '').replace('@', '')}"
                rel = f"{OUTSIDE_FOLDER}/o{rnd}-{i}.md"
                t = time.perf_counter()
                with open(self.root / rel, "w", encoding="utf-8") as fh:
                    fh.write(f"# o{rnd} {i}\n\n{word} appeared outside\n")
                checks = {
                    "outside_to_listing_ms": lambda: s.list_folder(c, OUTSIDE_FOLDER),
                    "outside_to_search_ms": lambda word=word: s.search(c, word),
                }
                for what, ask in checks.items():
                    while time.perf_counter() - t < TIMEOUT_S:
                        if rel in await ask():
                            self.samples[what].append((time.perf_counter() - t) * 1000)
                            break
                    else:
                        self.missed[what] += 1
                await asyncio.sleep(0.2)  # the next create is a change of its own, not part of a burst

    def summary(self) -> dict:
        out: dict = {}
        for fig, values in self.samples.items():
            out[fig] = {
                "p50": round(statistics.median(values), 2) if values else None,
                "p95": pct(values, 0.95),
                "n": len(values),
                "missed": self.missed[fig],
                "slowest": [round(v, 1) for v in sorted(values)[-5:]],
            }
        return out


async def main(notes: int, rounds: int, writes: int, creates: int, baseline: Path | None, semantic: bool) -> dict:
    base, manifest = vault(notes)
    work = OUT / "fresh"
    servers = [Vaultwatch(ROOT, "vaultwatch")]
    if baseline is not None:
        servers.append(Vaultwatch(baseline, "vaultwatch@baseline"))
    runs = [Fresh(s, base, work, semantic) for s in servers]
    some = sorted(p for p in base.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(base).parts))
    note = some[len(some) // 2]
    probe = (note.stem, str(note.relative_to(base)))
    loads = [os.getloadavg()]
    for rnd in range(rounds):
        order = runs[rnd % len(runs) :] + runs[: rnd % len(runs)]
        for run in order:
            await run.round(rnd, writes, creates, probe)
            loads.append(os.getloadavg())
    results = {run.server.name: run.summary() for run in runs}
    ratios: dict = {}
    if baseline is not None:
        new, old = results["vaultwatch"], results["vaultwatch@baseline"]
        for fig in FIGURES:
            ratios[fig] = {
                stat: round(new[fig][stat] / old[fig][stat], 2) if new[fig][stat] and old[fig][stat] else None
                for stat in ("p50", "p95")
            }
    return {
        "benchmark": "fresh",
        "notes": manifest["notes"],
        "rounds": rounds,
        "writes_per_round": writes,
        "creates_per_round": creates,
        "semantic": semantic,
        "load_avg_1min": [round(x[0], 2) for x in loads],
        "results": results,
        "vs_baseline": ratios,
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--writes", type=int, default=20)
    ap.add_argument("--creates", type=int, default=20)
    ap.add_argument("--baseline", type=Path, help="also run vaultwatch from this checkout (e.g. before a change)")
    ap.add_argument("--semantic", action="store_true", help="keep the vector index on (off by default)")
    ns = ap.parse_args()
    emit(asyncio.run(main(ns.notes, ns.rounds, ns.writes, ns.creates, ns.baseline, ns.semantic)))
