"""Every call against the peers: vaultwatch and the PyPI MCP servers for Markdown vaults, side by side.

Spawns each server over stdio with the real Python `mcp` client (as an agent's host does),
on its own copy of a vaultgen vault, and interleaves them (`--rounds`, three by default; the
order rotates each round). Per server and round:

- spawn -> complete correct listing, cold (a fresh cache folder) and warm (the same folder
  again), and for vaultwatch warm again with the client in its default mode (`auto`: a 2026-07-28
  `server/discover` first; every other session uses the initialize handshake, which the peers
  speak), with the floor measured in the same round: one process that walks, reads and parses every
  note (vaultwatch's own scan and parser, no pool, no cache);
- the whole listing (vaultwatch follows `next_cursor`; a peer answers in one call), and for
  vaultwatch the whole listing again in pages the agent sizes with `limit` (`--limit`, 1,000 rows
  by default: bench_calls.SIZED_PAGE says why);
- search p50 over title queries (each answer must contain the note searched for; a search that
  vaultwatch answers with "the index is still building" is asked again, as the answer says, and
  timed to its answer);
- read p50 (each answer's content must equal the file's bytes on disk);
- write -> visible in listing: a new note through the server's write tool, then its folder's
  listing until the note is in it;
- outside create -> visible in listing and in search (p95): a file written straight to disk,
  then the folder's listing and a search for a word only it holds, until both show it;
- the peak RSS of the server's whole process tree (every child included), sampled every
  10 ms from /proc while it runs.

Beside vaultwatch, each round also times the client alone (`ClientFloor`): vaultwatch's answers,
recorded once before the rounds, replayed by a process that answers every request at once
(bench/replay.py), spawned and walked as vaultwatch is. What the Python client spends on
those answers (validating them, the resource_link blocks) is the least any server's listing of
them can cost it: the spawn -> complete listing, the whole listing in both page sizes.

Every listing is checked against the generator's manifest (`bench/vaultgen.py`, `manifest_path`):
the count of notes, the per-top-folder counts and no hidden path. A wrong answer is still
timed and reported (`correct: false` and why), since the peers' listings are not all correct.
Each figure is printed with its ratio to the fastest peer whose answers were correct.

The peers are installed by this script into venvs of their own under bench/out (pip, once;
never into the project's venv): markdown-vault-mcp and obsidian-mcp (with the libraries of
its day; newer fastmcp/pydantic fail to import it).

    python -m bench.bench_peers [--notes 10000] [--rounds 3] [--servers vaultwatch,markdown-vault-mcp,obsidian-mcp]
                                [--baseline CHECKOUT]  # also vaultwatch from CHECKOUT, as "vaultwatch@baseline"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script by dev.py bench

from mcp import Client, StdioServerParameters  # noqa: E402

from bench.common import AS_OF, OUT, ROOT, emit, vault  # noqa: E402
from bench.treerss import below  # noqa: E402

NEW_FOLDER = "bench-new"  # notes the servers' write tools create
OUTSIDE_FOLDER = "bench-outside"  # notes written straight to disk
TIMEOUT_S = 10.0  # a change not visible by then counts as never visible
BUILD_RETRY_S = 120.0  # how long a search is asked again while vaultwatch says its first build runs
PEER_VENVS = {
    "markdown-vault-mcp": ["markdown-vault-mcp[file-watcher]==5.1.0"],
    "obsidian-mcp": ["obsidian-mcp==2.1.6", "fastmcp==2.8.1", "mcp==1.9.4", "pydantic==2.11.7"],
}


# ---------------------------------------------------------------------------------------------
# the peers' venvs


def peer_exe(name: str) -> Path:
    """The peer's console script in a venv of its own under bench/out (installed once)."""
    venv = OUT / f"peer-{name}"
    exe = venv / "bin" / name
    marker = venv / "installed.json"
    if exe.exists() and marker.exists() and json.loads(marker.read_text()) == PEER_VENVS[name]:
        return exe
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *PEER_VENVS[name]], check=True)
    marker.write_text(json.dumps(PEER_VENVS[name]))
    return exe


# ---------------------------------------------------------------------------------------------
# how each server is spawned and asked


