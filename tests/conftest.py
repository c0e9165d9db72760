"""Shared fixtures: real vaults on disk (the bundled demo vault copied, or built from a dict)
and a clock frozen at the demo vault's "today", 2026-11-29."""

from __future__ import annotations

import atexit
import datetime as dt
import itertools
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

# Keep compiled bytecode (gitignored __pycache__) even when PYTHONDONTWRITEBYTECODE is set: without
# it every test worker recompiles every product module and rewrites the asserts of every test module
# it collects, and every child process a test starts (serve, revert, agents) recompiles the product
# modules it imports, on every run. Children keep the variable, so they only read what this wrote.
# Set before the first product import below, so those modules are cached too.
sys.dont_write_bytecode = False

import pytest  # noqa: E402
import xdist_restart  # noqa: E402

from vaultwatch.core.clock import FixedClock  # noqa: E402
from vaultwatch.core.vault import Vault, demo_vault_path  # noqa: E402

xdist_restart.install()  # a worker ended by a test's timeout is replaced and the run goes on

AS_OF = dt.date(2026, 11, 29)
OKF_INDEX = '---\nokf_version: "0.2"\ntitle: Index\n---\n# Index\n'

Files = Mapping[str, "str | bytes"]


def write_files(root: Path, files: Files) -> Path:
    """Write {vault-relative path: text or bytes} under `root` (folders created as needed).

    A path ending in "/" with an empty value creates an empty folder.
    """
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        target = root / rel
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8", newline="")
    return root


MEMORY_FS = "/dev/shm"  # a tmpfs on Linux: no fsync reaches a disk there


