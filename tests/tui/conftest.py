"""TUI fixtures: the demo vault with fixed modification times, and apps in the test config
(no MCP server, no watcher, no timers, no blink, no animation, a frozen wall clock)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from shared_app import SharedApp
from tui_helpers import copy_demo, open_loaded

from vaultwatch.tui.app import VaultwatchApp, make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.screens import main as main_screen


@pytest.fixture(autouse=True)
def _no_env_leakage(monkeypatch: pytest.MonkeyPatch) -> None:
    """Colour and theme settings of the developer's shell must not change what tests see."""
    for name in ("NO_COLOR", "TEXTUAL_THEME", "TEXTUAL_ANIMATIONS", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def socket_path() -> Iterator[str]:
    """A path for the app's MCP socket: AF_UNIX paths are short, so not under pytest's long tmp_path."""
    with tempfile.TemporaryDirectory(prefix="vw-") as folder:
        yield os.path.join(folder, "tui.sock")


@pytest.fixture
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state folder of the test's own (change journals, pending approvals, server records), for a
    module whose tests count what the journal holds (`pytestmark = pytest.mark.usefixtures(...)`)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture
def tui_demo(tmp_path: Path) -> Path:
    """A private copy of the demo vault with pinned modification times."""
    return copy_demo(tmp_path / "demo")


@pytest.fixture
def app_for() -> Callable[..., VaultwatchApp]:
    """Build an app (test config) over a loaded vault at `root`; keyword args change the config."""

    def build(root: Path, **changes) -> VaultwatchApp:
        return make_app(open_loaded(root), config=fixed_config(**changes))

    return build


@pytest.fixture
def no_typing_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pauses the app waits for after the filter's text changed (the preview's, the tabs'
    counts') cut to a millisecond (a Textual timer of 0 s divides by zero), for a test that
    settles after each change of the text: the screen goes through the same states, without a
    third of a second of waiting per change. Not for a test of what those pauses are for."""
    monkeypatch.setattr(main_screen, "TYPING_PAUSE", 0.001)
    monkeypatch.setattr(main_screen, "COUNTS_DELAY", 0.001)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """One app for the module's tests (tests/tui/shared_app.py), over the module's own copy of the demo
    vault (the tests only read it), at 160x50."""
    root = copy_demo(tmp_path_factory.mktemp(request.module.__name__) / "demo")
    shared = SharedApp(lambda: make_app(open_loaded(root), config=fixed_config()), (160, 50))
    yield shared
    await shared.close()
