"""Helpers shared by the TUI tests (imported by conftest and the test modules)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from textual import events
from waiting import await_until

from vaultwatch.core.clock import parse_as_of
from vaultwatch.core.events import AgentAccess
from vaultwatch.core.vault import Vault, demo_vault_path
from vaultwatch.tui.config import FIXED_WALL

AS_OF = "2026-11-29"
BASE_MTIME = 1_795_860_000  # 2026-11-28 10:00 UTC


def pin_mtimes(root: Path) -> Path:
    """Give every file a fixed, distinct modification time (copies get 'now' otherwise)."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    for i, path in enumerate(files):
        stamp = BASE_MTIME - i * 190_000
        os.utime(path, (stamp, stamp))
    return root


def copy_demo(dst: Path) -> Path:
    """A copy of the bundled demo vault at `dst` with pinned modification times."""
    shutil.copytree(demo_vault_path(), dst, symlinks=True)
    return pin_mtimes(dst)


def open_loaded(root: Path) -> Vault:
    """The vault at `root`, fully loaded, with the clock at the demo vault's today."""
    vault = Vault(root, clock=parse_as_of(AS_OF))
    vault.load()
    return vault


def access(
    agent: str,
    tool: str,
    paths: tuple[str, ...],
    *,
    ago: float = 5.0,
    summary: str = "",
    count: int | None = None,
    ms: float = 3.2,
    error: str | None = None,
    session: str = "",
) -> AgentAccess:
    """An AgentAccess event as the MCP activity layer publishes it."""
    return AgentAccess(
        agent=agent,
        session=session or f"s-{agent}",
        tool=tool,
        summary=summary or tool,
        paths=paths,
        result_count=len(paths) if count is None else count,
        duration_ms=ms,
        error=error,
        at=FIXED_WALL - ago,
    )


async def paste(app, pilot, text: str) -> None:
    """Enter `text` in the focused widget as one paste, the route a terminal's bracketed paste
    takes (the app hands it to the focused widget). For a test whose property is the text the
    widget ends up with, not the keys that built it: Pilot waits for the app to go idle twice per
    key pressed, so typing a long text key by key costs seconds."""
    app.post_message(events.Paste(text))
    await pilot.pause()


async def armed(screen) -> None:
    """Until a dialog's decision keys act (tui.screens.arming: they arm a moment after what they
    decide is shown): a test of what a key does presses it after this."""
    await await_until(lambda: screen.keys.armed, what="the dialog's decision keys armed")