@pytest.fixture(scope="session", autouse=True)
def _private_cache_home(tmp_path_factory: pytest.TempPathFactory):
    """Keep the index cache of every vault a test opens out of the real ~/.cache (tests that
    need their own cache folder still set XDG_CACHE_HOME with monkeypatch).

    The cache and state folders live in memory where the machine has a tmpfs: every vault a test
    loads opens (and syncs) an SQLite entry cache, every journaled write syncs its journal, and on a
    shared disk those waits, not the work, were most of a small test's time. The code that runs is
    the same; only the medium under it is faster."""
    previous = {name: os.environ.get(name) for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")}
    in_memory = None
    if os.path.isdir(MEMORY_FS) and os.access(MEMORY_FS, os.W_OK | os.X_OK):
        in_memory = Path(tempfile.mkdtemp(prefix="vaultwatch-tests-", dir=MEMORY_FS))
        # again at exit: a vault's cache flush (a non-daemon thread, 1 s after a load) may write
        # there after this fixture's teardown; the interpreter joins such threads before atexit
        atexit.register(shutil.rmtree, in_memory, ignore_errors=True)

    def fast(name: str) -> Path:
        if in_memory is None:
            return tmp_path_factory.mktemp(name)
        (in_memory / name).mkdir()
        return in_memory / name

    os.environ["XDG_CACHE_HOME"] = str(fast("xdg-cache"))
    os.environ["XDG_STATE_HOME"] = str(fast("xdg-state"))  # server records, logs, tokens, change journals
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg-config"))  # no developer's settings.toml
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if in_memory is not None:
        shutil.rmtree(in_memory, ignore_errors=True)


@pytest.fixture(scope="session")
def write_vault() -> Callable[[Path, Files], Path]:
    """`write_files` as a fixture, for module- and session-scoped vault fixtures."""
    return write_files


@pytest.fixture
def clock() -> FixedClock:
    """A clock frozen at 00:00 UTC on 2026-11-29 (the demo vault's and vaultgen's "today")."""
    return FixedClock.at_date(AS_OF)


@pytest.fixture
def demo_vault(tmp_path: Path) -> Path:
    """A private, writable copy of the bundled demo vault (symlinks and dot-files kept)."""
    dst = tmp_path / "demo"
    shutil.copytree(demo_vault_path(), dst, symlinks=True)
    return dst


@pytest.fixture(scope="session")
def demo_vault_ro(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the demo vault per test session, for tests that only read it."""
    dst = tmp_path_factory.mktemp("demo-ro") / "demo"
    shutil.copytree(demo_vault_path(), dst, symlinks=True)
    return dst


@pytest.fixture(scope="session")
def demo(demo_vault_ro: Path) -> Vault:
    """The demo vault, loaded once per session with the clock at 2026-11-29. Do not modify it."""
    vault = Vault(demo_vault_ro, clock=FixedClock.at_date(AS_OF))
    vault.load()
    return vault


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[..., Path]:
    """Build a vault from {relpath: content}; returns its root. `okf=True` adds an OKF index.md."""
    counter = itertools.count()

    def make(files: Files, *, okf: bool = False, name: str | None = None) -> Path:
        root = tmp_path / (name or f"vault{next(counter)}")
        all_files = dict(files)
        if okf:
            all_files.setdefault("index.md", OKF_INDEX)
        return write_files(root, all_files)

    return make


@pytest.fixture
def open_vault(clock: FixedClock) -> Callable[..., Vault]:
    """Open and fully load a vault (fixed clock unless one is given); keyword args go to Vault."""

    def open_(root: str | os.PathLike[str], **kwargs) -> Vault:
        kwargs.setdefault("clock", clock)
        vault = Vault(root, **kwargs)
        vault.load()
        return vault

    return open_


class LinkRemover:
    """Removes the symlinks named in `names` at the worst moment for a path resolver: after
    os.path.realpath has lstat()ed one (it is a link) and before it readlink()s it, as another
    caller deleting or renaming the link would (core.disk.safeio's walk: between its lstat and readlinkat). `removed` counts the removals."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: set[str] = set()
        self.removed = 0
        real_readlink = os.readlink

        def readlink_after_removal(path, *args, **kwargs):
            dir_fd = kwargs.get("dir_fd")  # core.disk.safeio reads links relative to a folder's descriptor
            if os.path.basename(path) in self.names:
                try:
                    is_link = stat.S_ISLNK(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode)
                except OSError:
                    is_link = False
                if is_link:
                    os.unlink(path, dir_fd=dir_fd)
                    self.removed += 1
            return real_readlink(path, *args, **kwargs)

        monkeypatch.setattr(os, "readlink", readlink_after_removal)


@pytest.fixture
def link_remover(monkeypatch: pytest.MonkeyPatch) -> LinkRemover:
    """A LinkRemover with no names yet: set `.names` to arm it."""
    return LinkRemover(monkeypatch)


LEFTOVER_GRACE_S = 10.0  # how long the session's end waits for threads and children still finishing


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Name what would keep this pytest process alive after its last test: a thread that is not a
    daemon (the interpreter joins it at exit) or a multiprocessing child (joined at exit too).
    Such a leftover made a run end long after its summary; this says which one, with its stack,
    so the test that left it can stop it. Threads that end within LEFTOVER_GRACE_S are fine."""
    import multiprocessing
    import sys
    import threading
    import time
    import traceback

    deadline = time.monotonic() + LEFTOVER_GRACE_S
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))
    for child in multiprocessing.active_children():
        child.join(max(0.0, deadline - time.monotonic()))
    threads = [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]
    children = multiprocessing.active_children()
    if not threads and not children:
        return
    frames = sys._current_frames()
    lines = [f"pytest: still alive {LEFTOVER_GRACE_S:g} s after the last test (the process waits for them):"]
    for t in threads:
        stack = "".join(traceback.format_stack(frames[t.ident])) if t.ident in frames else ""
        lines.append(f"  thread {t.name!r} (not a daemon)\n{stack}")
    lines += [f"  child process {c.name!r} pid {c.pid}" for c in children]
    print("\n".join(lines), file=sys.__stderr__, flush=True)


def pytest_configure(config: pytest.Config) -> None:
    # `dev.py test` sends SIGUSR1 to every test process of a pass that ran past its limit: each then
    # prints its threads' stacks, to a copy of stderr taken before any test's capture, as pytest's
    # faulthandler plugin does
    import faulthandler
    import signal

    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, file=os.dup(sys.stderr.fileno()), all_threads=True)
    config.addinivalue_line(
        "markers", "long: runs for many seconds; started before the short tests (see pytest_collection_modifyitems)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `long` first, the rest in their order. pytest-xdist deals tests out in this
    order as workers ask for more: a long test dealt out last ran on one worker while the other
    had finished, and ended the run that much later. (Every worker sorts the same collection the
    same way, as xdist requires.)"""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
