"""Private files: what vaultwatch keeps under the user's cache, state, config and runtime folders
(entry cache, full-text index with its WAL, handshake answers, journal, records, logs, sockets)
is the user's alone, whatever the umask, and older looser files are tightened at start.

A real `vaultwatch serve --stdio` process (started under the umask being tested) indexes a private
vault, builds its full-text index, answers searches and takes a write from the real `mcp` client;
while it still runs, every folder must be 0700 and every file 0600, and a child running as the
`nobody` user must be unable to list or read any of them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Implementation
from reliability_helpers import ROOT, child, short_dir

SECRET = "SECRET-vaultwatch-private-note-body"

# `vaultwatch serve --stdio` as the console script starts it, under the umask given first; the
# tools/list shipped with the package is taken as made for another SDK, so that the front caches the
# SDK's handshake answers on disk (a first start answered from the shipped list writes no cache)
UNDER_UMASK = (
    "import os, sys\nos.umask(int(sys.argv[1], 8))\n"
    "from vaultwatch.mcp_server import toollist\ntoollist.installed = lambda: {'mcp': 'another'}\n"
    "from vaultwatch.tui.entry import main\nsys.exit(main(sys.argv[2:]))\n"
)

# run as `nobody`: which of the given folders it can list and which files it can open
PROBE = r"""
import json, os, sys
got = []
for path, kind in json.loads(sys.argv[1]):
    try:
        if kind == "dir":
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read(1)
        got.append(path)
    except OSError:
        pass
