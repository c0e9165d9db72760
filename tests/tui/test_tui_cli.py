"""`vaultwatch` on the command line: the help, and the TUI as a real process in a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_help_documents_every_command_and_the_tui_options() -> None:
    out = run_cli("--help")
    assert out.returncode == 0
    for word in (
        "list",
        "stats",
        "tui",
        "serve",
        "bridge",
        "mcp-config",
        "--socket",
        "--no-mcp",
        "--compat",
        "--read-only",
        "--as-of",
        "--okf",
        "opens the TUI",
    ):
        assert word in out.stdout, word
    tui = run_cli("tui", "--help")
    assert tui.returncode == 0 and "--no-watch" in tui.stdout and "--theme" in tui.stdout
    for command, says in (("approve", "apply an agent's pending change"), ("decline", "nothing is changed")):
        own = run_cli(command, "--help")  # a command's own help says what it does, not only its options
        assert own.returncode == 0 and says in own.stdout, own.stdout


def test_subcommands_still_work() -> None:
    out = run_cli("stats")
    assert out.returncode == 0 and "notes" in out.stdout
    bad = run_cli("tui", "--as-of", "yesterday", "--no-mcp")
    assert bad.returncode == 2 and "invalid as-of date" in bad.stderr and "Traceback" not in bad.stderr


def test_the_launch_path_leaves_the_mcp_sdk_for_after_the_first_frame() -> None:
    """First paint <= 0.5 s from process start: the MCP SDK, uvicorn and starlette (~0.5 s to
    import) load after the first frame, in the app's MCP worker, not on the way to it."""
    probe = (
        "import sys\n"
        "from vaultwatch.tui.commands import cli\n"
        "from vaultwatch.tui.app import make_app\n"
        "from vaultwatch.tui.config import AppConfig\n"
        "from vaultwatch.core.vault import Vault, demo_vault_path\n"
        "cli.build_parser()\n"
        "app = make_app(Vault(demo_vault_path()), config=AppConfig(mcp=True, watch=True))\n"
        "assert app.services.host is None and app.services.host_factory is not None\n"
        "heavy = sorted(m for m in sys.modules if m == 'vaultwatch.mcp_server.host' or m.split('.')[0] in\n"
        "               ('mcp', 'uvicorn', 'starlette', 'pydantic', 'httpx', 'anyio'))\n"
        "print(heavy)\n"
    )
    env = dict(os.environ, XDG_STATE_HOME=tempfile.mkdtemp(prefix="vw-state-"))
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


class Terminal:
    """`vaultwatch ARGS` in a pseudo-terminal, read until quiet, driven by keystrokes."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        os.set_blocking(self.master, False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
            cwd=ROOT,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            close_fds=True,
        )
        os.close(slave)
        self.output = b""

    def read_until(self, needle: bytes, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.output += os.read(self.master, 65536)
                except OSError:
                    return needle in self.output
            if needle in self.output:
                return True
            if self.proc.poll() is not None:
                return needle in self.output
        return False

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self, timeout: float = 10.0) -> int | None:
        """Wait for the process to exit, draining its output meanwhile: a terminal app that
        cannot write its last frames (a full pty buffer) would never exit."""
        try:
            deadline = time.monotonic() + timeout
            while self.proc.poll() is None and time.monotonic() < deadline:
                ready, _, _ = select.select([self.master], [], [], 0.05)
                if ready:
                    try:
                        self.output += os.read(self.master, 65536)
                    except OSError:
                        pass
            return self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.master)


@pytest.fixture
def tui_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME")}
    env.update(TERM="xterm-256color", COLUMNS="120", LINES="36", XDG_STATE_HOME=str(tmp_path / "state"))
    return env


@pytest.mark.timing
@pytest.mark.slow
def test_the_tui_starts_serves_and_quits_cleanly(tui_env: dict[str, str], demo_vault: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="vw-") as folder:
        socket_path = os.path.join(folder, "cli.sock")
        term = Terminal([str(demo_vault), "--as-of", "2026-11-29", "--socket", socket_path, "--no-watch"], tui_env)
        try:
            assert term.read_until(b"Deploy Runbook"), term.output[-2000:]
            deadline = time.monotonic() + 30
            while not os.path.exists(socket_path) and time.monotonic() < deadline:
                term.read_until(b"\x00", timeout=0.2)
            assert os.path.exists(socket_path), "the app never served MCP on its socket"
            term.type("q")
            started = time.monotonic()
            status = term.close()
            took = time.monotonic() - started
            tail = term.output[-3000:]
            assert status == 0, tail
            assert took < 10, f"quitting took {took:.1f} s"  # the server itself stops in <= 1 s
            assert not os.path.exists(socket_path)
            assert b"Traceback" not in term.output, tail
        finally:
            if term.proc.poll() is None:
                term.proc.kill()


def test_what_notes_hold_is_drawn_never_obeyed_by_the_terminal(tui_env: dict[str, str], tmp_path: Path) -> None:
    """A note's title, heading and body are anyone's to write: an escape sequence in them reached
    the terminal raw (here OSC 0, which sets the window's title; OSC 52 writes the clipboard)."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "evil.md").write_text(
        '---\ntitle: "Title \\e]0;OWNED-TITLE\\a \\e[2J x"\n---\n'
        "# Head \x1b]52;c;T1dORUQ=\x07 end\n\nBody \x1b[1A\x9b2J \u202eafter\n",
        encoding="utf-8",
    )
    (vault / "plain.md").write_text("# Plain\n")
    term = Terminal([str(vault), "--no-watch", "--socket", str(tmp_path / "s.sock")], tui_env)
    try:
        assert term.read_until(b"OWNED-TITLE"), term.output[-2000:]
        term.type("j")  # the other note, then back: the preview draws the evil one's body too
        term.type("k")
        assert term.read_until(b"Body"), term.output[-2000:]
        term.type("q")
        assert term.close() == 0, term.output[-2000:]
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    out = term.output
    assert b"Title ]0;OWNED-TITLE" in out  # drawn, less what the terminal would act on
    for raw in (b"\x1b]0;OWNED", b"\x1b]52;", b"\x1b[2J", b"\x07 ", b"\x1b[1A", "\x9b".encode(), "\u202e".encode()):
        assert raw not in out, raw


def test_a_word_that_is_no_command_and_no_folder_is_said_to_be_neither(tmp_path: Path) -> None:
    """`vaultwatch history` (an agent's tool, not a command) was taken for a vault folder and
    answered "vault folder not found: '.../history'"; it now says it is no command, suggests the
    nearest one, and opens nothing. A word naming a folder still opens that vault."""
    out = subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "histroy"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "'histroy' is no command" in out.stderr, out.stderr
    assert "vault folder not found" not in out.stderr and "Traceback" not in out.stderr
    (tmp_path / "notes").mkdir()
    listed = subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "stats", "notes"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