def _payload(result) -> dict:
    """A tool result's data: the structured content, else its text as JSON."""
    if result.is_error:
        raise RuntimeError(f"tool error: {result.content[0].text if result.content else result}")
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def _rows(data) -> list[dict]:
    if isinstance(data, list):
        return data
    for key in ("result", "items", "results", "documents", "notes"):
        if isinstance(data.get(key), list):
            return data[key]
    raise RuntimeError(f"no rows in {str(data)[:200]}")


class Server:
    """One MCP server as the benchmark drives it; subclasses name its command and tools."""

    name = ""

    def params(self, root: Path, home: Path, cache: Path) -> StdioServerParameters:
        raise NotImplementedError

    async def list_all(self, c) -> tuple[list[str], int]:
        """Every note path of the vault, and how many calls it took."""
        raise NotImplementedError

    async def list_sized(self, c, limit: int) -> tuple[list[str], int] | None:
        """Every note path in pages of `limit` rows, and how many calls it took; None: no sized pages."""
        return None

    async def list_folder(self, c, folder: str) -> list[str]:
        raise NotImplementedError

    async def search(self, c, text: str) -> list[str]:
        raise NotImplementedError

    async def read(self, c, path: str) -> str:
        raise NotImplementedError

    async def write(self, c, path: str, content: str) -> None:
        raise NotImplementedError

    def env(self, home: Path, **more: str) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **more}


class Vaultwatch(Server):
    name = "vaultwatch"

    def __init__(self, checkout: Path = ROOT, name: str = "vaultwatch") -> None:
        self.checkout, self.name = checkout, name

    def params(self, root, home, cache):
        run = Path(tempfile.mkdtemp(prefix="vwb", dir="/tmp"))
        env = self.env(
            home,
            XDG_CACHE_HOME=str(cache),
            XDG_RUNTIME_DIR=str(run),
            XDG_STATE_HOME=str(home / "state"),
            PYTHONPATH=str(self.checkout),
        )
        args = ["-m", "vaultwatch.tui.entry", "serve", str(root), "--stdio", "--as-of", AS_OF]
        return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(self.checkout))

    async def list_all(self, c, limit: int | None = None):
        paths: list[str] = []
        cursor, calls = None, 0
        while True:
            args: dict = {} if limit is None else {"limit": limit}
            if cursor:
                args["cursor"] = cursor
            data = _payload(await c.call_tool("list_documents", args))
            calls += 1
            paths.extend(r["path"] for r in data["result"])
            cursor = data.get("next_cursor")
            if not cursor:
                return paths, calls

    async def list_sized(self, c, limit):
        return await self.list_all(c, limit)

    async def list_folder(self, c, folder):
        return [r["path"] for r in _payload(await c.call_tool("list_documents", {"folder": folder}))["result"]]

    async def search(self, c, text):
        # a search while the first full-text build runs waits for it a while, then says so and asks
        # the client to try again: done as its error says, the time to the answer counts the waits
        deadline = time.perf_counter() + BUILD_RETRY_S
        while True:
            result = await c.call_tool("search", {"query": text, "limit": 10})
            if not (result.is_error and "still building" in str(result.content) and time.perf_counter() < deadline):
                return [r["path"] for r in _payload(result)["result"]]
            await asyncio.sleep(0.1)

    async def read(self, c, path):
        return _payload(await c.call_tool("read", {"path": path}))["content"]

    async def write(self, c, path, content):
        _payload(await c.call_tool("write", {"path": path, "content": content}))


class MarkdownVaultMcp(Server):
    name = "markdown-vault-mcp"

    def params(self, root, home, cache):
        env = self.env(
            home,
            MARKDOWN_VAULT_MCP_SOURCE_DIR=str(root),
            MARKDOWN_VAULT_MCP_INDEX_PATH=str(cache / "index.db"),  # its warm start
            FASTMCP_CHECK_FOR_UPDATES="off",  # no network
        )
        cache.mkdir(parents=True, exist_ok=True)
        return StdioServerParameters(command=str(peer_exe(self.name)), args=["serve"], env=env)

    async def list_all(self, c):
        return [r["path"] for r in _rows(_payload(await c.call_tool("list_documents", {})))], 1

    async def list_folder(self, c, folder):
        return [r["path"] for r in _rows(_payload(await c.call_tool("list_documents", {"folder": folder})))]

    async def search(self, c, text):
        data = _payload(await c.call_tool("search", {"query": text, "mode": "keyword", "limit": 10}))
        return [r["path"] for r in _rows(data)]

    async def read(self, c, path):
        return _payload(await c.call_tool("read", {"path": path}))["content"]

    async def write(self, c, path, content):
        _payload(await c.call_tool("write", {"path": path, "content": content}))


