"""Keys typed faster than the screen redraws, through a real terminal: the real `vaultwatch`
process in tmux, `/Japan`, Enter and `?` sent in one command. The `?` is the list's key (the
help opens), not filter text (before: the filter read `Japan?`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.template_vault import make_template_vault

ROOT = Path(__file__).resolve().parents[2]
HELP_TITLE = "watch and triage a vault while agents use it"  # tui.screens.help


def tmux(sock: Path, *args: str) -> str:
    done = subprocess.run(["tmux", "-S", str(sock), *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def screen_until(sock: Path, wanted, timeout: float = 60.0) -> str:
    """The pane's text once `wanted(text)` holds (or the last one seen, at the timeout)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = tmux(sock, "capture-pane", "-p", "-t", "vw")
        if wanted(text):
            return text
        time.sleep(0.1)
    return text


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_enter_then_a_key_at_once_in_a_real_terminal(tmp_path: Path) -> None:
    vault = make_template_vault(tmp_path / "vault")
    sock = tmp_path / "tmux.sock"
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME", "TMUX")}
    env.update(PYTHONPATH=str(ROOT), XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    command = f"{sys.executable} -m vaultwatch.tui.commands.cli {vault} --no-mcp --no-watch"
    subprocess.run(
        ["tmux", "-S", str(sock), "-f", "/dev/null", "new-session", "-d", "-s", "vw", "-x", "120", "-y", "36", command],
        env=env,
        check=True,
        timeout=30,
        cwd=ROOT,
    )
    try:
        shown = screen_until(sock, lambda text: "Broken 4" in text)  # loaded and counted
        assert "Broken 4" in shown, shown
        tmux(sock, "send-keys", "-t", "vw", "/Japan", "Enter", "?")  # one command: no pause between
        shown = screen_until(sock, lambda text: HELP_TITLE in text, timeout=30)
        assert HELP_TITLE in shown, shown
        tmux(sock, "send-keys", "-t", "vw", "Escape")  # the help closes: the filter shows its text
        shown = screen_until(sock, lambda text: HELP_TITLE not in text, timeout=30)
        first = shown.splitlines()[0]
        assert "Japan" in first and "Japan?" not in first, shown
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, timeout=30)