print(json.dumps({"readable": got}))
"""


def _drop() -> None:
    os.setgid(65534)
    os.setuid(65534)


def _everything(tops: list[Path]) -> list[tuple[str, str, int]]:
    """(path, kind, permission bits) of every folder and file under each of `tops` (themselves included)."""
    out = []
    for top in tops:
        if not top.exists():
            continue
        for dirpath, _dirnames, filenames in os.walk(top):
            out.append((dirpath, "dir", stat.S_IMODE(os.lstat(dirpath).st_mode)))
            for name in filenames:
                full = os.path.join(dirpath, name)
                st = os.lstat(full)
                if stat.S_ISREG(st.st_mode) or stat.S_ISSOCK(st.st_mode):
                    out.append((full, "file", stat.S_IMODE(st.st_mode)))
    return out


def _loose(entries: list[tuple[str, str, int]]) -> list[str]:
    return [f"{oct(mode)} {path}" for path, _kind, mode in entries if mode & 0o077]


@pytest.fixture
def world(tmp_path):
    """A private vault and cache/state/config/runtime bases other users may enter (as ~ and
    ~/.cache often are), under /tmp so that `nobody` reaches them."""
    base = Path(os.path.realpath("/tmp")) / f"vw-private-{os.getpid()}-{time.monotonic_ns()}"
    base.mkdir(mode=0o755)
    os.chmod(base, 0o755)
    run = Path(short_dir("vwpr"))
    os.chmod(run, 0o755)
    dirs = {name: base / name for name in ("cache", "state", "config")}
    for d in dirs.values():
        d.mkdir()
        os.chmod(d, 0o755)
    vault = base / "vault"
    vault.mkdir()
    for i in range(12):
        (vault / f"note-{i}.md").write_text(f"# Note {i}\n\n{SECRET} number {i} with words to search.\n")
    os.chmod(vault, 0o700)  # the person's private vault
    yield {"base": base, "vault": vault, "run": run, **dirs}
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(run, ignore_errors=True)


def _leftovers(world: dict) -> list[Path]:
    """What an older vaultwatch (or a loose umask) left: world-readable folders and files."""
    old = world["cache"] / "vaultwatch" / "gone-0123456789abcdef"
    old.mkdir(parents=True)
    (old / "vault.txt").write_text(str(world["vault"]) + "\n")
    (old / "search.sqlite").write_bytes(SECRET.encode())
    conf = world["config"] / "vaultwatch"
    conf.mkdir()
    (conf / "settings.toml").write_text('theme = "textual-dark"\n')
    made = [world["cache"] / "vaultwatch", old, old / "vault.txt", old / "search.sqlite", conf, conf / "settings.toml"]
    for p in made:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return made


async def _serve_and_use(world: dict, umask: int, check) -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "VAULTWATCH_")) and k not in ("PYTHONPATH",)
    }
    env.update(
        PYTHONPATH=str(ROOT),
        XDG_CACHE_HOME=str(world["cache"]),
        XDG_STATE_HOME=str(world["state"]),
        XDG_CONFIG_HOME=str(world["config"]),
        XDG_RUNTIME_DIR=str(world["run"]),
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", UNDER_UMASK, oct(umask), "serve", "--stdio", str(world["vault"])],
        cwd=str(ROOT),
        env=env,
    )
    async with Client(params, mode="legacy", client_info=Implementation(name="private-agent", version="1")) as c:
        listing = await c.call_tool("list_documents", {"limit": 50})
        assert listing.structured_content["total"] == 12
        for _ in range(300):
            found = await c.call_tool("search", {"query": "SECRET"})
            if not found.is_error and found.structured_content.get("result"):
                break
            await asyncio.sleep(0.1)
        assert not found.is_error and found.structured_content["result"], found.content[0].text
        wrote = await c.call_tool("write", {"path": "new.md", "content": f"# New\n\n{SECRET} written\n"})
        assert not wrote.is_error, wrote.content[0].text
        for _ in range(300):  # the entry cache and the search index's WAL exist while the server runs
            names = {os.path.basename(p) for p, _k, _m in _everything([world["cache"]])}
            if {"entries.sqlite", "search.sqlite", "search.sqlite-wal", "vault.txt"} <= names:
                break
            await asyncio.sleep(0.1)
        await asyncio.to_thread(check, "while serving")
    await asyncio.to_thread(check, "after the server stopped")


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask022", "umask000"])
async def test_nothing_vaultwatch_keeps_is_readable_by_another_user(world, umask, figure):
    made = _leftovers(world)
    tops = [world["cache"] / "vaultwatch", world["state"] / "vaultwatch", world["config"] / "vaultwatch"]
    tops.append(world["run"] / "vaultwatch")
    checked: dict[str, int] = {}

    def check(when: str) -> None:
        entries = _everything(tops)
        names = {os.path.basename(p) for p, _k, _m in entries}
        # the test looks at the real files: the entry cache, the full-text index, the handshake answers,
        # the vault marker, the journal, the socket
        assert {"entries.sqlite", "search.sqlite", "vault.txt", "handshake"} <= names, sorted(names)
        assert any(n.endswith(".sqlite3") for n in names), sorted(names)  # the change journal
        if when == "while serving":
            assert "search.sqlite-wal" in names, sorted(names)  # SQLite's side file, open while serving
        assert not _loose(entries), (when, _loose(entries))
        for p in made:
            assert not stat.S_IMODE(os.stat(p).st_mode) & 0o077, (when, p)
        checked[when] = len(entries)
        if os.geteuid() != 0:
            return
        probe = json.dumps([(p, k) for p, k, _m in entries])
        rc, out, err = child(PROBE, probe, preexec_fn=_drop, env={"HOME": "/nonexistent"})
        if rc != 0 or out is None:
            pytest.skip(f"the nobody user cannot run {sys.executable} on {ROOT}: {err.strip()[-300:]}")
        assert out["readable"] == [], (when, out["readable"])

    await _serve_and_use(world, umask, check)
    assert set(checked) == {"while serving", "after the server stopped"}
    figure("private_entries_checked", max(checked.values()))
    figure(
        "fixed_bug",
        "the cache folder was 0755 with 0644 files (0666 under umask 000): another local user read whole "
        "notes from search.sqlite and its WAL and the vault's path from vault.txt; fixed by "
        "core/disk/private.py (folders 0700, files 0600 whatever the umask, older ones tightened at start)",
    )