class ObsidianMcp(Server):
    name = "obsidian-mcp"

    def params(self, root, home, cache):
        env = self.env(home, OBSIDIAN_VAULT_PATH=str(root))
        return StdioServerParameters(command=str(peer_exe(self.name)), args=[], env=env)

    async def list_all(self, c):
        return [r["path"] for r in _rows(_payload(await c.call_tool("list_notes_tool", {})))], 1

    async def list_folder(self, c, folder):
        return [r["path"] for r in _rows(_payload(await c.call_tool("list_notes_tool", {"directory": folder})))]

    async def search(self, c, text):
        data = _payload(await c.call_tool("search_notes_tool", {"query": text, "max_results": 10}))
        return [r["path"] for r in _rows(data)]

    async def read(self, c, path):
        return _payload(await c.call_tool("read_note_tool", {"path": path}))["details"]["content"]

    async def write(self, c, path, content):
        _payload(await c.call_tool("create_note_tool", {"path": path, "content": content}))


SERVERS: dict[str, Callable[[], Server]] = {
    "vaultwatch": Vaultwatch,
    "markdown-vault-mcp": MarkdownVaultMcp,
    "obsidian-mcp": ObsidianMcp,
}


class ClientFloor:
    """The Python client alone on vaultwatch's listing: a replay (bench/replay.py) of vaultwatch's own answers,
    recorded once on a copy of the vault (bench_floor's tap), answering each request at once. Spawned as
    vaultwatch is (the replay imports only json and sys), then walked as Run.calls walks vaultwatch."""

    def __init__(self, base: Path, manifest: dict, work: Path, sized_page: int) -> None:
        self.base, self.manifest, self.sized_page = base, manifest, sized_page
        self.dir = work / "client-floor"
        self.recording = self.dir / "recording.jsonl"
        self.samples: dict[str, list[float]] = {}

    async def record(self) -> None:
        """vaultwatch's answers to the walks (both page sizes) on a fresh copy of the vault."""
        from bench.bench_floor import record  # noqa: PLC0415  (the tap's module)

        shutil.rmtree(self.dir, ignore_errors=True)
        root, home = self.dir / "vault", self.dir / "home"
        shutil.copytree(self.base, root, symlinks=True)
        home.mkdir(parents=True)
        await record(root, home, self.manifest, self.sized_page, self.recording)
        shutil.rmtree(root, ignore_errors=True)

    def load_floor(self) -> float:
        """Seconds from spawning a fresh process that imports the core and loads the vault from a warm entry
        cache, and nothing else (no server, no watcher, no listing), to its saying it is loaded: the least a
        warm spawn's first page costs a server built on this core. The first call writes the cache."""
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(self.dir / "load-cache")}
        code = "import sys\nfrom vaultwatch.core.vault import Vault\nVault(sys.argv[1]).load()\nprint('loaded', flush=True)\n"
        if not (self.dir / "load-cache").exists():
            subprocess.run(
                [sys.executable, "-c", code, str(self.base)], env=env, cwd=ROOT, check=True, capture_output=True
            )
        started = time.perf_counter()
        with subprocess.Popen(
            [sys.executable, "-c", code, str(self.base)], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stdout is not None
            said = proc.stdout.readline()
            took = time.perf_counter() - started
            proc.wait()
        if said.strip() != "loaded" or proc.returncode:
            raise RuntimeError(f"the bare load failed ({proc.returncode}): {said!r}")
        return took

    async def round(self) -> None:
        from bench.bench_floor import server_env  # noqa: PLC0415

        self.samples.setdefault("warm_load_s", []).append(self.load_floor())
        home = self.dir / "home"
        args = ["-m", "bench.replay", str(self.recording)]
        params = StdioServerParameters(command=sys.executable, args=args, env=server_env(home), cwd=str(ROOT))
        walker, check = Vaultwatch(), Manifest(self.manifest).check
        t0 = time.perf_counter()
        async with Client(params, mode="legacy") as c:
            paths, _ = await walker.list_all(c)
            self._add("spawn_to_listing_warm_s", time.perf_counter() - t0, check(paths))
            for _ in range(3):
                for key, size in (("whole_listing_ms", None), ("whole_listing_limit_ms", self.sized_page)):
                    t = time.perf_counter()
                    paths, _ = await walker.list_all(c, size)
                    self._add(key, (time.perf_counter() - t) * 1000, check(paths))

    def _add(self, key: str, value: float, problems: list[str]) -> None:
        if problems:  # the recording is vaultwatch's own listing: a wrong one is the bench's bug
            raise RuntimeError(f"the client floor's {key} listing is wrong: {'; '.join(problems)}")
        self.samples.setdefault(key, []).append(value)

    def summary(self) -> dict:
        return {key: round(statistics.median(v), 3 if key.endswith("_s") else 1) for key, v in self.samples.items()}


# ---------------------------------------------------------------------------------------------
# measuring


class TreeRss:
    """Peak summed RSS (MB) of this process's descendants started while it runs (the spawned server
    and its children), sampled every 10 ms by a process of its own (bench/treerss.py: a thread here
    would hold the interpreter the client's timed calls need). A process already there when it starts
    (the previous server of the interleaved rounds, still exiting) is left out with its children."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._sampler: subprocess.Popen[str] | None = None

    def __enter__(self) -> TreeRss:
        skip = ",".join(map(str, below(os.getpid())))
        self._sampler = subprocess.Popen(
            [sys.executable, "-m", "bench.treerss", str(os.getpid()), skip],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        return self

    def __exit__(self, *exc) -> None:
        assert self._sampler is not None
        out, _ = self._sampler.communicate("", timeout=30)  # its stdin closed: it prints the peak
        self.peak_mb = float(out.split()[-1])


class Manifest:
    """What a complete, correct listing holds: the generator's counts plus the notes made since."""

    def __init__(self, manifest: dict) -> None:
        self.m = manifest
        self.extra: dict[str, int] = {}

    def added(self, folder: str) -> None:
        self.extra[folder] = self.extra.get(folder, 0) + 1

    def check(self, paths: list[str]) -> list[str]:
        problems = []
        want = self.m["notes"] + sum(self.extra.values())
        if len(paths) != want:
            problems.append(f"{len(paths)} notes listed, {want} expected")
        if len(set(paths)) != len(paths):
            problems.append(f"{len(paths) - len(set(paths))} duplicate rows")
        hidden = [p for p in paths if p.startswith(".") or "/." in p]
        if hidden:
            problems.append(f"{len(hidden)} hidden paths listed (e.g. {hidden[0]!r})")
        per: dict[str, int] = {}
        for p in paths:
            top = p.split("/", 1)[0] if "/" in p else ""
            per[top] = per.get(top, 0) + 1
        expected = dict(self.m["per_top_folder"])
        for folder, n in self.extra.items():
            expected[folder] = expected.get(folder, 0) + n
        wrong = {f: (per.get(f, 0), n) for f, n in expected.items() if per.get(f, 0) != n}
        if wrong:
            problems.append(f"per-folder counts differ (listed, expected): {dict(list(wrong.items())[:3])}")
        return problems


def floor_s(root: Path) -> float:
    """Seconds one fresh process takes to walk, read and parse every note (vaultwatch's scan and
    parser, one process, no cache): the least a complete listing can cost from a cold start."""
    code = (
        "import sys, time; t = time.perf_counter()\n"
        "from vaultwatch.core.index.ignore import IgnoreRules\n"
        "from vaultwatch.core.index.scan import FileFact, ScanConfig, entry_for, walk\n"
        "root = sys.argv[1]; n = 0\n"
        "for f in walk(root, ScanConfig(None, IgnoreRules.from_vault(root))):\n"
        "    if isinstance(f, FileFact) and f.kind == 'note':\n"
        "        entry_for(f); n += 1\n"
        "print(n, time.perf_counter() - t)\n"
    )
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert int(out.stdout.split()[0]) > 0, out
    return time.perf_counter() - started


def pct(samples: list[float], q: float) -> float | None:
    if not samples:
        return None
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 2)


