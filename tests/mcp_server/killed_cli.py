"""Set-up shared by the tests that kill a real `vaultwatch` command midway (a revert, a batch
revert, an approve) while a server watches the vault: the command as a process, a vault whose
T.md 400 notes link to, and the disk events the server saw. These only drive and observe: the
tests' assertions stay in the tests."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from mcp_testing import ROOT

from vaultwatch.core.events import DocumentsChanged
from vaultwatch.core.vault import Vault

LINKED = [f"n{i:03}.md" for i in range(400)]  # the notes that link to T.md


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    """`vaultwatch ARGS` run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def spawn_cli(*args: str, env: dict) -> subprocess.Popen:
    """`vaultwatch ARGS` started, to be killed midway."""
    return subprocess.Popen(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


async def kill_once(proc: subprocess.Popen, done: Callable[[], bool]) -> None:
    """SIGKILL `proc` once `done()` holds or it ended by itself (the event loop, and the server
    on it, keep running while this looks)."""
    try:
        while not done() and proc.poll() is None:
            await asyncio.sleep(0.002)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the vault and its bytes (the trash aside: a revert sends created notes there;
    and the temporary file a killed write leaves, which the server's cleaner removes later)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.name.startswith(".vaultwatch-") and p.name.endswith(".tmp"):
            continue
        if p.is_file() and not rel.startswith(".trash"):
            out[rel] = p.read_bytes()
    return out


def write_linked(root: Path) -> None:
    """T.md, and the LINKED notes that link to it (a rename of T rewrites all 400)."""
    (root / "T.md").write_text("# T\n")
    for name in LINKED:
        (root / name).write_text(f"# {name}\nsee [[T]] and more\n" + "filler line\n" * 40)


def links_to_t(root: Path, names: list[str]) -> int:
    """How many of `names` link to T (again, after a revert of its rename)."""
    n = 0
    for name in names:
        try:
            if "[[T]]" in (root / name).read_text():
                n += 1
        except OSError:
            pass
    return n


def disk_events(vault: Vault) -> set[str]:
    """The paths the vault's disk events name as changed or added from now on (a set that fills
    as they come; the journal, subscribed before, has handled each one when it is here)."""
    seen: set[str] = set()
    vault.bus.subscribe(
        lambda e: seen.update(e.changed + e.added) if isinstance(e, DocumentsChanged) and e.source == "disk" else None
    )
    return seen
