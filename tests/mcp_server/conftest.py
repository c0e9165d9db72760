"""Fixtures for the MCP tests (helpers to serve and connect live in mcp_testing.py).

Socket directories are made under /tmp with short names (AF_UNIX paths hold ~107 bytes,
pytest's tmp_path is longer than that can afford).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_testing import CLIENT_DIR

from vaultwatch.core.events import Event
from vaultwatch.core.vault import Vault


@pytest.fixture
def sock_dir() -> Path:
    """A short, private directory for sockets (removed afterwards)."""
    path = tempfile.mkdtemp(prefix="vw", dir="/tmp")
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def events() -> Callable[[Vault], list[Event]]:
    """Subscribe to a vault's bus for the rest of the test: returns the list events land in."""
    unsubscribes = []

    def watch(vault: Vault) -> list[Event]:
        seen: list[Event] = []
        unsubscribes.append(vault.bus.subscribe(seen.append))
        return seen

    yield watch
    for unsubscribe in unsubscribes:
        unsubscribe()


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """The environment of a `vaultwatch` child: this test's own cache and state folders."""
    run = Path(os.environ.get("XDG_RUNTIME_DIR", tmp_path))
    return {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(run),
    }


SDK = CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"


@pytest.fixture(scope="module")
def ts_sdk() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to run the TypeScript SDK client")
    wanted = json.loads((CLIENT_DIR / "package.json").read_text())["dependencies"]["@modelcontextprotocol/sdk"]
    # one xdist worker installs while the others wait: the SDK's package.json is written before the
    # rest of node_modules, so a worker that only looked at it ran node on a half-installed tree
    with open(CLIENT_DIR / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not SDK.exists() or json.loads(SDK.read_text())["version"] != wanted:
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=CLIENT_DIR,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, f"npm install failed:\n{done.stderr[-2000:]}"
    return Path(node)