async def until(check: Callable, timeout: float = TIMEOUT_S) -> float | None:
    """Seconds until `await check()` is true (polled back to back), None at the timeout."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if await check():
            return time.perf_counter() - t0
    return None


class Run:
    """One server's copy of the vault, its cache folders and its samples across the rounds."""

    def __init__(self, server: Server, base: Path, manifest: dict, work: Path, sized_page: int = 1000) -> None:
        self.server = server
        self.sized_page = sized_page  # rows in a page the agent sizes with `limit`
        self.dir = work / server.name
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.root = self.dir / "vault"
        shutil.copytree(base, self.root, symlinks=True)
        (self.root / NEW_FOLDER).mkdir()
        (self.root / OUTSIDE_FOLDER).mkdir()
        self.manifest = Manifest(manifest)
        self.samples: dict[str, list] = {}
        self.problems: dict[str, list[str]] = {}
        self.made = 0

    def add(self, key: str, value) -> None:
        self.samples.setdefault(key, []).append(value)

    def wrong(self, key: str, problem: str) -> None:
        self.problems.setdefault(key, [])
        if problem not in self.problems[key]:
            self.problems[key].append(problem)

    async def session(self, cache: Path, kind: str, work: Callable | None, mode: str = "legacy") -> None:
        """Spawn the server, time spawn -> complete correct listing, then run `work` on it. `mode`: the
        client's (legacy: the initialize handshake, which every peer speaks; auto: the Python SDK's default,
        a 2026-07-28 server/discover first)."""
        home = self.dir / "home"
        home.mkdir(exist_ok=True)
        params = self.server.params(self.root, home, cache)
        t0 = time.perf_counter()
        async with Client(params, mode=mode) as c:
            deadline = t0 + 300
            settled = (-1, t0)  # (count, when first listed) of a peer's listing
            while True:
                try:
                    paths, _ = await self.server.list_all(c)
                    problems = self.manifest.check(paths)
                except RuntimeError as exc:  # still loading, for some
                    paths, problems = [], [str(exc)]
                if not problems:
                    self.add(f"spawn_to_listing_{kind}_s", time.perf_counter() - t0)
                    break
                if time.perf_counter() > deadline:
                    self.wrong(f"spawn_to_listing_{kind}_s", "; ".join(problems))
                    self.add(f"spawn_to_listing_{kind}_s", time.perf_counter() - t0)
                    break
                if not isinstance(self.server, Vaultwatch) and paths:
                    # a peer's listing may never be right (hidden notes, broken YAML dropped): it is
                    # complete once its count stops changing for a second; timed to when it got there
                    if len(paths) != settled[0]:
                        settled = (len(paths), time.perf_counter())
                    elif time.perf_counter() - settled[1] >= 1.0:
                        self.wrong(f"spawn_to_listing_{kind}_s", "; ".join(problems))
                        self.add(f"spawn_to_listing_{kind}_s", settled[1] - t0)
                        break
                await asyncio.sleep(0.005)
            if work is not None:
                await work(c)

    async def calls(self, c, rnd: int, note_paths: list[str], queries: list[tuple[str, str]]) -> None:
        s = self.server
        for _ in range(3):  # the whole listing
            t = time.perf_counter()
            paths, pages = await s.list_all(c)
            self.add("whole_listing_ms", (time.perf_counter() - t) * 1000)
            self.add("whole_listing_calls", pages)
            for p in self.manifest.check(paths):
                self.wrong("whole_listing_ms", p)
            t = time.perf_counter()
            sized = await s.list_sized(c, self.sized_page)
            if sized is not None:
                self.add("whole_listing_limit_ms", (time.perf_counter() - t) * 1000)
                self.add("whole_listing_limit_calls", sized[1])
                for p in self.manifest.check(sized[0]):
                    self.wrong("whole_listing_limit_ms", p)
        for text, want in queries:
            t = time.perf_counter()
            found = await s.search(c, text)
            self.add("search_ms", (time.perf_counter() - t) * 1000)
            if want not in found:
                self.wrong("search_ms", f"{want!r} not found by {text!r}")
        for path in note_paths:
            t = time.perf_counter()
            content = await s.read(c, path)
            self.add("read_ms", (time.perf_counter() - t) * 1000)
            if content != (self.root / path).read_text(encoding="utf-8"):
                self.wrong("read_ms", f"content of {path!r} differs from the file")
        for i in range(10):  # write -> visible in listing
            rel = f"{NEW_FOLDER}/w{rnd}-{i}.md"
            t = time.perf_counter()
            await s.write(c, rel, f"# w{rnd} {i}\n\nwritten through the server\n")

            async def listed(rel=rel) -> bool:
                return rel in await s.list_folder(c, NEW_FOLDER)

            took = await until(listed)
            self.manifest.added(NEW_FOLDER)
            if took is None:
                self.wrong("write_to_listing_ms", f"{rel!r} not listed within {TIMEOUT_S} s")
            else:
                self.add("write_to_listing_ms", (time.perf_counter() - t) * 1000)
        for i in range(10):  # outside create -> visible in listing and search
            word = f"zqx{rnd}k{i}outside{s.name.replace('-', '')}"
            rel = f"{OUTSIDE_FOLDER}/o{rnd}-{i}.md"
            t = time.perf_counter()
            with open(self.root / rel, "w", encoding="utf-8") as fh:
                fh.write(f"# o{rnd} {i}\n\n{word} appeared outside\n")
            self.manifest.added(OUTSIDE_FOLDER)
            # the listing first, then search (each polled on its own, so a slow search call does
            # not coarsen the listing's figure); both counted from the create
            checks = {
                "listing": lambda rel=rel: s.list_folder(c, OUTSIDE_FOLDER),
                "search": lambda word=word: s.search(c, word),
            }
            for what, ask in checks.items():
                while time.perf_counter() - t < TIMEOUT_S:
                    if rel in await ask():
                        self.add(f"outside_to_{what}_ms", (time.perf_counter() - t) * 1000)
                        break
                else:
                    self.wrong(f"outside_to_{what}_ms", f"{rel!r} not in the {what} within {TIMEOUT_S} s")
            await asyncio.sleep(0.2)  # the next create is a separate change, not part of a burst

    async def round(self, rnd: int, note_paths: list[str], queries: list[tuple[str, str]]) -> None:
        cache = self.dir / f"cache-{rnd}"
        with TreeRss() as rss:
            await self.session(cache, "cold", lambda c: self.calls(c, rnd, note_paths, queries))
            await self.session(cache, "warm", None)
            if isinstance(self.server, Vaultwatch):  # the peers' SDKs predate server/discover
                await self.session(cache, "warm_auto", None, mode="auto")
        self.add("peak_rss_mb", rss.peak_mb)

    def summary(self) -> dict:
        out: dict = {}
        for key in self.problems.keys() - self.samples.keys():  # never once right: no figure
            out[key] = {
                "p50": None,
                "p95": None,
                "max": None,
                "n": 0,
                "correct": False,
                "problems": self.problems[key][:3],
            }
        for key, values in self.samples.items():
            if key.endswith("_calls"):
                out[key] = max(values)
                continue
            scale = 1000 if key.endswith("_s") else 1
            out[key] = {
                "p50": round(statistics.median(values), 3 if scale == 1000 else 2),
                "p95": pct(values, 0.95),
                "n": len(values),
            }
            if key == "peak_rss_mb":
                out[key]["max"] = round(max(values), 1)
            out[key]["correct"] = key not in self.problems
            if key in self.problems:
                out[key]["problems"] = self.problems[key][:3]
        return out


