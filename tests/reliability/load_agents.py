"""N agents x M mixed calls (reads, listings, searches, writes with if_match, a contended counter)
against a vaultwatch socket: the Agent used by test_load.py, and a runner for a separate process

    python tests/reliability/load_agents.py SOCKET VAULT AGENTS CALLS SEED

which prints one JSON document: errors, each agent's notes with the etag of its last acknowledged
write, counter increments, conflicts, latencies and the call mix.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reliability_helpers import uds_client  # noqa: E402


def vault_paths(root: Path) -> tuple[list[str], list[str]]:
    """Visible notes of a vault and their folders."""
    paths = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    return paths, sorted({p.rsplit("/", 1)[0] for p in paths if "/" in p})


class Agent:
    """One agent: its own notes (with the etag of its last acknowledged write) and a call log."""

    def __init__(self, i: int, calls: int, paths: list[str], folders: list[str], rng: random.Random) -> None:
        self.i, self.calls, self.paths, self.folders, self.rng = i, calls, paths, folders, rng
        self.own = {f"Load/agent{i:02}/note{k}.md": None for k in range(4)}  # path -> (etag, content)
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.conflicts = 0
        self.acked_writes = 0
        self.increments = 0
        self.gave_up = 0
        self.kinds: dict[str, int] = {}

    async def call(self, c, name: str, args: dict):
        t = time.perf_counter()
        r = await c.call_tool(name, args)
        self.latencies.append(time.perf_counter() - t)
        self.kinds[name] = self.kinds.get(name, 0) + 1
        return r

    async def run(self, sock: str) -> None:
        async with uds_client(sock, name=f"load-agent-{self.i:02}") as c:
            for path in self.own:  # create its notes
                content = f"---\nowner: agent{self.i}\nrev: 0\n---\n# Note of agent {self.i}\nrev 0\n"
                r = await self.call(c, "write", {"path": path, "content": content, "create_only": True})
                self._check(r, "write")
                self.own[path] = (r.structured_content["etag"], content)
                self.acked_writes += 1
            for n in range(self.calls):
                roll = self.rng.random()
                try:
                    if roll < 0.30:
                        await self._list(c)
                    elif roll < 0.50:
                        r = await self.call(c, "read", {"path": self.rng.choice(self.paths)})
                        self._check(r, "read")
                    elif roll < 0.58:
                        r = await self.call(
                            c,
                            "search",
                            {"query": self.rng.choice(["vault", "agent", "stale review", "trust", "note*"])},
                        )
                        if r.is_error and "not ready" in r.content[0].text:
                            continue  # the full-text index is still building: an answer, not a failure
                        self._check(r, "search")
                    elif roll < 0.65:
                        name = self.rng.choice(["triage", "list_tags", "list_folders"])
                        r = await self.call(c, name, {})
                        self._check(r, name)
                    elif roll < 0.90:
                        await self._write_own(c, n)
                    else:
                        await self._increment(c)
                except Exception as exc:  # noqa: BLE001 - a dropped session is an error like any other
                    self.errors.append(f"call {n}: {type(exc).__name__}: {exc}")

    async def _list(self, c) -> None:
        choice = self.rng.randrange(4)
        args = [
            {"folder": self.rng.choice(self.folders), "limit": 100},
            {"filters": {"status": "deprecated"}, "limit": 200},
            {"filters": {"stale": "true"}, "limit": 50},
            {"pattern": "**/*Search*.md"},
        ][choice]
        r = await self.call(c, "list_documents", args)
        self._check(r, "list_documents")

    async def _write_own(self, c, n: int) -> None:
        path = self.rng.choice(sorted(self.own))
        etag, content = self.own[path]
        rev = int(re.search(r"rev: (\d+)", content).group(1)) + 1
        mode = self.rng.randrange(3)
        if mode == 0:
            new = f"---\nowner: agent{self.i}\nrev: {rev}\n---\n# Note of agent {self.i}\nrev {rev}\n" + "x\n" * (n % 7)
            r = await self.call(c, "write", {"path": path, "content": new, "if_match": etag})
        elif mode == 1:
            r = await self.call(c, "update_frontmatter", {"path": path, "set": {"rev": rev}, "if_match": etag})
        else:
            r = await self.call(
                c,
                "edit",
                {"path": path, "old_text": f"rev: {rev - 1}\n", "new_text": f"rev: {rev}\n", "if_match": etag},
            )
        self._check(r, "write")
        if not r.is_error:
            self.acked_writes += 1
            got = await self.call(c, "read", {"path": path})
            self._check(got, "read")
            assert got.structured_content["etag"] == r.structured_content["etag"], "read after write disagrees"
            self.own[path] = (r.structured_content["etag"], got.structured_content["content"])

    async def _increment(self, c) -> None:
        """Read the counter, set it one higher under if_match; on a conflict back off and retry.
        Giving up after many conflicts is optimistic concurrency's starvation, not a lost update:
        counted, not an error (the counter must still equal the acknowledged increments)."""
        for attempt in range(60):
            got = await self.call(c, "read", {"path": "Load/counter.md", "frontmatter_only": True})
            self._check(got, "read")
            count = got.structured_content["frontmatter"]["count"]
            r = await self.call(
                c,
                "update_frontmatter",
                {"path": "Load/counter.md", "set": {"count": count + 1}, "if_match": got.structured_content["etag"]},
            )
            if r.is_error and "revision conflict" in r.content[0].text:
                self.conflicts += 1
                await asyncio.sleep(self.rng.random() * min(0.25, 0.004 * 2 ** min(attempt, 8)))
                continue
            self._check(r, "update_frontmatter")
            self.increments += 1
            self.acked_writes += 1
            return
        self.gave_up += 1

    def _check(self, r, name: str) -> None:
        if r.is_error:
            self.errors.append(f"{name}: {r.content[0].text[:200]}")


def main(argv: list[str]) -> int:
    sock, root, n_agents, calls, seed = argv[0], Path(argv[1]), int(argv[2]), int(argv[3]), int(argv[4])
    paths, folders = vault_paths(root)
    rng = random.Random(seed)
    agents = [Agent(i, calls, paths, folders, random.Random(rng.random())) for i in range(n_agents)]
    started = time.perf_counter()

    async def run_all():
        await asyncio.gather(*(a.run(sock) for a in agents))

    asyncio.run(run_all())
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - started,
                "errors": [e for a in agents for e in a.errors],
                "own": {p: etag for a in agents for p, (etag, _) in a.own.items() if etag},
                "increments": sum(a.increments for a in agents),
                "conflicts": sum(a.conflicts for a in agents),
                "gave_up": sum(a.gave_up for a in agents),
                "acked_writes": sum(a.acked_writes for a in agents),
                "latencies": [x for a in agents for x in a.latencies],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