FIGURES = {  # figure -> (statistic, lower is better)
    "whole_listing_ms": "p50",
    "whole_listing_limit_ms": "p50",
    "search_ms": "p50",
    "read_ms": "p50",
    "write_to_listing_ms": "p50",
    "outside_to_listing_ms": "p95",
    "outside_to_search_ms": "p95",
    "spawn_to_listing_cold_s": "p50",
    "spawn_to_listing_warm_s": "p50",
    "spawn_to_listing_warm_auto_s": "p50",
    "peak_rss_mb": "max",
}


def compare(results: dict[str, dict]) -> dict:
    """Each figure of each server with its ratio to the fastest server whose answers were correct
    (and to the fastest of all, right or wrong)."""
    out: dict = {}
    for fig, stat in FIGURES.items():
        row: dict = {}
        have = {n: r[fig] for n, r in results.items() if fig in r and r[fig][stat] is not None}
        if not have:
            continue
        best_all = min(v[stat] for v in have.values())
        right = [v[stat] for v in have.values() if v["correct"]]
        best_right = min(right) if right else None
        for name, v in have.items():
            row[name] = {
                stat: v[stat],
                "correct": v["correct"],
                "vs_fastest": round(v[stat] / best_all, 2) if best_all else None,
                "vs_fastest_correct": round(v[stat] / best_right, 2) if best_right else None,
            }
        for name, r in results.items():
            if fig in r and r[fig][stat] is None:
                row[name] = {stat: None, "correct": False, "vs_fastest": None, "vs_fastest_correct": None}
        out[f"{fig} ({stat})"] = row
    return out


async def main(notes: int, rounds: int, names: list[str], baseline: Path | None = None, sized_page: int = 1000) -> dict:
    base, manifest = vault(notes)
    work = OUT / "peers"
    servers = [SERVERS[n]() for n in names]
    if baseline is not None:  # the same product from another checkout (before a change), same run
        servers.append(Vaultwatch(baseline, "vaultwatch@baseline"))
    runs = [Run(server, base, manifest, work, sized_page) for server in servers]
    notes_on_disk = sorted(
        str(p.relative_to(base))
        for p in base.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(base).parts)
    )
    step = max(1, len(notes_on_disk) // 20)
    note_paths = notes_on_disk[::step][:20]
    # title queries: a file name's words, which the note's title repeats; the note must be found
    queries = [(Path(p).stem, p) for p in notes_on_disk[step // 2 :: step][:10]]
    floors: list[float] = []
    client = ClientFloor(base, manifest, work, sized_page) if "vaultwatch" in names else None
    if client is not None:
        await client.record()
    for rnd in range(rounds):
        floors.append(floor_s(base))
        order = runs[rnd % len(runs) :] + runs[: rnd % len(runs)]
        for run in order:
            await run.round(rnd, note_paths, queries)
        if client is not None:
            await client.round()
        partial = {run.server.name: run.summary() for run in runs}
        (work / "partial.json").write_text(json.dumps({"rounds_done": rnd + 1, "floor_s": floors, **partial}, indent=1))
    return report(manifest, rounds, runs, floors, client)


def report(
    manifest: dict, rounds: int, runs: list[Run], floors: list[float], client: ClientFloor | None = None
) -> dict:
    results = {run.server.name: run.summary() for run in runs}
    floor = statistics.median(floors)
    targets = {
        run.server.name: {
            "spawn_to_listing_cold_vs_floor": round(
                results[run.server.name]["spawn_to_listing_cold_s"]["p50"] / floor, 2
            ),
            "spawn_to_listing_warm_vs_floor": round(
                results[run.server.name]["spawn_to_listing_warm_s"]["p50"] / floor, 2
            ),
        }
        for run in runs
        if isinstance(run.server, Vaultwatch)
    }
    return {
        "benchmark": "peers",
        "notes": manifest["notes"],
        "rounds": rounds,
        "servers": [run.server.name for run in runs],
        "client": "mcp Python SDK Client over stdio (mode=legacy), one server at a time",
        "floor_s": [round(f, 3) for f in floors],
        "floor_median_s": round(floor, 3),
        "load_avg": os.getloadavg(),
        "figures": compare(results),
        "vaultwatch_vs_floor": targets,
        # the client alone on vaultwatch's answers (ClientFloor): medians, as the figures'
        "client_floor": client.summary() if client is not None else {},
        "detail": results,
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--baseline", type=Path, help="also run vaultwatch from this checkout (e.g. before a change)")
    ap.add_argument("--limit", type=int, default=1000, help="rows in vaultwatch's sized pages (bench_calls.SIZED_PAGE)")
    ns = ap.parse_args()
    emit(asyncio.run(main(ns.notes, ns.rounds, ns.servers.split(","), ns.baseline, ns.limit)))
